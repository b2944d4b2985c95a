/* tests/unit/fxt_decode_test.h - the fixture of the strict decoder's tests (test_fxt_decode.c,
 * test_fxt_decode_providers.c): an input after the golden prefix and its expected error.
 */
#ifndef FXTRACE_TEST_FXT_DECODE_H
#define FXTRACE_TEST_FXT_DECODE_H

#include "fxt_test_util.h"

static struct tbuf g_in;
static struct fxt_decoder g_dec;

/* prefix + words; error expected in the record after the prefix */
static inline void after_prefix(const uint64_t *w, size_t n) {
  tb_prefix(&g_in);
  tb_words(&g_in, w, n);
}

static inline void expect_after_prefix(const uint64_t *w, size_t n, int code, const char *msg) {
  after_prefix(w, n);
  decode_expect_error(&g_in, 0, PREFIX_RECORDS, code, msg);
}

/* "offset N: ..." for N = 112 + 8 * word */
static inline const char *at_word(char *buf, size_t word, const char *fmt_tail) {
  snprintf(buf, 160, "offset %zu: %s", (size_t)PREFIX_BYTES + 8 * word, fmt_tail);
  return buf;
}

#endif
