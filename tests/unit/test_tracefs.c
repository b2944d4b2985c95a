/* test_tracefs - the ftrace control surface in-process: enable/id/format/set_event,
 * available_events, trace (header, lines, clearing), trace_pipe (consuming, identical at any
 * read size, non-blocking), trace_marker, saved_cmdlines(_size), tracing_on, buffer_size_kb
 * rounding, set_event_pid, stats files, and the kernel's errors for bad writes. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../test_main.h"

#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>
#include <pthread.h>
#include <regex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tracefs_test.h"

FXT_TRACEPOINT(tfs, alpha, "seq=%llu name=%s", (u64, seq), (str, name, 16));
FXT_TRACEPOINT(tfs, beta, NULL, (u32, x), (s16, y), (bytes, mac, 6));
FXT_TRACEPOINT(other, gamma, "v=%d", (s32, v));
FXT_TRACEPOINT(flt, fv, "seq=%llu val=%llu who=%s", (u64, seq), (u64, val), (str, who, 16));


static int setup(void **state)
{
  (void)state;
  live_start(FXT_MODE_DISCARD, "", NULL);
  return 0;
}

static int teardown(void **state) { return live_stop(state); }

/* Waits until the consumer has taken everything emitted so far into the live view. */
static void settle(void)
{
  assert_int_equal(fxt_session_flush(), 0);
}

static void enable_files_and_set_event(void **state)
{
  (void)state;
  assert_string_equal(cat("events/tfs/alpha/enable"), "0\n");
  echo("events/tfs/alpha/enable", "1\n", 0);
  assert_string_equal(cat("events/tfs/alpha/enable"), "1\n");
  assert_string_equal(cat("events/tfs/enable"), "X\n"); /* mixed */
  assert_string_equal(cat("set_event"), "tfs:alpha\n");
  echo("events/tfs/enable", "1", 0);
  assert_string_equal(cat("events/tfs/enable"), "1\n");
  assert_string_equal(cat("events/tfs/beta/enable"), "1\n");
  echo("events/tfs/alpha/enable", "0", 0);
  assert_string_equal(cat("set_event"), "tfs:beta\n");
  /* set_event: truncating clears, appending adds; "!" disables; a bare name = any system. */
  echo("set_event", "gamma", 0);
  assert_string_equal(cat("set_event"), "other:gamma\n");
  struct fxt_fs_file *f;
  assert_int_equal(fxt_fs_open("set_event", FXT_FS_WRITE, &f), 0); /* append */
  assert_int_equal(fxt_fs_write(f, "tfs:*\n", 6), 6);
  assert_int_equal(fxt_fs_write(f, "!tfs:beta", 9), 9);
  fxt_fs_close(f);
  const char *se = cat("set_event"); /* listed in registration order */
  assert_true(strcmp(se, "tfs:alpha\nother:gamma\n") == 0 ||
              strcmp(se, "other:gamma\ntfs:alpha\n") == 0);
  echo("events/enable", "0", 0);
  assert_string_equal(cat("events/enable"), "0\n");
  assert_string_equal(cat("set_event"), "");
  /* The kernel's errors: anything but 0/1 (even a leading space) is EINVAL, nothing changes. */
  echo("events/tfs/alpha/enable", "2", -22);
  echo("events/tfs/alpha/enable", " 1", -22);
  echo("events/tfs/alpha/enable", "", -22);
  echo("set_event", "nosuch:event", -22);
  assert_string_equal(cat("events/tfs/alpha/enable"), "0\n");
  /* available_events lists everything registered, including the marker event. */
  const char *all = cat("available_events");
  assert_non_null(strstr(all, "tfs:alpha\n"));
  assert_non_null(strstr(all, "tfs:beta\n"));
  assert_non_null(strstr(all, "other:gamma\n"));
  assert_non_null(strstr(all, "ftrace:print\n"));
}

static void id_and_format(void **state)
{
  (void)state;
  struct fxt_tracepoint *tp = fxt_tracepoint_by_name("tfs", "beta");
  char want[2048];
  snprintf(want, sizeof(want), "%u\n", tp->id);
  assert_string_equal(cat("events/tfs/beta/id"), want);
  snprintf(want, sizeof(want),
           "name: beta\nID: %u\nformat:\n"
           "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
           "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
           "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
           "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
           "\n"
           "\tfield:u32 x;\toffset:8;\tsize:4;\tsigned:0;\n"
           "\tfield:s16 y;\toffset:12;\tsize:2;\tsigned:1;\n"
           "\tfield:u8 mac[6];\toffset:14;\tsize:6;\tsigned:0;\n"
           "\n"
           "print fmt: \"x=%%u y=%%d mac=%%s\", REC->x, REC->y, __print_hex(REC->mac, 6)\n",
           tp->id);
  assert_string_equal(cat("events/tfs/beta/format"), want);
  /* Read-only files refuse writes at open. */
  struct fxt_fs_file *f;
  assert_int_equal(fxt_fs_open("events/tfs/beta/id", FXT_FS_WRITE, &f), -22);
  assert_int_equal(fxt_fs_open("events/tfs/nosuch/id", FXT_FS_READ, &f), -2);
  assert_int_equal(fxt_fs_open("nosuch", FXT_FS_READ, &f), -2);
}

static const char header_re[] =
    "^# tracer: nop\n#\n# entries-in-buffer/entries-written: ([0-9]+)/([0-9]+)   #P:[0-9]+\n"
    "#\n"
    "#                                _-----=> irqs-off/BH-disabled\n"
    "#                               / _----=> need-resched\n"
    "#                              \\| / _---=> hardirq/softirq\n"
    "#                              \\|\\| / _--=> preempt-depth\n"
    "#                              \\|\\|\\| / _-=> migrate-disable\n"
    "#                              \\|\\|\\|\\| /     delay\n"
    "#           TASK-PID     CPU#  \\|\\|\\|\\|\\|  TIMESTAMP  FUNCTION\n"
    "#              \\| \\|         \\|   \\|\\|\\|\\|\\|     \\|         \\|\n";

/* The body of `trace` (after the header); the header counts go to entries and written. */
static const char *trace_body(uint64_t *entries, uint64_t *written)
{
  const char *t = cat("trace");
  regex_t re;
  regmatch_t m[3];
  assert_int_equal(regcomp(&re, header_re, REG_EXTENDED), 0);
  if (regexec(&re, t, 3, m, 0) != 0)
    fail_msg("trace header does not match:\n%.800s", t);
  *entries = strtoull(t + m[1].rm_so, NULL, 10);
  *written = strtoull(t + m[2].rm_so, NULL, 10);
  regfree(&re);
  return t + m[0].rm_eo;
}

static void trace_shows_events_and_truncation_clears(void **state)
{
  (void)state;
  echo("events/tfs/alpha/enable", "1", 0);
  echo("trace", "", 0); /* clear */
  for (uint64_t i = 0; i < 5; i++)
    FXT_TRACE(tfs, alpha, i, "n");
  settle();
  uint64_t entries, written;
  const char *body = trace_body(&entries, &written);
  assert_int_equal(entries, 5);
  assert_int_equal(written, 5);
  /* Each line: comm, -pid, [cpu], 5 flags, timestamp, then "alpha: seq=I name=n". */
  char pat[256];
  snprintf(pat, sizeof(pat),
           "^ *[^ ]+-%d +\\[[0-9]{3}\\] \\.{5} +[0-9]+\\.[0-9]{6}: alpha: seq=%%d name=n$",
           (int)gettid());
  char *copy = strdup(body), *save = NULL;
  int line = 0;
  for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save), line++) {
    char exp[300];
    snprintf(exp, sizeof(exp), pat, line);
    regex_t re;
    assert_int_equal(regcomp(&re, exp, REG_EXTENDED | REG_NOSUB), 0);
    if (regexec(&re, l, 0, NULL, 0) != 0)
      fail_msg("line %d: '%s' does not match '%s'", line, l, exp);
    regfree(&re);
  }
  free(copy);
  assert_int_equal(line, 5);
  /* `echo > trace` empties it. */
  echo("trace", "", 0);
  trace_body(&entries, &written);
  assert_int_equal(entries, 0);
}

/* Reads trace_pipe to the end (non-blocking) with reads of `size` bytes. */
static char *drain_pipe(size_t size)
{
  struct fxt_fs_file *f;
  assert_int_equal(fxt_fs_open("trace_pipe", FXT_FS_READ | FXT_FS_NONBLOCK, &f), 0);
  size_t cap = 1 << 20, len = 0;
  char *out = malloc(cap), chunk[4096];
  ssize_t n;
  while ((n = fxt_fs_read(f, chunk, size)) > 0) {
    assert_true((size_t)n <= size);
    if (len + (size_t)n + 1 > cap)
      out = realloc(out, cap *= 2);
    memcpy(out + len, chunk, (size_t)n);
    len += (size_t)n;
  }
  assert_int_equal(n, -11); /* EAGAIN: empty */
  out[len] = 0;
  fxt_fs_close(f);
  return out;
}

static void trace_pipe_is_identical_at_any_read_size(void **state)
{
  (void)state;
  echo("events/tfs/enable", "1", 0);
  static const size_t sizes[] = {1, 7, 64, 4096};
  for (size_t k = 0; k < 4; k++) {
    echo("tracing_on", "1", 0);
    echo("trace", "", 0);
    unsigned char mac[6] = {1, 2, 3, 4, 5, (unsigned char)k};
    for (uint64_t i = 0; i < 200; i++) {
      FXT_TRACE(tfs, alpha, i, "some name");
      FXT_TRACE(tfs, beta, (uint32_t)i, -(int16_t)i, mac);
    }
    settle();
    echo("tracing_on", "0", 0); /* frozen */
    uint64_t entries, written;
    char *want = strdup(trace_body(&entries, &written));
    assert_int_equal(entries, 400);
    char *got = drain_pipe(sizes[k]);
    if (strcmp(got, want) != 0)
      fail_msg("read size %zu: trace_pipe differs from the trace snapshot", sizes[k]);
    free(got);
    free(want);
    /* Consumed: trace is empty now, and per-CPU read events count them. */
    trace_body(&entries, &written);
    assert_int_equal(entries, 0);
  }
  echo("tracing_on", "1", 0);
}

static void marker_cmdlines_and_sizes(void **state)
{
  (void)state;
  echo("trace", "", 0);
  echo("trace_marker", "hello-marker\n", 0);
  FXT_TRACE(tfs, alpha, 1, "x"); /* (alpha may be off: the marker is recorded anyway) */
  settle();
  uint64_t e, w;
  const char *body = trace_body(&e, &w);
  assert_non_null(strstr(body, ": tracing_mark_write: hello-marker\n"));
  /* saved_cmdlines: "pid comm" of our thread. */
  char line[64], comm[16] = {0};
  pthread_getname_np(pthread_self(), comm, sizeof(comm));
  snprintf(line, sizeof(line), "%d %s\n", (int)gettid(), comm);
  assert_non_null(strstr(cat("saved_cmdlines"), line));
  assert_string_equal(cat("saved_cmdlines_size"), "128\n");
  echo("saved_cmdlines_size", "500", 0);
  assert_string_equal(cat("saved_cmdlines_size"), "500\n");
  echo_each_refused("saved_cmdlines_size", (const char *const[]){"0", "32769", "12x", NULL});
  /* buffer_size_kb: pages of 4080 bytes, at least 2, read back as the kernel does. */
  echo("buffer_size_kb", "100", 0);
  assert_string_equal(cat("buffer_size_kb"), "103\n");
  echo("buffer_size_kb", "1", 0);
  assert_string_equal(cat("buffer_size_kb"), "7\n");
  echo("buffer_size_kb", "1408", 0);
  assert_string_equal(cat("buffer_size_kb"), "1410\n");
  echo_each_refused("buffer_size_kb", (const char *const[]){"0", "abc", "-5", NULL});
  assert_string_equal(cat("buffer_size_kb"), "1410\n");
  char total[32];
  snprintf(total, sizeof(total), "%u\n", 1410 * (unsigned)sysconf(_SC_NPROCESSORS_CONF));
  assert_string_equal(cat("buffer_total_size_kb"), total);
  /* tracing_on: any unsigned number; non-numbers are EINVAL. */
  echo("tracing_on", "7", 0);
  assert_string_equal(cat("tracing_on"), "1\n");
  echo("tracing_on", "on", -22);
  assert_string_equal(cat("trace_clock"), "[mono]\n");
}

static void stats_files(void **state)
{
  (void)state;
  echo("events/tfs/alpha/enable", "1", 0);
  FXT_TRACE(tfs, alpha, 1, "this thread has a buffer now");
  settle();
  const char *s = cat("per_cpu/cpu0/stats");
  regex_t re;
  assert_int_equal(regcomp(&re,
                           "^entries: [0-9]+\noverrun: [0-9]+\ncommit overrun: 0\nbytes: [0-9]+\n"
                           "oldest event ts: +[0-9]+\\.[0-9]{6}\nnow ts: +[0-9]+\\.[0-9]{6}\n"
                           "dropped events: [0-9]+\nread events: [0-9]+\n$",
                           REG_EXTENDED | REG_NOSUB),
                   0);
  assert_int_equal(regexec(&re, s, 0, NULL, 0), 0);
  char path[64];
  snprintf(path, sizeof(path), "per_thread/%d/stats", (int)gettid());
  assert_int_equal(regexec(&re, cat(path), 0, NULL, 0), 0);
  regfree(&re);
  struct fxt_fs_dirent d[64];
  int n = fxt_fs_list("per_cpu", d, 64);
  assert_int_equal(n, (int)sysconf(_SC_NPROCESSORS_CONF));
  assert_string_equal(d[0].name, "cpu0");
  n = fxt_fs_list("events/tfs", d, 64);
  assert_int_equal(n, 4); /* enable, filter, alpha, beta */
}

/* per_thread/TID/stats read while the consumer drains that thread (its counts are the
 * consumer's: under TSan a plain read of them here was a data race). The counts only grow,
 * and once the emitter stops and the consumer settles, "read events" is every event. */
static atomic_bool stats_emitting;
static _Atomic int stats_tid;

static void *stats_emitter(void *arg)
{
  (void)arg;
  atomic_store(&stats_tid, (int)gettid());
  /* Paced by the consumer (at most 1000 events ahead of a drain): nothing dropped, which
   * would stay in the view's per-CPU counts for the tests after this one, however long the
   * consumer waits for a CPU on a loaded machine. */
  for (uint64_t i = 0; atomic_load_explicit(&stats_emitting, memory_order_relaxed); i++) {
    FXT_TRACE(tfs, alpha, i, "drained");
    if (i % 1000 == 999)
      fxt_session_flush();
  }
  FXT_TRACE(tfs, alpha, 0, "last");
  return NULL;
}

static double elapsed_s(const struct timespec *t0)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static uint64_t stat_of(const char *text, const char *key)
{
  const char *at = strstr(text, key);
  assert_non_null(at);
  return strtoull(at + strlen(key), NULL, 10);
}

static void per_thread_stats_while_draining(void **state)
{
  (void)state;
  echo("events/tfs/alpha/enable", "1", 0);
  atomic_store(&stats_emitting, true);
  pthread_t th;
  pthread_create(&th, NULL, stats_emitter, NULL);
  while (atomic_load(&stats_tid) == 0)
    sched_yield();
  char path[64];
  snprintf(path, sizeof(path), "per_thread/%d/stats", atomic_load(&stats_tid));
  uint64_t last = 0;
  /* 200 reads at least, and until some events were read: the thread's first event waits for
   * its buffer's first writes (4 MiB: 10-40 ms on a VM with shadow paging), longer than 200
   * flushes of an idle consumer take. */
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int k = 0; k < 200 || (last == 0 && elapsed_s(&t0) < 10); k++) {
    assert_int_equal(fxt_session_flush(), 0); /* the consumer drains while we read */
    ssize_t n = fxt_fs_cat(path, buf, sizeof(buf));
    if (n < 0)
      continue; /* not attached yet */
    uint64_t read = stat_of(buf, "read events: ");
    assert_true(read >= last);
    last = read;
  }
  atomic_store(&stats_emitting, false);
  pthread_join(th, NULL);
  settle();
  /* The thread has exited: its slot may be freed already, then there is no file any more. */
  if (fxt_fs_cat(path, buf, sizeof(buf)) >= 0)
    assert_true(stat_of(buf, "read events: ") >= last);
  assert_true(last > 0);
  assert_int_equal(stat_of(buf, "dropped events: "), 0);
}

static void pid_filter(void **state)
{
  (void)state;
  echo("events/tfs/alpha/enable", "1", 0);
  echo("trace", "", 0);
  echo("set_event_pid", "1", 0); /* not us: our events are not recorded */
  FXT_TRACE(tfs, alpha, 1, "muted");
  char mine[32];
  snprintf(mine, sizeof(mine), "%d", (int)gettid());
  echo("set_event_pid", mine, 0);
  snprintf(mine, sizeof(mine), "%d\n", (int)gettid());
  assert_string_equal(cat("set_event_pid"), mine);
  FXT_TRACE(tfs, alpha, 2, "heard");
  settle();
  uint64_t e, w;
  const char *body = trace_body(&e, &w);
  assert_null(strstr(body, "muted"));
  assert_non_null(strstr(body, "heard"));
  echo("set_event_pid", "x", -22);
  echo("set_event_pid", "", 0); /* truncate: no restriction */
  assert_string_equal(cat("set_event_pid"), "");
}

static void *late_emitter(void *arg)
{
  (void)arg;
  usleep(100000);
  FXT_TRACE(tfs, alpha, 42, "late");
  return NULL;
}

static void trace_pipe_blocks_until_data(void **state)
{
  (void)state;
  echo("events/tfs/alpha/enable", "1", 0);
  echo("trace", "", 0);
  struct fxt_fs_file *f;
  assert_int_equal(fxt_fs_open("trace_pipe", FXT_FS_READ, &f), 0);
  assert_int_equal(fxt_fs_poll(f, 0), 0); /* nothing yet */
  pthread_t th;
  pthread_create(&th, NULL, late_emitter, NULL);
  char line[512];
  ssize_t n = fxt_fs_read(f, line, sizeof(line) - 1); /* blocks until the event arrives */
  pthread_join(th, NULL);
  assert_true(n > 0);
  line[n] = 0;
  assert_non_null(strstr(line, "alpha: seq=42 name=late\n"));
  fxt_fs_close(f);
}

static void losses_show_and_counts_agree(void **state)
{
  (void)state;
  fxt_session_stop(); /* a session with tiny per-thread buffers */
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "tfs:alpha",
                                   .buffer_kb = 4, .output = ""};
  assert_int_equal(fxt_session_start(&cfg), 0);
  echo("trace", "", 0);
  for (uint64_t i = 0; i < 200000; i++)
    FXT_TRACE(tfs, alpha, i, "flood");
  settle();
  /* A run of drops is reported (drop_stats) in front of the next record that fits. */
  FXT_TRACE(tfs, alpha, 200000, "after");
  settle();
  /* Per-thread and per-CPU drop counts: the same losses, seen two ways. */
  uint64_t per_cpu = 0, per_thread = 0;
  for (long c = 0; c < sysconf(_SC_NPROCESSORS_CONF); c++) {
    char path[64];
    snprintf(path, sizeof(path), "per_cpu/cpu%ld/stats", c);
    per_cpu += strtoull(strstr(cat(path), "dropped events: ") + 16, NULL, 10);
  }
  char path[64];
  snprintf(path, sizeof(path), "per_thread/%d/stats", (int)gettid());
  per_thread = strtoull(strstr(cat(path), "dropped events: ") + 16, NULL, 10);
  assert_true(per_thread > 0);
  assert_int_equal(per_cpu, per_thread);
  /* trace_pipe shows the gaps. */
  char *stream = drain_pipe(4096);
  assert_non_null(strstr(stream, " EVENTS]\n"));
  regex_t re;
  assert_int_equal(regcomp(&re, "(^|\n)CPU:[0-9]+ \\[LOST [0-9]+ EVENTS\\]\n", REG_EXTENDED), 0);
  assert_int_equal(regexec(&re, stream, 0, NULL, 0), 0);
  regfree(&re);
  free(stream);
}

static uint64_t thread_dropped(void)
{
  char path[64];
  snprintf(path, sizeof(path), "per_thread/%d/stats", (int)gettid());
  return strtoull(strstr(cat(path), "dropped events: ") + 16, NULL, 10);
}

/* A drop run reported after the thread moved to another CPU (the writer puts its drop_stats
 * record in front of the next record that fits, and the `cpu` record of the move between):
 * trace_pipe shows the LOST line right before that record, on the CPU it is on, with the run's
 * count. It once waited on the first CPU for an event that never came there. */
static void losses_follow_the_thread_to_its_new_cpu(void **state)
{
  (void)state;
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
    skip();
  cpu_set_t was, one;
  assert_int_equal(sched_getaffinity(0, sizeof(was), &was), 0);
  fxt_session_stop();
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "tfs:alpha",
                                   .buffer_kb = 4, .output = ""};
  assert_int_equal(fxt_session_start(&cfg), 0);
  uint64_t pending = 0, seq = 0;
  /* A flood on CPU 0 leaves a drop run pending in the writer unless its last record fitted
   * (the consumer drained the ring just before): then flood again. */
  for (int round = 0; round < 20 && pending == 0; round++) {
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
    echo("trace", "", 0);
    for (uint64_t i = 0; i < 20000; i++)
      FXT_TRACE(tfs, alpha, i, "flood");
    settle();
    uint64_t before = thread_dropped();
    CPU_ZERO(&one);
    CPU_SET(1, &one);
    assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
    seq = 1000000 + (uint64_t)round;
    FXT_TRACE(tfs, alpha, seq, "moved");
    settle();
    pending = thread_dropped() - before;
  }
  assert_int_equal(sched_setaffinity(0, sizeof(was), &was), 0);
  assert_true(pending > 0);
  char *stream = drain_pipe(4096);
  char want[128];
  snprintf(want, sizeof(want), "CPU:1 [LOST %llu EVENTS]\n", (unsigned long long)pending);
  char *lost = strstr(stream, want);
  if (lost == NULL)
    fail_msg("no \"%.*s\" in trace_pipe (%zu bytes)", (int)strlen(want) - 1, want, strlen(stream));
  char *next = lost + strlen(want);
  char moved[64];
  snprintf(moved, sizeof(moved), "alpha: seq=%llu name=moved\n", (unsigned long long)seq);
  char *eol = strchr(next, '\n');
  assert_non_null(eol);
  assert_true(strstr(next, moved) == eol + 1 - strlen(moved)); /* the very next line */
  free(stream);
}

/* `trace` read in pieces while the view moves on (live.h live_iter): what arrived after the
 * open is not shown; what newer entries evicted before the reader reached it is a LOST line;
 * lines + LOST counts == the entries the header counted at the open, exactly. */
static void trace_read_in_pieces_while_the_view_moves(void **state)
{
  (void)state;
  /* On one CPU: the view is per CPU, and events of a thread that moved to another CPU after
   * the open would evict nothing of the first CPU's (seen once under TSan: 1000 lines, 0 lost). */
  cpu_set_t was, one;
  assert_int_equal(sched_getaffinity(0, sizeof(was), &was), 0);
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
  echo("events/tfs/alpha/enable", "1", 0);
  echo("buffer_size_kb", "64", 0); /* 16 pages of 4080 bytes a CPU: ~1,300 of these events */
  echo("trace", "", 0);
  enum { AT_OPEN = 1000, LATER = 5000 };
  for (uint64_t i = 0; i < AT_OPEN; i++) {
    FXT_TRACE(tfs, alpha, i, "n");
    if (i % 100 == 99)
      settle();
  }
  settle();
  struct fxt_fs_file *f;
  assert_int_equal(fxt_fs_open("trace", FXT_FS_READ, &f), 0);
  static char text[1 << 20];
  size_t len = 0;
  ssize_t n;
  while (len < 8192 && (n = fxt_fs_read(f, text + len, 512)) > 0) /* the header, some lines */
    len += (size_t)n;
  size_t first_piece = len;
  for (uint64_t i = AT_OPEN; i < AT_OPEN + LATER; i++) { /* evicts every entry of the open */
    FXT_TRACE(tfs, alpha, i, "n");
    if (i % 100 == 99)
      settle();
  }
  settle();
  while ((n = fxt_fs_read(f, text + len, 4096)) > 0 && len < sizeof(text) - 4096)
    len += (size_t)n;
  assert_int_equal(n, 0);
  fxt_fs_close(f);
  text[len] = 0;
  regex_t re;
  regmatch_t m[3];
  assert_int_equal(regcomp(&re, header_re, REG_EXTENDED), 0);
  assert_int_equal(regexec(&re, text, 3, m, 0), 0);
  regfree(&re);
  uint64_t entries = strtoull(text + m[1].rm_so, NULL, 10);
  assert_int_equal(entries, AT_OPEN);
  uint64_t lines = 0, lost = 0, last = 0;
  for (const char *p = text + m[0].rm_eo; *p; p = strchr(p, '\n') + 1) {
    const char *l = strstr(p, "[LOST "), *a = strstr(p, ": alpha: seq="), *e = strchr(p, '\n');
    assert_non_null(e);
    if (l && l < e) {
      lost += strtoull(l + 6, NULL, 10);
    } else {
      assert_true(a && a < e);
      uint64_t seq = strtoull(a + 13, NULL, 10);
      assert_true(seq < AT_OPEN); /* nothing that arrived after the open */
      assert_true(lines == 0 || seq > last); /* in order */
      last = seq;
      lines++;
    }
  }
  print_message("trace in pieces: %zu bytes first, %llu lines + %llu lost of %llu\n",
                first_piece, (unsigned long long)lines, (unsigned long long)lost,
                (unsigned long long)entries);
  assert_int_equal(sched_setaffinity(0, sizeof(was), &was), 0);
  assert_true(lines > 0 && lost > 0);
  assert_int_equal(lines + lost, entries);
  echo("buffer_size_kb", "1408", 0);
}

/* The trace body's lines count, and each satisfies pred(seq, val). */
static int count_lines(const char *body, const char *event, bool (*pred)(unsigned long long,
                                                                          unsigned long long))
{
  int n = 0;
  char key[64];
  snprintf(key, sizeof(key), ": %s: seq=", event);
  for (const char *p = strstr(body, key); p; p = strstr(p + 1, key)) {
    unsigned long long seq, val;
    if (sscanf(p + strlen(key), "%llu val=%llu", &seq, &val) != 2)
      fail_msg("unparsable line near '%.60s'", p);
    if (pred && !pred(seq, val))
      fail_msg("event seq=%llu val=%llu should have been filtered out", seq, val);
    n++;
  }
  return n;
}

static bool issue_filter(unsigned long long seq, unsigned long long val)
{
  return seq > 100 && !(val & 1);
}

static void filters_let_exactly_the_matching_events_through(void **state)
{
  (void)state;
  echo("events/flt/fv/enable", "1", 0);
  echo("trace", "", 0);
  echo("events/flt/fv/filter", "seq > 100 && !(val & 1)", 0);
  assert_string_equal(cat("events/flt/fv/filter"), "seq > 100 && !(val & 1)\n");
  for (uint64_t i = 0; i < 1000; i++)
    FXT_TRACE(flt, fv, i, i, i % 3 ? "worker" : "sink");
  settle();
  uint64_t e, w;
  const char *body = trace_body(&e, &w);
  assert_int_equal(count_lines(body, "fv", issue_filter), 449); /* 102, 104, ..., 998 */
  assert_int_equal(e, 449); /* filtered-out events took no space */
  /* Strings and globs. */
  echo("trace", "", 0);
  echo("events/flt/fv/filter", "who ~ \"s*\" && seq < 30", 0);
  for (uint64_t i = 0; i < 1000; i++)
    FXT_TRACE(flt, fv, i, i, i % 3 ? "worker" : "sink");
  settle();
  body = trace_body(&e, &w);
  assert_int_equal(count_lines(body, "fv", NULL), 10); /* 0, 3, ..., 27 */
  /* A parse error: the write fails (kernel errno), the file shows the caret, error_log the
   * entry, and the event records everything again (the kernel drops the old filter). */
  echo("error_log", "", 0);
  echo("events/flt/fv/filter", "seq >< 3", -22);
  assert_string_equal(cat("events/flt/fv/filter"),
                      "seq >< 3\n"
                      "      ^\n" /* the kernel: one past "seq >" (checked live) */
                      "parse_error: Invalid value (did you forget quotes)?\n\n");
  const char *log = cat("error_log");
  assert_non_null(strstr(log, "] event filter parse error: error: Invalid value (did you forget "
                              "quotes)?\n  Command: seq >< 3\n"));
  echo("events/flt/fv/filter", "nosuch == 1", -22);
  assert_non_null(strstr(cat("events/flt/fv/filter"), "parse_error: Field not found\n"));
  echo("trace", "", 0);
  for (uint64_t i = 0; i < 50; i++)
    FXT_TRACE(flt, fv, i, i, "x");
  settle();
  body = trace_body(&e, &w);
  assert_int_equal(count_lines(body, "fv", NULL), 50);
  /* "0" clears. */
  echo("events/flt/fv/filter", "seq == 1", 0);
  echo("events/flt/fv/filter", "0", 0);
  assert_string_equal(cat("events/flt/fv/filter"), "none\n");
  echo("error_log", "", 0);
  assert_string_equal(cat("error_log"), "");
}

static void system_filter(void **state)
{
  (void)state;
  echo("events/tfs/enable", "1", 0);
  echo("trace", "", 0);
  assert_string_equal(cat("events/tfs/filter"),
                      "### global filter ###\n"
                      "# Use this to set filters for multiple events.\n"
                      "# Only events with the given fields will be affected.\n"
                      "# If no events are modified, an error message will be displayed here\n");
  /* alpha has seq: filtered; beta has no seq: the kernel's error filter (records all). */
  echo("events/tfs/filter", "seq < 3", 0);
  assert_string_equal(cat("events/tfs/alpha/filter"), "seq < 3\n");
  assert_non_null(strstr(cat("events/tfs/beta/filter"),
                         "parse_error: Couldn't find or set field in one of a subsystem's "
                         "events\n"));
  unsigned char mac[6] = {0};
  for (uint64_t i = 0; i < 10; i++) {
    FXT_TRACE(tfs, alpha, i, "a");
    FXT_TRACE(tfs, beta, (uint32_t)i, 0, mac);
  }
  settle();
  uint64_t e, w;
  trace_body(&e, &w);
  assert_int_equal(e, 3 + 10);
  echo("events/tfs/filter", "0", 0);
  assert_string_equal(cat("events/tfs/alpha/filter"), "none\n");
}

static atomic_bool swapping;

static void *filtered_emitter(void *arg)
{
  (void)arg;
  uint64_t i = 0;
  while (atomic_load(&swapping))
  {
    FXT_TRACE(flt, fv, i, i, "w");
    i++;
  }
  return NULL;
}

/* Programs replaced and cleared thousands of times while two threads emit: no emission ever
 * uses a freed program (ASan), no race (TSan). */
static void filter_replaced_under_load(void **state)
{
  (void)state;
  echo("events/flt/fv/enable", "1", 0);
  atomic_store(&swapping, true);
  pthread_t th[2];
  for (int i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, filtered_emitter, NULL);
  for (int k = 0; k < 2000; k++) {
    char text[64];
    snprintf(text, sizeof(text), "val %% 7 == %d || who == \"w%d\"", k % 7, k);
    echo("events/flt/fv/filter", k % 5 == 4 ? "0" : text, k % 5 == 4 ? 0 : -22);
    if (k % 5 != 4)
      echo("events/flt/fv/filter", k % 2 ? "val & 1" : "seq > 10 && val < 5000000", 0);
  }
  atomic_store(&swapping, false);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  echo("events/flt/fv/filter", "0", 0);
}

/* The numbers written to the files the kernel reads with kstrtoul_from_user in base 10: an
 * optional '+', then digits only; past ULONG_MAX ERANGE; a value out of the file's range
 * EINVAL. What this machine's kernel (6.18) answered to the same writes, tracefs mounted:
 * "+1" and "01" taken by tracing_on, buffer_size_kb, saved_cmdlines_size, options/print-parent,
 * events/enable, events/sched/enable, events/sched/sched_switch/enable; "+0" taken by the
 * enable files; 99999999999999999999999 "Numerical result out of range" and "+", " 1",
 * "0x1", "1x", "-1", "1 " "Invalid argument" from each; 2 "Invalid argument" from the 0/1 files;
 * tracing_thresh the same ("+5" taken, " 5" and "5 " refused). max_graph_depth, which this
 * kernel has not (no function_graph tracer), as its source's graph_depth_write: kstrtoul. */
static void numbers_as_kstrtoul(void **state)
{
  (void)state;
  static const char *const files[] = {"tracing_on", "buffer_size_kb", "saved_cmdlines_size",
                                      "options/funcgraph-abstime", "options/graph-time",
                                      "events/enable", "events/tfs/enable",
                                      "events/tfs/alpha/enable", "tracing_thresh",
                                      "max_graph_depth"};
  static const char *const refused[] = {"+", " 1", "0x1", "1x", "-1", "1 ", NULL};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    echo(files[i], "+1", 0);
    echo(files[i], "01", 0);
    echo(files[i], "99999999999999999999999", -ERANGE);
    echo(files[i], "+99999999999999999999999x", -ERANGE); /* the overflow is said first */
    echo_each_refused(files[i], refused);
  }
  assert_string_equal(cat("events/tfs/alpha/enable"), "1\n");
  echo("events/tfs/alpha/enable", "+0", 0);
  assert_string_equal(cat("events/tfs/alpha/enable"), "0\n");
  echo("options/funcgraph-abstime", "2", -EINVAL);
  echo("options/funcgraph-abstime", "+0", 0);
  assert_string_equal(cat("options/funcgraph-abstime"), "0\n");
  echo("events/enable", "2", -EINVAL);
  echo("events/enable", "0", 0);
  echo("tracing_on", "+1", 0);
  assert_string_equal(cat("tracing_on"), "1\n");
  echo("tracing_thresh", "+0", 0);
  assert_string_equal(cat("tracing_thresh"), "0\n");
  echo("max_graph_depth", "0", 0);
}

FXT_TEST_MAIN(
    FXT_TEST_ST(enable_files_and_set_event), FXT_TEST_ST(id_and_format),
    FXT_TEST_ST(trace_shows_events_and_truncation_clears),
    FXT_TEST_ST(trace_read_in_pieces_while_the_view_moves),
    FXT_TEST_ST(trace_pipe_is_identical_at_any_read_size), FXT_TEST_ST(marker_cmdlines_and_sizes),
    FXT_TEST_ST(stats_files), FXT_TEST_ST(per_thread_stats_while_draining), FXT_TEST_ST(pid_filter),
    FXT_TEST_ST(trace_pipe_blocks_until_data), FXT_TEST_ST(losses_show_and_counts_agree),
    FXT_TEST_ST(losses_follow_the_thread_to_its_new_cpu),
    FXT_TEST_ST(filters_let_exactly_the_matching_events_through), FXT_TEST_ST(system_filter),
    FXT_TEST_ST(filter_replaced_under_load), FXT_TEST_ST(numbers_as_kstrtoul))
