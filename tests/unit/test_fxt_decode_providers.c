/* tests/unit/test_fxt_decode_providers.c - the strict FXT decoder's flags, provider tables and
 * API: non-canonical and oversize records that are accepted, a provider's records resolved in
 * its own tables (two providers interleaved), and the calls' argument checks.
 *
 * Inputs are hand-written words after the golden prefix (fxt_test_util.h; the first record
 * after it is at offset 112), decoded as in test_fxt_decode.c.
 */
#include "fxt_decode_test.h"
#include "../test_main.h"

static void test_noncanonical_and_oversize(void **state) {
  (void)state;
  struct fxt_record r;
  /* inline empty ref 0x8000 as the name */
  const uint64_t empty[] = {UINT64_C(0x8000000101000024), 1};
  after_prefix(empty, 2);
  assert_int_equal(decode_all_ok(&g_in, &g_dec, &r), PREFIX_RECORDS + 1);
  assert_int_equal(r.flags, FXT_RECORD_WARN_NONCANONICAL);
  assert_int_equal(r.u.event.name.len, 0);
  uint64_t out[2];
  assert_int_equal(fxt_encode_record(out, sizeof out, &r), 16);
  assert_true(out[0] == UINT64_C(0x0000000101000024)); /* re-encoded canonically as ref 0 */

  /* type-10 blob argument: [0..3] 10 | size 2 | name 3 | [32..63] 5 bytes; "hello" */
  const uint64_t blob[] = {UINT64_C(0x0002000101100044), 1, UINT64_C(0x000000050003002a),
                           UINT64_C(0x0000006f6c6c6568)};
  after_prefix(blob, 4);
  assert_int_equal(decode_all_ok(&g_in, &g_dec, &r), PREFIX_RECORDS + 1);
  assert_int_equal(r.flags, FXT_RECORD_WARN_NONCANONICAL);
  assert_int_equal(r.u.event.args[0].type, FXT_ARG_BLOB);
  assert_int_equal(r.u.event.args[0].value.blob.size, 5);
  assert_memory_equal(r.u.event.args[0].value.blob.data, "hello", 5);
  assert_int_equal(fxt_encode_record(NULL, 0, &r), FXT_EINVAL);

  /* empty argument name */
  const uint64_t noname[] = {UINT64_C(0x0002000101100034), 1, UINT64_C(0x0000000000000010)};
  after_prefix(noname, 3);
  assert_int_equal(decode_all_ok(&g_in, &g_dec, &r), PREFIX_RECORDS + 1);
  assert_int_equal(r.flags, FXT_RECORD_WARN_NONCANONICAL);

  /* A 4096-word large blob attachment: valid, but flagged, and never encoded. */
  tb_prefix(&g_in);
  tb_word(&g_in, UINT64_C(0x000001000001000f)); /* 15 | [4..35] 0x1000 | format 1 */
  tb_word(&g_in, 0);
  tb_word(&g_in, 4093 * 8);
  for (int i = 0; i < 4093; i++)
    tb_word(&g_in, 0);
  assert_int_equal(decode_all_ok(&g_in, &g_dec, &r), PREFIX_RECORDS + 1);
  assert_int_equal(r.flags, FXT_RECORD_WARN_OVERSIZE);
  assert_int_equal(r.size, 4096 * 8);
  assert_int_equal(fxt_encode_record(NULL, 0, &r), FXT_E2BIG);
}

static void test_provider_tables(void **state) {
  (void)state;
  char m[160];
  /* provider info (id 1, "fxtrace") starts fresh tables: string 1 is gone */
  const uint64_t info[] = {UINT64_C(0x0070000000110020), UINT64_C(0x0065636172747866),
                           UINT64_C(0x0002000101000024), 1};
  after_prefix(info, 4);
  decode_expect_error(&g_in, 0, PREFIX_RECORDS + 1, FXT_EBADMSG,
                      at_word(m, 2, "thread ref 1 not defined"));
  /* a provider section for the current provider (0) keeps them */
  const uint64_t same[] = {UINT64_C(0x0000000000020010), UINT64_C(0x0002000101000024), 1};
  struct fxt_record r;
  after_prefix(same, 3);
  assert_int_equal(decode_all_ok(&g_in, &g_dec, &r), PREFIX_RECORDS + 2);
  assert_text(r.u.event.category, "abcdefgh");
  /* one for provider 3 does not */
  const uint64_t other[] = {UINT64_C(0x0000000003020010), UINT64_C(0x0002000100000024), 1};
  after_prefix(other, 3);
  decode_expect_error(&g_in, 0, PREFIX_RECORDS + 1, FXT_EBADMSG,
                      at_word(m, 1, "string ref 1 not defined"));
}

/* Two providers whose records interleave (as two processes' writes to one stdout), built from
 * the spec's layouts (§4.2, §4.3, §4.6, §4.7, §8): a provider section record switches back to
 * a provider's string and thread tables as they were; a provider info record registers it
 * afresh. */
#define PI(id) (UINT64_C(0x0010000000010020) | (uint64_t)(id) << 20) /* name len 1, 2 words */
#define PS(id) (UINT64_C(0x0000000000020010) | (uint64_t)(id) << 20)
#define STR1 UINT64_C(0x0000000200010022) /* string index 1, 2 bytes, 2 words */
#define THR1 UINT64_C(0x0000000000010033) /* thread index 1, 3 words */
#define EV1 UINT64_C(0x0001000101000024)  /* instant: thread 1, category 1, name 1, 2 words */
static struct fxt_provider_tables g_more[2];
static size_t g_nmore, g_more_given; /* tables to give, given */

static struct fxt_provider_tables *more_tables(void *ctx) {
  assert_ptr_equal(ctx, &g_nmore);
  return g_more_given < g_nmore ? &g_more[g_more_given++] : NULL;
}

/* fxt_decoder_add_tables with n of g_more's tables, zeroed. */
static int add_tables(size_t n) {
  memset(g_more, 0, sizeof g_more);
  g_nmore = n;
  g_more_given = 0;
  return fxt_decoder_add_tables(&g_dec, more_tables, &g_nmore);
}

static void provider_word(uint32_t id, int section) {
  tb_word(&g_in, section ? PS(id) : PI(id));
  if (!section)
    tb_word(&g_in, 0x61); /* name "a" */
}

static void bind(uint32_t id, uint64_t text) {
  const uint64_t w[] = {STR1, text, THR1, id, id + 1};
  tb_words(&g_in, w, 5);
}

static void event(uint64_t ts) {
  tb_word(&g_in, EV1);
  tb_word(&g_in, ts);
}

/* Decodes to the next event and checks whose it is (text of string 1, koids of thread 1). */
static void expect_event(uint64_t ts, const char *text, uint64_t pid) {
  struct fxt_record r;
  char err[128];
  int rc;
  while ((rc = fxt_decoder_next(&g_dec, &r, err, sizeof err)) == 1 && r.kind != FXT_KIND_EVENT)
    ;
  assert_int_equal(rc, 1);
  assert_int_equal(r.u.event.timestamp, ts);
  assert_text(r.u.event.category, text);
  assert_text(r.u.event.name, text);
  assert_int_equal(r.u.event.thread.process_koid, pid);
  assert_int_equal(r.u.event.thread.thread_koid, pid + 1);
}

static void expect_error(const char *msg) {
  struct fxt_record r;
  char err[128];
  int rc;
  while ((rc = fxt_decoder_next(&g_dec, &r, err, sizeof err)) == 1)
    ;
  assert_int_equal(rc, FXT_EBADMSG);
  assert_string_equal(err, msg);
}

static void test_providers_interleaved(void **state) {
  (void)state;
  tb_reset(&g_in);
  tb_bytes(&g_in, k_magic, 8);
  provider_word(10, 0);
  bind(10, 0x6161); /* "aa" */
  event(1);
  provider_word(20, 0);
  bind(20, 0x6262); /* "bb" */
  event(2);
  provider_word(10, 1);
  event(3);
  provider_word(20, 1);
  event(4);
  provider_word(20, 1); /* the current one: nothing changes */
  event(5);
  provider_word(10, 1);
  event(6);
  size_t again = g_in.len;
  provider_word(10, 0); /* registered afresh: empty tables */
  event(7);
  assert_int_equal(fxt_decoder_init(&g_dec, g_in.b, g_in.len, g_table), 0);
  assert_int_equal(add_tables(2), 0);
  expect_event(1, "aa", 10);
  expect_event(2, "bb", 20);
  expect_event(3, "aa", 10);
  expect_event(4, "bb", 20);
  expect_event(5, "bb", 20);
  expect_event(6, "aa", 10);
  char m[80];
  snprintf(m, sizeof m, "offset %zu: thread ref 1 not defined", again + 16);
  expect_error(m);

  /* Without more tables, a section for another provider starts empty ones (the one table
   * is reused). */
  assert_int_equal(fxt_decoder_init(&g_dec, g_in.b, g_in.len, g_table), 0);
  expect_event(1, "aa", 10);
  expect_event(2, "bb", 20);
  expect_error("offset 160: thread ref 1 not defined");
  assert_int_equal(add_tables(2), FXT_EINVAL); /* after a record */
  assert_int_equal(fxt_decoder_add_tables(NULL, more_tables, NULL), FXT_EINVAL);

  /* More providers than tables: the one made current the longest ago gives its tables up. */
  tb_reset(&g_in);
  tb_bytes(&g_in, k_magic, 8);
  provider_word(10, 0);
  bind(10, 0x6161);
  provider_word(20, 0);
  bind(20, 0x6262);
  provider_word(30, 0); /* takes 10's: 20 was current later */
  bind(30, 0x6363);
  provider_word(20, 1);
  event(1);
  provider_word(30, 1);
  event(2);
  provider_word(10, 1);
  event(3);
  assert_int_equal(fxt_decoder_init(&g_dec, g_in.b, g_in.len, g_table), 0);
  assert_int_equal(add_tables(1), 0);
  expect_event(1, "bb", 20);
  expect_event(2, "cc", 30);
  assert_int_equal(g_more_given, 1); /* asked again for 30: none */
  snprintf(m, sizeof m, "offset %zu: thread ref 1 not defined", g_in.len - 16);
  expect_error(m);
}

static void test_api(void **state) {
  (void)state;
  struct fxt_record r;
  struct fxt_decoder_stats st;
  char err[10];
  const char *text;
  size_t len;
  uint64_t pid, tid;
  assert_int_equal(fxt_decoder_init(NULL, k_magic, 8, g_table), FXT_EINVAL);
  assert_int_equal(fxt_decoder_init(&g_dec, k_magic, 8, NULL), FXT_EINVAL);
  assert_int_equal(fxt_decoder_init(&g_dec, NULL, 8, g_table), FXT_EINVAL);
  assert_int_equal(fxt_decoder_next(NULL, &r, err, sizeof err), FXT_EINVAL);
  assert_string_equal(err, "invalid a"); /* truncated to the buffer, NUL-terminated */

  /* Unaligned input: the prefix one byte into a buffer. */
  static uint8_t shifted[PREFIX_BYTES + 1];
  tb_prefix(&g_in);
  memcpy(shifted + 1, g_in.b, PREFIX_BYTES);
  assert_int_equal(fxt_decoder_init(&g_dec, shifted + 1, PREFIX_BYTES, g_table), 0);
  assert_int_equal(fxt_decoder_set_options(&g_dec, 4), FXT_EINVAL);
  assert_int_equal(fxt_decoder_next(&g_dec, &r, err, sizeof err), 1);
  assert_int_equal(fxt_decoder_set_options(&g_dec, FXT_DECODE_NO_MAGIC), FXT_EINVAL);
  while (fxt_decoder_next(&g_dec, &r, err, sizeof err) == 1)
    continue;
  assert_int_equal(fxt_decoder_next(&g_dec, &r, NULL, 0), 0);
  fxt_decoder_stats(&g_dec, &st);
  assert_int_equal(st.records, PREFIX_RECORDS);
  assert_int_equal(st.bytes, PREFIX_BYTES);
  assert_int_equal(st.strings_bound, 5);
  assert_int_equal(st.threads_bound, 1);
  assert_int_equal(st.warnings, 0);
  assert_int_equal(fxt_decoder_string(&g_dec, 3, &text, &len), 0);
  assert_true(text_is(text, len, "arg"));
  assert_int_equal(fxt_decoder_string(&g_dec, 6, &text, &len), FXT_ENOENT);
  assert_int_equal(fxt_decoder_string(&g_dec, 0x8000, &text, &len), FXT_EINVAL);
  assert_int_equal(fxt_decoder_thread(&g_dec, 1, &pid, &tid), 0);
  assert_int_equal(pid, 100);
  assert_int_equal(tid, 101);
  assert_int_equal(fxt_decoder_thread(&g_dec, 2, &pid, &tid), FXT_ENOENT);
  assert_int_equal(fxt_decoder_thread(&g_dec, 0, &pid, &tid), FXT_EINVAL);
  assert_int_equal(fxt_decoder_thread(&g_dec, 256, &pid, &tid), FXT_EINVAL);

  /* Error messages are cut to err_size, and a NULL err is fine. */
  tb_reset(&g_in);
  assert_int_equal(fxt_decoder_init(&g_dec, g_in.b, 0, g_table), 0);
  assert_int_equal(fxt_decoder_next(&g_dec, &r, err, sizeof err), FXT_EBADMSG);
  assert_string_equal(err, "offset 0:");
  assert_int_equal(fxt_decoder_next(&g_dec, &r, NULL, 0), FXT_EBADMSG);
  assert_int_equal(fxt_decoder_next(&g_dec, &r, err, 1), FXT_EBADMSG);
  assert_string_equal(err, "");
}

FXT_TEST_MAIN(
    cmocka_unit_test(test_noncanonical_and_oversize), cmocka_unit_test(test_provider_tables),
    cmocka_unit_test(test_providers_interleaved), cmocka_unit_test(test_api))
