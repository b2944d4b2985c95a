/* test_fn_shim_flags.c - the flags of the function tracer's shim copies (src/host/functions_shim.c,
 * fxtrace/detail/fn_shim.h): every copy that attaches, up to 16 in a process, has its flag
 * follow the tracer's mode; the ones past that stay off, and the process is told so on stderr,
 * once. Each flag here stands for one copy of the shim (its constructor's fxt_fn_shim_attach).
 */
#define _GNU_SOURCE
#include <fxtrace/detail/fn_shim.h>
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fn/fn_session.h"

#define COPIES 40 /* more than the 16 a process can hold */

static _Atomic uint32_t flags[COPIES];

/* How many times needle is in the file at path. */
static int occurrences(const char *path, const char *needle)
{
  char buf[4096] = {0};
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = 0;
  int k = 0;
  for (const char *p = strstr(buf, needle); p; p = strstr(p + 1, needle))
    k++;
  return k;
}

/* The flags that are on: a prefix of them (the first copies took the slots). */
static int flags_on(void)
{
  int on = 0;
  while (on < COPIES && atomic_load(&flags[on]) != 0)
    on++;
  for (int i = on; i < COPIES; i++)
    assert_int_equal(atomic_load(&flags[i]), 0);
  return on;
}

static void test_copies(void **state)
{
  (void)state;
  /* The attaches with stderr in a file. */
  char err[] = "/tmp/fxtrace-test-shim-flags-XXXXXX";
  int fd = mkstemp(err);
  assert_true(fd >= 0);
  int saved = dup(2);
  assert_true(saved >= 0);
  assert_int_equal(dup2(fd, 2), 2);
  for (int i = 0; i < COPIES; i++)
    fxt_fn_shim_attach(&flags[i]);
  assert_int_equal(dup2(saved, 2), 2);
  close(saved);
  close(fd);
  assert_int_equal(occurrences(err, "more than 16 copies of the function tracer's hooks"), 1);
  unlink(err);
  assert_int_equal(flags_on(), 0); /* no tracer yet */

  char path[128];
  fn_session_start(path, sizeof(path), "fn-shim-flags", 256, FXT_CLOCK_AUTO);
  assert_true(fxt_fs_echo("current_tracer", "function_graph") > 0);
  /* 16 slots, one of them perhaps the archive's own shim copy, linked into this test */
  int on = flags_on();
  assert_true(on == 15 || on == 16);
  assert_true(fxt_fs_echo("current_tracer", "nop") > 0);
  assert_int_equal(flags_on(), 0);
  assert_true(fxt_fs_echo("function_profile_enabled", "1") > 0); /* the profiler alone too */
  assert_int_equal(flags_on(), on);
  assert_int_equal(fn_session_end(path), 0);
  assert_int_equal(flags_on(), 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_copies),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
