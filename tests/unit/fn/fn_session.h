/* fn_session.h - the session the function tracer's tests record into (test_functions,
 * test_fn_profile, test_fn_selftime): no events, its file /dev/shm/fxtrace-test-NAME-PID.fxt;
 * and the function tracer's files put back as a test found them. Include after <cmocka.h>. */
#ifndef FXT_TESTS_FN_SESSION_H
#define FXT_TESTS_FN_SESSION_H

#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

/* Starts it (clock: enum fxt_clock), its file's name in path[size]; the test fails if it does
 * not start. */
static inline void fn_session_start(char *path, size_t size, const char *name,
                                    uint32_t buffer_kb, uint32_t clock)
{
  snprintf(path, size, "/dev/shm/fxtrace-test-%s-%d.fxt", name, (int)getpid());
  /* The file bounded: test_functions' test_switching traces at full speed for as long as its
   * 1000 switches take, which on a loaded machine or under TSan was minutes - one such run
   * left a 23 GB file in /dev/shm and the machine without memory. Past the limit, events are
   * counted lost (the checks read what was written); the exact-count tests write a few MB. */
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "",
                                   .buffer_kb = buffer_kb, .clock = clock,
                                   .max_file_kb = 256 * 1024, .output = path};
  assert_int_equal(fxt_session_start(&cfg), 0);
}

/* The profiler off with graph-time at its default, no tracer, no filter; the session stopped
 * and its file removed. Returns fxt_session_stop's code (FXT_ENOENT when a test stopped it). */
static inline int fn_session_end(const char *path)
{
  fxt_fs_echo("function_profile_enabled", "0");
  fxt_fs_echo("options/graph-time", "1");
  fxt_fs_echo("current_tracer", "nop");
  fxt_fs_echo("set_ftrace_filter", "");
  int rc = fxt_session_stop();
  unlink(path);
  return rc;
}

#endif /* FXT_TESTS_FN_SESSION_H */
