/* test_functions.c - the function tracer (src/host/functions*.c) on the functions of
 * fn/fn_traced.c, switched on and off with the tracefs files, its records read back from the
 * session's file. Built twice: test_functions, fn_traced.c with -finstrument-functions;
 * test_functions_pe (FXT_TEST_PE), with -fpatchable-function-entry=11,9: the patchable-entry
 * engine (functions_pe.c), whose own tests are at the end. test_functions_pe_cet and
 * test_functions_pe_cet_other (FXT_TEST_PE_CET): the same with -fcf-protection, fn_traced.c
 * built by this build's compiler and by the other one (gcc, clang): its exported functions
 * start with endbr64 (the engine's endbr layout), its static ones do not.
 *
 * Expected values come from the programs' own structure: fib(n) makes C(n) = 1 + C(n-1) +
 * C(n-2) activations (C(0) = C(1) = 1), computed here by a loop; a call tree's depth and the
 * functions it calls are the source's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fxtrace/functions.h>
#include <fxtrace/fxt.h>
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../fxtcount.h"
#include "../sanitizers.h"
#include "fn/fn_session.h"
#include "fn/fn_traced.h"

#define MAX_EVENTS 400000

struct ev {
  uint32_t type;       /* FXT_EVENT_INSTANT or FXT_EVENT_DURATION_COMPLETE */
  char name[64];       /* the function */
  char parent[64];     /* function tracer: the "parent" argument */
  uint64_t start, end; /* end: complete events only */
  uint64_t tid;
  uint32_t depth;      /* complete events: the "depth" argument (UINT32_MAX: none) */
};

static struct ev evs[MAX_EVENTS];
static size_t nevs;
static uint64_t dropped; /* drop_stats, overrun and lost records' counts */
static char path[256];

/* Activations of fib(n). */
static uint64_t fib_calls(int n)
{
  uint64_t a = 1, b = 1; /* C(0), C(1) */
  for (int i = 2; i <= n; i++) {
    uint64_t c = 1 + a + b;
    a = b;
    b = c;
  }
  return n == 0 ? a : b;
}

/* Calls of fib(n)'s tree at recursion level l (fib(n) itself at 0). */
static uint64_t fib_level(int n, uint32_t l)
{
  if (l == 0)
    return 1;
  return n < 2 ? 0 : fib_level(n - 1, l - 1) + fib_level(n - 2, l - 1);
}

static void copy_str(char *dst, size_t size, const struct fxt_str_ref *r)
{
  size_t n = r->len < size - 1 ? r->len : size - 1;
  memcpy(dst, r->data, n);
  dst[n] = 0;
}

static void start(void)
{
  fn_session_start(path, sizeof(path), "functions", 8192, FXT_CLOCK_AUTO);
}

static void echo(const char *file, const char *value)
{
  ssize_t rc = fxt_fs_echo(file, value);
  if (rc < 0)
    fail_msg("echo '%s' > %s: %zd", value, file, rc);
}

/* Stops the session and reads the function tracer's records of its file. */
static void stop_and_read(void)
{
  echo("current_tracer", "nop");
  assert_int_equal(fxt_session_stop(), 0);
  static struct fxt_str_slot table[FXT_STRING_TABLE_SIZE];
  size_t n = 0;
  unsigned char *buf = fxtcount_read(path, &n);
  assert_non_null(buf);
  struct fxt_decoder d;
  fxt_decoder_init(&d, buf, n, table);
  static struct fxt_record r;
  char err[256];
  int rc;
  nevs = 0;
  dropped = 0;
  while ((rc = fxt_decoder_next(&d, &r, err, sizeof(err))) == 1) {
    if (r.kind != FXT_KIND_EVENT)
      continue;
    const struct fxt_event *e = &r.u.event;
    if (fxtcount_is(&e->category, "kernel:meta") &&
        (fxtcount_is(&e->name, "drop_stats") || fxtcount_is(&e->name, "overrun") ||
         fxtcount_is(&e->name, "lost")))
      dropped += e->num_args ? e->args[0].value.u32 : 0;
    if (!fxtcount_is(&e->category, "function"))
      continue;
    if (nevs == MAX_EVENTS)
      continue; /* kept: the first MAX_EVENTS (test_switching may write more; the others'
                   exact counts fail) */
    struct ev *v = &evs[nevs++];
    memset(v, 0, sizeof(*v));
    v->type = e->type;
    copy_str(v->name, sizeof(v->name), &e->name);
    v->start = e->timestamp;
    v->end = e->type == FXT_EVENT_DURATION_COMPLETE ? e->trailer : e->timestamp;
    v->tid = e->thread.thread_koid;
    if (e->num_args == 1 && fxtcount_is(&e->args[0].name, "parent"))
      copy_str(v->parent, sizeof(v->parent), &e->args[0].value.str);
    v->depth = UINT32_MAX;
    if (e->type == FXT_EVENT_DURATION_COMPLETE && e->num_args == 1 &&
        e->args[0].type == FXT_ARG_UINT32 && fxtcount_is(&e->args[0].name, "depth"))
      v->depth = e->args[0].value.u32;
  }
  free(buf);
  unlink(path);
  if (rc != 0)
    fail_msg("decoding %s: %s", path, err);
}

static uint64_t count(uint32_t type, const char *name)
{
  uint64_t c = 0;
  for (size_t i = 0; i < nevs; i++)
    c += evs[i].type == type && strcmp(evs[i].name, name) == 0;
  return c;
}

static uint64_t slices(const char *name)
{
  return count(FXT_EVENT_DURATION_COMPLETE, name);
}

/* The slices of each thread nest: sorted by start (then longest first), each one ends by the
 * end of every slice still open around it. Returns the deepest nesting seen; depth_bad: the
 * slices whose recorded depth is not the number of slices open around them. */
static size_t depth_bad;
static int by_start(const void *x, const void *y)
{
  const struct ev *a = x, *b = y;
  if (a->tid != b->tid)
    return a->tid < b->tid ? -1 : 1;
  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  return a->end > b->end ? -1 : a->end < b->end;
}

static int check_nesting(void)
{
  static struct ev sorted[MAX_EVENTS];
  size_t n = 0;
  for (size_t i = 0; i < nevs; i++)
    if (evs[i].type == FXT_EVENT_DURATION_COMPLETE)
      sorted[n++] = evs[i];
  qsort(sorted, n, sizeof(*sorted), by_start);
  depth_bad = 0;
  static const struct ev *open[4096];
  int depth = 0, deepest = 0;
  for (size_t i = 0; i < n; i++) {
    const struct ev *e = &sorted[i];
    assert_true(e->start <= e->end);
    while (depth > 0 && (open[depth - 1]->tid != e->tid || open[depth - 1]->end <= e->start))
      depth--;
    if (depth > 0 && e->end > open[depth - 1]->end)
      fail_msg("%s [%llu, %llu] overlaps %s [%llu, %llu]", e->name,
               (unsigned long long)e->start, (unsigned long long)e->end, open[depth - 1]->name,
               (unsigned long long)open[depth - 1]->start,
               (unsigned long long)open[depth - 1]->end);
    assert_true(depth < 4096);
    depth_bad += e->depth != (uint32_t)depth;
    open[depth++] = e;
    deepest = depth > deepest ? depth : deepest;
  }
  return deepest;
}

static uint64_t cut_count(void)
{
  struct fxt_functions_counts c = {.struct_size = sizeof(c)};
  assert_int_equal(fxt_functions_counts(&c), 0);
  return c.cut;
}

static void read_file(const char *file, char *buf, size_t size)
{
  ssize_t n = fxt_fs_cat(file, buf, size);
  assert_true(n >= 0);
  buf[n < (ssize_t)size ? n : (ssize_t)size - 1] = 0;
}

/* ---- the tests -------------------------------------------------------------------------- */

/* function_graph: every activation of fib is one slice, nested as the recursion. */
static void test_graph_counts(void **state)
{
  (void)state;
  uint64_t cut = cut_count();
  start();
  echo("current_tracer", "function_graph");
  assert_int_equal(fn_driver(15), 610);
  stop_and_read();
  assert_int_equal(dropped, 0);
  assert_int_equal(slices("fn_driver"), 1);
  assert_int_equal(slices("fn_fib"), fib_calls(15)); /* 1973 */
  /* fn_driver, then fib(15) down to fib(1): 15 levels of fib under it */
  assert_int_equal(check_nesting(), 16);
  assert_int_equal(depth_bad, 0); /* each slice's depth: the slices open around it */
  /* and the recursion's: fn_driver at 0, fib's calls at level L - 1 of fib(15)'s tree at L */
  for (uint32_t d = 0; d <= 16; d++) {
    uint64_t got = 0;
    for (size_t i = 0; i < nevs; i++)
      got += evs[i].type == FXT_EVENT_DURATION_COMPLETE && evs[i].depth == d;
    if (got != (d == 0 ? 1 : fib_level(15, d - 1)))
      fail_msg("%llu slices at depth %u, want %llu", (unsigned long long)got, d,
               (unsigned long long)(d == 0 ? 1 : fib_level(15, d - 1)));
  }
  assert_int_equal(cut_count(), cut);
}

/* function: one instant per call, its caller as "parent". */
static void test_function_parent(void **state)
{
  (void)state;
  start();
  echo("current_tracer", "function");
  fn_driver(6);
  stop_and_read();
  assert_int_equal(count(FXT_EVENT_INSTANT, "fn_fib"), fib_calls(6));
  assert_int_equal(count(FXT_EVENT_INSTANT, "fn_driver"), 1);
  uint64_t from_driver = 0, from_fib = 0;
  for (size_t i = 0; i < nevs; i++) {
    if (strcmp(evs[i].name, "fn_fib") != 0)
      continue;
    from_driver += strcmp(evs[i].parent, "fn_driver") == 0;
    from_fib += strcmp(evs[i].parent, "fn_fib") == 0;
  }
  assert_int_equal(from_driver, 1);
  assert_int_equal(from_fib, fib_calls(6) - 1);
  /* fn_driver's caller is this test, which is not instrumented: found by its address */
  for (size_t i = 0; i < nevs; i++)
    if (strcmp(evs[i].name, "fn_driver") == 0)
      assert_string_equal(evs[i].parent, "test_function_parent");
}

/* The functions that can be traced are the executable's and those of objects built with the
 * flags: libc's are not in available_filter_functions and no filter takes them; the function
 * tracer still names a caller in libc (its table then holds every object's functions) where
 * it knows the return address (the patchable-entry engine; -finstrument-functions' hooks name
 * the traced function below, fn_phdr_count). */
static void test_traceable_only(void **state)
{
  (void)state;
  static char buf[1 << 20];
  start();
  echo("current_tracer", "function_graph");
  read_file("available_filter_functions", buf, sizeof(buf));
  assert_true(strncmp(buf, "fn_fib\n", 7) == 0 || strstr(buf, "\nfn_fib\n"));
  assert_null(strstr(buf, " [libc.so")); /* (a sanitizer's interceptors are the executable's) */
  assert_int_equal(fxt_fs_echo("set_ftrace_filter", "__libc_start_main"), FXT_EINVAL);
  echo("current_tracer", "function");
  read_file("available_filter_functions", buf, sizeof(buf));
  assert_null(strstr(buf, " [libc.so"));
  assert_int_equal(fxt_fs_echo("set_ftrace_filter", "__libc_start_main"), FXT_EINVAL);
  assert_true(fn_phdr_count() > 0);
  stop_and_read();
  size_t cbs = 0;
  for (size_t i = 0; i < nevs; i++)
    if (strcmp(evs[i].name, "fn_phdr_cb") == 0) {
#ifdef FXT_TEST_PE
      /* libc's (a sanitizer's build: its interceptor's callback, dl_iterate_phdr_cb) */
      assert_non_null(strstr(evs[i].parent, "dl_iterate_phdr"));
#else
      assert_string_equal(evs[i].parent, "fn_phdr_count");
#endif
      cbs++;
    }
  assert_true(cbs > 0);
  assert_int_equal(count(FXT_EVENT_INSTANT, "fn_phdr_count"), 1);
}

/* The kernel's files: texts, filters by glob, '!', errors. */
static void test_files(void **state)
{
  (void)state;
  char buf[4096];
  read_file("available_tracers", buf, sizeof(buf));
  assert_string_equal(buf, "function_graph function nop\n");
  read_file("current_tracer", buf, sizeof(buf));
  assert_string_equal(buf, "nop\n");
  assert_int_equal(fxt_fs_echo("current_tracer", "graph"), FXT_EINVAL);
  read_file("set_ftrace_filter", buf, sizeof(buf));
  assert_string_equal(buf, "#### all functions enabled ####\n");
  read_file("set_ftrace_notrace", buf, sizeof(buf));
  assert_string_equal(buf, "#### no functions disabled ####\n");
  read_file("set_graph_function", buf, sizeof(buf));
  assert_string_equal(buf, "#### all functions enabled ####\n");
  read_file("set_graph_notrace", buf, sizeof(buf));
  assert_string_equal(buf, "#### no functions disabled ####\n");
  assert_int_equal(fxt_fs_echo("set_ftrace_filter", "fn_no_such_function"), FXT_EINVAL);
  assert_int_equal(fxt_fs_echo("set_ftrace_filter", "fn_fib:traceon"), FXT_EINVAL);
  echo("set_ftrace_filter", "fn_leaf_a");
  read_file("set_ftrace_filter", buf, sizeof(buf));
  assert_string_equal(buf, "fn_leaf_a\n");
  echo("set_ftrace_filter", "fn_leaf_*"); /* truncating open: replaces */
  read_file("set_ftrace_filter", buf, sizeof(buf));
  assert_true(strcmp(buf, "fn_leaf_a\nfn_leaf_b\n") == 0 ||
              strcmp(buf, "fn_leaf_b\nfn_leaf_a\n") == 0); /* in address order */
  struct fxt_fs_file *f; /* `>>`: adds, and '!' takes away */
  assert_int_equal(fxt_fs_open("set_ftrace_filter", FXT_FS_WRITE, &f), 0);
  assert_int_equal(fxt_fs_write(f, "!fn_leaf_a fn_pair\n", 19), 19);
  fxt_fs_close(f);
  read_file("set_ftrace_filter", buf, sizeof(buf));
  assert_true(strcmp(buf, "fn_leaf_b\nfn_pair\n") == 0 ||
              strcmp(buf, "fn_pair\nfn_leaf_b\n") == 0);
  echo("set_ftrace_filter", "");
  read_file("set_ftrace_filter", buf, sizeof(buf));
  assert_string_equal(buf, "#### all functions enabled ####\n");
  read_file("available_filter_functions", buf, sizeof(buf));
  assert_true(strlen(buf) > 0);
  assert_int_equal(fxt_fs_echo("max_graph_depth", "x"), FXT_EINVAL);
  echo("max_graph_depth", "7");
  read_file("max_graph_depth", buf, sizeof(buf));
  assert_string_equal(buf, "7\n");
  echo("max_graph_depth", "0");
  echo("tracing_thresh", "250");
  read_file("tracing_thresh", buf, sizeof(buf));
  assert_string_equal(buf, "250\n");
  echo("tracing_thresh", "0");
}

/* Filters choose exactly the functions named (function_graph). */
static void test_filters(void **state)
{
  (void)state;
  start();
  echo("set_ftrace_filter", "fn_leaf_* fn_branch");
  echo("current_tracer", "function_graph");
  fn_branch(5);
  stop_and_read();
  assert_int_equal(slices("fn_branch"), 1);
  assert_int_equal(slices("fn_leaf_a"), 1);
  assert_int_equal(slices("fn_leaf_b"), 1);
  assert_int_equal(nevs, 3);
  echo("set_ftrace_filter", "");

  start(); /* notrace takes away */
  echo("set_ftrace_notrace", "fn_fib fn_leaf_b");
  echo("current_tracer", "function_graph");
  fn_branch(5);
  stop_and_read();
  echo("set_ftrace_notrace", "");
  assert_int_equal(slices("fn_fib"), 0);
  assert_int_equal(slices("fn_leaf_b"), 0);
  assert_int_equal(nevs, 3); /* fn_branch, fn_pair, fn_leaf_a */

  start(); /* set_graph_function: what runs under fn_pair only */
  echo("set_graph_function", "fn_pair");
  echo("current_tracer", "function_graph");
  fn_branch(5);
  fn_driver(3);
  stop_and_read();
  echo("set_graph_function", "");
  assert_int_equal(slices("fn_pair"), 1);
  assert_int_equal(slices("fn_leaf_a"), 1);
  assert_int_equal(slices("fn_leaf_b"), 1);
  assert_int_equal(nevs, 3);

  start(); /* set_graph_notrace: fn_pair and everything under it left out */
  echo("set_graph_notrace", "fn_pair");
  echo("current_tracer", "function_graph");
  fn_branch(5);
  stop_and_read();
  echo("set_graph_notrace", "");
  assert_int_equal(slices("fn_branch"), 1);
  assert_int_equal(slices("fn_fib"), fib_calls(5));
  assert_int_equal(nevs, 1 + fib_calls(5));

  start(); /* max_graph_depth 2: fn_driver and the first fib */
  echo("max_graph_depth", "2");
  echo("current_tracer", "function_graph");
  fn_driver(10);
  stop_and_read();
  echo("max_graph_depth", "0");
  assert_int_equal(slices("fn_driver"), 1);
  assert_int_equal(slices("fn_fib"), 1);
  assert_int_equal(check_nesting(), 2);
  assert_int_equal(depth_bad, 0);
}

/* tracing_thresh: calls shorter than it leave no slice. */
static void test_thresh(void **state)
{
  (void)state;
  start();
  echo("tracing_thresh", "20000"); /* µs */
  echo("current_tracer", "function_graph");
  for (int i = 0; i < 10; i++)
    fn_quick();
  fn_sleeper(500);   /* a 40th of the threshold: left out (unless a load delays it 20 ms) */
  fn_sleeper(40000); /* twice it: written */
  stop_and_read();
  echo("tracing_thresh", "0");
  assert_int_equal(slices("fn_quick"), 0);
  assert_int_equal(slices("fn_sleeper"), 1);
  assert_int_equal(nevs, 1);
  assert_true(evs[0].end - evs[0].start > 0);
}

/* longjmp out of two frames: they are counted as cut, the outer one closes. */
static void test_longjmp(void **state)
{
  (void)state;
  uint64_t cut = cut_count();
  start();
  echo("current_tracer", "function_graph");
  assert_int_equal(fn_jump_outer(), 1);
  fn_driver(4);
  stop_and_read();
  assert_int_equal(cut_count() - cut, 2); /* fn_jump_mid, fn_jump_deep */
  assert_int_equal(slices("fn_jump_outer"), 1);
  assert_int_equal(nevs, 1 + 1 + fib_calls(4));
  check_nesting();
}

/* A handler that runs in the middle of a traced function: its calls nest inside it. */
static void test_signal(void **state)
{
  (void)state;
  uint64_t cut = cut_count();
  struct sigaction sa, old;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = fn_on_signal;
  sigemptyset(&sa.sa_mask);
  assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
  start();
  echo("current_tracer", "function_graph");
  assert_int_equal(fn_signal_outer(SIGUSR1), 2);
  stop_and_read();
  sigaction(SIGUSR1, &old, NULL);
  assert_int_equal(cut_count(), cut);
  assert_int_equal(slices("fn_signal_outer"), 1);
  assert_int_equal(slices("fn_on_signal"), 1);
  assert_int_equal(slices("fn_fib"), fib_calls(5) + fib_calls(3));
  assert_int_equal(check_nesting(), 1 + 1 + 5); /* outer, handler, fib(5) .. fib(1) */
  assert_int_equal(depth_bad, 0);
}

/* A thread that exits from inside traced functions: what it finished is there, nesting; the
 * frames it left open are counted as cut. */
static void test_thread_exit(void **state)
{
  (void)state;
  uint64_t cut = cut_count();
  start();
  echo("current_tracer", "function_graph");
  /* main's calls after the thread's exit: main attached in an earlier session, and the slot
   * it still points at must not be the one the thread took and gave back (test_slot_reuse) */
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, fn_thread_body, NULL), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  fn_driver(3);
  stop_and_read();
  assert_int_equal(slices("fn_fib"), fib_calls(4) + fib_calls(3));
  assert_int_equal(slices("fn_thread_body"), 0); /* never returned */
  assert_int_equal(slices("fn_exit_deep"), 0);
  assert_int_equal(slices("fn_driver"), 1);
  assert_int_equal(cut_count() - cut, 3); /* fn_thread_body, fn_exit_deep, fn_exit_leaf */
  check_nesting();
}

/* ---- switching while two threads call --------------------------------------------------- */

static _Atomic int stop_flag;
static _Atomic uint64_t wrong, calls; /* fn_driver's results that were not fib(8), and all */

static void *caller(void *arg)
{
  (void)arg;
  while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
    if (fn_driver(8) != 21) /* a return to the wrong place or a clobbered value */
      atomic_fetch_add(&wrong, 1);
    atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
  }
  return NULL;
}

static void test_switching(void **state)
{
  (void)state;
  start();
  atomic_store(&stop_flag, 0);
  pthread_t th[2];
  for (int i = 0; i < 2; i++)
    assert_int_equal(pthread_create(&th[i], NULL, caller, NULL), 0);
  static const char *const tracers[] = {"function_graph", "nop", "function", "nop"};
  for (int i = 0; i < 1000; i++) {
    /* each switch while both threads call (a handshake on their count, not a sleep) */
    uint64_t c = atomic_load(&calls);
    while (atomic_load(&calls) < c + 2)
      ;
    echo("current_tracer", tracers[i % 4]);
  }
  atomic_store(&stop_flag, 1);
  for (int i = 0; i < 2; i++)
    assert_int_equal(pthread_join(th[i], NULL), 0);
  assert_int_equal(atomic_load(&wrong), 0);
  stop_and_read();
  /* Every slice is whole and nested in its thread's; no slice outlives its caller's. */
  check_nesting();
  for (size_t i = 0; i < nevs; i++)
    assert_true(strcmp(evs[i].name, "fn_fib") == 0 || strcmp(evs[i].name, "fn_driver") == 0);
}

#ifdef FXT_TEST_PE
#include "fn/fn_sites.h"

/* With set_ftrace_filter naming one function, that site only is patched: the others' entries
 * still hold their NOPs; off, all of them do again. */
static void test_pe_patched_bytes(void **state)
{
  (void)state;
  struct fxt_fn_pe_stats st;
  fxt_fn_pe_stats(&st);
  assert_int_equal(st.enabled, 0);
  assert_true(off(fn_fib) && off(fn_driver) && off(fn_pair));
  start();
  echo("set_ftrace_filter", "fn_fib");
  echo("current_tracer", "function");
  assert_true(on(fn_fib));
  assert_true(off(fn_driver) && off(fn_pair) && off(fn_branch));
  fxt_fn_pe_stats(&st);
  assert_int_equal(st.enabled, 1);
#if !defined(__aarch64__) /* x86-64's layouts */
  assert_int_equal(st.skipped, 1); /* odd_layout */
  /* fn_traced.c's functions: 17 exported, 6 static (neither address-taken) */
  assert_true(st.sites >= 23);
#ifdef FXT_TEST_PE_CET
  assert_true(has_endbr(fn_fib) && has_endbr(fn_driver)); /* the build made the endbr layout */
  assert_true(st.endbr >= 17 && st.sites - st.endbr >= 6);
#else
  assert_false(has_endbr(fn_fib));
  assert_int_equal(st.endbr, 0);
#endif
#endif
  assert_int_equal(fn_driver(7), 13);
  echo("set_ftrace_filter", "fn_fib fn_driver"); /* a filter written while on */
  assert_true(on(fn_driver));
  fxt_fn_pe_stats(&st);
  assert_int_equal(st.enabled, 2);
  stop_and_read(); /* current_tracer nop */
  echo("set_ftrace_filter", "");
  assert_true(off(fn_fib) && off(fn_driver));
  fxt_fn_pe_stats(&st);
  assert_int_equal(st.enabled, 0);
  assert_int_equal(count(FXT_EVENT_INSTANT, "fn_fib"), fib_calls(7));
  assert_int_equal(count(FXT_EVENT_INSTANT, "fn_driver"), 0); /* run before it was added */
  for (size_t i = 0; i < nevs; i++)
    assert_true(strcmp(evs[i].parent, "fn_fib") == 0 || strcmp(evs[i].parent, "fn_driver") == 0);
}

/* A record whose bytes are no layout the engine knows (one NOP before the function, two at it):
 * skipped (test_pe_patched_bytes counts it), never written, its calls not traced. */
__attribute__((patchable_function_entry(3, 1), noinline, used)) static int odd_layout(int n)
{
  return n + 1;
}

/* A thread that ran the first of gcc's two single-byte NOPs at a site's entry and resumes at
 * the second once the site is enabled (an interrupt between them) runs the jump's second byte
 * alone: plain layout F5 (cmc), endbr layout F1 (icebp: SIGTRAP, which the engine's handler
 * takes). Such a thread is made here by a call to that second byte. Its call is not traced,
 * the calls it makes are. clang's 2-byte NOP has no such point: skipped. */
static void test_pe_between_nops(void **state)
{
  (void)state;
#if defined(__aarch64__)
  skip(); /* x86-64's NOP bytes */
#else
  if (entry_of(fn_fib)[0] != 0x90)
    skip();
  int (*mid)(int) = (int (*)(int))(uintptr_t)(entry_of(fn_fib) + 1);
  assert_int_equal(mid(6), 8); /* the site off: a NOP */
  start();
  echo("current_tracer", "function_graph");
  assert_int_equal(entry_of(fn_fib)[1], jump_back(fn_fib));
  assert_int_equal(mid(6), 8);
  assert_int_equal(odd_layout(1), 2);
  stop_and_read();
  assert_int_equal(slices("fn_fib"), fib_calls(6) - 1);
  assert_int_equal(nevs, fib_calls(6) - 1); /* odd_layout is no site */
#endif
}

/* A W^X policy (the kernel's memory-deny-write-execute, set in a child: it cannot be undone):
 * switching the tracer on fails with FXT_EPERM and changes nothing. Skipped where the kernel
 * does not have it (Linux < 6.3), and under ThreadSanitizer. */
static void test_pe_wx_refused(void **state)
{
  (void)state;
  if (FXT_TEST_TSAN)
    skip(); /* the child starts its consumer thread: TSan cannot after a multi-threaded fork
               (as test_fork) */
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    signal(SIGSEGV, SIG_DFL); /* cmocka's handler would go on with the next test */
    signal(SIGBUS, SIG_DFL);
    if (prctl(65 /* PR_SET_MDWE */, 1 /* PR_MDWE_REFUSE_EXEC_GAIN */, 0, 0, 0) != 0)
      _exit(77);
    if (fxt_fs_echo("current_tracer", "function_graph") != FXT_EPERM)
      _exit(1);
    char buf[64];
    ssize_t n = fxt_fs_cat("current_tracer", buf, sizeof(buf) - 1);
    if (n < 0 || (buf[n] = 0, strcmp(buf, "nop\n") != 0))
      _exit(2);
    if (!off(fn_fib) || fn_driver(10) != 55)
      _exit(3);
    _exit(0);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77)
    skip();
  assert_int_equal(WEXITSTATUS(status), 0);
}

/* A symbol table built for a set of loaded objects is published again when that set comes
 * back (functions_syms.c: a library loaded and unloaded in a loop costs one table): after a
 * library's dlclose, the table of before its dlopen; after a second dlopen at the same place,
 * the table of the first. */
static void test_table_reuse(void **state)
{
  (void)state;
  const char *lib = "libz.so.1"; /* any library not loaded yet, without NODELETE */
  if (dlopen(lib, RTLD_NOW | RTLD_NOLOAD))
    skip();
  /* The tables under the lock, the checks after it (a failed one leaves it free). */
  struct fxt_fn_table *t[4] = {NULL};
  void *at[2] = {NULL}, *h = NULL;
  bool unloaded = false;
  pthread_mutex_lock(&fxt_fn_lock);
  t[0] = fxt_fn_table_update();
  if ((h = dlopen(lib, RTLD_NOW | RTLD_LOCAL)) != NULL) {
    at[0] = dlsym(h, "zlibVersion");
    t[1] = fxt_fn_table_update();
    dlclose(h);
    unloaded = !dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    t[2] = fxt_fn_table_update();
    if ((h = dlopen(lib, RTLD_NOW | RTLD_LOCAL)) != NULL) {
      at[1] = dlsym(h, "zlibVersion");
      t[3] = fxt_fn_table_update();
      dlclose(h);
    }
  }
  pthread_mutex_unlock(&fxt_fn_lock);
  if (!t[1])
    skip();
  assert_ptr_not_equal(t[1], t[0]);
  assert_non_null(fxt_fn_sym_entry(t[1], (uintptr_t)at[0]));
  assert_true(unloaded);
  assert_ptr_equal(t[2], t[0]);
  assert_non_null(t[3]);
  if (at[1] == at[0]) /* loaded where it was */
    assert_ptr_equal(t[3], t[1]);
  else
    assert_ptr_not_equal(t[3], t[1]);
}
#endif

/* A sibling call (the engine: fn_driver enters with fn_tail's slot already redirected, so
 * its return goes through the trampoline twice): both slices, nested, the right result. */
static void test_tail_call(void **state)
{
  (void)state;
  uint64_t cut = cut_count();
  start();
  echo("current_tracer", "function_graph");
  assert_int_equal(fn_tail(7), 21);
  assert_int_equal(fn_tail(4), 5);
  stop_and_read();
  assert_int_equal(slices("fn_tail"), 2);
  assert_int_equal(slices("fn_driver"), 2);
  assert_int_equal(slices("fn_fib"), fib_calls(8) + fib_calls(5));
#ifdef FXT_TEST_PE
  assert_int_equal(check_nesting(), 2 + 8); /* fn_driver's slice inside fn_tail's */
#else
  /* clang's -finstrument-functions calls fn_tail's exit hook before its musttail jump: then
   * fn_driver's slice follows fn_tail's instead of nesting in it */
  int depth = check_nesting();
  assert_true(depth == 2 + 8 || depth == 1 + 8);
#endif
  assert_int_equal(cut_count(), cut);
}

/* Arguments and results in every register the ABI passes them in come through the hooks (the
 * engine's trampolines save and restore them), under both tracers: twice under each, as a
 * thread's first call after a switch takes the general path and the next ones function_graph's
 * fast path (with the x86-64 engine's lean entry, no xmm register saved for it). */
static void test_registers(void **state)
{
  (void)state;
  start();
  for (int t = 0; t < 4; t++) {
    if (t % 2 == 0)
      echo("current_tracer", t ? "function" : "function_graph");
    /* halves and small integers: exact in binary, compared with == */
    double want = 1 + 2 * 2 + 3 * 3 + 4 * 4 + 5 * 5 + 6 * 6 +
                  (0.5 + 1.5 * 2 + 2.5 * 3 + 3.5 * 4 + 4.5 * 5 + 5.5 * 6 + 6.5 * 7 + 7.5 * 8);
    assert_true(fn_args(1, 2, 3, 4, 5, 6, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5) == want);
    struct fn_ints i = fn_ints(40);
    assert_int_equal(i.a, 41);
    assert_int_equal(i.b, 42);
    struct fn_doubles d = fn_doubles(2.0);
    assert_true(d.x == 2.5 && d.y == 3.5);
    assert_int_equal(fn_varargs(4, 10L, 20.0, 30L, 40.0), 100);
    assert_int_equal(fn_stack_args(1, 2, 3, 4, 5, 6, 700, 8000), 1 + 4 + 9 + 16 + 25 + 36 + 4900 + 64000);
  }
  stop_and_read();
  assert_int_equal(slices("fn_args"), 2);
  assert_int_equal(count(FXT_EVENT_INSTANT, "fn_args"), 2);
  assert_int_equal(slices("fn_varargs") + count(FXT_EVENT_INSTANT, "fn_varargs"), 4);
  assert_int_equal(slices("fn_stack_args") + count(FXT_EVENT_INSTANT, "fn_stack_args"), 4);
}

/* Off and on again while a traced function runs. */
static void switch_tracer(void)
{
  echo("current_tracer", "nop");
  echo("current_tracer", "function_graph");
}

/* The tracer switched off and on again inside a traced function (with the engine: its return
 * redirected): it returns to its caller, with no slice of the old tracer (counted as cut). */
static void test_pe_switch_inside(void **state)
{
  (void)state;
  uint64_t cut = cut_count();
  start();
  echo("current_tracer", "function_graph");
  assert_int_equal(fn_switch_inside(switch_tracer), 21 + 1);
  stop_and_read();
  assert_int_equal(slices("fn_switch_inside"), 0); /* opened under the first tracer */
  assert_int_equal(slices("fn_fib"), fib_calls(8)); /* after the switch back */
  assert_int_equal(cut_count() - cut, 1);
  check_nesting();
}

int main(void)
{
  const struct CMUnitTest tests[] = {
#ifdef FXT_TEST_PE
      cmocka_unit_test(test_pe_patched_bytes), cmocka_unit_test(test_pe_between_nops),
      cmocka_unit_test(test_pe_wx_refused),
      cmocka_unit_test(test_table_reuse),
#endif
      cmocka_unit_test(test_pe_switch_inside), cmocka_unit_test(test_registers),
      cmocka_unit_test(test_tail_call),
      cmocka_unit_test(test_graph_counts), cmocka_unit_test(test_function_parent),
      cmocka_unit_test(test_traceable_only),
      cmocka_unit_test(test_files),        cmocka_unit_test(test_filters),
      cmocka_unit_test(test_thresh),       cmocka_unit_test(test_longjmp),
      cmocka_unit_test(test_signal),       cmocka_unit_test(test_thread_exit),
      cmocka_unit_test(test_switching),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
