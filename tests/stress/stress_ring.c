/* stress_ring - one producer thread, one consumer thread, every record counted.
 *
 *   stress_ring --mode discard|overwrite|snapshot --ring BYTES --records N
 *
 * The producer emits N sequence-numbered records of 3..9 words (the size follows from the
 * sequence number, so every record starts at a different offset as the ring wraps), each with
 * a checksum. The consumer reads concurrently and checks every record it gets.
 *
 * discard: records go through fxt_writer_reserve; drops come back in-band as drop_stats
 *   records. Each gap in the delivered sequence must be announced by drop_stats records in front
 *   of the next delivered record whose num_records and num_bytes equal the gap exactly; at the
 *   end delivered + dropped == N.
 * overwrite: records go into an FXT_RING_OVERWRITE ring; the consumer stages and claims them.
 *   delivered + overrun + lost == N, and the bytes of the missing records equal overrun_bytes +
 *   lost_bytes.
 * snapshot: the producer writes into an FXT_RING_OVERWRITE ring as in overwrite mode while the
 *   other thread takes non-consuming snapshots with the iterator, again and again: every record
 *   a snapshot returns is intact, and sequence numbers increase within each snapshot.
 * Always: no record with a bad checksum, sequence numbers strictly increasing. Exit 0 only if
 * every invariant held.
 */
#define _POSIX_C_SOURCE 200809L
#include <fxtrace/meta.h>
#include <fxtrace/writer.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t fake_clock;
uint64_t fxt_platform_ticks(void)
{
  return ++fake_clock; /* producer thread only */
}

struct config {
  bool overwrite;
  bool snapshot;
  uint32_t ring;
  uint64_t records;
};

static struct fxt_writer writer;
static void *storage;
static struct config cfg;
static atomic_bool producer_done; /* release by producer after its last commit; acquire by
                                     consumer before its final reads */

static uint32_t words_of(uint64_t seq)
{
  return 3 + (uint32_t)(seq * 2654435761u >> 7) % 7; /* 3..9 words */
}

static uint64_t mix(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

/* Record: header (type 4 event, size k), seq, payload words mix(seq + i), checksum. */
static uint64_t header_of(uint32_t k)
{
  return 4u | (uint64_t)k << 4;
}

static uint64_t checksum(const uint64_t *w, uint32_t k)
{
  uint64_t c = 0x9e3779b97f4a7c15ull;
  for (uint32_t i = 0; i < k - 1; i++)
    c = mix(c ^ w[i]);
  return c;
}

static void *producer(void *arg)
{
  (void)arg;
  uint64_t rec[16];
  for (uint64_t seq = 0; seq < cfg.records; seq++) {
    uint32_t k = words_of(seq);
    rec[0] = header_of(k);
    rec[1] = seq;
    for (uint32_t i = 2; i < k - 1; i++)
      rec[i] = mix(seq + i);
    rec[k - 1] = checksum(rec, k);
    if (!cfg.overwrite) {
      struct fxt_reservation res;
      if (fxt_writer_reserve(&writer, rec[0], &res) != 0)
        continue; /* counted by the writer; reported in-band */
      (void)fxt_ring_res_write(&res.res, rec + 1, (k - 1) * 8);
      fxt_res_commit(&res);
    } else {
      struct fxt_ring_res res;
      if (fxt_ring_reserve(&writer.ring, k * 8, &res) != 0) {
        fprintf(stderr, "FAIL: overwrite reserve failed at seq %" PRIu64 "\n", seq);
        exit(1);
      }
      (void)fxt_ring_res_write(&res, rec, k * 8);
      (void)fxt_ring_res_commit(&res);
    }
  }
  /* Trailing drops: retry until the consumer has made room for the drop_stats record. */
  while (!cfg.overwrite && fxt_writer_emit_drop_stats(&writer) != 0)
    ;
  atomic_store_explicit(&producer_done, true, memory_order_release);
  return NULL;
}

struct check {
  uint64_t delivered, dropped, dropped_bytes, next_seq, missing_bytes, stats_records;
  uint64_t announced_records, announced_bytes; /* drop_stats since the last data record */
  unsigned char buf[1 << 16];
  uint32_t len;
};

static void fail(const char *what, uint64_t seq)
{
  fprintf(stderr, "FAIL: %s (seq %" PRIu64 ")\n", what, seq);
  exit(1);
}

static uint64_t bytes_between(uint64_t from, uint64_t to)
{
  uint64_t b = 0;
  for (uint64_t s = from; s < to; s++)
    b += words_of(s) * 8;
  return b;
}

static void check_record(struct check *c, const uint64_t *w, uint32_t k)
{
  if ((w[0] >> 48) == FXT_STR_DROP_STATS && (w[0] >> 32 & 0xffff) == FXT_STR_KERNEL_META) {
    if (k != 7 || cfg.overwrite)
      fail("unexpected drop_stats record", c->next_seq);
    c->announced_records += w[4] >> 32;
    c->announced_bytes += w[5] >> 32;
    c->stats_records++;
    return;
  }
  uint64_t seq = w[1];
  if (k != words_of(seq) || w[0] != header_of(k))
    fail("bad header", seq);
  if (w[k - 1] != checksum(w, k))
    fail("bad checksum", seq);
  if (seq < c->next_seq)
    fail("sequence went backwards or repeated", seq);
  uint64_t gap = seq - c->next_seq;
  if (!cfg.overwrite) {
    /* Every gap is announced, exactly, by the drop_stats in front of this record. */
    if (gap != c->announced_records || bytes_between(c->next_seq, seq) != c->announced_bytes)
      fail("drop_stats in front of this record do not match the gap", seq);
    c->dropped += c->announced_records;
    c->announced_records = c->announced_bytes = 0;
  } else {
    c->missing_bytes += bytes_between(c->next_seq, seq);
  }
  c->next_seq = seq + 1;
  c->delivered++;
}

static int collect(void *ctx, uint32_t off, const void *src, uint32_t len)
{
  struct check *c = ctx;
  (void)off;
  if (c->len + len > sizeof(c->buf))
    fail("copy overflow", c->next_seq);
  memcpy(c->buf + c->len, src, len);
  c->len += len;
  return 0;
}

static void consume(struct check *c)
{
  c->len = 0;
  int64_t n = fxt_ring_read(&writer.ring, collect, c, sizeof(c->buf));
  if (n < 0)
    fail("read error", c->next_seq);
  if ((uint64_t)n != c->len)
    fail("read returned a different size than it copied", c->next_seq);
  for (uint32_t off = 0; off < c->len;) {
    uint64_t w[16];
    uint64_t h;
    memcpy(&h, c->buf + off, 8);
    uint32_t k = (uint32_t)(h >> 4 & 0xfff);
    if (k == 0 || k > 16 || off + k * 8 > c->len)
      fail("record does not fit what was read", c->next_seq);
    memcpy(w, c->buf + off, k * 8);
    check_record(c, w, k);
    off += k * 8;
  }
}

/* Snapshot mode: iterate the ring without consuming, checking every record returned. */
static int snapshot_main(void)
{
  static uint64_t rec[16];
  uint64_t snapshots = 0, checked = 0, skipped = 0;
  pthread_t t;
  pthread_create(&t, NULL, producer, NULL);
  while (!atomic_load_explicit(&producer_done, memory_order_acquire)) {
    struct fxt_ring_iter it;
    uint32_t len;
    uint64_t last = 0;
    bool first = true;
    int rc;
    fxt_ring_iter_begin(&writer.ring, &it);
    while ((rc = fxt_ring_iter_next(&it, rec, sizeof(rec), &len)) == 1) {
      uint32_t k = len / 8;
      uint64_t seq = rec[1];
      if (k != words_of(seq) || rec[0] != header_of(k) || rec[k - 1] != checksum(rec, k))
        fail("torn record in a snapshot", seq);
      if (!first && seq <= last)
        fail("snapshot went backwards", seq);
      first = false;
      last = seq;
      checked++;
    }
    if (rc != 0)
      fail("iterator error", last);
    skipped += it.skipped_bytes;
    snapshots++;
  }
  pthread_join(t, NULL);
  printf("snapshot ring=%u records=%" PRIu64 " snapshots=%" PRIu64 " records_checked=%" PRIu64
         " bytes_skipped=%" PRIu64 "\n",
         cfg.ring, cfg.records, snapshots, checked, skipped);
  if (checked == 0)
    fail("no record checked", 0);
  return 0;
}

int main(int argc, char **argv)
{
  cfg.ring = 4096;
  cfg.records = 10000000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--mode")) {
      cfg.snapshot = !strcmp(argv[i + 1], "snapshot");
      cfg.overwrite = cfg.snapshot || !strcmp(argv[i + 1], "overwrite");
    }
    else if (!strcmp(argv[i], "--ring"))
      cfg.ring = (uint32_t)strtoul(argv[i + 1], NULL, 0);
    else if (!strcmp(argv[i], "--records"))
      cfg.records = strtoull(argv[i + 1], NULL, 0);
    else {
      fprintf(stderr, "usage: %s --mode discard|overwrite|snapshot --ring BYTES --records N\n",
              argv[0]);
      return 2;
    }
  }
  storage = aligned_alloc(64, cfg.ring);
  if (!storage ||
      fxt_writer_init_flags(&writer, storage, cfg.ring,
                            cfg.overwrite ? FXT_RING_OVERWRITE : FXT_RING_DISCARD, 1, 2) != 0) {
    fprintf(stderr, "FAIL: cannot set up a ring of %u bytes\n", cfg.ring);
    return 1;
  }
  if (cfg.snapshot)
    return snapshot_main();
  static struct check c;
  pthread_t t;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pthread_create(&t, NULL, producer, NULL);
  while (!atomic_load_explicit(&producer_done, memory_order_acquire))
    consume(&c);
  consume(&c); /* everything committed before done */
  pthread_join(t, NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);

  struct fxt_ring_stats st;
  fxt_ring_stats(&writer.ring, &st);
  if (st.used != 0)
    fail("records left in the ring after the final read", c.next_seq);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  uint64_t missing = cfg.records - c.delivered;
  if (!cfg.overwrite) {
    if (c.announced_records != cfg.records - c.next_seq ||
        c.announced_bytes != bytes_between(c.next_seq, cfg.records))
      fail("trailing drop_stats do not match the records after the last delivered one",
           c.next_seq);
    c.dropped += c.announced_records;
    printf("discard ring=%u records=%" PRIu64 " delivered=%" PRIu64 " dropped=%" PRIu64
           " drop_stats_records=%" PRIu64 " seconds=%.2f\n",
           cfg.ring, cfg.records, c.delivered, c.dropped, c.stats_records, secs);
    if (c.delivered + c.dropped != cfg.records)
      fail("delivered + dropped != produced", c.next_seq);
  } else {
    c.missing_bytes += bytes_between(c.next_seq, cfg.records);
    printf("overwrite ring=%u records=%" PRIu64 " delivered=%" PRIu64 " overrun=%u lost=%u"
           " seconds=%.2f\n",
           cfg.ring, cfg.records, c.delivered, st.overrun_records, st.lost_records, secs);
    /* The counters are free-running uint32: compare modulo 2^32. */
    if ((uint32_t)missing != (uint32_t)(st.overrun_records + st.lost_records))
      fail("delivered + overrun + lost != produced", c.next_seq);
    if ((uint32_t)c.missing_bytes != (uint32_t)(st.overrun_bytes + st.lost_bytes))
      fail("missing bytes != overrun_bytes + lost_bytes", c.next_seq);
  }
  if (c.delivered == 0)
    fail("nothing delivered", 0);
  free(storage);
  return 0;
}
