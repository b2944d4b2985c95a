/* test_snapshot - flight-recorder snapshots (issue 6).
 *
 *   test_snapshot CRASH_CHILD FXTRACE
 *
 * A flight recorder (mode=overwrite, no output file, 64 KiB buffers in a fresh directory) with
 * three threads firing sequence-numbered events (snap:seq) as fast as they can. While they
 * run:
 *  - fxt_snapshot() five times, each once every thread has done a few thousand more events;
 *  - `fxtrace snapshot PID -o FILE` through the live control socket;
 * and, in a child that aborts with trigger=FILE set, the snapshot its fatal-signal handler
 * writes (and the child still dies of SIGABRT: the handler chains to the default action).
 * Every snapshot must be a valid file (`fxtrace check`) in which each thread's events are a
 * contiguous run of sequence numbers (no gap, none twice: no torn record either, as a torn
 * record would not decode or would break the run), non-empty for every thread that fired,
 * and recent: it ends no earlier than where the thread was when the snapshot was asked for.
 * Everything is written under one directory on /dev/shm, removed at the end (also after a
 * failure).
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
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "recover_util.h"

FXT_TRACEPOINT(snap, seq, "seq=%llu", (u64, seq));

#define THREADS 3

static const char *child_path, *fxtrace_path;
static char dir[256];

static _Atomic uint64_t done[THREADS]; /* events whose FXT_TRACE returned, per thread */
static _Atomic uint32_t tids[THREADS];
static _Atomic bool quit;

static void *producer(void *arg)
{
  int k = (int)(intptr_t)arg;
  atomic_store(&tids[k], (uint32_t)gettid());
  for (uint64_t i = 0; !atomic_load_explicit(&quit, memory_order_relaxed); i++) {
    FXT_TRACE(snap, seq, i);
    atomic_store_explicit(&done[k], i + 1, memory_order_release);
  }
  return NULL;
}

/* Waits until every producer has done `more` events past `from` (no sleeps: their counts). */
static void wait_progress(const uint64_t *from, uint64_t more)
{
  for (int k = 0; k < THREADS; k++)
    while (atomic_load_explicit(&done[k], memory_order_acquire) < from[k] + more)
      sched_yield();
}

struct window {
  uint32_t tid;
  uint64_t first, last, events;
};

/* The threads' windows windows() fills: w[], *n of them (at most 8). */
struct windows {
  struct window *w;
  int *n;
};

/* One record of the snapshot into the windows (ctx); a gap or a repeat into msg. */
static void window_record(void *ctx, const struct fxt_record *r, char *msg, size_t size)
{
  struct window *w = ((struct windows *)ctx)->w;
  int *n = ((struct windows *)ctx)->n;
  const struct fxt_event *e = &r->u.event;
  if (r->kind != FXT_KIND_EVENT || e->name.len != 3 || memcmp(e->name.data, "seq", 3) != 0)
    return;
  struct window *t = NULL;
  for (int i = 0; i < *n; i++)
    if (w[i].tid == e->thread.thread_koid)
      t = &w[i];
  if (!t && *n < 8) {
    t = &w[(*n)++];
    *t = (struct window){(uint32_t)e->thread.thread_koid, e->args[0].value.u64,
                         e->args[0].value.u64 - 1, 0};
  }
  if (!t)
    return;
  uint64_t v = e->args[0].value.u64;
  if (v != t->last + 1)
    snprintf(msg, size, "thread %u: seq %llu after %llu (offset %llu)", t->tid,
             (unsigned long long)v, (unsigned long long)t->last, (unsigned long long)r->offset);
  t->last = v;
  t->events++;
}

/* Checks path: decodes strictly, and per thread the snap:seq events are first..last with no
 * gap and nothing twice. Fills w[] (n threads). Returns "" or what is wrong. */
static const char *windows(const char *path, struct window *w, int *n)
{
  static char msg[512];
  struct windows ctx = {w, n};
  *n = 0;
  return ru_walk(path, "the snapshot", window_record, &ctx, msg, sizeof(msg));
}

/* The checks every snapshot gets; asked[k]: producer k's count when it was asked for. */
static void check_snapshot(const char *path, const uint64_t *asked)
{
  struct window w[8];
  int n;
  const char *why = windows(path, w, &n);
  if (why[0])
    fail_msg("%s: %s", path, why);
  const char *argv[] = {fxtrace_path, "check", path, NULL};
  if (ru_run(argv, "/dev/null") != 0) {
    ru_run(argv, NULL);
    fail_msg("fxtrace check %s failed", path);
  }
  for (int k = 0; k < THREADS && asked; k++) {
    const struct window *t = NULL;
    for (int i = 0; i < n; i++)
      if (w[i].tid == atomic_load(&tids[k]))
        t = &w[i];
    if (!t)
      fail_msg("%s: no events of producer %d", path, k);
    if (t->last + 1 < asked[k])
      fail_msg("%s: producer %d: window %llu..%llu ends before %llu, where it was when the "
               "snapshot was asked for",
               path, k, (unsigned long long)t->first, (unsigned long long)t->last,
               (unsigned long long)asked[k]);
  }
}

static pthread_t threads[THREADS];

static int start_recorder(void **state)
{
  (void)state;
  if (!ru_fresh_dir(dir, sizeof(dir), "snapshot"))
    return -1;
  char ctl[300];
  snprintf(ctl, sizeof(ctl), "%s/ctl", dir);
  setenv("FXTRACE_DIR", ctl, 1); /* the control socket, for `fxtrace snapshot` */
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "snap:*", .output = "",
                                   .buffers = dir, .buffer_kb = 64, .total_kb = 1024,
                                   .mode = FXT_MODE_OVERWRITE};
  if (fxt_session_start(&cfg) != 0)
    return -1;
  for (int k = 0; k < THREADS; k++)
    pthread_create(&threads[k], NULL, producer, (void *)(intptr_t)k);
  uint64_t zero[THREADS] = {0};
  wait_progress(zero, 20000); /* every buffer has wrapped (64 KiB: about 2000 events) */
  return 0;
}

static int stop_recorder(void **state)
{
  (void)state;
  atomic_store(&quit, true);
  for (int k = 0; k < THREADS; k++)
    pthread_join(threads[k], NULL);
  fxt_session_stop();
  ru_rmtree(dir);
  return 0;
}

static void now(uint64_t *v)
{
  for (int k = 0; k < THREADS; k++)
    v[k] = atomic_load_explicit(&done[k], memory_order_acquire);
}

static void snapshots_while_producers_run(void **state)
{
  (void)state;
  for (int i = 0; i < 5; i++) {
    uint64_t asked[THREADS];
    now(asked);
    char path[300];
    snprintf(path, sizeof(path), "%s/snap-%d.fxt", dir, i);
    assert_int_equal(fxt_snapshot(path), 0);
    check_snapshot(path, asked);
    wait_progress(asked, 3000);
  }
  assert_int_equal(fxt_snapshot(""), FXT_EINVAL);
}

static void snapshot_through_the_socket(void **state)
{
  (void)state;
  uint64_t asked[THREADS];
  now(asked);
  char path[300], pid[32];
  snprintf(path, sizeof(path), "%s/cli.fxt", dir);
  snprintf(pid, sizeof(pid), "%d", (int)getpid());
  const char *argv[] = {fxtrace_path, "snapshot", pid, "-o", path, NULL};
  assert_int_equal(ru_run(argv, NULL), 0);
  check_snapshot(path, asked);
}

/* A child that aborts with trigger= set: its handler writes the snapshot, then it dies of
 * SIGABRT all the same. */
static void trigger_on_abort(void **state)
{
  (void)state;
  char cdir[300], snap[400], session[4200];
  snprintf(cdir, sizeof(cdir), "%s/child", dir);
  assert_int_equal(mkdir(cdir, 0700), 0);
  snprintf(snap, sizeof(snap), "%s/trigger-%%p.fxt", cdir);
  setenv("CRASH_TRIGGER", snap, 1);
  const char *argv[] = {child_path, cdir, "overwrite", "3", "64", "0", "abort", "30", NULL};
  pid_t pid = ru_spawn_ready(argv, cdir, session, sizeof(session));
  unsetenv("CRASH_TRIGGER");
  assert_true(pid > 0);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT) {
    ru_cat(cdir, "stderr");
    fail_msg("the child: status 0x%x, want death by SIGABRT", status);
  }
  snprintf(snap, sizeof(snap), "%s/trigger-%d.fxt", cdir, (int)pid);
  struct window w[8];
  int n;
  const char *why = windows(snap, w, &n);
  if (why[0])
    fail_msg("%s: %s", snap, why);
  assert_true(n >= 1); /* the emitters' windows (crash_child: 3 threads) */
  check_snapshot(snap, NULL);
}

int main(int argc, char **argv)
{
  if (!ru_take_paths(argc, argv, "", &child_path, &fxtrace_path))
    return 2;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(snapshots_while_producers_run),
      cmocka_unit_test(snapshot_through_the_socket),
      cmocka_unit_test(trigger_on_abort),
  };
  return cmocka_run_group_tests(tests, start_recorder, stop_recorder);
}
