/* tests/unit/tracefs_test.h - what test_tracefs and test_evtrig share: `cat` and `echo` on the
 * in-process tracefs tree (fxtrace/tracefs.h), failing the test on an unexpected result.
 * Header-only: include it once, after <cmocka.h> and <fxtrace/tracefs.h>. */
#ifndef FXT_TESTS_TRACEFS_TEST_H
#define FXT_TESTS_TRACEFS_TEST_H

#include <string.h>

/* The last file read (cat returns it). */
static char buf[1 << 20];

static const char *cat(const char *path)
{
  ssize_t n = fxt_fs_cat(path, buf, sizeof(buf));
  if (n < 0)
    fail_msg("cat %s: %zd", path, n);
  return buf;
}

/* Writes value to path; want: the error expected (negative), or >= 0 for success. */
static void echo(const char *path, const char *value, ssize_t want)
{
  ssize_t n = fxt_fs_echo(path, value);
  if (want >= 0 ? n != (ssize_t)strlen(value) : n != want)
    fail_msg("echo '%s' > %s: %zd, expected %zd", value, path, n, want);
}

#endif
