/* tests/unit/fxt_test_util.h - helpers shared by the FXT encoder and decoder tests
 * (test_fxt_encode*.c, test_fxt_decode*.c, through fxt_encode_test.h and fxt_decode_test.h).
 *
 * Golden data here is written by hand from spec/fxt.md, never produced by the encoder.
 */
#ifndef FXTRACE_TEST_FXT_UTIL_H
#define FXTRACE_TEST_FXT_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fxtrace/fxt.h>

/* Decoder string table: static storage, as the API documents it may be. */
static struct fxt_str_slot g_table[FXT_STRING_TABLE_SIZE];

/* Growable-enough byte buffer for building inputs (64 KiB + a large record). */
struct tbuf {
  uint8_t b[1u << 17];
  size_t len;
};

static inline void tb_reset(struct tbuf *t) { t->len = 0; }

static inline void tb_bytes(struct tbuf *t, const void *p, size_t n) {
  assert_true(t->len + n <= sizeof t->b);
  memcpy(t->b + t->len, p, n);
  t->len += n;
}

/* Appends whole words in file order (little-endian: the host order on every target). */
static inline void tb_words(struct tbuf *t, const uint64_t *w, size_t n) {
  tb_bytes(t, w, n * 8);
}

static inline void tb_word(struct tbuf *t, uint64_t w) { tb_words(t, &w, 1); }

/* Fails with a hex dump of the first differing word. */
static inline void expect_bytes(const void *got, size_t got_len, const void *want,
                                size_t want_len) {
  assert_int_equal(got_len, want_len);
  for (size_t i = 0; i < want_len; i += 8) {
    uint64_t g = 0, w = 0;
    size_t n = want_len - i < 8 ? want_len - i : 8;
    memcpy(&g, (const uint8_t *)got + i, n);
    memcpy(&w, (const uint8_t *)want + i, n);
    if (g != w)
      fail_msg("word %zu (byte %zu): got 0x%016" PRIx64 ", want 0x%016" PRIx64, i / 8, i, g, w);
  }
}

/* ---- the golden prefix: magic, strings 1..5, thread 1 ---- */

/* §9.1: the magic record. */
static const uint8_t k_magic[8] = {0x10, 0x00, 0x04, 0x46, 0x78, 0x54, 0x16, 0x00};

/* §9.2 (usable form): string index 1 = "abcdefgh", exactly 8 bytes: no padding, no NUL. */
static const uint8_t k_string1[16] = {
    0x22, 0x00, 0x01, 0x00, 0x08, 0x00, 0x00, 0x00, /* type 2, size 2, index 1, length 8 */
    0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68  /* "abcdefgh" */
};

/* §9.3: thread index 1 = process 100, thread 101. */
static const uint8_t k_thread1[24] = {
    0x33, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, /* type 3, size 3, index 1 */
    0x64, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* process koid 100 */
    0x65, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00  /* thread koid 101 */
};

/* String records 2..5. Header: type 2 [0..3] | size 2 [4..15] -> 0x22; index [16..30];
 * length [32..46]. Text little-endian in the following word, zero-padded. */
static const uint64_t k_strings2to5[8] = {
    UINT64_C(0x0000000400020022), /* index 2, length 4 */
    UINT64_C(0x00000000656d616e), /* "name" = 6e 61 6d 65 00 00 00 00 */
    UINT64_C(0x0000000300030022), /* index 3, length 3 */
    UINT64_C(0x0000000000677261), /* "arg" = 61 72 67 00 ... */
    UINT64_C(0x0000000200040022), /* index 4, length 2 */
    UINT64_C(0x000000000000346e), /* "n4" = 6e 34 00 ... */
    UINT64_C(0x0000000500050022), /* index 5, length 5 */
    UINT64_C(0x00000065756c6176), /* "value" = 76 61 6c 75 65 00 00 00 */
};

/* Bytes of the prefix: magic 8 + string1 16 + strings 2..5 64 + thread 24. */
#define PREFIX_BYTES 112u
#define PREFIX_RECORDS 7u

static inline void tb_prefix(struct tbuf *t) {
  tb_reset(t);
  tb_bytes(t, k_magic, sizeof k_magic);
  tb_bytes(t, k_string1, sizeof k_string1);
  tb_words(t, k_strings2to5, 8);
  tb_bytes(t, k_thread1, sizeof k_thread1);
  assert_int_equal(t->len, PREFIX_BYTES);
}

/* True when the n bytes at p are the C string s (without its NUL). */
static inline bool text_is(const char *p, size_t n, const char *s) {
  return n == strlen(s) && memcmp(p, s, n) == 0;
}

#define assert_text(ref, s) assert_true(text_is((ref).data, (ref).len, (s)))

/* Decodes t to the end and expects success: every record returned, then 0. Returns the
 * number of records; *last receives the last one. */
static inline int decode_all_ok(const struct tbuf *t, struct fxt_decoder *d,
                                struct fxt_record *last) {
  static struct fxt_record rec;
  char err[128];
  int n = 0, rc;
  memset(last, 0, sizeof *last);
  assert_int_equal(fxt_decoder_init(d, t->b, t->len, g_table), 0);
  while ((rc = fxt_decoder_next(d, &rec, err, sizeof err)) == 1) {
    *last = rec;
    n++;
  }
  if (rc != 0)
    fail_msg("decode failed (%d): %s", rc, err);
  return n;
}

/* Decodes t and expects the error code and the exact message after `good` records. */
static inline void decode_expect_error(const struct tbuf *t, uint32_t options, int good,
                                       int code, const char *msg) {
  static struct fxt_decoder d;
  struct fxt_record rec;
  char err[FXT_DECODER_MSG_SIZE];
  /* An exact-size heap copy, so a read past the input is caught by ASan. */
  uint8_t *copy = (uint8_t *)malloc(t->len ? t->len : 1);
  assert_non_null(copy);
  memcpy(copy, t->b, t->len);
  assert_int_equal(fxt_decoder_init(&d, copy, t->len, g_table), 0);
  assert_int_equal(fxt_decoder_set_options(&d, options), 0);
  for (int i = 0; i < good; i++) {
    int rc = fxt_decoder_next(&d, &rec, err, sizeof err);
    if (rc != 1)
      fail_msg("record %d: expected success, got %d: %s", i, rc, err);
  }
  int rc = fxt_decoder_next(&d, &rec, err, sizeof err);
  if (rc != code || strcmp(err, msg) != 0)
    fail_msg("expected %d \"%s\", got %d \"%s\"", code, msg, rc, err);
  /* Sticky: the same error and message again. */
  memset(err, 0, sizeof err);
  assert_int_equal(fxt_decoder_next(&d, &rec, err, sizeof err), code);
  assert_string_equal(err, msg);
  free(copy);
}

#endif /* FXTRACE_TEST_FXT_UTIL_H */
