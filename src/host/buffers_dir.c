/* buffers_dir.c - where a session's files go: the buffers directory (the default one under
 * /dev/shm, or an explicit buffers=DIR, checked) and the session's own directory in it,
 * DIR/<pid>.<n>/, with its lock (harvest.h); a session after exec takes over the directory
 * of the process's previous image. Each new session first collects the stale sessions of
 * dead processes in the base directory: harvested, removed, or kept for `fxtrace recover`.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fxtrace/session.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buffers_int.h"
#include "harvest.h"
#include "../base/grow.h"
#include "../base/recover.h"
#include "server.h"

int fxt_buffers_default_dir(char *out, size_t size)
{
  int n = snprintf(out, size, "/dev/shm/fxtrace-%u", (unsigned)geteuid());
  return n < 0 || (size_t)n >= size ? FXT_E2BIG : 0;
}

/* Crashed sessions a buffers directory keeps for `fxtrace recover`: the newest ones. Their
 * files are memory (tmpfs), so a program that crashes again and again must not fill it. */
#define KEEP_CRASHED 8

struct crashed {
  char name[256];
  struct timespec mtime; /* the directory's: when the session began */
};

static int newest_first(const void *a, const void *b)
{
  const struct timespec *x = &((const struct crashed *)a)->mtime;
  const struct timespec *y = &((const struct crashed *)b)->mtime;
  if (x->tv_sec != y->tv_sec)
    return x->tv_sec > y->tv_sec ? -1 : 1;
  return x->tv_nsec > y->tv_nsec ? -1 : x->tv_nsec < y->tv_nsec;
}

static const char *skip_digits(const char *p)
{
  const char *q = p;
  while (*q >= '0' && *q <= '9')
    q++;
  return q > p ? q : NULL;
}

/* Whether name is "<pid>.<n>.fxt" (or "<pid>.<n>-<k>.fxt"), a trace fxt_harvest wrote in a
 * session directory's place (a dead session whose output was stdout or none). */
static bool is_recovered_name(const char *name)
{
  const char *p = skip_digits(name);
  if (!p || *p != '.' || !(p = skip_digits(p + 1)))
    return false;
  if (*p == '-' && !(p = skip_digits(p + 1)))
    return false;
  return strcmp(p, ".fxt") == 0;
}

static bool add_crashed(struct crashed **v, size_t *n, size_t *cap, const char *name,
                        struct timespec mtime)
{
  if (!fxt_grow((void **)v, cap, *n + 1, sizeof(**v), 16))
    return false;
  snprintf((*v)[*n].name, sizeof((*v)[*n].name), "%s", name);
  (*v)[(*n)++].mtime = mtime;
  return true;
}

/* Sessions of processes that are gone: every one that nothing else will harvest is harvested
 * into its output file (harvest.h: or a file of its own, said on stderr); those that left
 * nothing to recover (a clean stop that died in its cleanup, a process that exited while its
 * consumer had written everything) are removed. Of the crashed ones left (their parent's
 * session will harvest them, or they could not be written) and the traces written in a
 * session directory's place, the KEEP_CRASHED newest are kept and the older ones removed,
 * each said on stderr. */
static void collect_stale(const char *base)
{
  fxt_harvest_dead(base, "fxtrace");
  DIR *d = opendir(base);
  if (!d)
    return;
  struct crashed *crashed = NULL;
  size_t ncrashed = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char *end;
    long pid = strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '.' || pid == (long)getpid() || strlen(e->d_name) >= 256)
      continue;
    char dir[4400];
    int k = snprintf(dir, sizeof(dir), "%s/%s", base, e->d_name);
    if (k <= 0 || (size_t)k >= sizeof(dir))
      continue;
    struct stat fst;
    if (is_recovered_name(e->d_name)) {
      if (lstat(dir, &fst) == 0 && S_ISREG(fst.st_mode) && fst.st_uid == geteuid() &&
          !add_crashed(&crashed, &ncrashed, &cap, e->d_name, fst.st_mtim))
        break; /* keep what was seen; the next session looks again */
      continue;
    }
    /* A process that runs with the pid and start time its header names: its session, or
     * the next image of a process that exec'd (it takes the directory over when its session
     * starts). Not ours to judge, and not even to lock for a look: a harvester that finds the
     * lock held waits for it, a little. */
    struct fxt_sdir_info info;
    char why[256];
    if (fxt_sdir_read(dir, &info, why, sizeof(why)) == 0 &&
        fxt_proc_running(info.pid, info.proc_start))
      continue;
    /* Its lock: held by a live session (of any pid namespace), or by another process that
     * looks at it right now; either way it is not ours to judge. */
    int lock = fxt_sdir_lock(dir, 0);
    if (lock < 0)
      continue;
    enum fxt_rec_dead state = fxt_recover_dead_state(dir);
    struct stat st;
    if (state == FXT_REC_STALE) {
      fxt_buf_remove_dir(dir);
      close(lock);
      continue;
    }
    close(lock);
    if (state == FXT_REC_CRASHED && stat(dir, &st) == 0 &&
        !add_crashed(&crashed, &ncrashed, &cap, e->d_name, st.st_mtim))
      break; /* keep what was seen; the next session looks again */
  }
  closedir(d);
  if (ncrashed > KEEP_CRASHED) {
    qsort(crashed, ncrashed, sizeof(*crashed), newest_first);
    for (size_t i = KEEP_CRASHED; i < ncrashed; i++) {
      char dir[4400];
      snprintf(dir, sizeof(dir), "%s/%s", base, crashed[i].name);
      if (is_recovered_name(crashed[i].name)) {
        if (unlink(dir) == 0)
          fprintf(stderr,
                  "fxtrace: removed %s, the recovered trace of a process that died: a "
                  "buffers directory keeps the %d newest\n",
                  dir, KEEP_CRASHED);
        continue;
      }
      int lock = fxt_sdir_lock(dir, 0);
      if (lock < 0)
        continue; /* taken over meanwhile (a harvest, or the next image of its process) */
      fxt_buf_remove_dir(dir);
      close(lock);
      fprintf(stderr,
              "fxtrace: removed %s, the unrecovered buffers of a process that died: a buffers "
              "directory keeps the %d newest (`fxtrace recover %s` lists them)\n",
              dir, KEEP_CRASHED, base);
    }
  }
  free(crashed);
}

/* A session that starts after exec: the directories the process's previous images left (the
 * same pid and start time; their lock is free, the image that held it is gone) are harvested
 * into their output files first (harvest.h). The first one harvested becomes this session's
 * directory, with its lock, so that the marker a parent holds for it (and the markers of its
 * children) stay right; when its output is this session's too, the consumer appends to it
 * (output_append). Returns true when s->buffers_dir and s->lock_fd were taken over. */
static bool take_over_previous(struct session *s, const char *base, pid_t pid)
{
  DIR *d = opendir(base);
  if (!d)
    return false;
  uint64_t start = fxt_buf_proc_start(pid);
  char mine[4096];
  fxt_buf_absolute_output(s, mine, sizeof(mine));
  char prefix[32];
  int plen = snprintf(prefix, sizeof(prefix), "%d.", (int)pid);
  bool taken = false;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, prefix, (size_t)plen) != 0)
      continue;
    char dir[4400], msg[1024];
    struct fxt_sdir_info info;
    if (snprintf(dir, sizeof(dir), "%s/%s", base, e->d_name) >= (int)sizeof(s->buffers_dir))
      continue;
    /* Ours when its header names this process (a live session of another pid namespace
     * with the same pid started at another time); then its lock is waited for: another
     * process may hold it for a moment to see that this one runs (harvest_child, record),
     * and must not be taken for a live session, or this session would write its output over
     * the trace it is about to harvest. */
    if (fxt_sdir_read(dir, &info, msg, sizeof(msg)) != 0 || info.pid != (uint32_t)pid ||
        info.proc_start != start)
      continue;
    int lock = fxt_sdir_lock(dir, 2000); /* bounded: a holder that stays is not a look */
    if (lock < 0)
      continue; /* removed meanwhile, or held: left to its holder */
    if (fxt_sdir_read(dir, &info, msg, sizeof(msg)) != 0) {
      close(lock);
      continue;
    }
    bool same = strcmp(info.output, mine) == 0 && mine[0] == '/';
    int rc = fxt_harvest(dir, !taken, same, taken ? s->buffers_dir : NULL, NULL, msg,
                         sizeof(msg));
    if (rc != 0 && rc != FXT_ENOENT) /* (1: written to a file of its own, said) */
      fprintf(stderr, "fxtrace: %s\n", msg);
    if (rc >= 0 && !taken) {
      strcpy(s->buffers_dir, dir);
      s->lock_fd = lock;
      s->lock_id = fxt_fd_id(lock);
      s->output_append = same && rc == 0; /* not into a file that is not the previous's */
      taken = true;
      continue;
    }
    close(lock);
  }
  closedir(d);
  return taken;
}

/* An explicit buffers=DIR, as it resolves (a symbolic link is followed): ours and writable by
 * no one else, or sticky (like /dev/shm or /tmp: then no one else can rename or remove the
 * 0700 session directory made in it). Anything else lets another user replace the session's
 * files under it. 0, or FXT_EPERM with err set. */
static int explicit_dir_check(const char *base, char *err, size_t err_size)
{
  struct stat st;
  if (stat(base, &st) != 0) {
    snprintf(err, err_size, "%s", strerror(errno));
    return -errno;
  }
  if (!S_ISDIR(st.st_mode)) {
    snprintf(err, err_size, "not a directory");
    return FXT_EPERM;
  }
  if (st.st_mode & S_ISVTX)
    return 0;
  if (st.st_uid != geteuid()) {
    snprintf(err, err_size, "owned by uid %u, not by uid %u, and not sticky: refused",
             (unsigned)st.st_uid, (unsigned)geteuid());
    return FXT_EPERM;
  }
  if (st.st_mode & 022) {
    snprintf(err, err_size, "mode %04o lets others write in it and is not sticky: refused",
             (unsigned)(st.st_mode & 07777));
    return FXT_EPERM;
  }
  return 0;
}

/* Creates DIR/<pid>.<n> (n = the first number free), or takes over the one the process's
 * previous image left, and takes its lock (buffers_int.h). */
int fxt_buf_make_dir(struct session *s, const char *base, pid_t pid)
{
  char err[256];
  char dflt[256];
  bool is_default = fxt_buffers_default_dir(dflt, sizeof(dflt)) == 0 && strcmp(dflt, base) == 0;
  if (is_default) {
    /* Shared with every user's processes: checked like the control socket's directory. */
    if (fxt_ctl_dir_check(base, true, err, sizeof(err)) != 0) {
      fprintf(stderr, "fxtrace: buffers directory %s: %s\n", base, err);
      return FXT_EPERM;
    }
  } else if (mkdir(base, 0700) != 0 && errno != EEXIST) {
    int e = errno;
    fprintf(stderr, "fxtrace: buffers directory %s: %s\n", base, strerror(e));
    return -e;
  } else {
    int rc = explicit_dir_check(base, err, sizeof(err));
    if (rc != 0) {
      fprintf(stderr, "fxtrace: buffers directory %s: %s\n", base, err);
      return rc;
    }
  }
  if (take_over_previous(s, base, pid)) {
    collect_stale(base);
    return 0;
  }
  collect_stale(base);
  int retries = 3; /* another process's clean stop may remove an empty base meanwhile */
  for (uint32_t n = 1; n < 100000; n++) {
    int k = snprintf(s->buffers_dir, sizeof(s->buffers_dir), "%s/%d.%u", base, (int)pid, n);
    if (k < 0 || (size_t)k >= sizeof(s->buffers_dir) - 16)
      return FXT_E2BIG;
    if (mkdir(s->buffers_dir, 0700) == 0) {
      /* Waits only while another process looks at the new, empty directory (it finds no
       * session file there and leaves it alone). */
      s->lock_fd = fxt_sdir_lock(s->buffers_dir, -1);
      s->lock_id = fxt_fd_id(s->lock_fd);
      if (s->lock_fd >= 0)
        return 0;
      fprintf(stderr, "fxtrace: buffers directory %s: cannot lock it: %s\n", s->buffers_dir,
              strerror(-s->lock_fd));
      rmdir(s->buffers_dir);
      return FXT_ENOENT;
    }
    if (errno == ENOENT && retries-- > 0 &&
        (is_default ? fxt_ctl_dir_check(base, true, err, sizeof(err)) == 0
                    : mkdir(base, 0700) == 0 || errno == EEXIST)) {
      n--;
      continue;
    }
    if (errno != EEXIST) {
      int e = errno;
      fprintf(stderr, "fxtrace: buffers directory %s: %s\n", s->buffers_dir, strerror(e));
      return -e;
    }
  }
  return FXT_ENOSPC;
}
