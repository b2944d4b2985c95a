/* duration_events - writes an fxtrace file of durations of every form, for `fxtrace stats
 * --durations` (tests/check/stats_durations.py):
 *
 *   duration_events FILE
 *
 * Two threads. Each runs 200 rounds of a scope ("dur:outer") holding a complete event
 * ("dur:wait", FXT_COMPLETE over a spin of a varying length) and a begin/end pair
 * ("dur:pair") nesting another ("dur:inner"). The main thread then ends twice with nothing
 * open (two ends without a begin) and begins "dur:open" and "dur:pair" it never ends.
 */
#define _GNU_SOURCE
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <pthread.h>
#include <stdio.h>

#include "check_session.h"

/* Each thread's own (volatile keeps the spin; thread-local: no race between the two). */
static __thread volatile unsigned sink;

static void spin(unsigned n) {
  for (unsigned i = 0; i < n; i++)
    sink += i;
}

static void *rounds(void *arg) {
  unsigned seed = (unsigned)(uintptr_t)arg;
  for (unsigned r = 0; r < 200; r++) {
    FXT_SCOPE("dur", "outer");
    uint64_t start = fxt_now();
    seed = seed * 1103515245u + 12345u;
    spin(100 + (seed >> 16) % 5000);
    FXT_COMPLETE("dur", "wait", start);
    FXT_BEGIN("dur", "pair");
    FXT_BEGIN("dur", "inner");
    spin(50 + r * 10);
    FXT_END("dur", "inner");
    FXT_END("dur", "pair");
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: duration_events FILE\n");
    return 2;
  }
  if (check_session_start("duration_events", FXT_MODE_BLOCK, 4096, "dur:*", argv[1]) != 0)
    return 1;
  pthread_t t;
  if (pthread_create(&t, NULL, rounds, (void *)7u) != 0)
    return 1;
  rounds((void *)1u);
  pthread_join(t, NULL);
  FXT_END("dur", "pair");
  FXT_END("dur", "stray");
  FXT_BEGIN("dur", "open");
  FXT_BEGIN("dur", "pair");
  return fxt_session_stop() == 0 ? 0 : 1;
}
