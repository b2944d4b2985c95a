/* tests/unit/test_tracedat_page.c - the ring-buffer page encoder of trace.dat
 * (src/formats/tracedat_write_page.h): record headers and sizes by the kernel's rules, TIME_EXTEND,
 * page boundaries, events too big for a page, missed events (counted or not). Every expected
 * byte is worked out by hand in the comments (the first page reproduces the worked example of
 * the spec, tracedat.md §4.2, whose bytes trace-cmd 3.1.6 decoded); none comes from the code
 * under test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "../test_main.h"

#include <string.h>

#include "formats/tracedat_write_page.h"

static unsigned char page[FXT_TD_WPAGE_BYTES];

/* A 24-byte demo:tick record (spec §4.2): common_type 1000, flags 0, preempt 0, pid 4242,
 * u64 seq, u32 val, 4 bytes of padding. */
static void tick(unsigned char *p, uint8_t seq, uint8_t val) {
  static const unsigned char head[8] = {0xe8, 0x03, 0, 0, 0x92, 0x10, 0, 0};
  memset(p, 0, 24);
  memcpy(p, head, 8);
  p[8] = seq;
  p[16] = val;
}

static void assert_zero(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != 0)
      fail_msg("byte %zu is 0x%02x, not 0", i, p[i]);
}

/* ---- sizes ------------------------------------------------------------------------------- */

static void record_sizes(void **state) {
  (void)state;
  assert_int_equal(fxt_td_page_record_bytes(0), 8);     /* counted as 1: 4 + 4 */
  assert_int_equal(fxt_td_page_record_bytes(1), 8);
  assert_int_equal(fxt_td_page_record_bytes(4), 8);
  assert_int_equal(fxt_td_page_record_bytes(5), 16);    /* 12 is made 16 */
  assert_int_equal(fxt_td_page_record_bytes(8), 16);    /* the 8 common bytes alone */
  assert_int_equal(fxt_td_page_record_bytes(9), 16);
  assert_int_equal(fxt_td_page_record_bytes(13), 20);
  assert_int_equal(fxt_td_page_record_bytes(24), 28);
  assert_int_equal(fxt_td_page_record_bytes(112), 116); /* type_len 28, the last short one */
  assert_int_equal(fxt_td_page_record_bytes(113), 124); /* 4 + array[0] + 113 rounded to 116 */
  assert_int_equal(fxt_td_page_record_bytes(4072), 4080); /* fills a page */
  assert_int_equal(fxt_td_page_record_bytes(4073), 0);    /* beyond BUF_MAX_DATA_SIZE */
}

/* ---- the spec's page -------------------------------------------------------------------- */

/* Events at 1000.124956789 s, +1.500001 ms, +1.500002 ms, +0.75 s (TIME_EXTEND), +1.500004 ms,
 * all 24-byte ticks. (The spec's third record uses the long form on purpose; a 24-byte payload
 * takes the short form, as the kernel writes it.) */
static void spec_page(void **state) {
  (void)state;
  struct fxt_td_wpage p;
  unsigned char rec[24];
  uint64_t ts = UINT64_C(1000124956789);
  const uint64_t deltas[5] = {0, 1500001, 1500002, 750000000, 1500004};
  fxt_td_page_init(&p, page);
  for (int i = 0; i < 5; i++) {
    ts += deltas[i];
    tick(rec, (uint8_t)(i + 1), (uint8_t)(100 + 7 * i));
    assert_int_equal(fxt_td_page_add(&p, ts, 0, rec, sizeof rec), 0);
  }
  /* 28 + 28 + 28 + (8 + 28) + 28 = 148 bytes of data */
  assert_int_equal(fxt_td_page_finish(&p), 148);
  assert_int_equal(p.events, 5);
  assert_int_equal(p.extends, 1);
  static const unsigned char want[16 + 148] = {
      /* page timestamp 1000124956789 = 0xe8dc17c075 */
      0x75, 0xc0, 0x17, 0xdc, 0xe8, 0x00, 0x00, 0x00,
      /* commit 148 = 0x94, no flags */
      0x94, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      /* record 1: type_len 24/4 = 6, delta 0 */
      0x06, 0x00, 0x00, 0x00,
      0xe8, 0x03, 0, 0, 0x92, 0x10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 0, 0, 0, 0,
      /* record 2: 6 | 1500001 << 5 = 6 | 0x2dc6c20 = 0x02dc6c26 */
      0x26, 0x6c, 0xdc, 0x02,
      0xe8, 0x03, 0, 0, 0x92, 0x10, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 107, 0, 0, 0, 0, 0, 0, 0,
      /* record 3: 6 | 1500002 << 5 = 6 | 0x2dc6c40 = 0x02dc6c46 */
      0x46, 0x6c, 0xdc, 0x02,
      0xe8, 0x03, 0, 0, 0x92, 0x10, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 114, 0, 0, 0, 0, 0, 0, 0,
      /* TIME_EXTEND: 750000000 = 5 << 27 | 78911360; 30 | 78911360 << 5 = 30 | 0x9682f000
       * = 0x9682f01e, array[0] = 5 */
      0x1e, 0xf0, 0x82, 0x96, 0x05, 0x00, 0x00, 0x00,
      /* record 4: type_len 6, delta 0 (the extend carried it) */
      0x06, 0x00, 0x00, 0x00,
      0xe8, 0x03, 0, 0, 0x92, 0x10, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 121, 0, 0, 0, 0, 0, 0, 0,
      /* record 5: 6 | 1500004 << 5 = 6 | 0x2dc6c80 = 0x02dc6c86 */
      0x86, 0x6c, 0xdc, 0x02,
      0xe8, 0x03, 0, 0, 0x92, 0x10, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 128, 0, 0, 0, 0, 0, 0, 0,
  };
  assert_memory_equal(page, want, sizeof want);
  assert_zero(page + sizeof want, sizeof page - sizeof want);
}

/* The largest delta a short header carries, and the smallest that needs an extend. */
static void extend_threshold(void **state) {
  (void)state;
  struct fxt_td_wpage p;
  unsigned char rec[8] = {1, 0, 0, 0, 2, 0, 0, 0}; /* type 1, pid 2 */
  fxt_td_page_init(&p, page);
  assert_int_equal(fxt_td_page_add(&p, 10, 0, rec, 8), 0);
  assert_int_equal(fxt_td_page_add(&p, 10 + 0x7ffffff, 0, rec, 8), 0);      /* 2^27 - 1 */
  assert_int_equal(fxt_td_page_add(&p, 10 + 0x7ffffff + 0x8000000, 0, rec, 8), 0); /* 2^27 */
  assert_int_equal(fxt_td_page_finish(&p), 16 + 16 + 8 + 16);
  static const unsigned char want[16 + 56] = {
      10, 0, 0, 0, 0, 0, 0, 0, /* timestamp */
      56, 0, 0, 0, 0, 0, 0, 0, /* commit */
      /* 8-byte payload: a 12-byte record made 16: type_len (16 - 4) / 4 = 3, 4 zero bytes */
      0x03, 0x00, 0x00, 0x00, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
      /* 3 | (2^27 - 1) << 5 = 0xffffffe3 */
      0xe3, 0xff, 0xff, 0xff, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
      /* 2^27: extend with low bits 0 (header 30 = 0x1e) and array[0] = 1 */
      0x1e, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
      0x03, 0x00, 0x00, 0x00, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
  };
  assert_memory_equal(page, want, sizeof want);
  /* A gap of 2^59 ns is past what an extend carries (27 + 32 bits): a new page. */
  uint64_t last = 10 + 0x7ffffff + 0x8000000;
  assert_int_equal(fxt_td_page_add(&p, last + (UINT64_C(1) << 59), 0, rec, 8), FXT_ENOSPC);
  assert_int_equal(fxt_td_page_add(&p, last + (UINT64_C(1) << 59) - 1, 0, rec, 8), 0);
  assert_int_equal(fxt_td_page_add(&p, last, 0, rec, 8), FXT_EINVAL); /* back in time */
}

/* ---- the long form --------------------------------------------------------------------------- */

static void long_form(void **state) {
  (void)state;
  struct fxt_td_wpage p;
  unsigned char rec[113];
  for (size_t i = 0; i < sizeof rec; i++)
    rec[i] = (unsigned char)(i + 1);
  fxt_td_page_init(&p, page);
  assert_int_equal(fxt_td_page_add(&p, 5, 0, rec, 112), 0); /* short: type_len 28 */
  assert_int_equal(fxt_td_page_add(&p, 6, 0, rec, 113), 0); /* long */
  assert_int_equal(fxt_td_page_finish(&p), 116 + 124);
  const unsigned char *d = page + 16;
  /* 28 | 0 << 5 */
  static const unsigned char h1[4] = {0x1c, 0x00, 0x00, 0x00};
  assert_memory_equal(d, h1, 4);
  assert_memory_equal(d + 4, rec, 112);
  /* type_len 0 | delta 1 << 5 = 0x20; array[0] = 113 rounded to 116, + 4 = 120 = 0x78 */
  static const unsigned char h2[8] = {0x20, 0x00, 0x00, 0x00, 0x78, 0x00, 0x00, 0x00};
  assert_memory_equal(d + 116, h2, 8);
  assert_memory_equal(d + 124, rec, 113);
  assert_zero(d + 124 + 113, 3); /* padding to 4 */
  assert_zero(d + 240, FXT_TD_WPAGE_DATA_BYTES - 240);
}

/* ---- page boundaries ------------------------------------------------------------------------- */

/* 116-byte records: 35 fit (4060 bytes), the 36th does not; the next page starts with it at
 * delta 0 and the page time of that event. */
static void page_boundary(void **state) {
  (void)state;
  struct fxt_td_wpage p;
  unsigned char rec[112];
  memset(rec, 0xab, sizeof rec);
  fxt_td_page_init(&p, page);
  for (uint64_t i = 0; i < 35; i++)
    assert_int_equal(fxt_td_page_add(&p, 100 + i, 0, rec, sizeof rec), 0);
  assert_int_equal(fxt_td_page_add(&p, 135, 0, rec, sizeof rec), FXT_ENOSPC);
  assert_int_equal(p.events, 35); /* unchanged by the refusal */
  assert_int_equal(fxt_td_page_finish(&p), 4060);
  static const unsigned char head[16] = {100, 0, 0, 0, 0, 0, 0, 0, 0xdc, 0x0f, 0, 0, 0, 0, 0, 0};
  assert_memory_equal(page, head, 16); /* 4060 = 0xfdc */
  /* the last record: 28 | 1 << 5 = 0x3c at 16 + 34 * 116 */
  static const unsigned char last[4] = {0x3c, 0x00, 0x00, 0x00};
  assert_memory_equal(page + 16 + 34 * 116, last, 4);
  assert_zero(page + 16 + 4060, 20); /* the 20 bytes no record fits in */

  fxt_td_page_init(&p, page);
  assert_int_equal(fxt_td_page_add(&p, 135, 0, rec, sizeof rec), 0);
  assert_int_equal(fxt_td_page_finish(&p), 116);
  static const unsigned char next[20] = {135, 0, 0, 0, 0, 0, 0, 0, 116, 0, 0, 0, 0, 0, 0, 0,
                                         0x1c, 0, 0, 0};
  assert_memory_equal(page, next, sizeof next);
}

/* An event that fits without its TIME_EXTEND but not with it goes to a new page, where it
 * needs none. */
static void extend_at_boundary(void **state) {
  (void)state;
  struct fxt_td_wpage p;
  unsigned char rec[112] = {0};
  fxt_td_page_init(&p, NULL); /* counting only */
  for (uint64_t i = 0; i < 34; i++)
    assert_int_equal(fxt_td_page_add(&p, i, 0, NULL, sizeof rec), 0);
  assert_int_equal(p.len, 34 * 116); /* 3944: 136 left */
  assert_int_equal(fxt_td_page_add(&p, 33 + (UINT64_C(1) << 27), 0, NULL, 8), 0);
  assert_int_equal(p.len, 3944 + 8 + 16); /* 3968: 112 left */
  /* a 108-byte payload takes 112: with an extend (gap 2^27 + 1) 120, too many */
  assert_int_equal(fxt_td_page_add(&p, 34 + (UINT64_C(2) << 27), 0, NULL, 108), FXT_ENOSPC);
  assert_int_equal(fxt_td_page_add(&p, 34 + (UINT64_C(1) << 27), 0, NULL, 108), 0); /* gap 1 */
  assert_int_equal(p.len, 4080);
  assert_int_equal(p.extends, 1);
  fxt_td_page_init(&p, page);
  assert_int_equal(fxt_td_page_add(&p, 34 + (UINT64_C(2) << 27), 0, rec, 108), 0);
  assert_int_equal(p.extends, 0);
}

/* ---- too big ------------------------------------------------------------------------------- */

/* The kernel's BUF_MAX_DATA_SIZE is 4072: such a payload takes the whole page (8-byte header);
 * one more byte and no page takes it. */
static void too_big(void **state) {
  (void)state;
  static unsigned char rec[4073];
  memset(rec, 0x5a, sizeof rec);
  struct fxt_td_wpage p;
  fxt_td_page_init(&p, page);
  assert_int_equal(fxt_td_page_add(&p, 1, 0, rec, 4073), FXT_E2BIG);
  assert_int_equal(p.events, 0);
  assert_int_equal(fxt_td_page_add(&p, 1, 0, rec, 4072), 0);
  assert_int_equal(fxt_td_page_add(&p, 2, 0, rec, 0), FXT_ENOSPC); /* full */
  assert_int_equal(fxt_td_page_finish(&p), 4080);
  /* type_len 0, delta 0; array[0] = 4072 + 4 = 4076 = 0xfec */
  static const unsigned char h[24] = {1, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x0f, 0, 0, 0, 0, 0, 0,
                                      0, 0, 0, 0, 0xec, 0x0f, 0, 0};
  assert_memory_equal(page, h, sizeof h);
  assert_memory_equal(page + 24, rec, 4072);
}

/* ---- missed events -------------------------------------------------------------------------- */

static void missed_events(void **state) {
  (void)state;
  struct fxt_td_wpage p;
  unsigned char rec[8] = {7, 0, 0, 0, 9, 0, 0, 0};
  fxt_td_page_init(&p, page);
  assert_int_equal(fxt_td_page_add(&p, 50, 0, rec, 8), 0);
  /* lost events before an event of a page that has events: it starts the next page */
  assert_int_equal(fxt_td_page_add(&p, 60, 7, rec, 8), FXT_ENOSPC);
  assert_int_equal(fxt_td_page_finish(&p), 16);
  fxt_td_page_init(&p, page);
  assert_int_equal(fxt_td_page_add(&p, 60, 7, rec, 8), 0);
  assert_int_equal(fxt_td_page_add(&p, 61, 0, rec, 8), 0);
  /* commit 32 | RB_MISSED_EVENTS (1 << 31) | RB_MISSED_STORED (1 << 30) = 0xc0000020 */
  assert_int_equal(fxt_td_page_finish(&p), UINT64_C(0xc0000020));
  static const unsigned char want[16 + 32 + 8] = {
      60, 0, 0, 0, 0, 0, 0, 0,          /* timestamp */
      0x20, 0, 0, 0xc0, 0, 0, 0, 0,     /* commit with both flags */
      0x03, 0, 0, 0, 7, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, /* delta 0 */
      0x23, 0, 0, 0, 7, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, /* 3 | 1 << 5 */
      7, 0, 0, 0, 0, 0, 0, 0,           /* the count, a long after the data */
  };
  assert_memory_equal(page, want, sizeof want);
  assert_zero(page + sizeof want, sizeof page - sizeof want);
}

/* A page with a missed count keeps 8 bytes for it: a record that would take them goes to the
 * next page. */
static void missed_keeps_room(void **state) {
  (void)state;
  struct fxt_td_wpage p;
  fxt_td_page_init(&p, NULL);
  assert_int_equal(fxt_td_page_add(&p, 1, 3, NULL, 3952), 0); /* 3960 bytes: 120 left */
  assert_int_equal(fxt_td_page_add(&p, 2, 0, NULL, 112), FXT_ENOSPC); /* 116 + 8 > 120 */
  assert_int_equal(fxt_td_page_add(&p, 2, 0, NULL, 108), 0);          /* 112 + 8 = 120 */
  assert_int_equal(fxt_td_page_finish(&p),
  4072 | FXT_TD_MISSED_EVENTS | FXT_TD_MISSED_STORED);
  /* Without missed events the same 116 bytes would have fitted. */
  fxt_td_page_init(&p, NULL);
  assert_int_equal(fxt_td_page_add(&p, 1, 0, NULL, 3952), 0);
  assert_int_equal(fxt_td_page_add(&p, 2, 0, NULL, 112), 0);
}

/* The first event after a loss fills its page: no room for the count, only the flag (the
 * kernel's rule), so report says "[EVENTS DROPPED]" without a number. */
static void missed_not_stored(void **state) {
  (void)state;
  static unsigned char rec[4072];
  struct fxt_td_wpage p;
  fxt_td_page_init(&p, page);
  assert_int_equal(fxt_td_page_add(&p, 3, 5, rec, sizeof rec), 0);
  /* commit 4080 | 1 << 31 = 0x80000ff0 */
  assert_int_equal(fxt_td_page_finish(&p), UINT64_C(0x80000ff0));
  static const unsigned char head[16] = {3, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x0f, 0, 0x80, 0, 0, 0, 0};
  assert_memory_equal(page, head, 16);
}

/* Losses of an unknown count (a trace.dat page read without one): the flag, no count, and the
 * 8 bytes after the data stay zero. */
static void missed_unknown(void **state) {
  (void)state;
  unsigned char rec[8] = {7, 0, 0, 0, 9, 0, 0, 0};
  struct fxt_td_wpage p;
  fxt_td_page_init(&p, page);
  assert_int_equal(fxt_td_page_add(&p, 60, FXT_TD_WPAGE_MISSED_UNKNOWN, rec, 8), 0);
  /* commit 16 | 1 << 31 = 0x80000010 */
  assert_int_equal(fxt_td_page_finish(&p), UINT64_C(0x80000010));
  static const unsigned char want[16 + 16] = {
      60, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0x80, 0, 0, 0, 0, /* RB_MISSED_EVENTS alone */
      0x03, 0, 0, 0, 7, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0,
  };
  assert_memory_equal(page, want, sizeof want);
  assert_zero(page + sizeof want, sizeof page - sizeof want);
}

FXT_TEST_MAIN(
    cmocka_unit_test(record_sizes), cmocka_unit_test(spec_page), cmocka_unit_test(extend_threshold),
    cmocka_unit_test(long_form), cmocka_unit_test(page_boundary),
    cmocka_unit_test(extend_at_boundary), cmocka_unit_test(too_big), cmocka_unit_test(missed_events),
    cmocka_unit_test(missed_keeps_room), cmocka_unit_test(missed_not_stored),
    cmocka_unit_test(missed_unknown))
