/* test_crash_leftovers - a buffers directory does not fill up with crashed sessions: ten
 * processes in a row die with records in their buffers (SIGKILL, flight recorder, so nothing
 * was delivered), and each new session keeps the 8 newest crashed sessions, removes the older
 * ones and says so on stderr; a live process's session is never touched. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

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

static bool err_mentions(int k, pid_t pid)
{
  char path[300], needle[400];
  snprintf(path, sizeof(path), "%s.err.%d", base, k);
  snprintf(needle, sizeof(needle), "removed %s/%d.1, the unrecovered buffers", base, (int)pid);
  size_t len = 0;
  unsigned char *text = fxtcount_read(path, &len);
  assert_non_null(text);
  bool found = memmem(text, len, needle, strlen(needle)) != NULL;
  bool any = memmem(text, len, "removed", 7) != NULL;
  free(text);
  return pid ? found : any;
}

static void test_keeps_newest(void **state)
{
  (void)state;
  snprintf(base, sizeof(base), "/dev/shm/fxtrace-test-leftovers-%d", (int)getpid());
  assert_int_equal(mkdir(base, 0700), 0);

  /* A live session first: it must outlive every clean-up below. */
  int hold[2];
  assert_int_equal(pipe(hold), 0);
  pid_t live = fork();
  assert_true(live >= 0);
  if (live == 0) {
    close(hold[1]);
    child_start(100, "", FXT_MODE_OVERWRITE);
    FXT_TRACE(t, crash, 1);
    char c;
    ssize_t r = read(hold[0], &c, 1); /* until the parent closes its end */
    (void)r;
    _exit(fxt_session_stop() == 0 ? 0 : 12);
  }
  close(hold[0]);

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
  /* Child 9 found 9 crashed sessions and removed the oldest; no earlier one removed any. */
  for (int k = 0; k < CRASHES - 1; k++)
    assert_false(err_mentions(k, 0));
  assert_true(err_mentions(CRASHES - 1, crashed[0]));
  assert_false(has_dir_of(crashed[0]));
  assert_true(has_dir_of(crashed[1]));

  /* A session that stops cleanly: it removes one more, and leaves nothing of its own. */
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
  assert_true(err_mentions(CRASHES, crashed[1]));
  assert_false(has_dir_of(clean));
  for (int k = 0; k < CRASHES; k++)
    assert_int_equal(has_dir_of(crashed[k]), k >= CRASHES - KEPT);
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

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_keeps_newest)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
