/* test_recover_kill - nothing committed is lost when a traced process dies (issue 6).
 *
 *   test_recover_kill CRASH_CHILD FXTRACE [--iterations N] [--seed S]
 *
 * Each iteration runs crash_child (several threads firing sequence-numbered events as fast as
 * they can, its consumer writing the output file; buffers, output and progress in a fresh
 * directory on /dev/shm; in a third of the runs a signal handler fires events of its own
 * sequence on every emitter, many of them while it is inside an emission: signal context) in
 * discard, overwrite or block mode with a small buffer, lets it run
 * a random 2..40 ms, and kills it: SIGKILL from here, or (the other tests) the process kills
 * itself with SIGSEGV or abort() at a random moment. Then it recovers the session - through
 * the library, or through `fxtrace recover` and `fxtrace check` every fourth iteration - and
 * checks, for every thread, against the progress the child published in shared memory (done:
 * events whose FXT_TRACE had returned):
 *  - the recovered file decodes strictly (fxtrace check: and follows the conventions);
 *  - sequence numbers only increase: no event twice, none out of order;
 *  - discard and block modes: every gap in the sequence is exactly the drop_stats (or lost)
 *    records between the two events; overwrite mode: the gaps add up exactly to the overrun
 *    records (the consumer reports an overrun where it notices it, not at the gap);
 *  - events recovered + losses reported = done or done + 1 (the event being emitted at death
 *    was committed, or counted as dropped, just before the process died; otherwise it was
 *    mid-write and is skipped; + 1 more with signals: one in the handler, one under it), and
 *    the last recovered sequence number is not past done;
 *  - with signals: handler events never twice, never out of order (totals as above; gaps in
 *    total only, as a drop_stats record counts events of both sequences);
 *  - overwrite mode: the newest events are never lost: the last one is done - 1 or done.
 * The directory is removed at the end of each iteration, and after a failure (FXT_KEEP=1 in
 * the environment keeps it).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../test_main.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fxtrace/fxt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "formats/fileio.h"
#include "base/recover.h"
#include "recover_util.h"

static const char *child_path, *fxtrace_path;
static int iterations = 8;
static unsigned seed;

struct progress {
  uint32_t tid, reserved;
  uint64_t done, sig_done, reserved2;
};

/* Per thread, what the recovered file says. */
struct thr {
  uint64_t tid;
  uint64_t events, next, gaps, losses, pending; /* pending: losses since the last event */
  uint64_t last;                                /* last sequence number (valid if events) */
  uint64_t sig_events, sig_last;                /* rt:sig (signal handler) */
};

#define MAX_THR 64
static struct thr thr[MAX_THR];
static int nthr;

static struct thr *thread_of(uint64_t tid)
{
  for (int i = 0; i < nthr; i++)
    if (thr[i].tid == tid)
      return &thr[i];
  if (nthr == MAX_THR)
    return NULL;
  memset(&thr[nthr], 0, sizeof(thr[nthr]));
  thr[nthr].tid = tid;
  return &thr[nthr++];
}

static bool is(const struct fxt_str_ref *r, const char *s)
{
  return r->len == strlen(s) && memcmp(r->data, s, r->len) == 0;
}

/* Whether number k of a thread's sequence `what` (seq, sig) may follow the n before it, the
 * last of them `last`; if not, the failure in msg. */
static bool in_order(const struct thr *t, const char *what, uint64_t k, uint64_t n, uint64_t last,
                     char *msg, size_t size)
{
  if (n == 0 || k > last)
    return true;
  snprintf(msg, size, "thread %llu: %s %llu after %llu (duplicate or reordered)",
           (unsigned long long)t->tid, what, (unsigned long long)k, (unsigned long long)last);
  return false;
}

/* One record of the recovered file into the threads' tallies (ctx: the per-gap check, in
 * discard/block mode); a failure into msg. */
static void tally_record(void *ctx, const struct fxt_record *r, char *msg, size_t size)
{
  const bool per_gap = *(const bool *)ctx;
  if (r->kind != FXT_KIND_EVENT || r->u.event.thread.thread_koid == 0)
    return;
  const struct fxt_event *e = &r->u.event;
  struct thr *t = thread_of(e->thread.thread_koid);
  if (!t)
    return;
  if (is(&e->category, "kernel:meta")) {
    if ((is(&e->name, "drop_stats") || is(&e->name, "overrun") || is(&e->name, "lost")) &&
        e->num_args > 0) {
      t->losses += e->args[0].value.u32;
      t->pending += e->args[0].value.u32;
    }
    return;
  }
  if (is(&e->name, "sig") && e->num_args == 1) {
    uint64_t k = e->args[0].value.u64;
    if (!in_order(t, "sig", k, t->sig_events, t->sig_last, msg, size))
      return;
    t->sig_events++;
    t->sig_last = k;
    return;
  }
  if (!is(&e->name, "seq") || e->num_args != 1)
    return;
  uint64_t seq = e->args[0].value.u64;
  if (!in_order(t, "seq", seq, t->events, t->last, msg, size))
    return;
  uint64_t gap = seq - t->next;
  if (per_gap && gap != t->pending) {
    snprintf(msg, size, "thread %llu: gap of %llu before seq %llu, but %llu losses reported there",
             (unsigned long long)t->tid, (unsigned long long)gap, (unsigned long long)seq,
             (unsigned long long)t->pending);
    return;
  }
  t->gaps += gap;
  t->pending = 0;
  t->events++;
  t->last = seq;
  t->next = seq + 1;
}

/* Reads the recovered file; per-gap check in discard/block mode. Returns "" or a failure. */
static const char *tally(const char *path, bool per_gap)
{
  static char msg[512];
  nthr = 0;
  return ru_walk(path, "the recovered file", tally_record, &per_gap, msg, sizeof(msg));
}

static void report_line(void *ctx, int damage, const char *line)
{
  (void)ctx;
  if (damage)
    fprintf(stderr, "  recover: %s\n", line);
}

static int write_fd(void *ctx, const void *p, size_t n)
{
  return fxt_fio_write_all(*(int *)ctx, p, n) ? 0 : -EIO;
}

/* Recovers dir/SESSION into out, in-process or with the tool. */
static void recover(const char *session, const char *out, bool with_tool)
{
  if (with_tool) {
    const char *argv[] = {fxtrace_path, "recover", "--quiet", session, "-o", out, NULL};
    int st = ru_run(argv, NULL);
    if (st != 0)
      fail_msg("fxtrace recover %s exited %d", session, st);
    const char *cargv[] = {fxtrace_path, "check", out, NULL};
    st = ru_run(cargv, "/dev/null");
    if (st != 0) {
      ru_run(cargv, NULL);
      fail_msg("fxtrace check %s exited %d", out, st);
    }
    return;
  }
  struct ru_session s;
  if (!ru_open_session(session, &s))
    fail_msg("cannot open the session files in %s", session);
  int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_true(fd >= 0);
  struct fxt_rec_stats st;
  int rc = fxt_recover_run(&s.in, write_fd, &fd, report_line, NULL, &st);
  close(fd);
  ru_close_session(&s);
  if (rc != 0)
    fail_msg("recovery of %s returned %d (damage %u)", session, rc, st.damage);
}

enum death { BY_KILL, BY_SEGV, BY_ABORT };

static char dir[256]; /* the current run's directory, removed by teardown (FXT_KEEP=1: kept) */

static int teardown(void **state)
{
  (void)state;
  if (dir[0] && !getenv("FXT_KEEP"))
    ru_rmtree(dir);
  else if (dir[0])
    fprintf(stderr, "# kept %s\n", dir);
  dir[0] = 0;
  return 0;
}

static void one_run(enum death how, int it)
{
  static const char *const modes[] = {"discard", "overwrite", "block"};
  static const char *const buffers[] = {"16", "64", "256"};
  const char *mode = modes[(unsigned)rand() % 3];
  const char *kb = buffers[(unsigned)rand() % 3];
  int threads = 2 + rand() % 3;
  int ms = 2 + rand() % 39;
  bool sigs = rand() % 3 == 0;
  static const char *const names[] = {"kill", "segv", "abort"};
  snprintf(dir, sizeof(dir), "/dev/shm/fxtrace-test-kill-%d-%s-%d", (int)getpid(), names[how],
           it);
  ru_rmtree(dir);
  assert_int_equal(mkdir(dir, 0700), 0);
  char threads_s[16], ms_s[16];
  snprintf(threads_s, sizeof(threads_s), "%d", threads);
  snprintf(ms_s, sizeof(ms_s), "%d", ms);
  const char *argv[] = {child_path, dir, mode, threads_s, kb, sigs ? "1" : "0",
                        how == BY_SEGV ? "segv" : "abort", ms_s, NULL};
  if (how == BY_KILL)
    argv[6] = NULL;
  char session[4200];
  pid_t pid = ru_spawn_ready(argv, dir, session, sizeof(session));
  if (pid < 0)
    fail_msg("crash_child did not start (%s)", dir);
  int want_sig = how == BY_KILL ? SIGKILL : how == BY_SEGV ? SIGSEGV : SIGABRT;
  if (how == BY_KILL) {
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
  }
  int status = 0;
  alarm(60);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  alarm(0);
  if (!WIFSIGNALED(status) || WTERMSIG(status) != want_sig) {
    ru_cat(dir, "stderr");
    fail_msg("crash_child: status 0x%x, want death by signal %d", status, want_sig);
  }
  if (ru_file_has(dir, "stderr", "ThreadSanitizer") || ru_file_has(dir, "stderr", "Sanitizer")) {
    ru_cat(dir, "stderr");
    fail_msg("a sanitizer reported in the child");
  }
  char out[300];
  snprintf(out, sizeof(out), "%s/recovered.fxt", dir);
  recover(session, out, it % 4 == 3);
  /* Drops count rt:seq and rt:sig alike: with signals, gaps are checked in total only. */
  const char *why = tally(out, strcmp(mode, "overwrite") != 0 && !sigs);
  if (why[0])
    fail_msg("%s (mode %s, buffer %s KiB, %d threads, %d ms, %s)", why, mode, kb, threads, ms,
             dir);
  /* Against the progress the child published. */
  struct progress prog[64];
  assert_true(ru_read_exact(dir, "progress", prog, sizeof(prog)));
  for (int t = 0; t < threads; t++) {
    struct thr *r = thread_of(prog[t].tid);
    assert_non_null(r);
    uint64_t done = prog[t].done, sdone = prog[t].sig_done;
    uint64_t accounted = r->events + r->sig_events + r->losses;
    uint64_t seen = r->events ? r->last + 1 : 0; /* sequence numbers up to the last event */
    bool ok = accounted >= done + sdone && accounted <= done + sdone + 1 + (sigs ? 1 : 0) &&
              seen <= done + 1 && (!r->sig_events || r->sig_last <= sdone);
    if (strcmp(mode, "overwrite") == 0)
      ok = ok && r->events && r->last + 1 >= done && r->gaps <= r->losses;
    else if (!sigs)
      ok = ok && r->gaps == r->losses - r->pending; /* the rest: drops after the last event */
    if (!ok)
      fail_msg("thread %u: done %llu + %llu in handlers; recovered %llu events (last %llu) + "
               "%llu (last %llu), %llu losses (%llu after the last event), gaps %llu (mode %s, "
               "buffer %s KiB, signals %d, %s)",
               prog[t].tid, (unsigned long long)done, (unsigned long long)sdone,
               (unsigned long long)r->events, (unsigned long long)r->last,
               (unsigned long long)r->sig_events, (unsigned long long)r->sig_last,
               (unsigned long long)r->losses, (unsigned long long)r->pending,
               (unsigned long long)r->gaps, mode, kb, sigs, dir);
  }
  ru_rmtree(dir);
  dir[0] = 0;
}

static void run_many(enum death how)
{
  for (int it = 0; it < iterations; it++)
    one_run(how, it);
}

static void killed(void **state)
{
  (void)state;
  run_many(BY_KILL);
}

static void segfaulted(void **state)
{
  (void)state;
  run_many(BY_SEGV);
}

static void aborted(void **state)
{
  (void)state;
  run_many(BY_ABORT);
}

int main(int argc, char **argv)
{
  if (!ru_take_paths(argc, argv, " [--iterations N] [--seed S]", &child_path, &fxtrace_path))
    return 2;
  seed = (unsigned)time(NULL) ^ (unsigned)getpid();
  for (int i = 3; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--iterations"))
      iterations = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--seed"))
      seed = (unsigned)strtoul(argv[i + 1], NULL, 0);
  }
  printf("# seed %u (--seed to repeat), %d iterations per kind of death\n", seed, iterations);
  srand(seed);
  FXT_RUN_TESTS(
      cmocka_unit_test_teardown(killed, teardown), cmocka_unit_test_teardown(segfaulted, teardown),
      cmocka_unit_test_teardown(aborted, teardown));
}
