/* stages.c - the three kinds of pipeline threads.
 *
 * How the trace tells a block's story (ids are the block's sequence number):
 *   producer  slice "produce" (with "generate"), demo:block_produced, async "block" begins,
 *             flow "block" begins;
 *   worker    slice "process" (with "crc32", "count_words" and the "roundtrip" phase made of
 *             "pack", "unpack", "compare"), flow step, async instant, demo:block_compressed,
 *             demo:block_entropy (only computed when enabled), demo:block_done, and a
 *             "slow_block" instant for outliers;
 *   sink      slice "commit" (with "verify"), flow end, async end, demo:block_committed, and
 *             counters "reorder_pending" and "throughput"; a printk progress line per second.
 * Blocked queue operations show up as "wait_not_full" / "wait_not_empty" slices (queue.c).
 */
#define _GNU_SOURCE
#include "demo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

FXT_TRACEPOINT(demo, block_produced, "seq=%llu bytes=%u words=%u", (u64, seq), (u32, bytes),
               (u32, words));
/* saved is signed: data without runs packs larger than it is. head: the first packed bytes,
 * which show the codec at work (control byte, then literal or repeated bytes). */
FXT_TRACEPOINT(demo, block_compressed,
               "seq=%llu raw=%u packed=%u ratio=%.3f saved=%lld out=%p head=%s", (u64, seq),
               (u32, raw), (u32, packed), (f64, ratio), (s64, saved), (ptr, out),
               (bytes, head, 8));
FXT_TRACEPOINT(demo, block_entropy, "seq=%llu bits_per_byte=%.3f distinct=%u", (u64, seq),
               (f64, bits_per_byte), (u32, distinct));
FXT_TRACEPOINT(demo, block_done, "seq=%llu worker=%u crc=%08x verdict=%s", (u64, seq),
               (u32, worker), (u32, crc), (str, verdict, 16));
FXT_TRACEPOINT(demo, block_committed, "seq=%llu latency_ns=%llu pending=%u ok=%d", (u64, seq),
               (u64, latency_ns), (u32, pending), (bool, ok));
FXT_TRACEPOINT(demo, check_failed, "seq=%llu check=%s expected=%llx actual=%llx", (u64, seq),
               (str, check, 16), (u64, expected), (u64, actual));

void block_free(struct block *b)
{
  if (b) {
    free(b->data);
    free(b->packed);
    free(b);
  }
}

static void *xmalloc(size_t n)
{
  void *p = malloc(n);
  if (!p) {
    fprintf(stderr, "demo: out of memory (%zu bytes)\n", n);
    abort();
  }
  return p;
}

/* ---- producer ---------------------------------------------------------------------------- */

void *producer_main(void *arg)
{
  struct pipeline *p = arg;
  struct rng rng = {p->seed * 0x9e3779b97f4a7c15ull | 1}; /* xorshift needs a non-zero state */
  uint64_t record = 0;
  pthread_setname_np(pthread_self(), "producer");

  /* Relaxed: the flag only says when to stop, it publishes no data. */
  for (uint64_t seq = 1; !atomic_load_explicit(&p->stop, memory_order_relaxed); seq++) {
    struct block *b = xmalloc(sizeof(*b));
    {
      FXT_SCOPE("demo", "produce");
      *b = (struct block){.seq = seq, .born_ns = now_ns()};
      b->len = BLOCK_MIN_BYTES + rng_below(&rng, BLOCK_MAX_BYTES - BLOCK_MIN_BYTES + 1);
      b->data = xmalloc(b->len);
      {
        FXT_SCOPE("demo", "generate");
        b->words = gen_records(&rng, &record, b->data, b->len);
      }
      FXT_TRACE(demo, block_produced, seq, b->len, b->words);
      FXT_ASYNC_BEGIN("demo", "block", seq, FXT_U32("bytes", b->len));
      FXT_FLOW_BEGIN("demo", "block", seq);
    }
    uint32_t len = b->len; /* b belongs to the workers once pushed */
    if (!queue_push(&p->work, b)) {
      block_free(b);
      break;
    }
    p->produced++;
    p->produced_bytes += len;
  }
  queue_close(&p->work); /* workers drain what is queued, then exit */
  return NULL;
}

/* ---- workers ----------------------------------------------------------------------------- */

static void process_block(struct worker *w, struct block *b)
{
  FXT_SCOPE("demo", "process");
  FXT_FLOW_STEP("demo", "block", b->seq);
  FXT_ASYNC_INSTANT("demo", "block", b->seq, FXT_U32("worker", w->id));
  b->worker = w->id;
  {
    FXT_SCOPE("demo", "crc32");
    b->crc = crc32_ieee(b->data, b->len);
  }
  {
    FXT_SCOPE("demo", "count_words");
    b->counted_words = count_words(b->data, b->len);
  }

  /* Pack, then prove the packed form restores the block before the original is dropped. */
  FXT_BEGIN("demo", "roundtrip", FXT_U64("seq", b->seq));
  b->packed = xmalloc(rle_bound(b->len));
  {
    FXT_SCOPE("demo", "pack");
    b->packed_len = rle_pack(b->data, b->len, b->packed);
  }
  unsigned char *check = xmalloc(b->len);
  int64_t unpacked;
  {
    FXT_SCOPE("demo", "unpack");
    unpacked = rle_unpack(b->packed, b->packed_len, check, b->len);
  }
  {
    FXT_SCOPE("demo", "compare");
    b->roundtrip_ok = unpacked == b->len && memcmp(check, b->data, b->len) == 0;
  }
  free(check);
  FXT_END("demo", "roundtrip", FXT_BOOL("ok", b->roundtrip_ok));

  /* PackBits spends at least 2 bytes per 128 input bytes, so a block (>= 32 KiB) packs to at
   * least 512 bytes: the 8 head bytes the tracepoint copies always exist. */
  FXT_TRACE(demo, block_compressed, b->seq, b->len, b->packed_len,
            (double)b->packed_len / b->len, (int64_t)b->len - (int64_t)b->packed_len, b->packed,
            b->packed);
  if (FXT_TRACE_ENABLED(demo, block_entropy)) { /* a histogram pass nobody needs untraced */
    double bits;
    uint32_t distinct;
    byte_stats(b->data, b->len, &bits, &distinct);
    FXT_TRACE(demo, block_entropy, b->seq, bits, distinct);
  }
  FXT_TRACE(demo, block_done, b->seq, w->id, b->crc, b->roundtrip_ok ? "ok" : "roundtrip-bad");

  free(b->data); /* from here on the block travels packed */
  b->data = NULL;
}

void *worker_main(void *arg)
{
  struct worker *w = arg;
  struct pipeline *p = w->p;
  char name[16];
  snprintf(name, sizeof(name), "worker-%u", (unsigned)w->id);
  pthread_setname_np(pthread_self(), name);

  /* Moving average of the time per byte (blocks differ in size), to spot outliers: on a busy
   * machine mostly a preempted worker. */
  uint64_t avg_ps_per_byte = 0;
  struct block *b;
  while ((b = queue_pop(&p->work)) != NULL) {
    uint64_t t0 = now_ns();
    process_block(w, b);
    uint64_t ns = now_ns() - t0, ps_per_byte = ns * 1000 / b->len;
    w->blocks++;
    w->busy_ns += ns;
    if (w->blocks > 16 && ps_per_byte > 8 * avg_ps_per_byte) {
      w->slow_blocks++;
      FXT_INSTANT("demo", "slow_block", FXT_U64("seq", b->seq), FXT_U64("ns", ns),
                  FXT_U32("bytes", b->len), FXT_U64("ps_per_byte", ps_per_byte),
                  FXT_U64("avg_ps_per_byte", avg_ps_per_byte));
    }
    avg_ps_per_byte = w->blocks == 1 ? ps_per_byte
                                     : avg_ps_per_byte - avg_ps_per_byte / 8 + ps_per_byte / 8;
    if (!queue_push(&p->results, b)) /* closed only after every worker exited: cannot fail */
      block_free(b);
  }
  return NULL;
}

/* ---- sink -------------------------------------------------------------------------------- */

/* Blocks that arrived ahead of their turn: a binary min-heap on seq. */
struct reorder {
  struct block **v;
  uint32_t n, cap;
};

static void reorder_push(struct reorder *h, struct block *b)
{
  if (h->n == h->cap) {
    h->cap = h->cap ? 2 * h->cap : 64;
    struct block **v = realloc(h->v, h->cap * sizeof(*v));
    if (!v) {
      fprintf(stderr, "demo: out of memory (reorder buffer)\n");
      abort();
    }
    h->v = v;
  }
  uint32_t i = h->n++;
  for (; i > 0 && h->v[(i - 1) / 2]->seq > b->seq; i = (i - 1) / 2)
    h->v[i] = h->v[(i - 1) / 2];
  h->v[i] = b;
}

static struct block *reorder_pop(struct reorder *h)
{
  struct block *top = h->v[0], *last = h->v[--h->n];
  uint32_t i = 0;
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= h->n)
      break;
    if (c + 1 < h->n && h->v[c + 1]->seq < h->v[c]->seq)
      c++;
    if (h->v[c]->seq >= last->seq)
      break;
    h->v[i] = h->v[c];
    i = c;
  }
  if (h->n > 0)
    h->v[i] = last;
  return top;
}

struct sink {
  struct pipeline *p;
  struct reorder pending; /* arrived ahead of their turn */
  uint64_t next;          /* next sequence number to commit */
  unsigned char *scratch; /* unpacked block */
  uint64_t window_ns;     /* throughput window: start, and the totals then */
  uint64_t window_bytes;
  uint64_t window_blocks;
  uint64_t report_ns; /* last progress line */
};

static bool check(struct sink *s, const struct block *b, const char *what, uint64_t expected,
                  uint64_t actual)
{
  s->p->checks_run++;
  if (expected == actual) {
    s->p->checks_passed++;
    return true;
  }
  FXT_TRACE(demo, check_failed, b->seq, what, expected, actual);
  FXT_PRINTK("block %llu (worker %u) failed check %s", (unsigned long long)b->seq, b->worker,
             what);
  fprintf(stderr, "demo: block %llu (worker %u): %s check failed (expected %#llx, got %#llx)\n",
          (unsigned long long)b->seq, b->worker, what, (unsigned long long)expected,
          (unsigned long long)actual);
  return false;
}

/* Unpacks a block as a reader of the packed stream would, checks it against what the producer
 * and the worker recorded, and drops it. */
static void commit(struct sink *s, struct block *b)
{
  FXT_SCOPE("demo", "commit");
  FXT_FLOW_END("demo", "block", b->seq);
  bool ok = check(s, b, "roundtrip", 1, b->roundtrip_ok);
  {
    FXT_SCOPE("demo", "verify");
    int64_t n = rle_unpack(b->packed, b->packed_len, s->scratch, BLOCK_MAX_BYTES);
    ok &= check(s, b, "length", b->len, (uint64_t)n);
    if (n == b->len) /* the CRC covers exactly len bytes */
      ok &= check(s, b, "crc32", b->crc, crc32_ieee(s->scratch, b->len));
    ok &= check(s, b, "words", b->words, b->counted_words);
  }
  FXT_ASYNC_END("demo", "block", b->seq, FXT_BOOL("ok", ok));
  FXT_TRACE(demo, block_committed, b->seq, now_ns() - b->born_ns, s->pending.n, ok);
  s->p->committed++;
  s->p->committed_bytes += b->len;
  s->p->packed_bytes += b->packed_len;
  s->p->blocks_failed += !ok;
  block_free(b);
}

/* Every 100 ms a throughput sample; every second a progress line. */
static void report(struct sink *s)
{
  uint64_t now = now_ns();
  if (now - s->window_ns < 100000000u)
    return;
  FXT_COUNTER("demo", "throughput", 0,
              FXT_F64("MiB_per_s", (double)(s->p->committed_bytes - s->window_bytes) /
                                       (1 << 20) / ((double)(now - s->window_ns) / 1e9)),
              FXT_F64("blocks_per_s", (double)(s->p->committed - s->window_blocks) /
                                          ((double)(now - s->window_ns) / 1e9)));
  if (now - s->report_ns >= 1000000000u) {
    FXT_PRINTK("sink: %llu blocks committed, %u pending, %llu MiB so far",
               (unsigned long long)s->p->committed, s->pending.n,
               (unsigned long long)(s->p->committed_bytes >> 20));
    s->report_ns = now;
  }
  s->window_ns = now;
  s->window_bytes = s->p->committed_bytes;
  s->window_blocks = s->p->committed;
}

void *sink_main(void *arg)
{
  struct pipeline *p = arg;
  pthread_setname_np(pthread_self(), "sink");
  struct sink s = {.p = p, .next = 1, .scratch = xmalloc(BLOCK_MAX_BYTES)};
  s.window_ns = s.report_ns = now_ns();

  struct block *b;
  while ((b = queue_pop(&p->results)) != NULL) {
    reorder_push(&s.pending, b);
    /* Commit in sequence order, as the writer of one output stream must. A block seen twice
     * (its seq already committed) is a pipeline bug: a failed check. */
    while (s.pending.n > 0 && s.pending.v[0]->seq <= s.next) {
      b = reorder_pop(&s.pending);
      if (b->seq < s.next) {
        check(&s, b, "duplicate", s.next, b->seq);
        p->blocks_failed++;
        block_free(b);
        continue;
      }
      commit(&s, b);
      s.next++;
    }
    FXT_COUNTER("demo", "reorder_pending", 0, FXT_U32("blocks", s.pending.n));
    report(&s);
  }
  /* The queue is closed and drained: whatever still waits lacks a predecessor. */
  while (s.pending.n > 0) {
    b = reorder_pop(&s.pending);
    check(&s, b, "missing", s.next, b->seq);
    p->blocks_failed++;
    block_free(b);
  }
  free(s.pending.v);
  free(s.scratch);
  return NULL;
}
