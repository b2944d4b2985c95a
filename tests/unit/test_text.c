/* tests/unit/test_text.c - ftrace text: the line prefix (ftrace-text.md §1, column by column),
 * the printf renderer (every conversion, flags, widths, length modifiers, malformed formats,
 * missing and mismatched arguments) and whole event lines. Expected strings are written by
 * hand from the spec and C's printf rules, never produced by the code under test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "../test_main.h"

#include <stdio.h>
#include <string.h>

#include "base/text.h"

/* ---- helpers ------------------------------------------------------------------------------- */

static struct fxt_str_ref str(const char *s) {
  struct fxt_str_ref r = {s, (uint16_t)strlen(s), FXT_STR_REF_INLINE};
  return r;
}

static struct fxt_arg arg(uint32_t type, const char *name) {
  struct fxt_arg a;
  memset(&a, 0, sizeof a);
  a.type = type;
  a.name = str(name);
  return a;
}

static struct fxt_arg i32(int32_t v) { struct fxt_arg a = arg(FXT_ARG_INT32, "i"); a.value.i32 = v; return a; }
static struct fxt_arg u32(uint32_t v) { struct fxt_arg a = arg(FXT_ARG_UINT32, "u"); a.value.u32 = v; return a; }
static struct fxt_arg i64(int64_t v) { struct fxt_arg a = arg(FXT_ARG_INT64, "l"); a.value.i64 = v; return a; }
static struct fxt_arg u64(uint64_t v) { struct fxt_arg a = arg(FXT_ARG_UINT64, "q"); a.value.u64 = v; return a; }
static struct fxt_arg dbl(double v) { struct fxt_arg a = arg(FXT_ARG_DOUBLE, "d"); a.value.f64 = v; return a; }
static struct fxt_arg ptr(uint64_t v) { struct fxt_arg a = arg(FXT_ARG_POINTER, "p"); a.value.pointer = v; return a; }
static struct fxt_arg bln(bool v) { struct fxt_arg a = arg(FXT_ARG_BOOL, "b"); a.value.b = v; return a; }
static struct fxt_arg koid(uint64_t v) { struct fxt_arg a = arg(FXT_ARG_KOID, "k"); a.value.koid = v; return a; }
static struct fxt_arg s(const char *v) { struct fxt_arg a = arg(FXT_ARG_STRING, "s"); a.value.str = str(v); return a; }
static struct fxt_arg named(struct fxt_arg a, const char *name) { a.name = str(name); return a; }

static void expect_fmt(const char *fmt, const struct fxt_arg *args, uint32_t n, const char *want) {
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  fxt_text_printf(&b, fmt, strlen(fmt), args, n);
  const char *got = fxt_tbuf_str(&b);
  if (strcmp(got, want) != 0)
    fail_msg("format \"%s\": got \"%s\", want \"%s\"", fmt, got, want);
  fxt_tbuf_free(&b);
}

#define FMT(fmt, want, ...)                                                                  \
  do {                                                                                       \
    const struct fxt_arg args_[] = {__VA_ARGS__};                                            \
    expect_fmt(fmt, args_, sizeof args_ / sizeof args_[0], want);                            \
  } while (0)
#define FMT0(fmt, want) expect_fmt(fmt, NULL, 0, want)

static void expect_prefix(const char *comm, uint64_t pid, uint32_t cpu, uint64_t ns,
                          const char *want) {
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  fxt_text_prefix(&b, comm, comm ? strlen(comm) : 0, pid, cpu, ns);
  assert_string_equal(fxt_tbuf_str(&b), want);
  fxt_tbuf_free(&b);
}

/* ---- the prefix -------------------------------------------------------------------------- */

static void test_prefix_columns(void **state) {
  (void)state;
  /* spec 1.2: "            bash-11065   [001] ...1.   455.062427: " with flags ..... */
  expect_prefix("bash", 11065, 1, UINT64_C(455062427000),
                "            bash-11065   [001] .....   455.062427: ");
  /* 51 characters up to the event name while seconds have <= 5 digits */
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  fxt_text_prefix(&b, "myapp", 5, 4242, 1, UINT64_C(12345678901000));
  assert_string_equal(fxt_tbuf_str(&b), "           myapp-4242    [001] ..... 12345.678901: ");
  assert_int_equal(b.len, 51);
  fxt_tbuf_free(&b);
}

static void test_prefix_rounding(void **state) {
  (void)state;
  /* us = (ns + 500) / 1000 */
  expect_prefix("t", 1, 0, UINT64_C(1999999499), "               t-1       [000] .....     1.999999: ");
  expect_prefix("t", 1, 0, UINT64_C(1999999500), "               t-1       [000] .....     2.000000: ");
  expect_prefix("t", 1, 0, 0, "               t-1       [000] .....     0.000000: ");
  expect_prefix("t", 1, 0, 499, "               t-1       [000] .....     0.000000: ");
  expect_prefix("t", 1, 0, 500, "               t-1       [000] .....     0.000001: ");
  /* seconds wider than 5 columns push the line right */
  expect_prefix("t", 1, 0, UINT64_C(123456000000000), "               t-1       [000] ..... 123456.000000: ");
  /* UINT64_MAX ns: 18446744073709551615 -> us 18446744073709552 */
  expect_prefix("t", 1, 0, UINT64_MAX, "               t-1       [000] ..... 18446744073.709552: ");
}

static void test_prefix_pid_cpu_comm(void **state) {
  (void)state;
  expect_prefix("a", 1234567, 2, 0, "               a-1234567 [002] .....     0.000000: ");
  expect_prefix("a", 12345678, 2, 0, "               a-12345678 [002] .....     0.000000: ");
  /* spec 1.2's "kworker/u112:14-123456  [012]": 15 characters fill the column but one */
  expect_prefix("kworker/u112:14", 123456, 12, 0, " kworker/u112:14-123456  [012] .....     0.000000: ");
  /* longer names are cut to 15 (TASK_COMM_LEN - 1) */
  expect_prefix("a-very-long-thread-name", 7, 0, 0, " a-very-long-thr-7       [000] .....     0.000000: ");
  expect_prefix("exactly16chars!!", 7, 0, 0, " exactly16chars!-7       [000] .....     0.000000: ");
  /* no name */
  expect_prefix(NULL, 42, 0, 0, "           <...>-42      [000] .....     0.000000: ");
  expect_prefix("", 42, 0, 0, "           <...>-42      [000] .....     0.000000: ");
  /* CPUs: 3 digits at least, unknown as 0 */
  expect_prefix("a", 1, 1234, 0, "               a-1       [1234] .....     0.000000: ");
  expect_prefix("a", 1, FXTF_CPU_UNKNOWN, 0, "               a-1       [000] .....     0.000000: ");
}

/* ---- printf: each conversion --------------------------------------------------------------- */

static void test_printf_signed(void **state) {
  (void)state;
  FMT("%d", "-5", i32(-5));
  FMT("%i", "42", i32(42));
  FMT("[%5d]", "[   -5]", i32(-5));
  FMT("[%-5d]", "[-5   ]", i32(-5));
  FMT("[%05d]", "[-0005]", i32(-5));
  FMT("%+d %+d", "+5 -5", i32(5), i32(-5));
  FMT("% d", " 5", i32(5));
  FMT("%.3d", "005", i32(5));
  FMT("[%.0d]", "[]", i32(0));     /* precision 0 and value 0: no digits */
  FMT("[%5.3d]", "[  005]", i32(5));
  FMT("[%05.3d]", "[  005]", i32(5)); /* '0' is ignored with a precision */
  FMT("%d", "-2147483648", i32(INT32_MIN));
  FMT("%lld", "-9223372036854775808", i64(INT64_MIN));
  FMT("%ld %jd %zd %td", "-1 -1 -1 -1", i64(-1), i64(-1), i64(-1), i64(-1));
}

static void test_printf_length_modifiers(void **state) {
  (void)state;
  /* the value is converted to the length's type, as C would read it */
  FMT("%d", "5", u64(UINT64_C(0x100000005)));
  FMT("%d", "-1", u32(UINT32_MAX));
  FMT("%u", "4294967295", i32(-1));
  FMT("%lu", "18446744073709551615", i32(-1));
  FMT("%llu", "18446744073709551615", u64(UINT64_MAX));
  FMT("%hhu", "1", u32(257));
  FMT("%hhd", "-1", u32(255));
  FMT("%hd", "-1", u32(65535));
  FMT("%hu", "65535", i32(-1));
  FMT("%hhd", "-128", i32(128));
  FMT("%hx", "ffff", i32(-1));
  FMT("%d %d", "1 0", bln(true), bln(false));
  FMT("%lu", "7", koid(7));
}

static void test_printf_unsigned_bases(void **state) {
  (void)state;
  FMT("%x %X", "ff FF", u32(255), u32(255));
  FMT("%#x %#X", "0xff 0XFF", u32(255), u32(255));
  FMT("%#x", "0", u32(0)); /* no prefix for 0 */
  FMT("%08x", "000000ff", u32(255));
  FMT("%#010x", "0x000000ff", u32(255));
  FMT("[%-#8x]", "[0xff    ]", u32(255));
  FMT("%llx", "ffffffffffffffff", u64(UINT64_MAX));
  FMT("%o %#o %#o", "10 010 0", u32(8), u32(8), u32(0));
  FMT("%#.3o", "010", u32(8));
  FMT("%u", "0", u32(0));
}

static void test_printf_char_string_pointer(void **state) {
  (void)state;
  FMT("%c%c", "AB", i32('A'), u32('B'));
  FMT("[%3c][%-3c]", "[  A][A  ]", i32('A'), i32('A'));
  FMT("%s", "hello", s("hello"));
  FMT("[%7s][%-7s]", "[  hello][hello  ]", s("hello"), s("hello"));
  FMT("%.3s", "hel", s("hello"));
  FMT("[%5.2s]", "[   he]", s("hello"));
  FMT("[%s]", "[]", s(""));
  FMT("%p", "0x1234", ptr(0x1234));
  FMT("%p", "0x0", ptr(0));
  FMT("[%10p][%-10p]", "[    0xbeef][0xbeef    ]", ptr(0xbeef), ptr(0xbeef));
  FMT("%p", "0xffffffffffffffff", u64(UINT64_MAX));
}

static void test_printf_floats(void **state) {
  (void)state;
  FMT("%g", "0.5", dbl(0.5));
  FMT("%g", "1e+20", dbl(1e20));
  FMT("%f", "1.500000", dbl(1.5));
  FMT("%.2f", "1.50", dbl(1.5));
  FMT("[%10.3f]", "[     3.142]", dbl(3.14159));
  FMT("[%-8.1f]", "[2.5     ]", dbl(2.5));
  FMT("%+.1f", "+2.5", dbl(2.5));
  FMT("%e", "1.234568e+04", dbl(12345.678));
  FMT("%E", "1.234568E+04", dbl(12345.678));
  FMT("%G", "1E-10", dbl(1e-10));
  FMT("%010.2f", "0000003.14", dbl(3.14159));
  FMT("%a", "0x1p+0", dbl(1.0));
  FMT("%lf %Lf", "1.000000 2.000000", dbl(1.0), dbl(2.0));
}

static void test_printf_percent_and_text(void **state) {
  (void)state;
  FMT0("100%%", "100%");
  FMT0("%%d", "%d");
  FMT0("no conversions", "no conversions");
  FMT0("", "");
  FMT("a=%d b=%s c", "a=1 b=x c", i32(1), s("x"));
}

/* ---- printf: what a format or its arguments can get wrong ---------------------------------- */

static void test_printf_malformed(void **state) {
  (void)state;
  FMT0("%", "%");
  FMT0("abc%", "abc%");
  FMT("%q %d", "%q 7", i32(7)); /* unknown: printed as written, takes no argument */
  FMT("%-q", "%-q", i32(7));
  FMT0("%5", "%5");
  FMT0("%l", "%l");
  FMT0("%.", "%.");
  FMT0("%hh", "%hh");
  FMT("%n", "%n", i32(1)); /* never writes anywhere */
  FMT("%k%d", "%k1", i32(1));
  /* a NUL byte inside a format is text like any other */
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  fxt_text_printf(&b, "a\0%d", 4, (struct fxt_arg[]){i32(3)}, 1);
  assert_int_equal(b.len, 3);
  assert_memory_equal(b.data, "a\0" "3", 3);
  fxt_tbuf_free(&b);
}

static void test_printf_star(void **state) {
  (void)state;
  FMT("[%*d]", "[   42]", i32(5), i32(42));
  FMT("[%-*d]", "[42   ]", i32(5), i32(42));
  FMT("[%*d]", "[42   ]", i32(-5), i32(42)); /* negative width: '-' flag */
  FMT("%.*s", "hel", i32(3), s("hello"));
  FMT("%.*s", "hello", i32(-1), s("hello")); /* negative precision: none */
  FMT("[%*.*f]", "[  1.50]", i32(6), i32(2), dbl(1.5));
  FMT("%*d", "<?>", i32(42));                  /* the width took the only argument */
  FMT("%*d %d", "<?> 2", s("x"), i32(1), i32(2)); /* a string width: the conversion fails */
  FMT0("%*d", "<?>");
}

static void test_printf_bad_args(void **state) {
  (void)state;
  FMT("%d %d", "1 <?>", i32(1));
  FMT0("%s", "<?>");
  FMT("%s", "<?>", i32(1));
  FMT("%d", "<?>", s("x"));
  FMT("%d", "<?>", dbl(1.0));
  FMT("%f", "<?>", i32(1));
  FMT("%c", "<?>", s("x"));
  FMT("%p", "<?>", dbl(1.0));
  FMT("%s %d", "<?> 2", i32(1), i32(2)); /* a mismatch still uses up its argument */
  FMT("%d", "<?>", arg(FXT_ARG_NULL, "n"));
}

static void test_printf_width_cap(void **state) {
  (void)state;
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  const char *f = "%99999999999999999999d";
  fxt_text_printf(&b, f, strlen(f), (struct fxt_arg[]){i32(1)}, 1);
  assert_int_equal(b.len, FXT_TEXT_MAX_WIDTH);
  assert_int_equal(b.data[b.len - 1], '1');
  b.len = 0;
  f = "%.99999f";
  fxt_text_printf(&b, f, strlen(f), (struct fxt_arg[]){dbl(1.0)}, 1);
  assert_int_equal(b.len, 2 + FXT_TEXT_MAX_WIDTH); /* "1." and the capped precision */
  fxt_tbuf_free(&b);
}

/* ---- values, pairs, whole lines ------------------------------------------------------------- */

static void test_values_and_pairs(void **state) {
  (void)state;
  struct fxt_arg a[] = {
      named(u32(7), "u"),         named(i32(-7), "i"),     named(u64(UINT64_MAX), "q"),
      named(i64(INT64_MIN), "l"), named(dbl(0.25), "d"),   named(ptr(0xabc), "p"),
      named(bln(true), "b"),      named(koid(99), "k"),    named(s("w x"), "s"),
      arg(FXT_ARG_NULL, "n"),
  };
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  fxt_text_pairs(&b, a, sizeof a / sizeof a[0]);
  assert_string_equal(fxt_tbuf_str(&b),
                      "u=7 i=-7 q=18446744073709551615 l=-9223372036854775808 d=0.25 p=0xabc "
                      "b=1 k=99 s=w x n=");
  fxt_tbuf_free(&b);
}

/* A provider whose ticks are ns (1e9 ticks/s, no clock sync), a named thread. */
static struct fxtf_provider g_prov = {.id = 100, .ticks_per_second = 1000000000};
static struct fxtf_thread g_thr = {.pid = 100, .tid = 101, .comm = {"worker", 6}, .named = true};

static struct fxtf_event make_event(uint32_t type, const char *cat, const char *name,
                                    uint64_t ticks, uint64_t trailer) {
  struct fxtf_event e;
  memset(&e, 0, sizeof e);
  e.provider = &g_prov;
  e.thread = &g_thr;
  e.ns = ticks;
  e.cpu = 3;
  e.ev.type = type;
  e.ev.timestamp = ticks;
  e.ev.category = str(cat);
  e.ev.name = str(name);
  e.ev.trailer = trailer;
  return e;
}

static void expect_line(const struct fxtf_event *e, const char *want) {
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  fxt_text_event(&b, e);
  assert_string_equal(fxt_tbuf_str(&b), want);
  fxt_tbuf_free(&b);
}

#define P "          worker-101     [003] .....     1.000002: "

/* The function tracer's call as the kernel's function tracer prints it (trace_output.c,
 * trace_fn_trace: "%ps <-%ps"): "func <-parent". */
static void test_event_lines_function(void **state) {
  (void)state;
  struct fxtf_event e = make_event(FXT_EVENT_INSTANT, "function", "fib", 1000001500, 0);
  e.ev.num_args = 1;
  e.ev.args[0] = named(s("main"), "parent");
  expect_line(&e, P "fib <-main\n");
  e.ev.args[0] = named(s("main"), "caller"); /* another argument: an ad-hoc instant */
  expect_line(&e, P "fib: caller=main\n");
  e.ev.category = str("demo"); /* another category: the same */
  e.ev.args[0] = named(s("main"), "parent");
  expect_line(&e, P "fib: parent=main\n");
}

/* The event's type, trailer and argument count changed from one line to the next, in order;
 * `-1`: the trailer kept. */
static void test_event_lines_adhoc(void **state) {
  (void)state;
  static const struct {
    uint32_t type;
    int64_t trailer;
    uint32_t num_args;
    const char *want;
  } lines[] = {
      {FXT_EVENT_INSTANT, -1, 2, P "tick: n=5 who=w\n"},
      {FXT_EVENT_COUNTER, 3, 2, P "tick: id=3 n=5 who=w\n"},
      {FXT_EVENT_DURATION_BEGIN, -1, 2, P "tick: B n=5 who=w\n"},
      {FXT_EVENT_DURATION_BEGIN, -1, 0, P "tick: B\n"},
      {FXT_EVENT_DURATION_END, -1, 0, P "tick: E\n"},
      {FXT_EVENT_DURATION_COMPLETE, 1000001500 + 12345, 0, P "tick: dur=12.345us\n"}, /* ns */
      {FXT_EVENT_DURATION_COMPLETE, 1000001500 + 7, 0, P "tick: dur=0.007us\n"},
      {FXT_EVENT_ASYNC_BEGIN, 0x1f, 0, P "tick: async_begin id=0x1f\n"},
      {FXT_EVENT_ASYNC_INSTANT, -1, 1, P "tick: async_instant id=0x1f n=5\n"},
      {FXT_EVENT_ASYNC_END, -1, 1, P "tick: async_end id=0x1f n=5\n"},
      {FXT_EVENT_FLOW_BEGIN, 2, 1, P "tick: flow_begin id=0x2 n=5\n"},
      {FXT_EVENT_FLOW_STEP, -1, 1, P "tick: flow_step id=0x2 n=5\n"},
      {FXT_EVENT_FLOW_END, -1, 1, P "tick: flow_end id=0x2 n=5\n"},
  };
  struct fxtf_event e = make_event(FXT_EVENT_INSTANT, "demo", "tick", 1000001500, 0);
  e.ev.args[0] = named(u64(5), "n");
  e.ev.args[1] = named(s("w"), "who");
  for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
    e.ev.type = lines[i].type;
    if (lines[i].trailer >= 0)
      e.ev.trailer = (uint64_t)lines[i].trailer;
    e.ev.num_args = lines[i].num_args;
    expect_line(&e, lines[i].want);
  }
}

static void test_event_lines_typed_printk_lost(void **state) {
  (void)state;
  struct fxtf_desc d;
  memset(&d, 0, sizeof d);
  d.kind = FXT_TP_TYPED;
  d.fmt.data = "seq=%llu worker=%u name=%s";
  d.fmt.len = (uint32_t)strlen(d.fmt.data);
  struct fxtf_event e = make_event(FXT_EVENT_INSTANT, "demo", "work_done", 1000001500, 0);
  e.desc = &d;
  e.ev.num_args = 3;
  e.ev.args[0] = named(u64(9), "seq");
  e.ev.args[1] = named(u32(1), "worker");
  e.ev.args[2] = named(s("hello"), "name");
  expect_line(&e, P "work_done: seq=9 worker=1 name=hello\n");
  e.lost_before = 7;
  expect_line(&e, "CPU:3 [LOST 7 EVENTS]\n" P "work_done: seq=9 worker=1 name=hello\n");
  /* some of an unknown count among them (a trace.dat page without its count): the kernel's
   * line for an unknown count, whatever the known part */
  e.lost_unknown = true;
  expect_line(&e, "CPU:3 [LOST EVENTS]\n" P "work_done: seq=9 worker=1 name=hello\n");
  e.lost_before = 0;
  expect_line(&e, "CPU:3 [LOST EVENTS]\n" P "work_done: seq=9 worker=1 name=hello\n");
  e.lost_unknown = false;

  /* printk: the format is the event name; its trailing newline is the line's own */
  struct fxtf_event p = make_event(FXT_EVENT_INSTANT, "printk", "got %d from %s\n", 1000001500, 0);
  p.ev.num_args = 2;
  p.ev.args[0] = named(i32(3), "a0");
  p.ev.args[1] = named(s("x"), "a1");
  expect_line(&p, P "printk: got 3 from x\n");
  p.ev.num_args = 1;
  expect_line(&p, P "printk: got 3 from <?>\n");

  /* a thread without a name */
  struct fxtf_thread anon = {.pid = 100, .tid = 102};
  e.thread = &anon;
  e.lost_before = 0;
  expect_line(&e, "           <...>-102     [003] .....     1.000002: work_done: seq=9 worker=1 "
                  "name=hello\n");
}

FXT_TEST_MAIN(
    cmocka_unit_test(test_prefix_columns),
    cmocka_unit_test(test_prefix_rounding),
    cmocka_unit_test(test_prefix_pid_cpu_comm),
    cmocka_unit_test(test_printf_signed),
    cmocka_unit_test(test_printf_length_modifiers),
    cmocka_unit_test(test_printf_unsigned_bases),
    cmocka_unit_test(test_printf_char_string_pointer),
    cmocka_unit_test(test_printf_floats),
    cmocka_unit_test(test_printf_percent_and_text),
    cmocka_unit_test(test_printf_malformed),
    cmocka_unit_test(test_printf_star),
    cmocka_unit_test(test_printf_bad_args),
    cmocka_unit_test(test_printf_width_cap),
    cmocka_unit_test(test_values_and_pairs),
    cmocka_unit_test(test_event_lines_adhoc),
    cmocka_unit_test(test_event_lines_function),
    cmocka_unit_test(test_event_lines_typed_printk_lost))
