/* test_cpu_wrap - the CPU of a thread's events in copies of a ring that starts after
 * overwritten records (overwrite mode; src/base/cpunote.h).
 *
 *   test_cpu_wrap FXTRACE
 *
 * A thread's stream names its CPU only when it changes (a kernel:meta `cpu` record before the
 * first event on a new CPU). Each case pins a thread to one CPU (CPU 1 when the machine has
 * two or more, so that a missing `cpu` record, which readers show as CPU 0, is seen) and has
 * it wrap its ring many times, so the only `cpu` record it ever wrote is overwritten. Then
 * every event of the thread must carry the pinned CPU, and a `cpu` record must come before
 * its first event, in:
 *  - a flight recorder's snapshot (fxt_snapshot), decoded strictly;
 *  - a flight recorder's `trace` view (fxt_fs_cat, the kernel's text: "[001]");
 *  - overwrite mode with an output file, threads that fill a small ring before the consumer
 *    comes (the output begins with an overrun), decoded strictly;
 *  - `fxtrace recover` of a flight recorder killed with SIGKILL (this program run again as
 *    the child: test_cpu_wrap --child DIR).
 * No sleeps: counts and handshakes.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fxtrace/fxt.h>
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>
#include <pthread.h>
#include <sched.h>
#include <sys/sysinfo.h>
#include <signal.h>

#include "recover_util.h"

FXT_TRACEPOINT(cpuw, seq, "seq=%llu", (u64, seq));

#define RING_KB 16
#define EVENTS 20000 /* 32 bytes each: 39 times a 16 KiB ring */

static const char *fxtrace_path;
static char dir[256];
static uint32_t want_cpu;

static void pin(void)
{
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(want_cpu, &set);
  assert_int_equal(sched_setaffinity(0, sizeof(set), &set), 0);
}

static void emit(uint64_t n)
{
  for (uint64_t i = 0; i < n; i++)
    FXT_TRACE(cpuw, seq, i);
}

/* Per thread (at most 64, by order of appearance), the CPU its latest `cpu` record named. */
struct cpu_walk {
  uint64_t tids[64], events, overrun_first;
  uint32_t cpu[64];
  bool seen_event[64];
  int nt;
};

/* One record of check_file: a cpuw:seq event on a CPU other than want_cpu is a failure. */
static void cpu_record(void *ctx, const struct fxt_record *r, char *msg, size_t size)
{
  struct cpu_walk *w = ctx;
  if (r->kind != FXT_KIND_EVENT || r->u.event.thread.thread_koid == 0)
    return;
  const struct fxt_event *e = &r->u.event;
  int k = 0;
  while (k < w->nt && w->tids[k] != e->thread.thread_koid)
    k++;
  if (k == w->nt) {
    if (w->nt == 64) {
      snprintf(msg, size, "more than 64 threads");
      return;
    }
    w->tids[w->nt] = e->thread.thread_koid;
    w->cpu[w->nt++] = UINT32_MAX;
  }
  bool meta = e->category.len == 11 && memcmp(e->category.data, "kernel:meta", 11) == 0;
  if (meta && e->name.len == 3 && memcmp(e->name.data, "cpu", 3) == 0) {
    w->cpu[k] = e->args[0].value.u32;
  } else if (meta && e->name.len == 7 && memcmp(e->name.data, "overrun", 7) == 0) {
    if (!w->seen_event[k] && w->cpu[k] == UINT32_MAX)
      w->overrun_first++; /* its stream begins after overwritten records */
  } else if (!meta && e->name.len == 3 && memcmp(e->name.data, "seq", 3) == 0) {
    if (w->cpu[k] != want_cpu) {
      snprintf(msg, size, "offset %llu: thread %llu: event on CPU %d, expected %u",
               (unsigned long long)r->offset, (unsigned long long)w->tids[k],
               w->cpu[k] == UINT32_MAX ? -1 : (int)w->cpu[k], want_cpu);
      return;
    }
    w->seen_event[k] = true;
    w->events++;
  }
}

/* Decodes path strictly (ru_walk): every cpuw:seq event must come after a `cpu` record of its
 * thread naming want_cpu. Returns the events, the threads whose stream begins with an overrun
 * in *overrun_first, failing the test on any other CPU. */
static uint64_t check_file(const char *path, uint64_t *overrun_first)
{
  struct cpu_walk w = {0};
  char msg[512];
  if (ru_walk(path, "the file", cpu_record, &w, msg, sizeof(msg))[0])
    fail_msg("%s: %s", path, msg);
  *overrun_first = w.overrun_first;
  return w.events;
}

static void start(const char *output, const char *buffers)
{
  struct fxt_session_config cfg = {.struct_size = sizeof cfg, .mode = FXT_MODE_OVERWRITE,
                                   .buffer_kb = RING_KB, .events = "cpuw:*", .output = output,
                                   .buffers = buffers};
  assert_int_equal(fxt_session_start(&cfg), 0);
}

static char text[4 << 20];

/* The pinned thread: wraps its ring, then (arg) takes a snapshot, reads `trace`, or nothing. */
enum { THEN_NOTHING, THEN_SNAPSHOT, THEN_TRACE };

static void *pinned(void *arg)
{
  pin();
  emit(EVENTS);
  char path[300];
  snprintf(path, sizeof(path), "%s/snap.fxt", dir);
  if ((intptr_t)arg == THEN_SNAPSHOT)
    assert_int_equal(fxt_snapshot(path), 0);
  if ((intptr_t)arg == THEN_TRACE)
    assert_true(fxt_fs_cat("trace", text, sizeof(text)) > 0);
  return NULL;
}

/* One pinned thread run to its end (then: what it does after wrapping), the session stopped. */
static void run_pinned_and_stop(intptr_t then)
{
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, pinned, (void *)then), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_int_equal(fxt_session_stop(), 0);
}

static void snapshot_names_the_cpu(void **state)
{
  (void)state;
  start("", "");
  run_pinned_and_stop(THEN_SNAPSHOT);
  char path[300];
  snprintf(path, sizeof(path), "%s/snap.fxt", dir);
  uint64_t ovr;
  uint64_t events = check_file(path, &ovr);
  assert_true(events > 100 && events < EVENTS); /* a wrapped ring's newest */
}

static void trace_view_names_the_cpu(void **state)
{
  (void)state;
  start("", "");
  assert_int_equal(fxt_fs_echo("tracing_on", "1"), 1);
  run_pinned_and_stop(THEN_TRACE);
  char want[16];
  snprintf(want, sizeof(want), "[%03u]", want_cpu);
  uint64_t lines = 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] == '#' || !strstr(line, " seq: seq="))
      continue;
    if (!strstr(line, want))
      fail_msg("trace: %s (expected %s)", line, want);
    lines++;
  }
  assert_true(lines > 100);
}

static void output_file_names_the_cpu(void **state)
{
  (void)state;
  char path[300];
  snprintf(path, sizeof(path), "%s/out.fxt", dir);
  /* Threads that fill their 16 KiB ring in microseconds: until one of them has its first
   * records overwritten before the consumer took them (its stream in the file starts with
   * an overrun: its `cpu` record went with them), at most 20 runs of 8. */
  for (int run = 0; run < 20; run++) {
    start(path, "");
    pthread_t th[8];
    for (int k = 0; k < 8; k++)
      assert_int_equal(pthread_create(&th[k], NULL, pinned, (void *)(intptr_t)THEN_NOTHING), 0);
    for (int k = 0; k < 8; k++)
      assert_int_equal(pthread_join(th[k], NULL), 0);
    assert_int_equal(fxt_session_stop(), 0);
    uint64_t ovr;
    check_file(path, &ovr);
    if (ovr)
      return;
  }
  skip(); /* the consumer always came in time: nothing was overwritten */
}

/* The child of the recovery case: a file-backed flight recorder in dir/buf, pinned, wraps its
 * ring, then dies of SIGKILL. */
static int child(const char *d)
{
  char buffers[300];
  snprintf(buffers, sizeof(buffers), "%s/buf", d);
  struct fxt_session_config cfg = {.struct_size = sizeof cfg, .mode = FXT_MODE_OVERWRITE,
                                   .buffer_kb = RING_KB, .events = "cpuw:*", .output = "",
                                   .buffers = buffers};
  if (fxt_session_start(&cfg) != 0)
    return 1;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(want_cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0)
    return 1;
  for (uint64_t i = 0; i < EVENTS; i++)
    FXT_TRACE(cpuw, seq, i);
  raise(SIGKILL);
  return 1;
}

static void recover_names_the_cpu(void **state)
{
  (void)state;
  const char *argv[] = {"/proc/self/exe", "--child", dir, NULL};
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  assert_true(n > 0);
  self[n] = 0;
  argv[0] = self;
  ru_child_env();
  assert_int_equal(ru_run(argv, NULL), 128 + SIGKILL);
  /* The one session directory the child left. */
  char buffers[300], session[600] = "", out[300];
  snprintf(buffers, sizeof(buffers), "%s/buf", dir);
  DIR *dd = opendir(buffers);
  assert_non_null(dd);
  struct dirent *de;
  while ((de = readdir(dd)) != NULL)
    if (de->d_name[0] != '.')
      snprintf(session, sizeof(session), "%s/%s", buffers, de->d_name);
  closedir(dd);
  assert_true(session[0]);
  snprintf(out, sizeof(out), "%s/recovered.fxt", dir);
  const char *rec[] = {fxtrace_path, "recover", session, "-o", out, NULL};
  assert_int_equal(ru_run(rec, NULL), 0);
  uint64_t ovr;
  uint64_t events = check_file(out, &ovr);
  assert_true(events > 100 && events < EVENTS);
}

int main(int argc, char **argv)
{
  want_cpu = get_nprocs() >= 2 ? 1 : 0;
  if (argc == 3 && strcmp(argv[1], "--child") == 0)
    return child(argv[2]);
  if (argc != 2) {
    fprintf(stderr, "usage: test_cpu_wrap FXTRACE\n");
    return 2;
  }
  fxtrace_path = argv[1];
  snprintf(dir, sizeof(dir), "/dev/shm/fxt-cpuwrap-%d", (int)getpid());
  mkdir(dir, 0700);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(snapshot_names_the_cpu),
      cmocka_unit_test(trace_view_names_the_cpu),
      cmocka_unit_test(output_file_names_the_cpu),
      cmocka_unit_test(recover_names_the_cpu),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  ru_rmtree(dir);
  return rc;
}
