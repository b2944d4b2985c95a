/* test_harvest - nothing lost silently, whatever way a process ends and whoever started it: a
 * child of a traced process emits a known number of events and ends by _exit, abort,
 * SIGKILL, a crash, or exec (of an image that does not trace, of one linked with fxtrace but
 * not traced, of a traced one that then exits or _exits), or is started by vfork + exec or
 * posix_spawn; after the parent's session stopped, the child's file holds exactly its events
 * (events + counted losses == emitted, per process), the parent's file only the parent's,
 * and the buffers directory is empty (every session directory is gone). And two programs
 * sharing one buffers directory: a live session whose recorded pid means nothing here (as
 * in another pid namespace) is never removed by the other's clean-up.
 *
 * The same program is the exec'd image: `test_harvest image N
 * exit|_exit|abort|kill|hold|fork:kill|fork:_exit|interleave [F]` emits N events (seq 100...;
 * a flush every F of them, or with F `fork` one before it forks and none in the child;
 * `fork:before`, `fork:after`: and the child dies inside its consumer's write) and returns (a
 * clean stop at exit), calls _exit, aborts, kills itself with SIGKILL, returns once its stdin
 * ends (a live session meanwhile), or forks a child that emits N events and is killed or
 * _exits, waits for it, prints "child PID" on stderr and returns, or writes to one stdout in
 * turns with its child (interleave, below) (tests/check/record_harvest.sh runs it under
 * `fxtrace record`, tests/check/top_level_kill.sh, flight_children.sh and stdout_fork.sh under
 * FXTRACE alone).
 *
 * Under ThreadSanitizer the cases that fork a process with a running session are skipped:
 * TSan cannot start threads (the child's consumer) in the child of a multi-threaded fork. */
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
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../fxtcount.h"
#include "../sanitizers.h"
#include "host/harvest.h"
#include "base/shfile.h"

extern char **environ;

FXT_TRACEPOINT(t, seq, "seq=%llu", (u64, seq));

#define CHILD_EVENTS 5
#define IMAGE_EVENTS 3

static char self[4096];  /* this program, for exec */
static char out[256];    /* the parent's output */
static char bufdir[256]; /* the buffers directory of every session here */

static void start_parent(void)
{
  snprintf(out, sizeof(out), "/dev/shm/fxtrace-test-harvest-%d.fxt", (int)getpid());
  snprintf(bufdir, sizeof(bufdir), "/dev/shm/fxtrace-test-harvest-%d.buf", (int)getpid());
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "t:seq",
                                   .buffer_kb = 64, .mode = FXT_MODE_DISCARD, .output = out,
                                   .buffers = bufdir};
  assert_int_equal(fxt_session_start(&cfg), 0);
}

/* Entries of dir other than . and .. (-1: no such directory). */
static int entries(const char *dir)
{
  DIR *d = opendir(dir);
  if (!d)
    return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".clock-verdict") == 0) { /* the boot's, not a session's: removed */
      char p[600];
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    } else if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
      n++;
      fprintf(stderr, "left in %s: %s\n", dir, e->d_name);
    }
  }
  closedir(d);
  return n;
}

/* Events of thread tid in path, and that no loss is counted (a few events in a 64 KiB buffer
 * are never dropped): the file is removed. */
static uint64_t events_of(const char *path, uint64_t tid)
{
  static struct fxtcount c;
  if (fxtcount_file(path, "seq", &c) != 0)
    fail_msg("decoding %s: %s", path, c.err);
  unlink(path);
  uint64_t events = 0;
  for (int i = 0; i < c.nthreads; i++) {
    if (c.t[i].tid != tid)
      continue;
    events += c.t[i].events;
    assert_int_equal(c.t[i].dropped + c.t[i].overrun + c.t[i].lost, 0);
    assert_false(c.t[i].backwards);
  }
  assert_int_equal(c.process_lost, 0);
  return events;
}

/* The parent's session stops (its last look at its children's markers harvests the dead
 * ones); its file holds its own single event, the buffers directory nothing. */
static void stop_parent(void)
{
  assert_int_equal(fxt_session_stop(), 0);
  assert_int_equal(events_of(out, (uint64_t)getpid()), 1);
  assert_int_equal(entries(bufdir), 0);
  assert_int_equal(rmdir(bufdir), 0);
}

static void no_core(void)
{
  struct rlimit no = {0, 0};
  setrlimit(RLIMIT_CORE, &no);
}

/* ---- children of fork ------------------------------------------------------------------- */

enum end { END_EXIT, END_ABORT, END_KILL, END_SEGV, END_EXEC_TRUE, END_EXEC_UNTRACED,
           END_EXEC_TRACED_EXIT, END_EXEC_TRACED__EXIT };

/* FXTRACE for an exec'd image that traces into `output` (in the parent's buffers
 * directory). */
static void traced_env(char *buf, size_t size, const char *output)
{
  snprintf(buf, size, "FXTRACE=events=t:seq;buffer_kb=64;buffers=%s;output=%s", bufdir, output);
}

static void fork_child_ends(enum end how, uint64_t want)
{
  if (FXT_TEST_TSAN) /* (see the file comment) */
    skip();
  start_parent();
  FXT_TRACE(t, seq, 999);
  int ready[2];
  assert_int_equal(pipe(ready), 0);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    no_core();
    for (uint64_t i = 0; i < CHILD_EVENTS; i++)
      FXT_TRACE(t, seq, i);
    char env[1024];
    char *untraced_env[] = {NULL};
    char *traced[] = {env, NULL};
    switch (how) {
    case END_EXIT:
      _exit(0);
    case END_ABORT:
      abort();
    case END_KILL: /* committed: the parent kills it now */
      (void)!write(ready[1], "r", 1);
      for (;;)
        pause();
    case END_SEGV:
      signal(SIGSEGV, SIG_DFL); /* not cmocka's handler */
      raise(SIGSEGV);
      _exit(3);
    case END_EXEC_TRUE:
      execle("/bin/true", "true", (char *)NULL, untraced_env);
      _exit(4);
    case END_EXEC_UNTRACED:
      execle(self, "test_harvest", "image", "3", "exit", (char *)NULL, untraced_env);
      _exit(4);
    case END_EXEC_TRACED_EXIT:
    case END_EXEC_TRACED__EXIT:
      /* The same output as this (forked) session: the image appends to it. */
      traced_env(env, sizeof(env), fxt_session_output());
      execle(self, "test_harvest", "image", "3", how == END_EXEC_TRACED_EXIT ? "exit" : "_exit",
             (char *)NULL, traced);
      _exit(4);
    }
    _exit(5);
  }
  if (how == END_KILL) {
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    kill(child, SIGKILL);
  }
  close(ready[0]);
  close(ready[1]);
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  if (how == END_ABORT)
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
  else if (how == END_KILL)
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  else if (how == END_SEGV)
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
  else
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  char child_out[300];
  snprintf(child_out, sizeof(child_out), "%s.%d", out, (int)child);
  stop_parent();
  assert_int_equal(events_of(child_out, (uint64_t)child), want);
}

/* A test of fork_child_ends: how the child ends, and the events its file holds; the cases
 * by how, each run by main under its own name. */
struct fork_case {
  enum end how;
  uint64_t want;
};

static void fork_then(void **state)
{
  const struct fork_case *c = *state;
  fork_child_ends(c->how, c->want);
}

static const struct fork_case k_fork_cases[] = {
    [END_EXIT] = {END_EXIT, CHILD_EVENTS},
    [END_ABORT] = {END_ABORT, CHILD_EVENTS},
    [END_KILL] = {END_KILL, CHILD_EVENTS},
    [END_SEGV] = {END_SEGV, CHILD_EVENTS},
    [END_EXEC_TRUE] = {END_EXEC_TRUE, CHILD_EVENTS},
    [END_EXEC_UNTRACED] = {END_EXEC_UNTRACED, CHILD_EVENTS},
    [END_EXEC_TRACED_EXIT] = {END_EXEC_TRACED_EXIT, CHILD_EVENTS + IMAGE_EVENTS},
    [END_EXEC_TRACED__EXIT] = {END_EXEC_TRACED__EXIT, CHILD_EVENTS + IMAGE_EVENTS},
};

/* ---- images started by vfork + exec and posix_spawn -------------------------------------- */

/* A traced image the parent started; it ends as `end` says. Its file is <out>.img-<pid>.fxt. */
static void spawned_image(bool use_vfork, const char *end)
{
  start_parent();
  FXT_TRACE(t, seq, 999);
  char pattern[300], env[1024];
  snprintf(pattern, sizeof(pattern), "%s.img-%%p.fxt", out);
  traced_env(env, sizeof(env), pattern);
  char *argv[] = {"test_harvest", "image", "3", (char *)end, NULL};
  char *envp[] = {env, NULL};
  pid_t child;
  if (use_vfork) {
    child = vfork();
    if (child == 0) {
      execve(self, argv, envp);
      _exit(4);
    }
  } else {
    assert_int_equal(posix_spawn(&child, self, NULL, NULL, argv, envp), 0);
  }
  assert_true(child > 0);
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  char child_out[300];
  snprintf(child_out, sizeof(child_out), "%s.img-%d.fxt", out, (int)child);
  stop_parent();
  assert_int_equal(events_of(child_out, (uint64_t)child), IMAGE_EVENTS);
}

static void vfork_exec__exit(void **state)
{
  (void)state;
  if (FXT_TEST_TSAN) /* its vfork is a fork, with the atfork handlers (the child's consumer) */
    skip();
  spawned_image(true, "_exit");
}

static void posix_spawn_exit(void **state)
{
  (void)state;
  spawned_image(false, "exit");
}

static void posix_spawn__exit(void **state)
{
  (void)state;
  spawned_image(false, "_exit");
}

/* ---- two programs, one buffers directory ----------------------------------------------- */

/* Rewrites this process's session header to name a pid that runs nothing here, as a session
 * of another pid namespace looks (the checksum made right again): only its lock says it is
 * live. */
static void forge_pid(void)
{
  char path[4200];
  snprintf(path, sizeof(path), "%s/%s", fxt_session_buffers(), FXT_SH_FILE);
  int fd = open(path, O_RDWR);
  assert_true(fd >= 0);
  unsigned char *h = mmap(NULL, FXT_SH_HEADER_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  assert_true(h != MAP_FAILED);
  uint32_t pid = 0x3ffffff0u; /* above pid_max's limit: never a process */
  memcpy(h + FXT_SH_OFF_PID, &pid, 4);
  uint32_t sum = fxt_sh_fnv(h, FXT_SH_OFF_CHECKSUM);
  memcpy(h + FXT_SH_OFF_CHECKSUM, &sum, 4);
  munmap(h, FXT_SH_HEADER_BYTES);
  close(fd);
}

static int program(const char *dir, const char *output, uint64_t n, int ready, int go)
{
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "t:seq",
                                   .buffer_kb = 64, .output = output, .buffers = dir};
  if (fxt_session_start(&cfg) != 0)
    return 10;
  for (uint64_t i = 0; i < n; i++)
    FXT_TRACE(t, seq, i);
  if (ready >= 0) {
    /* Everything delivered: to a pid check, a dead process with nothing left to recover. */
    if (fxt_session_flush() != 0)
      return 11;
    forge_pid();
    char c = 'r';
    if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
      return 12;
    for (uint64_t i = n; i < 2 * n; i++)
      FXT_TRACE(t, seq, i);
  }
  return fxt_session_stop() == 0 ? 0 : 13;
}

/* A program that crashes again and again (a flight recorder: no output file) leaves more
 * dead sessions than a buffers directory keeps traces of (8): each next session's start
 * harvests the one before into a file in its directory's place, and removes the oldest file.
 * A live session older than all of them, whose header names no process here, must not be
 * taken for a dead one. */
#define CRASHERS 9

static void two_programs_one_directory(void **state)
{
  (void)state;
  char dir[256], out_a[300], out_b[300];
  int me = (int)getpid();
  snprintf(dir, sizeof(dir), "/dev/shm/fxtrace-test-harvest-%d.shared", me);
  snprintf(out_a, sizeof(out_a), "/dev/shm/fxtrace-test-harvest-%d.a.fxt", me);
  snprintf(out_b, sizeof(out_b), "/dev/shm/fxtrace-test-harvest-%d.b.fxt", me);
  int ready[2], go[2];
  assert_int_equal(pipe(ready), 0);
  assert_int_equal(pipe(go), 0);
  pid_t a = fork();
  assert_true(a >= 0);
  if (a == 0) {
    close(go[1]); /* a parent that fails leaves A at the end of its pipe, not waiting */
    close(ready[0]);
    _exit(program(dir, out_a, 1000, ready[1], go[0]));
  }
  close(go[0]);
  close(ready[1]);
  char c;
  assert_int_equal(read(ready[0], &c, 1), 1);
  /* A is live, its header names no process. Then CRASHERS sessions die with records left. */
  pid_t crasher[CRASHERS];
  for (int k = 0; k < CRASHERS; k++) {
    crasher[k] = fork();
    assert_true(crasher[k] >= 0);
    if (crasher[k] == 0) {
      /* A flight recorder: nothing is delivered, so it always leaves records to recover. */
      struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "t:seq",
                                       .buffer_kb = 64, .output = "",
                                       .mode = FXT_MODE_OVERWRITE, .buffers = dir};
      if (fxt_session_start(&cfg) != 0)
        _exit(10);
      for (uint64_t i = 0; i < 10; i++)
        FXT_TRACE(t, seq, i);
      _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(crasher[k], &status, 0), crasher[k]);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  /* B starts (its clean-up removes the oldest crashed session) and stops. */
  pid_t b = fork();
  assert_true(b >= 0);
  if (b == 0)
    _exit(program(dir, out_b, 500, -1, -1));
  int status = 0;
  assert_int_equal(waitpid(b, &status, 0), b);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  char a_dir[300];
  snprintf(a_dir, sizeof(a_dir), "%s/%d.1", dir, (int)a);
  assert_int_equal(access(a_dir, F_OK), 0); /* A's, untouched */
  assert_int_equal(entries(dir), 1 + 8);
  assert_int_equal(write(go[1], "g", 1), 1);
  assert_int_equal(waitpid(a, &status, 0), a);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_int_equal(events_of(out_a, (uint64_t)a), 2000);
  assert_int_equal(events_of(out_b, (uint64_t)b), 500);
  /* Each crashed flight recorder was harvested by the next session's start into a file in
   * its directory's place (it had no output file), with its 10 events; the 8 newest kept. */
  for (int k = 0; k < CRASHERS; k++) {
    char cdir[300], trace[320];
    snprintf(cdir, sizeof(cdir), "%s/%d.1", dir, (int)crasher[k]);
    snprintf(trace, sizeof(trace), "%s.fxt", cdir);
    assert_int_equal(access(cdir, F_OK), -1);
    assert_int_equal(access(trace, F_OK) == 0, k >= CRASHERS - 8);
    if (k < CRASHERS - 8)
      continue;
    assert_int_equal(events_of(trace, (uint64_t)crasher[k]), 10);
  }
  assert_int_equal(entries(dir), 0);
  assert_int_equal(rmdir(dir), 0);
  close(ready[0]), close(go[1]);
}

/* ---- the image -------------------------------------------------------------------------- */

/* `image N interleave`: a parent and its child of fork write to one stdout in turns, so that
 * their writes interleave: the parent (after the N events every image emits first, seq 100...)
 * emits N events (seq 1000...) and forks without a flush;
 * the child's head is written (its session starts in it); the parent writes (its events from
 * before the fork land after the child's head); the child emits and writes N events (seq
 * 2000...), the parent N (seq 3000...), the child N more (seq 4000...) and exits (its stop
 * writes them), the parent N more (seq 5000...) and returns. Each turn ends with a flush; a
 * pipe each way passes the turn. */
static void emit_flush(uint64_t first, uint64_t n)
{
  for (uint64_t i = 0; i < n; i++)
    FXT_TRACE(t, seq, first + i);
  fxt_session_flush();
}

static int interleave(uint64_t n)
{
  int to_child[2], to_parent[2];
  char c = 0;
  if (pipe(to_child) != 0 || pipe(to_parent) != 0)
    return 30;
  for (uint64_t i = 0; i < n; i++)
    FXT_TRACE(t, seq, 1000 + i);
  pid_t child = fork();
  if (child < 0)
    return 31;
  if (child == 0) {
    fxt_session_flush(); /* its head */
    if (write(to_parent[1], &c, 1) != 1 || read(to_child[0], &c, 1) != 1)
      _exit(32);
    emit_flush(2000, n);
    if (write(to_parent[1], &c, 1) != 1 || read(to_child[0], &c, 1) != 1)
      _exit(33);
    for (uint64_t i = 0; i < n; i++)
      FXT_TRACE(t, seq, 4000 + i);
    exit(0); /* a clean stop writes them */
  }
  if (read(to_parent[0], &c, 1) != 1)
    return 34;
  fxt_session_flush(); /* the events from before the fork */
  if (write(to_child[1], &c, 1) != 1 || read(to_parent[0], &c, 1) != 1)
    return 35;
  emit_flush(3000, n);
  if (write(to_child[1], &c, 1) != 1)
    return 36;
  int status;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return 37;
  for (uint64_t i = 0; i < n; i++)
    FXT_TRACE(t, seq, 5000 + i);
  fprintf(stderr, "child %d\n", (int)child);
  return 0;
}

static int image(int argc, char **argv)
{
  uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
  /* FLUSH: after every FLUSH events; `fork`: the parent once before it forks, the child never;
   * `fork:before`, `fork:after`: the same, then the child's consumer kills it inside its write
   * of the child's events for the flush that follows them, before or after the write
   * (FXTRACE_TEST_DIE_IN_WRITE, set for the child only: its consumer reads it as it starts,
   * after the fork; it dies only in a write made while a flush waits). */
  bool flush_at_fork = argc > 4 && strncmp(argv[4], "fork", 4) == 0;
  const char *child_dies = flush_at_fork && argv[4][4] == ':' ? argv[4] + 5 : NULL;
  uint64_t flush_every = argc > 4 ? strtoull(argv[4], NULL, 10) : 0;
  for (uint64_t i = 0; i < n; i++) {
    FXT_TRACE(t, seq, 100 + i);
    if (flush_every && (i + 1) % flush_every == 0)
      fxt_session_flush(); /* the consumer has written this much */
  }
  if (argc > 3 && strcmp(argv[3], "interleave") == 0)
    return interleave(n);
  if (argc > 3 && strcmp(argv[3], "_exit") == 0)
    _exit(0);
  if (argc > 3 && strcmp(argv[3], "kill") == 0)
    raise(SIGKILL);
  if (argc > 3 && strncmp(argv[3], "fork:", 5) == 0) {
    /* A child of fork emits N events of its own (seq 1000...) and ends as the rest says (kill,
     * _exit); this process waits for it and stops at exit (its stop harvests the child). */
    if (flush_at_fork)
      fxt_session_flush(); /* its events are in the output before the child's begin */
    if (child_dies)
      setenv("FXTRACE_TEST_DIE_IN_WRITE", child_dies, 1);
    pid_t child = fork();
    if (child < 0)
      return 20;
    if (child_dies)
      unsetenv("FXTRACE_TEST_DIE_IN_WRITE");
    if (child == 0) {
      for (uint64_t i = 0; i < n; i++) {
        FXT_TRACE(t, seq, 1000 + i);
        if (flush_every && (i + 1) % flush_every == 0)
          fxt_session_flush();
      }
      if (child_dies)
        fxt_session_flush(); /* its consumer writes them: it dies there */
      if (strcmp(argv[3] + 5, "kill") == 0)
        raise(SIGKILL);
      _exit(0);
    }
    int status;
    if (waitpid(child, &status, 0) != child)
      return 21;
    fprintf(stderr, "child %d\n", (int)child);
  }
  if (argc > 3 && strcmp(argv[3], "hold") == 0) { /* a live session until stdin ends */
    char c;
    while (read(0, &c, 1) > 0)
      ;
  }
  if (argc > 3 && strcmp(argv[3], "abort") == 0) {
    no_core();
    abort();
  }
  return 0; /* FXTRACE's session stops at exit */
}

int main(int argc, char **argv)
{
  if (argc > 1 && strcmp(argv[1], "image") == 0)
    return image(argc, argv);
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0)
    return 1;
  self[n] = 0;
  FXT_RUN_TESTS(
      /* First, while this process has never had a thread but its own (TSan refuses threads in
       * the child of a fork from a process that had some: A, B and the crashers start their
       * consumers). */
      cmocka_unit_test(two_programs_one_directory),
      /* fork_then with a case of k_fork_cases (cmocka's initial state), each by its name */
      {"fork_then__exit", fork_then, NULL, NULL, (void *)&k_fork_cases[END_EXIT]},
      {"fork_then_abort", fork_then, NULL, NULL, (void *)&k_fork_cases[END_ABORT]},
      {"fork_then_sigkill", fork_then, NULL, NULL, (void *)&k_fork_cases[END_KILL]},
      {"fork_then_crash", fork_then, NULL, NULL, (void *)&k_fork_cases[END_SEGV]},
      {"fork_then_exec_unlinked", fork_then, NULL, NULL, (void *)&k_fork_cases[END_EXEC_TRUE]},
      {"fork_then_exec_untraced", fork_then, NULL, NULL, (void *)&k_fork_cases[END_EXEC_UNTRACED]},
      {"fork_then_exec_traced_exit", fork_then, NULL, NULL,
       (void *)&k_fork_cases[END_EXEC_TRACED_EXIT]},
      {"fork_then_exec_traced__exit", fork_then, NULL, NULL,
       (void *)&k_fork_cases[END_EXEC_TRACED__EXIT]},
      cmocka_unit_test(vfork_exec__exit),
      cmocka_unit_test(posix_spawn_exit),
      cmocka_unit_test(posix_spawn__exit));
}
