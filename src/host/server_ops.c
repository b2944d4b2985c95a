/* server_ops.c - what the live-control requests INFO, LIST, STAT and WRITE do to the tracefs
 * tree (server.h), answered into a text buffer. server.c carries requests and replies; READ
 * and PIPE stay there, as they are streams over a file it keeps open.
 */
#define _GNU_SOURCE
#include <fxtrace/errors.h>
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/namefix.h"
#include "../base/tbuf.h"
#include "server.h"

static void putf(struct fxt_tbuf *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct fxt_tbuf *t, const char *fmt, ...)
{
  char line[sizeof(((struct fxt_fs_dirent *)0)->name) + 4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  if (n > 0)
    fxt_tbuf_put(t, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* Newlines in a whole file of the tree (-1 on error): set_event lines = enabled events. */
static long count_lines(const char *path)
{
  struct fxt_fs_file *f;
  if (fxt_fs_open(path, FXT_FS_READ, &f) != 0)
    return -1;
  char buf[4096];
  long lines = 0;
  ssize_t n;
  while ((n = fxt_fs_read(f, buf, sizeof(buf))) > 0)
    for (ssize_t i = 0; i < n; i++)
      lines += buf[i] == '\n';
  fxt_fs_close(f);
  return lines;
}

static int info(struct fxt_tbuf *out)
{
  char comm[64];
  fxt_read_comm(0, comm, sizeof(comm));
  comm[strcspn(comm, "\n")] = 0; /* one line of the reply: a newline inside the name ends it */
  /* fxt_session_running takes the session's lock: the output path read next is the one its
   * start wrote. */
  bool running = fxt_session_running();
  char on[8] = "";
  fxt_fs_cat("tracing_on", on, sizeof(on));
  on[strcspn(on, "\n")] = 0;
  putf(out, "pid=%ld\ncomm=%s\nsession=%s\n", (long)getpid(), comm,
       running ? "running" : "stopped");
  putf(out, "output=%s\ntracing_on=%s\nevents=%ld\n", running ? fxt_session_output() : "", on,
       count_lines("set_event"));
  return 0;
}

static int list(const char *path, struct fxt_tbuf *out)
{
  int max = 256, n;
  struct fxt_fs_dirent *d = NULL;
  /* fxt_fs_list returns the full count even past max: grow once and ask again. */
  for (;;) {
    struct fxt_fs_dirent *m = realloc(d, (size_t)max * sizeof(*d));
    if (!m) {
      free(d);
      return FXT_ENOMEM;
    }
    d = m;
    n = fxt_fs_list(path, d, max);
    if (n <= max)
      break;
    max = n;
  }
  for (int i = 0; i < n; i++)
    putf(out, "%c %s\n", d[i].is_dir ? 'd' : 'f', d[i].name);
  free(d);
  return n < 0 ? n : 0;
}

static int stat_path(const char *path, struct fxt_tbuf *out)
{
  int rc = fxt_fs_stat(path);
  if (rc < 0)
    return rc;
  if (rc == 1) {
    fxt_tbuf_puts(out, "d\n");
    return 0;
  }
  /* Writable: an open for writing without TRUNC has no effect. Readable: every file but
   * trace_marker (the tree's one write-only file); probing with a read open would take a
   * snapshot, which for `trace` is the whole live view. */
  struct fxt_fs_file *f;
  bool w = fxt_fs_open(path, FXT_FS_WRITE, &f) == 0;
  if (w)
    fxt_fs_close(f);
  const char *base = strrchr(path, '/');
  bool r = strcmp(base ? base + 1 : path, "trace_marker") != 0;
  putf(out, "f %s%s\n", r ? "r" : "", w ? "w" : "");
  return 0;
}

static int write_path(const char *path, const struct fxt_ctl_request *req)
{
  struct fxt_fs_file *f = NULL;
  uint32_t flags = FXT_FS_WRITE | (req->flags & FXT_CTL_F_TRUNC ? FXT_FS_TRUNC : 0);
  int rc = fxt_fs_open(path, flags, &f);
  if (rc == 0) {
    if (req->value_len) { /* the whole value in one write, as `echo` does */
      ssize_t n = fxt_fs_write(f, req->value, req->value_len);
      rc = n < 0 ? (int)n : 0;
    }
    fxt_fs_close(f);
  }
  return rc;
}

int fxt_srv_answer(const struct fxt_ctl_request *req, const char *path, struct fxt_tbuf *out)
{
  switch (req->op) {
  case FXT_CTL_INFO:
    return info(out);
  case FXT_CTL_LIST:
    return list(path, out);
  case FXT_CTL_STAT:
    return stat_path(path, out);
  case FXT_CTL_WRITE:
    return write_path(path, req);
  case FXT_CTL_SNAPSHOT: {
    int rc = fxt_snapshot(path);
    struct stat st;
    if (rc == 0)
      putf(out, "snapshot %s\n", path);
    else if (rc == FXT_EINVAL && stat(path, &st) == 0 && !S_ISREG(st.st_mode))
      putf(out, "not a regular file (%s): a snapshot is written to a regular file only",
           S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISSOCK(st.st_mode) ? "a socket"
           : S_ISDIR(st.st_mode) ? "a directory" : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)
           ? "a device" : "not a file");
    return rc;
  }
  default: /* READ and PIPE are server.c's */
    return FXT_EINVAL;
  }
}
