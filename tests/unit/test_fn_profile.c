/* test_fn_profile.c - the function profiler (src/host/functions_prof.c):
 * function_profile_enabled and trace_stat/function<cpu> on the functions of fn/fn_traced.c.
 * Built twice, as test_functions: with -finstrument-functions (test_fn_profile) and with the
 * patchable-entry engine (test_fn_profile_pe, FXT_TEST_PE).
 *
 * Expected values are independent of the code under test: hit counts from the programs'
 * structure (fib(n) makes C(n) = 1 + C(n-1) + C(n-2) calls, computed by a loop); the table's
 * header and columns from the kernel's format strings (kernel/trace/ftrace.c
 * function_stat_headers and function_stat_show, trace_print_graph_duration of
 * trace_functions_graph.c), written out here; times bounded by the test's own clock.
 */
#define _GNU_SOURCE
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include "../test_main.h"

#include "fn/fn_kernel.h"
#include "fn/fn_session.h"
#include "fn/fn_traced.h"

/* The kernel's header (function_stat_headers, CONFIG_FUNCTION_GRAPH_TRACER). */
static const char k_header[] =
    "  Function                               Hit    Time            Avg             s^2\n"
    "  --------                               ---    ----            ---             ---\n";

struct row {
  char name[64];
  unsigned long long hit;
  double time, avg, s2; /* µs, as printed */
  double time_unit, avg_unit; /* the last printed digit's value (µs) */
  char line[256];
};

static char path[256];
static char text[1 << 16];

static uint64_t fib_calls(int n)
{
  uint64_t a = 1, b = 1;
  for (int i = 2; i <= n; i++) {
    uint64_t c = 1 + a + b;
    a = b;
    b = c;
  }
  return n == 0 ? a : b;
}

static int setup(void **state)
{
  (void)state;
  fn_session_start(path, sizeof(path), "fn-profile", 1024, FXT_CLOCK_AUTO);
  return 0;
}

static int teardown(void **state)
{
  (void)state;
  assert_int_equal(fn_session_end(path), 0);
  return 0;
}

static void echo(const char *file, const char *value)
{
  ssize_t rc = fxt_fs_echo(file, value);
  if (rc < 0)
    fail_msg("echo '%s' > %s: %zd", value, file, rc);
}

static int ncpus(void)
{
  struct fxt_fs_dirent d[1024];
  int n = fxt_fs_list("trace_stat", d, 1024);
  assert_true(n > 0 && n <= 1024);
  for (int i = 0; i < n; i++) {
    char want[32];
    snprintf(want, sizeof want, "function%d", i);
    assert_string_equal(d[i].name, want);
    assert_int_equal(d[i].is_dir, 0);
  }
  return n;
}

static double pow10_neg(size_t digits)
{
  double u = 1;
  while (digits--)
    u /= 10;
  return u;
}

/* The rows of trace_stat/function<cpu>, after checking the header. */
static int read_rows(int cpu, struct row *rows, int max)
{
  char file[64];
  snprintf(file, sizeof file, "trace_stat/function%d", cpu);
  ssize_t len = fxt_fs_cat(file, text, sizeof text);
  assert_true(len >= (ssize_t)strlen(k_header));
  assert_memory_equal(text, k_header, strlen(k_header));
  int n = 0;
  for (char *l = text + strlen(k_header), *nl; *l; l = nl + 1) {
    nl = strchr(l, '\n');
    assert_non_null(nl);
    *nl = 0;
    if (strncmp(l, "  #", 3) == 0)
      continue; /* the misses' line */
    assert_true(n < max);
    struct row *r = &rows[n++];
    assert_true(strlen(l) > 32 && strlen(l) < sizeof r->line);
    memcpy(r->line, l, strlen(l) + 1);
    memcpy(r->name, l + 2, 30);
    r->name[30] = 0;
    for (int i = 29; i >= 0 && r->name[i] == ' '; i--)
      r->name[i] = 0;
    char t[32], a[32], v[32];
    if (sscanf(l + 32, "%llu %31s us %31s us %31s us", &r->hit, t, a, v) != 4)
      fail_msg("row: '%s'", l);
    r->time = strtod(t, NULL);
    r->avg = strtod(a, NULL);
    r->s2 = strtod(v, NULL);
    r->time_unit = strchr(t, '.') ? pow10_neg(strlen(strchr(t, '.') + 1)) : 1;
    r->avg_unit = strchr(a, '.') ? pow10_neg(strlen(strchr(a, '.') + 1)) : 1;
  }
  return n;
}

/* A function's row in every CPU's file, summed (hits, times); its count of rows. */
static int total(const char *name, unsigned long long *hit, double *time)
{
  static struct row rows[4096];
  int found = 0, n = ncpus();
  *hit = 0;
  *time = 0;
  for (int c = 0; c < n; c++) {
    int k = read_rows(c, rows, 4096);
    for (int i = 0; i < k; i++)
      if (strcmp(rows[i].name, name) == 0) {
        *hit += rows[i].hit;
        *time += rows[i].time;
        found++;
      }
  }
  return found;
}

static unsigned long long hits(const char *name)
{
  unsigned long long h;
  double t;
  total(name, &h, &t);
  return h;
}

static void pin_to_first_cpu(int *cpu)
{
  cpu_set_t set;
  assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
  int c = 0;
  while (!CPU_ISSET(c, &set))
    c++;
  CPU_ZERO(&set);
  CPU_SET(c, &set);
  assert_int_equal(sched_setaffinity(0, sizeof set, &set), 0);
  *cpu = c;
}

static void unpin(void)
{
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c = 0; c < CPU_SETSIZE; c++)
    CPU_SET(c, &set);
  sched_setaffinity(0, sizeof set, &set);
}

/* Exact hits on every CPU's file together, with current_tracer nop: the profiler counts on
 * its own, as the kernel's. */
static void test_hits_exact(void **state)
{
  (void)state;
  char buf[16];
  assert_int_equal(fxt_fs_cat("function_profile_enabled", buf, sizeof buf), 2);
  assert_string_equal(buf, "0\n");
  echo("function_profile_enabled", "1");
  assert_int_equal(fxt_fs_cat("function_profile_enabled", buf, sizeof buf), 2);
  assert_string_equal(buf, "1\n");
  assert_int_equal(fn_driver(15), 610);
  for (int i = 0; i < 7; i++)
    assert_int_equal(fn_pair(i), 2 * i + 3);
  echo("function_profile_enabled", "0");
  assert_int_equal(hits("fn_fib"), fib_calls(15));
  assert_int_equal(hits("fn_driver"), 1);
  assert_int_equal(hits("fn_pair"), 7);
  assert_int_equal(hits("fn_leaf_a"), 7);
  assert_int_equal(hits("fn_leaf_b"), 7);
  assert_int_equal(hits("fn_quick"), 0);
}

/* 0 stops counting; 1 after 0 starts again from nothing; 1 on 1 changes nothing. */
static void test_stop_and_reset(void **state)
{
  (void)state;
  echo("function_profile_enabled", "1");
  fn_fib(5);
  echo("function_profile_enabled", "1"); /* no change: no reset */
  fn_fib(5);
  echo("function_profile_enabled", "0");
  fn_fib(5); /* not counted */
  assert_int_equal(hits("fn_fib"), 2 * fib_calls(5));
  echo("function_profile_enabled", "1"); /* reset */
  assert_int_equal(hits("fn_fib"), 0);
  fn_fib(4);
  echo("function_profile_enabled", "0");
  assert_int_equal(hits("fn_fib"), fib_calls(4));
}

/* The kernel's kstrtoul and !!val: any number is 0 or 1; anything else EINVAL or ERANGE,
 * changing nothing. */
static void test_writes(void **state)
{
  (void)state;
  char buf[16];
  static const struct {
    const char *v;
    ssize_t rc;
  } k_bad[] = {{"", FXT_EINVAL},   {"x", FXT_EINVAL},    {"-1", FXT_EINVAL},
               {" 1", FXT_EINVAL}, {"1 ", FXT_EINVAL},   {"0x1", FXT_EINVAL},
               {"1\n\n", FXT_EINVAL}, {"18446744073709551616", FXT_ERANGE}};
  for (size_t i = 0; i < sizeof k_bad / sizeof k_bad[0]; i++) {
    ssize_t rc = fxt_fs_echo("function_profile_enabled", k_bad[i].v);
    if (rc != k_bad[i].rc)
      fail_msg("'%s': %zd, not %zd", k_bad[i].v, rc, k_bad[i].rc);
    fxt_fs_cat("function_profile_enabled", buf, sizeof buf);
    assert_string_equal(buf, "0\n");
  }
  echo("function_profile_enabled", "+2");
  fxt_fs_cat("function_profile_enabled", buf, sizeof buf);
  assert_string_equal(buf, "1\n");
  echo("function_profile_enabled", "18446744073709551615\n");
  fxt_fs_cat("function_profile_enabled", buf, sizeof buf);
  assert_string_equal(buf, "1\n");
  echo("function_profile_enabled", "00");
  fxt_fs_cat("function_profile_enabled", buf, sizeof buf);
  assert_string_equal(buf, "0\n");
  char name[32];
  snprintf(name, sizeof name, "trace_stat/function%d", ncpus());
  assert_int_equal(fxt_fs_cat(name, text, sizeof text), FXT_ENOENT);
}

/* Each row byte for byte as function_stat_show prints its values (the printed time and
 * average read back to ns: the columns' digits are the kernel's for those values), sorted by
 * time, longest first; the average is time / hit. */
static void test_format(void **state)
{
  (void)state;
  echo("function_profile_enabled", "1");
  fn_branch(12);
  fn_sleeper(3000);
  fn_pair(1);
  echo("function_profile_enabled", "0");
  static struct row rows[256];
  int n = ncpus(), seen = 0;
  for (int c = 0; c < n; c++) {
    int k = read_rows(c, rows, 256);
    for (int i = 0; i < k; i++, seen++) {
      struct row *r = &rows[i];
      if (i > 0)
        assert_true(rows[i - 1].time >= r->time);
      char want[256], d[64];
      snprintf(want, sizeof want, "  %-30.30s  %10llu    ", r->name, r->hit);
      /* The digits printed are those of the ns value truncated to them. */
      kernel_duration(d, (unsigned long long)(r->time * 1000 + 0.5));
      strcat(want, d);
      strcat(want, "    ");
      kernel_duration(d, (unsigned long long)(r->avg * 1000 + 0.5));
      strcat(want, d);
      strcat(want, "    ");
      kernel_duration(d, (unsigned long long)(r->s2 * 1000 + 0.5));
      strcat(want, d);
      assert_string_equal(r->line, want);
      /* avg = floor(time / hit), both truncated as printed: printed avg * hit <= time <
       * printed time + its unit, and time < (printed avg + its unit + 1 ns) * hit. */
      double eps = 1e-6 * (r->time + 1);
      assert_true(r->avg * (double)r->hit <= r->time + r->time_unit + eps);
      assert_true(r->time <= (r->avg + r->avg_unit + 0.001) * (double)r->hit + eps);
      if (r->hit == 1)
        assert_true(r->s2 == 0);
    }
  }
  assert_true(seen >= 6); /* fn_branch, fn_pair, fn_leaf_a, fn_leaf_b, fn_fib, fn_sleeper */
}

/* Time: a call's includes its children's (graph-time) and its sleep (sleep-time), within the
 * test's own clock around it. One CPU (the thread pinned): hit and time on one file. */
static void test_times(void **state)
{
  (void)state;
  int cpu;
  pin_to_first_cpu(&cpu);
  echo("function_profile_enabled", "1");
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  fn_sleeper(20000);
  clock_gettime(CLOCK_MONOTONIC, &b);
  for (int i = 0; i < 100; i++)
    fn_branch(6);
  echo("function_profile_enabled", "0");
  unpin();
  double wall_us = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
  static struct row rows[256];
  int k = read_rows(cpu, rows, 256);
  double t[5] = {0};
  static const char *const k_names[5] = {"fn_sleeper", "fn_branch", "fn_pair", "fn_leaf_a",
                                         "fn_leaf_b"};
  for (int i = 0; i < k; i++)
    for (int j = 0; j < 5; j++)
      if (strcmp(rows[i].name, k_names[j]) == 0) {
        t[j] = rows[i].time;
        assert_int_equal(rows[i].hit, j == 0 ? 1 : 100);
      }
  assert_true(t[0] >= 20000 && t[0] <= wall_us);
  assert_true(t[2] > 0 && t[3] > 0 && t[4] > 0);
  assert_true(t[1] >= t[2]);        /* fn_branch holds fn_pair */
  assert_true(t[2] >= t[3] + t[4]); /* fn_pair holds both leaves */
}

/* A filter chooses what is counted (the kernel's profiler follows set_ftrace_filter and
 * set_ftrace_notrace); the function tracer on at the same time changes no count. */
static void test_filter_and_tracer(void **state)
{
  (void)state;
  echo("set_ftrace_filter", "fn_pair fn_leaf_*");
  echo("set_ftrace_notrace", "fn_leaf_b");
  echo("current_tracer", "function_graph");
  echo("function_profile_enabled", "1");
  fn_branch(5);
  echo("current_tracer", "nop");
  fn_pair(2);
  echo("function_profile_enabled", "0");
  fxt_fs_echo("set_ftrace_notrace", "");
  assert_int_equal(hits("fn_pair"), 2);
  assert_int_equal(hits("fn_leaf_a"), 2);
  assert_int_equal(hits("fn_leaf_b"), 0);
  assert_int_equal(hits("fn_branch"), 0);
  assert_int_equal(hits("fn_fib"), 0);
  char buf[32];
  fxt_fs_cat("current_tracer", buf, sizeof buf);
  assert_string_equal(buf, "nop\n");
}

#define THREADS 4
#define LOOPS 200

static pthread_barrier_t barrier;

static void *worker(void *arg)
{
  (void)arg;
  pthread_barrier_wait(&barrier);
  for (int i = 0; i < LOOPS; i++)
    fn_fib(10);
  return NULL;
}

/* n threads calling fn_fib(10) LOOPS times each, at once, while the profile runs: every call
 * counted once. */
static void run_threads(int n)
{
  echo("function_profile_enabled", "1");
  pthread_t th[64];
  pthread_barrier_init(&barrier, NULL, (unsigned)n);
  for (int i = 0; i < n; i++)
    assert_int_equal(pthread_create(&th[i], NULL, worker, NULL), 0);
  for (int i = 0; i < n; i++)
    pthread_join(th[i], NULL);
  pthread_barrier_destroy(&barrier);
  echo("function_profile_enabled", "0");
  assert_int_equal(hits("fn_fib"), (uint64_t)n * LOOPS * fib_calls(10));
}

/* Threads counting at once, each in its own table. */
static void test_threads(void **state)
{
  (void)state;
  run_threads(THREADS);
}

/* More threads than the profiler hands tables to (32): the later ones count in the CPUs'
 * shared tables (atomic adds), merged with the threads' when read. */
static void test_many_threads(void **state)
{
  (void)state;
  run_threads(40);
}

FXT_TEST_MAIN(
    FXT_TEST_ST(test_hits_exact), FXT_TEST_ST(test_stop_and_reset), FXT_TEST_ST(test_writes),
    FXT_TEST_ST(test_format), FXT_TEST_ST(test_times), FXT_TEST_ST(test_filter_and_tracer),
    FXT_TEST_ST(test_threads), FXT_TEST_ST(test_many_threads))
