/* tests/unit/test_fgraph.c - report's function_graph layout (src/formats/fgraph.h) on an FXT
 * file built here record by record: every duration mark at its threshold (and just under
 * one), the kernel's truncation of the nanoseconds to 7 digits, nesting from the slices'
 * intervals (written in exit order), a comment line indented by the kernel's depth rule, the
 * CPU column's width, a context-switch block with a name cut to 7 and an unnamed thread. The
 * expected lines are worked out by hand from the kernel's trace_functions_graph.c (comments
 * give the arithmetic), never produced by the code under test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "../test_main.h"

#include <stdlib.h>
#include <string.h>

#include "base/fgraph_text.h"
#include "formats/fgraph.h"
#include "formats/fxtfile.h"

#include "fxt_build.h"

#define S 1000000000ull

static struct fxt_thread_ref A, B, C;

/* The kernel's function_graph header (__print_graph_headers_flags, default flags). */
#define HEADER                                                                              \
  "# tracer: function_graph\n"                                                              \
  "#\n"                                                                                     \
  "# CPU  DURATION                  FUNCTION CALLS\n"                                        \
  "# |     |   |                     |   |   |   |\n"

static void slice(struct fxt_thread_ref th, const char *name, uint64_t start, uint64_t dur) {
  struct fxt_event e = event(FXT_EVENT_DURATION_COMPLETE, th, inl("function"), inl(name), start);
  e.trailer = start + dur;
  put(&e);
}

/* A slice with its recorded depth (the tracer's "depth" argument). */
static void slice_at(struct fxt_thread_ref th, const char *name, uint64_t start, uint64_t dur,
                     uint32_t depth) {
  struct fxt_event e = event(FXT_EVENT_DURATION_COMPLETE, th, inl("function"), inl(name), start);
  e.trailer = start + dur;
  arg(&e, FXT_ARG_UINT32, inl("depth"))->value.u32 = depth;
  put(&e);
}

static bool sink(void *ctx, struct fxt_tbuf *b) {
  fxt_tbuf_put(ctx, b->data, b->len);
  b->len = 0;
  return true;
}

/* The built file's layout into out (NUL-terminated), flushed a line at a time. */
static void render(struct fxt_tbuf *out) {
  struct fxtf_file *f = NULL;
  char err[256];
  assert_int_equal(fxtf_load(g_buf, g_len, &f, err, sizeof err), 0);
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  fxt_tbuf_init(out);
  bool any = false;
  assert_int_equal(fxt_fgraph_print(f, NULL, 0, &b, 1, sink, out, &any, err, sizeof err), 0);
  assert_true(any);
  sink(out, &b);
  fxt_tbuf_put(out, "", 1);
  fxt_tbuf_free(&b);
  fxtf_close(f);
}

/* The built file's layout is want, exactly. */
static void expect_layout(const char *want) {
  struct fxt_tbuf out;
  render(&out);
  assert_string_equal(out.data, want);
  fxt_tbuf_free(&out);
}

static void build(void) {
  file_start(10, S); /* 1 tick = 1 ns */
  A = fxt_thread_inline(10, 11);
  B = fxt_thread_inline(20, 21);
  C = fxt_thread_inline(30, 31);
  kobj(FXT_KOBJ_THREAD, 11, "averylongname", 10);
  kobj(FXT_KOBJ_THREAD, 31, "c", 30);
  cpu(A, 0, 12);
  /* In the order the calls return, as the tracer writes them. */
  slice(A, "c1", 2000, 100000001);       /* @: > 100 ms */
  slice(A, "c2", 200000000, 10000001);   /* *: > 10 ms */
  struct fxt_event ev0 = event(FXT_EVENT_INSTANT, A, inl("demo"), inl("ev"), 250000000);
  arg(&ev0, FXT_ARG_UINT32, inl("x"))->value.u32 = 0;
  put(&ev0);
  slice(A, "g1", 300000100, 100001);     /* !: > 100 us */
  struct fxt_event ev = event(FXT_EVENT_INSTANT, A, inl("demo"), inl("ev"), 300200000);
  arg(&ev, FXT_ARG_UINT32, inl("x"))->value.u32 = 1;
  put(&ev);
  slice(A, "g2", 300300000, 10001);      /* +: > 10 us */
  slice(A, "c3", 300000000, 1000001);    /* #: > 1 ms, holds g1 and g2 */
  slice(A, "c4", 400000000, 10000);      /* 10 us exactly: no mark */
  slice(A, "c5", 500000000, 999);
  slice(A, "main", 1000, 2 * S);         /* $: > 1 s, holds c1..c5 */
  cpu(C, 2500000000u, 3);
  slice(C, "cc", 2500000000u, 50);
  cpu(B, 3 * S, 12);
  slice(B, "b", 3 * S, 1234);
}

static void test_layout(void **state) {
  (void)state;
  build();
  /* " %*d) " with the width of the highest CPU, 12; the duration column: mark, ' ', usecs,
   * '.' and the nanoseconds cut so the number has 7 digits at most, " us ", spaces up to 8
   * characters of number, "|  "; then 2 spaces per depth. */
  const char *want =
      HEADER
      " 12)               |  main() {\n"
      " 12) @ 100000.0 us |    c1();\n"     /* 100000 us + 1 ns: 6 digits, 1 decimal */
      " 12) * 10000.00 us |    c2();\n"     /* 5 digits, 2 decimals */
      " 12)               |  /* ev: x=0 */\n" /* depth 0 (main open): not indented */
      " 12)               |    c3() {\n"
      " 12) ! 100.001 us  |      g1();\n"   /* 7 characters: 1 space of padding */
      " 12)               |      /* ev: x=1 */\n" /* depth 1 (main, c3 open): (1+1)*2 */
      " 12) + 10.001 us   |      g2();\n"
      " 12) # 1000.001 us |    }\n"
      " 12)   10.000 us   |    c4();\n"     /* not over 10 us: no mark */
      " 12)   0.999 us    |    c5();\n"
      " 12) $ 2000000 us  |  }\n"           /* 7 digits: no decimals */
      "  3)   0.050 us    |  cc();\n"       /* CPU 3's first line: no block */
      " ------------------------------------------\n"
      " 12)   averylo-11   =>    <...>-21   \n" /* 10 and 8 characters centred in 14 */
      " ------------------------------------------\n"
      "\n"
      " 12)   1.234 us    |  b();\n";
  expect_layout(want);
}

/* A file without slices prints nothing and says so (report prints its plain layout). */
static void test_no_slices(void **state) {
  (void)state;
  file_start(10, S);
  struct fxt_event ev = event(FXT_EVENT_INSTANT, fxt_thread_inline(10, 11), inl("demo"),
                              inl("ev"), 5);
  put(&ev);
  struct fxtf_file *f = NULL;
  char err[256];
  assert_int_equal(fxtf_load(g_buf, g_len, &f, err, sizeof err), 0);
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  bool any = true;
  assert_int_equal(fxt_fgraph_print(f, NULL, 0, &b, 1 << 20, sink, NULL, &any, err, sizeof err), 0);
  assert_false(any);
  assert_int_equal(b.len, 0);
  fxt_tbuf_free(&b);
  fxtf_close(f);
}

/* Calls of one thread that start in the same nanosecond nest by their recorded depths, the
 * outer first, though the file has the inner first (it returned first); also when the outer
 * one ends when it starts, with the inner one (zero-length calls of a coarse clock); a third
 * thread's call of that time between them in the file stays its own. */
static void test_same_start(void **state) {
  (void)state;
  file_start(10, S);
  A = fxt_thread_inline(10, 11);
  B = fxt_thread_inline(20, 21);
  cpu(A, 0, 0);
  cpu(B, 0, 1);
  slice_at(A, "k", 1000, 100, 1);  /* written first: it returned first */
  slice_at(B, "b", 1000, 7, 0);
  slice_at(A, "s", 1200, 50, 1);
  slice_at(A, "p", 1000, 500, 0);  /* holds k and s */
  slice_at(A, "k2", 5000, 0, 2);
  slice_at(A, "k1", 5000, 0, 1);
  slice_at(A, "p2", 5000, 0, 0);   /* holds k1, which holds k2 */
  const char *want =
      HEADER
      " 0)               |  p() {\n"     /* in k's place in the file: A's first */
      " 1)   0.007 us    |  b();\n"       /* its place kept; CPU 1's first line */
      " 0)   0.100 us    |    k();\n"
      " 0)   0.050 us    |    s();\n"
      " 0)   0.500 us    |  }\n"
      " 0)               |  p2() {\n"
      " 0)               |    k1() {\n"
      " 0)   0.000 us    |      k2();\n"
      " 0)   0.000 us    |    }\n"
      " 0)   0.000 us    |  }\n";
  expect_layout(want);
}

/* `fxtrace report -O`'s words as the kernel's trace_options takes them (trace.c's
 * trace_set_options: a leading "no" clears, the name whole; the names are options/'s). */
static void test_option_words(void **state) {
  (void)state;
  static const struct {
    const char *word;
    uint32_t bit; /* the option's FXT_FGRAPH_* */
    bool set;     /* whether the word sets that bit (0 for a word that names no option) */
  } k_cases[] = {
      {"funcgraph-abstime", FXT_FGRAPH_ABSTIME, true},
      {"nofuncgraph-abstime", FXT_FGRAPH_ABSTIME, false},
      {"funcgraph-cpu", FXT_FGRAPH_NO_CPU, false}, /* on by default: its bit says off */
      {"nofuncgraph-cpu", FXT_FGRAPH_NO_CPU, true},
      {"nofuncgraph-duration", FXT_FGRAPH_NO_DURATION, true},
      {"nofuncgraph-overhead", FXT_FGRAPH_NO_OVERHEAD, true},
      {"funcgraph-proc", FXT_FGRAPH_PROC, true},
      {"funcgraph-tail", FXT_FGRAPH_TAIL, true},
      {"nofuncgraph-tail", FXT_FGRAPH_TAIL, false},
      {"funcgraph-", 0, false}, {"no", 0, false}, {"", 0, false}, {"nono", 0, false},
      {"funcgraph-tails", 0, false}, {"funcgraph-tai", 0, false}, {"tail", 0, false},
      {"nonofuncgraph-tail", 0, false}, {"Funcgraph-tail", 0, false},
      {"funcgraph-irqs", 0, false}, /* the kernel's, not the layout's here */
  };
  for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++) {
    size_t len = strlen(k_cases[i].word);
    for (uint32_t before = 0; before < 64; before++) {
      uint32_t opts = before;
      bool named = fxt_fgraph_option_word(k_cases[i].word, len, &opts);
      assert_int_equal(named, k_cases[i].bit != 0);
      uint32_t want = !named ? before
                      : k_cases[i].set ? before | k_cases[i].bit
                                       : before & ~k_cases[i].bit;
      assert_int_equal(opts, want);
    }
  }
  /* A word is len bytes, not a C string: "-O a,b"'s first word. */
  uint32_t opts = 0;
  assert_true(fxt_fgraph_option_word("funcgraph-tail,funcgraph-proc", 14, &opts));
  assert_int_equal(opts, FXT_FGRAPH_TAIL);
  assert_false(fxt_fgraph_option_word("funcgraph-tail,funcgraph-proc", 15, &opts));
}

FXT_TEST_MAIN(
    cmocka_unit_test(test_layout), cmocka_unit_test(test_no_slices),
    cmocka_unit_test(test_same_start), cmocka_unit_test(test_option_words))
