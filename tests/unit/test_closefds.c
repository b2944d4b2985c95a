/* test_closefds - a program that closes every descriptor it did not open itself while a
 * session runs (a daemon's close_range(3, ~0U) after start-up, as a child of fork does in
 * test_fork), then opens files of its own, which get the numbers fxtrace's descriptors had:
 * its files are never written by fxtrace, the session stops at once (the control server does
 * not wait for ever in a poll of closed descriptors), and the trace is whole (the output is
 * opened again by its path, the buffers' files too when a new thread needs its slot's pages). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../test_main.h"

#include <fcntl.h>
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "session_test.h"
#include "mine_files.h"

FXT_TRACEPOINT(t, seq, "seq=%llu", (u64, seq));

enum { EVENTS = 100000, ROUNDS = 4 };

static void *emit(void *arg)
{
  (void)arg;
  for (uint64_t i = 0; i < EVENTS; i++)
    FXT_TRACE(t, seq, i);
  return NULL;
}

static void run_thread(void)
{
  pthread_t th;
  pthread_create(&th, NULL, emit, NULL);
  pthread_join(th, NULL);
}

static void closed_while_tracing(void **state)
{
  (void)state;
  start("t:seq", 1024, 0, FXT_MODE_DISCARD);
  run_thread();
  usleep(200000); /* the consumer idle: its warm-up done, the control server in its poll */
  close_from_3();
  assert_int_equal(mine_open(), 0);
  for (int r = 0; r < ROUNDS; r++) { /* new threads: new slots, their pages reserved */
    run_thread();
    usleep(50000);
  }
  alarm(30); /* a stop waiting for ever fails the test instead of hanging it */
  stop_and_count("seq");
  alarm(0);
  assert_int_equal(mine_check(), -1);
  assert_int_equal(counts.nthreads, 1 + ROUNDS);
  for (int i = 0; i < counts.nthreads; i++) {
    assert_int_equal(counts.t[i].events + counts.t[i].dropped + counts.t[i].lost, EVENTS);
    assert_false(counts.t[i].backwards);
  }
}

FXT_TEST_MAIN(cmocka_unit_test(closed_while_tracing))
