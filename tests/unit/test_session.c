/* test_session - sessions end to end: a thread that exits early keeps its events (fork during
 * full-rate emission is in test_fork), 10,000 short-lived threads under a memory cap, restart.
 * (No allocation on the emit path: test_noalloc.) */
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
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define FXTCOUNT_MAX_THREADS 16384
#include "../sanitizers.h"
#include "session_test.h"

FXT_TRACEPOINT(t, seq, "seq=%llu", (u64, seq));
FXT_TRACEPOINT(t, rich, "seq=%llu name=%s ok=%d ratio=%g p=%p d=%s", (u64, seq), (str, name, 24),
               (bool, ok), (f64, ratio), (ptr, p), (bytes, digest, 4));
FXT_TRACEPOINT(t, off, "never enabled %u", (u32, x));

/* A failed assertion must not leave the session running for the next test. */
static int teardown(void **state)
{
  (void)state;
  fxt_session_stop();
  return 0;
}

static struct fxtcount_thread *find(uint64_t tid)
{
  for (int i = 0; i < counts.nthreads; i++)
    if (counts.t[i].tid == tid)
      return &counts.t[i];
  return NULL;
}

/* ---- a thread that exits before the session stops --------------------------------------- */

static _Atomic uint64_t exited_tid;

static void *emit_and_exit(void *arg)
{
  uint64_t n = (uint64_t)(uintptr_t)arg;
  for (uint64_t i = 0; i < n; i++)
    FXT_TRACE(t, seq, i);
  atomic_store(&exited_tid, (uint64_t)gettid());
  return NULL;
}

static void exited_thread_keeps_its_events(void **state)
{
  (void)state;
  start("t:seq", 256, 0, FXT_MODE_DISCARD);
  pthread_t th;
  pthread_create(&th, NULL, emit_and_exit, (void *)(uintptr_t)3000);
  pthread_join(th, NULL);
  /* Let the consumer take the slot over (it may or may not have yet: both must work). */
  usleep(30000);
  stop_and_count("seq");
  struct fxtcount_thread *t = find(atomic_load(&exited_tid));
  assert_non_null(t);
  assert_int_equal(t->events, 3000);
  assert_int_equal(t->dropped + t->overrun + t->lost, 0);
  assert_false(t->backwards);
  assert_true(t->named);
}

/* ---- many short-lived threads under a memory cap ---------------------------------------- */

static void *ten_events(void *arg)
{
  (void)arg;
  for (uint64_t i = 0; i < 10; i++)
    FXT_TRACE(t, seq, i);
  return NULL;
}

static long rss_kb(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

/* The peak resident size once the current one held still for 3 looks 50 ms apart (at most
 * ~5 s: then the peak as it is). */
static long settled_rss_kb(void)
{
  long last = -1;
  for (int still = 0, n = 0; still < 3 && n < 100; n++) {
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, res = 0;
    if (f) {
      if (fscanf(f, "%ld %ld", &size, &res) != 2)
        res = 0;
      fclose(f);
    }
    still = res == last ? still + 1 : 0;
    last = res;
    nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
  }
  return rss_kb();
}

static void many_short_lived_threads_stay_under_cap(void **state)
{
  (void)state;
  /* 64 KiB buffers, 1 MiB cap: at most 15 buffers at a time (each has a 4 KiB header). */
  start("t:seq", 64, 1024, FXT_MODE_DISCARD);
  /* The first 1,000 threads take every buffer of the pool once; meanwhile the consumer warms
   * what it writes later (its staging areas, the live view: ~6 MiB, between passes, a step at
   * a time: consumer.c warm_between_passes), so the baseline is taken once the resident size
   * stopped moving. From there 9,000 more threads must not grow it beyond slack. */
  long before = 0;
  for (int batch = 0; batch < 2500; batch++) {
    if (batch == 250)
      before = settled_rss_kb();
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
      pthread_create(&th[i], NULL, ten_events, NULL);
    for (int i = 0; i < 4; i++)
      pthread_join(th[i], NULL);
  }
  long after = rss_kb();
  stop_and_count("seq");
  /* Every event is accounted for: a thread's events are in its stream or counted there as
   * dropped or lost (events fired before it got a buffer); a thread that never got a buffer
   * is counted in the process-wide `lost`. */
  uint64_t threads = 0, total = counts.process_lost;
  for (int i = 0; i < counts.nthreads; i++) {
    struct fxtcount_thread *t = &counts.t[i];
    uint64_t sum = t->events + t->dropped + t->lost;
    if (sum == 0)
      continue;
    threads++;
    assert_int_equal(sum, 10);
    total += sum;
  }
  assert_int_equal(total, 10000 * 10);
  /* Buffers were recycled: far more threads got one than there are buffers. */
  assert_true(threads > 15);
  /* Memory: the pool is mapped once, so the peak RSS grows by at most the cap plus slack.
   * (Not under sanitizers: their own per-thread state grows with the thread count.) */
#if !FXT_TEST_SANITIZED
  assert_true(after - before < 1024 + 4096);
#endif
  printf("# %llu of 10000 threads got a buffer; max RSS grew by %ld KiB\n",
         (unsigned long long)threads, after - before);
}

/* ---- a renamed thread is named again ------------------------------------------------------ */

static void *rename_midway(void *arg)
{
  (void)arg;
  pthread_setname_np(pthread_self(), "before-name");
  FXT_TRACE(t, seq, 0);
  usleep(50000);
  /* A newline inside the name is the name's (PR_GET_NAME keeps it): only the one /proc puts
   * after it is taken off when the consumer reads it there. */
  pthread_setname_np(pthread_self(), "after\nname");
  usleep(1500000); /* the consumer looks at names about once a second */
  FXT_TRACE(t, seq, 1);
  return NULL;
}

static void renamed_thread_is_named_again(void **state)
{
  (void)state;
  start("t:seq", 64, 0, FXT_MODE_DISCARD);
  size_t n;
  unsigned char *buf = run_thread_and_read(rename_midway, &n);
  /* Both names appear (inline kernel-object names), the old one first. */
  char *before = memmem(buf, n, "before-name", 11), *after = memmem(buf, n, "after\nname", 10);
  assert_non_null(before);
  assert_non_null(after);
  assert_true(before < after);
  free(buf);
}

/* ---- restart ------------------------------------------------------------------------------ */

static void restart_reattaches_threads(void **state)
{
  (void)state;
  start("t:seq", 64, 0, FXT_MODE_DISCARD);
  for (uint64_t i = 0; i < 100; i++)
    FXT_TRACE(t, seq, i);
  stop_and_count("seq");
  assert_int_equal(find((uint64_t)gettid())->events, 100);
  /* Same thread, new session: its old slot is stale and must be re-attached. */
  start("t:seq", 128, 0, FXT_MODE_DISCARD);
  for (uint64_t i = 0; i < 50; i++)
    FXT_TRACE(t, seq, i);
  stop_and_count("seq");
  assert_int_equal(find((uint64_t)gettid())->events, 50);
  /* No session: nothing is emitted, nothing breaks. */
  FXT_TRACE(t, seq, 1);
  assert_int_equal(fxt_session_stop(), -2 /* -ENOENT */);
}

FXT_TEST_MAIN(
    cmocka_unit_test_teardown(exited_thread_keeps_its_events, teardown),
    cmocka_unit_test_teardown(many_short_lived_threads_stay_under_cap, teardown),
    cmocka_unit_test_teardown(renamed_thread_is_named_again, teardown),
    cmocka_unit_test_teardown(restart_reattaches_threads, teardown))
