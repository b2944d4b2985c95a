/* tracedat_events - an fxtrace-traced program whose events trace-cmd prints through its
 * plugins (sched:sched_switch, kmem:kmalloc: libtraceevent's own printers, not the print
 * format) and through print formats of every field type, for tracedat_check.sh.
 *
 *   tracedat_events N FILE [lossy]
 *
 * Two threads, N rounds each, recorded to FILE: in block mode, nothing lost; lossy: in
 * discard mode with 4 KiB buffers, which bursts of 4 events a round overflow long before the
 * consumer drains them, so records are dropped (and counted) all along; a 2 ms nap every 256
 * rounds lets the consumer drain, so drop runs end before later events, however busy the
 * machine.
 */
#define _GNU_SOURCE
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_session.h"

FXT_TRACEPOINT(sched, sched_switch,
               "prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%lld ==> next_comm=%s "
               "next_pid=%d next_prio=%d",
               (str, prev_comm, 16), (s32, prev_pid), (s32, prev_prio), (s64, prev_state),
               (str, next_comm, 16), (s32, next_pid), (s32, next_prio));
FXT_TRACEPOINT(kmem, kmalloc,
               "call_site=%llx ptr=%p bytes_req=%llu bytes_alloc=%llu gfp_flags=%u",
               (u64, call_site), (ptr, ptr), (u64, bytes_req), (u64, bytes_alloc),
               (u32, gfp_flags));
FXT_TRACEPOINT(mix, types, "u8=%u s8=%d u16=%#x s16=%hd s32=%+d s64=%lld b=%d f=%.3e p=%p "
               "s=%-6s| x=%s c=%c",
               (u8, u8), (s8, s8), (u16, u16), (s16, s16), (s32, s32), (s64, s64), (bool, b),
               (f64, f), (ptr, p), (str, s, 8), (bytes, x, 4), (s32, c));

static uint64_t rounds;
static bool lossy;

static void *run(void *arg) {
  int64_t k = (int64_t)(intptr_t)arg;
  for (uint64_t i = 0; i < rounds; i++) {
    int32_t v = (int32_t)(i * 7919u) * (k ? -1 : 1);
    unsigned char bytes[4] = {(unsigned char)i, 0xab, (unsigned char)k, 0};
    FXT_TRACE(sched, sched_switch, k ? "worker" : "main", (int32_t)(100 + k), 120,
              (int64_t)(i % 3), k ? "main" : "worker", (int32_t)(101 - k), 120);
    FXT_TRACE(kmem, kmalloc, 0xffffffff81000000ull + i, (const void *)(uintptr_t)(0x1000 * i),
              (uint64_t)(i % 500), (uint64_t)512, 0xcc0u);
    FXT_TRACE(mix, types, (uint8_t)i, (int8_t)v, (uint16_t)v, (int16_t)v, v, (int64_t)v * 1000,
              (bool)(i & 1), (double)v / 7, (const void *)(uintptr_t)i, k ? "abc" : "ab\"cd",
              bytes, (int32_t)('a' + (int32_t)(i % 26)));
    FXT_COUNTER("mix", "level", (uint64_t)k, FXT_I64("v", v), FXT_F64("half", v / 2.0));
    if (lossy && i % 256 == 255) { /* let the consumer drain now and then: drops are then */
      struct timespec nap = {0, 2000000}; /* reported before later events, not only at the end */
      nanosleep(&nap, NULL);
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  rounds = argc >= 3 ? strtoull(argv[1], NULL, 0) : 0;
  lossy = argc == 4 && strcmp(argv[3], "lossy") == 0;
  if (rounds == 0 || argc > 4 || (argc == 4 && !lossy)) {
    fprintf(stderr, "usage: tracedat_events N FILE [lossy]\n");
    return 2;
  }
  /* lossy: 4 KiB buffers in discard mode */
  if (check_session_start("tracedat_events", lossy ? FXT_MODE_DISCARD : FXT_MODE_BLOCK,
                          lossy ? 4 : 1024, "*:*", argv[2]) != 0)
    return 1;
  pthread_t t;
  if (pthread_create(&t, NULL, run, (void *)(intptr_t)1) != 0)
    return 1;
  run((void *)(intptr_t)0);
  pthread_join(t, NULL);
  return fxt_session_stop() == 0 ? 0 : 1;
}
