/* test_signal - events fired from a signal handler while the same thread is inside an
 * emission: the nested one is refused and counted as lost (never written into the half-made
 * reservation), the buffer stays well-formed, and every event is accounted for. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "../fxtcount.h"

FXT_TRACEPOINT(sig, main_ev, "seq=%llu", (u64, seq));
FXT_TRACEPOINT(sig, handler_ev, "seq=%llu", (u64, seq));

static volatile sig_atomic_t handler_fired;

static void on_alarm(int signo)
{
  (void)signo;
  FXT_TRACE(sig, handler_ev, (uint64_t)handler_fired);
  handler_fired++;
}

static void nested_emission_is_counted_never_written(void **state)
{
  (void)state;
  char path[128];
  snprintf(path, sizeof(path), "/dev/shm/fxtrace-test-signal-%d.fxt", (int)getpid());
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "sig:*",
                                   .buffer_kb = 4096, .output = path};
  assert_int_equal(fxt_session_start(&cfg), 0);
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it = {{0, 50}, {0, 50}}; /* every 50 us of wall time */
  setitimer(ITIMER_REAL, &it, NULL);
  const uint64_t n = 3000000;
  for (uint64_t i = 0; i < n; i++)
    FXT_TRACE(sig, main_ev, i);
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  signal(SIGALRM, SIG_DFL);
  uint64_t fired = (uint64_t)handler_fired;
  assert_int_equal(fxt_session_stop(), 0);

  static struct fxtcount c;
  if (fxtcount_file(path, "main_ev", &c) != 0) /* the strict decoder: no corrupt record */
    fail_msg("decoding %s: %s", path, c.err);
  unlink(path);
  struct fxtcount_thread *t = NULL;
  for (int i = 0; i < c.nthreads; i++)
    if (c.t[i].tid == (uint64_t)gettid())
      t = &c.t[i];
  assert_non_null(t);
  /* main_ev are `events`, handler_ev are `other`; nested ones are `lost`. */
  printf("# %llu handler events fired: %llu written, %llu nested (lost); %llu main events, "
         "%llu dropped\n",
         (unsigned long long)fired, (unsigned long long)t->other,
         (unsigned long long)t->lost, (unsigned long long)t->events,
         (unsigned long long)t->dropped);
  assert_false(t->backwards);
  assert_int_equal(c.nthreads, 1); /* the handler never ran on the consumer thread */
  assert_int_equal(c.process_lost, 0);
  assert_int_equal(t->events + t->other + t->dropped + t->lost, n + fired);
  assert_true(fired > 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(nested_emission_is_counted_never_written),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
