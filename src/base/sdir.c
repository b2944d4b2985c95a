/* sdir.c - see sdir.h: session directories seen from outside their sessions. Runs in the
 * process that acts on another session's directory (a traced parent's consumer thread or its
 * stop, a new session's setup, a recovery module, `fxtrace record`, `recover` and `ps`):
 * nothing here is on an emission's path, and nothing here is shared between threads - each
 * caller works on directories whose lock it holds, and what recovery to use comes from the
 * caller (struct fxt_sdir_recovery), not from state kept here.
 */
#define _GNU_SOURCE
#include "sdir.h"
#include "grow.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fxtrace/errors.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "recover_header.h"
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

const unsigned char *fxt_sdir_map(const char *path, uint64_t *size, int *err)
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

void fxt_sdir_unmap(const unsigned char *p, uint64_t size)
{
  if (p)
    munmap((void *)p, size);
}

void fxt_sdir_first_damage(void *ctx, int damage, const char *line)
{
  struct fxt_sdir_why *sy = ctx;
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
  const unsigned char *data = fxt_sdir_map(path, &size, &err);
  if (!data) {
    if (err && err != ENOENT && why_size)
      snprintf(why, why_size, "%s: %s", path, strerror(err));
    return err == ENOENT || err == 0 ? FXT_ENOENT : -err;
  }
  struct fxt_rec_input in = {.session = {path, data, size}};
  struct fxt_rec_stats st;
  struct fxt_sdir_why sy = {why, why_size};
  struct rec_model m;
  memset(&m, 0, sizeof(m));
  memset(&st, 0, sizeof(st));
  m.in = &in;
  m.stats = &st;
  m.report = fxt_sdir_first_damage;
  m.report_ctx = &sy;
  int rc = rec_read_header(&m);
  if (rc == 0) {
    info->pid = m.h.pid;
    info->proc_start = m.h.proc_start;
    info->state = m.h.state;
    memcpy(info->output, m.h.output, sizeof(info->output));
    info->out_dev = m.h.out_dev;
    info->out_ino = m.h.out_ino;
  }
  fxt_sdir_unmap(data, size);
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

bool fxt_outfile_is_dat(const char *path)
{
  size_t n = strlen(path);
  return n > 4 && strcmp(path + n - 4, ".dat") == 0;
}

int fxt_outfile_fd(const char *output)
{
  if (strcmp(output, "-") == 0)
    return 1;
  if (strncmp(output, "fd:", 3) != 0 || output[3] == '\0')
    return -1;
  long fd = 0;
  for (const char *p = output + 3; *p; p++)
    if (*p < '0' || *p > '9' || (fd = fd * 10 + (*p - '0')) > INT_MAX)
      return -1;
  return (int)fd;
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

/* "<digits>.<digits>": the name of a session directory in a buffers directory. */
static bool is_session_name(const char *name)
{
  const char *p = name;
  if (*p < '0' || *p > '9')
    return false;
  while (*p >= '0' && *p <= '9')
    p++;
  if (*p++ != '.' || *p < '0' || *p > '9')
    return false;
  while (*p >= '0' && *p <= '9')
    p++;
  return *p == 0;
}

struct names {
  char (*v)[256];
  size_t n, cap;
};

static void names_add(struct names *ns, const char *name)
{
  if (strlen(name) >= 256)
    return;
  if (!fxt_grow((void **)&ns->v, &ns->cap, ns->n + 1, sizeof(*ns->v), 16))
    return;
  strcpy(ns->v[ns->n++], name);
}

static bool names_has(const struct names *ns, const char *name)
{
  for (size_t i = 0; i < ns->n; i++)
    if (strcmp(ns->v[i], name) == 0)
      return true;
  return false;
}

/* A session directory with no session file that holds only children's markers, of a pid
 * that is not running: what is left when a child of fork left its marker while its parent's
 * session went (seen: /dev/shm/fxtrace-0/19081.1 holding only child.19162.1, for hours). The
 * markers only matter while the parent runs (fxt_sdir_harvest_dead): removed with the
 * directory. A directory being set up has its process running; anything else in it is left
 * alone. */
static void remove_orphan(const char *dir, const char *name)
{
  long pid = strtol(name, NULL, 10);
  struct stat st;
  if (pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH || lstat(dir, &st) != 0 ||
      !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
    return;
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct names marks = {0};
  bool only_marks = true;
  struct dirent *e;
  while (only_marks && (e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    only_marks = is_child_mark(e->d_name);
    names_add(&marks, e->d_name);
  }
  closedir(d);
  char path[4700];
  for (size_t i = 0; only_marks && i < marks.n; i++)
    if (snprintf(path, sizeof(path), "%s/%s", dir, marks.v[i]) < (int)sizeof(path))
      unlink(path);
  if (only_marks)
    rmdir(dir);
  free(marks.v);
}

/* Whether the directory of output holds an FXT_HARVESTER_FILE that its process keeps locked. */
static bool harvester_lives(const char *output)
{
  const char *slash = strrchr(output, '/');
  char path[4400];
  if (output[0] != '/' || !slash ||
      snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - output), output,
               FXT_HARVESTER_FILE) >= (int)sizeof(path))
    return false;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return false;
  bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd);
  return held;
}

int fxt_sdir_harvest_dead(const char *base, const char *who, const struct fxt_sdir_recovery *rec)
{
  DIR *d = opendir(base);
  if (!d)
    return 0;
  /* First every session's state: the dead ones are candidates, the running ones' children's
   * markers name those their parent will harvest. */
  struct names dead = {0}, marked = {0};
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!is_session_name(e->d_name) || strtol(e->d_name, NULL, 10) == (long)getpid())
      continue;
    char dir[4400], why[256];
    struct fxt_sdir_info info;
    if (snprintf(dir, sizeof(dir), "%s/%s", base, e->d_name) >= (int)sizeof(dir))
      continue;
    int rc = fxt_sdir_read(dir, &info, why, sizeof(why));
    if (rc == FXT_ENOENT)
      remove_orphan(dir, e->d_name);
    if (rc != 0)
      continue;
    if (!fxt_proc_running(info.pid, info.proc_start)) {
      if (!harvester_lives(info.output))
        names_add(&dead, e->d_name);
      continue;
    }
    DIR *sd = opendir(dir);
    struct dirent *m;
    while (sd && (m = readdir(sd)) != NULL)
      if (is_child_mark(m->d_name))
        names_add(&marked, m->d_name + strlen(FXT_CHILD_MARK));
    if (sd)
      closedir(sd);
  }
  closedir(d);
  int harvested = 0;
  for (size_t i = 0; i < dead.n; i++) {
    if (names_has(&marked, dead.v[i]))
      continue;
    char dir[4400], msg[2048];
    snprintf(dir, sizeof(dir), "%s/%s", base, dead.v[i]);
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
      continue;
    int lock = fxt_sdir_lock(dir, 0);
    if (lock < 0)
      continue; /* live (another pid namespace), or another harvester has it */
    const struct fxt_recover_ops *ops = rec->recovery(dir);
    enum fxt_rec_dead state = ops ? ops->dead_state(dir) : FXT_REC_KEEP;
    if (state == FXT_REC_STALE) {
      fxt_sdir_remove(dir, false);
    } else if (state == FXT_REC_CRASHED) {
      int rc = ops->harvest(dir, false, false, NULL, NULL, msg, sizeof(msg), rec->to_dat);
      if (rc != FXT_ENOENT)
        fprintf(stderr, "%s: %s\n", who, msg);
      harvested += rc >= 0;
    }
    close(lock);
  }
  free(dead.v);
  free(marked.v);
  return harvested;
}
