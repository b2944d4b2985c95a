/* buffers.c - where a session's memory lives: the slot pool (every thread's buffer) and the
 * session file (header, slot table, ingress ring, held records, string and tracepoint tables:
 * shfile.h). With a buffers directory (the default) both are MAP_SHARED files under
 * DIR/<pid>.<n>/, so the kernel keeps their contents when the process dies by any signal and
 * `fxtrace recover` can finish the trace; without one (buffers=""), anonymous memory.
 *
 * Mappings are never unmapped (threads keep TLS pointers into the pool, an interning thread
 * may hold the string table's address): a later session maps its own files over the same
 * addresses (MAP_FIXED) when they fit, else maps new ones and leaves the old in place, as the
 * pool always did. After a normal stop the files are removed (the mappings keep the pages of
 * the unlinked files until they are replaced); after a crash they stay for recovery.
 *
 * Page allocation. A MAP_SHARED page of a tmpfs file that cannot be allocated (the file system
 * is full) is a SIGBUS on first touch, so nothing is touched before it is allocated with
 * fallocate(): the fixed regions at creation, a slot when a thread takes it (slots.c), the
 * growing tables by the consumer ahead of their writers (buffers_maintain).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fxtrace/emit.h>
#include <fxtrace/session.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "harvest.h"
#include "intern.h"
#include "recover.h"
#include "registry.h"
#include "server.h"
#include "session_int.h"
#include "shfile.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#define FXT_BUFFERS_UNSUPPORTED 1 /* shfile.h is little-endian: anonymous memory only */
#endif

#define PAGE 4096u
#define HELD_HALF_BYTES (640u << 10) /* more than the ingress ring's payload (540 KiB) */
#define STRINGS_TEXT_BYTES ((8u << 20) + (64u << 10)) /* intern.c's arena, and some */
#define TPS_BYTES (4u << 20)
#define GROW_STEP (64u << 10) /* growing tables are allocated this much ahead */

static size_t round_page(size_t n)
{
  return (n + PAGE - 1) & ~(size_t)(PAGE - 1);
}

/* The layout of the session file for nslots slots (offsets in *h; returns its size). */
static size_t meta_layout(uint32_t nslots, struct fxt_sh *h)
{
  size_t off = round_page(sizeof(struct fxt_sh));
  h->slots_off = off;
  off += round_page((size_t)nslots * FXT_SH_SLOT_BYTES);
  h->ingress_off = off;
  h->ingress_ctl_bytes = (uint32_t)((sizeof(struct fxt_ingress) + 63) & ~(size_t)63);
  h->ingress_bytes = h->ingress_ctl_bytes + FXT_INGRESS_STORAGE_SIZE(INGRESS_SLOTS, INGRESS_PAYLOAD);
  off += round_page(h->ingress_bytes);
  h->held_off = off;
  h->held_half_bytes = HELD_HALF_BYTES;
  off += 2 * (size_t)HELD_HALF_BYTES;
  h->strings_off = off;
  h->strings_bytes = (uint64_t)FXT_SH_STR_ENTRIES * 8 + STRINGS_TEXT_BYTES;
  off += round_page(h->strings_bytes);
  h->tps_off = off;
  h->tps_bytes = TPS_BYTES;
  off += TPS_BYTES;
  return off;
}

/* Bytes of the session file that are allocated at creation (everything but the growing
 * text of the string table and the tracepoint log, which get GROW_STEP to begin with). */
static size_t meta_eager_bytes(const struct fxt_sh *h)
{
  return h->strings_off + (size_t)FXT_SH_STR_ENTRIES * 8 + GROW_STEP;
}

static uint64_t proc_start_time(pid_t pid)
{
  char path[64], buf[1024];
  snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0)
    return 0;
  buf[n] = 0;
  /* Field 2 is "(comm)" and may hold anything: count fields after its last ')'. */
  char *p = strrchr(buf, ')');
  if (!p)
    return 0;
  int field = 2;
  for (; *p && field < 22; p++)
    if (*p == ' ')
      field++;
  return strtoull(p, NULL, 10);
}

/* ---- the base directory and the session's own ---------------------------------------- */

int fxt_buffers_default_dir(char *out, size_t size)
{
  int n = snprintf(out, size, "/dev/shm/fxtrace-%u", (unsigned)geteuid());
  return n < 0 || (size_t)n >= size ? FXT_E2BIG : 0;
}

static void remove_session_dir(const char *dir)
{
  fxt_sdir_remove(dir, false);
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
  if (*n == *cap) {
    size_t ncap = *cap ? *cap * 2 : 16;
    struct crashed *grown = realloc(*v, ncap * sizeof(**v));
    if (!grown)
      return false;
    *v = grown;
    *cap = ncap;
  }
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
      remove_session_dir(dir);
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
      remove_session_dir(dir);
      close(lock);
      fprintf(stderr,
              "fxtrace: removed %s, the unrecovered buffers of a process that died: a buffers "
              "directory keeps the %d newest (`fxtrace recover %s` lists them)\n",
              dir, KEEP_CRASHED, base);
    }
  }
  free(crashed);
}

/* The output's absolute path as the header keeps it ("" when it does not fit). */
static void absolute_output(const struct session *s, char *out, size_t size)
{
  size_t olen = strlen(s->output);
  out[0] = 0;
  if (s->output[0] == '/' || olen == 0 || strcmp(s->output, "-") == 0) {
    if (olen < size)
      memcpy(out, s->output, olen + 1);
    return;
  }
  char cwd[4096];
  if (getcwd(cwd, sizeof(cwd))) {
    size_t clen = strlen(cwd);
    if (clen + 1 + olen < size) {
      memcpy(out, cwd, clen);
      out[clen] = '/';
      memcpy(out + clen + 1, s->output, olen + 1);
    }
  }
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
  uint64_t start = proc_start_time(pid);
  char mine[4096];
  absolute_output(s, mine, sizeof(mine));
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
 * previous image left, and takes its lock. 0, or a negative errno value (FXT_EPERM: a
 * directory refused), said on stderr. */
static int make_session_dir(struct session *s, const char *base, pid_t pid)
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

static int create_file(const char *dir, const char *name, size_t bytes, size_t eager)
{
  char path[4200];
  int k = snprintf(path, sizeof(path), "%s/%s", dir, name);
  if (k < 0 || (size_t)k >= sizeof(path))
    return -ENAMETOOLONG;
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return -errno;
  int err = 0;
  if (ftruncate(fd, (off_t)bytes) != 0)
    err = errno;
  else if (eager) {
    err = posix_fallocate(fd, 0, (off_t)eager); /* returns the error number */
  }
  if (err) {
    close(fd);
    unlink(path);
    return -err;
  }
  return fd;
}

/* Maps fd (or anonymous memory when fd < 0) at *addr when it is set and the old mapping there
 * is at least `bytes` long, else somewhere new (the old stays mapped). */
static int map_region(void **addr, size_t *mapped, size_t bytes, int fd, bool noreserve)
{
  int flags = fd >= 0 ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS;
  if (noreserve)
    flags |= MAP_NORESERVE;
  void *at = NULL;
  if (*addr && *mapped >= bytes) {
    at = *addr;
    flags |= MAP_FIXED;
  }
  void *p = mmap(at, bytes, PROT_READ | PROT_WRITE, flags, fd, 0);
  if (p == MAP_FAILED)
    return FXT_ENOMEM;
  if (!at)
    *mapped = bytes;
  *addr = p;
  return 0;
}

/* ---- the header --------------------------------------------------------------------------- */

static void fill_header(struct session *s, uint32_t nslots)
{
  struct fxt_sh *h = s->sh;
  struct fxt_tslot probe; /* offsets only */
  unsigned char *base = (unsigned char *)&probe;
  h->magic = FXT_SH_MAGIC;
  h->version = FXT_SH_VERSION;
  h->header_bytes = sizeof(struct fxt_sh);
  h->pid = (uint32_t)s->pid;
  h->mode = s->cfg.mode;
  h->proc_start = proc_start_time(s->pid);
  h->ticks_per_second = s->ticks_per_second;
  h->clock_tsc = fxt_clock_is_tsc;
  h->session_gen = s->gen;
  fxt_clock_sync(&h->sync_ticks, &h->sync_mono_ns, &h->sync_real_ns);
  memset(h->process_name, 0, sizeof(h->process_name));
  int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t n = read(fd, h->process_name, sizeof(h->process_name) - 1);
    close(fd);
    if (n > 0 && h->process_name[n - 1] == '\n')
      h->process_name[n - 1] = 0;
    fxt_name_fix(h->process_name, sizeof(h->process_name));
  }
  memset(h->output, 0, sizeof(h->output));
  absolute_output(s, h->output, sizeof(h->output));
  h->pool_bytes = (uint64_t)s->stride * nslots;
  h->nslots = nslots;
  h->stride = (uint32_t)s->stride;
  h->ring_bytes = s->buffer_bytes;
  h->ring_storage_off = (uint32_t)(s->stride - s->buffer_bytes);
#define OFF(field) ((uint32_t)((unsigned char *)&probe.field - base))
  h->off_ring_size = OFF(w.ring.size);
  h->off_ring_flags = OFF(w.ring.flags);
  h->off_head = OFF(w.ring.head);
  h->off_tail = OFF(w.ring.tail);
  h->off_overrun_records = OFF(w.ring.overrun_records);
  h->off_overrun_bytes = OFF(w.ring.overrun_bytes);
  h->off_drop_first = OFF(w.drop_first);
  h->off_drop_last = OFF(w.drop_last);
  h->off_drop_records = OFF(w.drop_records);
  h->off_drop_bytes = OFF(w.drop_bytes);
  h->off_process_koid = OFF(w.process_koid);
  h->off_thread_koid = OFF(w.thread_koid);
  h->off_depth = OFF(depth);
  h->off_thread_bits = OFF(thread_bits);
  h->off_lost = OFF(lost);
#undef OFF
  h->companion_off = (uint32_t)sizeof(struct fxt_tslot);
  h->companion_storage_off = (uint32_t)fxt_companion_storage_off();
  h->companion_bytes = NESTED_BYTES;
  h->off_ingress_slots = (uint32_t)offsetof(struct fxt_ingress, slots);
  h->off_ingress_payload = (uint32_t)offsetof(struct fxt_ingress, payload);
  h->off_ingress_stride = (uint32_t)offsetof(struct fxt_ingress, stride);
  h->off_ingress_ready_head = (uint32_t)offsetof(struct fxt_ingress, ready_head);
  h->checksum = fxt_sh_fnv(h, FXT_SH_OFF_CHECKSUM);
}

/* ---- setup ------------------------------------------------------------------------------- */

static void close_files(struct session *s)
{
  if (s->pool_fd >= 0)
    close(s->pool_fd);
  if (s->meta_fd >= 0)
    close(s->meta_fd);
  s->pool_fd = s->meta_fd = -1;
}

/* The session's directory goes (a setup that failed), and its lock with it. */
static void drop_dir(struct session *s)
{
  remove_session_dir(s->buffers_dir);
  if (s->lock_fd >= 0)
    close(s->lock_fd);
  s->lock_fd = -1;
  s->buffers_dir[0] = 0;
}

/* Creates the session's files (when file-backed) and maps pool and session file. */
static int map_all(struct session *s, uint32_t nslots, bool file_backed)
{
  struct fxt_sh layout;
  memset(&layout, 0, sizeof(layout));
  size_t meta_bytes = meta_layout(nslots, &layout);
  size_t pool_bytes = s->stride * nslots;
  s->pool_fd = s->meta_fd = -1;
  if (file_backed) {
    s->meta_fd = create_file(s->buffers_dir, FXT_SH_FILE, meta_bytes, meta_eager_bytes(&layout));
    s->pool_fd = s->meta_fd < 0 ? s->meta_fd : create_file(s->buffers_dir, FXT_SH_POOL_FILE, pool_bytes, 0);
    if (s->meta_fd < 0 || s->pool_fd < 0) {
      int err = s->meta_fd < 0 ? -s->meta_fd : -s->pool_fd;
      fprintf(stderr, "fxtrace: buffers in %s: %s\n", s->buffers_dir, strerror(err));
      close_files(s);
      drop_dir(s);
      return -err; /* ENOSPC of a full tmpfs, EMFILE, ...: what the system said */
    }
  }
  void *pool = s->pool, *meta = s->meta;
  int rc = map_region(&pool, &s->pool_map_bytes, pool_bytes, s->pool_fd, true);
#ifdef MADV_HUGEPAGE
  /* Buffers of whole huge pages: transparent huge pages where the system gives them on
   * request (anonymous memory: transparent_hugepage/enabled `madvise` or `always`; tmpfs files:
   * shmem_enabled `advise`; refused quietly elsewhere). Fewer TLB misses over a 4 MiB ring, and
   * on a VM with shadow paging a new thread's buffer is written in ~3 ms rather than ~20
   * (anonymous buffers, docs/performance.md). */
  if (rc == 0 && s->buffer_bytes >= (2u << 20))
    (void)madvise(pool, pool_bytes, MADV_HUGEPAGE);
#endif
  if (rc == 0)
    rc = map_region(&meta, &s->meta_map_bytes, meta_bytes, s->meta_fd, false);
  if (rc != 0) {
    close_files(s);
    if (file_backed)
      drop_dir(s);
    return rc;
  }
  s->pool = pool;
  s->meta = meta;
  s->meta_bytes = meta_bytes;
  s->sh = (struct fxt_sh *)meta;
  /* Either mapping is fresh (a new file, or new anonymous pages even where MAP_FIXED reused
   * the addresses): every byte is zero. */
  /* The layout's regions (fill_header sets the rest of the immutable part). */
  s->sh->slots_off = layout.slots_off;
  s->sh->ingress_off = layout.ingress_off;
  s->sh->ingress_bytes = layout.ingress_bytes;
  s->sh->ingress_ctl_bytes = layout.ingress_ctl_bytes;
  s->sh->held_off = layout.held_off;
  s->sh->held_half_bytes = layout.held_half_bytes;
  s->sh->strings_off = layout.strings_off;
  s->sh->strings_bytes = layout.strings_bytes;
  s->sh->tps_off = layout.tps_off;
  s->sh->tps_bytes = layout.tps_bytes;
  s->ingress = (struct fxt_ingress *)(void *)(s->meta + layout.ingress_off);
  s->held = s->meta + layout.held_off;
  s->strings_alloc = file_backed ? meta_eager_bytes(&layout) : meta_bytes;
  s->tps_alloc = file_backed ? layout.tps_off : meta_bytes;
  return 0;
}

/* ---- the string and tracepoint tables -------------------------------------------------- */

static struct fxt_intern_mirror strings_mirror;

/* Appends tp's description to the tracepoint log (registry.c calls it under its lock, for
 * every tracepoint registered while the session runs, and for all of them at the start). */
static void tp_mirror_add(struct fxt_tracepoint *tp)
{
  struct session *s = &fxt_session;
  struct fxt_sh *h = s->sh;
  if (!h || s->meta_fd < 0 || tp->id == 0)
    return;
  unsigned char payload[8192];
  size_t n = fxt_tp_describe(tp, payload, sizeof(payload));
  uint64_t used = atomic_load_explicit(&h->tps_used, memory_order_relaxed);
  uint64_t need = FXT_SH_TP_HEADER + ((n + 7) & ~(size_t)7);
  if (n == 0 || used + need > h->tps_bytes)
    return;
  if (h->tps_off + used + need > s->tps_alloc) {
    uint64_t to = h->tps_off + used + need + GROW_STEP;
    if (to > h->tps_off + h->tps_bytes)
      to = h->tps_off + h->tps_bytes;
    if (posix_fallocate(s->meta_fd, (off_t)s->tps_alloc, (off_t)(to - s->tps_alloc)) != 0)
      return;
    s->tps_alloc = to;
  }
  unsigned char *e = s->meta + h->tps_off + used;
  uint32_t len = (uint32_t)n, zero = 0;
  memcpy(e, &len, 4);
  memcpy(e + 4, &zero, 4);
  memcpy(e + FXT_SH_TP_HEADER, payload, n);
  memset(e + FXT_SH_TP_HEADER + n, 0, need - FXT_SH_TP_HEADER - n);
  /* The entry is whole before the log says it is there (for a reader of a live session). */
  atomic_store_explicit(&h->tps_used, used + need, memory_order_release);
}

/* ---- lifecycle ---------------------------------------------------------------------------- */

/* A session in a process that a traced process started otherwise than by fork (an exec'd
 * image after vfork, posix_spawn, or fork and exec): a marker in the parent's session
 * directory, as a child of fork leaves one, so that the parent harvests this session if it
 * ends without stopping it. The parent's session is the directory of its pid whose lock is
 * held. */
static void mark_in_parent(struct session *s)
{
  pid_t ppid = getppid();
  DIR *d = ppid > 1 ? opendir(s->buffers_base) : NULL;
  if (!d)
    return;
  char prefix[32];
  int plen = snprintf(prefix, sizeof(prefix), "%d.", (int)ppid);
  const char *mine = strrchr(s->buffers_dir, '/') + 1;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char dir[4096], mark[4400];
    if (strncmp(e->d_name, prefix, (size_t)plen) != 0 ||
        (size_t)snprintf(dir, sizeof(dir), "%s/%s", s->buffers_base, e->d_name) >=
            sizeof(dir) - 300)
      continue;
    int lock = fxt_sdir_lock(dir, 0);
    if (lock >= 0)
      close(lock);
    if (lock != -EWOULDBLOCK)
      continue; /* no live session there */
    if ((size_t)snprintf(mark, sizeof(mark), "%s/%s%s", dir, FXT_CHILD_MARK, mine) >= sizeof(mark))
      continue;
    int fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) {
      close(fd);
      memcpy(s->parent_dir, dir, sizeof(s->parent_dir));
      break;
    }
  }
  closedir(d);
}

int fxt_buffers_setup(struct session *s, uint32_t nslots)
{
  bool file_backed = s->buffers_base[0] != 0;
#ifdef FXT_BUFFERS_UNSUPPORTED
  if (file_backed && s->buffers_explicit) {
    fprintf(stderr, "fxtrace: buffers=%s: not supported on this host (big-endian)\n",
            s->buffers_base);
    return FXT_EINVAL;
  }
  file_backed = false;
#endif
  s->buffers_dir[0] = 0;
  s->lock_fd = -1;
  s->parent_dir[0] = 0;
  s->output_append = false;
  if (file_backed) {
    int rc = make_session_dir(s, s->buffers_base, s->pid);
    if (rc != 0 && s->buffers_explicit)
      return rc;
    if (rc != 0) {
      fprintf(stderr, "fxtrace: buffers in anonymous memory: a crash will lose them\n");
      file_backed = false;
      s->buffers_dir[0] = 0;
    } else {
      mark_in_parent(s);
    }
  }
  int rc = map_all(s, nslots, file_backed);
  if (rc != 0 && file_backed && !s->buffers_explicit) {
    fprintf(stderr, "fxtrace: buffers in anonymous memory: a crash will lose them\n");
    rc = map_all(s, nslots, false);
  }
  if (rc != 0)
    return rc;
  fill_header(s, nslots);
  return 0;
}

void fxt_buffers_publish(struct session *s)
{
  if (s->meta_fd < 0)
    return;
  struct fxt_sh *h = s->sh;
  struct fxt_intern_mirror *m = &strings_mirror;
  m->entries = (_Atomic uint64_t *)(void *)(s->meta + h->strings_off);
  m->text = s->meta + h->strings_off + (size_t)FXT_SH_STR_ENTRIES * 8;
  m->text_cap = h->strings_bytes - (uint64_t)FXT_SH_STR_ENTRIES * 8;
  atomic_store_explicit(&m->text_used, 0, memory_order_relaxed);
  atomic_store_explicit(&m->text_limit, GROW_STEP, memory_order_relaxed);
  atomic_store_explicit(&m->overflow, 0, memory_order_relaxed);
  /* On first, then copy what exists: a string interned meanwhile is in it either way. */
  fxt_intern_set_mirror(m);
  fxt_intern_mirror_all(m);
  fxt_registry_set_mirror(tp_mirror_add);
  atomic_store_explicit(&h->state, FXT_SH_RUNNING, memory_order_relaxed);
}

void fxt_buffers_stop(struct session *s, bool clean)
{
  if (s->meta_fd < 0)
    return;
  fxt_registry_set_mirror(NULL);
  fxt_intern_set_mirror(NULL);
  if (clean)
    atomic_store_explicit(&s->sh->state, FXT_SH_STOPPED, memory_order_relaxed);
  close_files(s);
  if (clean) {
    fxt_buffers_harvest_children(s, true);
    remove_session_dir(s->buffers_dir);
    /* The default directory goes too once no session is left in it (rmdir fails on one that
     * is not empty), so a clean run leaves nothing behind in /dev/shm. */
    if (!s->buffers_explicit)
      rmdir(s->buffers_base);
  }
  /* Released after the removal: whoever takes the lock next finds the directory gone. */
  if (s->lock_fd >= 0)
    close(s->lock_fd);
  s->lock_fd = -1;
  s->buffers_dir[0] = 0;
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

int fxt_buffers_reserve_slot(struct session *s, uint32_t i)
{
  if (s->pool_fd < 0)
    return 0;
  return posix_fallocate(s->pool_fd, (off_t)i * (off_t)s->stride, (off_t)s->stride) == 0
             ? 0
             : FXT_ENOSPC;
}

void fxt_buffers_maintain(struct session *s)
{
  struct fxt_sh *h = s->sh;
  if (!h)
    return;
  uint64_t ticks, mono, real;
  fxt_clock_sync(&ticks, &mono, &real);
  /* A seqlock for a reader of a live session; after a death the sequence says whether the
   * three values belong together. */
  uint32_t seq = atomic_load_explicit(&h->sync_seq, memory_order_relaxed);
  atomic_store_explicit(&h->sync_seq, seq + 1, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&h->latest_ticks, ticks, memory_order_relaxed);
  atomic_store_explicit(&h->latest_mono_ns, mono, memory_order_relaxed);
  atomic_store_explicit(&h->latest_real_ns, real, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&h->sync_seq, seq + 2, memory_order_relaxed);
  if (s->meta_fd < 0)
    return;
  /* Keep the string text allocated GROW_STEP ahead of its writers (intern.c never allocates:
   * a string that finds no room sets overflow, and is copied here once there is room). */
  struct fxt_intern_mirror *m = &strings_mirror;
  uint64_t used = atomic_load_explicit(&m->text_used, memory_order_relaxed);
  uint64_t limit = atomic_load_explicit(&m->text_limit, memory_order_relaxed);
  bool overflow = atomic_load_explicit(&m->overflow, memory_order_relaxed) != 0;
  if ((used + GROW_STEP / 2 > limit || overflow) && limit < m->text_cap) {
    uint64_t to = (used > limit ? used : limit) + GROW_STEP;
    to = to > m->text_cap ? m->text_cap : to;
    uint64_t base = h->strings_off + (uint64_t)FXT_SH_STR_ENTRIES * 8;
    if (posix_fallocate(s->meta_fd, (off_t)(base + limit), (off_t)(to - limit)) == 0) {
      /* Release pairs with the writers' acquire load (intern.c): allocated before used. */
      atomic_store_explicit(&m->text_limit, to, memory_order_release);
      if (overflow) {
        atomic_store_explicit(&m->overflow, 0, memory_order_relaxed);
        fxt_intern_mirror_all(m);
      }
    }
  }
}

int fxt_buffers_after_fork(struct session *s, uint32_t keep, bool have_keep)
{
  if (s->meta_fd < 0)
    return 0; /* anonymous: the child's copy is private already */
  /* The child must never write the parent's files: give it files of its own at the same
   * addresses, with the kept slot's header (its writer, its companion) copied over. */
  size_t header = s->stride - s->buffer_bytes;
  unsigned char *saved = NULL;
  if (have_keep) {
    saved = mmap(NULL, header, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (saved == MAP_FAILED)
      saved = NULL;
    else
      memcpy(saved, session_slot(s, keep), header);
  }
  close_files(s);
  /* The parent's lock stays the parent's (closing this copy leaves it held: flock locks
   * belong to the open file description, which the parent still has). */
  if (s->lock_fd >= 0)
    close(s->lock_fd);
  s->lock_fd = -1;
  snprintf(s->parent_dir, sizeof(s->parent_dir), "%s", s->buffers_dir);
  s->output_append = false;
  uint32_t nslots = s->nslots;
  int rc = make_session_dir(s, s->buffers_base, s->pid);
  if (rc == 0)
    rc = map_all(s, nslots, true);
  if (rc == 0 && s->parent_dir[0]) {
    /* The parent's session harvests this one if it ends without stopping (harvest.h). */
    char mark[4400];
    const char *name = strrchr(s->buffers_dir, '/') + 1;
    snprintf(mark, sizeof(mark), "%s/%s%s", s->parent_dir, FXT_CHILD_MARK, name);
    int fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0)
      close(fd);
    else
      s->parent_dir[0] = 0; /* the parent's session is gone */
  }
  if (rc != 0) {
    s->buffers_dir[0] = 0;
    rc = map_all(s, nslots, false); /* anonymous, over the same addresses */
    fprintf(stderr, "fxtrace: pid %d: buffers in anonymous memory\n", (int)s->pid);
  }
  if (rc != 0) {
    if (saved)
      munmap(saved, header);
    return rc;
  }
  if (saved) {
    if (fxt_buffers_reserve_slot(s, keep) == 0)
      memcpy(session_slot(s, keep), saved, header);
    else
      have_keep = false;
    munmap(saved, header);
  }
  fill_header(s, nslots);
  return have_keep ? 0 : FXT_ENOSPC;
}
