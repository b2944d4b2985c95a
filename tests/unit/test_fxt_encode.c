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
 * prefix (magic, strings 1..5, thread 1) and re-encodes what was decoded (check_record,
 * fxt_encode_test.h). Blobs, objects, scheduling, logs and refused inputs:
 * test_fxt_encode_objects.c.
 */
#include "fxt_encode_test.h"
#include "../test_main.h"

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

FXT_TEST_MAIN(
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
    cmocka_unit_test(test_args_spec_bytes))
