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
 * the unlinked files until they are replaced); after a crash they stay for recovery. This file
 * maps them, fills the header, and gives a child of fork files of its own; the directories are
 * buffers_dir.c's, the markers of children buffers_children.c's, the growing tables
 * buffers_tables.c's (buffers_int.h).
 *
 * Page allocation. A MAP_SHARED page of a tmpfs file that cannot be allocated (the file system
 * is full) is a SIGBUS on first touch, so nothing is touched before it is allocated with
 * fallocate(): the fixed regions at creation, a slot when a thread takes it (slots_attach.c), the
 * growing tables by the consumer ahead of their writers (fxt_buffers_maintain).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fxtrace/detail/emit.h>
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

#include "buffers_int.h"
#include "harvest.h"
#include "intern.h"
#include "registry.h"
#include "../base/namefix.h"
#include "../base/shfile.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#define FXT_BUFFERS_UNSUPPORTED 1 /* shfile.h is little-endian: anonymous memory only */
#endif

#define PAGE 4096u
#define HELD_HALF_BYTES (640u << 10) /* more than the ingress ring's payload (540 KiB) */
#define STRINGS_TEXT_BYTES ((8u << 20) + (64u << 10)) /* intern.c's arena, and some */
#define TPS_BYTES (4u << 20)

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
 * text of the string table and the tracepoint log, which get FXT_BUF_GROW_STEP to begin with). */
static size_t meta_eager_bytes(const struct fxt_sh *h)
{
  return h->strings_off + (size_t)FXT_SH_STR_ENTRIES * 8 + FXT_BUF_GROW_STEP;
}

uint64_t fxt_buf_proc_start(pid_t pid)
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

void fxt_buf_absolute_output(const struct session *s, char *out, size_t size)
{
  size_t olen = strlen(s->output);
  out[0] = 0;
  if (fxt_outfile_fd(s->output) >= 0) { /* a stream: "-" for a harvest (sdir.h) */
    snprintf(out, size, "-");
    return;
  }
  if (s->output[0] == '/' || olen == 0) {
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
  h->proc_start = fxt_buf_proc_start(s->pid);
  h->ticks_per_second = s->ticks_per_second;
  h->clock_tsc = fxt_clock_is_tsc;
  h->session_gen = s->gen;
  fxt_clock_sync(&h->sync_ticks, &h->sync_mono_ns, &h->sync_real_ns);
  fxt_read_comm(0, h->process_name, sizeof(h->process_name));
  memset(h->output, 0, sizeof(h->output));
  fxt_buf_absolute_output(s, h->output, sizeof(h->output));
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

int fxt_buffers_fallocate(struct session *s, bool pool, uint64_t off, uint64_t len)
{
  /* (The paths were made at the setup: a thread's attach may run in a signal handler, on a
   * small stack.) */
  int fd = open(pool ? s->pool_path : s->meta_path, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return EBADF;
  int rc = posix_fallocate(fd, (off_t)off, (off_t)len);
  close(fd);
  return rc;
}

/* The session's directory goes (a setup that failed), and its lock with it. */
static void drop_dir(struct session *s)
{
  fxt_buf_remove_dir(s->buffers_dir);
  fxt_fd_close(&s->lock_fd, s->lock_id);
  s->buffers_dir[0] = 0;
}

/* Creates the session's files (when file-backed) and maps pool and session file. */
static int map_all(struct session *s, uint32_t nslots, bool file_backed)
{
  struct fxt_sh layout;
  memset(&layout, 0, sizeof(layout));
  size_t meta_bytes = meta_layout(nslots, &layout);
  size_t pool_bytes = s->stride * nslots;
  int meta_fd = -1, pool_fd = -1;
  s->file_backed = false;
  if (file_backed) {
    meta_fd = create_file(s->buffers_dir, FXT_SH_FILE, meta_bytes, meta_eager_bytes(&layout));
    pool_fd = meta_fd < 0 ? meta_fd : create_file(s->buffers_dir, FXT_SH_POOL_FILE, pool_bytes, 0);
    if (meta_fd < 0 || pool_fd < 0) {
      int err = meta_fd < 0 ? -meta_fd : -pool_fd;
      fprintf(stderr, "fxtrace: buffers in %s: %s\n", s->buffers_dir, strerror(err));
      if (meta_fd >= 0)
        close(meta_fd);
      drop_dir(s);
      return -err; /* ENOSPC of a full tmpfs, EMFILE, ...: what the system said */
    }
  }
  void *pool = s->pool, *meta = s->meta;
  int rc = map_region(&pool, &s->pool_map_bytes, pool_bytes, pool_fd, true);
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
    rc = map_region(&meta, &s->meta_map_bytes, meta_bytes, meta_fd, false);
  if (file_backed) { /* the mappings hold the files */
    close(meta_fd);
    close(pool_fd);
  }
  if (rc != 0) {
    if (file_backed)
      drop_dir(s);
    return rc;
  }
  s->file_backed = file_backed;
  snprintf(s->pool_path, sizeof(s->pool_path), "%s/%s", s->buffers_dir, FXT_SH_POOL_FILE);
  snprintf(s->meta_path, sizeof(s->meta_path), "%s/%s", s->buffers_dir, FXT_SH_FILE);
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
    int rc = fxt_buf_make_dir(s, s->buffers_base, s->pid);
    if (rc != 0 && s->buffers_explicit)
      return rc;
    if (rc != 0) {
      fprintf(stderr, "fxtrace: buffers in anonymous memory: a crash will lose them\n");
      file_backed = false;
      s->buffers_dir[0] = 0;
    } else {
      fxt_buf_mark_in_parent(s);
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

void fxt_buffers_stop(struct session *s, bool clean)
{
  if (!s->file_backed)
    return;
  fxt_registry_set_mirror(NULL);
  fxt_intern_set_mirror(NULL);
  if (clean)
    atomic_store_explicit(&s->sh->state, FXT_SH_STOPPED, memory_order_relaxed);
  s->file_backed = false;
  if (clean) {
    fxt_buffers_harvest_children(s, true);
    fxt_buf_remove_dir(s->buffers_dir);
    /* The default directory goes too once nothing is left in it (rmdir fails on one that is
     * not empty): a clean run leaves nothing behind in /dev/shm but the clock's verdict for
     * the boot (.clock-verdict, clock_verdict.c), once the TSC was found fit. */
    if (!s->buffers_explicit)
      rmdir(s->buffers_base);
  }
  /* Released after the removal: whoever takes the lock next finds the directory gone. */
  fxt_fd_close(&s->lock_fd, s->lock_id);
  s->buffers_dir[0] = 0;
}

int fxt_buffers_reserve_slot(struct session *s, uint32_t i)
{
  if (!s->file_backed)
    return 0;
  return fxt_buffers_fallocate(s, true, (uint64_t)i * s->stride, s->stride) == 0
             ? 0
             : FXT_ENOSPC;
}

int fxt_buffers_after_fork(struct session *s, uint32_t keep, bool have_keep)
{
  if (!s->file_backed)
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
  /* The parent's lock stays the parent's (closing this copy leaves it held: flock locks
   * belong to the open file description, which the parent still has). */
  fxt_fd_close(&s->lock_fd, s->lock_id);
  snprintf(s->parent_dir, sizeof(s->parent_dir), "%s", s->buffers_dir);
  s->output_append = false;
  uint32_t nslots = s->nslots;
  int rc = fxt_buf_make_dir(s, s->buffers_base, s->pid);
  if (rc == 0)
    rc = map_all(s, nslots, true);
  /* The parent's session harvests this one if it ends without stopping (harvest.h). */
  if (rc == 0 && s->parent_dir[0] && !fxt_buf_mark_child(s->parent_dir, s->buffers_dir))
    s->parent_dir[0] = 0; /* the parent's session is gone */
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
