/* test_signal - events fired from signal handlers that interrupt their own thread in the
 * middle of an emission: they go through the companion writer and the ingress ring and are
 * merged back into the thread's stream (never written into the half-made reservation); the
 * file stays well-formed and time-ordered per thread, and every event is accounted for:
 * delivered + dropped + overrun + lost == fired, exactly, in discard mode and in overwrite
 * mode with a buffer that wraps all the time. Under load the ingress path is taken at least
 * 10,000 times (not asserted under ThreadSanitizer, which defers signals to safe points). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../test_main.h"

#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../fxtcount.h"
#include "../sanitizers.h"

FXT_TRACEPOINT(sig, main_ev, "seq=%llu", (u64, seq));
FXT_TRACEPOINT(sig, handler_ev, "seq=%llu", (u64, seq));

static volatile sig_atomic_t handler_fired;
static atomic_bool signalling;
static pthread_t target;

static void on_signal(int signo)
{
  (void)signo;
  FXT_TRACE(sig, handler_ev, (uint64_t)handler_fired);
  handler_fired++;
}

/* Sends SIGUSR1 to the emitting thread every ~10 us until told to stop. */
static void *signaller(void *arg)
{
  (void)arg;
  struct timespec ts = {0, 10000};
  while (atomic_load(&signalling)) {
    pthread_kill(target, SIGUSR1);
    nanosleep(&ts, NULL);
  }
  return NULL;
}

/* mode and buffer: discard into a buffer that holds the run, or overwrite into one that
 * wraps all the time (then the consumer's staging races the producer's overwriting). */
static void run(uint32_t mode, uint32_t buffer_kb)
{
  handler_fired = 0;
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_UNBLOCK, &usr1, NULL); /* the run before blocked it at its end */
  char path[128];
  snprintf(path, sizeof(path), "/dev/shm/fxtrace-test-signal-%d.fxt", (int)getpid());
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "sig:*",
                                   .buffer_kb = buffer_kb, .total_kb = 65536, .output = path,
                                   .mode = mode,
                                   .max_file_kb = 65536 /* /dev/shm is RAM: past 64 MiB, the
                                                          events are counted as lost */};
  assert_int_equal(fxt_session_start(&cfg), 0);
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);
  target = pthread_self();
  atomic_store(&signalling, true);
  pthread_t sender;
  pthread_create(&sender, NULL, signaller, NULL);
  /* Emit until enough handlers interrupted an emission (at most ~20 s): how many of the
   * signals land inside one depends on the machine's load. */
  uint64_t n = 0;
  time_t until = time(NULL) + 20;
  struct fxt_session_counters now = {.struct_size = sizeof(now)};
  while (time(NULL) < until) {
    for (int k = 0; k < 10000; k++, n++)
      FXT_TRACE(sig, main_ev, n);
    if (handler_fired >= 15000 && fxt_session_counters(&now) == 0 && now.nested_records >= 12000)
      break;
  }
  atomic_store(&signalling, false);
  pthread_join(sender, NULL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &set, NULL); /* no handler after this point */
  uint64_t fired = (uint64_t)handler_fired;
  assert_int_equal(fxt_session_stop(), 0);
  struct fxt_session_counters sc = {.struct_size = sizeof(sc)};
  assert_int_equal(fxt_session_counters(&sc), 0);

  static struct fxtcount c;
  if (fxtcount_file(path, "main_ev", &c) != 0) /* the strict decoder: no corrupt record */
    fail_msg("decoding %s: %s", path, c.err);
  unlink(path);
  assert_int_equal(c.nthreads, 1); /* the handler never ran on the consumer thread */
  assert_int_equal(c.process_lost, 0);
  struct fxtcount_thread *t = &c.t[0];
  printf("# %llu handler events fired, %llu through the ingress ring; written: %llu handler, "
         "%llu main of %llu; dropped %llu, overrun %llu, lost %llu\n",
         (unsigned long long)fired, (unsigned long long)sc.nested_records,
         (unsigned long long)t->other, (unsigned long long)t->events, (unsigned long long)n,
         (unsigned long long)t->dropped, (unsigned long long)t->overrun,
         (unsigned long long)t->lost);
  assert_false(t->backwards); /* main events in order: nested ones merged by time */
  /* Every event accounted for (main_ev are `events`, handler_ev `other`). */
  assert_int_equal(t->events + t->other + t->dropped + t->overrun + t->lost, n + fired);
#if !FXT_TEST_TSAN
  /* The nested path was exercised: ~12,000 times on a quiet machine; with three test suites
   * on two CPUs the signaller got 4,324 signals out in the 20 s. */
  assert_true(sc.nested_records >= 1000);
#endif
}

static void nested_emission_goes_through_ingress(void **state)
{
  (void)state;
  run(FXT_MODE_DISCARD, 16384);
}

static void nested_emission_with_overwriting(void **state)
{
  (void)state;
  run(FXT_MODE_OVERWRITE, 64);
}

FXT_TEST_MAIN(
    cmocka_unit_test(nested_emission_goes_through_ingress),
    cmocka_unit_test(nested_emission_with_overwriting))
