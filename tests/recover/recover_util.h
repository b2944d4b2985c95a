/* recover_util.h - helpers of the recovery tests: files, child processes, a session's files
 * mapped as recovery's input. Header-only; each test includes it once. */
#ifndef FXT_TESTS_RECOVER_UTIL_H
#define FXT_TESTS_RECOVER_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../fxtcount.h"
#include "../mem_sink.h" /* a recovery's output in memory */
#include "base/recover.h"
#include "base/shfile.h"

/* The command line of a test that runs the crash child and the fxtrace command: CRASH_CHILD
 * FXTRACE, then what usage_tail says (the test reads it). Sets *child and *fxtrace; false, a
 * usage line on stderr, when they are missing. */
static inline bool ru_take_paths(int argc, char **argv, const char *usage_tail,
                                 const char **child, const char **fxtrace)
{
  if (argc < 3) {
    fprintf(stderr, "usage: %s CRASH_CHILD FXTRACE%s\n", argv[0], usage_tail);
    return false;
  }
  *child = argv[1];
  *fxtrace = argv[2];
  return true;
}

/* The whole file at path, malloc'ed; NULL when it cannot be read. */
static inline unsigned char *ru_read_file(const char *path, size_t *len)
{
  return fxtcount_read(path, len);
}

/* The whole FXT file at path read (malloc'ed: free it) and d set to decode it with the
 * caller's string table; NULL when it cannot be read. */
static inline unsigned char *ru_decode_file(const char *path, struct fxt_decoder *d,
                                            struct fxt_str_slot *table)
{
  size_t len;
  unsigned char *buf = ru_read_file(path, &len);
  if (buf)
    fxt_decoder_init(d, buf, len, table);
  return buf;
}

/* Decodes the FXT file at path (what: its name in messages) strictly, each record given to
 * fn until fn writes a failure into msg (size bytes). Returns msg: "" or what is wrong (the
 * file unreadable, fn's failure, where it does not decode). One caller at a time. */
static inline const char *ru_walk(const char *path, const char *what,
                                  void (*fn)(void *ctx, const struct fxt_record *r, char *msg,
                                             size_t size),
                                  void *ctx, char *msg, size_t size)
{
  static struct fxt_str_slot table[FXT_STRING_TABLE_SIZE];
  static struct fxt_record r;
  struct fxt_decoder d;
  msg[0] = 0;
  unsigned char *buf = ru_decode_file(path, &d, table);
  if (!buf) {
    snprintf(msg, size, "cannot read %s", what);
    return msg;
  }
  char err[256];
  int rc = 0;
  while (!msg[0] && (rc = fxt_decoder_next(&d, &r, err, sizeof(err))) == 1)
    fn(ctx, &r, msg, size);
  free(buf);
  if (!msg[0] && rc < 0)
    snprintf(msg, size, "%s does not decode: %s", what, err);
  return msg;
}

static inline bool ru_read_exact(const char *dir, const char *name, void *out, size_t n)
{
  char path[4200];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  int fd = open(path, O_RDONLY);
  if (fd < 0)
    return false;
  ssize_t k = read(fd, out, n);
  close(fd);
  return k == (ssize_t)n;
}

static inline bool ru_file_has(const char *dir, const char *name, const char *needle)
{
  char path[4200];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  size_t len;
  unsigned char *b = ru_read_file(path, &len);
  bool found = b && memmem(b, len, needle, strlen(needle)) != NULL;
  free(b);
  return found;
}

static inline void ru_cat(const char *dir, const char *name)
{
  char path[4200];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  size_t len;
  unsigned char *b = ru_read_file(path, &len);
  if (b)
    fprintf(stderr, "---- %s ----\n%.*s\n", path, (int)(len > 8192 ? 8192 : len), (char *)b);
  free(b);
}

/* Removes dir and what is in it, two levels deep (the tests' directories: files and the
 * session's own directory). */
static inline void ru_rmtree(const char *dir)
{
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    char path[4200];
    int k = snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    if (k < 0 || (size_t)k >= sizeof(path))
      continue;
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
      ru_rmtree(path);
    else
      unlink(path);
  }
  closedir(d);
  rmdir(dir);
}

/* Makes the test's directory dir (size bytes): /dev/shm/fxtrace-test-NAME-PID, empty (what a
 * run before left there removed). Whether it could be made. */
static inline bool ru_fresh_dir(char *dir, size_t size, const char *name)
{
  snprintf(dir, size, "/dev/shm/fxtrace-test-%s-%d", name, (int)getpid());
  ru_rmtree(dir);
  return mkdir(dir, 0700) == 0;
}

/* The sanitizers of an instrumented child must let it die by the signal. */
static inline void ru_child_env(void)
{
  setenv("ASAN_OPTIONS", "handle_segv=0:handle_abort=0:handle_sigbus=0:detect_leaks=0", 1);
  setenv("TSAN_OPTIONS", "handle_segv=0:handle_abort=0:handle_sigbus=0", 1);
  setenv("UBSAN_OPTIONS", "handle_segv=0:handle_abort=0", 1);
}

/* Runs argv to its end; stdout to out_path when set. Returns the exit status (or 128 + signal). */
static inline int ru_run(const char *const *argv, const char *out_path)
{
  /* posix_spawn, not fork: a traced test process runs no atfork handler (a forked child would
   * start a consumer thread of its own before exec, which TSan refuses). */
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (out_path)
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  int st = 0;
  if (rc != 0 || waitpid(pid, &st, 0) != pid)
    return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Starts argv with stderr in dir/stderr, waits (10 s at most) for its "ready SESSION" line;
 * returns its pid with the session directory in session, or -1 (the child is killed). */
static inline pid_t ru_spawn_ready(const char *const *argv, const char *dir, char *session,
                            size_t size)
{
  int p[2];
  if (pipe(p) != 0)
    return -1;
  char path[4200];
  snprintf(path, sizeof(path), "%s/stderr", dir);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, p[1], 1);
  posix_spawn_file_actions_addclose(&fa, p[0]);
  posix_spawn_file_actions_addclose(&fa, p[1]);
  ru_child_env(); /* for the child: read at its start (this process read its own already) */
  pid_t pid;
  if (posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ) != 0)
    pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  close(p[1]);
  char line[4400];
  size_t n = 0;
  bool ok = false;
  while (pid > 0 && n < sizeof(line) - 1) {
    struct pollfd pf = {p[0], POLLIN, 0};
    if (poll(&pf, 1, 10000) <= 0)
      break;
    ssize_t k = read(p[0], line + n, sizeof(line) - 1 - n);
    if (k <= 0)
      break;
    n += (size_t)k;
    line[n] = 0;
    char *nl = strchr(line, '\n');
    if (nl && strncmp(line, "ready ", 6) == 0) {
      *nl = 0;
      size_t k = strlen(line + 6);
      ok = k > 0 && k < size;
      if (ok)
        memcpy(session, line + 6, k + 1);
      break;
    }
  }
  close(p[0]);
  if (!ok && pid > 0) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
  }
  return pid;
}

/* A session's files mapped read-only, as recovery's input. */
struct ru_session {
  struct fxt_rec_input in;
  char spath[4400], ppath[4400], opath[4400];
};

static inline const unsigned char *ru_map(const char *path, uint64_t *size)
{
  *size = 0;
  int fd = open(path, O_RDONLY);
  struct stat st;
  if (fd < 0)
    return NULL;
  void *p = NULL;
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
      p = NULL;
    else
      *size = (uint64_t)st.st_size;
  }
  close(fd);
  return p;
}

static inline bool ru_open_session(const char *session, struct ru_session *s)
{
  memset(s, 0, sizeof(*s));
  snprintf(s->spath, sizeof(s->spath), "%s/%s", session, FXT_SH_FILE);
  snprintf(s->ppath, sizeof(s->ppath), "%s/%s", session, FXT_SH_POOL_FILE);
  s->in.session.name = s->spath;
  s->in.pool.name = s->ppath;
  s->in.output.name = s->opath;
  s->in.session.data = ru_map(s->spath, &s->in.session.size);
  s->in.pool.data = ru_map(s->ppath, &s->in.pool.size);
  if (!s->in.session.data || s->in.session.size < FXT_SH_HEADER_BYTES)
    return false;
  memcpy(s->opath, s->in.session.data + FXT_SH_OFF_OUTPUT, 4096);
  s->opath[4096] = 0;
  if (s->opath[0] == '/')
    s->in.output.data = ru_map(s->opath, &s->in.output.size);
  return true;
}

static inline void ru_close_session(struct ru_session *s)
{
  if (s->in.session.data)
    munmap((void *)s->in.session.data, s->in.session.size);
  if (s->in.pool.data)
    munmap((void *)s->in.pool.data, s->in.pool.size);
  if (s->in.output.data)
    munmap((void *)s->in.output.data, s->in.output.size);
}

#endif
