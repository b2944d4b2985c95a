/* stress_session - exact accounting through the whole host path: tracepoints, per-thread
 * buffers, the consumer, the FXT file.
 *
 *   stress_session --mode discard|overwrite|block --threads T --records N --buffer-kb KB
 *                  --out FILE
 *
 * T threads each fire N sequence-numbered events as fast as they can into KB-sized buffers;
 * the session writes FILE; the file is read back with the strict decoder. For every thread:
 * events in the file + records counted lost (drop_stats in discard mode, overrun in overwrite
 * mode, nested/other losses) == N, exactly (block mode, with a 10 s timeout: nothing is lost at
 * all); the gaps in its sequence numbers add up to those
 * losses; sequence numbers only increase; the thread and the process are named. FILE is
 * removed on success.
 */
#define _GNU_SOURCE
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../fxtcount.h"

FXT_TRACEPOINT(stress, seq, "seq=%llu value=%llu", (u64, seq), (u64, value));

static uint64_t records;
static pthread_barrier_t start_line;

static void *producer(void *arg)
{
  (void)arg;
  pthread_barrier_wait(&start_line);
  for (uint64_t i = 0; i < records; i++)
    FXT_TRACE(stress, seq, i, i * 7);
  return NULL;
}

static int fail(const char *what)
{
  fprintf(stderr, "FAIL: %s\n", what);
  return 1;
}

int main(int argc, char **argv)
{
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "stress:*"};
  const char *out = NULL;
  int threads = 2;
  records = 10000000;
  cfg.buffer_kb = 64;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--mode"))
      cfg.mode = !strcmp(argv[i + 1], "overwrite") ? FXT_MODE_OVERWRITE
                 : !strcmp(argv[i + 1], "block")   ? FXT_MODE_BLOCK
                                                   : FXT_MODE_DISCARD;
    else if (!strcmp(argv[i], "--threads"))
      threads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--records"))
      records = strtoull(argv[i + 1], NULL, 0);
    else if (!strcmp(argv[i], "--buffer-kb"))
      cfg.buffer_kb = (uint32_t)atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--out"))
      out = argv[i + 1];
  }
  if (!out || threads < 1 || threads > 32) {
    fprintf(stderr, "usage: %s --mode discard|overwrite --threads T --records N "
                    "--buffer-kb KB --out FILE\n", argv[0]);
    return 2;
  }
  cfg.output = out;
  cfg.block_timeout_ms = 10000;
  /* /dev/shm is RAM: discard and overwrite runs write at most 128 MiB; past it, events are
   * counted in-band as lost (part of the exact accounting below). */
  if (cfg.mode != FXT_MODE_BLOCK)
    cfg.max_file_kb = 131072;
  if (fxt_session_start(&cfg) != 0)
    return fail("session start");
  pthread_t t[32];
  pthread_barrier_init(&start_line, NULL, (unsigned)threads);
  for (int i = 0; i < threads; i++)
    pthread_create(&t[i], NULL, producer, NULL);
  for (int i = 0; i < threads; i++)
    pthread_join(t[i], NULL);
  if (fxt_session_stop() != 0)
    return fail("session stop");

  static struct fxtcount c;
  if (fxtcount_file(out, "seq", &c) != 0) {
    fprintf(stderr, "FAIL: decoding %s: %s\n", out, c.err);
    return 1;
  }
  if (!c.process_named)
    return fail("the process has no name record");
  int producers = 0;
  for (int i = 0; i < c.nthreads; i++) {
    struct fxtcount_thread *th = &c.t[i];
    if (th->events == 0 && th->dropped + th->overrun + th->lost == 0)
      continue; /* e.g. the main thread: no events of its own */
    producers++;
    uint64_t lost = th->dropped + th->overrun + th->lost;
    printf("tid %" PRIu64 ": events %" PRIu64 " dropped %" PRIu64 " overrun %" PRIu64
           " lost %" PRIu64 " (sum %" PRIu64 " of %" PRIu64 ")\n",
           th->tid, th->events, th->dropped, th->overrun, th->lost, th->events + lost, records);
    if (th->events + lost != records)
      return fail("events + dropped + overrun + lost != emitted");
    /* The per-thread `dropped` counter track ends at the same total (docs/fxt-conventions.md);
     * written only once something was lost. */
    if (th->dropped_track != lost || (lost != 0) != (th->dropped_track_records != 0))
      return fail("the `dropped` counter track disagrees with the loss records");
    if (th->gaps + (records - th->next_seq) != lost)
      return fail("sequence gaps do not add up to the losses");
    if (cfg.mode == FXT_MODE_BLOCK && lost != 0)
      return fail("block mode lost events");
    if (th->backwards)
      return fail("a sequence number went backwards or repeated");
    if (!th->named)
      return fail("a thread has no name record");
    if (th->other != 0)
      return fail("unexpected events");
  }
  if (producers != threads)
    return fail("not every producer thread is in the file");
  unlink(out);
  return 0;
}
