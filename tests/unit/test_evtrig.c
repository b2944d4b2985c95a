/* test_evtrig - event triggers live, in-process (events/<sys>/<ev>/trigger, src/host/evtrig*.c):
 * the file's text and the kernel's errors (EINVAL, EEXIST, ERANGE, the filter's codes and
 * error_log entries, as this machine's 6.18 kernel answered the same writes), then sessions
 * recorded to a file and read back: traceoff stops after exactly the event that fired it,
 * counts fire exactly, enable_event / disable_event switch another event exactly at the
 * triggering event, `if` filters select exactly, snapshot writes its file, stacktrace records
 * a stack right after the event whose frames include the caller, and two threads fire while
 * the control thread adds and removes triggers (exact counts; TSan-clean). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../test_main.h"

#include <dlfcn.h>
#include <errno.h>
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/text.h"
#include "formats/fxtfile.h"
#include "tracefs_test.h"

FXT_TRACEPOINT(trg, a, "seq=%llu", (u64, seq));
FXT_TRACEPOINT(trg, b, "seq=%llu", (u64, seq));
FXT_TRACEPOINT(trg, c, "seq=%llu", (u64, seq));

static char dir[64], out[128], snap[128];


static int setup(void **state)
{
  (void)state;
  snprintf(dir, sizeof(dir), "/tmp/fxt-evtrig-XXXXXX");
  assert_non_null(mkdtemp(dir));
  snprintf(out, sizeof(out), "%s/out.fxt", dir);
  snprintf(snap, sizeof(snap), "%s/snap.fxt", dir);
  live_start(FXT_MODE_DISCARD, out, snap);
  return 0;
}

static int teardown(void **state)
{
  (void)state;
  /* Every trigger of the test removed (their events leave soft mode), then the session. */
  static const char *const rm[] = {"!traceoff", "!stacktrace", "!snapshot",
                                   "!enable_event:trg:b", "!disable_event:trg:b"};
  static const char *const evs[] = {"events/trg/a/trigger", "events/trg/b/trigger",
                                    "events/trg/c/trigger"};
  for (size_t e = 0; e < 3; e++)
    for (size_t i = 0; i < sizeof(rm) / sizeof(rm[0]); i++)
      echo(evs[e], rm[i], 0);
  echo("set_event", "", 0);
  fxt_session_stop();
  unlink(out);
  unlink(snap);
  rmdir(dir);
  return 0;
}

/* ---- the file read back ---- */

#define MAXREC 100000
struct rec {
  char name[16]; /* "a", "b", "c", "kernel_stack" */
  uint64_t seq, offset;
  uint32_t nargs;
  uint64_t pc[FXT_MAX_FIELDS];
  uint64_t tid;
};
static struct rec recs[MAXREC];
static size_t nrecs;

static int by_offset(const void *x, const void *y)
{
  const struct rec *a = x, *b = y;
  return a->offset < b->offset ? -1 : a->offset > b->offset;
}

static uint64_t arg_u(const struct fxt_arg *a)
{
  return a->type == FXT_ARG_UINT32 ? a->value.u32 : a->value.u64;
}

/* The events of the file (trg's and the stacks), in file order. */
static void read_back(const char *path)
{
  struct fxtf_file *f;
  char err[256];
  if (fxtf_open(path, &f, err, sizeof(err)) != 0)
    fail_msg("%s: %s", path, err);
  nrecs = 0;
  for (size_t i = 0; i < fxtf_event_count(f) && nrecs < MAXREC; i++) {
    struct fxtf_event e;
    assert_int_equal(fxtf_event_at(f, i, &e, err, sizeof(err)), 0);
    bool stack = e.ev.name.len == 12 && memcmp(e.ev.name.data, "kernel_stack", 12) == 0;
    bool ours = e.ev.category.len == 3 && memcmp(e.ev.category.data, "trg", 3) == 0;
    if (!stack && !ours)
      continue;
    struct rec *r = &recs[nrecs++];
    memset(r, 0, sizeof(*r));
    snprintf(r->name, sizeof(r->name), "%.*s", (int)e.ev.name.len, e.ev.name.data);
    r->offset = e.offset;
    r->nargs = e.ev.num_args;
    r->tid = e.thread->tid;
    if (ours)
      r->seq = arg_u(&e.ev.args[0]);
    for (uint32_t k = 0; stack && k < e.ev.num_args; k++) {
      assert_int_equal(e.ev.args[k].type, FXT_ARG_POINTER);
      r->pc[k] = e.ev.args[k].value.u64;
    }
    if (stack) { /* the report's text of it: "<stack trace>" and one " => 0x.." a frame */
      struct fxt_tbuf t;
      fxt_tbuf_init(&t);
      fxt_text_event(&t, &e);
      char want[1024] = ": <stack trace>\n", *w = want + strlen(want);
      for (uint32_t k = 0; k < e.ev.num_args; k++)
        w += sprintf(w, " => 0x%" PRIx64 "\n", r->pc[k]);
      assert_non_null(fxt_tbuf_str(&t));
      const char *at = strstr(t.data, ": <stack trace>\n");
      assert_non_null(at);
      assert_string_equal(at, want);
      fxt_tbuf_free(&t);
    }
  }
  fxtf_close(f);
  qsort(recs, nrecs, sizeof(recs[0]), by_offset);
}

static size_t count(const char *name)
{
  size_t n = 0;
  for (size_t i = 0; i < nrecs; i++)
    n += strcmp(recs[i].name, name) == 0;
  return n;
}

/* The seqs of name's records, as "s1,s2,...". */
static const char *seqs(const char *name)
{
  static char s[8192];
  size_t n = 0;
  s[0] = 0;
  for (size_t i = 0; i < nrecs && n + 24 < sizeof(s); i++)
    if (strcmp(recs[i].name, name) == 0)
      n += (size_t)snprintf(s + n, sizeof(s) - n, "%s%" PRIu64, n ? "," : "", recs[i].seq);
  return s;
}

static void stop_and_read(void)
{
  fxt_session_stop();
  read_back(out);
  live_start(FXT_MODE_DISCARD, out, snap); /* for teardown */
}

/* ---- the file's text and the kernel's errors ---- */

static void trigger_file_text_and_errors(void **state)
{
  (void)state;
  const char *avail = "# Available triggers:\n"
                      "# traceon traceoff snapshot stacktrace enable_event disable_event "
                      "enable_hist disable_hist hist\n";
  assert_string_equal(cat("events/trg/a/trigger"), avail);
  struct fxt_fs_dirent d[16];
  int n = fxt_fs_list("events/trg/a", d, 16);
  bool listed = false;
  for (int i = 0; i < n; i++)
    listed |= strcmp(d[i].name, "trigger") == 0;
  assert_true(listed);
  echo("events/trg/a/trigger", "traceoff:5", 0);
  assert_string_equal(cat("events/trg/a/trigger"), "traceoff:count=5\n");
  /* traceon and traceoff are one kind (the kernel: EEXIST). */
  echo("events/trg/a/trigger", "traceon", -EEXIST);
  echo("events/trg/a/trigger", "stacktrace if seq > 3", 0);
  echo("events/trg/a/trigger", "enable_event:trg:b:2", 0);
  /* Newest first, as the kernel lists them. */
  assert_string_equal(cat("events/trg/a/trigger"), "enable_event:trg:b:count=2\n"
                                                   "stacktrace:unlimited if seq > 3\n"
                                                   "traceoff:count=5\n");
  echo("events/trg/a/trigger", "disable_event:trg:b", -EEXIST); /* same target */
  echo("events/trg/a/trigger", "enable_event:trg:nosuch", -EINVAL);
  echo("events/trg/a/trigger", "hist:keys=nosuch", -EINVAL);
  /* As this machine's kernel answered (printf '' and echo > trigger, in an instance): a
   * write of nothing changes nothing, a blank line is EINVAL. */
  echo("events/trg/a/trigger", "", 0);
  echo("events/trg/a/trigger", "\n", -EINVAL);
  echo("events/trg/a/trigger", "   ", -EINVAL);
  echo("events/trg/a/trigger", "traceoff:18446744073709551616", -ERANGE);
  /* Soft mode: the target and the event with triggers read "0*" while disabled; set_event
   * lists them all the same, without a mark (this machine's 6.18 kernel did so for a
   * soft-disabled syscalls:sys_enter_sched_getscheduler with a traceoff trigger). */
  assert_string_equal(cat("events/trg/b/enable"), "0*\n");
  assert_string_equal(cat("events/trg/a/enable"), "0*\n");
  const char *se = cat("set_event");
  assert_true(strlen(se) == 12 && strstr(se, "trg:a\n") && strstr(se, "trg:b\n"));
  echo("events/trg/a/enable", "1", 0);
  assert_string_equal(cat("events/trg/a/enable"), "1*\n");
  echo("events/trg/a/enable", "0", 0);
  assert_string_equal(cat("events/trg/a/enable"), "0*\n");
  /* A bad filter: the filter's errno and the kernel's error_log entry (layout and caret as
   * the kernel logged "nosuch == 1", "0", "((pid == 1)" in a trigger). */
  echo("error_log", "", 0);
  echo("events/trg/c/trigger", "traceoff if nosuch == 1", -EINVAL);
  echo("events/trg/c/trigger", "traceoff if 0", -EINVAL);
  echo("events/trg/c/trigger", "traceoff if ((seq == 1)", -ENOENT);
  echo("events/trg/c/trigger", "traceoff if seq == 1)", -EPERM);
  echo("events/trg/c/trigger", "traceoff if \"x", -ESRCH);
  const char *log = cat("error_log");
  static const char *const entries[] = {
      "] event filter parse error: error: Field not found\n"
      "  Command: nosuch == 1\n"
      "                  ^\n",
      "] event filter parse error: error: Field not found\n"
      "  Command: 0\n"
      "             ^\n",
      "] event filter parse error: error: Too many '('\n"
      "  Command: ((seq == 1)\n"
      "           ^\n",
      "] event filter parse error: error: Too few '('\n"
      "  Command: seq == 1)\n"
      "                   ^\n",
      "] event filter parse error: error: Missing matching quote\n"
      "  Command: \"x\n"
      "           ^\n",
  };
  for (size_t i = 0; i < 5; i++) {
    const char *at = strstr(log, entries[i]);
    if (!at)
      fail_msg("error_log lacks entry %zu:\n%s", i, log);
    log = at + strlen(entries[i]);
  }
  assert_string_equal(cat("events/trg/c/trigger"), avail); /* nothing was added */
  /* Removal: "!traceon" takes the traceoff (one kind); what is not there succeeds too. */
  echo("events/trg/a/trigger", "!traceon", 0);
  echo("events/trg/a/trigger", "!traceon", 0);
  echo("events/trg/a/trigger", "!stacktrace:9 if junk", 0);
  echo("events/trg/a/trigger", "!enable_event:trg:b", 0);
  assert_string_equal(cat("events/trg/a/trigger"), avail);
  /* Out of soft mode, each as it was: a soft-disabled, so disabled. */
  assert_string_equal(cat("events/trg/a/enable"), "0\n");
  assert_string_equal(cat("events/trg/b/enable"), "0\n");
}

/* ---- firing ---- */

static void traceoff_stops_after_the_event_that_fired_it(void **state)
{
  (void)state;
  echo("events/trg/a/enable", "1", 0);
  /* With a filter (the kernel's TRIGGER_COND): the triggering event is recorded. */
  echo("events/trg/a/trigger", "traceoff if seq == 10", 0);
  for (uint64_t i = 0; i < 100; i++)
    FXT_TRACE(trg, a, i);
  assert_string_equal(cat("tracing_on"), "0\n");
  echo("events/trg/a/trigger", "!traceoff", 0);
  /* Without: it fires before the event is recorded, and only while recording is on; its
   * count is used only by firings that turned recording off. */
  echo("tracing_on", "1", 0);
  echo("events/trg/a/trigger", "traceoff:2", 0);
  for (uint64_t i = 100; i < 105; i++)
    FXT_TRACE(trg, a, i);
  assert_string_equal(cat("tracing_on"), "0\n");
  assert_string_equal(cat("events/trg/a/trigger"), "traceoff:count=1\n");
  echo("tracing_on", "1", 0);
  for (uint64_t i = 105; i < 110; i++)
    FXT_TRACE(trg, a, i);
  assert_string_equal(cat("events/trg/a/trigger"), "traceoff:count=0\n");
  echo("tracing_on", "1", 0);
  for (uint64_t i = 110; i < 113; i++)
    FXT_TRACE(trg, a, i);
  assert_string_equal(cat("tracing_on"), "1\n");
  stop_and_read();
  assert_string_equal(seqs("a"), "0,1,2,3,4,5,6,7,8,9,10,110,111,112");
}

/* A round of the traceoff/traceon test: c, a (traceoff), c, b (traceon), c; seqs from *seq. */
static void off_on_round(uint64_t *seq)
{
  FXT_TRACE(trg, c, (*seq)++);
  FXT_TRACE(trg, a, (*seq)++);
  FXT_TRACE(trg, c, (*seq)++);
  FXT_TRACE(trg, c, (*seq)++);
  FXT_TRACE(trg, b, (*seq)++);
  FXT_TRACE(trg, c, (*seq)++);
}

static void traceon_turns_recording_back_on_at_its_event(void **state)
{
  (void)state;
  echo("set_event", "trg:*", 0);
  /* Without filters the kernel runs both before the event is reserved: a, which turns
   * recording off, is not recorded; b, which turns it on, is. Each count is used only by a
   * firing that changed something. (This machine's 6.18 kernel, in an instance with
   * tracing_on 0: "traceon:1" on syscalls:sys_enter_sched_getscheduler recorded both of two
   * calls, "traceon:1 if pid >= 0" only the second.) */
  echo("events/trg/a/trigger", "traceoff:2", 0);
  echo("events/trg/b/trigger", "traceon:2", 0);
  uint64_t seq = 0;
  off_on_round(&seq); /* 0..5: a(1), c(2), c(3) out */
  assert_string_equal(cat("tracing_on"), "1\n");
  off_on_round(&seq); /* 6..11: a(7), c(8), c(9) out */
  assert_string_equal(cat("events/trg/a/trigger"), "traceoff:count=0\n");
  assert_string_equal(cat("events/trg/b/trigger"), "traceon:count=0\n");
  off_on_round(&seq); /* 12..17: all in (traceoff used up) */
  /* A tracing_on write turns it off; b's traceon has no count left: nothing comes back. */
  echo("tracing_on", "0", 0);
  off_on_round(&seq); /* 18..23: out */
  assert_string_equal(cat("tracing_on"), "0\n");
  /* A new traceon with a filter (the kernel's TRIGGER_COND): it runs after the event is
   * evaluated in a scratch buffer, so its own event is not recorded; recording comes back
   * after it. Its count is not used by seq 28, when recording is on already. */
  echo("events/trg/b/trigger", "!traceon", 0);
  echo("events/trg/b/trigger", "traceon:5 if seq == 22 || seq == 28", 0);
  off_on_round(&seq); /* 24..29: 24..28 out, b(28) turns it on; c(29) in */
  off_on_round(&seq); /* 30..35: all in (b(34) does not match) */
  assert_string_equal(cat("tracing_on"), "1\n");
  assert_string_equal(cat("events/trg/b/trigger"), "traceon:count=4 if seq == 22 || seq == 28\n");
  stop_and_read();
  assert_string_equal(seqs("a"), "13,31");
  assert_string_equal(seqs("b"), "4,10,16,34");
  assert_string_equal(seqs("c"), "0,5,6,11,12,14,15,17,29,30,32,33,35");
}

static void enable_and_disable_event_switch_exactly(void **state)
{
  (void)state;
  echo("events/trg/a/enable", "1", 0);
  /* b is off; a turns it on at seq 5, c (itself off: its triggers fire all the same) turns
   * it off at seq 8, after b's event of that round. At seq 2 b is off already: the kernel
   * skips a firing that would change nothing, its count kept for seq 8. */
  echo("events/trg/a/trigger", "enable_event:trg:b if seq == 5", 0);
  echo("events/trg/c/trigger", "disable_event:trg:b:1 if seq == 2 || seq == 8", 0);
  assert_string_equal(cat("events/trg/b/enable"), "0*\n");
  for (uint64_t i = 0; i < 12; i++) {
    FXT_TRACE(trg, a, i);
    FXT_TRACE(trg, b, i);
    FXT_TRACE(trg, c, i);
    if (i == 6)
      assert_string_equal(cat("events/trg/b/enable"), "1*\n");
  }
  assert_string_equal(cat("events/trg/b/enable"), "0*\n");
  assert_string_equal(cat("events/trg/c/trigger"),
                      "disable_event:trg:b:count=0 if seq == 2 || seq == 8\n");
  stop_and_read();
  assert_string_equal(seqs("a"), "0,1,2,3,4,5,6,7,8,9,10,11");
  assert_string_equal(seqs("b"), "5,6,7,8");
  assert_string_equal(seqs("c"), "");
}

/* Exported and never inlined: the stack's frames are named with dladdr. */
__attribute__((noinline)) void evtrig_test_caller(uint64_t seq)
{
  FXT_TRACE(trg, a, seq);
  __asm__ __volatile__("" ::: "memory"); /* no tail call: this frame stays on the stack */
}

static void stacktrace_follows_the_event_with_the_callers_frame(void **state)
{
  (void)state;
  echo("events/trg/a/enable", "1", 0);
  echo("trace", "", 0); /* the live view outlives sessions: earlier tests' events out */
  echo("events/trg/a/trigger", "stacktrace if seq == 2 || seq == 7", 0);
  for (uint64_t i = 0; i < 10; i++)
    evtrig_test_caller(i);
  echo("events/trg/a/trigger", "!stacktrace", 0);
  echo("events/trg/a/trigger", "stacktrace:3", 0); /* a count, no filter: 3 of the next 10 */
  for (uint64_t i = 10; i < 20; i++)
    evtrig_test_caller(i);
  /* The live `trace` prints them as the kernel prints a stack entry. */
  assert_int_equal(fxt_session_flush(), 0);
  const char *t = strstr(cat("trace"), ": seq=2\n");
  assert_non_null(t);
  const char *next = strchr(t, '\n') + 1, *body = strstr(next, ": ");
  assert_non_null(body);
  assert_true(body < strchr(next, '\n'));
  assert_int_equal(strncmp(body, ": <stack trace>\n => 0x", strlen(": <stack trace>\n => 0x")), 0);
  stop_and_read();
  assert_string_equal(seqs("a"), "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19");
  assert_int_equal(count("kernel_stack"), 5);
  /* Each stack right after its event, in the thread's stream. */
  static const uint64_t after[] = {2, 7, 10, 11, 12};
  size_t k = 0;
  for (size_t i = 0; i < nrecs; i++) {
    if (strcmp(recs[i].name, "kernel_stack") != 0)
      continue;
    assert_true(i > 0);
    assert_string_equal(recs[i - 1].name, "a");
    assert_int_equal(recs[i - 1].seq, after[k++]);
    bool caller = false;
    for (uint32_t f = 0; f < recs[i].nargs; f++) {
      Dl_info info;
      if (dladdr((void *)(uintptr_t)recs[i].pc[f], &info) && info.dli_sname &&
          strcmp(info.dli_sname, "evtrig_test_caller") == 0)
        caller = true;
    }
    if (!caller)
      fail_msg("stack %zu has no frame in evtrig_test_caller (%u frames)", k, recs[i].nargs);
  }
}

static void snapshot_writes_its_file(void **state)
{
  (void)state;
  fxt_session_stop();
  live_start(FXT_MODE_OVERWRITE, "", snap); /* a flight recorder: the snapshot is what it holds */
  unlink(snap);
  echo("events/trg/a/enable", "1", 0);
  echo("events/trg/a/trigger", "snapshot if seq == 3", 0);
  for (uint64_t i = 0; i < 10; i++)
    FXT_TRACE(trg, a, i);
  /* The consumer writes it between passes, woken by the trigger: two flushes are two. */
  assert_int_equal(fxt_session_flush(), 0);
  assert_int_equal(fxt_session_flush(), 0);
  assert_int_equal(access(snap, F_OK), 0);
  read_back(snap);
  assert_true(count("a") >= 4); /* the events up to the trigger's, and maybe later ones */
  assert_int_equal(strncmp(seqs("a"), "0,1,2,3", 7), 0);
  fxt_session_stop();
  live_start(FXT_MODE_DISCARD, out, snap);
}

/* ---- concurrency ---- */

#define PER_THREAD 20000
static atomic_int running;

static void *firer(void *arg)
{
  (void)arg;
  for (uint64_t i = 0; i < PER_THREAD; i++)
    FXT_TRACE(trg, a, i);
  atomic_fetch_sub(&running, 1);
  return NULL;
}

static void triggers_change_while_two_threads_fire(void **state)
{
  (void)state;
  echo("events/trg/a/enable", "1", 0);
  echo("events/trg/a/trigger", "stacktrace:1000", 0);
  pthread_t th[2];
  atomic_store(&running, 2);
  for (int i = 0; i < 2; i++)
    assert_int_equal(pthread_create(&th[i], NULL, firer, NULL), 0);
  /* Triggers of a added and removed under the threads' feet (none of them records or drops
   * an event of a); the stacktrace's count is claimed across both threads. */
  unsigned rounds = 0;
  while (atomic_load(&running) > 0 || rounds < 20) {
    echo("events/trg/a/trigger", "enable_event:trg:c", 0);
    echo("events/trg/a/trigger", "traceon if seq == 7", 0);
    echo("events/trg/a/trigger", "!enable_event:trg:c", 0);
    echo("events/trg/a/trigger", "!traceon", 0);
    rounds++;
  }
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  assert_string_equal(cat("events/trg/a/trigger"), "stacktrace:count=0\n");
  stop_and_read();
  assert_int_equal(count("a"), 2 * PER_THREAD);
  assert_int_equal(count("kernel_stack"), 1000);
  assert_int_equal(count("c"), 0);
}

FXT_TEST_MAIN(
    FXT_TEST_ST(trigger_file_text_and_errors),
    FXT_TEST_ST(traceoff_stops_after_the_event_that_fired_it),
    FXT_TEST_ST(traceon_turns_recording_back_on_at_its_event),
    FXT_TEST_ST(enable_and_disable_event_switch_exactly),
    FXT_TEST_ST(stacktrace_follows_the_event_with_the_callers_frame),
    FXT_TEST_ST(snapshot_writes_its_file), FXT_TEST_ST(triggers_change_while_two_threads_fire))
