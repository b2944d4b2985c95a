/* tests/unit/test_fxt_encode.c - FXT encoders against golden words, and back through the
 * decoder.
 *
 * Every golden word below was worked out by hand from the tables of spec/fxt.md and is
 * commented field by field ([a..b] = bits a to b, both inclusive). The spec §9 examples are
 * copied as bytes from the spec text. Nothing here is produced by running the encoder.
 *
 * Each record test: asks the encoder for the size (out == NULL), encodes into a buffer
 * pre-filled with 0xAA (so padding that is not written as zero shows), compares with the
 * golden bytes, checks FXT_ENOBUFS one byte short, decodes the golden bytes after a golden
 * prefix (magic, strings 1..5, thread 1) and re-encodes what was decoded.
 */
#include "fxt_test_util.h"

static struct tbuf g_file;
static struct fxt_decoder g_dec;
static struct fxt_record g_out;

/* The prefix's strings: 1 "abcdefgh", 2 "name", 3 "arg", 4 "n4", 5 "value"; thread 1 =
 * (100, 101). */

static const struct fxt_record *check_record(const struct fxt_record *in, const void *golden,
                                             size_t len) {
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

static const struct fxt_record *check_words(const struct fxt_record *in, const uint64_t *words,
                                            size_t n) {
  return check_record(in, words, n * 8);
}

/* ---- metadata -------------------------------------------------------------------------- */

static void test_magic(void **state) {
  (void)state;
  struct fxt_record in = {.kind = FXT_KIND_MAGIC};
  check_record(&in, k_magic, sizeof k_magic); /* §9.1 */
  uint64_t w = 0;
  assert_int_equal(fxt_encode_magic(&w, 8), 8);
  assert_true(w == FXT_MAGIC_WORD);
  assert_int_equal(fxt_encode_magic(&w, 7), FXT_ENOBUFS);
}

static void test_provider_info(void **state) {
  (void)state;
  static const uint64_t golden[] = {
      /* [0..3] 0 metadata | [4..15] 2 words -> 0x020 | [16..19] 1 provider info -> 0x1_0000
       * | [20..51] id 1 -> 0x10_0000 | [52..59] name length 7 -> 0x0070_0000_0000_0000 */
      UINT64_C(0x0070000000110020),
      UINT64_C(0x0065636172747866), /* "fxtrace" = 66 78 74 72 61 63 65 + one zero pad byte */
  };
  struct fxt_record in = {.kind = FXT_KIND_PROVIDER_INFO};
  in.u.provider_info = (struct fxt_provider_info){.id = 1, .name_len = 7, .name = "fxtrace"};
  const struct fxt_record *r = check_words(&in, golden, 2);
  assert_int_equal(r->u.provider_info.id, 1);
  assert_true(text_is(r->u.provider_info.name, r->u.provider_info.name_len, "fxtrace"));
}

static void test_provider_section_and_event(void **state) {
  (void)state;
  /* [4..15] 1 word -> 0x10 | [16..19] 2 section -> 0x2_0000 | [20..51] 0x12345678 ->
   * 0x0001_2345_6780_0000 */
  static const uint64_t section[] = {UINT64_C(0x0001234567820010)};
  struct fxt_record in = {.kind = FXT_KIND_PROVIDER_SECTION};
  in.u.provider_section.id = 0x12345678;
  assert_int_equal(check_words(&in, section, 1)->u.provider_section.id, 0x12345678);

  /* 0x10 | [16..19] 3 event -> 0x3_0000 | [20..51] provider 7 -> 0x70_0000 | [52..55] event
   * id 1 -> 0x0010_0000_0000_0000 */
  static const uint64_t event[] = {UINT64_C(0x0010000000730010)};
  in.kind = FXT_KIND_PROVIDER_EVENT;
  in.u.provider_event = (struct fxt_provider_event){.id = 7, .event_id = 1};
  const struct fxt_record *r = check_words(&in, event, 1);
  assert_int_equal(r->u.provider_event.id, 7);
  assert_int_equal(r->u.provider_event.event_id, 1);
}

/* ---- initialization, string, thread ------------------------------------------------------ */

static void test_init(void **state) {
  (void)state;
  /* §9.4: type 1, size 2; then 1e9 = 0x3b9aca00 */
  static const uint8_t golden[] = {0x21, 0, 0, 0, 0, 0, 0, 0, 0x00, 0xca, 0x9a, 0x3b, 0, 0, 0, 0};
  struct fxt_record in = {.kind = FXT_KIND_INIT};
  in.u.init.ticks_per_second = 1000000000;
  assert_true(check_record(&in, golden, sizeof golden)->u.init.ticks_per_second == 1000000000);
}

static void test_string_spec(void **state) {
  (void)state;
  struct fxt_record in = {.kind = FXT_KIND_STRING};
  in.u.string = (struct fxt_string){.index = 1, .len = 8, .data = "abcdefgh"};
  /* §9.2, index-1 form: 16 bytes, no NUL after the 8-byte text. */
  const struct fxt_record *r = check_record(&in, k_string1, sizeof k_string1);
  assert_int_equal(r->u.string.index, 1);
  assert_true(text_is(r->u.string.data, r->u.string.len, "abcdefgh"));
}

static void test_string_padding(void **state) {
  (void)state;
  static const uint64_t golden[] = {
      /* type 2 | size 2 -> 0x22 | [16..30] index 0x7fff -> 0x7fff_0000 | [32..46] length 3 */
      UINT64_C(0x000000037fff0022),
      UINT64_C(0x0000000000636261), /* "abc" + five zero bytes (the buffer held 0xAA) */
  };
  struct fxt_record in = {.kind = FXT_KIND_STRING};
  in.u.string = (struct fxt_string){.index = 0x7fff, .len = 3, .data = "abc"};
  assert_int_equal(check_words(&in, golden, 2)->u.string.index, 0x7fff);
}

static void test_thread(void **state) {
  (void)state;
  struct fxt_record in = {.kind = FXT_KIND_THREAD};
  in.u.thread = (struct fxt_thread){.index = 1, .process_koid = 100, .thread_koid = 101};
  const struct fxt_record *r = check_record(&in, k_thread1, sizeof k_thread1); /* §9.3 */
  assert_int_equal(r->u.thread.process_koid, 100);
  assert_int_equal(r->u.thread.thread_koid, 101);
}

/* ---- events -------------------------------------------------------------------------------- */

static struct fxt_arg arg_u32(uint16_t name, uint32_t v) {
  struct fxt_arg a = {.type = FXT_ARG_UINT32, .name = fxt_str_index(name)};
  a.value.u32 = v;
  return a;
}

static void test_event_duration_complete_spec(void **state) {
  (void)state;
  /* §9.5, byte for byte: 7 words, 56 bytes. */
  static const uint8_t golden[56] = {
      0x74, 0x00, 0x24, 0x00, 0x01, 0x00, 0x02, 0x00, /* type 4, size 7, complete, 2 args,
                                                          thread 0, category 1, name 2 */
      0xe8, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* start 1000 */
      0x64, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* process koid 100 */
      0x65, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* thread koid 101 */
      0x12, 0x00, 0x03, 0x00, 0x07, 0x00, 0x00, 0x00, /* uint32, size 1, name 3, 7 */
      0x12, 0x00, 0x04, 0x00, 0x09, 0x00, 0x00, 0x00, /* uint32, size 1, name 4, 9 */
      0xb8, 0x0b, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* end 3000 */
  };
  struct fxt_record in = {.kind = FXT_KIND_EVENT};
  struct fxt_event *ev = &in.u.event;
  ev->type = FXT_EVENT_DURATION_COMPLETE;
  ev->timestamp = 1000;
  ev->thread = fxt_thread_inline(100, 101);
  ev->category = fxt_str_index(1);
  ev->name = fxt_str_index(2);
  ev->num_args = 2;
  ev->args[0] = arg_u32(3, 7);
  ev->args[1] = arg_u32(4, 9);
  ev->trailer = 3000;
  const struct fxt_record *r = check_record(&in, golden, sizeof golden);
  const struct fxt_event *o = &r->u.event;
  assert_int_equal(o->type, FXT_EVENT_DURATION_COMPLETE);
  assert_int_equal(o->timestamp, 1000);
  assert_int_equal(o->trailer, 3000);
  assert_int_equal(o->thread.index, 0);
  assert_int_equal(o->thread.process_koid, 100);
  assert_int_equal(o->thread.thread_koid, 101);
  assert_text(o->category, "abcdefgh");
  assert_text(o->name, "name");
  assert_int_equal(o->num_args, 2);
  assert_text(o->args[0].name, "arg");
  assert_int_equal(o->args[0].value.u32, 7);
  assert_text(o->args[1].name, "n4");
  assert_int_equal(o->args[1].value.u32, 9);

  /* §9.5: "with thread ref != 0 the same event is 5 words". */
  static const uint64_t indexed[] = {
      /* type 4 | size 5 -> 0x54 | [16..19] 4 | [20..23] 2 args -> 0x24_0000 | [24..31]
       * thread 1 -> 0x0100_0000 | [32..47] category 1 | [48..63] name 2 */
      UINT64_C(0x0002000101240054), 1000, UINT64_C(0x0000000700030012),
      UINT64_C(0x0000000900040012), 3000,
  };
  ev->thread = fxt_thread_index(1);
  r = check_words(&in, indexed, 5);
  assert_int_equal(r->u.event.thread.index, 1);
  assert_int_equal(r->u.event.thread.process_koid, 100); /* resolved from thread 1 */
  assert_int_equal(r->u.event.thread.thread_koid, 101);
}

static void test_event_instant_inline_name_spec(void **state) {
  (void)state;
  /* §9.6, byte for byte. */
  static const uint8_t golden[24] = {
      0x34, 0x00, 0x00, 0x01, 0x01, 0x00, 0x05, 0x80, /* type 4, size 3, instant, 0 args,
                                                          thread 1, category 1, name 0x8005 */
      0xe8, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* timestamp 1000 */
      0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0x00, 0x00, /* "hello" + 3 zero bytes */
  };
  struct fxt_record in = {.kind = FXT_KIND_EVENT};
  in.u.event = (struct fxt_event){.type = FXT_EVENT_INSTANT, .timestamp = 1000};
  in.u.event.thread = fxt_thread_index(1);
  in.u.event.category = fxt_str_index(1);
  in.u.event.name = fxt_str_inline("hello", 5);
  const struct fxt_record *r = check_record(&in, golden, sizeof golden);
  assert_int_equal(r->u.event.name.index, FXT_STR_REF_INLINE);
  assert_text(r->u.event.name, "hello");
}

/* Event types and their trailers (§8.3): one word for counter, complete, async, flow. */
static void test_event_trailers(void **state) {
  (void)state;
  struct fxt_record in = {.kind = FXT_KIND_EVENT};
  struct fxt_event *ev = &in.u.event;
  ev->thread = fxt_thread_index(1);
  ev->category = fxt_str_index(1);
  ev->name = fxt_str_index(2);
  ev->timestamp = 2000;

  /* Counter: type 4 | size 5 -> 0x54 | [16..19] 1 counter | [20..23] 1 arg -> 0x11_0000 |
   * thread 1 | category 1 | name 2. Arg: int64 [0..3] 3 | size 2 -> 0x23 | name 3; -2.
   * Trailer: counter id 9. */
  static const uint64_t counter[] = {UINT64_C(0x0002000101110054), 2000,
                                     UINT64_C(0x0000000000030023), UINT64_C(0xfffffffffffffffe),
                                     9};
  ev->type = FXT_EVENT_COUNTER;
  ev->num_args = 1;
  ev->args[0] = (struct fxt_arg){.type = FXT_ARG_INT64, .name = fxt_str_index(3)};
  ev->args[0].value.i64 = -2;
  ev->trailer = 9;
  const struct fxt_record *r = check_words(&in, counter, 5);
  assert_int_equal(r->u.event.trailer, 9);
  assert_int_equal(r->u.event.args[0].value.i64, -2);

  /* Async begin: size 3 -> 0x34 | [16..19] 5 | 0 args | thread 1 | category 1 | name 2;
   * trailer correlation id 0xabc. */
  static const uint64_t async_begin[] = {UINT64_C(0x0002000101050034), 2000, 0xabc};
  ev->type = FXT_EVENT_ASYNC_BEGIN;
  ev->num_args = 0;
  ev->trailer = 0xabc;
  assert_int_equal(check_words(&in, async_begin, 3)->u.event.trailer, 0xabc);

  /* Flow end: [16..19] 10 -> 0xa_0000; flow id 0xabc. */
  static const uint64_t flow_end[] = {UINT64_C(0x00020001010a0034), 2000, 0xabc};
  ev->type = FXT_EVENT_FLOW_END;
  check_words(&in, flow_end, 3);

  /* Duration begin and end carry no trailer: size 2 -> 0x24; [16..19] 2 and 3. */
  static const uint64_t begin[] = {UINT64_C(0x0002000101020024), 2000};
  static const uint64_t end[] = {UINT64_C(0x0002000101030024), 2000};
  ev->type = FXT_EVENT_DURATION_BEGIN;
  ev->trailer = 77; /* ignored: not written */
  assert_int_equal(check_words(&in, begin, 2)->u.event.trailer, 0);
  ev->type = FXT_EVENT_DURATION_END;
  check_words(&in, end, 2);
}

static void test_event_all_inline(void **state) {
  (void)state;
  static const uint64_t golden[] = {
      /* type 4 | size 8 -> 0x84 | [16..19] 0 instant | [20..23] 1 arg -> 0x10_0000 |
       * [24..31] thread 0 (inline) | [32..47] 0x8001 ("c") | [48..63] 0x8001 ("n") */
      UINT64_C(0x8001800100100084),
      5,                            /* timestamp */
      100,                          /* process koid */
      101,                          /* thread koid */
      UINT64_C(0x0000000000000063), /* category stream "c" */
      UINT64_C(0x000000000000006e), /* name stream "n" */
      /* null arg: [0..3] 0 | [4..15] size 2 -> 0x20 | [16..31] name 0x8001 */
      UINT64_C(0x0000000080010020),
      UINT64_C(0x000000000000007a), /* arg name stream "z" */
  };
  struct fxt_record in = {.kind = FXT_KIND_EVENT};
  struct fxt_event *ev = &in.u.event;
  ev->type = FXT_EVENT_INSTANT;
  ev->timestamp = 5;
  ev->thread = fxt_thread_inline(100, 101);
  ev->category = fxt_str_inline("c", 1);
  ev->name = fxt_str_inline("n", 1);
  ev->num_args = 1;
  ev->args[0] = (struct fxt_arg){.type = FXT_ARG_NULL, .name = fxt_str_inline("z", 1)};
  const struct fxt_record *r = check_words(&in, golden, 8);
  assert_text(r->u.event.category, "c");
  assert_text(r->u.event.name, "n");
  assert_text(r->u.event.args[0].name, "z");
}

/* An empty inline string is written as ref 0, never as 0x8000 (§5.1). */
static void test_event_empty_inline_is_ref0(void **state) {
  (void)state;
  /* type 4 | size 2 -> 0x24 | instant | thread 1 -> 0x0100_0000 | category 1 | name 0 */
  static const uint64_t golden[] = {UINT64_C(0x0000000101000024), 1};
  struct fxt_record in = {.kind = FXT_KIND_EVENT};
  in.u.event = (struct fxt_event){.type = FXT_EVENT_INSTANT, .timestamp = 1};
  in.u.event.thread = fxt_thread_index(1);
  in.u.event.category = fxt_str_index(1);
  in.u.event.name = fxt_str_inline("ignored", 0);
  const struct fxt_record *r = check_words(&in, golden, 2);
  assert_int_equal(r->u.event.name.index, 0);
  assert_int_equal(r->u.event.name.len, 0);
}

/* ---- arguments ------------------------------------------------------------------------------ */

struct arg_case {
  const char *what;
  struct fxt_arg arg;
  uint64_t words[3];
  size_t nwords;
};

static struct arg_case make_case(const char *what, uint32_t type, struct fxt_str_ref name,
                                 uint64_t w0, uint64_t w1, uint64_t w2, size_t n) {
  struct arg_case c = {.what = what, .arg = {.type = type, .name = name}, .nwords = n};
  c.words[0] = w0;
  c.words[1] = w1;
  c.words[2] = w2;
  return c;
}

/* Golden argument words for every encodable type 0..9, name index 3 ("arg") unless said. */
static size_t arg_cases(struct arg_case *c) {
  size_t n = 0;
  struct fxt_str_ref n3 = fxt_str_index(3);
  /* [0..3] 0 null | [4..15] size 1 -> 0x10 | [16..31] name 3 */
  c[n++] = make_case("null", FXT_ARG_NULL, n3, UINT64_C(0x0000000000030010), 0, 0, 1);
  /* §9.7: int32 -5: 0x11 | name 3 | [32..63] 0xfffffffb */
  c[n] = make_case("int32", FXT_ARG_INT32, n3, UINT64_C(0xfffffffb00030011), 0, 0, 1);
  c[n++].arg.value.i32 = -5;
  /* uint32: 0x12 | name 3 | [32..63] 0xdeadbeef */
  c[n] = make_case("uint32", FXT_ARG_UINT32, n3, UINT64_C(0xdeadbeef00030012), 0, 0, 1);
  c[n++].arg.value.u32 = 0xdeadbeef;
  /* §9.7: int64 -2: [0..3] 3 | size 2 -> 0x23 | name 3; value word */
  c[n] = make_case("int64", FXT_ARG_INT64, n3, UINT64_C(0x0000000000030023),
                   UINT64_C(0xfffffffffffffffe), 0, 2);
  c[n++].arg.value.i64 = -2;
  /* uint64: 0x24 | name 3; value word */
  c[n] = make_case("uint64", FXT_ARG_UINT64, n3, UINT64_C(0x0000000000030024),
                   UINT64_C(0x1122334455667788), 0, 2);
  c[n++].arg.value.u64 = UINT64_C(0x1122334455667788);
  /* §9.7: double 1.5 = 0x3ff8000000000000: 0x25 | name 3 */
  c[n] = make_case("double", FXT_ARG_DOUBLE, n3, UINT64_C(0x0000000000030025),
                   UINT64_C(0x3ff8000000000000), 0, 2);
  c[n++].arg.value.f64 = 1.5;
  /* string, indexed value 5: [0..3] 6 | size 1 -> 0x16 | name 3 | [32..47] 5 */
  c[n] = make_case("string indexed", FXT_ARG_STRING, n3, UINT64_C(0x0000000500030016), 0, 0, 1);
  c[n++].arg.value.str = fxt_str_index(5);
  /* §9.7: string, inline name "k", inline value "v": 0x36 | [16..31] 0x8001 | [32..47]
   * 0x8001; then "k", then "v" */
  c[n] = make_case("string inline", FXT_ARG_STRING, fxt_str_inline("k", 1),
                   UINT64_C(0x0000800180010036), 0x6b, 0x76, 3);
  c[n++].arg.value.str = fxt_str_inline("v", 1);
  /* pointer: [0..3] 7 | size 2 -> 0x27 | name 3; value word */
  c[n] = make_case("pointer", FXT_ARG_POINTER, n3, UINT64_C(0x0000000000030027),
                   UINT64_C(0xffff8000deadbeef), 0, 2);
  c[n++].arg.value.pointer = UINT64_C(0xffff8000deadbeef);
  /* koid: [0..3] 8 | size 2 -> 0x28 | name 3; 4242 = 0x1092 */
  c[n] = make_case("koid", FXT_ARG_KOID, n3, UINT64_C(0x0000000000030028), 0x1092, 0, 2);
  c[n++].arg.value.koid = 4242;
  /* §9.7: bool true: [0..3] 9 | size 1 -> 0x19 | name 3 | [32] 1 */
  c[n] = make_case("bool true", FXT_ARG_BOOL, n3, UINT64_C(0x0000000100030019), 0, 0, 1);
  c[n++].arg.value.b = true;
  /* bool false: [32] 0 */
  c[n] = make_case("bool false", FXT_ARG_BOOL, n3, UINT64_C(0x0000000000030019), 0, 0, 1);
  c[n++].arg.value.b = false;
  /* int32 42 with inline name "count": 0x21 (size 2) | [16..31] 0x8005 | [32..63] 42;
   * then "count" = 63 6f 75 6e 74 + 3 zero bytes */
  c[n] = make_case("int32 inline name", FXT_ARG_INT32, fxt_str_inline("count", 5),
                   UINT64_C(0x0000002a80050021), UINT64_C(0x000000746e756f63), 0, 2);
  c[n++].arg.value.i32 = 42;
  return n;
}

static void expect_same_value(const struct fxt_arg *got, const struct fxt_arg *want) {
  assert_int_equal(got->type, want->type);
  switch (want->type) {
  case FXT_ARG_INT32:
    assert_int_equal(got->value.i32, want->value.i32);
    break;
  case FXT_ARG_UINT32:
    assert_int_equal(got->value.u32, want->value.u32);
    break;
  case FXT_ARG_INT64:
    assert_true(got->value.i64 == want->value.i64);
    break;
  case FXT_ARG_DOUBLE:
    assert_true(got->value.f64 == want->value.f64);
    break;
  case FXT_ARG_STRING:
    assert_int_equal(got->value.str.index, want->value.str.index);
    break;
  case FXT_ARG_BOOL:
    assert_int_equal(got->value.b, want->value.b);
    break;
  case FXT_ARG_UINT64:
  case FXT_ARG_POINTER:
  case FXT_ARG_KOID:
    assert_true(got->value.u64 == want->value.u64);
    break;
  default:
    break;
  }
}

static void test_args_every_type(void **state) {
  (void)state;
  struct arg_case cases[16];
  size_t n = arg_cases(cases);
  for (size_t i = 0; i < n; i++) {
    const struct arg_case *c = &cases[i];
    uint8_t out[64];
    print_message("argument: %s\n", c->what);
    assert_int_equal(fxt_arg_size(&c->arg), (int64_t)(c->nwords * 8));
    memset(out, 0xAA, sizeof out);
    assert_int_equal(fxt_encode_arg(out, sizeof out, &c->arg), (int64_t)(c->nwords * 8));
    expect_bytes(out, c->nwords * 8, c->words, c->nwords * 8);
    assert_int_equal(fxt_encode_arg(out, c->nwords * 8 - 1, &c->arg), FXT_ENOBUFS);

    /* Inside an instant event: type 4 | size (2 + arg words) << 4 | [20..23] 1 arg |
     * thread 1 | category 1 | name 2. */
    uint64_t golden[8] = {UINT64_C(0x0002000101100004) | ((2 + c->nwords) << 4), 1};
    memcpy(&golden[2], c->words, c->nwords * 8);
    struct fxt_record in = {.kind = FXT_KIND_EVENT};
    in.u.event = (struct fxt_event){.type = FXT_EVENT_INSTANT, .timestamp = 1, .num_args = 1};
    in.u.event.thread = fxt_thread_index(1);
    in.u.event.category = fxt_str_index(1);
    in.u.event.name = fxt_str_index(2);
    in.u.event.args[0] = c->arg;
    const struct fxt_record *r = check_words(&in, golden, 2 + c->nwords);
    const struct fxt_arg *got = &r->u.event.args[0];
    expect_same_value(got, &c->arg);
    /* Names and string values come back resolved: index 3 is "arg", index 5 "value". */
    if (c->arg.name.index == 3)
      assert_text(got->name, "arg");
    else
      assert_true(text_is(got->name.data, got->name.len, c->arg.name.data) ||
                  (got->name.len == 5 && memcmp(got->name.data, "count", 5) == 0));
    if (c->arg.type == FXT_ARG_STRING)
      assert_text(got->value.str, c->arg.value.str.index == 5 ? "value" : "v");
  }
}

static void test_args_spec_bytes(void **state) {
  (void)state;
  /* §9.7, copied byte for byte from the spec's table. */
  static const uint8_t i32[] = {0x11, 0x00, 0x03, 0x00, 0xfb, 0xff, 0xff, 0xff};
  static const uint8_t b[] = {0x19, 0x00, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00};
  static const uint8_t i64[] = {0x23, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00,
                                0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  static const uint8_t dbl[] = {0x25, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00,
                                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf8, 0x3f};
  static const uint8_t str[] = {0x36, 0x00, 0x01, 0x80, 0x01, 0x80, 0x00, 0x00,
                                0x6b, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                0x76, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  struct fxt_arg a = {.type = FXT_ARG_INT32, .name = fxt_str_index(3)};
  uint8_t out[32];
  a.value.i32 = -5;
  assert_int_equal(fxt_encode_arg(out, sizeof out, &a), 8);
  expect_bytes(out, 8, i32, sizeof i32);
  a.type = FXT_ARG_BOOL;
  a.value.b = true;
  assert_int_equal(fxt_encode_arg(out, sizeof out, &a), 8);
  expect_bytes(out, 8, b, sizeof b);
  a.type = FXT_ARG_INT64;
  a.value.i64 = -2;
  assert_int_equal(fxt_encode_arg(out, sizeof out, &a), 16);
  expect_bytes(out, 16, i64, sizeof i64);
  a.type = FXT_ARG_DOUBLE;
  a.value.f64 = 1.5;
  assert_int_equal(fxt_encode_arg(out, sizeof out, &a), 16);
  expect_bytes(out, 16, dbl, sizeof dbl);
  a.type = FXT_ARG_STRING;
  a.name = fxt_str_inline("k", 1);
  a.value.str = fxt_str_inline("v", 1);
  assert_int_equal(fxt_encode_arg(out, sizeof out, &a), 24);
  expect_bytes(out, 24, str, sizeof str);
}

/* ---- blob, objects ------------------------------------------------------------------------ */

static void test_blob(void **state) {
  (void)state;
  /* type 5 | size 2 -> 0x25 | [16..31] name 2 | [32..46] 5 bytes | [48..55] type 1 (data) */
  static const uint64_t golden[] = {UINT64_C(0x0001000500020025),
                                    UINT64_C(0x00000021626f6c62)}; /* "blob!" + 3 zeros */
  struct fxt_record in = {.kind = FXT_KIND_BLOB};
  in.u.blob = (struct fxt_blob){.name = fxt_str_index(2), .blob_type = FXT_BLOB_DATA,
                                .size = 5, .data = "blob!"};
  const struct fxt_record *r = check_words(&in, golden, 2);
  assert_text(r->u.blob.name, "name");
  assert_int_equal(r->u.blob.size, 5);
  assert_memory_equal(r->u.blob.data, "blob!", 5);

  /* size 3 -> 0x35 | name 0x8002 ("nm") | [32..46] 8 | [48..55] 3 (perfetto); name stream;
   * 8 payload bytes, no padding */
  static const uint64_t golden2[] = {UINT64_C(0x0003000880020035), UINT64_C(0x0000000000006d6e),
                                     UINT64_C(0x0807060504030201)};
  static const uint8_t payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  in.u.blob = (struct fxt_blob){.name = fxt_str_inline("nm", 2), .blob_type = FXT_BLOB_PERFETTO,
                                .size = 8, .data = payload};
  assert_int_equal(check_words(&in, golden2, 3)->u.blob.blob_type, FXT_BLOB_PERFETTO);
}

static void test_userspace_object(void **state) {
  (void)state;
  static const uint64_t golden[] = {
      /* type 6 | size 5 -> 0x56 | [16..23] process 0 (inline) | [24..39] name 0x8003 ->
       * 0x80_0300_0000 | [40..43] 1 arg -> 0x100_0000_0000 */
      UINT64_C(0x0000018003000056),
      UINT64_C(0x000000007fff0000), /* pointer */
      100,                          /* process koid: one word only */
      UINT64_C(0x00000000006a626f), /* "obj" */
      UINT64_C(0x0000000700030012), /* uint32 arg, name 3, value 7 */
  };
  struct fxt_record in = {.kind = FXT_KIND_USERSPACE_OBJECT};
  struct fxt_userspace_object *o = &in.u.userspace_object;
  o->pointer = 0x7fff0000;
  o->process = fxt_thread_inline(100, 999); /* thread koid is not stored */
  o->name = fxt_str_inline("obj", 3);
  o->num_args = 1;
  o->args[0] = arg_u32(3, 7);
  const struct fxt_record *r = check_words(&in, golden, 5);
  assert_int_equal(r->u.userspace_object.process.process_koid, 100);
  assert_int_equal(r->u.userspace_object.process.thread_koid, 0);
  assert_text(r->u.userspace_object.name, "obj");

  /* Indexed process: size 2 -> 0x26 | [16..23] thread 1 -> 0x1_0000 | [24..39] name 5 ->
   * 0x500_0000 | 0 args */
  static const uint64_t indexed[] = {UINT64_C(0x0000000005010026), UINT64_C(0x1000)};
  o->pointer = 0x1000;
  o->process = fxt_thread_index(1);
  o->name = fxt_str_index(5);
  o->num_args = 0;
  r = check_words(&in, indexed, 2);
  assert_int_equal(r->u.userspace_object.process.process_koid, 100);
}

static void test_kernel_object(void **state) {
  (void)state;
  static const uint64_t golden[] = {
      /* type 7 | size 4 -> 0x47 | [16..23] 2 thread -> 0x2_0000 | [24..39] name 2 ->
       * 0x200_0000 | [40..43] 1 arg -> 0x100_0000_0000 */
      UINT64_C(0x0000010002020047),
      1234,                         /* koid */
      UINT64_C(0x0000000000030028), /* koid arg: [0..3] 8 | size 2 | name 3 */
      100,                          /* its value: the process */
  };
  struct fxt_record in = {.kind = FXT_KIND_KERNEL_OBJECT};
  struct fxt_kernel_object *o = &in.u.kernel_object;
  o->koid = 1234;
  o->obj_type = FXT_KOBJ_THREAD;
  o->name = fxt_str_index(2);
  o->num_args = 1;
  o->args[0] = (struct fxt_arg){.type = FXT_ARG_KOID, .name = fxt_str_index(3)};
  o->args[0].value.koid = 100;
  const struct fxt_record *r = check_words(&in, golden, 4);
  assert_int_equal(r->u.kernel_object.obj_type, FXT_KOBJ_THREAD);
  assert_int_equal(r->u.kernel_object.args[0].value.koid, 100);

  /* Process named inline: size 3 -> 0x37 | [16..23] 1 process | [24..39] 0x8004 -> 0x80_0400_0000 */
  static const uint64_t process[] = {UINT64_C(0x0000008004010037), 100,
                                     UINT64_C(0x00000000636f7270)}; /* "proc" */
  o->koid = 100;
  o->obj_type = FXT_KOBJ_PROCESS;
  o->name = fxt_str_inline("proc", 4);
  o->num_args = 0;
  assert_text(check_words(&in, process, 3)->u.kernel_object.name, "proc");
}

/* ---- scheduling, log ---------------------------------------------------------------------- */

static void test_context_switch(void **state) {
  (void)state;
  static const uint64_t golden[] = {
      /* type 8 | size 5 -> 0x58 | [16..19] 1 arg -> 0x1_0000 | [20..35] cpu 3 -> 0x30_0000 |
       * [36..39] state 3 blocked -> 0x30_0000_0000 | [60..63] 1 -> 0x1000_0000_0000_0000 */
      UINT64_C(0x1000003000310058),
      5000, /* timestamp */
      101,  /* outgoing thread koid */
      102,  /* incoming thread koid */
      UINT64_C(0xffffffff00030011), /* int32 arg, name 3, -1 */
  };
  struct fxt_record in = {.kind = FXT_KIND_CONTEXT_SWITCH};
  struct fxt_context_switch *s = &in.u.context_switch;
  s->timestamp = 5000;
  s->cpu = 3;
  s->outgoing_state = FXT_THREAD_STATE_BLOCKED;
  s->outgoing_tid = 101;
  s->incoming_tid = 102;
  s->num_args = 1;
  s->args[0] = (struct fxt_arg){.type = FXT_ARG_INT32, .name = fxt_str_index(3)};
  s->args[0].value.i32 = -1;
  const struct fxt_record *r = check_words(&in, golden, 5);
  assert_int_equal(r->u.context_switch.cpu, 3);
  assert_int_equal(r->u.context_switch.outgoing_state, 3);
  assert_int_equal(r->u.context_switch.incoming_tid, 102);
}

static void test_wakeup(void **state) {
  (void)state;
  /* type 8 | size 3 -> 0x38 | 0 args | [20..35] cpu 0x1234 -> 0x1_2340_0000 | [60..63] 2 */
  static const uint64_t golden[] = {UINT64_C(0x2000000123400038), 6000, 102};
  struct fxt_record in = {.kind = FXT_KIND_WAKEUP};
  in.u.wakeup = (struct fxt_wakeup){.timestamp = 6000, .cpu = 0x1234, .waking_tid = 102};
  const struct fxt_record *r = check_words(&in, golden, 3);
  assert_int_equal(r->u.wakeup.cpu, 0x1234);
  assert_int_equal(r->u.wakeup.waking_tid, 102);
}

static void test_legacy_context_switch(void **state) {
  (void)state;
  static const uint64_t golden[] = {
      /* type 8 | size 4 -> 0x48 | [16..23] cpu 2 -> 0x2_0000 | [24..27] state 2 ->
       * 0x200_0000 | [28..35] out thread 1 -> 0x1000_0000 | [36..43] in thread 0 (inline) |
       * [44..51] out prio 20 -> 0x0001_4000_0000_0000 | [52..59] in prio 30 ->
       * 0x01e0_0000_0000_0000 | [60..63] 0 */
      UINT64_C(0x01e1400012020048),
      7000, /* timestamp */
      100,  /* incoming process koid (outgoing is indexed: no koids) */
      102,  /* incoming thread koid */
  };
  struct fxt_record in = {.kind = FXT_KIND_LEGACY_CONTEXT_SWITCH};
  struct fxt_legacy_context_switch *s = &in.u.legacy_context_switch;
  s->timestamp = 7000;
  s->cpu = 2;
  s->outgoing_state = FXT_THREAD_STATE_SUSPENDED;
  s->outgoing = fxt_thread_index(1);
  s->incoming = fxt_thread_inline(100, 102);
  s->outgoing_priority = 20;
  s->incoming_priority = 30;
  const struct fxt_record *r = check_words(&in, golden, 4);
  assert_int_equal(r->u.legacy_context_switch.outgoing.thread_koid, 101);
  assert_int_equal(r->u.legacy_context_switch.incoming.thread_koid, 102);
  assert_int_equal(r->u.legacy_context_switch.incoming_priority, 30);
}

static void test_log(void **state) {
  (void)state;
  static const uint64_t golden[] = {
      /* type 9 | size 6 -> 0x69 | [16..30] length 9 -> 0x9_0000 | [32..39] thread 0 */
      UINT64_C(0x0000000000090069),
      8000,                         /* timestamp */
      100,                          /* process koid */
      101,                          /* thread koid */
      UINT64_C(0x6f6c206f6c6c6568), /* "hello lo" */
      UINT64_C(0x0000000000000067), /* "g" + 7 zero bytes */
  };
  struct fxt_record in = {.kind = FXT_KIND_LOG};
  in.u.log = (struct fxt_log){.timestamp = 8000, .len = 9, .message = "hello log"};
  in.u.log.thread = fxt_thread_inline(100, 101);
  const struct fxt_record *r = check_words(&in, golden, 6);
  assert_true(text_is(r->u.log.message, r->u.log.len, "hello log"));

  /* Indexed thread, empty message: size 2 -> 0x29 | length 0 | [32..39] thread 1 */
  static const uint64_t empty[] = {UINT64_C(0x0000000100000029), 8001};
  in.u.log = (struct fxt_log){.timestamp = 8001, .len = 0, .message = NULL};
  in.u.log.thread = fxt_thread_index(1);
  assert_int_equal(check_words(&in, empty, 2)->u.log.len, 0);
}

/* ---- large blobs -------------------------------------------------------------------------- */

static void test_large_blob_event(void **state) {
  (void)state;
  static const uint64_t golden[] = {
      /* [0..3] 15 | [4..35] size 6 -> 0x60 | [36..39] 0 large blob | [40..43] format 0 */
      UINT64_C(0x000000000000006f),
      /* format header: [0..15] category 1 | [16..31] name 2 | [32..35] 1 arg | [36..43]
       * thread 1 -> 0x10_0000_0000 */
      UINT64_C(0x0000001100020001),
      9000,                         /* timestamp (thread indexed: no koids) */
      UINT64_C(0x0000000700030012), /* uint32 arg, name 3, 7 */
      3,                            /* blob size */
      UINT64_C(0x0000000000636261), /* "abc" */
  };
  struct fxt_record in = {.kind = FXT_KIND_LARGE_BLOB_EVENT};
  struct fxt_large_blob_event *b = &in.u.large_blob_event;
  b->category = fxt_str_index(1);
  b->name = fxt_str_index(2);
  b->timestamp = 9000;
  b->thread = fxt_thread_index(1);
  b->num_args = 1;
  b->args[0] = arg_u32(3, 7);
  b->size = 3;
  b->data = "abc";
  const struct fxt_record *r = check_words(&in, golden, 6);
  assert_int_equal(r->u.large_blob_event.size, 3);
  assert_memory_equal(r->u.large_blob_event.data, "abc", 3);
  assert_int_equal(r->u.large_blob_event.thread.thread_koid, 101);
}

static void test_large_blob_attachment(void **state) {
  (void)state;
  static const uint64_t golden[] = {
      /* 15 | size 6 -> 0x60 | [36..39] 0 | [40..43] format 1 -> 0x100_0000_0000 */
      UINT64_C(0x000001000000006f),
      /* [0..15] category 0x8003 ("cat") | [16..31] name 2 */
      UINT64_C(0x0000000000028003),
      UINT64_C(0x0000000000746163), /* "cat" */
      9,                            /* blob size */
      UINT64_C(0x0807060504030201), /* payload bytes 1..8 */
      UINT64_C(0x0000000000000009), /* payload byte 9 + 7 zero bytes */
  };
  static const uint8_t payload[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  struct fxt_record in = {.kind = FXT_KIND_LARGE_BLOB_ATTACHMENT};
  in.u.large_blob_attachment = (struct fxt_large_blob_attachment){
      .category = fxt_str_inline("cat", 3), .name = fxt_str_index(2), .size = 9, .data = payload};
  const struct fxt_record *r = check_words(&in, golden, 6);
  assert_text(r->u.large_blob_attachment.category, "cat");
  assert_text(r->u.large_blob_attachment.name, "name");
}

/* ---- errors ---------------------------------------------------------------------------- */

static void test_invalid_inputs(void **state) {
  (void)state;
  uint8_t out[256];
  struct fxt_string s = {.index = 0, .len = 1, .data = "x"};
  assert_int_equal(fxt_encode_string(out, sizeof out, &s), FXT_EINVAL); /* index 0 */
  s.index = 0x8000;
  assert_int_equal(fxt_encode_string(out, sizeof out, &s), FXT_EINVAL); /* index > 0x7fff */
  s.index = 1;
  s.data = NULL;
  assert_int_equal(fxt_encode_string(out, sizeof out, &s), FXT_EINVAL); /* NULL text */
  s = (struct fxt_string){.index = 1, .len = 0x8000, .data = "x"};
  assert_int_equal(fxt_encode_string(NULL, 0, &s), FXT_EINVAL); /* length > 15 bits */

  struct fxt_thread t = {.index = 0, .process_koid = 1, .thread_koid = 2};
  assert_int_equal(fxt_encode_thread(out, sizeof out, &t), FXT_EINVAL);

  struct fxt_event ev = {.type = FXT_EVENT_INSTANT};
  ev.thread = fxt_thread_index(1);
  ev.name = fxt_str_index(0x8001); /* neither an index nor the inline marker */
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_EINVAL);
  ev.name = fxt_str_index(0xffff);
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_EINVAL);
  static char big[32001];
  ev.name = fxt_str_inline(big, 32001); /* over Fuchsia's 32000-byte limit */
  assert_int_equal(fxt_encode_event(NULL, 0, &ev), FXT_EINVAL);
  ev.name = fxt_str_inline(big, 32000);
  assert_int_equal(fxt_encode_event(NULL, 0, &ev), 16 + 32000);
  ev.name = fxt_str_inline(NULL, 3);
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_EINVAL);
  ev.name = fxt_str_index(2);
  ev.type = 11;
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_EINVAL);
  ev.type = FXT_EVENT_INSTANT;
  ev.num_args = 16;
  for (int i = 0; i < 15; i++)
    ev.args[i] = arg_u32(3, 1);
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_EINVAL);
  ev.num_args = 15;
  assert_int_equal(fxt_encode_event(NULL, 0, &ev), 16 + 15 * 8);
  ev.args[14].name = fxt_str_index(0); /* empty argument name */
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_EINVAL);
  ev.args[14].name = fxt_str_inline("", 0);
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_EINVAL);
  ev.args[14] = arg_u32(3, 1);
  ev.args[14].type = FXT_ARG_BLOB; /* decode-only */
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_EINVAL);
  ev.args[14].type = 11;
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_EINVAL);
  ev.args[14] = (struct fxt_arg){.type = FXT_ARG_STRING, .name = fxt_str_index(3)};
  ev.args[14].value.str = fxt_str_index(0x9000);
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_EINVAL);

  struct fxt_arg blob = {.type = FXT_ARG_BLOB, .name = fxt_str_index(3)};
  assert_int_equal(fxt_arg_size(&blob), FXT_EINVAL);
  assert_int_equal(fxt_encode_arg(out, sizeof out, &blob), FXT_EINVAL);

  struct fxt_provider_event pe = {.id = 1, .event_id = 16};
  assert_int_equal(fxt_encode_provider_event(out, sizeof out, &pe), FXT_EINVAL);
  struct fxt_context_switch cs = {.outgoing_state = 16};
  assert_int_equal(fxt_encode_context_switch(out, sizeof out, &cs), FXT_EINVAL);
  struct fxt_legacy_context_switch lcs = {.outgoing_state = 16};
  assert_int_equal(fxt_encode_legacy_context_switch(out, sizeof out, &lcs), FXT_EINVAL);
  struct fxt_blob bl = {.size = 0x8000, .data = big};
  assert_int_equal(fxt_encode_blob(out, sizeof out, &bl), FXT_EINVAL);
  struct fxt_log lg = {.len = 0x8000, .message = big};
  assert_int_equal(fxt_encode_log(out, sizeof out, &lg), FXT_EINVAL);
  struct fxt_provider_info pi = {.id = 1, .name_len = 3, .name = NULL};
  assert_int_equal(fxt_encode_provider_info(out, sizeof out, &pi), FXT_EINVAL);

  struct fxt_record rec = {.kind = FXT_KIND_UNKNOWN};
  assert_int_equal(fxt_encode_record(out, sizeof out, &rec), FXT_EINVAL);
  rec.kind = 0;
  assert_int_equal(fxt_encode_record(out, sizeof out, &rec), FXT_EINVAL);
  assert_int_equal(fxt_encode_record(out, sizeof out, NULL), FXT_EINVAL);
  assert_int_equal(fxt_encode_event(out, sizeof out, NULL), FXT_EINVAL);
}

/* Records are limited to 4095 words (32760 bytes), large blobs included. */
static void test_record_size_limits(void **state) {
  (void)state;
  static char text[40000];
  static uint8_t out[FXT_MAX_RECORD_BYTES];
  /* String record: 1 header word + words(len). 32752 bytes -> 4095 words: fits exactly. */
  struct fxt_string s = {.index = 9, .len = 32752, .data = text};
  assert_int_equal(fxt_encode_string(out, sizeof out, &s), FXT_MAX_RECORD_BYTES);
  s.len = 32753; /* 4096 words */
  assert_int_equal(fxt_encode_string(NULL, 0, &s), FXT_E2BIG);
  s.len = 0x7fff;
  assert_int_equal(fxt_encode_string(out, sizeof out, &s), FXT_E2BIG);

  /* Attachment: header, format header, size word + words(payload): 32736 bytes -> 4095. */
  struct fxt_large_blob_attachment a = {.size = 32736, .data = text};
  assert_int_equal(fxt_encode_large_blob_attachment(NULL, 0, &a), FXT_MAX_RECORD_BYTES);
  a.size = 32737;
  assert_int_equal(fxt_encode_large_blob_attachment(NULL, 0, &a), FXT_E2BIG);
  a.size = UINT64_C(1) << 40; /* no overflow in the size arithmetic */
  assert_int_equal(fxt_encode_large_blob_attachment(NULL, 0, &a), FXT_E2BIG);
  a.size = UINT64_MAX;
  assert_int_equal(fxt_encode_large_blob_attachment(NULL, 0, &a), FXT_E2BIG);
  struct fxt_large_blob_event le = {.size = UINT64_MAX, .data = text};
  assert_int_equal(fxt_encode_large_blob_event(NULL, 0, &le), FXT_E2BIG);

  /* An argument alone over 4095 words: header + 32000-byte name (4000) + 800-byte value. */
  struct fxt_arg arg = {.type = FXT_ARG_STRING, .name = fxt_str_inline(text, 32000)};
  arg.value.str = fxt_str_inline(text, 800);
  assert_int_equal(fxt_arg_size(&arg), FXT_E2BIG);
  arg.value.str = fxt_str_inline(text, 752); /* 1 + 4000 + 94 = 4095 words */
  assert_int_equal(fxt_arg_size(&arg), FXT_MAX_RECORD_BYTES);

  /* An event whose arguments fit one by one but not together. */
  struct fxt_event ev = {.type = FXT_EVENT_INSTANT, .num_args = 15};
  ev.thread = fxt_thread_index(1);
  for (int i = 0; i < 15; i++) {
    ev.args[i] = (struct fxt_arg){.type = FXT_ARG_STRING, .name = fxt_str_index(3)};
    ev.args[i].value.str = fxt_str_inline(text, 2200); /* 1 + 275 words each */
  }
  assert_int_equal(fxt_encode_event(NULL, 0, &ev), FXT_E2BIG);
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_E2BIG);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_magic),
      cmocka_unit_test(test_provider_info),
      cmocka_unit_test(test_provider_section_and_event),
      cmocka_unit_test(test_init),
      cmocka_unit_test(test_string_spec),
      cmocka_unit_test(test_string_padding),
      cmocka_unit_test(test_thread),
      cmocka_unit_test(test_event_duration_complete_spec),
      cmocka_unit_test(test_event_instant_inline_name_spec),
      cmocka_unit_test(test_event_trailers),
      cmocka_unit_test(test_event_all_inline),
      cmocka_unit_test(test_event_empty_inline_is_ref0),
      cmocka_unit_test(test_args_every_type),
      cmocka_unit_test(test_args_spec_bytes),
      cmocka_unit_test(test_blob),
      cmocka_unit_test(test_userspace_object),
      cmocka_unit_test(test_kernel_object),
      cmocka_unit_test(test_context_switch),
      cmocka_unit_test(test_wakeup),
      cmocka_unit_test(test_legacy_context_switch),
      cmocka_unit_test(test_log),
      cmocka_unit_test(test_large_blob_event),
      cmocka_unit_test(test_large_blob_attachment),
      cmocka_unit_test(test_invalid_inputs),
      cmocka_unit_test(test_record_size_limits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
