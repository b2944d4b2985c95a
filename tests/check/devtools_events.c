/* devtools_events - flows in nested slices across threads, for json_devtools_check
 * (devtools_check.sh; run under `fxtrace record`).
 *
 *   devtools_events ROUNDS
 *
 * Three threads, "nest-0" to "nest-2", ROUNDS rounds each; a round is three phases kept in
 * step by a barrier. Thread k:
 *   1. in "send" (FXT_SCOPE) > "mid" (FXT_BEGIN/FXT_END) > "inner" (FXT_SCOPE): begins flow
 *      1 + k*ROUNDS + round, with an async begin of that id and a counter;
 *   2. in "relay" > "mid": steps the flow thread k-1 began;
 *   3. in "receive": ends the flow thread k-2 began, and its async event.
 * So every flow crosses the three threads, and its events sit in slices nested three, two
 * and one deep: a viewer binds each to the innermost slice around it. Each slice and flow
 * event is a few microseconds away from the next edge, so that the report's microseconds
 * say which slice encloses which.
 */
#define _GNU_SOURCE
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "check_session.h"

#define THREADS 3

static uint32_t g_rounds;
static pthread_barrier_t g_step;

static void spin_us(unsigned us) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do
    clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 1000L * us);
}

static uint64_t flow_id(uint32_t thread, uint32_t round) {
  return 1 + (uint64_t)(thread % THREADS) * g_rounds + round;
}

static void *run(void *arg) {
  uint32_t k = (uint32_t)(uintptr_t)arg;
  char name[16];
  snprintf(name, sizeof name, "nest-%u", k);
  pthread_setname_np(pthread_self(), name);
  for (uint32_t r = 0; r < g_rounds; r++) {
    {
      FXT_SCOPE("nest", "send");
      spin_us(3);
      FXT_BEGIN("nest", "mid");
      spin_us(3);
      {
        FXT_SCOPE("nest", "inner");
        spin_us(3);
        FXT_FLOW_BEGIN("nest", "hop", flow_id(k, r));
        FXT_ASYNC_BEGIN("nest", "trip", flow_id(k, r), FXT_U32("from", k));
        FXT_COUNTER("nest", "round", 0, FXT_U32("r", r));
        spin_us(3);
      }
      spin_us(3);
      FXT_END("nest", "mid");
      spin_us(3);
    }
    pthread_barrier_wait(&g_step);
    {
      FXT_SCOPE("nest", "relay");
      spin_us(3);
      FXT_BEGIN("nest", "mid");
      spin_us(3);
      FXT_FLOW_STEP("nest", "hop", flow_id(k + THREADS - 1, r));
      spin_us(3);
      FXT_END("nest", "mid");
      spin_us(3);
    }
    pthread_barrier_wait(&g_step);
    {
      FXT_SCOPE("nest", "receive");
      spin_us(3);
      FXT_FLOW_END("nest", "hop", flow_id(k + THREADS - 2, r));
      FXT_ASYNC_END("nest", "trip", flow_id(k + THREADS - 2, r));
      spin_us(3);
    }
    pthread_barrier_wait(&g_step);
  }
  return NULL;
}

int main(int argc, char **argv) {
  g_rounds = (uint32_t)check_count_arg(argc, argv, 2, "devtools_events ROUNDS");
  if (g_rounds == 0)
    return 2;
  pthread_barrier_init(&g_step, NULL, THREADS);
  pthread_t t[THREADS];
  for (uint32_t k = 0; k < THREADS; k++)
    if (pthread_create(&t[k], NULL, run, (void *)(uintptr_t)k) != 0) {
      fprintf(stderr, "devtools_events: pthread_create failed\n");
      return 1;
    }
  for (uint32_t k = 0; k < THREADS; k++)
    pthread_join(t[k], NULL);
  pthread_barrier_destroy(&g_step);
  return 0;
}
