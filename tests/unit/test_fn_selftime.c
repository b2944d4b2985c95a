/* test_fn_selftime.c - the function profiler's options/graph-time (src/host/functions_prof.c,
 * "Self time"): with 0, a call's time is its own, its direct children's whole times taken
 * away (the kernel's profile_graph_return). Built twice (fxt_fn_unit_test): on the
 * -finstrument-functions hooks and on the patchable-entry engine (test_fn_selftime_pe).
 *
 * The reference is independent of the profiler and exact, whatever the machine's load:
 * function_graph runs at the same time, and a call's slice and its profiled time come from the
 * same two clock readings (functions.c: one start stored in the shadow frame, one end read at
 * the return, used by both). With clock=monotonic a tick is a nanosecond, so each slice's
 * duration is the time the profiler measured for that call. The test rebuilds, from the
 * file's slices in the order they returned and their recorded depths, each call's children
 * and its own time, then each function's row as the kernel's function_stat_show prints it
 * (its code written out below: hit, time, average, s^2) - and compares it with the row of
 * trace_stat, byte for byte. The thread is pinned to one CPU: a call's hit and time are
 * counted on the CPU it runs on, so one file holds them all.
 */
#define _GNU_SOURCE
#include <fxtrace/fxt.h>
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include "../fxtcount.h"
#include "../test_main.h"

#include "fn/fn_kernel.h"
#include "fn/fn_session.h"
#include "fn/fn_traced.h"
#include "host/functions.h"

#define MAX_SLICES 20000
#define MAX_FUNCS 32
#define MAX_DEPTH 256

struct slice {
  char name[64];
  uint64_t dur;   /* ns (clock=monotonic: ticks are ns) */
  uint32_t depth; /* the "depth" argument: traced calls open around it */
};
static struct slice slices[MAX_SLICES];
static size_t nslices;

/* Expected counts of a function, from its calls' own times. */
struct expect {
  char name[64];
  uint64_t hit, time, time2; /* time2 wraps as the kernel's u64 */
};
static struct expect expects[MAX_FUNCS];
static size_t nexpects;

static char path[256];
static char text[1 << 16];
static int cpu;

static int setup(void **state)
{
  (void)state;
  cpu_set_t set;
  assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
  for (cpu = 0; !CPU_ISSET(cpu, &set); cpu++)
    ;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  assert_int_equal(sched_setaffinity(0, sizeof set, &set), 0);
  fn_session_start(path, sizeof(path), "fn-selftime", 8192, FXT_CLOCK_MONOTONIC);
  return 0;
}

static int teardown(void **state)
{
  (void)state;
  fn_session_end(path); /* its session stopped by the test already, but when it failed first */
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c = 0; c < CPU_SETSIZE; c++)
    CPU_SET(c, &set);
  sched_setaffinity(0, sizeof set, &set);
  return 0;
}

static void echo(const char *file, const char *value)
{
  ssize_t rc = fxt_fs_echo(file, value);
  if (rc < 0)
    fail_msg("echo '%s' > %s: %zd", value, file, rc);
}

/* Both on: the profiler, then function_graph (nothing of the test's runs in between). */
static void both_on(const char *graph_time)
{
  echo("options/graph-time", graph_time);
  echo("function_profile_enabled", "1");
  echo("current_tracer", "function_graph");
}

/* Both off, the profile kept: the session stopped, its file's slices read in file order (the
 * order the thread returned from them: a slice is written at its return). */
static void both_off_and_read(void)
{
  echo("current_tracer", "nop");
  echo("function_profile_enabled", "0");
  assert_int_equal(fxt_session_stop(), 0);
  struct fxtcount c;
  if (fxtcount_file(path, NULL, &c) != 0)
    fail_msg("%s: %s", path, c.err);
  for (int i = 0; i < c.nthreads; i++)
    assert_int_equal(c.t[i].dropped + c.t[i].overrun + c.t[i].lost, 0);
  static struct fxt_str_slot table[FXT_STRING_TABLE_SIZE];
  static struct fxt_record r;
  size_t n = 0;
  unsigned char *buf = fxtcount_read(path, &n);
  assert_non_null(buf);
  struct fxt_decoder d;
  fxt_decoder_init(&d, buf, n, table);
  char err[256];
  nslices = 0;
  while (fxt_decoder_next(&d, &r, err, sizeof err) == 1) {
    const struct fxt_event *e = &r.u.event;
    if (r.kind != FXT_KIND_EVENT || e->type != FXT_EVENT_DURATION_COMPLETE ||
        !fxtcount_is(&e->category, "function"))
      continue;
    assert_true(nslices < MAX_SLICES && e->name.len < 64 && e->num_args == 1);
    struct slice *s = &slices[nslices++];
    memcpy(s->name, e->name.data, e->name.len);
    s->name[e->name.len] = 0;
    assert_true(e->trailer >= e->timestamp);
    s->dur = e->trailer - e->timestamp;
    s->depth = e->args[0].value.u32;
  }
  free(buf);
}

static struct expect *expect_of(const char name[64])
{
  for (size_t i = 0; i < nexpects; i++)
    if (strcmp(expects[i].name, name) == 0)
      return &expects[i];
  assert_true(nexpects < MAX_FUNCS);
  struct expect *e = &expects[nexpects++];
  memset(e, 0, sizeof *e);
  memcpy(e->name, name, sizeof e->name); /* both 64 bytes */
  return e;
}

/* The expected counts: slices [0, nslices), where those from index `from` on returned with
 * graph-time 0 (self), those before with 1. At its return a call at depth d takes the times
 * of the calls at depth d + 1 that returned into it since (its children), and with graph-time
 * 0 its time is its own (the kernel: 0 when the children's are not less) and its whole time
 * goes to its parent's children; with 1 its time is the whole. */
static void expected(size_t from)
{
  static uint64_t children[MAX_DEPTH + 1];
  memset(children, 0, sizeof children);
  nexpects = 0;
  for (size_t i = 0; i < nslices; i++) {
    const struct slice *s = &slices[i];
    assert_true(s->depth < MAX_DEPTH);
    uint64_t sub = children[s->depth + 1], t = s->dur;
    children[s->depth + 1] = 0;
    if (i >= from) {
      children[s->depth] += s->dur;
      t = sub < s->dur ? s->dur - sub : 0;
    }
    struct expect *e = expect_of(s->name);
    e->hit++;
    e->time += t;
    e->time2 += t * t;
  }
}

/* function_stat_show (kernel/trace/ftrace.c, with the graph tracer), written out. */
static void kernel_row(char *out, const struct expect *e)
{
  unsigned long long avg = e->time / e->hit, stddev = 0;
  if (e->hit > 1)
    stddev = (e->hit * e->time2 - e->time * e->time) / (e->hit * (e->hit - 1) * 1000);
  char d[64];
  sprintf(out, "  %-30.30s  %10llu    ", e->name, (unsigned long long)e->hit);
  kernel_duration(d, e->time);
  strcat(out, d);
  strcat(out, "    ");
  kernel_duration(d, avg);
  strcat(out, d);
  strcat(out, "    ");
  kernel_duration(d, stddev);
  strcat(out, d);
}

/* trace_stat/function<cpu>'s rows are the expected ones, no more, no fewer. */
static void check_rows(void)
{
  char file[64];
  snprintf(file, sizeof file, "trace_stat/function%d", cpu);
  ssize_t len = fxt_fs_cat(file, text, sizeof text);
  assert_true(len > 0);
  size_t rows = 0;
  char *save = NULL;
  for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    if (strncmp(l, "  Function ", 11) == 0 || strncmp(l, "  --------", 10) == 0)
      continue;
    rows++;
    bool found = false;
    for (size_t i = 0; i < nexpects && !found; i++) {
      char want[256];
      kernel_row(want, &expects[i]);
      if (strncmp(l, want, 32) != 0)
        continue;
      found = true;
      if (strcmp(l, want) != 0)
        fail_msg("row\n'%s', expected\n'%s'", l, want);
    }
    if (!found)
      fail_msg("row of no function called: '%s'", l);
  }
  assert_int_equal(rows, nexpects);
}

static void calls(void)
{
  fn_branch(9);  /* fn_pair's leaves, fn_fib's recursion (a function its own child) */
  fn_driver(7);
  assert_int_equal(fn_signal_outer(SIGUSR1), 2); /* fn_on_signal: a child of fn_signal_outer */
  fn_pair(3);
}

static void run(const char *graph_time, const char *filter)
{
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = fn_on_signal;
  sigemptyset(&sa.sa_mask);
  assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
  if (filter)
    echo("set_ftrace_filter", filter);
  both_on(graph_time);
  calls();
  both_off_and_read();
  sigaction(SIGUSR1, &old, NULL);
  assert_true(nslices >= (filter ? 6u : 100u)); /* the filter: fn_branch, fn_driver, 4 leaves */
  expected(strcmp(graph_time, "0") == 0 ? 0 : nslices);
  check_rows();
}

/* graph-time 0: each function's time is its calls' own. */
static void test_self(void **state)
{
  (void)state;
  run("0", NULL);
}

/* graph-time 1 (the default): the whole times, the same reference without the children. */
static void test_whole(void **state)
{
  (void)state;
  run("1", NULL);
}

/* A filter leaves fn_pair and fn_fib out: fn_branch's children are then the leaves fn_pair
 * called (the nearest calls the profiler times), and fn_pair's and fn_fib's own time is
 * fn_branch's. function_graph follows the same filter, so its depths say the same. */
static void test_filtered(void **state)
{
  (void)state;
  run("0", "fn_branch fn_leaf_* fn_driver");
}

static void to_self(void)
{
  echo("options/graph-time", "0");
}

/* A switch applies from the next return on and keeps the profile (the kernel's
 * ftrace_graph_graph_time_control): the calls before it are counted whole; fn_switch_inside,
 * open at the switch, and its calls after it, by their own. */
static void test_switch(void **state)
{
  (void)state;
  both_on("1");
  fn_branch(6);
  fn_switch_inside(to_self); /* sw() first: no child of it returned before the switch */
  both_off_and_read();
  size_t from = 0;
  while (from < nslices && strcmp(slices[from].name, "fn_branch") != 0)
    from++;
  assert_true(from < nslices);
  expected(from + 1);
  check_rows();
}

/* The file: "1\n" by default, listed in options/, the kernel's kstrtoul then 0 or 1; FXTRACE's
 * graph_time writes it. */
static void test_option_file(void **state)
{
  (void)state;
  char buf[16];
  struct fxt_fs_dirent d[64];
  int n = fxt_fs_list("options", d, 64), listed = 0;
  for (int i = 0; i < n; i++)
    listed += strcmp(d[i].name, "graph-time") == 0 && !d[i].is_dir;
  assert_int_equal(listed, 1);
  assert_int_equal(fxt_fs_cat("options/graph-time", buf, sizeof buf), 2);
  assert_string_equal(buf, "1\n");
  static const struct {
    const char *v;
    ssize_t rc;
    const char *after;
  } k_cases[] = {{"0", 0, "0\n"},          {"2", FXT_EINVAL, "0\n"}, {"+1", 0, "1\n"},
                 {"", FXT_EINVAL, "1\n"},  {"x", FXT_EINVAL, "1\n"}, {"-0", FXT_EINVAL, "1\n"},
                 {" 0", FXT_EINVAL, "1\n"}, {"00\n", 0, "0\n"},       {"01", 0, "1\n"},
                 {"18446744073709551616", FXT_ERANGE, "1\n"},
                 {"18446744073709551615", FXT_EINVAL, "1\n"}};
  for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++) {
    ssize_t rc = fxt_fs_echo("options/graph-time", k_cases[i].v);
    if ((k_cases[i].rc == 0 && rc < 0) || (k_cases[i].rc != 0 && rc != k_cases[i].rc))
      fail_msg("'%s': %zd, not %zd", k_cases[i].v, rc, k_cases[i].rc);
    fxt_fs_cat("options/graph-time", buf, sizeof buf);
    assert_string_equal(buf, k_cases[i].after);
  }
  fxt_fn_apply_config("graph_time=0"); /* FXTRACE's key: a write to the file */
  fxt_fs_cat("options/graph-time", buf, sizeof buf);
  assert_string_equal(buf, "0\n");
}

FXT_TEST_MAIN(FXT_TEST_ST(test_option_file), FXT_TEST_ST(test_self), FXT_TEST_ST(test_whole),
              FXT_TEST_ST(test_filtered), FXT_TEST_ST(test_switch))
