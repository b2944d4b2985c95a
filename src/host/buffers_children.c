/* buffers_children.c - the sessions of a process's children, seen from both sides. A child's
 * session (of fork, or of a program a traced process started) leaves a marker in its parent's
 * session directory; the parent's consumer harvests the session of a child that died without
 * stopping it into the child's output (harvest.h), and at the parent's stop the markers of
 * children still running go up to the grandparent's session, or are dropped.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fxtrace/session.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "buffers_int.h"
#include "harvest.h"

bool fxt_buf_mark_child(const char *parent_dir, const char *child_dir)
{
  char mark[4400];
  const char *name = strrchr(child_dir, '/') + 1;
  if ((size_t)snprintf(mark, sizeof(mark), "%s/%s%s", parent_dir, FXT_CHILD_MARK, name) >=
      sizeof(mark))
    return false;
  int fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return false;
  close(fd);
  return true;
}

/* A session in a process that a traced process started otherwise than by fork (an exec'd
 * image after vfork, posix_spawn, or fork and exec): a marker in the parent's session
 * directory, as a child of fork leaves one, so that the parent harvests this session if it
 * ends without stopping it. The parent's session is the directory of its pid whose lock is
 * held. */
void fxt_buf_mark_in_parent(struct session *s)
{
  pid_t ppid = getppid();
  DIR *d = ppid > 1 ? opendir(s->buffers_base) : NULL;
  if (!d)
    return;
  char prefix[32];
  int plen = snprintf(prefix, sizeof(prefix), "%d.", (int)ppid);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char dir[4096];
    if (strncmp(e->d_name, prefix, (size_t)plen) != 0 ||
        (size_t)snprintf(dir, sizeof(dir), "%s/%s", s->buffers_base, e->d_name) >=
            sizeof(dir) - 300)
      continue;
    int lock = fxt_sdir_lock(dir, 0);
    if (lock >= 0)
      close(lock);
    if (lock != -EWOULDBLOCK)
      continue; /* no live session there */
    if (fxt_buf_mark_child(dir, s->buffers_dir)) {
      memcpy(s->parent_dir, dir, sizeof(s->parent_dir));
      break;
    }
  }
  closedir(d);
}

/* The marker of child directory `name` in this session's directory: unless final, a child
 * that runs keeps it; a dead child is harvested (its own children's markers become ours). */
static void harvest_child(struct session *s, const char *name, bool final)
{
  char mark[4400], dir[4400], msg[1024];
  snprintf(mark, sizeof(mark), "%s/%s", s->buffers_dir, name);
  snprintf(dir, sizeof(dir), "%s/%s", s->buffers_base, name + strlen(FXT_CHILD_MARK));
  struct fxt_sdir_info info;
  int rc = fxt_sdir_read(dir, &info, msg, sizeof(msg));
  int lock = -EWOULDBLOCK;
  if (rc == FXT_ENOENT && access(dir, F_OK) != 0) {
    unlink(mark); /* it stopped cleanly, or another took its directory over */
    return;
  }
  /* Its process is gone (a zombie is): the lock is free but for another's look, which a
   * second at most outlasts (the consumer does not wait: it looks again at its next pass).
   * Else it runs (its session, or an exec'd image that does not trace: its next session
   * would take it over). */
  if (rc != FXT_ENOENT && (rc != 0 || !fxt_proc_running(info.pid, info.proc_start)))
    lock = fxt_sdir_lock(dir, final ? 1000 : 0);
  if (lock < 0) {
    if (!final)
      return;
    /* This session ends first: its parent's session takes the child over, if there is one;
     * otherwise the child's directory stays for `fxtrace record` or `fxtrace recover`. */
    char up[4400];
    if (!s->parent_dir[0] || snprintf(up, sizeof(up), "%s/%s", s->parent_dir, name) >=
                                 (int)sizeof(up) || rename(mark, up) != 0)
      unlink(mark);
    return;
  }
  if (rc == 0)
    rc = fxt_harvest(dir, false, false, s->buffers_dir, NULL, msg, sizeof(msg));
  close(lock);
  /* Said when the trace went to a file of its own (1), or was not written (not: another
   * harvested it meanwhile). */
  if (rc == 1 || (rc != 0 && access(dir, F_OK) == 0))
    fprintf(stderr, "fxtrace: %s\n", msg);
  unlink(mark);
}

void fxt_buffers_harvest_children(struct session *s, bool final)
{
  if (s->lock_fd < 0)
    return;
  /* At most every 20 ms while the session runs (a busy consumer passes far more often): a
   * child's trace waits that much longer, and a pass costs no more than a clock read. */
  static uint64_t last_ns; /* the consumer thread's (final: the stopping thread, after it) */
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  uint64_t ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
  if (!final && ns - last_ns < 20000000u)
    return;
  last_ns = ns;
  /* Harvests adopt grandchildren into this directory while it is read: a name missed now is
   * seen on the next call; the stop looks twice. The directory is read with getdents64 into
   * a buffer on the stack, not opendir: the consumer runs this every 20 ms, and must not hold
   * an allocator's lock when another thread forks (an allocator that does not take its locks
   * around fork, as ASan's, would deadlock the child's first malloc). */
  for (int round = 0; round < (final ? 2 : 1); round++) {
    int fd = open(s->buffers_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
      return;
    _Alignas(8) char buf[4096];
    long n;
    while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
      for (long off = 0; off < n;) {
        /* struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, name */
        unsigned short reclen;
        memcpy(&reclen, buf + off + 16, sizeof(reclen));
        const char *name = buf + off + 19;
        if (reclen == 0)
          break;
        if (strncmp(name, FXT_CHILD_MARK, strlen(FXT_CHILD_MARK)) == 0)
          harvest_child(s, name, final);
        off += reclen;
      }
    }
    close(fd);
  }
}
