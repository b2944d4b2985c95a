/* tests/unit/fxt_encode_test.h - the fixture of the encoder's golden-word tests
 * (test_fxt_encode.c, test_fxt_encode_objects.c): one record encoded, compared with its golden
 * bytes, decoded after the golden prefix and encoded again.
 */
#ifndef FXTRACE_TEST_FXT_ENCODE_H
#define FXTRACE_TEST_FXT_ENCODE_H

#include "fxt_test_util.h"

static struct tbuf g_file;
static struct fxt_decoder g_dec;
static struct fxt_record g_out;

/* The prefix's strings: 1 "abcdefgh", 2 "name", 3 "arg", 4 "n4", 5 "value"; thread 1 =
 * (100, 101). */

static inline const struct fxt_record *check_record(const struct fxt_record *in,
                                                    const void *golden, size_t len) {
  static uint8_t out[FXT_MAX_RECORD_BYTES + 64];
  assert_int_equal(fxt_encode_record(NULL, 0, in), (int64_t)len);
  memset(out, 0xAA, sizeof out);
  assert_int_equal(fxt_encode_record(out, len, in), (int64_t)len);
  expect_bytes(out, len, golden, len);
  assert_int_equal(out[len], 0xAA); /* nothing written past the record */
  assert_int_equal(fxt_encode_record(out, len - 1, in), FXT_ENOBUFS);
  assert_int_equal(fxt_encode_record(out, 0, in), FXT_ENOBUFS);

  tb_prefix(&g_file);
  tb_bytes(&g_file, golden, len);
  assert_int_equal(decode_all_ok(&g_file, &g_dec, &g_out), PREFIX_RECORDS + 1);
  assert_int_equal(g_out.kind, in->kind);
  assert_int_equal(g_out.flags, 0);
  assert_int_equal(g_out.offset, PREFIX_BYTES);
  assert_int_equal(g_out.size, len);

  memset(out, 0xAA, sizeof out);
  assert_int_equal(fxt_encode_record(out, sizeof out, &g_out), (int64_t)len);
  expect_bytes(out, len, golden, len);
  return &g_out;
}

static inline const struct fxt_record *check_words(const struct fxt_record *in,
                                                   const uint64_t *words, size_t n) {
  return check_record(in, words, n * 8);
}

static inline struct fxt_arg arg_u32(uint16_t name, uint32_t v) {
  struct fxt_arg a = {.type = FXT_ARG_UINT32, .name = fxt_str_index(name)};
  a.value.u32 = v;
  return a;
}

#endif
