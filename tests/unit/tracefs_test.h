/* tests/unit/tracefs_test.h - what the in-process tracefs tests share (test_tracefs*.c,
 * test_evtrig*.c): `cat` and `echo` on the in-process tracefs tree (fxtrace/tracefs.h), failing
 * the test on an unexpected result; a session started for them and stopped. Header-only: include it once,
 * after <cmocka.h> and <fxtrace/tracefs.h>.
 */
#ifndef FXTRACE_TESTS_TRACEFS_TEST_H
#define FXTRACE_TESTS_TRACEFS_TEST_H

#include <errno.h>
#include <fxtrace/session.h>
#include <string.h>

static char buf[1 << 20];

/* The file's contents, in buf (valid until the next cat). */
static const char *cat(const char *path)
{
  ssize_t n = fxt_fs_cat(path, buf, sizeof(buf));
  if (n < 0)
    fail_msg("cat %s: %zd", path, n);
  return buf;
}

/* Writes value to path; want >= 0: the write takes all of it, else the write's error. */
static void echo(const char *path, const char *value, ssize_t want)
{
  ssize_t n = fxt_fs_echo(path, value);
  if (want >= 0 ? n != (ssize_t)strlen(value) : n != want)
    fail_msg("echo '%s' > %s: %zd, expected %zd", value, path, n, want);
}

/* Writes each value of the NULL-ended list to path: each is refused with EINVAL. */
static inline void echo_each_refused(const char *path, const char *const *values)
{
  for (; *values != NULL; values++)
    echo(path, *values, -EINVAL);
}

/* Starts a session in mode (FXT_MODE_*) with no event enabled, output to the file at output
 * ("" for none) and snapshots to trigger (NULL: none), then tracing on: the live tree the tests
 * read and write. */
static inline void live_start(uint32_t mode, const char *output, const char *trigger)
{
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .mode = mode, .events = "",
                                   .output = output, .trigger = trigger};
  assert_int_equal(fxt_session_start(&cfg), 0);
  echo("tracing_on", "1", 0);
}

/* A cmocka teardown: the session stopped. */
static inline int live_stop(void **state)
{
  (void)state;
  fxt_session_stop();
  return 0;
}

#endif /* FXTRACE_TESTS_TRACEFS_TEST_H */
