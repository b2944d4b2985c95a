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
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "outfile.h"
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
    info->out_dev = m.h.out_dev;
    info->out_ino = m.h.out_ino;
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

/* Whether path still names the file a session wrote (its identity in the header), or names
 * nothing while the session opened none (a death before its consumer's open: nothing of it
 * can be there). */
static bool output_is_ours(const char *path, const struct fxt_sdir_info *info)
{
  struct stat st;
  if (stat(path, &st) != 0)
    return errno == ENOENT && info->out_dev == 0 && info->out_ino == 0;
  return S_ISREG(st.st_mode) && info->out_ino != 0 && (uint64_t)st.st_dev == info->out_dev &&
         (uint64_t)st.st_ino == info->out_ino;
}

/* Publishes tmp as a file of its own: the first of "<stem>.fxt", "<stem>-2.fxt", ... that
 * does not exist (link, never over another file). 0 with the name in out, or -errno. */
static int publish_new(const char *tmp, const char *stem, char *out, size_t size)
{
  for (int k = 1; k < 100; k++) {
    int n = k == 1 ? snprintf(out, size, "%s.fxt", stem)
                   : snprintf(out, size, "%s-%d.fxt", stem, k);
    if (n < 0 || (size_t)n >= size)
      return -ENAMETOOLONG;
    if (link(tmp, out) == 0) {
      unlink(tmp);
      return 0;
    }
    if (errno != EEXIST)
      return -errno;
  }
  return -EEXIST;
}

/* Runs the recovery of in into a new file tmp (0644). 0 or 1 (fxt_recover_run), or -errno of
 * the file; tmp is gone unless it returned >= 0. */
static int recover_into(const char *tmp, const struct fxt_rec_input *in, struct fxt_rec_stats *st,
                        char *why, size_t why_size)
{
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    int rc = -errno;
    snprintf(why, why_size, "%s: %s", tmp, strerror(errno));
    return rc;
  }
  struct say sy = {why, why_size};
  why[0] = 0;
  int rc = fxt_recover_run(in, write_fd, &fd, keep_first_damage, &sy, st);
  if (close(fd) != 0 && rc >= 0)
    rc = -errno;
  if (rc < 0) {
    unlink(tmp);
    if (!why[0])
      snprintf(why, why_size, "%s", fxt_strerror(rc));
  }
  return rc;
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
  /* The file the consumer wrote: the output itself, or "X.dat.fxt" for a trace.dat. */
  char part[4200] = "";
  bool to_file = info.output[0] == '/';
  bool dat = to_file && ends_with(info.output, ".dat");
  if (to_file)
    snprintf(part, sizeof(part), dat ? "%s.fxt" : "%s", info.output);
  bool in_place = to_file && output_is_ours(part, &info);
  char spath[4400], ppath[4400], tmp[4400];
  snprintf(spath, sizeof(spath), "%s/%s", dir, FXT_SH_FILE);
  snprintf(ppath, sizeof(ppath), "%s/%s", dir, FXT_SH_POOL_FILE);
  uint64_t ssize, psize, osize = 0;
  int serr, perr, oerr = 0;
  const unsigned char *sdata = map_ro(spath, &ssize, &serr);
  const unsigned char *pdata = map_ro(ppath, &psize, &perr);
  /* The committed part of the output is read only from the session's own file: whatever
   * else its path names now is someone else's. */
  const unsigned char *odata = in_place ? map_ro(part, &osize, &oerr) : NULL;
  struct fxt_rec_input in = {
      .session = {spath, sdata, ssize},
      .pool = {ppath, pdata, psize},
      .output = {part, odata, osize},
      .output_errno = oerr,
      .output_gone = to_file && !in_place,
  };
  /* stdout: whether the consumer's last write is in it, when ours is the same file. */
  if (strcmp(info.output, "-") == 0)
    fxt_recover_check_stdout(&in, 1);
  /* Where the trace goes: into the output, renamed over it; else a new file beside the
   * output ("<output>.<pid>.recovered.fxt": the path names a file that is not the session's,
   * or none), or in the session directory's place ("<dir>.fxt": stdout, no output file, or
   * beside it cannot be written). Each is written whole under a temporary name first. */
  char where[4400] = "";
  rc = -ENOENT;
  if (in_place) {
    snprintf(tmp, sizeof(tmp), "%s.harvest-%d", part, (int)getpid());
    rc = recover_into(tmp, &in, st, why, sizeof(why));
    if (rc >= 0 && rename(tmp, part) != 0) {
      rc = -errno;
      snprintf(why, sizeof(why), "%.900s: %s", part, strerror(errno));
      unlink(tmp);
    }
    if (rc >= 0)
      snprintf(where, sizeof(where), "%s", dat && !keep_fxt ? info.output : part);
  } else {
    char stem[4250];
    for (int pass = to_file ? 0 : 1; pass < 2 && rc < 0; pass++) {
      if (pass == 0)
        snprintf(stem, sizeof(stem), "%s.%u.recovered", part, info.pid);
      else
        snprintf(stem, sizeof(stem), "%s", dir);
      snprintf(tmp, sizeof(tmp), "%s.harvest-%d", stem, (int)getpid());
      memset(st, 0, sizeof(*st));
      rc = recover_into(tmp, &in, st, why, sizeof(why));
      if (rc >= 0) {
        int prc = publish_new(tmp, stem, where, sizeof(where));
        if (prc < 0) {
          snprintf(why, sizeof(why), "%.900s: %s", stem, strerror(-prc));
          unlink(tmp);
          rc = prc;
        }
      }
    }
  }
  unmap_ro(sdata, ssize);
  unmap_ro(pdata, psize);
  unmap_ro(odata, osize);
  fxt_recover_stdout_free(&in);
  if (rc < 0) {
    say(msg, msg_size, "%s: the trace of pid %u was not written: %s (left in place)", dir,
        info.pid, why);
    return rc;
  }
  bool damaged = rc == 1;
  if (in_place && dat && !keep_fxt) {
    char err[512] = "";
    int crc = fxt_outfile_to_dat(part, info.output, err, sizeof(err));
    if (crc == 0) {
      unlink(part);
    } else {
      say(msg, msg_size, "%s: not written (%s: %s); the trace is in %s", info.output,
          fxt_strerror(crc), err, part);
      snprintf(where, sizeof(where), "%s", part);
    }
  }
  fxt_sdir_adopt_children(dir, adopt_dir);
  fxt_sdir_remove(dir, keep_dir);
  const char *whose = !to_file                ? info.output[0] ? " (its output was stdout)"
                                                               : " (it had no output file)"
                      : !in_place             ? " (its output file was removed or replaced)"
                                              : "";
  /* A write to stdout that may be there and was recovered all the same (recover.h). */
  char twice[256] = "";
  if (st->maybe_twice)
    snprintf(twice, sizeof(twice),
             "; pid %u died inside a write of %llu bytes to stdout, %s: what of it is in stdout "
             "may be counted twice",
             info.pid, (unsigned long long)st->maybe_twice,
             in.stdout_write == FXT_REC_LANDED_TORN ? "found cut short there"
                                                    : "which this process could not look for");
  if (msg_size && !msg[0])
    say(msg, msg_size,
        "%s: pid %u ended without stopping its session: its trace is in %s%s (%llu records, "
        "%llu events, recovered from its buffers; dropped %llu, overrun %llu, lost %llu)%s%s%s",
        dir, info.pid, where, whose, (unsigned long long)st->records,
        (unsigned long long)st->events, (unsigned long long)st->dropped,
        (unsigned long long)st->overrun, (unsigned long long)st->lost, twice,
        damaged ? "; damage: " : "", damaged ? why : "");
  return in_place ? 0 : 1;
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
  if (ns->n == ns->cap) {
    size_t cap = ns->cap ? ns->cap * 2 : 16;
    void *grown = realloc(ns->v, cap * sizeof(*ns->v));
    if (!grown)
      return;
    ns->v = grown;
    ns->cap = cap;
  }
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
 * markers only matter while the parent runs (fxt_harvest_dead): removed with the directory.
 * A directory being set up has its process running; anything else in it is left alone. */
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

int fxt_harvest_dead(const char *base, const char *who)
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
    enum fxt_rec_dead state = fxt_recover_dead_state(dir);
    if (state == FXT_REC_STALE) {
      fxt_sdir_remove(dir, false);
    } else if (state == FXT_REC_CRASHED) {
      int rc = fxt_harvest(dir, false, false, NULL, NULL, msg, sizeof(msg));
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
