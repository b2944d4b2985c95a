/* test_slot_reuse - a thread attached in an earlier session emits in a later one after other
 * threads took slots and exited: every event is in the file under its own thread, or counted
 * as lost (delivered + counted == emitted, exactly). The main thread's TLS slot pointer is
 * stale across the restart; the slot it points at may be given to a new thread of the new
 * session, freed again at that thread's exit, and must never take the stale owner's events.
 *
 * Each case loops the scenario: the race (the consumer freeing the exited thread's slot before
 * the main thread emits) is won by the consumer in a fraction of the runs only. Variants: the
 * main thread's events after or before the threads', one or several threads, a tracepoint
 * (the inline fast path with the TSC clock) or ad-hoc events, the TSC or CLOCK_MONOTONIC clock,
 * discard, overwrite and block modes.
 */
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
#include <string.h>
#include <unistd.h>

#include "../fxtcount.h"

FXT_TRACEPOINT(sr, ev, "i=%llu", (u64, i));

enum { THREAD_EVENTS = 9, MAIN_EVENTS = 6, MAX_THREADS = 4, RUNS = 40 };

struct variant {
  bool main_first; /* the main thread's events before the threads' */
  int nthreads;
  bool adhoc;      /* FXT_INSTANT rather than the tracepoint */
  uint32_t clock;  /* enum fxt_clock */
  uint32_t mode;   /* enum fxt_session_mode */
};

static char path[256];
static struct fxtcount counts;
static const struct variant *cur;

static int teardown(void **state)
{
  (void)state;
  fxt_session_stop();
  return 0;
}

static void emit(int n)
{
  for (int i = 0; i < n; i++) {
    if (cur->adhoc)
      FXT_INSTANT("sr", "inst", FXT_U64("i", (uint64_t)i));
    else
      FXT_TRACE(sr, ev, (uint64_t)i);
  }
}

static void *thread_body(void *arg)
{
  *(uint64_t *)arg = (uint64_t)gettid();
  emit(THREAD_EVENTS);
  return NULL;
}

static void start(const struct variant *v)
{
  snprintf(path, sizeof(path), "/dev/shm/fxtrace-test-slot-reuse-%d.fxt", (int)getpid());
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "sr:*",
                                   .buffer_kb = 64, .mode = v->mode, .clock = v->clock,
                                   .output = path, .max_file_kb = 65536};
  assert_int_equal(fxt_session_start(&cfg), 0);
}

static const struct fxtcount_thread *find(uint64_t tid)
{
  for (int i = 0; i < counts.nthreads; i++)
    if (counts.t[i].tid == tid)
      return &counts.t[i];
  return NULL;
}

/* Events of tid in the file plus those counted lost; each must equal what the thread emitted
 * (a thread with neither has no entry: 0). */
static uint64_t accounted(uint64_t tid)
{
  const struct fxtcount_thread *t = find(tid);
  return t ? t->events + t->dropped + t->overrun + t->lost : 0;
}

/* One run: a session in which the main thread attaches, stopped; a second one in which
 * nthreads threads emit and exit (joined), the main thread emitting before or after them.
 * Fails with what the file and its loss records miss. */
static void one_run(const struct variant *v, int run)
{
  cur = v;
  start(v);
  emit(1); /* the main thread attaches in the first session */
  assert_int_equal(fxt_session_stop(), 0);
  unlink(path);

  start(v);
  if (v->main_first)
    emit(MAIN_EVENTS);
  pthread_t th[MAX_THREADS];
  uint64_t tids[MAX_THREADS];
  for (int k = 0; k < v->nthreads; k++) {
    /* One after the other: each exits before the next attaches, so they take the same
     * slots the earlier session's threads had, in turn. */
    assert_int_equal(pthread_create(&th[k], NULL, thread_body, &tids[k]), 0);
    assert_int_equal(pthread_join(th[k], NULL), 0);
  }
  if (!v->main_first)
    emit(MAIN_EVENTS);
  assert_int_equal(fxt_session_stop(), 0);
  if (fxtcount_file(path, NULL, &counts) != 0)
    fail_msg("decoding %s: %s", path, counts.err);
  unlink(path);

  uint64_t main_got = accounted((uint64_t)gettid());
  uint64_t total = counts.process_lost;
  for (int i = 0; i < counts.nthreads; i++)
    total += counts.t[i].events + counts.t[i].dropped + counts.t[i].overrun + counts.t[i].lost;
  uint64_t emitted = MAIN_EVENTS + (uint64_t)v->nthreads * THREAD_EVENTS;
  if (total != emitted || main_got != MAIN_EVENTS)
    fail_msg("run %d (main %s, %d threads, %s, clock %u, mode %u): %llu of %llu events "
             "delivered or counted lost; main thread's: %llu of %d",
             run, v->main_first ? "first" : "last", v->nthreads, v->adhoc ? "adhoc" : "tracepoint",
             (unsigned)v->clock, (unsigned)v->mode, (unsigned long long)total,
             (unsigned long long)emitted, (unsigned long long)main_got, MAIN_EVENTS);
  for (int k = 0; k < v->nthreads; k++)
    if (accounted(tids[k]) != THREAD_EVENTS)
      fail_msg("run %d: thread %d: %llu of %d events", run, k,
               (unsigned long long)accounted(tids[k]), THREAD_EVENTS);
}

static void run_variant(const struct variant *v)
{
  for (int run = 0; run < RUNS; run++)
    one_run(v, run);
}

#define CASE(name, first, n, ad, clk, md)                                                     \
  static void name(void **state)                                                             \
  {                                                                                          \
    (void)state;                                                                             \
    static const struct variant v = {first, n, ad, clk, md};                                 \
    run_variant(&v);                                                                         \
  }

CASE(main_after_thread, false, 1, false, FXT_CLOCK_AUTO, FXT_MODE_DISCARD)
CASE(main_after_thread_adhoc, false, 1, true, FXT_CLOCK_AUTO, FXT_MODE_DISCARD)
CASE(main_after_thread_monotonic, false, 1, false, FXT_CLOCK_MONOTONIC, FXT_MODE_DISCARD)
CASE(main_after_thread_adhoc_monotonic, false, 1, true, FXT_CLOCK_MONOTONIC, FXT_MODE_DISCARD)
CASE(main_after_threads, false, 3, false, FXT_CLOCK_AUTO, FXT_MODE_DISCARD)
CASE(main_before_thread, true, 1, false, FXT_CLOCK_AUTO, FXT_MODE_DISCARD)
CASE(main_before_threads_adhoc, true, 3, true, FXT_CLOCK_AUTO, FXT_MODE_DISCARD)
CASE(main_after_thread_overwrite, false, 1, false, FXT_CLOCK_AUTO, FXT_MODE_OVERWRITE)
CASE(main_after_thread_block, false, 1, false, FXT_CLOCK_AUTO, FXT_MODE_BLOCK)
CASE(main_after_threads_block_adhoc, false, 3, true, FXT_CLOCK_MONOTONIC, FXT_MODE_BLOCK)

FXT_TEST_MAIN(
    cmocka_unit_test_teardown(main_after_thread, teardown),
    cmocka_unit_test_teardown(main_after_thread_adhoc, teardown),
    cmocka_unit_test_teardown(main_after_thread_monotonic, teardown),
    cmocka_unit_test_teardown(main_after_thread_adhoc_monotonic, teardown),
    cmocka_unit_test_teardown(main_after_threads, teardown),
    cmocka_unit_test_teardown(main_before_thread, teardown),
    cmocka_unit_test_teardown(main_before_threads_adhoc, teardown),
    cmocka_unit_test_teardown(main_after_thread_overwrite, teardown),
    cmocka_unit_test_teardown(main_after_thread_block, teardown),
    cmocka_unit_test_teardown(main_after_threads_block_adhoc, teardown))
