/* tests/unit/test_fxt_decode.c - the strict FXT decoder on malformed input.
 *
 * Every error test asserts the return code and the exact message, whose "offset N" is the
 * byte offset of the offending record or word. Inputs are hand-written words (see
 * fxt_test_util.h for the golden prefix: magic, strings 1..5, thread 1 = 112 bytes, so the
 * first record after it is at offset 112). Each malformed input is decoded from an
 * exact-size heap copy, so an out-of-bounds read fails under ASan. Flags, provider tables and
 * the API: test_fxt_decode_providers.c.
 */
#include "fxt_decode_test.h"
#include "../test_main.h"

/* ---- framing: truncation, sizes ---------------------------------------------------------- */

/* A valid file of 12 records cut at every byte length 0..N. */
static void test_truncated_at_every_length(void **state) {
  (void)state;
  static const uint64_t tail[] = {
      /* §9.5 duration complete, inline thread, 2 uint32 args (7 words) */
      UINT64_C(0x0002000100240074), 1000, 100, 101, UINT64_C(0x0000000700030012),
      UINT64_C(0x0000000900040012), 3000,
      /* §9.6 instant, inline name "hello" (3 words) */
      UINT64_C(0x8005000101000034), 1000, UINT64_C(0x0000006f6c6c6568),
      /* log, inline thread, "hello log" (6 words): 0x69 | length 9 << 16 */
      UINT64_C(0x0000000000090069), 8000, 100, 101, UINT64_C(0x6f6c206f6c6c6568), 0x67,
      /* large blob attachment, 9-byte payload (6 words): 15 | 6 << 4 | format 1 << 40 */
      UINT64_C(0x000001000000006f), UINT64_C(0x0000000000028003), UINT64_C(0x0000000000746163), 9,
      UINT64_C(0x0807060504030201), 9,
      /* large blob event, 0 args, indexed thread, 3-byte payload (5 words) */
      UINT64_C(0x000000000000005f), UINT64_C(0x0000001000020001), 9000, 3,
      UINT64_C(0x0000000000636261),
  };
  static const size_t sizes[] = {8, 16, 16, 16, 16, 16, 24, 56, 24, 48, 48, 40};
  const size_t nrec = sizeof sizes / sizeof sizes[0];
  tb_prefix(&g_in);
  tb_words(&g_in, tail, sizeof tail / 8);
  size_t total = 0;
  for (size_t i = 0; i < nrec; i++)
    total += sizes[i];
  assert_int_equal(g_in.len, total);

  struct tbuf cut;
  for (size_t len = 0; len <= total; len++) {
    char want[160];
    size_t start = 0, k = 0;
    while (k < nrec && start + sizes[k] <= len)
      start += sizes[k++];
    memcpy(cut.b, g_in.b, len);
    cut.len = len;
    if (len < 8) {
      snprintf(want, sizeof want, "offset 0: missing magic record: input is %zu bytes", len);
      decode_expect_error(&cut, 0, 0, FXT_EBADMSG, want);
      continue;
    }
    if (start == len) { /* cut at a record boundary: a valid, shorter file */
      struct fxt_record last;
      assert_int_equal(decode_all_ok(&cut, &g_dec, &last), (int)k);
      assert_int_equal(last.offset + last.size, len);
      continue;
    }
    size_t left = len - start;
    if (left < 8)
      snprintf(want, sizeof want, "offset %zu: truncated record header: %zu bytes left", start,
               left);
    else
      snprintf(want, sizeof want,
               "offset %zu: truncated record: size %zu words (%zu bytes), %zu bytes left", start,
               sizes[k] / 8, sizes[k], left);
    decode_expect_error(&cut, 0, (int)k, FXT_EBADMSG, want);
  }
}

static void test_size_zero(void **state) {
  (void)state;
  tb_reset(&g_in);
  tb_bytes(&g_in, k_magic, 8);
  tb_word(&g_in, 0x4); /* event, size 0 */
  decode_expect_error(&g_in, 0, 1, FXT_EBADMSG, "offset 8: record size 0 (type 4)");
  g_in.len = 8;
  tb_word(&g_in, 0xf); /* large record, 32-bit size 0 */
  decode_expect_error(&g_in, 0, 1, FXT_EBADMSG, "offset 8: record size 0 (type 15)");
  /* A small-size field of 0 with large-size bits set is still a large record's size. */
  g_in.len = 8;
  tb_word(&g_in, UINT64_C(0x000000000001000f)); /* [4..35] = 0x1000 words: truncated */
  decode_expect_error(&g_in, 0, 1, FXT_EBADMSG,
                      "offset 8: truncated record: size 4096 words (32768 bytes), 8 bytes left");
}

/* Declared sizes that disagree with the fields, for records and arguments. */
static void test_size_mismatch(void **state) {
  (void)state;
  char m[160];
  /* init declared 3 words (0x31), fields end after 2 */
  const uint64_t init3[] = {0x31, 1000000000, 0};
  expect_after_prefix(init3, 3, FXT_EBADMSG,
                      at_word(m, 0, "record declares 3 words but its fields end after 2"));
  /* thread declared 2 words (0x23): the thread koid is outside it */
  const uint64_t thread2[] = {UINT64_C(0x0000000000020023), 100, 101};
  expect_after_prefix(thread2, 3, FXT_EBADMSG,
                      at_word(m, 0, "thread koid runs past the declared record size (2 words)"));
  /* §9.5 declared 6 words: the trailer is outside */
  const uint64_t complete6[] = {UINT64_C(0x0002000100240064), 1000, 100, 101,
                                UINT64_C(0x0000000700030012), UINT64_C(0x0000000900040012), 3000};
  expect_after_prefix(complete6, 7, FXT_EBADMSG,
                      at_word(m, 0, "event trailer runs past the declared record size (6 words)"));
  /* string declared 1 word with a 3-byte text */
  const uint64_t str1[] = {UINT64_C(0x0000000300060012)};
  expect_after_prefix(str1, 1, FXT_EBADMSG,
                      at_word(m, 0, "string text runs past the declared record size (1 words)"));
  /* uint32 argument declared 2 words (0x22): one word unused */
  const uint64_t arg2[] = {UINT64_C(0x0002000101100044), 1, UINT64_C(0x0000000700030022), 0};
  expect_after_prefix(arg2, 4, FXT_EBADMSG,
                      at_word(m, 2, "argument 0 declares 2 words but its fields end after 1"));
  /* int64 argument declared 1 word (0x13): its value is outside it */
  const uint64_t arg1[] = {UINT64_C(0x0002000101100044), 1, UINT64_C(0x0000000000030013), 5};
  expect_after_prefix(
      arg1, 4, FXT_EBADMSG,
      at_word(m, 2, "argument value runs past the declared argument size (1 words)"));
  /* argument of size 0 */
  const uint64_t arg0[] = {UINT64_C(0x0002000101100034), 1, UINT64_C(0x0000000000030002)};
  expect_after_prefix(arg0, 3, FXT_EBADMSG, at_word(m, 2, "argument 0 has size 0"));
  /* argument of 3 words in a 3-word record */
  const uint64_t argbig[] = {UINT64_C(0x0002000101100034), 1, UINT64_C(0x0000000000030032), 0, 0};
  expect_after_prefix(
      argbig, 5, FXT_EBADMSG,
      at_word(m, 2, "argument 0 (3 words) runs past the declared record size (3 words)"));
  /* second argument header outside the record: event declares 1 arg... but count says 2 */
  const uint64_t args2[] = {UINT64_C(0x0002000101200034), 1, UINT64_C(0x0000000700030012)};
  expect_after_prefix(
      args2, 3, FXT_EBADMSG,
      at_word(m, 0, "argument header runs past the declared record size (3 words)"));
}

/* ---- reserved bits ------------------------------------------------------------------------ */

struct rsv_case {
  const char *what;
  uint64_t words[5];
  size_t n;
  size_t word;   /* which word carries the reserved bits */
  uint64_t mask; /* every reserved bit of that word */
};

static const struct rsv_case k_rsv[] = {
    /* string 6 "abc": [31], [47..63] */
    {"string record header", {UINT64_C(0x0000000300060022), 0x636261}, 2, 0,
     UINT64_C(0xffff800080000000)},
    /* thread 2: [24..63] */
    {"thread record header", {UINT64_C(0x0000000000020033), 1, 2}, 3, 0,
     UINT64_C(0xffffffffff000000)},
    /* initialization: [16..63] */
    {"initialization record header", {0x21, 1000}, 2, 0, UINT64_C(0xffffffffffff0000)},
    /* provider info "fxtrace": [60..63] */
    {"provider info header", {UINT64_C(0x0070000000110020), UINT64_C(0x0065636172747866)}, 2, 0,
     UINT64_C(0xf000000000000000)},
    /* provider section: [52..63] */
    {"provider section header", {UINT64_C(0x0000000000020010)}, 1, 0,
     UINT64_C(0xfff0000000000000)},
    /* provider event: [56..63] */
    {"provider event header", {UINT64_C(0x0000000000130010)}, 1, 0, UINT64_C(0xff00000000000000)},
    /* a second magic record: [56..63] */
    {"magic record", {UINT64_C(0x0016547846040010)}, 1, 0, UINT64_C(0xff00000000000000)},
    /* blob "blob!": [47], [56..63] */
    {"blob record header", {UINT64_C(0x0001000500020025), UINT64_C(0x00000021626f6c62)}, 2, 0,
     UINT64_C(0xff00800000000000)},
    /* userspace object, process 1, name 5: [44..63] */
    {"userspace object header", {UINT64_C(0x0000000005010026), 0x1000}, 2, 0,
     UINT64_C(0xfffff00000000000)},
    /* kernel object "proc": [44..63] */
    {"kernel object header", {UINT64_C(0x0000008004010037), 100, UINT64_C(0x00000000636f7270)}, 3,
     0, UINT64_C(0xfffff00000000000)},
    /* context switch, 0 args: [40..59] */
    {"context switch header", {UINT64_C(0x1000003000300048), 5000, 101, 102}, 4, 0,
     UINT64_C(0x0ffff00000000000)},
    /* wakeup: [36..59] */
    {"thread wakeup header", {UINT64_C(0x2000000123400038), 6000, 102}, 3, 0,
     UINT64_C(0x0ffffff000000000)},
    /* log, thread 1, empty: [31], [40..63] */
    {"log record header", {UINT64_C(0x0000000100000029), 8001}, 2, 0,
     UINT64_C(0xffffff0080000000)},
    /* large blob attachment, empty names and payload: header [44..63] */
    {"large blob header", {UINT64_C(0x000001000000003f), 0, 0}, 3, 0,
     UINT64_C(0xfffff00000000000)},
    /* ... its format header: [32..63] */
    {"large blob format header", {UINT64_C(0x000001000000003f), 0, 0}, 3, 1,
     UINT64_C(0xffffffff00000000)},
    /* large blob event, thread 1, no args: format header [44..63] */
    {"large blob format header", {UINT64_C(0x000000000000004f), UINT64_C(0x0000001000020001), 1, 0},
     4, 1, UINT64_C(0xfffff00000000000)},
    /* arguments, inside an instant event (thread 1, category 1, name 2) */
    {"argument header", {UINT64_C(0x0002000101100034), 1, UINT64_C(0x0000000000030010)}, 3, 2,
     UINT64_C(0xffffffff00000000)}, /* null: [32..63] */
    {"argument header", {UINT64_C(0x0002000101100044), 1, UINT64_C(0x0000000000030023), 7}, 4, 2,
     UINT64_C(0xffffffff00000000)}, /* int64 */
    {"argument header", {UINT64_C(0x0002000101100044), 1, UINT64_C(0x0000000000030024), 7}, 4, 2,
     UINT64_C(0xffffffff00000000)}, /* uint64 */
    {"argument header", {UINT64_C(0x0002000101100044), 1, UINT64_C(0x0000000000030025), 7}, 4, 2,
     UINT64_C(0xffffffff00000000)}, /* double */
    {"argument header", {UINT64_C(0x0002000101100044), 1, UINT64_C(0x0000000000030027), 7}, 4, 2,
     UINT64_C(0xffffffff00000000)}, /* pointer */
    {"argument header", {UINT64_C(0x0002000101100044), 1, UINT64_C(0x0000000000030028), 7}, 4, 2,
     UINT64_C(0xffffffff00000000)}, /* koid */
    {"argument header", {UINT64_C(0x0002000101100034), 1, UINT64_C(0x0000000500030016)}, 3, 2,
     UINT64_C(0xffff000000000000)}, /* string: [48..63] */
    {"bool argument header (value is bit 32 only)",
     {UINT64_C(0x0002000101100034), 1, UINT64_C(0x0000000100030019)}, 3, 2,
     UINT64_C(0xfffffffe00000000)}, /* bool: [33..63] */
};

/* Event headers and legacy context switch headers have no reserved bits. */
static void test_reserved_bits_every_position(void **state) {
  (void)state;
  size_t checked = 0;
  for (size_t i = 0; i < sizeof k_rsv / sizeof k_rsv[0]; i++) {
    const struct rsv_case *c = &k_rsv[i];
    after_prefix(c->words, c->n); /* unmodified: decodes cleanly */
    struct fxt_record last;
    assert_int_equal(decode_all_ok(&g_in, &g_dec, &last), PREFIX_RECORDS + 1);
    for (unsigned bit = 0; bit < 64; bit++) {
      uint64_t b = UINT64_C(1) << bit;
      if (!(c->mask & b))
        continue;
      uint64_t w[5];
      char tail[120], m[160];
      memcpy(w, c->words, sizeof w);
      w[c->word] |= b;
      snprintf(tail, sizeof tail, "reserved bits 0x%" PRIx64 " set in %s", b, c->what);
      expect_after_prefix(w, c->n, FXT_EBADMSG, at_word(m, c->word, tail));
      checked++;
    }
  }
  assert_true(checked > 400);
}

static void test_bool_value_bits(void **state) {
  (void)state;
  char m[160];
  /* value 2 (bit 33) and 0x1_0000_0001 (bits 32 and 0 of the value) */
  const uint64_t two[] = {UINT64_C(0x0002000101100034), 1, UINT64_C(0x0000000200030019)};
  expect_after_prefix(two, 3, FXT_EBADMSG,
                      at_word(m, 2, "reserved bits 0x200000000 set in bool argument header "
                                    "(value is bit 32 only)"));
  const uint64_t hi[] = {UINT64_C(0x0002000101100034), 1, UINT64_C(0x8000000100030019)};
  expect_after_prefix(hi, 3, FXT_EBADMSG,
                      at_word(m, 2, "reserved bits 0x8000000000000000 set in bool argument "
                                    "header (value is bit 32 only)"));
  const uint64_t f[] = {UINT64_C(0x0002000101100034), 1, UINT64_C(0x0000000000030019)};
  struct fxt_record last;
  after_prefix(f, 3);
  assert_int_equal(decode_all_ok(&g_in, &g_dec, &last), PREFIX_RECORDS + 1);
  assert_false(last.u.event.args[0].value.b);
}

/* ---- padding ------------------------------------------------------------------------------- */

struct pad_case {
  const char *what;
  uint64_t words[7];
  size_t n, word, first_pad; /* padded word, first padding byte in it */
};

static const struct pad_case k_pad[] = {
    {"string text", {UINT64_C(0x0000000300060022), 0x636261}, 2, 1, 3},
    {"event name", {UINT64_C(0x8005000101000034), 1000, UINT64_C(0x0000006f6c6c6568)}, 3, 2, 5},
    {"category", {UINT64_C(0x0002800101000034), 1, 0x63}, 3, 2, 1},
    {"argument name",
     {UINT64_C(0x0002000101100044), 1, UINT64_C(0x0000002a80050021), UINT64_C(0x000000746e756f63)},
     4, 3, 5},
    {"string argument value",
     {UINT64_C(0x0002000101100044), 1, UINT64_C(0x0000800100030026), 0x76}, 4, 3, 1},
    {"log message",
     {UINT64_C(0x0000000100090049), 1, UINT64_C(0x6f6c206f6c6c6568), 0x67}, 4, 3, 1},
    {"blob payload", {UINT64_C(0x0001000500020025), UINT64_C(0x00000021626f6c62)}, 2, 1, 5},
    {"provider name", {UINT64_C(0x0070000000110020), UINT64_C(0x0065636172747866)}, 2, 1, 7},
    {"blob payload",
     {UINT64_C(0x000001000000006f), UINT64_C(0x0000000000028003), 0x746163, 9,
      UINT64_C(0x0807060504030201), 9},
     6, 5, 1},
    {"category",
     {UINT64_C(0x000001000000006f), UINT64_C(0x0000000000028003), 0x746163, 9,
      UINT64_C(0x0807060504030201), 9},
     6, 2, 3},
};

static void test_padding_must_be_zero(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof k_pad / sizeof k_pad[0]; i++) {
    const struct pad_case *c = &k_pad[i];
    struct fxt_record last;
    after_prefix(c->words, c->n);
    assert_int_equal(decode_all_ok(&g_in, &g_dec, &last), PREFIX_RECORDS + 1);
    for (size_t byte = c->first_pad; byte < 8; byte++) {
      uint64_t w[7];
      char tail[80], m[160];
      memcpy(w, c->words, sizeof w);
      w[c->word] |= UINT64_C(0x80) << (8 * byte);
      snprintf(tail, sizeof tail, "non-zero padding byte after %s", c->what);
      expect_after_prefix(w, c->n, FXT_EBADMSG, at_word(m, c->word, tail));
    }
  }
}

/* ---- refs --------------------------------------------------------------------------------- */

static void test_undefined_refs(void **state) {
  (void)state;
  char m[160];
  const uint64_t cat7[] = {UINT64_C(0x0002000701000024), 1}; /* category 7 */
  expect_after_prefix(cat7, 2, FXT_EBADMSG, at_word(m, 0, "string ref 7 not defined"));
  const uint64_t thr5[] = {UINT64_C(0x0002000105000024), 1}; /* thread 5 */
  expect_after_prefix(thr5, 2, FXT_EBADMSG, at_word(m, 0, "thread ref 5 not defined"));
  const uint64_t name9[] = {UINT64_C(0x0002000101100034), 1, UINT64_C(0x0000000000090010)};
  expect_after_prefix(name9, 3, FXT_EBADMSG, at_word(m, 2, "string ref 9 not defined"));
  const uint64_t val8[] = {UINT64_C(0x0002000101100034), 1, UINT64_C(0x0000000800030016)};
  expect_after_prefix(val8, 3, FXT_EBADMSG, at_word(m, 2, "string ref 8 not defined"));
  /* large blob event: format header name 6 */
  const uint64_t lb[] = {UINT64_C(0x000000000000004f), UINT64_C(0x0000001000060001), 1, 0};
  expect_after_prefix(lb, 4, FXT_EBADMSG, at_word(m, 1, "string ref 6 not defined"));
  const uint64_t log2[] = {UINT64_C(0x0000000200000029), 1}; /* log thread 2 */
  expect_after_prefix(log2, 2, FXT_EBADMSG, at_word(m, 0, "thread ref 2 not defined"));
  const uint64_t kobj[] = {UINT64_C(0x0000007fff020027), 1}; /* kernel object name 0x7fff */
  expect_after_prefix(kobj, 2, FXT_EBADMSG, at_word(m, 0, "string ref 32767 not defined"));
  /* legacy context switch: out thread 1 (bound), in thread 9 */
  const uint64_t lcs[] = {UINT64_C(0x0000009010000028), 1};
  expect_after_prefix(lcs, 2, FXT_EBADMSG, at_word(m, 0, "thread ref 9 not defined"));
}

/* A string record re-binds its index for later records; earlier records keep their text. */
static void test_string_rebind(void **state) {
  (void)state;
  const uint64_t w[] = {
      UINT64_C(0x0002000101100034), 1, UINT64_C(0x0000000000030010), /* arg named 3 "arg" */
      UINT64_C(0x0000000300030022), 0x77656e,                       /* string 3 = "new" */
      UINT64_C(0x0002000101100034), 2, UINT64_C(0x0000000000030010), /* arg named 3 "new" */
  };
  struct fxt_record r;
  char err[128];
  after_prefix(w, 8);
  assert_int_equal(fxt_decoder_init(&g_dec, g_in.b, g_in.len, g_table), 0);
  for (unsigned i = 0; i < PREFIX_RECORDS; i++)
    assert_int_equal(fxt_decoder_next(&g_dec, &r, err, sizeof err), 1);
  assert_int_equal(fxt_decoder_next(&g_dec, &r, err, sizeof err), 1);
  struct fxt_str_ref first = r.u.event.args[0].name;
  assert_int_equal(fxt_decoder_next(&g_dec, &r, err, sizeof err), 1);
  assert_int_equal(fxt_decoder_next(&g_dec, &r, err, sizeof err), 1);
  assert_text(r.u.event.args[0].name, "new");
  assert_text(first, "arg");
  assert_int_equal(fxt_decoder_next(&g_dec, &r, err, sizeof err), 0);
}

/* §4.6: index 0 is returned flagged and never bound. */
static void test_string_index0_flagged_not_bound(void **state) {
  (void)state;
  static const uint8_t idx0[16] = {0x22, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, /* §9.2 */
                                   0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68};
  struct fxt_record r;
  struct fxt_decoder_stats st;
  char err[128];
  const char *text;
  size_t len;
  tb_reset(&g_in);
  tb_bytes(&g_in, k_magic, 8);
  tb_bytes(&g_in, idx0, 16);
  tb_word(&g_in, UINT64_C(0x0000000001000024)); /* instant, thread 1 (never bound), refs 0 */
  tb_word(&g_in, 1);
  assert_int_equal(fxt_decoder_init(&g_dec, g_in.b, g_in.len, g_table), 0);
  assert_int_equal(fxt_decoder_next(&g_dec, &r, err, sizeof err), 1);
  assert_int_equal(fxt_decoder_next(&g_dec, &r, err, sizeof err), 1);
  assert_int_equal(r.kind, FXT_KIND_STRING);
  assert_int_equal(r.flags, FXT_RECORD_WARN_STRING_INDEX0);
  assert_int_equal(r.u.string.index, 0);
  assert_true(text_is(r.u.string.data, r.u.string.len, "abcdefgh"));
  assert_int_equal(fxt_decoder_string(&g_dec, 0, &text, &len), 0);
  assert_int_equal(len, 0); /* still the empty string */
  fxt_decoder_stats(&g_dec, &st);
  assert_int_equal(st.strings_bound, 0);
  assert_int_equal(st.warnings, 1);
  assert_int_equal(fxt_decoder_next(&g_dec, &r, err, sizeof err), FXT_EBADMSG);
  assert_string_equal(err, "offset 24: thread ref 1 not defined");
  /* The encoder refuses to write it. */
  struct fxt_string s = {.index = 0, .len = 8, .data = "abcdefgh"};
  assert_int_equal(fxt_encode_string(NULL, 0, &s), FXT_EINVAL);
}

static void test_thread_index0_rejected(void **state) {
  (void)state;
  const uint64_t w[] = {0x33, 100, 101};
  expect_after_prefix(w, 3, FXT_EBADMSG, "offset 112: thread record with index 0");
}

/* ---- magic ------------------------------------------------------------------------------- */

static void test_magic_required(void **state) {
  (void)state;
  tb_reset(&g_in);
  decode_expect_error(&g_in, 0, 0, FXT_EBADMSG, "offset 0: missing magic record: input is 0 bytes");
  tb_bytes(&g_in, k_magic, 3);
  decode_expect_error(&g_in, 0, 0, FXT_EBADMSG, "offset 0: missing magic record: input is 3 bytes");
  tb_reset(&g_in);
  tb_bytes(&g_in, k_string1, 16);
  decode_expect_error(&g_in, 0, 0, FXT_EBADMSG,
                      "offset 0: missing magic record: first word is 0x800010022");
  /* Without the requirement the same input decodes. */
  struct fxt_record r;
  char err[128];
  assert_int_equal(fxt_decoder_init(&g_dec, g_in.b, g_in.len, g_table), 0);
  assert_int_equal(fxt_decoder_set_options(&g_dec, FXT_DECODE_NO_MAGIC), 0);
  assert_int_equal(fxt_decoder_next(&g_dec, &r, err, sizeof err), 1);
  assert_int_equal(r.kind, FXT_KIND_STRING);
  assert_int_equal(fxt_decoder_next(&g_dec, &r, err, sizeof err), 0);
  /* Empty input is a clean end without the requirement. */
  assert_int_equal(fxt_decoder_init(&g_dec, NULL, 0, g_table), 0);
  assert_int_equal(fxt_decoder_set_options(&g_dec, FXT_DECODE_NO_MAGIC), 0);
  assert_int_equal(fxt_decoder_next(&g_dec, &r, err, sizeof err), 0);

  char m[160];
  const uint64_t bad[] = {UINT64_C(0x0016547847040010)}; /* value 0x16547847 */
  expect_after_prefix(bad, 1, FXT_EBADMSG,
                      at_word(m, 0, "bad magic value 0x16547847 (expected 0x16547846)"));
  const uint64_t two[] = {UINT64_C(0x0016547846040020), 0}; /* size 2 */
  expect_after_prefix(two, 2, FXT_EBADMSG, at_word(m, 0, "magic record of 2 words (must be 1)"));
}

/* ---- unknown types ---------------------------------------------------------------------- */

static void test_unknown_types(void **state) {
  (void)state;
  static const struct {
    uint64_t w;
    const char *msg;
  } cases[] = {
      {UINT64_C(0x000000000000002c), "offset 112: unknown record type 12"},
      {UINT64_C(0x000000000000002a), "offset 112: unknown record type 10"},
      {UINT64_C(0x000000000000002e), "offset 112: unknown record type 14"},
      {UINT64_C(0x0000000000050020), "offset 112: unknown metadata type 5"},
      {UINT64_C(0x0000000000140020), "offset 112: unknown trace info type 1"},
      {UINT64_C(0x3000000000000028), "offset 112: unknown scheduling record type 3"},
      {UINT64_C(0x00000000000b0024), "offset 112: unknown event type 11"},
      {UINT64_C(0x000000100000002f), "offset 112: unknown large record type 1"},
      {UINT64_C(0x000002000000002f), "offset 112: unknown large blob format 2"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const uint64_t w[] = {cases[i].w, UINT64_C(0xffffffffffffffff), 0x21, 5};
    /* strict: rejected */
    expect_after_prefix(w, 2, FXT_ENOSYS, cases[i].msg);
    /* FXT_DECODE_SKIP_UNKNOWN: skipped by its size (2 words), then the init record */
    struct fxt_record r;
    char err[128];
    after_prefix(w, 4);
    assert_int_equal(fxt_decoder_init(&g_dec, g_in.b, g_in.len, g_table), 0);
    assert_int_equal(fxt_decoder_set_options(&g_dec, FXT_DECODE_SKIP_UNKNOWN), 0);
    for (unsigned k = 0; k < PREFIX_RECORDS; k++)
      assert_int_equal(fxt_decoder_next(&g_dec, &r, err, sizeof err), 1);
    assert_int_equal(fxt_decoder_next(&g_dec, &r, err, sizeof err), 1);
    assert_int_equal(r.kind, FXT_KIND_UNKNOWN);
    assert_int_equal(r.size, 16);
    assert_ptr_equal(r.u.unknown.data, g_in.b + PREFIX_BYTES);
    assert_int_equal(fxt_encode_record(NULL, 0, &r), FXT_EINVAL);
    assert_int_equal(fxt_decoder_next(&g_dec, &r, err, sizeof err), 1);
    assert_int_equal(r.kind, FXT_KIND_INIT);
    assert_int_equal(r.u.init.ticks_per_second, 5);
    assert_int_equal(fxt_decoder_next(&g_dec, &r, err, sizeof err), 0);
  }
  /* An unknown argument type cannot be skipped, even with FXT_DECODE_SKIP_UNKNOWN. */
  const uint64_t a[] = {UINT64_C(0x0002000101100034), 1, UINT64_C(0x000000000003001b)};
  after_prefix(a, 3);
  decode_expect_error(&g_in, FXT_DECODE_SKIP_UNKNOWN, PREFIX_RECORDS, FXT_ENOSYS,
                      "offset 128: argument 0 has unknown type 11");
}

/* ---- garbage ------------------------------------------------------------------------------ */

static void test_garbage(void **state) {
  (void)state;
  tb_reset(&g_in);
  tb_bytes(&g_in, k_magic, 8);
  tb_word(&g_in, UINT64_MAX);
  tb_word(&g_in, UINT64_MAX);
  /* type 15, 32-bit size 0xffffffff words */
  decode_expect_error(&g_in, 0, 1, FXT_EBADMSG,
                      "offset 8: truncated record: size 4294967295 words (34359738360 bytes), "
                      "16 bytes left");
  tb_reset(&g_in);
  tb_bytes(&g_in, "\x7f" "ELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00", 16);
  decode_expect_error(&g_in, 0, 0, FXT_EBADMSG,
                      "offset 0: missing magic record: first word is 0x10102464c457f");

  /* Random inputs, half of them after a valid prefix: the decoder must stop on every one,
   * in at most one step per word, with 0 or an error naming an offset inside the input. */
  uint64_t seed = 0x9e3779b97f4a7c15u;
  for (int iter = 0; iter < 20000; iter++) {
    struct tbuf *t = &g_in;
    seed = seed * 6364136223846793005u + 1442695040888963407u;
    size_t n = (size_t)(seed >> 33) % 200;
    if (iter & 1)
      tb_prefix(t);
    else
      tb_reset(t);
    for (size_t i = 0; i < n; i++) {
      seed = seed * 6364136223846793005u + 1442695040888963407u;
      uint8_t byte = (uint8_t)(seed >> 56);
      if ((iter & 2) && (i & 7) >= 2) /* mostly-zero words look more like records */
        byte = 0;
      tb_bytes(t, &byte, 1);
    }
    uint8_t *copy = malloc(t->len ? t->len : 1);
    memcpy(copy, t->b, t->len);
    struct fxt_record r;
    char err[FXT_DECODER_MSG_SIZE];
    int rc;
    size_t steps = 0;
    assert_int_equal(fxt_decoder_init(&g_dec, copy, t->len, g_table), 0);
    assert_int_equal(fxt_decoder_set_options(&g_dec, (uint32_t)(iter >> 2) & 3u), 0);
    while ((rc = fxt_decoder_next(&g_dec, &r, err, sizeof err)) == 1) {
      assert_true(r.offset + r.size <= t->len);
      assert_true(++steps <= t->len / 8);
    }
    if (rc < 0) {
      unsigned long long off;
      assert_true(rc == FXT_EBADMSG || rc == FXT_ENOSYS);
      assert_int_equal(sscanf(err, "offset %llu: ", &off), 1);
      assert_true(off < t->len || (off == 0 && t->len < 8));
      assert_true(strlen(err) > strlen("offset 0: "));
    }
    free(copy);
  }
}

FXT_TEST_MAIN(
    cmocka_unit_test(test_truncated_at_every_length), cmocka_unit_test(test_size_zero),
    cmocka_unit_test(test_size_mismatch), cmocka_unit_test(test_reserved_bits_every_position),
    cmocka_unit_test(test_bool_value_bits), cmocka_unit_test(test_padding_must_be_zero),
    cmocka_unit_test(test_undefined_refs), cmocka_unit_test(test_string_rebind),
    cmocka_unit_test(test_string_index0_flagged_not_bound),
    cmocka_unit_test(test_thread_index0_rejected), cmocka_unit_test(test_magic_required),
    cmocka_unit_test(test_unknown_types), cmocka_unit_test(test_garbage))
