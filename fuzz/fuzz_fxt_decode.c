/* fuzz/fuzz_fxt_decode.c - libFuzzer target for the FXT decoder.
 *
 * Decodes the input to its end three times: strictly (magic first, unknown types rejected),
 * then leniently (FXT_DECODE_NO_MAGIC | FXT_DECODE_SKIP_UNKNOWN) so inputs without a magic
 * record and with unknown types reach the record decoders too, with one provider's tables and
 * with three (fxt_decoder_add_tables: provider section records switch between them, a fourth
 * provider reuses the least recent's). Properties checked (abort() on any
 * violation, on top of ASan/UBSan):
 *  - records are returned back to back: each starts where the previous ended and lies inside
 *    the input; the decoder stops with 0 only when every byte was consumed;
 *  - an error is FXT_EBADMSG or FXT_ENOSYS with a message "offset N: reason", N inside the
 *    input, and it is sticky;
 *  - round trip: every record decoded without warning flags re-encodes to exactly its input
 *    bytes (so the encoder and decoder agree bit for bit on everything the decoder accepts).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fxtrace/fxt.h>

static struct fxt_str_slot g_table[FXT_STRING_TABLE_SIZE];
static struct fxt_decoder g_dec;
static struct fxt_record g_rec;
static uint8_t g_out[FXT_MAX_RECORD_BYTES];
static struct fxt_provider_tables g_more[2]; /* all zero between inputs */
static size_t g_nmore, g_more_given;

static struct fxt_provider_tables *more_tables(void *ctx) {
  (void)ctx;
  return g_more_given < g_nmore ? &g_more[g_more_given++] : NULL;
}

static void check(int ok) {
  if (!ok)
    abort();
}

/* "offset N: " with N < size (or N == 0 for an input too short for the magic record). */
static void check_message(const char *err, size_t size) {
  uint64_t n = 0;
  const char *p = err;
  check(strncmp(p, "offset ", 7) == 0);
  p += 7;
  check(*p >= '0' && *p <= '9');
  while (*p >= '0' && *p <= '9')
    n = n * 10 + (uint64_t)(*p++ - '0');
  check(p[0] == ':' && p[1] == ' ' && p[2] != '\0');
  check(n < size || n == 0);
}

static void round_trip(const struct fxt_record *rec, const uint8_t *data) {
  int64_t n = fxt_encode_record(g_out, sizeof g_out, rec);
  if (rec->kind == FXT_KIND_UNKNOWN) {
    check(n == FXT_EINVAL);
    return;
  }
  if (rec->flags != 0) /* valid but not canonical: re-encoding differs by design */
    return;
  check(n == (int64_t)rec->size);
  check(memcmp(g_out, data + rec->offset, (size_t)rec->size) == 0);
  check(fxt_encode_record(NULL, 0, rec) == n);
}

static void decode(const uint8_t *data, size_t size, uint32_t options, size_t more) {
  char err[FXT_DECODER_MSG_SIZE], again[FXT_DECODER_MSG_SIZE];
  uint64_t pos = 0;
  int rc;
  check(fxt_decoder_init(&g_dec, data, size, g_table) == 0);
  check(fxt_decoder_set_options(&g_dec, options) == 0);
  g_nmore = more;
  g_more_given = 0;
  if (more)
    check(fxt_decoder_add_tables(&g_dec, more_tables, NULL) == 0);
  while ((rc = fxt_decoder_next(&g_dec, &g_rec, err, sizeof err)) == 1) {
    check(g_rec.offset == pos && g_rec.size >= 8 && (g_rec.size & 7) == 0);
    check(g_rec.size <= size - pos);
    round_trip(&g_rec, data);
    pos += g_rec.size;
  }
  struct fxt_decoder_stats st;
  fxt_decoder_stats(&g_dec, &st);
  check(st.bytes == pos);
  memset(g_more, 0, g_more_given * sizeof g_more[0]); /* zero again the tables it used */
  if (rc == 0) {
    check(pos == size);
    return;
  }
  check(rc == FXT_EBADMSG || rc == FXT_ENOSYS);
  check_message(err, size);
  check(fxt_decoder_next(&g_dec, &g_rec, again, sizeof again) == rc);
  check(strcmp(err, again) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  decode(data, size, 0, 0);
  decode(data, size, FXT_DECODE_NO_MAGIC | FXT_DECODE_SKIP_UNKNOWN, 0);
  decode(data, size, FXT_DECODE_NO_MAGIC | FXT_DECODE_SKIP_UNKNOWN, 2);
  return 0;
}
