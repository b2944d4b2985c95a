/* test_fork - fork() while another thread emits at full rate, and the child emits too: both
 * finish (no deadlock), both files are valid, the child's file has only the child's records
 * and the parent's only the parent's. And a flight recorder's crash trigger in a child of
 * fork: the child's snapshot goes to a file of its own. And a child that closes every
 * descriptor it inherited, then opens files of its own (test_closefds). Not run under TSan,
 * which cannot start threads (the child's consumer) in the child of a multi-threaded fork. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../test_main.h"

#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session_test.h"
#include "mine_files.h"

FXT_TRACEPOINT(t, seq, "seq=%llu", (u64, seq));


static struct fxtcount_thread *find(uint64_t tid)
{
  for (int i = 0; i < counts.nthreads; i++)
    if (counts.t[i].tid == tid)
      return &counts.t[i];
  return NULL;
}

/* ---- fork during full-rate emission ------------------------------------------------------ */

static atomic_bool spinning;
static _Atomic uint64_t spinner_tid, spinner_count;

static void *spin_emit(void *arg)
{
  (void)arg;
  atomic_store(&spinner_tid, (uint64_t)gettid());
  uint64_t i = 0;
  while (atomic_load_explicit(&spinning, memory_order_relaxed))
    FXT_TRACE(t, seq, i++);
  atomic_store(&spinner_count, i);
  return NULL;
}

static void fork_during_emission(void **state)
{
  (void)state;
  start("t:seq", 64, 0, FXT_MODE_DISCARD);
  atomic_store(&spinning, true);
  pthread_t th;
  pthread_create(&th, NULL, spin_emit, NULL);
  while (atomic_load(&spinner_tid) == 0)
    sched_yield();
  usleep(10000);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    /* The child: only this thread exists; it keeps tracing into its own file. */
    for (uint64_t i = 0; i < 5000; i++)
      FXT_TRACE(t, seq, i);
    _exit(fxt_session_stop() == 0 ? 0 : 3);
  }
  int status = 0;
  alarm(60); /* a deadlock fails the test instead of hanging it */
  assert_int_equal(waitpid(child, &status, 0), child);
  alarm(0);
  atomic_store(&spinning, false);
  pthread_join(th, NULL);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);

  char child_path[300];
  snprintf(child_path, sizeof(child_path), "%s.%d", path, (int)child);
  stop_and_count("seq");
  /* Parent: the spinner's events, all accounted for; nothing of the child's. */
  struct fxtcount_thread *sp = find(atomic_load(&spinner_tid));
  assert_non_null(sp);
  assert_int_equal(sp->events + sp->dropped + sp->lost, atomic_load(&spinner_count));
  assert_null(find((uint64_t)child));
  /* Child: its 5000 events, exactly; nothing of the parent's (no record in both files). */
  static struct fxtcount cc;
  if (fxtcount_file(child_path, "seq", &cc) != 0)
    fail_msg("decoding %s: %s", child_path, cc.err);
  unlink(child_path);
  assert_true(cc.process_named);
  assert_int_equal(cc.nthreads, 1);
  assert_int_equal(cc.t[0].tid, (uint64_t)child);
  assert_int_equal(cc.t[0].pid, (uint64_t)child);
  assert_int_equal(cc.t[0].events + cc.t[0].dropped, 5000);
  assert_false(cc.t[0].backwards);
}

/* ---- the crash trigger in a child of fork ---------------------------------------------- */

/* A flight recorder with trigger=FILE (no %p): a child of fork that aborts writes its snapshot
 * to FILE.<its pid>, with its own events, and not over FILE, which stays the parent's (the
 * parent never crashes here, so FILE must not exist). */
static void trigger_in_child(void **state)
{
  (void)state;
  char trig[256], child_trig[300];
  snprintf(trig, sizeof(trig), "/dev/shm/fxtrace-test-trigger-%d.fxt", (int)getpid());
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "t:seq",
                                   .buffer_kb = 64, .mode = FXT_MODE_OVERWRITE, .output = "",
                                   .buffers = "", .trigger = trig};
  assert_int_equal(fxt_session_start(&cfg), 0);
  for (uint64_t i = 0; i < 1000; i++)
    FXT_TRACE(t, seq, i);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    for (uint64_t i = 0; i < 300; i++)
      FXT_TRACE(t, seq, i);
    abort(); /* the trigger's handler writes the snapshot, then the default action */
  }
  int status = 0;
  alarm(60);
  assert_int_equal(waitpid(child, &status, 0), child);
  alarm(0);
  assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
  assert_int_equal(fxt_session_stop(), 0);
  snprintf(child_trig, sizeof(child_trig), "%s.%d", trig, (int)child);
  static struct fxtcount cc;
  if (fxtcount_file(child_trig, "seq", &cc) != 0)
    fail_msg("decoding %s: %s", child_trig, cc.err);
  unlink(child_trig);
  bool parent_file = access(trig, F_OK) == 0;
  unlink(trig);
  assert_false(parent_file);
  assert_int_equal(cc.nthreads, 1);
  assert_int_equal(cc.t[0].tid, (uint64_t)child);
  assert_int_equal(cc.t[0].events, 300);
}

/* ---- a child of fork that closes what it inherited ------------------------------------- */

/* The child closes every descriptor from 3 on (its trace file among them, opened at the fork)
 * and opens files of its own, which take their numbers, then traces from its thread and from
 * a new one: its files are never written by fxtrace, and its trace is whole (the file is
 * opened again by its path). */
static void *emit_5000(void *arg)
{
  for (uint64_t i = 0; i < 5000; i++)
    FXT_TRACE(t, seq, i);
  return arg;
}

static void child_closes_all(void **state)
{
  (void)state;
  start("t:seq", 256, 0, FXT_MODE_DISCARD);
  for (uint64_t i = 0; i < 1000; i++)
    FXT_TRACE(t, seq, i);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    usleep(50000); /* the child's consumer and control server waiting */
    close_from_3();
    if (mine_open() != 0)
      _exit(4);
    for (uint64_t i = 0; i < 5000; i++)
      FXT_TRACE(t, seq, i);
    pthread_t th;
    pthread_create(&th, NULL, emit_5000, NULL);
    pthread_join(th, NULL);
    alarm(30); /* a stop waiting for ever: killed, and said so by the status */
    int rc = fxt_session_stop();
    alarm(0);
    _exit(rc != 0 ? 3 : mine_check() >= 0 ? 5 : 0);
  }
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_int_equal(fxt_session_stop(), 0);
  unlink(path);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  char child_path[300];
  snprintf(child_path, sizeof(child_path), "%s.%d", path, (int)child);
  static struct fxtcount cc;
  if (fxtcount_file(child_path, "seq", &cc) != 0)
    fail_msg("decoding %s: %s", child_path, cc.err);
  unlink(child_path);
  assert_int_equal(cc.nthreads, 2);
  assert_true(cc.t[0].tid == (uint64_t)child || cc.t[1].tid == (uint64_t)child);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(cc.t[i].pid, (uint64_t)child);
    assert_int_equal(cc.t[i].events + cc.t[i].dropped + cc.t[i].lost, 5000);
    assert_false(cc.t[i].backwards);
  }
}

FXT_TEST_MAIN(
    cmocka_unit_test(fork_during_emission), cmocka_unit_test(trigger_in_child),
    cmocka_unit_test(child_closes_all))
