/* test_crash_leftovers - a buffers directory does not fill up with crashed sessions: ten
 * processes in a row die with records in their buffers (SIGKILL, flight recorder, so nothing
 * was delivered); each new session harvests the one before into a file in its directory's
 * place (it had no output file), says so on stderr, keeps the 8 newest of those traces and
 * removes the older ones, saying so too; a live process's session is never touched. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../test_main.h"

#include <dirent.h>
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../fxtcount.h"

FXT_TRACEPOINT(t, crash, "seq=%llu", (u64, seq));

#define CRASHES 10
#define KEPT 8

static char base[256];

/* In a child: stderr to base.err.<k>, a session with its buffers in base. */
static void child_start(int k, const char *output, uint32_t mode)
{
  char err[300];
  snprintf(err, sizeof(err), "%s.err.%d", base, k);
  if (!freopen(err, "w", stderr))
    _exit(10);
  setvbuf(stderr, NULL, _IONBF, 0);
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .buffers = base,
                                   .output = output, .mode = mode, .buffer_kb = 64};
  if (fxt_session_start(&cfg) != 0)
    _exit(11);
}

static bool has_dir_of(pid_t pid)
{
  char path[400];
  struct stat st;
  snprintf(path, sizeof(path), "%s/%d.1", base, (int)pid);
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The trace a harvest wrote in the place of pid's session directory: its events (all 100 of
 * them, checked), or 0 when there is no such file. */
static uint64_t trace_of(pid_t pid)
{
  char path[400];
  struct stat st;
  snprintf(path, sizeof(path), "%s/%d.1.fxt", base, (int)pid);
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
    return 0;
  static struct fxtcount c;
  if (fxtcount_file(path, "crash", &c) != 0)
    fail_msg("decoding %s: %s", path, c.err);
  uint64_t events = 0;
  for (int i = 0; i < c.nthreads; i++) {
    assert_int_equal(c.t[i].pid, (uint64_t)pid);
    assert_int_equal(c.t[i].dropped + c.t[i].overrun + c.t[i].lost, 0);
    events += c.t[i].events;
  }
  return events;
}

static int count_dirs(void)
{
  DIR *d = opendir(base);
  assert_non_null(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

static bool err_has(int k, const char *needle)
{
  char path[300];
  snprintf(path, sizeof(path), "%s.err.%d", base, k);
  size_t len = 0;
  unsigned char *text = fxtcount_read(path, &len);
  assert_non_null(text);
  bool found = memmem(text, len, needle, strlen(needle)) != NULL;
  free(text);
  return found;
}

/* Child k's stderr says it removed pid's trace (pid 0: any). */
static bool err_mentions(int k, pid_t pid)
{
  char needle[400];
  snprintf(needle, sizeof(needle), "removed %s/%d.1.fxt, the recovered trace", base, (int)pid);
  return err_has(k, pid ? needle : "removed");
}

/* Child k's stderr says it harvested pid's session into the file in its directory's place. */
static bool err_harvested(int k, pid_t pid)
{
  char needle[400];
  snprintf(needle, sizeof(needle),
           ": pid %d ended without stopping its session: its trace is in %s/%d.1.fxt (it had "
           "no output file) (",
           (int)pid, base, (int)pid);
  return err_has(k, needle);
}

static void test_keeps_newest(void **state)
{
  (void)state;
  snprintf(base, sizeof(base), "/dev/shm/fxtrace-test-leftovers-%d", (int)getpid());
  assert_int_equal(mkdir(base, 0700), 0);

  /* A live session first: it must outlive every clean-up below. It says when its session
   * runs: started later (a busy machine), it would harvest the first crash itself. */
  int hold[2], ready[2];
  assert_int_equal(pipe(hold), 0);
  assert_int_equal(pipe(ready), 0);
  pid_t live = fork();
  assert_true(live >= 0);
  if (live == 0) {
    close(hold[1]);
    close(ready[0]);
    child_start(100, "", FXT_MODE_OVERWRITE);
    FXT_TRACE(t, crash, 1);
    close(ready[1]);
    char c;
    ssize_t r = read(hold[0], &c, 1); /* until the parent closes its end */
    (void)r;
    _exit(fxt_session_stop() == 0 ? 0 : 12);
  }
  close(hold[0]);
  close(ready[1]);
  char c;
  assert_int_equal(read(ready[0], &c, 1), 0); /* EOF: the live session runs */
  close(ready[0]);

  pid_t crashed[CRASHES];
  for (int k = 0; k < CRASHES; k++) {
    crashed[k] = fork();
    assert_true(crashed[k] >= 0);
    if (crashed[k] == 0) {
      child_start(k, "", FXT_MODE_OVERWRITE); /* a flight recorder: nothing is delivered */
      for (uint64_t i = 0; i < 100; i++)
        FXT_TRACE(t, crash, i);
      raise(SIGKILL);
      _exit(13);
    }
    int status;
    assert_int_equal(waitpid(crashed[k], &status, 0), crashed[k]);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  }
  /* Each child harvested the one before it (and no other); child 9 found 9 traces and
   * removed the oldest; no earlier one removed any. */
  for (int k = 1; k < CRASHES; k++) {
    assert_true(err_harvested(k, crashed[k - 1]));
    assert_false(err_harvested(k, crashed[k]));
  }
  assert_false(err_harvested(0, crashed[0]));
  for (int k = 0; k < CRASHES - 1; k++)
    assert_false(err_mentions(k, 0));
  assert_true(err_mentions(CRASHES - 1, crashed[0]));
  assert_int_equal(trace_of(crashed[0]), 0);
  assert_int_equal(trace_of(crashed[1]), 100);
  assert_true(has_dir_of(crashed[CRASHES - 1])); /* not harvested yet: no session since */

  /* A session that stops cleanly: it harvests the last one, removes one more trace, and
   * leaves nothing of its own. */
  pid_t clean = fork();
  assert_true(clean >= 0);
  if (clean == 0) {
    char out[300];
    snprintf(out, sizeof(out), "%s.fxt", base);
    child_start(CRASHES, out, FXT_MODE_DISCARD);
    FXT_TRACE(t, crash, 1);
    _exit(fxt_session_stop() == 0 ? 0 : 12);
  }
  int status;
  assert_int_equal(waitpid(clean, &status, 0), clean);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_true(err_harvested(CRASHES, crashed[CRASHES - 1]));
  assert_true(err_mentions(CRASHES, crashed[1]));
  assert_false(has_dir_of(clean));
  for (int k = 0; k < CRASHES; k++) {
    assert_false(has_dir_of(crashed[k]));
    assert_int_equal(trace_of(crashed[k]), k >= CRASHES - KEPT ? 100 : 0);
  }
  assert_true(has_dir_of(live));
  assert_int_equal(count_dirs(), KEPT + 1);

  close(hold[1]);
  assert_int_equal(waitpid(live, &status, 0), live);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_int_equal(count_dirs(), KEPT);

  /* Clean up: the kept sessions, the stderr files, the output. */
  char cmd[1024];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'.err.* '%s.fxt'", base, base, base);
  assert_int_equal(system(cmd), 0);
}

/* A session directory left holding only a child's marker (its parent's session went while
 * the child set up) of a pid that is gone: the next session's sweep removes it; the same with
 * anything else in it, or with its pid running, is left alone. */
static void orphan_marker_directory_goes(void **state)
{
  (void)state;
  snprintf(base, sizeof(base), "/dev/shm/fxtrace-test-orphans-%d", (int)getpid());
  assert_int_equal(mkdir(base, 0700), 0);
  pid_t gone = fork(); /* a pid that is not running (until reused: then the dir stays) */
  assert_true(gone >= 0);
  if (gone == 0)
    _exit(0);
  assert_int_equal(waitpid(gone, NULL, 0), gone);
  char orphan[400], other[400], mine[400], path[500];
  snprintf(orphan, sizeof(orphan), "%s/%d.1", base, (int)gone);
  snprintf(other, sizeof(other), "%s/%d.2", base, (int)gone);
  snprintf(mine, sizeof(mine), "%s/%d.7", base, (int)getpid());
  const char *dirs[] = {orphan, other, mine};
  for (int i = 0; i < 3; i++) {
    assert_int_equal(mkdir(dirs[i], 0700), 0);
    snprintf(path, sizeof(path), "%s/child.12345.1", dirs[i]);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
  }
  snprintf(path, sizeof(path), "%s/notes", other); /* not only markers */
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fclose(f);
  pid_t s = fork();
  assert_true(s >= 0);
  if (s == 0) {
    child_start(200, "", FXT_MODE_DISCARD);
    _exit(fxt_session_stop() == 0 ? 0 : 12);
  }
  int status;
  assert_int_equal(waitpid(s, &status, 0), s);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  struct stat st;
  assert_int_not_equal(stat(orphan, &st), 0); /* gone */
  assert_int_equal(stat(other, &st), 0);      /* something else in it: left */
  assert_int_equal(stat(mine, &st), 0);       /* its pid runs (this one) */
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf %s %s.err.*", base, base);
  assert_int_equal(system(cmd), 0);
}

FXT_TEST_MAIN(
    cmocka_unit_test(test_keeps_newest), cmocka_unit_test(orphan_marker_directory_goes))
