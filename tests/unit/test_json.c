/* tests/unit/test_json.c - the Chrome JSON exporter (src/formats/json.h) on FXT files built here
 * record by record with the codec's encoders: every event type, printk (by category and by
 * description), logs, names, two providers that bind the same string and thread indices to
 * different things, losses of every kind, cpu records, strings that need escaping or are not
 * UTF-8, 64-bit numbers beyond 2^53, doubles, errors and streaming. Expected JSON is written
 * by hand (timestamps worked out in the comments), never produced by the code under test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "../test_main.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/fxtfile.h"
#include "formats/json.h"
#include "formats/json_int.h"

/* ---- building files --------------------------------------------------------------------- */

#define FXB_BYTES (16u << 20)
#include "fxt_build.h"

/* A tracepoint description without fields. */
static void desc(uint32_t id, uint16_t sys, uint16_t name, uint16_t kind) {
  uint8_t p[16] = {0};
  memcpy(p, &id, 4);
  memcpy(p + 4, &sys, 2);
  memcpy(p + 6, &name, 2);
  memcpy(p + 8, &kind, 2);
  struct fxt_blob b = {sref(FXT_STR_TRACEPOINT), FXT_BLOB_DATA, sizeof p, p};
  emit(fxt_encode_blob(ROOM, &b));
}

/* ---- converting ----------------------------------------------------------------------------- */

struct sink {
  struct fxt_tbuf out;
  size_t calls;
  int fail_at_call; /* 0: never */
};

static int sink_write(void *ctx, const void *data, size_t n) {
  struct sink *s = ctx;
  if (++s->calls == (size_t)s->fail_at_call)
    return -5; /* -EIO */
  fxt_tbuf_put(&s->out, data, n);
  return 0;
}

static int convert(uint32_t flags, struct sink *s, struct fxt_json_stats *st, char *err) {
  memset(s, 0, sizeof *s);
  fxt_tbuf_init(&s->out);
  struct fxt_json_options o = {flags, sink_write, s, NULL, NULL, NULL, 0};
  return fxt_json_convert(g_buf, g_len, &o, st, err, 256);
}

#define HEAD "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"

/* The whole output for these events (joined with ",\n") and counts. */
static void expect_json(uint32_t flags, const char *const *events, size_t n,
                        const struct fxt_json_stats *want) {
  struct sink s;
  struct fxt_json_stats st;
  char err[256];
  int rc = convert(flags, &s, &st, err);
  if (rc != 0)
    fail_msg("convert: %d %s", rc, err);
  struct fxt_tbuf w;
  fxt_tbuf_init(&w);
  fxt_tbuf_puts(&w, HEAD);
  for (size_t i = 0; i < n; i++) {
    fxt_tbuf_puts(&w, events[i]);
    fxt_tbuf_puts(&w, i + 1 < n ? ",\n" : "\n");
  }
  char tail[600];
  snprintf(tail, sizeof tail,
           "],\n\"otherData\":{\"source\":\"fxtrace convert --to json\",\"records\":%zu,"
           "\"events\":%llu,\"lost_counters\":%llu,\"lost_records\":%llu,\"cpu_counters\":%llu,"
           "\"unmatched_begin\":%llu,\"unmatched_end\":%llu,\"paired\":%llu,"
           "\"flows_bound\":%llu,\"logs\":%llu,\"metadata\":%llu,"
           "\"skipped_records\":%llu,\"providers\":%u}}\n",
           g_records, (unsigned long long)want->events, (unsigned long long)want->lost_counters,
           (unsigned long long)want->lost_records, (unsigned long long)want->cpu_counters,
           (unsigned long long)want->unmatched_begin, (unsigned long long)want->unmatched_end,
           (unsigned long long)want->paired, (unsigned long long)want->flows_bound,
           (unsigned long long)want->logs, (unsigned long long)want->metadata,
           (unsigned long long)want->skipped, want->providers);
  fxt_tbuf_puts(&w, tail);
  const char *got = fxt_tbuf_str(&s.out), *exp = fxt_tbuf_str(&w);
  if (strcmp(got, exp) != 0) {
    size_t i = 0;
    while (got[i] && got[i] == exp[i])
      i++;
    fail_msg("JSON differs at byte %zu:\n got: %.200s\nwant: %.200s", i, got + i, exp + i);
  }
  assert_int_equal(st.records, g_records);
  assert_int_equal(st.bytes, s.out.len);
  assert_int_equal(st.paired, want->paired);
  assert_int_equal(st.flows_bound, want->flows_bound);
  fxt_tbuf_free(&w);
  fxt_tbuf_free(&s.out);
}

/* ---- every event type --------------------------------------------------------------------- */

enum { S_DEMO = 32, S_WORK, S_SEQ, S_Q, S_LOAD, S_IO, S_REQ, S_MSG, S_DEPTH, S_PRINTK, S_GOT,
       S_A0, S_TICK };

/* Provider 100 at 1e9 ticks/s with one clock sync, ticks 1000 -> 5 s: ticks 1000 + k are at
 * 5e9 + k ns, "ts" 5000000.<k in 3 digits>. */
#define T(k) (1000 + (uint64_t)(k))

static void build_every_type(void) {
  struct fxt_thread_ref t1 = fxt_thread_index(1), t102 = fxt_thread_inline(100, 102);
  file_start(100, 1000000000);
  string(S_DEMO, "demo"), string(S_WORK, "work"), string(S_SEQ, "seq"), string(S_Q, "q");
  string(S_LOAD, "load"), string(S_IO, "io"), string(S_REQ, "req"), string(S_MSG, "msg");
  string(S_DEPTH, "depth"), string(S_PRINTK, "printk"), string(S_GOT, "got %d\n");
  string(S_A0, "a0"), string(S_TICK, "tick %u");
  kobj(FXT_KOBJ_PROCESS, 100, "procA", 0);
  clock_sync(100, T(0), 5000000000u);
  desc(7, S_DEMO, S_TICK, FXT_TP_PRINTK); /* a printk event outside system printk */
  thread(1, 100, 101);
  kobj(FXT_KOBJ_THREAD, 101, "alpha", 100);
  kobj(FXT_KOBJ_THREAD, 102, "beta", 100);

  struct fxt_event e = event(FXT_EVENT_INSTANT, t1, sref(S_DEMO), sref(S_WORK), T(10));
  arg(&e, FXT_ARG_UINT64, sref(S_SEQ))->value.u64 = 1;
  put(&e);
  e = event(FXT_EVENT_COUNTER, t1, sref(S_DEMO), sref(S_Q), T(20));
  arg(&e, FXT_ARG_UINT32, sref(S_DEPTH))->value.u32 = 3;
  put(&e);
  e = event(FXT_EVENT_COUNTER, t1, sref(S_DEMO), sref(S_Q), T(21));
  e.trailer = 7;
  arg(&e, FXT_ARG_INT64, sref(S_DEPTH))->value.i64 = -4;
  arg(&e, FXT_ARG_STRING, sref(S_SEQ))->value.str = inl("not a number");
  arg(&e, FXT_ARG_DOUBLE, inl("ratio"))->value.f64 = 0.5;
  arg(&e, FXT_ARG_BOOL, inl("on"))->value.b = true;
  put(&e);
  e = event(FXT_EVENT_DURATION_BEGIN, t1, sref(S_DEMO), sref(S_LOAD), T(30));
  put(&e);
  e = event(FXT_EVENT_DURATION_END, t1, sref(S_DEMO), sref(S_LOAD), T(1030));
  arg(&e, FXT_ARG_UINT32, sref(S_SEQ))->value.u32 = 2;
  put(&e);
  e = event(FXT_EVENT_DURATION_COMPLETE, t1, sref(S_DEMO), sref(S_IO), T(40));
  e.trailer = T(2540); /* 2.5 us */
  put(&e);
  e.timestamp = T(45), e.trailer = T(44); /* ends before it starts: 0 */
  put(&e);
  e = event(FXT_EVENT_ASYNC_BEGIN, t1, sref(S_DEMO), sref(S_REQ), T(50));
  e.trailer = 0x2a;
  put(&e);
  e.type = FXT_EVENT_ASYNC_INSTANT, e.timestamp = T(51);
  arg(&e, FXT_ARG_INT32, sref(S_SEQ))->value.i32 = -1;
  put(&e);
  e.type = FXT_EVENT_ASYNC_END, e.timestamp = T(52), e.num_args = 0;
  put(&e);
  e = event(FXT_EVENT_FLOW_BEGIN, t1, sref(S_DEMO), sref(S_MSG), T(60));
  e.trailer = 0xabc;
  put(&e);
  e.type = FXT_EVENT_FLOW_STEP, e.timestamp = T(61);
  put(&e);
  e.type = FXT_EVENT_FLOW_END, e.timestamp = T(62);
  put(&e);
  e = event(FXT_EVENT_INSTANT, t102, sref(S_PRINTK), sref(S_GOT), T(70));
  arg(&e, FXT_ARG_INT32, sref(S_A0))->value.i32 = 5;
  put(&e);
  e = event(FXT_EVENT_INSTANT, t102, sref(S_DEMO), sref(S_TICK), T(71));
  arg(&e, FXT_ARG_UINT32, sref(S_A0))->value.u32 = 9;
  put(&e);
  e = event(FXT_EVENT_INSTANT, t102, sref(S_PRINTK), inl("%s"), T(72)); /* renders as "" */
  arg(&e, FXT_ARG_STRING, sref(S_A0))->value.str = inl("");
  put(&e);
  static const char msg[] = "hello \"log\"\n";
  struct fxt_log l = {T(80), t1, (uint16_t)strlen(msg), msg};
  emit(fxt_encode_log(ROOM, &l));
  clock_sync(100, T(1000), 5000001000u);
}

static void test_every_event_type(void **state) {
  (void)state;
  build_every_type();
  const char *const want[] = {
      "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":100,\"tid\":100,"
      "\"args\":{\"name\":\"procA\"}}",
      "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":100,\"tid\":101,"
      "\"args\":{\"name\":\"alpha\"}}",
      "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":100,\"tid\":102,"
      "\"args\":{\"name\":\"beta\"}}",
      "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"demo\",\"name\":\"work\",\"pid\":100,\"tid\":101,"
      "\"ts\":5000000.010,\"args\":{\"seq\":1}}",
      "{\"ph\":\"C\",\"cat\":\"demo\",\"name\":\"q\",\"pid\":100,\"tid\":101,"
      "\"ts\":5000000.020,\"args\":{\"depth\":3}}",
      /* counter id 7: named "q (7)"; the string series is left out, the bool is 1 */
      "{\"ph\":\"C\",\"cat\":\"demo\",\"name\":\"q (7)\",\"pid\":100,\"tid\":101,"
      "\"ts\":5000000.021,\"args\":{\"depth\":-4,\"ratio\":0.5,\"on\":1}}",
      /* a begin/end pair: one complete event at the begin, with the end's arguments */
      "{\"ph\":\"X\",\"cat\":\"demo\",\"name\":\"load\",\"pid\":100,\"tid\":101,"
      "\"ts\":5000000.030,\"dur\":1.000,\"args\":{\"seq\":2},\"fxt_be\":1}",
      "{\"ph\":\"X\",\"cat\":\"demo\",\"name\":\"io\",\"pid\":100,\"tid\":101,"
      "\"ts\":5000000.040,\"dur\":2.500}",
      /* the flow's events (.060, .061, .062) at the start of the innermost slice of their
       * thread that encloses them: io at .040 (load began before it), right behind it */
      "{\"ph\":\"s\",\"cat\":\"demo\",\"name\":\"msg\",\"pid\":100,\"tid\":101,"
      "\"id\":\"0xabc\",\"ts\":5000000.040}",
      "{\"ph\":\"t\",\"cat\":\"demo\",\"name\":\"msg\",\"pid\":100,\"tid\":101,"
      "\"id\":\"0xabc\",\"ts\":5000000.040}",
      "{\"ph\":\"f\",\"cat\":\"demo\",\"name\":\"msg\",\"pid\":100,\"tid\":101,"
      "\"id\":\"0xabc\",\"bp\":\"e\",\"ts\":5000000.040}",
      "{\"ph\":\"X\",\"cat\":\"demo\",\"name\":\"io\",\"pid\":100,\"tid\":101,"
      "\"ts\":5000000.045,\"dur\":0.000}",
      "{\"ph\":\"b\",\"cat\":\"demo\",\"name\":\"req\",\"pid\":100,\"tid\":101,"
      "\"ts\":5000000.050,\"id2\":{\"local\":\"0x2a\"}}",
      "{\"ph\":\"n\",\"cat\":\"demo\",\"name\":\"req\",\"pid\":100,\"tid\":101,"
      "\"ts\":5000000.051,\"id2\":{\"local\":\"0x2a\"},\"args\":{\"seq\":-1}}",
      "{\"ph\":\"e\",\"cat\":\"demo\",\"name\":\"req\",\"pid\":100,\"tid\":101,"
      "\"ts\":5000000.052,\"id2\":{\"local\":\"0x2a\"}}",
      /* printk: the format rendered, its final newline dropped */
      "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"printk\",\"name\":\"got 5\",\"pid\":100,\"tid\":102,"
      "\"ts\":5000000.070,\"args\":{\"a0\":5}}",
      /* described as printk (kind 6) though of system demo */
      "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"demo\",\"name\":\"tick 9\",\"pid\":100,\"tid\":102,"
      "\"ts\":5000000.071,\"args\":{\"a0\":9}}",
      "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"printk\",\"name\":\"printk\",\"pid\":100,\"tid\":102,"
      "\"ts\":5000000.072,\"args\":{\"a0\":\"\"}}",
      "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"log\",\"name\":\"hello \\\"log\\\"\\n\",\"pid\":100,"
      "\"tid\":101,\"ts\":5000000.080}",
  };
  /* skipped: the description and the two clock syncs */
  struct fxt_json_stats st = {.events = 16, .paired = 1, .flows_bound = 3, .logs = 1,
                              .metadata = 3, .skipped = 3, .providers = 1};
  expect_json(0, want, sizeof want / sizeof want[0], &st);
}

/* ---- strings and numbers ------------------------------------------------------------------ */

static void one_event_file(const struct fxt_event *e) {
  reset();
  emit(fxt_encode_magic(ROOM));
  provider(7, 1000000000); /* no clock sync: ticks are ns */
  put(e);
}

static void test_strings(void **state) {
  (void)state;
  static const char nul[] = {'a', 0, 'b'};
  struct fxt_event e = event(FXT_EVENT_INSTANT, fxt_thread_inline(7, 8), inl("c\\at"),
                             inl("na\"me"), 1234567);
  arg(&e, FXT_ARG_STRING, inl("ctl"))->value.str = inl("\n\t\r\b\f\x01\x1f\x7f");
  arg(&e, FXT_ARG_STRING, inl("utf8"))->value.str = inl("\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e");
  arg(&e, FXT_ARG_STRING, inl("bad"))->value.str =
      inl("\xff|\xc0\x80|\xed\xa0\x80|\xf4\x90\x80\x80|\xe2\x82");
  arg(&e, FXT_ARG_STRING, inl("n\xffl"))->value.str = fxt_str_inline(nul, 3);
  one_event_file(&e);
#define FFFD "\xef\xbf\xbd"
  const char *const want[] = {
      "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"c\\\\at\",\"name\":\"na\\\"me\",\"pid\":7,\"tid\":8,"
      "\"ts\":1234.567,\"args\":{\"ctl\":\"\\n\\t\\r\\b\\f\\u0001\\u001f\\u007f\","
      "\"utf8\":\"\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e\","
      "\"bad\":\"" FFFD "|" FFFD FFFD "|" FFFD FFFD FFFD "|" FFFD FFFD FFFD FFFD "|" FFFD FFFD "\","
      "\"n" FFFD "l\":\"a\\u0000b\"}}",
  };
  struct fxt_json_stats st = {.events = 1, .providers = 1};
  expect_json(0, want, 1, &st);
}

static void test_numbers(void **state) {
  (void)state;
  struct fxt_event e = event(FXT_EVENT_INSTANT, fxt_thread_inline(7, 8), inl("c"), inl("n"), 0);
  arg(&e, FXT_ARG_UINT64, inl("u"))->value.u64 = UINT64_C(1) << 53;
  arg(&e, FXT_ARG_UINT64, inl("u"))->value.u64 = (UINT64_C(1) << 53) + 1;
  arg(&e, FXT_ARG_UINT64, inl("u"))->value.u64 = UINT64_MAX;
  arg(&e, FXT_ARG_INT64, inl("i"))->value.i64 = -(INT64_C(1) << 53);
  arg(&e, FXT_ARG_INT64, inl("i"))->value.i64 = INT64_MIN;
  arg(&e, FXT_ARG_INT32, inl("i32"))->value.i32 = INT32_MIN;
  arg(&e, FXT_ARG_UINT32, inl("u32"))->value.u32 = UINT32_MAX;
  arg(&e, FXT_ARG_KOID, inl("k"))->value.koid = UINT64_MAX - 1;
  arg(&e, FXT_ARG_POINTER, inl("p"))->value.pointer = 0xdeadbeef;
  arg(&e, FXT_ARG_BOOL, inl("b"))->value.b = false;
  arg(&e, FXT_ARG_NULL, inl("z"));
  arg(&e, FXT_ARG_DOUBLE, inl("d"))->value.f64 = 0.1;
  arg(&e, FXT_ARG_DOUBLE, inl("d"))->value.f64 = 3.0;
  arg(&e, FXT_ARG_DOUBLE, inl("d"))->value.f64 = -1e300;
  arg(&e, FXT_ARG_DOUBLE, inl("d"))->value.f64 = NAN;
  one_event_file(&e);
  const char *const want[] = {
      "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"c\",\"name\":\"n\",\"pid\":7,\"tid\":8,\"ts\":0.000,"
      "\"args\":{\"u\":9007199254740992,\"u #2\":\"9007199254740993\","
      "\"u #3\":\"18446744073709551615\",\"i\":-9007199254740992,"
      "\"i #2\":\"-9223372036854775808\",\"i32\":-2147483648,\"u32\":4294967295,"
      "\"k\":\"18446744073709551614\",\"p\":\"0xdeadbeef\",\"b\":false,\"z\":null,"
      "\"d\":0.1,\"d #2\":3.0,\"d #3\":-1e+300,\"d #4\":\"NaN\"}}",
  };
  struct fxt_json_stats st = {.events = 1, .providers = 1};
  expect_json(0, want, 1, &st);

  /* infinities in args are strings, in counters left out */
  memset(&e, 0, sizeof e);
  e = event(FXT_EVENT_COUNTER, fxt_thread_inline(7, 8), inl("c"), inl("n"), 1000);
  arg(&e, FXT_ARG_DOUBLE, inl("inf"))->value.f64 = INFINITY;
  arg(&e, FXT_ARG_UINT64, inl("big"))->value.u64 = UINT64_MAX;
  one_event_file(&e);
  const char *const want2[] = {
      "{\"ph\":\"C\",\"cat\":\"c\",\"name\":\"n\",\"pid\":7,\"tid\":8,\"ts\":1.000,"
      "\"args\":{\"big\":18446744073709551615}}",
  };
  expect_json(0, want2, 1, &st);
}

static void test_values_direct(void **state) {
  (void)state;
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  fxt_json_us(&b, 0), fxt_tbuf_put(&b, " ", 1);
  fxt_json_us(&b, 999), fxt_tbuf_put(&b, " ", 1);
  fxt_json_us(&b, UINT64_MAX), fxt_tbuf_put(&b, " ", 1);
  fxt_json_hex(&b, 0), fxt_tbuf_put(&b, " ", 1);
  fxt_json_hex(&b, UINT64_MAX), fxt_tbuf_put(&b, " ", 1);
  fxt_json_double(&b, -INFINITY), fxt_tbuf_put(&b, " ", 1);
  fxt_json_double(&b, -0.0), fxt_tbuf_put(&b, " ", 1);
  fxt_json_double(&b, 1.0 / 3), fxt_tbuf_put(&b, " ", 1);
  fxt_json_double(&b, 5e-324), fxt_tbuf_put(&b, " ", 1);
  fxt_json_i64_safe(&b, (INT64_C(1) << 53) + 1);
  assert_string_equal(fxt_tbuf_str(&b),
                      "0.000 0.999 18446744073709551.615 \"0x0\" \"0xffffffffffffffff\" "
                      "\"-Infinity\" -0.0 0.3333333333333333 4.94065645841247e-324 "
                      "\"9007199254740993\"");
  fxt_tbuf_free(&b);
}

/* A duration read back and added to its start's time as doubles (as DevTools nests slices)
 * gives the end's time exactly, and rounds to the nanoseconds: the slice of the demo that
 * ends in the nanosecond the next starts (DevTools dropped it with three decimals), and a
 * sweep of starts and lengths. Three decimals where they add up. */
static double us_text(uint64_t ns, char *buf, size_t size) {
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  fxt_json_us(&b, ns);
  snprintf(buf, size, "%s", fxt_tbuf_str(&b));
  fxt_tbuf_free(&b);
  return strtod(buf, NULL);
}

static void check_dur(uint64_t start, uint64_t end) {
  char ts[64], te[64], td[64];
  double s = us_text(start, ts, sizeof ts), e = us_text(end, te, sizeof te);
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  fxt_json_dur(&b, start, end);
  snprintf(td, sizeof td, "%s", fxt_tbuf_str(&b));
  fxt_tbuf_free(&b);
  double d = strtod(td, NULL);
  if (s + d != e || (uint64_t)(d * 1000 + 0.5) != end - start)
    fail_msg("ts %s + dur %s != end %s", ts, td, te);
}

static void test_dur_adds_up(void **state) {
  (void)state;
  check_dur(UINT64_C(38343217273079), UINT64_C(38343217344616)); /* 71.537 adds up wrong */
  uint64_t x = 88172645463325252u;
  for (int k = 0; k < 100000; k++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    uint64_t start = x % (UINT64_C(1) << 49), len = (x >> 49) % 100000000;
    check_dur(start, start + len);
  }
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  fxt_json_dur(&b, 1000, 2500);
  fxt_tbuf_put(&b, " ", 1);
  fxt_json_dur(&b, 7, 7);
  assert_string_equal(fxt_tbuf_str(&b), "1.500 0.000");
  fxt_tbuf_free(&b);
}

/* ---- two providers, losses, cpu ------------------------------------------------------------ */

/* Provider 100: its clock syncs, ticks 1000 -> 5e9 and 3001000 -> 5e9 + 1e6, make 3 ticks per
 * ns (its 2e9 ticks/s is overridden): ticks TA(k) = 1000 + 3k are at 5e9 + k ns. Provider 200:
 * 1e9 ticks/s and one sync, ticks 500 -> 5e9 + 15: ticks t are at 5e9 + 15 + t - 500. Both
 * bind string 32 and thread ref 1, to different things. */
#define TA(k) (1000 + 3 * (uint64_t)(k))

static void build_two_providers(void) {
  struct fxt_thread_ref t1 = fxt_thread_index(1), t102 = fxt_thread_inline(100, 102);
  file_start(100, 2000000000);
  string(S_DEMO, "demo"), string(S_WORK, "work");
  clock_sync(100, TA(0), 5000000000u);
  thread(1, 100, 101);
  cpu(t1, TA(5), 2);
  loss(t1, FXT_STR_DROP_STATS, TA(6), 3);
  struct fxt_event e = event(FXT_EVENT_DURATION_BEGIN, t1, sref(S_DEMO), sref(S_WORK), TA(7));
  put(&e); /* never ended */
  loss(t1, FXT_STR_OVERRUN, TA(8), 2);
  loss(t102, FXT_STR_LOST, TA(9), 4);
  loss(t1, FXT_STR_LOST, TA(10), 1);
  e = event(FXT_EVENT_COUNTER, t1, sref(FXT_STR_KERNEL_META), sref(FXT_STR_DROPPED), TA(11));
  arg(&e, FXT_ARG_UINT64, sref(FXT_STR_RECORDS))->value.u64 = 6;
  put(&e); /* the file's own running total: left out */
  e = event(FXT_EVENT_INSTANT, t1, sref(FXT_STR_KERNEL_META), inl("future"), TA(12));
  put(&e); /* bookkeeping this reader does not know: left out */
  clock_sync(100, TA(1000000), 5001000000u);

  provider(200, 1000000000);
  meta_strings();
  string(S_DEMO, "net"), string(S_WORK, "rx");
  kobj(FXT_KOBJ_PROCESS, 200, "procB", 0);
  clock_sync(200, 500, 5000000015u);
  thread(1, 200, 201);
  kobj(FXT_KOBJ_THREAD, 201, "gamma", 0); /* no process argument: the provider's */
  e = event(FXT_EVENT_DURATION_END, t1, sref(S_DEMO), sref(S_WORK), 600);
  put(&e); /* never begun */
  loss(t1, FXT_STR_DROP_STATS, 700, 7);
  cpu(t1, 701, 0);
}

static const char *const k_two[] = {
    /* metadata first, then by time */
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":200,\"tid\":200,"
    "\"args\":{\"name\":\"procB\"}}",
    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":200,\"tid\":201,\"args\":{\"name\":\"gamma\"}}",
    "{\"ph\":\"C\",\"cat\":\"kernel:meta\",\"name\":\"cpu (tid 101)\",\"pid\":100,\"tid\":101,"
    "\"ts\":5000000.005,\"args\":{\"cpu\":2}}",
    "{\"ph\":\"C\",\"cat\":\"kernel:meta\",\"name\":\"fxtrace lost (tid 101)\",\"pid\":100,"
    "\"tid\":101,\"ts\":5000000.006,\"args\":{\"records\":3}}",
    "{\"ph\":\"B\",\"cat\":\"demo\",\"name\":\"work\",\"pid\":100,\"tid\":101,"
    "\"ts\":5000000.007}",
    "{\"ph\":\"C\",\"cat\":\"kernel:meta\",\"name\":\"fxtrace lost (tid 101)\",\"pid\":100,"
    "\"tid\":101,\"ts\":5000000.008,\"args\":{\"records\":5}}",
    "{\"ph\":\"C\",\"cat\":\"kernel:meta\",\"name\":\"fxtrace lost (tid 102)\",\"pid\":100,"
    "\"tid\":102,\"ts\":5000000.009,\"args\":{\"records\":4}}",
    "{\"ph\":\"C\",\"cat\":\"kernel:meta\",\"name\":\"fxtrace lost (tid 101)\",\"pid\":100,"
    "\"tid\":101,\"ts\":5000000.010,\"args\":{\"records\":6}}",
    "{\"ph\":\"E\",\"cat\":\"net\",\"name\":\"rx\",\"pid\":200,\"tid\":201,\"ts\":5000000.115}",
    "{\"ph\":\"C\",\"cat\":\"kernel:meta\",\"name\":\"fxtrace lost (tid 201)\",\"pid\":200,"
    "\"tid\":201,\"ts\":5000000.215,\"args\":{\"records\":7}}",
    "{\"ph\":\"C\",\"cat\":\"kernel:meta\",\"name\":\"cpu (tid 201)\",\"pid\":200,\"tid\":201,"
    "\"ts\":5000000.216,\"args\":{\"cpu\":0}}",
};

static void test_two_providers_losses(void **state) {
  (void)state;
  build_two_providers();
  /* skipped: 3 clock syncs, dropped, the unknown bookkeeping record */
  struct fxt_json_stats st = {.events = 2, .lost_counters = 5, .lost_records = 17,
                              .cpu_counters = 2, .unmatched_begin = 1, .unmatched_end = 1,
                              .metadata = 2, .skipped = 5, .providers = 2};
  expect_json(0, k_two, sizeof k_two / sizeof k_two[0], &st);

  const char *no_cpu[sizeof k_two / sizeof k_two[0] - 2];
  size_t n = 0;
  for (size_t i = 0; i < sizeof k_two / sizeof k_two[0]; i++)
    if (strstr(k_two[i], "\"cpu (") == NULL)
      no_cpu[n++] = k_two[i];
  st.cpu_counters = 0;
  st.skipped += 2;
  expect_json(FXT_JSON_NO_CPU, no_cpu, n, &st);
}

/* ---- errors, streaming, release -------------------------------------------------------------- */

static void test_errors(void **state) {
  (void)state;
  struct sink s;
  char err[256];
  build_two_providers();
  /* truncated (a torn tail): strict, the error of the first pass, and nothing written */
  struct fxt_json_stats st, whole;
  assert_int_equal(convert(0, &s, &whole, err), 0);
  fxt_tbuf_free(&s.out);
  g_len -= 8;
  assert_int_equal(convert(FXT_JSON_STRICT, &s, NULL, err), FXT_EBADMSG);
  assert_int_equal(strncmp(err, "offset ", 7), 0);
  assert_int_equal(s.calls, 0);
  fxt_tbuf_free(&s.out);
  /* not strict: the records before the torn one, and where it is */
  assert_int_equal(convert(0, &s, &st, err), 0);
  assert_string_equal(err, "");
  struct fxtf_file *f = NULL; /* where the reader says the tail is */
  assert_int_equal(fxtf_load(g_buf, g_len, &f, err, 256), 0);
  assert_true(fxtf_torn(f) > 0 && fxtf_torn(f) < g_len);
  assert_int_equal(st.torn, fxtf_torn(f));
  assert_int_equal(st.events, fxtf_event_count(f));
  assert_true(st.events <= whole.events);
  fxtf_close(f);
  fxt_tbuf_put(&s.out, "", 1);
  assert_non_null(strstr(s.out.data, "\"torn_tail_offset\":"));
  fxt_tbuf_free(&s.out);
  g_len += 8;

  /* a bookkeeping record without its argument */
  file_start(1, 1000);
  struct fxt_event e = event(FXT_EVENT_INSTANT, fxt_thread_inline(1, 2),
                             sref(FXT_STR_KERNEL_META), sref(FXT_STR_OVERRUN), 5);
  size_t at = g_len;
  put(&e);
  char want[200];
  snprintf(want, sizeof want,
           "offset %zu: kernel:meta overrun record without an unsigned integer argument "
           "'num_records'",
           at);
  assert_int_equal(convert(0, &s, NULL, err), FXT_EBADMSG);
  assert_string_equal(err, want);
  fxt_tbuf_free(&s.out);

  /* the write callback's error ends the conversion and comes back */
  build_every_type();
  memset(&s, 0, sizeof s);
  s.fail_at_call = 1;
  struct fxt_json_options o = {0, sink_write, &s, NULL, NULL, NULL, 0};
  assert_int_equal(fxt_json_convert(g_buf, g_len, &o, NULL, err, sizeof err), -5);
  assert_string_equal(err, "writing the output failed");
  fxt_tbuf_free(&s.out);

  assert_int_equal(fxt_json_convert(g_buf, g_len, NULL, NULL, err, sizeof err), FXT_EINVAL);
  o.write = NULL;
  assert_int_equal(fxt_json_convert(g_buf, g_len, &o, NULL, err, sizeof err), FXT_EINVAL);
  o.write = sink_write;
  assert_int_equal(fxt_json_convert(NULL, 8, &o, NULL, NULL, 0), FXT_EINVAL);
}

struct ranges {
  uint64_t next, calls;
  bool ordered;
};

static void on_release(void *ctx, uint64_t from, uint64_t to) {
  struct ranges *r = ctx;
  if (from == 0 && r->next == g_len) /* the second pass starts again */
    r->next = 0;
  r->ordered &= from == r->next && to > from && to <= g_len;
  r->next = to;
  r->calls++;
}

/* 400000 events (9.6 MB of FXT, 44 MB of JSON): the input is released in order, in steps,
 * twice (once per pass), up to its end; the last event closes the list. */
static void test_streaming(void **state) {
  (void)state;
  reset();
  emit(fxt_encode_magic(ROOM));
  provider(1, 1000000000);
  string(40, "sys"), string(41, "ev"), string(42, "v");
  thread(1, 1, 2);
  const uint32_t n = 400000;
  for (uint32_t i = 0; i < n; i++) {
    struct fxt_event e = event(FXT_EVENT_INSTANT, fxt_thread_index(1), sref(40), sref(41), i);
    arg(&e, FXT_ARG_UINT32, sref(42))->value.u32 = i;
    put(&e);
  }
  assert_true(g_len > (8u << 20));
  struct sink s;
  memset(&s, 0, sizeof s);
  fxt_tbuf_init(&s.out);
  struct ranges r = {0, 0, true};
  struct fxt_json_options o = {0, sink_write, &s, on_release, &r, NULL, 0};
  struct fxt_json_stats st;
  char err[256];
  assert_int_equal(fxt_json_convert(g_buf, g_len, &o, &st, err, sizeof err), 0);
  assert_int_equal(st.events, n);
  assert_true(s.calls > 10);
  assert_true(r.ordered);
  assert_int_equal(r.next, g_len);
  assert_int_equal(r.calls, 4); /* per pass: at 8 MiB and at the end */
  const char *out = fxt_tbuf_str(&s.out);
  char line[200];
  snprintf(line, sizeof line,
           "\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"sys\",\"name\":\"ev\",\"pid\":1,\"tid\":2,"
           "\"ts\":%u.%03u,\"args\":{\"v\":%u}}\n],",
           (n - 1) / 1000, (n - 1) % 1000, n - 1);
  assert_non_null(strstr(out, line));
  fxt_tbuf_free(&s.out);
}

/* Time order across threads written chunk after chunk, nested pairs, flows bound to the
 * slice that encloses them (one starting at the flow's own time too), texts longer than a
 * sort record, and a sort that spills (64 KiB runs). */
static void test_time_order(void **state) {
  (void)state;
  reset();
  emit(fxt_encode_magic(ROOM));
  provider(1, 1000000000); /* no clock sync: ticks are ns */
  string(40, "sys"), string(41, "outer"), string(42, "inner"), string(43, "f"), string(44, "v");
  string(45, "big");
  thread(1, 1, 2);
  thread(2, 1, 3);
  static char big[9000];
  memset(big, 'x', sizeof big);
  const uint32_t n = 2000;
  /* thread 2's events first in the file, thread 3's after, both over [0, 2000 us) */
  for (uint32_t th = 1; th <= 2; th++) {
    for (uint32_t i = 0; i < n; i++) {
      uint64_t t0 = 1000 * (uint64_t)i + th;
      struct fxt_event e = event(FXT_EVENT_DURATION_BEGIN, fxt_thread_index((uint8_t)th),
                                 sref(40), sref(41), t0);
      put(&e);
      e = event(FXT_EVENT_DURATION_BEGIN, fxt_thread_index((uint8_t)th), sref(40), sref(42),
                t0); /* the same start as outer */
      arg(&e, FXT_ARG_UINT32, sref(44))->value.u32 = i;
      put(&e);
      e = event(FXT_EVENT_FLOW_STEP, fxt_thread_index((uint8_t)th), sref(40), sref(43),
                t0 + 100);
      e.trailer = i;
      if (i % 500 == 0) /* longer than one sort record */
        arg(&e, FXT_ARG_STRING, sref(45))->value.str = fxt_str_inline(big, sizeof big);
      put(&e);
      e = event(FXT_EVENT_DURATION_END, fxt_thread_index((uint8_t)th), sref(40), sref(42),
                t0 + 200);
      put(&e);
      e = event(FXT_EVENT_FLOW_STEP, fxt_thread_index((uint8_t)th), sref(40), sref(43),
                t0 + 300); /* in outer only */
      e.trailer = i;
      put(&e);
      e = event(FXT_EVENT_DURATION_END, fxt_thread_index((uint8_t)th), sref(40), sref(41),
                t0 + 400);
      put(&e);
    }
  }
  struct sink s;
  memset(&s, 0, sizeof s);
  fxt_tbuf_init(&s.out);
  struct fxt_json_options o = {0, sink_write, &s, NULL, NULL, NULL, 64 << 10};
  struct fxt_json_stats st;
  char err[256];
  assert_int_equal(fxt_json_convert(g_buf, g_len, &o, &st, err, sizeof err), 0);
  assert_int_equal(st.events, 2 * n * 6);
  assert_int_equal(st.paired, 2 * n * 2);
  assert_int_equal(st.flows_bound, 2 * n * 2);
  assert_int_equal(st.unmatched_begin + st.unmatched_end, 0);
  assert_true(st.sort_runs > 2);
  const char *out = fxt_tbuf_str(&s.out);
  /* every "ts" at least the one before; every flow at its slice's start (ns % 1000 <= 2) */
  double last = -1;
  size_t events = 0, flows = 0, bigs = 0;
  for (const char *p = strstr(out, "{\"ph\":\""); p != NULL; p = strstr(p + 1, "{\"ph\":\"")) {
    const char *ts = strstr(p, "\"ts\":");
    assert_non_null(ts);
    double t = strtod(ts + 5, NULL);
    assert_true(t >= last);
    last = t;
    events++;
    if (p[7] == 't') {
      flows++;
      long ns = (long)(t * 1000 + 0.5);
      assert_true(ns % 1000 == 1 || ns % 1000 == 2);
      const char *next = strstr(p + 1, "{\"ph\":\"");
      const char *x = strstr(p, "xxxxxxxx");
      if (x != NULL && (next == NULL || x < next)) {
        bigs++;
        assert_int_equal(strspn(x, "x"), sizeof big);
      }
    }
  }
  assert_int_equal(events, 2 * n * 4);
  assert_int_equal(flows, 2 * n * 2);
  assert_int_equal(bigs, 2 * (n / 500));
  fxt_tbuf_free(&s.out);
}

/* Blocks handed to the write callback: all but the last at least FXT_JOUT_FLUSH bytes. */
static size_t g_blocks, g_short;
static int count_write(void *ctx, const void *data, size_t n) {
  (void)ctx, (void)data;
  g_blocks++;
  g_short += n < FXT_JOUT_FLUSH;
  return 0;
}

static void test_block_sizes(void **state) {
  (void)state;
  test_streaming(state); /* leaves the 400000-event file in g_buf */
  struct fxt_json_options o = {0, count_write, NULL, NULL, NULL, NULL, 0};
  g_blocks = g_short = 0;
  assert_int_equal(fxt_json_convert(g_buf, g_len, &o, NULL, NULL, 0), 0);
  assert_true(g_blocks > 10);
  assert_int_equal(g_short, 1);
}

FXT_TEST_MAIN(
    cmocka_unit_test(test_every_event_type), cmocka_unit_test(test_strings),
    cmocka_unit_test(test_numbers), cmocka_unit_test(test_values_direct),
    cmocka_unit_test(test_dur_adds_up), cmocka_unit_test(test_two_providers_losses),
    cmocka_unit_test(test_errors), cmocka_unit_test(test_streaming),
    cmocka_unit_test(test_block_sizes), cmocka_unit_test(test_time_order))
