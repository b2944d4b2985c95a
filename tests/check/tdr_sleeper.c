/* tdr_sleeper - an fxtrace-traced program for the kernel/user alignment check (tdr_merge.sh).
 *
 *   tdr_sleeper N FILE
 *
 * A second thread (so its tid differs from the pid) N times: fires tdr:nap_begin, sleeps
 * 2 ms in nanosleep (the kernel switches it out, state S), fires tdr:nap_end when it runs
 * again. In a kernel trace of the same moments, its sched_switch away from the CPU follows
 * each nap_begin and the sched_switch back precedes each nap_end, by microseconds.
 */
#define _GNU_SOURCE
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "check_session.h"

FXT_TRACEPOINT(tdr, nap_begin, "i=%u tid=%u", (u32, i), (u32, tid));
FXT_TRACEPOINT(tdr, nap_end, "i=%u tid=%u", (u32, i), (u32, tid));

static unsigned g_naps;

static void *napper(void *arg) {
  (void)arg;
  uint32_t tid = (uint32_t)gettid();
  struct timespec nap = {0, 2000000};
  for (uint32_t i = 0; i < g_naps; i++) {
    FXT_TRACE(tdr, nap_begin, i, tid);
    nanosleep(&nap, NULL);
    FXT_TRACE(tdr, nap_end, i, tid);
  }
  return NULL;
}

int main(int argc, char **argv) {
  g_naps = (unsigned)check_count_arg(argc, argv, 3, "tdr_sleeper N FILE");
  if (g_naps == 0)
    return 2;
  if (check_session_start("tdr_sleeper", FXT_MODE_BLOCK, 256, "tdr:*", argv[2]) != 0)
    return 1;
  pthread_t t;
  if (pthread_create(&t, NULL, napper, NULL) != 0 || pthread_join(t, NULL) != 0) {
    fprintf(stderr, "tdr_sleeper: thread failed\n");
    return 1;
  }
  if (fxt_session_stop() != 0) {
    fprintf(stderr, "tdr_sleeper: stopping the session failed\n");
    return 1;
  }
  return 0;
}
