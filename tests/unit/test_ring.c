/* test_ring - the SPSC ring: argument checks, wrap-around at every offset, partial writes,
 * copy callback failures, both modes, the iterator, corruption, and a randomized comparison
 * with a reference model over thousands of operation sequences. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../test_main.h"

#include <fxtrace/ring.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static _Alignas(64) unsigned char storage[4096];
static struct fxt_ring ring;

/* A test record of k words: header (FXT event, k words, name bits = id, category 0) + words
 * tagged with id. */
static void make_record(uint64_t *rec, uint32_t k, uint32_t id)
{
  rec[0] = 4u | (uint64_t)k << 4 | (uint64_t)(id & 0xffff) << 48;
  for (uint32_t i = 1; i < k; i++)
    rec[i] = (uint64_t)id << 32 | i;
}

static int put(uint32_t k, uint32_t id)
{
  uint64_t rec[512];
  struct fxt_ring_res res;
  make_record(rec, k, id);
  int rc = fxt_ring_reserve(&ring, k * 8, &res);
  if (rc == 0) {
    assert_int_equal(fxt_ring_res_write(&res, rec, k * 8), 0);
    assert_int_equal(fxt_ring_res_commit(&res), 0);
  }
  return rc;
}

/* Collects pieces; fails the call numbered fail_at (0-based) if >= 0. */
struct sink {
  unsigned char buf[1 << 16];
  uint32_t len;
  int calls;
  int fail_at;
  const unsigned char *src[64];
  uint32_t piece[64];
};

static int collect(void *ctx, uint32_t off, const void *src, uint32_t len)
{
  struct sink *s = ctx;
  assert_int_equal(off, s->len);
  assert_true(len > 0 && len % 8 == 0);
  if (s->calls == s->fail_at) {
    s->calls++;
    return -1;
  }
  if (s->calls < 64) {
    s->src[s->calls] = src;
    s->piece[s->calls] = len;
  }
  s->calls++;
  memcpy(s->buf + off, src, len);
  s->len += len;
  return 0;
}

static int64_t read_into(struct sink *s, uint32_t max, int fail_at)
{
  s->len = 0;
  s->calls = 0;
  s->fail_at = fail_at;
  return fxt_ring_read(&ring, collect, s, max);
}

static void init_checks(void **state)
{
  (void)state;
  assert_int_equal(fxt_ring_init(&ring, storage, 32, 0), -22);
  assert_int_equal(fxt_ring_init(&ring, storage, 65, 0), -22);
  assert_int_equal(fxt_ring_init(&ring, storage, 192, 0), -22);
  assert_int_equal(fxt_ring_init(&ring, storage + 1, 64, 0), -22);
  assert_int_equal(fxt_ring_init(&ring, NULL, 64, 0), -22);
  assert_int_equal(fxt_ring_init(&ring, storage, 64, 4), -22);
  assert_int_equal(fxt_ring_init(&ring, storage, 64, FXT_RING_OVERWRITE), 0);
  assert_int_equal(fxt_ring_init(&ring, storage, 64, 0), 0);
  /* The control block holds no pointer: a copy of it placed elsewhere with the storage at the
   * same relative offset is the same ring (what shared memory mapped twice looks like). */
  _Static_assert(sizeof(ring.storage_off) == 8, "offset, not pointer");
}

static void reserve_checks(void **state)
{
  (void)state;
  struct fxt_ring_res res;
  assert_int_equal(fxt_ring_init(&ring, storage, 64, 0), 0);
  assert_int_equal(fxt_ring_reserve(&ring, 0, &res), -22);
  assert_int_equal(fxt_ring_reserve(&ring, 12, &res), -22);
  assert_int_equal(fxt_ring_reserve(&ring, 72, &res), -28);
  assert_int_equal(fxt_ring_reserve(&ring, 64, &res), 0);
  assert_int_equal(fxt_ring_res_write(&res, storage, 65), -75); /* EOVERFLOW, nothing written */
  assert_int_equal(fxt_ring_res_write(&res, "\x84\x00", 2), 0); /* header: 8 words */
  assert_int_equal(fxt_ring_res_write(&res, storage, 63), -75);
  assert_int_equal(fxt_ring_res_write(&res, storage, 62), 0);
  assert_int_equal(fxt_ring_res_write(&res, storage, 1), -75);
  assert_int_equal(fxt_ring_res_commit(&res), 0);
  assert_int_equal(fxt_ring_reserve(&ring, 8, &res), -28); /* full, discard mode */
}

/* A record of every size at every start offset of a 64-byte ring: pieces are contiguous in
 * storage, split exactly at the end of storage, and reassemble to the record. */
static void wrap_at_every_offset(void **state)
{
  (void)state;
  static struct sink s;
  for (uint32_t flags = 0; flags <= FXT_RING_OVERWRITE; flags++) {
    for (uint32_t off = 0; off < 64; off += 8) {
      for (uint32_t k = 1; k <= 8; k++) {
        assert_int_equal(fxt_ring_init(&ring, storage, 64, flags), 0);
        for (uint32_t i = 0; i < off / 8; i++)
          assert_int_equal(put(1, 100 + i), 0);
        assert_int_equal(read_into(&s, 4096, -1), off);
        assert_int_equal(put(k, 7), 0);
        /* Non-consuming iterator first. */
        struct fxt_ring_iter it;
        uint64_t got[8], want[8];
        uint32_t len;
        make_record(want, k, 7);
        fxt_ring_iter_begin(&ring, &it);
        assert_int_equal(fxt_ring_iter_next(&it, got, sizeof(got), &len), 1);
        assert_int_equal(len, k * 8);
        assert_memory_equal(got, want, k * 8);
        assert_int_equal(fxt_ring_iter_next(&it, got, sizeof(got), &len), 0);
        /* Then the consuming read. */
        assert_int_equal(read_into(&s, 4096, -1), k * 8);
        assert_memory_equal(s.buf, want, k * 8);
        if (flags == 0) { /* discard mode hands out storage directly */
          bool wraps = off + k * 8 > 64;
          assert_int_equal(s.calls, wraps ? 2 : 1);
          assert_ptr_equal(s.src[0], storage + off);
          assert_int_equal(s.piece[0], wraps ? 64 - off : k * 8);
          if (wraps)
            assert_ptr_equal(s.src[1], storage);
        }
        assert_int_equal(read_into(&s, 4096, -1), 0);
      }
    }
  }
}

/* A record ending exactly at the end of storage and the next starting at 0 are two pieces. */
static void piece_ends_at_storage_end(void **state)
{
  (void)state;
  static struct sink s;
  assert_int_equal(fxt_ring_init(&ring, storage, 64, 0), 0);
  assert_int_equal(put(4, 1), 0);
  assert_int_equal(read_into(&s, 4096, -1), 32);
  assert_int_equal(put(4, 2), 0); /* [32, 64) */
  assert_int_equal(put(2, 3), 0); /* [0, 16) */
  assert_int_equal(read_into(&s, 4096, -1), 48);
  assert_int_equal(s.calls, 2);
  assert_ptr_equal(s.src[0], storage + 32);
  assert_int_equal(s.piece[0], 32);
  assert_ptr_equal(s.src[1], storage);
  assert_int_equal(s.piece[1], 16);
}

static void read_respects_max_and_whole_records(void **state)
{
  (void)state;
  static struct sink s;
  assert_int_equal(fxt_ring_init(&ring, storage, 256, 0), 0);
  assert_int_equal(put(3, 1), 0);
  assert_int_equal(put(2, 2), 0);
  assert_int_equal(read_into(&s, 23, -1), 0);  /* first record is 24 bytes */
  assert_int_equal(read_into(&s, 39, -1), 24); /* only the whole first record */
  assert_int_equal(read_into(&s, 16, -1), 16);
  assert_int_equal(read_into(&s, 16, -1), 0);
}

/* copy_fn failing: nothing is consumed past the last record copied whole. */
static void copy_failure_consumes_only_whole_records(void **state)
{
  (void)state;
  static struct sink s;
  uint64_t want[3];
  /* Records: A [40,56) B [56,72)=wraps C [8,24) in a 64-byte ring. */
  assert_int_equal(fxt_ring_init(&ring, storage, 64, 0), 0);
  assert_int_equal(put(5, 0), 0);
  assert_int_equal(read_into(&s, 4096, -1), 40);
  assert_int_equal(put(2, 1), 0);
  assert_int_equal(put(2, 2), 0);
  assert_int_equal(put(2, 3), 0);
  /* First piece (A + first half of B) refused: nothing consumed. */
  assert_int_equal(read_into(&s, 4096, 0), 0);
  /* Second piece (rest of B + C) refused: A was copied whole, B was not. */
  assert_int_equal(read_into(&s, 4096, 1), 16);
  make_record(want, 2, 1);
  assert_memory_equal(s.buf, want, 16);
  /* Everything from B on is still there. */
  assert_int_equal(read_into(&s, 4096, -1), 32);
  make_record(want, 2, 2);
  assert_memory_equal(s.buf, want, 16);
  make_record(want, 2, 3);
  assert_memory_equal(s.buf + 16, want, 16);
}

static void commit_pads_and_zero_fills(void **state)
{
  (void)state;
  static struct sink s;
  struct fxt_ring_res res;
  memset(storage, 0xee, 64);
  assert_int_equal(fxt_ring_init(&ring, storage, 64, 0), 0);
  assert_int_equal(fxt_ring_reserve(&ring, 32, &res), 0);
  uint64_t hdr = 4u | 4u << 4;
  assert_int_equal(fxt_ring_res_write(&res, &hdr, 3), 0); /* a header written in pieces */
  assert_int_equal(fxt_ring_res_write(&res, (char *)&hdr + 3, 5), 0);
  assert_int_equal(fxt_ring_res_write(&res, "abc", 3), 0);
  assert_int_equal(fxt_ring_res_commit(&res), 0);
  assert_int_equal(read_into(&s, 4096, -1), 32);
  unsigned char want[32] = {0x44, 0, 0, 0, 0, 0, 0, 0, 'a', 'b', 'c'};
  assert_memory_equal(s.buf, want, 32);
}

static void overwrite_counts_overruns_exactly(void **state)
{
  (void)state;
  static struct sink s;
  assert_int_equal(fxt_ring_init(&ring, storage, 64, FXT_RING_OVERWRITE), 0);
  for (uint32_t i = 0; i < 8; i++)
    assert_int_equal(put(1, i), 0);
  assert_int_equal(put(3, 8), 0); /* overwrites records 0, 1, 2 */
  struct fxt_ring_stats st;
  fxt_ring_stats(&ring, &st);
  assert_int_equal(st.overrun_records, 3);
  assert_int_equal(st.overrun_bytes, 24);
  assert_int_equal(st.used, 64);
  assert_int_equal(put(8, 9), 0); /* overwrites 3..7 (40 bytes) and 8 (24 bytes) */
  fxt_ring_stats(&ring, &st);
  assert_int_equal(st.overrun_records, 9);
  assert_int_equal(st.overrun_bytes, 88);
  assert_int_equal(read_into(&s, 4096, -1), 64);
  uint64_t want[8];
  make_record(want, 8, 9);
  assert_memory_equal(s.buf, want, 64);
  assert_int_equal(put(9, 10), -28); /* can never fit */
}

/* Bookkeeping records (kernel:meta events, as the tracer names them to the ring with
 * fxt_ring_set_uncounted) are overwritten like others, but overrun_records counts events only;
 * overrun_bytes counts everything. */
static void overwrite_does_not_count_bookkeeping_records(void **state)
{
  (void)state;
  struct fxt_ring_res res;
  assert_int_equal(fxt_ring_init(&ring, storage, 64, FXT_RING_OVERWRITE), 0);
  fxt_ring_set_uncounted(&ring, 0xf | (uint64_t)0xffff << 32, 4u | (uint64_t)1 << 32);
  uint64_t meta[2] = {4u | 2u << 4 | (uint64_t)1 << 32 /* category 1: kernel:meta */, 7};
  assert_int_equal(fxt_ring_reserve(&ring, 16, &res), 0);
  assert_int_equal(fxt_ring_res_write(&res, meta, 16), 0);
  assert_int_equal(fxt_ring_res_commit(&res), 0);
  for (uint32_t i = 0; i < 6; i++)
    assert_int_equal(put(1, i), 0);
  assert_int_equal(put(3, 6), 0); /* overwrites the meta record and record 0 */
  struct fxt_ring_stats st;
  fxt_ring_stats(&ring, &st);
  assert_int_equal(st.overrun_records, 1);
  assert_int_equal(st.overrun_bytes, 24);
}

static void overwrite_large_record_and_refused_batch_are_lost(void **state)
{
  (void)state;
  static struct sink s;
  uint64_t stage[4];
  assert_int_equal(fxt_ring_init(&ring, storage, 256, FXT_RING_OVERWRITE), 0);
  assert_int_equal(put(2, 1), 0);
  assert_int_equal(put(6, 2), 0); /* larger than the 32-byte stage */
  assert_int_equal(put(1, 3), 0);
  assert_int_equal(put(1, 4), 0);
  s.len = 0;
  s.calls = 0;
  s.fail_at = 1; /* the batch after the large record is refused */
  assert_int_equal(fxt_ring_read_staged(&ring, stage, sizeof(stage), collect, &s, 4096),
                   16 + 48 + 16);
  uint64_t want[2];
  make_record(want, 2, 1);
  assert_int_equal(s.len, 16);
  assert_memory_equal(s.buf, want, 16);
  struct fxt_ring_stats st;
  fxt_ring_stats(&ring, &st);
  assert_int_equal(st.lost_records, 3); /* the large one, then records 3 and 4 */
  assert_int_equal(st.lost_bytes, 48 + 16);
  assert_int_equal(st.used, 0);
}

static void iterator_skips_overwritten_records(void **state)
{
  (void)state;
  assert_int_equal(fxt_ring_init(&ring, storage, 64, FXT_RING_OVERWRITE), 0);
  for (uint32_t i = 0; i < 8; i++)
    assert_int_equal(put(1, i), 0);
  struct fxt_ring_iter it;
  uint64_t got[8], want[8];
  uint32_t len;
  fxt_ring_iter_begin(&ring, &it);
  assert_int_equal(fxt_ring_iter_next(&it, got, sizeof(got), &len), 1);
  make_record(want, 1, 0);
  assert_memory_equal(got, want, 8);
  /* The producer overwrites records 0..3 while the iterator stands at record 1. */
  assert_int_equal(put(4, 8), 0);
  assert_int_equal(fxt_ring_iter_next(&it, got, sizeof(got), &len), 1);
  make_record(want, 1, 4); /* resumes at the oldest record still there */
  assert_memory_equal(got, want, 8);
  assert_int_equal(it.skipped_bytes, 24);
  for (uint32_t i = 5; i < 8; i++) {
    assert_int_equal(fxt_ring_iter_next(&it, got, sizeof(got), &len), 1);
    make_record(want, 1, i);
    assert_memory_equal(got, want, 8);
  }
  /* The iteration ends where the ring's head stood at iter_begin. */
  assert_int_equal(fxt_ring_iter_next(&it, got, sizeof(got), &len), 0);
}

static void iterator_enobufs(void **state)
{
  (void)state;
  assert_int_equal(fxt_ring_init(&ring, storage, 64, 0), 0);
  assert_int_equal(put(3, 1), 0);
  struct fxt_ring_iter it;
  uint64_t got[3];
  uint32_t len = 0;
  fxt_ring_iter_begin(&ring, &it);
  assert_int_equal(fxt_ring_iter_next(&it, got, 16, &len), -105);
  assert_int_equal(len, 24);
  assert_int_equal(fxt_ring_iter_next(&it, got, 16, &len), -105); /* did not advance */
  assert_int_equal(fxt_ring_iter_next(&it, got, 24, &len), 1);
  assert_int_equal(fxt_ring_iter_next(&it, got, 24, &len), 0);
}

static void corrupt_header_is_reported(void **state)
{
  (void)state;
  static struct sink s;
  struct fxt_ring_res res;
  for (uint32_t flags = 0; flags <= FXT_RING_OVERWRITE; flags++) {
    assert_int_equal(fxt_ring_init(&ring, storage, 64, flags), 0);
    assert_int_equal(put(1, 1), 0);
    uint64_t bad = 4; /* size 0 */
    assert_int_equal(fxt_ring_reserve(&ring, 8, &res), 0);
    assert_int_equal(fxt_ring_res_write(&res, &bad, 8), 0);
    assert_int_equal(fxt_ring_res_commit(&res), 0);
    /* The good record first, then the damage, with nothing consumed. */
    assert_int_equal(read_into(&s, 4096, -1), 8);
    assert_int_equal(read_into(&s, 4096, -1), -74);
    assert_int_equal(read_into(&s, 4096, -1), -74);
    struct fxt_ring_iter it;
    uint64_t got[8];
    uint32_t len;
    fxt_ring_iter_begin(&ring, &it);
    assert_int_equal(fxt_ring_iter_next(&it, got, sizeof(got), &len), -74);
    /* A header claiming more words than were committed. */
    assert_int_equal(fxt_ring_init(&ring, storage, 64, flags), 0);
    bad = 4u | 3u << 4;
    assert_int_equal(fxt_ring_reserve(&ring, 8, &res), 0);
    assert_int_equal(fxt_ring_res_write(&res, &bad, 8), 0);
    assert_int_equal(fxt_ring_res_commit(&res), 0);
    assert_int_equal(read_into(&s, 4096, -1), -74);
    /* drain still clears a damaged ring */
    assert_int_equal(fxt_ring_drain(&ring), 8);
    assert_int_equal(read_into(&s, 4096, -1), 0);
  }
}

static void record_bytes_from_headers(void **state)
{
  (void)state;
  assert_int_equal(fxt_ring_record_bytes(0x0016547846040010ull), 8);
  assert_int_equal(fxt_ring_record_bytes(4u | 0xfffu << 4), 4095 * 8);
  assert_int_equal(fxt_ring_record_bytes(4u | (uint64_t)0xfffff << 4), 4095 * 8); /* 12 bits */
  assert_int_equal(fxt_ring_record_bytes(15u | (uint64_t)0x10000 << 4), 0x10000 * 8);
  assert_int_equal(fxt_ring_record_bytes(15u | (uint64_t)0x1fffffff << 4), 0xfffffff8u);
  assert_int_equal(fxt_ring_record_bytes(15u | (uint64_t)0x20000000 << 4), 0);
  assert_int_equal(fxt_ring_record_bytes(4), 0);
}

/* ---- randomized comparison with a reference model --------------------------------------- */

struct model_rec {
  uint32_t k, id;
};

struct model {
  struct model_rec q[4096];
  uint32_t first, count, used;
  uint32_t overrun_records, overrun_bytes, lost_records, lost_bytes;
};

static uint64_t rng_state;
static uint32_t rnd(uint32_t n)
{
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 33) % n;
}

static void model_pop(struct model *m)
{
  m->used -= m->q[m->first % 4096].k * 8;
  m->first++;
  m->count--;
}

/* Checks that buf holds, record by record, the next records of the model, and pops them. */
static void expect_records(struct model *m, const unsigned char *buf, uint32_t len)
{
  for (uint32_t off = 0; off < len;) {
    assert_true(m->count > 0);
    struct model_rec r = m->q[m->first % 4096];
    uint64_t want[64];
    make_record(want, r.k, r.id);
    assert_true(off + r.k * 8 <= len);
    assert_memory_equal(buf + off, want, r.k * 8);
    off += r.k * 8;
    model_pop(m);
  }
}

static void check_stats(const struct model *m)
{
  struct fxt_ring_stats st;
  fxt_ring_stats(&ring, &st);
  assert_int_equal(st.used, m->used);
  assert_int_equal(st.overrun_records, m->overrun_records);
  assert_int_equal(st.overrun_bytes, m->overrun_bytes);
  assert_int_equal(st.lost_records, m->lost_records);
  assert_int_equal(st.lost_bytes, m->lost_bytes);
}

static void one_sequence(uint32_t size, bool overwrite, uint32_t ops)
{
  static struct model m;
  static struct sink s;
  static uint64_t stage[512];
  uint32_t id = 0;
  memset(&m, 0, sizeof(m));
  assert_int_equal(fxt_ring_init(&ring, storage, size, overwrite ? FXT_RING_OVERWRITE : 0), 0);
  for (uint32_t op = 0; op < ops; op++) {
    uint32_t what = rnd(100);
    if (what < 55) { /* write */
      uint32_t k = 1 + rnd(size / 8 < 24 ? size / 8 + 1 : 24);
      int rc = put(k, ++id);
      if (k * 8 > size || (!overwrite && m.used + k * 8 > size)) {
        assert_int_equal(rc, -28);
        continue;
      }
      assert_int_equal(rc, 0);
      while (m.used + k * 8 > size) {
        m.overrun_records++;
        m.overrun_bytes += m.q[m.first % 4096].k * 8;
        model_pop(&m);
      }
      m.q[(m.first + m.count) % 4096] = (struct model_rec){k, id};
      m.count++;
      m.used += k * 8;
    } else if (what < 85) { /* read, sometimes refusing a piece */
      uint32_t max = rnd(size + 64);
      int fail_at = rnd(4) == 0 ? (int)rnd(3) : -1;
      uint32_t stage_size = overwrite && rnd(2) ? 8 * (1 + rnd(size / 8)) : sizeof(stage);
      s.len = 0;
      s.calls = 0;
      s.fail_at = fail_at;
      int64_t n = fxt_ring_read_staged(&ring, stage, stage_size, collect, &s, max);
      assert_true(n >= 0 && n <= max);
      /* What was delivered is the model's next records, in order. */
      uint32_t delivered = s.len;
      if (!overwrite) {
        /* Consumed: whole records inside what was delivered, and nothing else. */
        uint32_t whole = 0, i = m.first;
        while (i < m.first + m.count && whole + m.q[i % 4096].k * 8 <= delivered)
          whole += m.q[i++ % 4096].k * 8;
        assert_int_equal(n, whole);
        if (fail_at < 0) { /* nothing refused: as many whole records as fit in max */
          uint32_t more = i < m.first + m.count ? m.q[i % 4096].k * 8 : 0;
          assert_true(i == m.first + m.count || whole + more > max);
        }
        expect_records(&m, s.buf, whole);
      } else {
        /* Overwrite: walk the model as the reader must: delivered records, records too large
         * for the stage (lost), and a refused batch (lost). */
        uint32_t consumed = 0, off = 0;
        while (m.count > 0 && consumed < (uint32_t)n) {
          struct model_rec r = m.q[m.first % 4096];
          uint32_t b = r.k * 8;
          if (b > stage_size || off >= delivered) {
            m.lost_records++;
            m.lost_bytes += b;
            model_pop(&m);
          } else {
            expect_records(&m, s.buf + off, b);
            off += b;
          }
          consumed += b;
        }
        assert_int_equal(consumed, n);
        assert_int_equal(off, delivered);
      }
    } else if (what < 90) { /* drain */
      assert_int_equal(fxt_ring_drain(&ring), m.used);
      while (m.count)
        model_pop(&m);
    } else { /* iterate: everything, without consuming */
      struct fxt_ring_iter it;
      uint32_t len, i = 0;
      int rc;
      fxt_ring_iter_begin(&ring, &it);
      while ((rc = fxt_ring_iter_next(&it, s.buf, sizeof(s.buf), &len)) == 1) {
        assert_true(i < m.count);
        struct model_rec r = m.q[(m.first + i) % 4096];
        uint64_t want[64];
        make_record(want, r.k, r.id);
        assert_int_equal(len, r.k * 8);
        assert_memory_equal(s.buf, want, len);
        i++;
      }
      assert_int_equal(rc, 0);
      assert_int_equal(i, m.count);
      assert_int_equal(it.skipped_bytes, 0);
    }
    check_stats(&m);
  }
}

static void randomized_against_model(void **state)
{
  (void)state;
  static const uint32_t sizes[] = {64, 128, 256, 1024, 4096};
  rng_state = 0x5eed;
  for (uint32_t seq = 0; seq < 4000; seq++)
    one_sequence(sizes[seq % 5], seq % 2 == 1, 50 + rnd(250));
}

FXT_TEST_MAIN(
    cmocka_unit_test(init_checks), cmocka_unit_test(reserve_checks),
    cmocka_unit_test(wrap_at_every_offset), cmocka_unit_test(piece_ends_at_storage_end),
    cmocka_unit_test(read_respects_max_and_whole_records),
    cmocka_unit_test(copy_failure_consumes_only_whole_records),
    cmocka_unit_test(commit_pads_and_zero_fills),
    cmocka_unit_test(overwrite_counts_overruns_exactly),
    cmocka_unit_test(overwrite_does_not_count_bookkeeping_records),
    cmocka_unit_test(overwrite_large_record_and_refused_batch_are_lost),
    cmocka_unit_test(iterator_skips_overwritten_records), cmocka_unit_test(iterator_enobufs),
    cmocka_unit_test(corrupt_header_is_reported), cmocka_unit_test(record_bytes_from_headers),
    cmocka_unit_test(randomized_against_model))
