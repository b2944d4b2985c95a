/* test_writer - the per-producer writer: the Zircon seed's test_drop_stats byte for byte, and
 * every other branch of the seed's reserve / emit_drop_stats, plus saturation. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../test_main.h"

#include <fxtrace/writer.h>
#include <string.h>

/* Fake clock: every call returns the next tick, starting at 1000. */
static uint64_t fake_now;
uint64_t fxt_platform_ticks(void)
{
  return fake_now++;
}

static _Alignas(64) unsigned char storage[4096];
static struct fxt_writer w;

struct sink {
  unsigned char buf[8192];
  uint32_t len;
};

static int collect(void *ctx, uint32_t off, const void *src, uint32_t len)
{
  struct sink *s = ctx;
  assert_int_equal(off, s->len); /* pieces arrive in order, offsets are running sums */
  memcpy(s->buf + off, src, len);
  s->len += len;
  return 0;
}

static int64_t read_all(struct sink *s, uint32_t max)
{
  s->len = 0;
  return fxt_writer_read(&w, collect, s, max);
}

static int setup(void **state)
{
  (void)state;
  fake_now = 1000;
  memset(storage, 0xee, sizeof(storage));
  return 0;
}

/* The seed's write_magic_number_record: a one-word metadata record. */
static int write_magic(void)
{
  struct fxt_reservation res;
  int rc = fxt_writer_reserve(&w, 0x0016547846040010ull, &res);
  if (rc == 0)
    fxt_res_commit(&res);
  return rc;
}

/* Nothing is pending (no drop_stats record waits): a record written now is read alone. */
static void expect_next_record_alone(struct sink *s)
{
  assert_int_equal(write_magic(), 0);
  assert_int_equal(read_all(s, 4096), 8);
}

/* The seed's write_string_record: index and text as given. */
static int write_string(uint16_t index, const char *text)
{
  uint32_t len = (uint32_t)strlen(text);
  uint64_t hdr = 2u | (uint64_t)(1 + (len + 7) / 8) << 4 | (uint64_t)index << 16 |
                 (uint64_t)len << 32;
  struct fxt_reservation res;
  int rc = fxt_writer_reserve(&w, hdr, &res);
  if (rc == 0) {
    fxt_res_write_bytes(&res, text, len);
    fxt_res_commit(&res);
  }
  return rc;
}

/* Golden drop_stats record words: DurationComplete, 7 words, 2 args, inline thread,
 * category 1 "kernel:meta", name 2 "drop_stats", arg names 3 "num_records", 4 "num_bytes". */
#define DROP_HDR 0x0002000100240074ull /* 0x74: type 4, size 7; 0x24: event 4, 2 args;
                                        * byte 3: thread ref 0; bytes 4-5: 1; bytes 6-7: 2 */
#define ARG_NUM_RECORDS(v) (0x0000000000030012ull | (uint64_t)(v) << 32) /* uint32, 1 word */
#define ARG_NUM_BYTES(v) (0x0000000000040012ull | (uint64_t)(v) << 32)

static void assert_drop_stats(const unsigned char *p, uint64_t start, uint64_t end,
                              uint32_t records, uint32_t bytes, uint64_t pid, uint64_t tid)
{
  uint64_t want[7] = {DROP_HDR, start, pid, tid, ARG_NUM_RECORDS(records),
                      ARG_NUM_BYTES(bytes), end};
  assert_memory_equal(p, want, sizeof(want));
}

/* The seed's test_drop_stats, with all 72 bytes compared. */
static void seed_test_drop_stats(void **state)
{
  (void)state;
  assert_int_equal(fxt_writer_init(&w, storage, 128, 0xAA, 0xBB), 0);
  for (int i = 0; i < 128 / 8; i++)
    assert_int_equal(write_magic(), 0);
  for (int i = 0; i < 3; i++)
    assert_int_equal(write_string(0, "abcdefgh"), -28 /* -ENOSPC */);
  assert_int_equal(fxt_writer_drain(&w), 0);
  assert_int_equal(write_string(0, "abcdefgh"), 0);

  struct sink s;
  assert_int_equal(read_all(&s, 128), 72);
  static const unsigned char golden[72] = {
      0x74, 0x00, 0x24, 0x00, 0x01, 0x00, 0x02, 0x00, /* header (see DROP_HDR) */
      0xe8, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* start: first drop at tick 1000 */
      0xaa, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* process koid 0xAA */
      0xbb, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* thread koid 0xBB */
      0x12, 0x00, 0x03, 0x00, 0x03, 0x00, 0x00, 0x00, /* uint32 arg "num_records" = 3 */
      0x12, 0x00, 0x04, 0x00, 0x30, 0x00, 0x00, 0x00, /* uint32 arg "num_bytes" = 48 */
      0xea, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* end: last drop at tick 1002 */
      0x22, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, /* string record, index 0, 8 bytes */
      'a',  'b',  'c',  'd',  'e',  'f',  'g',  'h',
  };
  assert_memory_equal(s.buf, golden, sizeof(golden));
  /* The run was reported: the stats are reset. */
  assert_int_equal(w.drop_records, 0);
  assert_int_equal(w.drop_bytes, 0);
  assert_int_equal(w.drop_first, 0);
  assert_int_equal(w.drop_last, 0);
}

static void init_rejects_bad_sizes(void **state)
{
  (void)state;
  static const uint32_t bad[] = {0, 8, 32, 63, 96, 100, 3u << 20, 0x80000001u, 0xffffffffu};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    assert_int_equal(fxt_writer_init(&w, storage, bad[i], 1, 2), -22 /* -EINVAL */);
  assert_int_equal(fxt_writer_init(&w, NULL, 64, 1, 2), -22);
  assert_int_equal(fxt_writer_init(&w, storage + 4, 64, 1, 2), -22);
  assert_int_equal(fxt_writer_init_flags(&w, storage, 64, 2, 1, 2), -22);
  assert_int_equal(fxt_writer_init(&w, storage, 64, 1, 2), 0);
  /* 2 GiB is the largest size; init does not touch the storage. */
  assert_int_equal(fxt_writer_init(&w, storage, 0x80000000u, 1, 2), 0);
}

static void reserve_rejects_zero_words_uncounted(void **state)
{
  (void)state;
  struct fxt_reservation res;
  assert_int_equal(fxt_writer_init(&w, storage, 64, 1, 2), 0);
  assert_int_equal(fxt_writer_reserve(&w, 0x4 /* event, 0 words */, &res), -22);
  assert_int_equal(fxt_writer_reserve(&w, 0xf /* large record, 0 words */, &res), -22);
  /* A large record of 2^29 words is 2^32 bytes: not representable, EINVAL as in the seed. */
  assert_int_equal(fxt_writer_reserve(&w, 0xf | (uint64_t)1 << 33, &res), -22);
  assert_int_equal(w.drop_records, 0);
  assert_int_equal(fxt_writer_emit_drop_stats(&w), 0);
  struct sink s;
  assert_int_equal(read_all(&s, 4096), 0);
}

static void large_record_size_from_32_bit_field(void **state)
{
  (void)state;
  struct fxt_reservation res;
  assert_int_equal(fxt_writer_init(&w, storage, 128, 1, 2), 0);
  /* Type 15, 3 words: size bits [4..35]. The 12-bit field alone would also say 3, so put a
   * bit above 15 too: 0x10003 words cannot fit and must be refused, not read as 3. */
  assert_int_equal(fxt_writer_reserve(&w, 0xf | (uint64_t)0x10003 << 4, &res), -28);
  assert_int_equal(w.drop_bytes, 0x10003u * 8);
  uint64_t hdr = 0xf | (uint64_t)3 << 4;
  assert_int_equal(fxt_writer_reserve(&w, hdr, &res), 0);
  fxt_res_write_word(&res, 0x1111);
  fxt_res_write_word(&res, 0x2222);
  fxt_res_commit(&res);
  struct sink s;
  assert_int_equal(read_all(&s, 4096), 56 + 24);
  assert_drop_stats(s.buf, 1000, 1000, 1, 0x10003u * 8, 1, 2);
  uint64_t want[3] = {hdr, 0x1111, 0x2222};
  assert_memory_equal(s.buf + 56, want, sizeof(want));
}

static void emit_drop_stats_nothing_pending(void **state)
{
  (void)state;
  assert_int_equal(fxt_writer_init(&w, storage, 64, 1, 2), 0);
  assert_int_equal(fxt_writer_emit_drop_stats(&w), 0);
  struct sink s;
  assert_int_equal(read_all(&s, 4096), 0);
  assert_int_equal(fake_now, 1000); /* the clock was not even read */
}

static void emit_drop_stats_without_then_with_room(void **state)
{
  (void)state;
  assert_int_equal(fxt_writer_init(&w, storage, 64, 7, 8), 0);
  for (int i = 0; i < 8; i++)
    assert_int_equal(write_magic(), 0);
  assert_int_equal(write_magic(), -28);
  assert_int_equal(write_magic(), -28);
  /* No room for the 56-byte record: -ENOSPC, stats kept. */
  assert_int_equal(fxt_writer_emit_drop_stats(&w), -28);
  assert_int_equal(w.drop_records, 2);
  assert_int_equal(w.drop_bytes, 16);
  /* Read one record (8 bytes): still no room for 56. */
  struct sink s;
  assert_int_equal(read_all(&s, 8), 8);
  assert_int_equal(fxt_writer_emit_drop_stats(&w), -28);
  /* Read everything: now it fits and the stats reset. */
  assert_int_equal(read_all(&s, 4096), 56);
  assert_int_equal(fxt_writer_emit_drop_stats(&w), 0);
  assert_int_equal(w.drop_records, 0);
  assert_int_equal(read_all(&s, 4096), 56);
  assert_drop_stats(s.buf, 1000, 1001, 2, 16, 7, 8);
  expect_next_record_alone(&s);
}

static void combined_reservation_fails_counts_record_only(void **state)
{
  (void)state;
  struct sink s;
  assert_int_equal(fxt_writer_init(&w, storage, 128, 1, 2), 0);
  for (int i = 0; i < 16; i++)
    assert_int_equal(write_magic(), 0);
  assert_int_equal(write_magic(), -28); /* tick 1000 */
  /* Free 48 bytes: a 16-byte record would fit alone, but not with the 56-byte drop_stats. */
  assert_int_equal(read_all(&s, 48), 48);
  assert_int_equal(write_string(1, "abcdefgh"), -28); /* tick 1001 */
  assert_int_equal(w.drop_records, 2);
  assert_int_equal(w.drop_bytes, 8 + 16); /* the record's own size, not 16 + 56 */
  /* Free everything: the drop_stats record and the record go in together. */
  assert_int_equal(read_all(&s, 4096), 80);
  assert_int_equal(write_string(1, "abcdefgh"), 0);
  assert_int_equal(read_all(&s, 4096), 72);
  assert_drop_stats(s.buf, 1000, 1001, 2, 24, 1, 2);
}

static void drop_stats_written_exactly_once_per_run(void **state)
{
  (void)state;
  struct sink s;
  assert_int_equal(fxt_writer_init(&w, storage, 256, 1, 2), 0);
  for (int run = 0; run < 3; run++) {
    while (write_magic() == 0)
      ;
    assert_int_equal(write_magic(), -28);
    assert_int_equal(read_all(&s, 4096), 256);
    /* Two successful records after the run: only the first carries drop_stats. */
    assert_int_equal(write_magic(), 0);
    assert_int_equal(write_magic(), 0);
    assert_int_equal(read_all(&s, 4096), 56 + 8 + 8);
    uint64_t first = 1000 + 2 * (uint64_t)run;
    assert_drop_stats(s.buf, first, first + 1, 2, 16, 1, 2);
  }
}

static void saturation_records_split_into_further_record(void **state)
{
  (void)state;
  struct sink s;
  assert_int_equal(fxt_writer_init(&w, storage, 4096, 1, 2), 0);
  /* White box: a run of UINT32_MAX + 5 drops would take hours to produce for real. */
  w.drop_first = 10;
  w.drop_last = 20;
  w.drop_records = (uint64_t)UINT32_MAX + 5;
  w.drop_bytes = 40;
  assert_int_equal(write_magic(), 0);
  /* One drop_stats record saturated at UINT32_MAX; the excess stays pending... */
  assert_int_equal(w.drop_records, 5);
  assert_int_equal(read_all(&s, 4096), 56 + 8);
  assert_drop_stats(s.buf, 10, 20, UINT32_MAX, 40, 1, 2);
  /* ...and goes into a further drop_stats record, in front of the next record. */
  assert_int_equal(write_magic(), 0);
  assert_int_equal(read_all(&s, 4096), 56 + 8);
  assert_drop_stats(s.buf, 10, 20, 5, 0, 1, 2);
  assert_int_equal(w.drop_records, 0);
  expect_next_record_alone(&s);
}

static void saturation_bytes_from_real_drops(void **state)
{
  (void)state;
  struct sink s;
  assert_int_equal(fxt_writer_init(&w, storage, 4096, 1, 2), 0);
  /* Three large records of 2^28 words (2 GiB each) cannot fit: 6 GiB dropped. */
  struct fxt_reservation res;
  uint64_t big = 0xf | (uint64_t)1 << 32;
  for (int i = 0; i < 3; i++)
    assert_int_equal(fxt_writer_reserve(&w, big, &res), -28);
  assert_int_equal(w.drop_bytes, 3ull << 31);
  assert_int_equal(fxt_writer_emit_drop_stats(&w), 0);
  assert_int_equal(read_all(&s, 4096), 112);
  assert_drop_stats(s.buf, 1000, 1002, 3, UINT32_MAX, 1, 2);
  assert_drop_stats(s.buf + 56, 1000, 1002, 0, (uint32_t)((3ull << 31) - UINT32_MAX), 1, 2);
  assert_int_equal(w.drop_bytes, 0);
}

static void overwrite_writer_never_drops_what_fits(void **state)
{
  (void)state;
  struct sink s;
  assert_int_equal(fxt_writer_init_flags(&w, storage, 64, FXT_RING_OVERWRITE, 1, 2), 0);
  for (int i = 0; i < 20; i++)
    assert_int_equal(write_string(1, "abcdefgh"), 0);
  assert_int_equal(w.drop_records, 0);
  struct fxt_ring_stats st;
  fxt_ring_stats(&w.ring, &st);
  assert_int_equal(st.overrun_records, 16);
  assert_int_equal(st.overrun_bytes, 256);
  assert_int_equal(read_all(&s, 4096), 64);
  /* Only a record that can never fit is refused, and counted. */
  struct fxt_reservation res;
  assert_int_equal(fxt_writer_reserve(&w, 4u | 9u << 4, &res), -28);
  assert_int_equal(w.drop_records, 1);
}

static void write_bytes_pads_with_zeros(void **state)
{
  (void)state;
  struct sink s;
  assert_int_equal(fxt_writer_init(&w, storage, 64, 1, 2), 0);
  assert_int_equal(write_string(5, "hello"), 0);
  assert_int_equal(read_all(&s, 4096), 16);
  static const unsigned char want[16] = {0x22, 0x00, 0x05, 0x00, 0x05, 0x00, 0x00, 0x00,
                                         'h',  'e',  'l',  'l',  'o',  0,    0,    0};
  assert_memory_equal(s.buf, want, sizeof(want));
}

FXT_TEST_MAIN(
    cmocka_unit_test_setup(seed_test_drop_stats, setup),
    cmocka_unit_test_setup(init_rejects_bad_sizes, setup),
    cmocka_unit_test_setup(reserve_rejects_zero_words_uncounted, setup),
    cmocka_unit_test_setup(large_record_size_from_32_bit_field, setup),
    cmocka_unit_test_setup(emit_drop_stats_nothing_pending, setup),
    cmocka_unit_test_setup(emit_drop_stats_without_then_with_room, setup),
    cmocka_unit_test_setup(combined_reservation_fails_counts_record_only, setup),
    cmocka_unit_test_setup(drop_stats_written_exactly_once_per_run, setup),
    cmocka_unit_test_setup(saturation_records_split_into_further_record, setup),
    cmocka_unit_test_setup(saturation_bytes_from_real_drops, setup),
    cmocka_unit_test_setup(overwrite_writer_never_drops_what_fits, setup),
    cmocka_unit_test_setup(write_bytes_pads_with_zeros, setup))
