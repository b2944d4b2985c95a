/* tests/unit/test_tdr_page.c - the trace.dat page decoder (src/formats/tracedat_read_page.c) on
 * pages built here byte by byte. Every expected timestamp, length and offset is worked out by hand
 * in the comments; record header words are written as the kernel lays them out:
 * little-endian: type_len = bits 0..4, time_delta = bits 5..31; big-endian: type_len = bits
 * 27..31, time_delta = bits 0..26 (spec tracedat.md §4.1).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "../test_main.h"

#include <string.h>

#include "formats/tracedat_read.h"

static const struct fxt_td_layout k_le8 = {false, 8, 0, 8, 16}; /* x86_64: 16-byte header */
static const struct fxt_td_layout k_be4 = {true, 4, 0, 8, 12};  /* 32-bit long, big-endian */

struct pg {
  unsigned char b[256];
  size_t len; /* bytes written so far */
};

static void le(struct pg *p, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    p->b[p->len++] = (unsigned char)(v >> (8 * i));
}
static void be(struct pg *p, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    p->b[p->len++] = (unsigned char)(v >> (8 * (n - 1 - i)));
}
/* A little-endian header word. */
static void hdr(struct pg *p, uint32_t type_len, uint32_t delta) {
  le(p, delta << 5 | type_len, 4);
}
/* Payload bytes 0xa0, 0xa1, ... */
static void payload(struct pg *p, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    p->b[p->len++] = (unsigned char)(0xa0 + i);
}
/* Page header (timestamp, commit) at the start of a little-endian page with 8-byte commit. */
static void page_le(struct pg *p, uint64_t ts, uint64_t commit) {
  memset(p, 0, sizeof *p);
  le(p, ts, 8);
  le(p, commit, 8);
}

static char err[FXT_TD_ERR_SIZE];

/* Two data records, short and long form:
 *   +16 hdr type_len 2 (8-byte payload), delta 10       ts 1000 + 10 = 1010, data at +20
 *   +28 hdr type_len 0, delta 5; array[0] = 28 = 24 + 4  ts 1010 + 5 = 1015, data at +36
 *   commit = 12 + 32 = 44 */
static void test_short_and_long_records(void **state) {
  (void)state;
  struct pg p;
  page_le(&p, 1000, 44);
  hdr(&p, 2, 10);
  payload(&p, 8);
  hdr(&p, 0, 5);
  le(&p, 28, 4);
  payload(&p, 24);
  struct fxt_td_page pg;
  struct fxt_td_rec r;
  assert_int_equal(fxt_td_page_open(&pg, p.b, sizeof p.b, 4096, &k_le8, err, sizeof err), 0);
  assert_int_equal(pg.timestamp, 1000);
  assert_int_equal(pg.data_len, 44);
  assert_false(pg.missed);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), 1);
  assert_int_equal(r.ts, 1010);
  assert_int_equal(r.len, 8);
  assert_ptr_equal(r.data, p.b + 20);
  assert_int_equal(r.offset, 4096 + 16);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), 1);
  assert_int_equal(r.ts, 1015);
  assert_int_equal(r.len, 24);
  assert_ptr_equal(r.data, p.b + 36);
  assert_int_equal(r.data[0], 0xa0);
  assert_int_equal(r.offset, 4096 + 28);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), 0);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), 0); /* stays at the end */
}

/* TIME_EXTEND of 750 000 000 ns = 5 << 27 + 78 911 360 (spec §4.2: header word 0x9682f01e,
 * array[0] = 5). Page at 5 000 000 000:
 *   +16 TIME_EXTEND                        running 5 750 000 000
 *   +24 data type_len 1, delta 0           ts 5 750 000 000
 *   +32 data type_len 1, delta 3           ts 5 750 000 003
 * A 27-bit delta at its maximum (134 217 727) in a third record: ts 5 884 217 730.
 *   commit = 8 + 8 + 8 + 8 = 32 */
static void test_time_extend(void **state) {
  (void)state;
  struct pg p;
  page_le(&p, 5000000000u, 32);
  le(&p, 0x9682f01eu, 4);
  le(&p, 5, 4);
  hdr(&p, 1, 0);
  payload(&p, 4);
  hdr(&p, 1, 3);
  payload(&p, 4);
  hdr(&p, 1, (1u << 27) - 1);
  payload(&p, 4);
  struct fxt_td_page pg;
  struct fxt_td_rec r;
  assert_int_equal(fxt_td_page_open(&pg, p.b, sizeof p.b, 0, &k_le8, err, sizeof err), 0);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), 1);
  assert_int_equal(r.ts, UINT64_C(5750000000));
  assert_int_equal(r.offset, 24);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), 1);
  assert_int_equal(r.ts, UINT64_C(5750000003));
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), 1);
  assert_int_equal(r.ts, UINT64_C(5750000003) + 134217727u);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), 0);
}

/* Padding, the kernel's way (ring_buffer.c: padding never moves time):
 *   +16 data type_len 1, delta 100          ts 100 + 100 = 200
 *   +24 padding delta 7, array[0] = 12      a discarded event: 4 + 12 = 16 bytes skipped,
 *                                           time stays 200 (libtraceevent's kbuffer: 207)
 *   +40 data type_len 1, delta 1            ts 201
 *   +48 padding delta 0                     the tail filler: the page ends here, although
 *                                           commit (64) says 16 more bytes follow
 *   +52 data type_len 1 (never returned) */
static void test_padding(void **state) {
  (void)state;
  struct pg p;
  page_le(&p, 100, 48);
  hdr(&p, 1, 100);
  payload(&p, 4);
  hdr(&p, 29, 7);
  le(&p, 12, 4);
  payload(&p, 8);
  hdr(&p, 1, 1);
  payload(&p, 4);
  hdr(&p, 29, 0);
  hdr(&p, 1, 0);
  payload(&p, 4);
  p.b[8] = 64; /* commit: 48 + 16 */
  struct fxt_td_page pg;
  struct fxt_td_rec r;
  assert_int_equal(fxt_td_page_open(&pg, p.b, sizeof p.b, 0, &k_le8, err, sizeof err), 0);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), 1);
  assert_int_equal(r.ts, 200);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), 1);
  assert_int_equal(r.ts, 201);
  assert_int_equal(r.offset, 40);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), 0);
}

/* TIME_STAMP replaces the running time; the top 5 bits (59..63) come from the running time
 * (rb_fix_abs_ts). Page at 2^59 + 100:
 *   +16 TIME_STAMP of 12345 = (0 << 27) + 12345: ts (2^59 | 12345)
 *   +24 data delta 5                         ts 2^59 + 12350
 *   +32 TIME_STAMP of 3 << 27 + 1            ts 2^59 + 402653185 */
static void test_time_stamp(void **state) {
  (void)state;
  struct pg p;
  uint64_t top = UINT64_C(1) << 59;
  page_le(&p, top + 100, 32);
  hdr(&p, 31, 12345);
  le(&p, 0, 4);
  hdr(&p, 1, 5);
  payload(&p, 4);
  hdr(&p, 31, 1);
  le(&p, 3, 4);
  hdr(&p, 1, 0);
  payload(&p, 4);
  struct fxt_td_page pg;
  struct fxt_td_rec r;
  assert_int_equal(fxt_td_page_open(&pg, p.b, sizeof p.b, 0, &k_le8, err, sizeof err), 0);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), 1);
  assert_int_equal(r.ts, top + 12350);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), 1);
  assert_int_equal(r.ts, top + (UINT64_C(3) << 27) + 1);
}

/* Missed events: commit bit 31 (events lost before this page) and bit 30 (their count is the
 * long right after the data). Data: one 4-byte record, so commit = 8 | flags and the count
 * 42 sits at 16 + 8 = 24. Without bit 30 the count is unknown; with bit 30 but no room for
 * the long in the page, unknown too. */
static void test_missed_events(void **state) {
  (void)state;
  struct pg p;
  page_le(&p, 7, 8 | UINT64_C(1) << 31 | UINT64_C(1) << 30);
  hdr(&p, 1, 1);
  payload(&p, 4);
  le(&p, 42, 8);
  struct fxt_td_page pg;
  struct fxt_td_rec r;
  assert_int_equal(fxt_td_page_open(&pg, p.b, sizeof p.b, 0, &k_le8, err, sizeof err), 0);
  assert_true(pg.missed);
  assert_true(pg.missed_known);
  assert_int_equal(pg.missed_count, 42);
  assert_int_equal(pg.data_len, 8);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), 1);
  assert_int_equal(r.ts, 8);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), 0); /* the count is not a record */

  p.b[15 - 4] = 0x80; /* commit's byte 3: bit 31 only */
  assert_int_equal(fxt_td_page_open(&pg, p.b, sizeof p.b, 0, &k_le8, err, sizeof err), 0);
  assert_true(pg.missed);
  assert_false(pg.missed_known);

  p.b[11] = 0xc0; /* both bits again, but the page is cut right after the data */
  assert_int_equal(fxt_td_page_open(&pg, p.b, 24, 0, &k_le8, err, sizeof err), 0);
  assert_true(pg.missed);
  assert_false(pg.missed_known);
}

/* Truncated and malformed pages fail with the file offset of what is wrong. */
static void test_truncated(void **state) {
  (void)state;
  struct pg p;
  struct fxt_td_page pg;
  struct fxt_td_rec r;
  /* a page shorter than its header */
  page_le(&p, 1, 0);
  assert_int_equal(fxt_td_page_open(&pg, p.b, 10, 8192, &k_le8, err, sizeof err), FXT_EBADMSG);
  assert_string_equal(err, "offset 8192: page of 10 bytes, shorter than its 16-byte header");
  /* commit 100 in a 64-byte page: the commit word at 8192 + 8 is blamed */
  page_le(&p, 1, 100);
  assert_int_equal(fxt_td_page_open(&pg, p.b, 64, 8192, &k_le8, err, sizeof err), FXT_EBADMSG);
  assert_string_equal(err, "offset 8200: page commit says 100 data bytes, the page holds 48 "
                           "after its header");
  /* a record running past the data: type_len 4 (20 bytes) with commit 12 */
  page_le(&p, 1, 12);
  hdr(&p, 4, 0);
  payload(&p, 16);
  assert_int_equal(fxt_td_page_open(&pg, p.b, sizeof p.b, 8192, &k_le8, err, sizeof err), 0);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), FXT_EBADMSG);
  assert_string_equal(err, "offset 8208: data record of 20 bytes runs past the page data "
                           "(12 bytes left)");
  /* 2 stray bytes after a record */
  page_le(&p, 1, 10);
  hdr(&p, 1, 0);
  payload(&p, 4);
  assert_int_equal(fxt_td_page_open(&pg, p.b, sizeof p.b, 0, &k_le8, err, sizeof err), 0);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), 1);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), FXT_EBADMSG);
  assert_string_equal(err, "offset 24: 2 bytes at the end of the page data, less than a "
                           "record header");
  /* a long-form record whose length word says 4 (an empty payload) */
  page_le(&p, 1, 8);
  hdr(&p, 0, 0);
  le(&p, 4, 4);
  assert_int_equal(fxt_td_page_open(&pg, p.b, sizeof p.b, 0, &k_le8, err, sizeof err), 0);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), FXT_EBADMSG);
  assert_string_equal(err, "offset 16: data record with length word 4 (payload empty)");
  /* a TIME_EXTEND cut in half by the end of the data */
  page_le(&p, 1, 4);
  hdr(&p, 30, 1);
  assert_int_equal(fxt_td_page_open(&pg, p.b, sizeof p.b, 0, &k_le8, err, sizeof err), 0);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), FXT_EBADMSG);
  assert_string_equal(err, "offset 16: record of type 30 needs 8 bytes, the page data has 4");
}

/* Big-endian, 4-byte long (12-byte header): type_len is the top 5 bits of the word.
 *   +12 word 0x10000009 = type_len 2 (0x10000009 >> 27), delta 9   ts 50 + 9 = 59 */
static void test_big_endian(void **state) {
  (void)state;
  struct pg p;
  memset(&p, 0, sizeof p);
  be(&p, 50, 8);
  be(&p, 12, 4);
  be(&p, UINT32_C(2) << 27 | 9, 4);
  payload(&p, 8);
  struct fxt_td_page pg;
  struct fxt_td_rec r;
  assert_int_equal(fxt_td_page_open(&pg, p.b, sizeof p.b, 0, &k_be4, err, sizeof err), 0);
  assert_int_equal(pg.data_len, 12);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), 1);
  assert_int_equal(r.ts, 59);
  assert_int_equal(r.len, 8);
  assert_ptr_equal(r.data, p.b + 16);
  assert_int_equal(fxt_td_page_next(&pg, &r, err, sizeof err), 0);
}

FXT_TEST_MAIN(
    cmocka_unit_test(test_short_and_long_records), cmocka_unit_test(test_time_extend),
    cmocka_unit_test(test_padding), cmocka_unit_test(test_time_stamp),
    cmocka_unit_test(test_missed_events), cmocka_unit_test(test_truncated),
    cmocka_unit_test(test_big_endian))
