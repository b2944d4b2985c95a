/* harvest.c - see harvest.h. Runs in the process that acts on another session's directory
 * (a traced parent's consumer thread or its stop, a new session's setup, `fxtrace record`
 * and `fxtrace recover`): nothing here is on an emission's path, and nothing here is shared
 * between threads (each caller works on directories whose lock it holds).
 */
#define _GNU_SOURCE
#include "harvest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fxtrace/errors.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../export/tracedat.h"
#include "recover_int.h"
#include "shfile.h"

int fxt_sdir_lock(const char *dir, int wait_ms)
{
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  for (int tries = 0;; tries++) {
    if (flock(fd, LOCK_EX | (wait_ms < 0 ? 0 : LOCK_NB)) == 0)
      return fd;
    int err = errno;
    if (err == EINTR)
      continue;
    if (err == EWOULDBLOCK && tries < wait_ms) {
      struct timespec one_ms = {0, 1000000};
      nanosleep(&one_ms, NULL);
      continue;
    }
    close(fd);
    return err == EAGAIN ? -EWOULDBLOCK : -err;
  }
}

/* A whole regular file, mapped read-only; data NULL and *err set when it cannot be. */
static const unsigned char *map_ro(const char *path, uint64_t *size, int *err)
{
  *size = 0;
  *err = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *err = errno;
    return NULL;
  }
  struct stat st;
  void *p = NULL;
  if (fstat(fd, &st) != 0)
    *err = errno;
  else if (!S_ISREG(st.st_mode))
    *err = EINVAL;
  else if (st.st_size > 0 &&
           (p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
    *err = errno;
    p = NULL;
  }
  close(fd);
  if (p)
    *size = (uint64_t)st.st_size;
  return p;
}

static void unmap_ro(const unsigned char *p, uint64_t size)
{
  if (p)
    munmap((void *)p, size);
}

struct say {
  char *msg;
  size_t size;
};

/* The first damage line recovery reports (the reason a header is refused, what a harvest
 * could not recover). */
static void keep_first_damage(void *ctx, int damage, const char *line)
{
  struct say *sy = ctx;
  if (damage && sy->msg && sy->size && !sy->msg[0])
    snprintf(sy->msg, sy->size, "%s", line);
}

int fxt_sdir_read(const char *dir, struct fxt_sdir_info *info, char *why, size_t why_size)
{
  char path[4400];
  if (why_size)
    why[0] = 0;
  snprintf(path, sizeof(path), "%s/%s", dir, FXT_SH_FILE);
  uint64_t size;
  int err;
  const unsigned char *data = map_ro(path, &size, &err);
  if (!data) {
    if (err && err != ENOENT && why_size)
      snprintf(why, why_size, "%s: %s", path, strerror(err));
    return err == ENOENT || err == 0 ? FXT_ENOENT : -err;
  }
  struct fxt_rec_input in = {.session = {path, data, size}};
  struct fxt_rec_stats st;
  struct say sy = {why, why_size};
  struct rec_model m;
  memset(&m, 0, sizeof(m));
  memset(&st, 0, sizeof(st));
  m.in = &in;
  m.stats = &st;
  m.report = keep_first_damage;
  m.report_ctx = &sy;
  int rc = rec_read_header(&m);
  if (rc == 0) {
    info->pid = m.h.pid;
    info->proc_start = m.h.proc_start;
    info->state = m.h.state;
    memcpy(info->output, m.h.output, sizeof(info->output));
  }
  unmap_ro(data, size);
  return rc;
}

bool fxt_proc_running(uint32_t pid, uint64_t proc_start)
{
  char path[64], buf[1024];
  snprintf(path, sizeof(path), "/proc/%u/stat", pid);
  int fd = pid ? open(path, O_RDONLY | O_CLOEXEC) : -1;
  ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
  if (fd >= 0)
    close(fd);
  if (n <= 0)
    return false;
  buf[n] = 0;
  /* Field 2 is "(comm)" and may hold anything: fields 3 (state) and 22 (start time) are
   * counted after its last ')'. */
  char *q = strrchr(buf, ')');
  if (!q || q[1] != ' ' || q[2] == 'Z' || q[2] == 'X' || q[2] == 'x')
    return false;
  int field = 2;
  for (; *q && field < 22; q++)
    field += *q == ' ';
  return strtoull(q, NULL, 10) == proc_start;
}

static bool is_child_mark(const char *name)
{
  return strncmp(name, FXT_CHILD_MARK, strlen(FXT_CHILD_MARK)) == 0;
}

void fxt_sdir_adopt_children(const char *dir, const char *to)
{
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!is_child_mark(e->d_name))
      continue;
    char from[4400], into[4400];
    snprintf(from, sizeof(from), "%s/%s", dir, e->d_name);
    if (to && snprintf(into, sizeof(into), "%s/%s", to, e->d_name) < (int)sizeof(into) &&
        rename(from, into) == 0)
      continue;
    unlink(from);
  }
  closedir(d);
}

void fxt_sdir_remove(const char *dir, bool keep_dir)
{
  char path[4400];
  static const char *const files[] = {FXT_SH_FILE, FXT_SH_POOL_FILE};
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
    int n = snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
    if (n > 0 && (size_t)n < sizeof(path))
      unlink(path);
  }
  if (keep_dir)
    return;
  /* A child's marker may appear while the directory goes (a child of fork sets up): the
   * markers go, and rmdir is tried again. */
  for (int tries = 0; tries < 4; tries++) {
    fxt_sdir_adopt_children(dir, NULL);
    if (rmdir(dir) == 0 || errno != ENOTEMPTY)
      return;
  }
}

static int write_fd(void *ctx, const void *p, size_t n)
{
  int fd = *(int *)ctx;
  const unsigned char *b = p;
  while (n) {
    ssize_t k = write(fd, b, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return k < 0 ? -errno : -EIO;
    b += k;
    n -= (size_t)k;
  }
  return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
  size_t n = strlen(s), k = strlen(suffix);
  return n > k && strcmp(s + n - k, suffix) == 0;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void say(char *msg, size_t size, const char *fmt, ...)
{
  if (!size)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, size, fmt, ap);
  va_end(ap);
}

int fxt_harvest(const char *dir, bool keep_dir, bool keep_fxt, const char *adopt_dir,
                struct fxt_rec_stats *st, char *msg, size_t msg_size)
{
  struct fxt_rec_stats local;
  if (!st)
    st = &local;
  memset(st, 0, sizeof(*st));
  if (msg_size)
    msg[0] = 0;
  struct fxt_sdir_info info;
  char why[1024];
  int rc = fxt_sdir_read(dir, &info, why, sizeof(why));
  if (rc == FXT_ENOENT) {
    say(msg, msg_size, "%s: no session file: nothing to harvest", dir);
    return FXT_ENOENT;
  }
  if (rc != 0) {
    say(msg, msg_size, "%s: left for `fxtrace recover`: %s", dir, why);
    return rc;
  }
  if (info.output[0] != '/') {
    say(msg, msg_size,
        "%s: the session of pid %u had no output file (%s): left for `fxtrace recover`", dir,
        info.pid, info.output[0] ? "its trace went to stdout" : "a flight recorder");
    return FXT_ENOENT;
  }
  /* The file the consumer wrote: the output itself, or "X.dat.fxt" for a trace.dat. */
  char part[4200];
  bool dat = ends_with(info.output, ".dat");
  snprintf(part, sizeof(part), dat ? "%s.fxt" : "%s", info.output);
  char spath[4400], ppath[4400], tmp[4300];
  snprintf(spath, sizeof(spath), "%s/%s", dir, FXT_SH_FILE);
  snprintf(ppath, sizeof(ppath), "%s/%s", dir, FXT_SH_POOL_FILE);
  snprintf(tmp, sizeof(tmp), "%s.harvest-%d", part, (int)getpid());
  uint64_t ssize, psize, osize;
  int serr, perr, oerr;
  const unsigned char *sdata = map_ro(spath, &ssize, &serr);
  const unsigned char *pdata = map_ro(ppath, &psize, &perr);
  const unsigned char *odata = map_ro(part, &osize, &oerr);
  struct fxt_rec_input in = {
      .session = {spath, sdata, ssize},
      .pool = {ppath, pdata, psize},
      .output = {part, odata, osize},
      .output_errno = oerr,
  };
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    rc = -errno;
    say(msg, msg_size, "%s: cannot write the trace of pid %u: %s: %s (left in place)", dir,
        info.pid, tmp, strerror(-rc));
  } else {
    struct say sy = {why, sizeof(why)};
    why[0] = 0;
    rc = fxt_recover_run(&in, write_fd, &fd, keep_first_damage, &sy, st);
    if (close(fd) != 0 && rc >= 0)
      rc = -errno;
    if (rc >= 0 && rename(tmp, part) != 0)
      rc = -errno;
    if (rc < 0) {
      unlink(tmp);
      say(msg, msg_size, "%s: the trace of pid %u was not written to %s: %s (left in place)",
          dir, info.pid, part, why[0] ? why : fxt_strerror(rc));
    }
  }
  unmap_ro(sdata, ssize);
  unmap_ro(pdata, psize);
  unmap_ro(odata, osize);
  if (rc < 0)
    return rc;
  bool damaged = rc == 1;
  if (dat && !keep_fxt) {
    char err[512] = "";
    int crc = fxt_tracedat_file(part, info.output, NULL, err, sizeof(err));
    if (crc == 0)
      unlink(part);
    else
      say(msg, msg_size, "%s: not written (%s: %s); the trace is in %s", info.output,
          fxt_strerror(crc), err, part);
  }
  fxt_sdir_adopt_children(dir, adopt_dir);
  fxt_sdir_remove(dir, keep_dir);
  if (msg_size && !msg[0])
    say(msg, msg_size,
        "%s: pid %u ended without stopping its session: its trace is in %s (%llu events "
        "recovered from its buffers; dropped %llu, overrun %llu, lost %llu)%s%s",
        dir, info.pid, dat && !keep_fxt ? info.output : part, (unsigned long long)st->events,
        (unsigned long long)st->dropped, (unsigned long long)st->overrun,
        (unsigned long long)st->lost, damaged ? "; damage: " : "", damaged ? why : "");
  return 0;
}
