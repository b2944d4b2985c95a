/* tests/unit/test_config.c - fxt_config_parse(): the FXTRACE grammar, field by field.
 *
 * Every expected message and byte position below was written by hand from the grammar in
 * session.h and src/host/config.c's header comment (positions: 0-based offsets into the text,
 * counted by hand; "buffer_kb=" is 10 bytes, so its value starts at 10). Nothing here was
 * produced by running the parser.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../test_main.h"

#include <stdio.h>
#include <string.h>

#include <fxtrace/session.h>

#define KEYS                                                                                 \
  "(keys: events, buffer_kb, total_kb, mode, output, max_file_kb, clock, buffers, trigger, "   \
  "tracer, ftrace_filter, ftrace_notrace, graph_function, graph_notrace, max_graph_depth, "    \
  "tracing_thresh, function_profile, graph_time)"
#define MODES "is not discard, overwrite, block or block:MS (MS 1..3600000)"
#define GLOB_CHARS "not allowed in a glob (allowed: A-Z a-z 0-9 _ * ? [ ] ! : - .)"
#define X10 "xxxxxxxxxx"

/* One input. Valid: rc 0 and the fields; a zero number or NULL string means "the default".
 * Invalid: rc and the exact message; the config must then be all defaults. */
struct tcase {
  const char *text;
  int rc;
  uint32_t mode, block_ms, clock, buffer_kb, total_kb;
  uint64_t max_file_kb;
  const char *events, *output;
  const char *msg;
  const char *buffers, *trigger; /* NULL: the default (NULL) */
};

static const struct tcase k_cases[] = {
    /* defaults, blanks and empty entries */
    {.text = ""},
    {.text = "   "},
    {.text = ";;;"},
    {.text = " ;\t; ;"},
    /* events */
    {.text = "events=demo:*,net:*", .events = "demo:*,net:*"},
    {.text = "events=demo", .events = "demo:*"},
    {.text = "events= demo , net:rx_* ,\tsched ", .events = "demo:*,net:rx_*,sched:*"},
    {.text = "events=", .events = ""},
    {.text = "events=  \t ", .events = ""},
    {.text = "events=*", .events = "*:*"},
    {.text = "events=d[ae]mo:ev?nt_[!0-9]*", .events = "d[ae]mo:ev?nt_[!0-9]*"},
    {.text = "events=a[]]b:x", .events = "a[]]b:x"}, /* POSIX: first ']' is a member */
    {.text = "events=my.lib:x-y", .events = "my.lib:x-y"},
    /* numbers */
    {.text = "buffer_kb=512", .buffer_kb = 512},
    {.text = "buffer_kb=1", .buffer_kb = 1},
    {.text = "buffer_kb=2097152", .buffer_kb = 2097152},
    {.text = "buffer_kb=007", .buffer_kb = 7}, /* decimal, not octal */
    {.text = "total_kb=1", .total_kb = 1},
    {.text = "total_kb=4294967295", .total_kb = 4294967295u},
    {.text = "max_file_kb=0", .max_file_kb = 0},
    {.text = "max_file_kb=18014398509481984", .max_file_kb = UINT64_C(18014398509481984)},
    /* mode: the last mode entry sets the timeout too */
    {.text = "mode=discard", .mode = FXT_MODE_DISCARD},
    {.text = "mode=overwrite", .mode = FXT_MODE_OVERWRITE},
    {.text = "mode=block", .mode = FXT_MODE_BLOCK, .block_ms = 10},
    {.text = "mode=block:250", .mode = FXT_MODE_BLOCK, .block_ms = 250},
    {.text = "mode=block:1", .mode = FXT_MODE_BLOCK, .block_ms = 1},
    {.text = "mode=block:3600000", .mode = FXT_MODE_BLOCK, .block_ms = 3600000},
    {.text = "mode=block:0010", .mode = FXT_MODE_BLOCK, .block_ms = 10},
    {.text = "mode=block:50;mode=discard", .mode = FXT_MODE_DISCARD, .block_ms = 10},
    /* clock */
    {.text = "clock=auto", .clock = FXT_CLOCK_AUTO},
    {.text = "clock=tsc", .clock = FXT_CLOCK_TSC},
    {.text = "clock=monotonic", .clock = FXT_CLOCK_MONOTONIC},
    /* output: stored as given, %p not expanded */
    {.text = "output=fd:3", .output = "fd:3"},
    {.text = "output=fd:0", .output = "fd:0"},
    {.text = "output=", .output = ""},
    {.text = "output=run-%p.fxt", .output = "run-%p.fxt"},
    {.text = "output=100%%-%p", .output = "100%%-%p"},
    {.text = "output= /tmp/my trace.fxt\t", .output = "/tmp/my trace.fxt"},
    {.text = "output=a=b", .output = "a=b"},
    /* buffers, trigger: stored as given ("" too: anonymous memory, no trigger) */
    {.text = "buffers=/dev/shm/run", .buffers = "/dev/shm/run"},
    {.text = "buffers=", .buffers = ""},
    {.text = "trigger=crash-%p.fxt", .trigger = "crash-%p.fxt"},
    {.text = "mode=overwrite;output=;trigger= /tmp/c.fxt ;buffers=/x", .mode = FXT_MODE_OVERWRITE,
     .output = "", .trigger = "/tmp/c.fxt", .buffers = "/x"},
    /* duplicates: the last wins */
    {.text = "buffer_kb=1;buffer_kb=2", .buffer_kb = 2},
    {.text = "events=a;events=b", .events = "b:*"},
    {.text = "output=x;output=", .output = ""},
    /* everything, with blanks */
    {.text = "events=demo:*,net:*;buffer_kb=512;mode=overwrite;output=run-%p.fxt",
     .events = "demo:*,net:*", .buffer_kb = 512, .mode = FXT_MODE_OVERWRITE,
     .output = "run-%p.fxt"},
    {.text = "  buffer_kb\t=\t64  ;  clock = tsc ;", .buffer_kb = 64, .clock = FXT_CLOCK_TSC},
    {.text = " total_kb = 1024 ; max_file_kb = 4096 ; mode = block:5 ;;",
     .total_kb = 1024, .max_file_kb = 4096, .mode = FXT_MODE_BLOCK, .block_ms = 5},

    /* ---- output: stdout is the program's; fd:N is a descriptor number ---- */
    {"output=-", FXT_EINVAL, .msg = "FXTRACE: at 7: output=-: the trace would be mixed with the "
                                    "program's own stdout: give output=fd:N, a descriptor it "
                                    "inherits (as in FXTRACE=output=fd:3 ./app 3>trace.fxt), or "
                                    "a file"},
    {"output=fd:", FXT_EINVAL, .msg = "FXTRACE: at 7: output: 'fd:' is not fd:N, a descriptor "
                                      "number"},
    {"output=fd:3x", FXT_EINVAL, .msg = "FXTRACE: at 7: output: 'fd:3x' is not fd:N, a "
                                        "descriptor number"},
    {"output=fd:2147483648", FXT_EINVAL, .msg = "FXTRACE: at 7: output: 'fd:2147483648' is not "
                                                "fd:N, a descriptor number"},

    /* ---- numbers: position = the value's first non-blank byte ---- */
    {"buffer_kb=abc", FXT_EINVAL, .msg = "FXTRACE: at 10: buffer_kb: 'abc' is not a number of "
                                         "KiB (1..2097152)"},
    {"buffer_kb=0", FXT_EINVAL, .msg = "FXTRACE: at 10: buffer_kb: '0' is not a number of KiB "
                                       "(1..2097152)"},
    {"buffer_kb=12x", FXT_EINVAL, .msg = "FXTRACE: at 10: buffer_kb: '12x' is not a number of "
                                         "KiB (1..2097152)"},
    {"buffer_kb=", FXT_EINVAL, .msg = "FXTRACE: at 10: buffer_kb: '' is not a number of KiB "
                                      "(1..2097152)"},
    {"buffer_kb=   ;", FXT_EINVAL, .msg = "FXTRACE: at 13: buffer_kb: '' is not a number of "
                                          "KiB (1..2097152)"},
    {"buffer_kb=2097153", FXT_EINVAL, .msg = "FXTRACE: at 10: buffer_kb: '2097153' is not a "
                                             "number of KiB (1..2097152)"},
    {"buffer_kb=-1", FXT_EINVAL, .msg = "FXTRACE: at 10: buffer_kb: '-1' is not a number of "
                                        "KiB (1..2097152)"},
    {"buffer_kb=+1", FXT_EINVAL, .msg = "FXTRACE: at 10: buffer_kb: '+1' is not a number of "
                                        "KiB (1..2097152)"},
    {"buffer_kb=1 2", FXT_EINVAL, .msg = "FXTRACE: at 10: buffer_kb: '1 2' is not a number of "
                                         "KiB (1..2097152)"},
    {"buffer_kb=0x10", FXT_EINVAL, .msg = "FXTRACE: at 10: buffer_kb: '0x10' is not a number "
                                          "of KiB (1..2097152)"},
    {"buffer_kb=1\n", FXT_EINVAL, .msg = "FXTRACE: at 10: buffer_kb: '1\n' is not a number of "
                                         "KiB (1..2097152)"}, /* '\n' is not a blank */
    {"buffer_kb=99999999999999999999999", FXT_EINVAL,
     .msg = "FXTRACE: at 10: buffer_kb: '99999999999999999999999' is not a number of KiB "
            "(1..2097152)"},
    {"total_kb=0", FXT_EINVAL, .msg = "FXTRACE: at 9: total_kb: '0' is not a number of KiB "
                                      "(1..4294967295)"},
    {"total_kb=4294967296", FXT_EINVAL, .msg = "FXTRACE: at 9: total_kb: '4294967296' is not a "
                                               "number of KiB (1..4294967295)"},
    {"max_file_kb=18014398509481985", FXT_EINVAL,
     .msg = "FXTRACE: at 12: max_file_kb: '18014398509481985' is not a number of KiB "
            "(0..18014398509481984)"},
    {"max_file_kb=1k", FXT_EINVAL, .msg = "FXTRACE: at 12: max_file_kb: '1k' is not a number "
                                          "of KiB (0..18014398509481984)"},
    /* ---- mode, clock ---- */
    {"mode=fast", FXT_EINVAL, .msg = "FXTRACE: at 5: mode: 'fast' " MODES},
    {"mode=Discard", FXT_EINVAL, .msg = "FXTRACE: at 5: mode: 'Discard' " MODES},
    {"mode=block:0", FXT_EINVAL, .msg = "FXTRACE: at 5: mode: 'block:0' " MODES},
    {"mode=block:", FXT_EINVAL, .msg = "FXTRACE: at 5: mode: 'block:' " MODES},
    {"mode=block:3600001", FXT_EINVAL, .msg = "FXTRACE: at 5: mode: 'block:3600001' " MODES},
    {"mode=block: 5", FXT_EINVAL, .msg = "FXTRACE: at 5: mode: 'block: 5' " MODES},
    {"mode =  ", FXT_EINVAL, .msg = "FXTRACE: at 8: mode: '' " MODES},
    {"mode=" X10 X10 X10 X10 X10, FXT_EINVAL, /* quoted values stop at 40 bytes */
     .msg = "FXTRACE: at 5: mode: '" X10 X10 X10 X10 "...' " MODES},
    {"clock=rdtsc", FXT_EINVAL, .msg = "FXTRACE: at 6: clock: 'rdtsc' is not auto, tsc or "
                                       "monotonic"},
    /* the function tracer's keys: checked here, applied by the tracer (functions_ctl.c) */
    {.text = "tracer=function_graph;ftrace_filter=fib*,main;max_graph_depth=3;tracing_thresh=0"},
    {.text = "tracer=function;ftrace_notrace=;graph_function=a b;graph_notrace=x*"},
    {"tracer=graph", FXT_EINVAL, .msg = "FXTRACE: at 7: tracer: 'graph' is not nop, function "
                                        "or function_graph"},
    {"max_graph_depth=-1", FXT_EINVAL, .msg = "FXTRACE: at 16: max_graph_depth: '-1' is not a "
                                              "number (0..4294967295)"},
    {"tracing_thresh=4294967296", FXT_EINVAL, .msg = "FXTRACE: at 15: tracing_thresh: "
                                                     "'4294967296' is not a number "
                                                     "(0..4294967295)"},
    {.text = "function_profile=1;function_profile=0"},
    {"function_profile=2", FXT_EINVAL, .msg = "FXTRACE: at 17: function_profile: '2' is not 0 "
                                              "or 1"},
    {.text = "graph_time=0;function_profile=1;graph_time=1"},
    {"graph_time=", FXT_EINVAL, .msg = "FXTRACE: at 11: graph_time: '' is not 0 or 1"},
    /* ---- keys and entries ---- */
    {"bufer_kb=512", FXT_EINVAL, .msg = "FXTRACE: at 0: unknown key 'bufer_kb' " KEYS},
    {"events=demo;  BUFFER_KB=1", FXT_EINVAL, .msg = "FXTRACE: at 14: unknown key 'BUFFER_KB' "
                                                     KEYS},
    {"=5", FXT_EINVAL, .msg = "FXTRACE: at 0: unknown key '' " KEYS},
    {"buffer_kb", FXT_EINVAL, .msg = "FXTRACE: at 0: expected key=value, got 'buffer_kb'"},
    {"clock=tsc; verbose ;", FXT_EINVAL, .msg = "FXTRACE: at 11: expected key=value, got "
                                                "'verbose'"},
    /* ---- events ---- */
    {"events=demo,,net", FXT_EINVAL, .msg = "FXTRACE: at 12: events: empty glob (globs are "
                                            "separated by ',')"},
    {"events=demo,", FXT_EINVAL, .msg = "FXTRACE: at 12: events: empty glob (globs are "
                                        "separated by ',')"},
    {"events=,demo", FXT_EINVAL, .msg = "FXTRACE: at 7: events: empty glob (globs are "
                                        "separated by ',')"},
    {"events=de$mo", FXT_EINVAL, .msg = "FXTRACE: at 9: events: 'de$mo' has '$', " GLOB_CHARS},
    {"events=de mo", FXT_EINVAL, .msg = "FXTRACE: at 9: events: 'de mo' has '\\x20', "
                                        GLOB_CHARS},
    {"events=ok, bad$", FXT_EINVAL, .msg = "FXTRACE: at 14: events: 'bad$' has '$', "
                                           GLOB_CHARS},
    {"events=a:b:c", FXT_EINVAL, .msg = "FXTRACE: at 10: events: 'a:b:c' has more than one "
                                        "':'"},
    {"events=net:rx[ab", FXT_EINVAL, .msg = "FXTRACE: at 13: events: 'net:rx[ab' has an "
                                            "unclosed '['"},
    {"events=net[a:b]", FXT_EINVAL, .msg = "FXTRACE: at 10: events: 'net[a:b]' has an unclosed "
                                           "'['"},
    {"events=[]", FXT_EINVAL, .msg = "FXTRACE: at 7: events: '[]' has an unclosed '['"},
    {"events=net]", FXT_EINVAL, .msg = "FXTRACE: at 10: events: 'net]' has a ']' without '['"},
    {"events=demo:", FXT_EINVAL, .msg = "FXTRACE: at 11: events: 'demo:' has an empty name "
                                        "beside ':'"},
    {"events=:x", FXT_EINVAL, .msg = "FXTRACE: at 7: events: ':x' has an empty name beside "
                                     "':'"},
    /* ---- output ---- */
    {"output=run-%d.fxt", FXT_EINVAL, .msg = "FXTRACE: at 11: output: 'run-%d.fxt' has a '%' "
                                             "not followed by 'p' or '%'"},
    {"output=100%", FXT_EINVAL, .msg = "FXTRACE: at 10: output: '100%' has a '%' not followed "
                                       "by 'p' or '%'"},
    {"output=%%%", FXT_EINVAL, .msg = "FXTRACE: at 9: output: '%%%' has a '%' not followed by "
                                      "'p' or '%'"},
    /* ---- errors reset everything parsed before; every duplicate must be valid ---- */
    {"buffer_kb=512;mode=overwrite;clock=tsc;events=demo;output=x;total_kb=0", FXT_EINVAL,
     .msg = "FXTRACE: at 69: total_kb: '0' is not a number of KiB (1..4294967295)"},
    {"buffer_kb=x;buffer_kb=5", FXT_EINVAL, .msg = "FXTRACE: at 10: buffer_kb: 'x' is not a "
                                                   "number of KiB (1..2097152)"},
    {"mode=x;clock=y", FXT_EINVAL, .msg = "FXTRACE: at 5: mode: 'x' " MODES}, /* first wins */
};

static char g_strbuf[8192];

static int in_strbuf(const char *s) {
  uintptr_t a = (uintptr_t)s, b = (uintptr_t)g_strbuf;
  return a >= b && a - b < sizeof g_strbuf;
}

/* All defaults, spelled out from session.h; the default strings are not in strbuf. */
static void expect_defaults(const struct fxt_session_config *c) {
  assert_int_equal(c->struct_size, sizeof(struct fxt_session_config));
  assert_int_equal(c->mode, FXT_MODE_DISCARD);
  assert_int_equal(c->block_timeout_ms, 10);
  assert_int_equal(c->clock, FXT_CLOCK_AUTO);
  assert_int_equal(c->buffer_kb, 4096);
  assert_int_equal(c->total_kb, 1048576);
  assert_true(c->max_file_kb == 0);
  assert_string_equal(c->events, "*:*");
  assert_string_equal(c->output, "fxtrace-%p.fxt");
  assert_false(in_strbuf(c->events));
  assert_false(in_strbuf(c->output));
}

static void check_string(const char *got, const char *want, const char *dflt) {
  if (want == NULL) {
    assert_string_equal(got, dflt);
    assert_false(in_strbuf(got));
  } else {
    assert_string_equal(got, want);
    assert_true(in_strbuf(got));
  }
}

/* A string whose default is NULL. */
static void check_optional(const char *got, const char *want) {
  if (want == NULL) {
    assert_null(got);
  } else {
    assert_non_null(got);
    assert_string_equal(got, want);
    assert_true(in_strbuf(got));
  }
}

static void expect_case(const struct tcase *t, const struct fxt_session_config *c) {
  assert_int_equal(c->struct_size, sizeof *c);
  assert_int_equal(c->mode, t->mode);
  assert_int_equal(c->block_timeout_ms, t->block_ms ? t->block_ms : 10);
  assert_int_equal(c->clock, t->clock);
  assert_int_equal(c->buffer_kb, t->buffer_kb ? t->buffer_kb : 4096);
  assert_int_equal(c->total_kb, t->total_kb ? t->total_kb : 1048576);
  assert_true(c->max_file_kb == t->max_file_kb);
  check_string(c->events, t->events, "*:*");
  check_string(c->output, t->output, "fxtrace-%p.fxt");
  check_optional(c->buffers, t->buffers);
  check_optional(c->trigger, t->trigger);
}

static void test_table(void **state) {
  (void)state;
  assert_true(sizeof k_cases / sizeof k_cases[0] >= 40);
  for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++) {
    const struct tcase *t = &k_cases[i];
    struct fxt_session_config cfg;
    char err[512];
    memset(&cfg, 0x5A, sizeof cfg); /* garbage in: the parser resets it */
    memcpy(err, "junk", 5);
    print_message("case %zu: %s\n", i, t->text);
    int rc = fxt_config_parse(t->text, &cfg, g_strbuf, sizeof g_strbuf, err, sizeof err);
    assert_int_equal(rc, t->rc);
    if (t->rc == 0) {
      assert_string_equal(err, "");
      expect_case(t, &cfg);
    } else {
      assert_string_equal(err, t->msg);
      expect_defaults(&cfg);
    }
  }
}

static void test_defaults(void **state) {
  (void)state;
  struct fxt_session_config cfg;
  char err[64] = "junk";
  assert_int_equal(fxt_config_parse("", &cfg, NULL, 0, err, sizeof err), 0);
  expect_defaults(&cfg);
  assert_string_equal(err, "");
  /* NULL text (an unset variable) is the empty text */
  assert_int_equal(fxt_config_parse(NULL, &cfg, NULL, 0, NULL, 0), 0);
  expect_defaults(&cfg);
  /* numbers and words need no strbuf at all */
  assert_int_equal(fxt_config_parse("buffer_kb=8;clock=tsc", &cfg, NULL, 0, NULL, 0), 0);
  assert_int_equal(cfg.buffer_kb, 8);
  assert_int_equal(cfg.clock, FXT_CLOCK_TSC);
}

static void test_strbuf_layout(void **state) {
  (void)state;
  struct fxt_session_config cfg;
  char buf[8];
  /* "a:*\0" then "bc\0": 7 bytes, events first; buf[7] is never written */
  memset(buf, 0x7E, sizeof buf);
  assert_int_equal(fxt_config_parse("output=bc;events=a", &cfg, buf, 7, NULL, 0), 0);
  assert_ptr_equal(cfg.events, buf);
  assert_ptr_equal(cfg.output, buf + 4);
  assert_memory_equal(buf, "a:*\0bc\0\x7E", 8);
  /* a repeated key costs no strbuf space: only the last value is stored */
  memset(buf, 0x7E, sizeof buf);
  assert_int_equal(fxt_config_parse("events=abcdef;events=a", &cfg, buf, 4, NULL, 0), 0);
  assert_ptr_equal(cfg.events, buf);
  assert_memory_equal(buf, "a:*\0\x7E", 5);
}

static void test_enobufs(void **state) {
  (void)state;
  struct fxt_session_config cfg;
  char buf[16], err[128];
  /* "demo:*\0" is 7 bytes */
  memset(buf, 0x7E, sizeof buf);
  assert_int_equal(fxt_config_parse("events=demo", &cfg, buf, 6, err, sizeof err),
                   FXT_ENOBUFS);
  assert_string_equal(err, "FXTRACE: strbuf has 6 bytes, the events and output strings need 7");
  expect_defaults(&cfg);
  assert_int_equal((unsigned char)buf[6], 0x7E); /* nothing past strbuf_size */
  assert_int_equal(fxt_config_parse("events=demo", &cfg, buf, 7, err, sizeof err), 0);
  assert_string_equal(cfg.events, "demo:*");
  /* "" still needs its NUL */
  assert_int_equal(fxt_config_parse("output=", &cfg, NULL, 0, err, sizeof err), FXT_ENOBUFS);
  assert_string_equal(err, "FXTRACE: strbuf has 0 bytes, the events and output strings need 1");
  /* both strings: 4 + 3 */
  assert_int_equal(fxt_config_parse("events=a;output=bc", &cfg, buf, 6, err, sizeof err),
                   FXT_ENOBUFS);
  assert_string_equal(err, "FXTRACE: strbuf has 6 bytes, the events and output strings need 7");
  /* a malformed text is EINVAL whatever the strbuf: "events=demo;clock=" is 18 bytes */
  assert_int_equal(fxt_config_parse("events=demo;clock=x", &cfg, NULL, 0, err, sizeof err),
                   FXT_EINVAL);
  assert_string_equal(err, "FXTRACE: at 18: clock: 'x' is not auto, tsc or monotonic");
}

static void test_err_buffer(void **state) {
  (void)state;
  struct fxt_session_config cfg;
  char err[32];
  /* err NULL: same result, same reset */
  assert_int_equal(fxt_config_parse("buffer_kb=abc", &cfg, g_strbuf, sizeof g_strbuf, NULL, 0),
                   FXT_EINVAL);
  expect_defaults(&cfg);
  assert_int_equal(fxt_config_parse("buffer_kb=abc", &cfg, g_strbuf, sizeof g_strbuf, NULL, 99),
                   FXT_EINVAL);
  /* err_size 0: err untouched */
  memcpy(err, "keep", 5);
  assert_int_equal(fxt_config_parse("x", &cfg, NULL, 0, err, 0), FXT_EINVAL);
  assert_string_equal(err, "keep");
  assert_int_equal(fxt_config_parse("", &cfg, NULL, 0, err, 0), 0);
  assert_string_equal(err, "keep");
  /* truncated, always NUL-terminated */
  memset(err, 0x7E, sizeof err);
  assert_int_equal(fxt_config_parse("buffer_kb=abc", &cfg, NULL, 0, err, 12), FXT_EINVAL);
  assert_string_equal(err, "FXTRACE: at");
  assert_int_equal((unsigned char)err[12], 0x7E);
  assert_int_equal(fxt_config_parse("buffer_kb=abc", &cfg, NULL, 0, err, 17), FXT_EINVAL);
  assert_string_equal(err, "FXTRACE: at 10: "); /* the prefix alone, exactly */
  assert_int_equal(fxt_config_parse("buffer_kb=abc", &cfg, NULL, 0, err, 1), FXT_EINVAL);
  assert_string_equal(err, "");
  assert_int_equal(fxt_config_parse("events=demo", &cfg, NULL, 0, err, 9), FXT_ENOBUFS);
  assert_string_equal(err, "FXTRACE:");
  /* cfg NULL */
  assert_int_equal(fxt_config_parse("", NULL, NULL, 0, err, sizeof err), FXT_EINVAL);
  assert_string_equal(err, "FXTRACE: at 0: cfg is NULL");
}

static void test_output_length(void **state) {
  (void)state;
  static char text[7 + 4096 + 1];
  struct fxt_session_config cfg;
  char err[128];
  memcpy(text, "output=", 7);
  memset(text + 7, 'a', 4096);
  text[7 + 4096] = '\0';
  assert_int_equal(fxt_config_parse(text, &cfg, g_strbuf, sizeof g_strbuf, err, sizeof err),
                   FXT_EINVAL);
  assert_string_equal(err, "FXTRACE: at 7: output: 4096 bytes is longer than the limit of 4095");
  expect_defaults(&cfg);
  text[7 + 4095] = '\0';
  assert_int_equal(fxt_config_parse(text, &cfg, g_strbuf, sizeof g_strbuf, err, sizeof err), 0);
  assert_int_equal(strlen(cfg.output), 4095);
  assert_true(in_strbuf(cfg.output));
  /* exactly the 4096 bytes it needs */
  assert_int_equal(fxt_config_parse(text, &cfg, g_strbuf, 4096, err, sizeof err), 0);
  assert_int_equal(fxt_config_parse(text, &cfg, g_strbuf, 4095, err, sizeof err), FXT_ENOBUFS);
}

/* A glob list of 4096 bytes is one too long, and the message names the key it was given to. */
static void test_glob_length(void **state) {
  (void)state;
  static const char *const keys[] = {"ftrace_filter", "ftrace_notrace", "graph_function",
                                     "graph_notrace"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    static char text[32 + 4096 + 1], want[128];
    struct fxt_session_config cfg;
    char err[128];
    size_t at = (size_t)snprintf(text, sizeof text, "%s=", keys[i]);
    memset(text + at, 'a', 4096);
    text[at + 4096] = '\0';
    assert_int_equal(fxt_config_parse(text, &cfg, g_strbuf, sizeof g_strbuf, err, sizeof err),
                     FXT_EINVAL);
    snprintf(want, sizeof want, "FXTRACE: at %zu: %s: 4096 bytes is longer than the limit of 4095",
             at, keys[i]);
    assert_string_equal(err, want);
    text[at + 4095] = '\0';
    assert_int_equal(fxt_config_parse(text, &cfg, g_strbuf, sizeof g_strbuf, err, sizeof err), 0);
  }
}

FXT_TEST_MAIN(
    cmocka_unit_test(test_table), cmocka_unit_test(test_defaults),
    cmocka_unit_test(test_strbuf_layout), cmocka_unit_test(test_enobufs),
    cmocka_unit_test(test_err_buffer), cmocka_unit_test(test_output_length),
    cmocka_unit_test(test_glob_length))
