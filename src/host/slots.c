/* slots.c - per-thread buffers: attach on a thread's first event, release at its exit, the
 * handshake that lets fxt_session_stop take over every writer, and the rare emit paths.
 * State transitions and their ordering are described in session_int.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fxtrace/emit.h>
#include <fxtrace/fxt.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "cpunote.h"
#include "intern.h"
#include "session_int.h"

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
/* Set while this thread is inside fxt_emit_enter_slow: a signal handler that fires an event
 * then must not try to attach again (it would take pool_lock twice). */
static _Thread_local uint32_t attaching __attribute__((tls_model("initial-exec")));
/* A thread that found no free slot retries only after a slot was freed. */
static _Thread_local uint32_t no_slot_seen __attribute__((tls_model("initial-exec")));
/* Events this thread lost for want of a buffer; moved into its slot's `lost` count when it
 * gets one, so they are reported in its own stream. Until then they are in the session's
 * no_slot_drops (the process-wide count for threads that never get a buffer). */
static _Thread_local uint64_t unattached_drops __attribute__((tls_model("initial-exec")));

/* Whether an exiting thread's buffer should be drained now rather than at the consumer's
 * next poll (100 ms, consumer.c): yes when that is cheap (at most 1 MiB: the slot is free
 * again at once for a new thread), when it is past its wake mark (alive, the thread would
 * have woken the consumer), or when fewer than a quarter of the slots are free; not for a
 * large backlog below the mark, whose drain would only compete for a CPU with the threads
 * still running (two threads of a burst: the one that ends first would slow the other down).
 * Asked before the slot is marked EXITED: after that the consumer may free it and another
 * thread take it. */
static bool exit_backlog_waits(struct fxt_tslot *t)
{
  uint32_t used = fxt_ring_producer_used(&t->w.ring);
  return used > (1u << 20) && used <= t->wake_mark;
}

static bool slots_scarce(struct session *s)
{
  uint32_t free_slots = 0;
  for (uint32_t i = 0; i < s->nslots; i++)
    free_slots += atomic_load_explicit(&s->info[i].state, memory_order_relaxed) == SLOT_FREE;
  return free_slots * 4 < s->nslots;
}

/* The thread's exit: its slot goes to the consumer to drain and free. */
static void on_thread_exit(void *p)
{
  struct fxt_tslot *t = p;
  struct session *s = &fxt_session;
  if (fxt_tls_slot == t)
    fxt_tls_slot = NULL;
  if ((atomic_load_explicit(&t->gen, memory_order_relaxed) & ~FXT_GEN_MUTED) != s->gen ||
      !s->pool)
    return; /* a slot of an earlier session: that session already took it over */
  uint32_t i = (uint32_t)(((unsigned char *)t - s->pool) / s->stride);
  bool waits = exit_backlog_waits(t);
  atomic_store_explicit(&sh_slot(s, i)->state, FXT_SH_SLOT_EXITED, memory_order_relaxed);
  /* Release: every commit of this thread happens before the consumer sees EXITED. */
  atomic_store_explicit(&s->info[i].state, SLOT_EXITED, memory_order_release);
  if (!waits || slots_scarce(s))
    fxt_consumer_wake(s);
}

static void make_exit_key(void)
{
  (void)pthread_key_create(&exit_key, on_thread_exit);
}

size_t fxt_companion_storage_off(void)
{
  return (2 * sizeof(struct fxt_tslot) + 7) & ~(size_t)7;
}

int fxt_slots_setup(struct session *s)
{
  pthread_once(&exit_key_once, make_exit_key);
  /* Header page(s): the thread's slot, its companion and the companion's storage. */
  size_t header = (fxt_companion_storage_off() + NESTED_BYTES + 4095) & ~(size_t)4095;
  size_t stride = header + s->buffer_bytes;
  uint64_t total = (uint64_t)s->cfg.total_kb * 1024;
  /* The buffers are reserved address space: under an RLIMIT_AS, 1 GiB of it may leave the
   * program none for its own threads and heap (it then fails, not the session). A quarter
   * of the limit at most, said on stderr. */
  struct rlimit as;
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY && total > as.rlim_cur / 4) {
    uint64_t capped = as.rlim_cur / 4 < stride ? stride : as.rlim_cur / 4;
    fprintf(stderr,
            "fxtrace: RLIMIT_AS is %llu MiB: the buffers reserve %llu MiB of it, not total_kb=%llu "
            "(%llu MiB): fewer threads get a buffer\n",
            (unsigned long long)(as.rlim_cur >> 20), (unsigned long long)(capped >> 20),
            (unsigned long long)s->cfg.total_kb, (unsigned long long)(total >> 20));
    total = capped;
  }
  uint32_t nslots = (uint32_t)(total / stride);
  if (nslots == 0)
    nslots = 1; /* one buffer even when the cap is smaller than it */
  if (s->pool && s->stride != stride) {
    /* Geometry changed: the old pool stays mapped (threads may still point into it), and
     * slots of another stride never share its addresses. */
    s->pool = NULL;
    s->pool_map_bytes = 0;
  }
  size_t info_bytes = sizeof(struct slot_info) * nslots;
  if (!s->info || s->info_bytes < info_bytes) {
    void *info = mmap(NULL, info_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    if (info == MAP_FAILED)
      return FXT_ENOMEM;
    s->info = info; /* an old one stays mapped, as the pool */
    s->info_bytes = info_bytes;
  }
  s->stride = stride;
  int rc = fxt_buffers_setup(s, nslots);
  if (rc != 0)
    return rc;
  s->nslots = nslots;
  for (uint32_t i = 0; i < nslots; i++) {
    atomic_store_explicit(&s->info[i].state, SLOT_FREE, memory_order_relaxed);
    s->info[i].announced_gen = s->info[i].owner_gen;
    s->info[i].warm_pages = 0; /* a new pool (fxt_buffers_setup): fresh pages */
    s->info[i].cons_warm = 0;
    atomic_store_explicit(&s->info[i].kern_warm, 0, memory_order_relaxed);
    s->info[i].reserved = false;
  }
  if (fxt_ingress_init(s->ingress, s->meta + s->sh->ingress_off + s->sh->ingress_ctl_bytes,
                       FXT_INGRESS_STORAGE_SIZE(INGRESS_SLOTS, INGRESS_PAYLOAD),
                       INGRESS_PAYLOAD) != 0)
    return FXT_EINVAL;
  pthread_mutex_init(&s->pool_lock, NULL);
  /* The stop handshake uses membarrier; register once (harmless if it fails: see quiesce). */
  syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
  return 0;
}

/* The companion writer of slot i (signal context): in the slot's header page, after it. */
static void setup_companion(struct session *s, struct fxt_tslot *t, uint32_t i, pid_t tid)
{
  struct fxt_tslot *n = t + 1;
  unsigned char *storage = (unsigned char *)t + fxt_companion_storage_off();
  fxt_writer_init_flags(&n->w, storage, NESTED_BYTES, FXT_RING_DISCARD, (uint64_t)s->pid,
                        (uint64_t)tid);
  atomic_store_explicit(&n->depth, 0, memory_order_relaxed);
  atomic_store_explicit(&n->gen, s->gen, memory_order_relaxed);
  atomic_store_explicit(&n->lost, 0, memory_order_relaxed);
  atomic_store_explicit(&n->wake_sent, 1, memory_order_relaxed);
  n->cpu = UINT32_MAX;
  n->cpu_fast = FXT_CPU_SLOW; /* never fast: a companion is only entered nested */
  n->fast_base = storage;
  n->fast_mask = NESTED_BYTES - 1;
  n->fast_end = 0;
  n->thread_bits = t->thread_bits;
  n->wake_mark = UINT32_MAX; /* never wakes the consumer: the flush does (ingress) */
  n->block_ms = 0;           /* never waits: this is signal context */
  n->nested = NULL;
  n->flush_on_leave = 1;
  n->slot_index = i;
  t->nested = n;
  t->flush_on_leave = 0;
  t->slot_index = i;
}

/* Slot i's entry in the session file's slot table for its new owner (the slot is FREE: the
 * consumer does not touch the entry; under pool_lock). Its consumer fields start again with
 * the owner's ring. */
static void sh_slot_own(struct session *s, uint32_t i, const struct fxt_tslot *t)
{
  struct fxt_sh_slot *e = sh_slot(s, i);
  const struct slot_info *info = &s->info[i];
  e->owner_gen = info->owner_gen;
  e->tid = (uint32_t)info->tid;
  e->thread_ref = (uint32_t)(t->thread_bits >> 24);
  memcpy(e->comm, info->comm, sizeof(e->comm));
  atomic_store_explicit(&e->delivered, 0, memory_order_relaxed);
  atomic_store_explicit(&e->consumed, 0, memory_order_relaxed);
  atomic_store_explicit(&e->credit_records, 0, memory_order_relaxed);
  atomic_store_explicit(&e->credit_bytes, 0, memory_order_relaxed);
  atomic_store_explicit(&e->rep_overrun_records, 0, memory_order_relaxed);
  atomic_store_explicit(&e->rep_overrun_bytes, 0, memory_order_relaxed);
  atomic_store_explicit(&e->rep_lost_records, 0, memory_order_relaxed);
  atomic_store_explicit(&e->rep_lost_bytes, 0, memory_order_relaxed);
  atomic_store_explicit(&e->rep_nested, 0, memory_order_relaxed);
  atomic_store_explicit(&e->pass_state, 0, memory_order_relaxed);
  /* No CPU at position 0 of the new ring (its first record names it); nobody copies this
   * ring before LIVE (the release store of info->state). */
  for (int k = 0; k < 2; k++) {
    atomic_store_explicit(&e->cpu_note[k], fxt_cpu_note(0, FXT_CPU_NOTE_NONE), memory_order_relaxed);
    atomic_store_explicit(&e->cons_cpu_note[k], fxt_cpu_note(0, FXT_CPU_NOTE_NONE),
                          memory_order_relaxed);
  }
  atomic_signal_fence(memory_order_seq_cst); /* entry complete before the state says LIVE */
  atomic_store_explicit(&e->state, FXT_SH_SLOT_LIVE, memory_order_relaxed);
}

#define PREWARM_PAGES 64u              /* pages the consumer writes or touches at a time */
#define PREWARM_MAX_BYTES (16u << 20) /* the largest buffer kept warm as a spare */

/* Makes slot i's buffer cheap to write: once per slot and session (a recycled slot keeps its
 * pages). The kernel's populate allocates the pages; then every page is also written once from
 * this address space. On a VM whose hypervisor maps a guest page for a process only at its
 * first access from it (shadow paging), a populated page still costs ~10 us at its first
 * write: a ring streamed once ran at 170-700 MB/s, rewritten at 10-28 GB/s
 * (docs/performance.md). Writing zeros is harmless: nothing reads a ring beyond what its
 * producer committed.
 * Who writes info->warm_pages: the consumer while the slot is FREE, a chunk at a time under
 * pool_lock (fxt_slots_prewarm), and when it frees the slot; the slot's owner thread once it
 * took the slot (LIVE, after take_slot read warm_pages under pool_lock). The FREE -> LIVE ->
 * EXITED -> FREE transitions hand it over (pool_lock; EXITED's release, the consumer's
 * acquire). */
static void warm_pages(struct session *s, uint32_t i, uint32_t upto)
{
  struct slot_info *info = &s->info[i];
  unsigned char *storage = (unsigned char *)session_slot(s, i) + (s->stride - s->buffer_bytes);
  uint32_t from = info->warm_pages;
  if (from >= upto)
    return;
#ifdef MADV_POPULATE_WRITE
  (void)madvise(storage + (size_t)from * 4096, (size_t)(upto - from) * 4096, MADV_POPULATE_WRITE);
#endif
  fxt_write_pages(storage + (size_t)from * 4096, (size_t)(upto - from) * 4096);
  info->warm_pages = upto;
}

/* What a new owner writes itself before its first event: the whole of a buffer up to 4 MiB (the
 * default), the first 4 MiB of a larger one (the consumer touches the rest, fxt_slots_prewarm:
 * a 64 MiB buffer written at attach held a thread's first event ~0.3 s on such a VM). */
#define SYNC_WARM_BYTES (4u << 20)
static uint32_t sync_pages(const struct session *s)
{
  return (s->buffer_bytes < SYNC_WARM_BYTES ? s->buffer_bytes : SYNC_WARM_BYTES) / 4096;
}

void fxt_slot_warm(struct session *s, uint32_t i)
{
  warm_pages(s, i, sync_pages(s));
}

/* Reads a byte of the page at p, for the hypervisor's mapping only: an asm load, so that it
 * races with nothing in the C memory model while the producer writes the page (the value is
 * dropped). Where this is not available the producer's own first lap pays. */
static bool touch_page(const unsigned char *p)
{
#if defined(__GNUC__) && defined(__x86_64__)
  __asm__ __volatile__("movb (%0), %%al" ::"r"(p) : "rax", "memory");
  return true;
#elif defined(__GNUC__) && defined(__aarch64__)
  __asm__ __volatile__("ldrb w9, [%0]" ::"r"(p) : "x9", "memory");
  return true;
#else
  (void)p;
  return false;
#endif
}

/* The consumer, for a LIVE slot's pages past sync_pages: read once from the process, a chunk at
 * a time, up to sync_pages ahead of its producer; a read maps a populated page for this address
 * space as a write would (the page's first write then costs 0.03 us, not ~10). Returns true
 * when pages are left to touch now. info->cons_warm is the consumer's while the slot is LIVE
 * or EXITED (take_slot sets it before the release store of LIVE). */
static bool touch_live(struct session *s, uint32_t i, uint32_t pages)
{
  struct slot_info *info = &s->info[i];
  if (info->cons_warm >= pages)
    return false;
  /* Only ahead of the producer by what the owner wrote at attach: pages of a large buffer
   * that is never filled are not touched. Once the ring went round, its producer wrote
   * every page. (head: the producer's; relaxed, a position only.) */
  uint32_t head = atomic_load_explicit(&session_slot(s, i)->w.ring.head, memory_order_relaxed);
  if (head >= s->buffer_bytes) {
    info->cons_warm = pages;
    return false;
  }
  uint32_t want = head / 4096 + sync_pages(s);
  want = want < pages ? want : pages;
  if (info->cons_warm >= want)
    return false;
  unsigned char *storage = (unsigned char *)session_slot(s, i) + (s->stride - s->buffer_bytes);
  uint32_t upto = info->cons_warm + PREWARM_PAGES < want ? info->cons_warm + PREWARM_PAGES
                                                         : want;
#ifdef MADV_POPULATE_WRITE
  if (s->pool_fd < 0) /* anonymous: a read of a page never written would map the zero page */
    (void)madvise(storage + (size_t)info->cons_warm * 4096,
                  (size_t)(upto - info->cons_warm) * 4096, MADV_POPULATE_WRITE);
#endif
  for (uint32_t p = info->cons_warm; p < upto; p++)
    if (!touch_page(storage + (size_t)p * 4096))
      return false;
  info->cons_warm = upto;
  return upto < want;
}

bool fxt_kernel_touch(const void *p, size_t n)
{
  static int fd = -2; /* the scratch file, once per process (its 512 bytes are rewritten) */
  if (fd == -2)
    fd = memfd_create("fxtrace-touch", MFD_CLOEXEC);
  if (fd < 0)
    return false;
  const unsigned char *b = p;
  for (size_t off = 0; off < n;) {
    struct iovec iov[64];
    int k = 0;
    for (; k < 64 && off < n; k++, off += 4096)
      iov[k] = (struct iovec){(void *)(b + off), 8};
    /* The raw call: the kernel's read is all that is wanted (a sanitizer's interceptor
     * would read the bytes as the program, racing with a producer writing them). */
    if (syscall(SYS_pwritev, fd, iov, k, 0L, 0L) < 0)
      return false;
  }
  return true;
}

/* Has the kernel read slot i's next PREWARM_PAGES pages below `limit` (~0.6 ms): false when
 * there were none, or it could not. The consumer only. */
static bool kernel_warm_step(struct session *s, uint32_t i, uint32_t limit)
{
  struct slot_info *info = &s->info[i];
  uint32_t from = atomic_load_explicit(&info->kern_warm, memory_order_relaxed);
  if (from >= limit)
    return false;
  uint32_t upto = from + PREWARM_PAGES < limit ? from + PREWARM_PAGES : limit;
  unsigned char *storage = (unsigned char *)session_slot(s, i) + (s->stride - s->buffer_bytes);
  if (!fxt_kernel_touch(storage + (size_t)from * 4096, (size_t)(upto - from) * 4096))
    return false;
  atomic_store_explicit(&info->kern_warm, upto, memory_order_relaxed);
  return true;
}

/* The consumer, between passes: keeps one FREE slot warm ahead of the next thread that asks
 * for one (attach takes the lowest free slot, so that one), so that a new thread's first event
 * does not pay for the pages (up to ~20 ms for 4 MiB on such a VM), and touches the pages of
 * live buffers larger than what their owners wrote at attach (touch_live). PREWARM_PAGES at a
 * time, under pool_lock for a FREE slot: an attach waits at most that long, then finishes the
 * slot itself. Stops early when a producer wakes the consumer (its buffer wants draining
 * first); the next call goes on. The spare slot only for buffers up to PREWARM_MAX_BYTES (a
 * spare warm buffer is memory the process holds). */
void fxt_slots_prewarm(struct session *s)
{
  uint32_t pages = s->buffer_bytes / 4096;
  uint32_t wake = atomic_load_explicit(&s->wake, memory_order_relaxed);
  for (bool more = s->buffer_bytes <= PREWARM_MAX_BYTES; more;) {
    more = false;
    pthread_mutex_lock(&s->pool_lock);
    for (uint32_t i = 0; i < s->nslots; i++) {
      if (atomic_load_explicit(&s->info[i].state, memory_order_relaxed) != SLOT_FREE)
        continue;
      struct slot_info *info = &s->info[i];
      if (info->warm_pages < pages && !info->reserved && fxt_buffers_reserve_slot(s, i) == 0)
        info->reserved = true;
      if (info->warm_pages < pages && info->reserved) {
        uint32_t upto = info->warm_pages + PREWARM_PAGES;
        warm_pages(s, i, upto < pages ? upto : pages);
        more = true;
      } else if (kernel_warm_step(s, i, info->warm_pages)) { /* then read by the kernel */
        more = true;
      }
      break; /* the lowest free slot only */
    }
    pthread_mutex_unlock(&s->pool_lock);
    if (atomic_load_explicit(&s->wake, memory_order_relaxed) != wake)
      return;
  }
  if (pages <= sync_pages(s))
    return;
  for (uint32_t i = 0; i < s->nslots; i++) {
    /* Acquire pairs with take_slot's release of LIVE: cons_warm was set before it. */
    if (atomic_load_explicit(&s->info[i].state, memory_order_acquire) != SLOT_LIVE)
      continue;
    while (touch_live(s, i, pages))
      if (atomic_load_explicit(&s->wake, memory_order_relaxed) != wake)
        return;
  }
}

bool fxt_slots_kernel_warm(struct session *s)
{
  for (uint32_t i = 0; i < s->nslots; i++)
    /* Acquire pairs with take_slot's release of LIVE (the pool's pages are reserved). */
    if (atomic_load_explicit(&s->info[i].state, memory_order_acquire) == SLOT_LIVE &&
        kernel_warm_step(s, i, s->buffer_bytes / 4096))
      return true;
  return false;
}

bool fxt_slot_kernel_warm(const struct session *s, uint32_t i, uint32_t from, uint32_t len)
{
  uint32_t off = from & (s->buffer_bytes - 1);
  uint32_t pages = atomic_load_explicit(&s->info[i].kern_warm, memory_order_relaxed);
  return len == 0 || (uint64_t)off + len <= (uint64_t)pages * 4096;
}

/* Sets up slot i for the calling thread. Under pool_lock. */
/* Bytes in a buffer at which its thread wakes the consumer: a quarter of buffers up to 16 MiB;
 * of larger ones, what leaves a quarter of the buffer free, and at least 12 MiB. The room left
 * after the wake is what absorbs the consumer's scheduling delay: at half of the 4 MiB default
 * (2 MiB) it lasted 4.4 ms at 10 M events/s, and the paced benchmark lost events in half of its
 * runs on a busy 2-core machine (none in 12 of 12 at a quarter, 3 MiB). 12 MiB is 25 ms at
 * that rate; below the mark a large buffer holds a burst that fits in it whole, written after
 * the burst instead of competing with it for the CPUs (the consumer still polls every 100 ms,
 * consumer.c). */
static uint32_t wake_mark(uint32_t buffer_bytes)
{
  uint32_t quarter = buffer_bytes / 4, room = 12u << 20;
  if (buffer_bytes <= 16u << 20)
    return quarter;
  return buffer_bytes - (quarter > room ? quarter : room);
}

static struct fxt_tslot *take_slot(struct session *s, uint32_t i)
{
  struct fxt_tslot *t = session_slot(s, i);
  struct slot_info *info = &s->info[i];
  unsigned char *storage = (unsigned char *)t + (s->stride - s->buffer_bytes);
  pid_t tid = (pid_t)syscall(SYS_gettid);
  /* A file-backed slot's pages are allocated before anything touches them: a page the file
   * system cannot give would be a SIGBUS here, or later inside an emission. Once per slot and
   * pool: its pages stay (a recycled slot asking again cost a walk of all of them, 2/3 of the
   * time of 10,000 short-lived threads). */
  if (!info->reserved) {
    if (fxt_buffers_reserve_slot(s, i) != 0)
      return NULL;
    info->reserved = true;
  }
  uint32_t flags = s->cfg.mode == FXT_MODE_OVERWRITE ? FXT_RING_OVERWRITE : FXT_RING_DISCARD;
  if (fxt_writer_init_flags(&t->w, storage, s->buffer_bytes, flags, (uint64_t)s->pid,
                            (uint64_t)tid) != 0)
    return NULL;
  atomic_store_explicit(&t->depth, 0, memory_order_relaxed);
  atomic_store_explicit(&t->lost, 0, memory_order_relaxed);
  atomic_store_explicit(&t->gen, fxt_pid_muted(tid) ? s->gen | FXT_GEN_MUTED : s->gen,
                        memory_order_relaxed);
  t->cpu = UINT32_MAX; /* forces a `cpu` record before the first event */
  t->cpu_fast = FXT_CPU_SLOW;
  t->fast_base = storage;
  t->fast_mask = s->buffer_bytes - 1;
  t->fast_end = 0; /* the first event takes the general path, which sets it */
  t->thread_bits = i < 255 ? fxt_w_event_thread(i + 1) : 0;
  /* A flight recorder's consumer leaves the ring alone (or, while a trace_pipe is open,
   * drains it each poll period): no wake, and so nothing keeps an event off the fast path
   * once the ring is past its mark. */
  t->wake_mark = fxt_flight_recorder(s) ? UINT32_MAX : wake_mark(s->buffer_bytes);
  t->block_ms = s->cfg.mode == FXT_MODE_BLOCK ? s->cfg.block_timeout_ms : 0;
  setup_companion(s, t, i, tid);
  atomic_store_explicit(&t->wake_sent, 0, memory_order_relaxed);
  info->tid = tid;
  memset(info->comm, 0, sizeof(info->comm));
  prctl(PR_GET_NAME, info->comm);
  fxt_name_fix(info->comm, sizeof(info->comm)); /* UTF-8 cut at 15 bytes */
  info->live_cpu = 0;
  info->ring_pos = 0;
  info->ring_cpu = FXT_CPU_NOTE_NONE;
  info->events_read = info->dropped_total = 0;
  atomic_store_explicit(&info->events_read_pub, 0, memory_order_relaxed);
  atomic_store_explicit(&info->dropped_pub, 0, memory_order_relaxed);
  info->loss_total = info->loss_shown = 0;
  info->owner_gen++;
  /* The consumer touches what the owner does not write itself (fxt_slots_prewarm). */
  info->cons_warm = info->warm_pages > sync_pages(s) ? info->warm_pages : sync_pages(s);
  sh_slot_own(s, i, t);
  fxt_trigger_thread(info);
  /* Release: the consumer that sees LIVE sees the slot set up. */
  atomic_store_explicit(&info->state, SLOT_LIVE, memory_order_release);
  return t;
}

/* The first thread of a session that finds every buffer in use says so on stderr, once (its
 * events, and those of every thread in the same case, are counted as the process's losses:
 * thread 0 in `fxtrace stats`). write(2) of a message made on the stack: no lock, no malloc. */
static void say_no_slot(struct session *s, uint32_t gen)
{
  static _Atomic uint32_t said_gen;
  if (atomic_exchange_explicit(&said_gen, gen, memory_order_relaxed) == gen)
    return;
  char msg[256];
  int n = snprintf(msg, sizeof(msg),
                   "fxtrace: thread %d got no buffer: the %u buffers total_kb=%llu allows are "
                   "in use; the events of threads without one are counted as lost (thread 0 "
                   "in `fxtrace stats`)\n",
                   (int)syscall(SYS_gettid), (unsigned)s->nslots,
                   (unsigned long long)s->cfg.total_kb);
  if (n > 0)
    (void)!write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
}

struct fxt_tslot *fxt_emit_enter_slow(void)
{
  struct session *s = &fxt_session;
  uint32_t gen = atomic_load_explicit(&fxt_session_active, memory_order_acquire);
  if (gen == 0)
    return NULL;
  if (attaching) {
    /* A signal handler interrupted this thread's own attach: count, never recurse. */
    atomic_fetch_add_explicit(&s->sh->no_slot_drops, 1, memory_order_relaxed);
    unattached_drops++;
    return NULL;
  }
  if (no_slot_seen == gen + atomic_load_explicit(&s->slot_freed_gen, memory_order_relaxed)) {
    atomic_fetch_add_explicit(&s->sh->no_slot_drops, 1, memory_order_relaxed);
    unattached_drops++;
    return NULL;
  }
  attaching = 1;
  struct fxt_tslot *t = NULL;
  pthread_mutex_lock(&s->pool_lock);
  if (gen == s->gen) {
    for (uint32_t i = 0; i < s->nslots && !t; i++)
      if (atomic_load_explicit(&s->info[i].state, memory_order_relaxed) == SLOT_FREE)
        t = take_slot(s, i);
  }
  pthread_mutex_unlock(&s->pool_lock);
  if (!t) {
    say_no_slot(s, gen);
    no_slot_seen = gen + atomic_load_explicit(&s->slot_freed_gen, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->sh->no_slot_drops, 1, memory_order_relaxed);
    unattached_drops++;
    attaching = 0;
    return NULL;
  }
  fxt_slot_warm(s, t->slot_index);
  pthread_setspecific(exit_key, t);
  fxt_tls_slot = t;
  attaching = 0;
  /* From here a signal handler finds the slot and emits normally, so nothing adds to
   * unattached_drops any more: move what it holds into the thread's own stream. */
  uint64_t pending = unattached_drops;
  if (pending) {
    unattached_drops = 0;
    atomic_fetch_add_explicit(&t->lost, pending, memory_order_relaxed);
    atomic_fetch_sub_explicit(&s->sh->no_slot_drops, pending, memory_order_relaxed);
  }
  return fxt_emit_enter();
}

struct fxt_tslot *fxt_emit_refused(struct fxt_tslot *t, uint32_t depth)
{
  uint32_t active = atomic_load_explicit(&fxt_session_active, memory_order_relaxed);
  atomic_store_explicit(&t->depth, depth, memory_order_relaxed); /* undo our raise */
  if (depth != 0) {
    /* Nested: a signal handler interrupted this thread inside emit. The thread's buffer is
     * mid-reservation, so the event goes to the companion writer (then the ingress ring);
     * deeper nesting than one companion is counted, never written. */
    struct fxt_tslot *n = t->nested;
    if (active == 0 || active != atomic_load_explicit(&t->gen, memory_order_relaxed))
      return NULL; /* no session, or muted */
    if (depth == 1 && n && atomic_load_explicit(&n->depth, memory_order_relaxed) == 0) {
      atomic_store_explicit(&n->depth, 1, memory_order_relaxed);
      atomic_signal_fence(memory_order_seq_cst);
      atomic_thread_fence(memory_order_acquire); /* as fxt_emit_enter */
      return n;
    }
    atomic_fetch_add_explicit(&t->lost, 1, memory_order_relaxed);
    return NULL;
  }
  if (active == 0 || atomic_load_explicit(&t->gen, memory_order_relaxed) == (active | FXT_GEN_MUTED))
    return NULL; /* no session, or set_event_pid excludes this thread: not recorded */
  /* The slot belongs to an earlier session: attach to the running one. */
  fxt_tls_slot = NULL;
  return fxt_emit_enter_slow();
}

void fxt_slot_free(struct session *s, uint32_t i)
{
  pthread_mutex_lock(&s->pool_lock);
  /* The owner is gone (EXITED, acquired by the consumer, the only caller): its writes of
   * warm_pages happened before; what the consumer touched counts as warm for the next owner
   * when it reaches the end (the owner wrote the pages before it). */
  struct slot_info *info = &s->info[i];
  if (info->cons_warm >= s->buffer_bytes / 4096 && info->warm_pages >= sync_pages(s))
    info->warm_pages = s->buffer_bytes / 4096;
  atomic_store_explicit(&sh_slot(s, i)->state, FXT_SH_SLOT_FREE, memory_order_relaxed);
  atomic_store_explicit(&s->info[i].state, SLOT_FREE, memory_order_relaxed);
  atomic_fetch_add_explicit(&s->slot_freed_gen, 1, memory_order_relaxed);
  pthread_mutex_unlock(&s->pool_lock);
}

/* The stop handshake. The caller has set fxt_session_active to 0. membarrier() is a full
 * fence on every thread of the process, so for each thread either its raise of depth is
 * visible here, or its next load of fxt_session_active sees 0 and it refuses to emit. After
 * every LIVE slot's depth is seen at 0, no thread is inside emit nor will enter it again, and
 * the caller may act as producer of every writer. Returns false only if membarrier is not
 * available, after falling back on a 20 ms grace period. */
bool fxt_slots_quiesce(struct session *s)
{
  bool fenced = syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0 ||
                syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0;
  if (!fenced) {
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
  }
  for (uint32_t i = 0; i < s->nslots; i++) {
    if (atomic_load_explicit(&s->info[i].state, memory_order_acquire) == SLOT_FREE)
      continue;
    struct fxt_tslot *t = session_slot(s, i);
    while (atomic_load_explicit(&t->depth, memory_order_acquire) != 0)
      sched_yield();
  }
  atomic_thread_fence(memory_order_acquire);
  return fenced;
}

/* Waits until no thread can still read a filter program it loaded in an emission that began
 * before this call (after a program was replaced, before the old one is freed): membarrier
 * makes the caller's earlier stores visible to every thread's next emission (as in
 * fxt_slots_quiesce), then each thread seen inside an emission is waited for until it leaves
 * (acquire pairs with the release store of depth in fxt_emit_leave), or until it is seen
 * parked in a full buffer at depth 1 (block mode): a filter decides before anything is
 * reserved (fxtrace.h, adhoc.c), so such an emission is done with its program, and waiting
 * for it would wait for the consumer, up to the block timeout. (Why the flag is not stale:
 * the owner clears it before its emission leaves; an emission that began before the barrier
 * point had every earlier clear made visible by membarrier, and one that began after it
 * loads the new program.) The acquire of parked pairs with its release in reserve_blocking.
 * A signal handler's nested emission raises depth past 1: waited for. */
void fxt_slots_sync(struct session *s)
{
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0 &&
      syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) != 0) {
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
  }
  for (uint32_t i = 0; s->pool && i < s->nslots; i++) {
    if (atomic_load_explicit(&s->info[i].state, memory_order_acquire) == SLOT_FREE)
      continue;
    struct fxt_tslot *t = session_slot(s, i);
    uint32_t d;
    while ((d = atomic_load_explicit(&t->depth, memory_order_acquire)) != 0 &&
           !(d == 1 && atomic_load_explicit(&s->info[i].parked, memory_order_acquire)))
      sched_yield();
  }
}

/* In a forked child: only the forking thread exists. Its slot is kept (emptied: the parent's
 * unread records stay the parent's) and renamed to the child's ids; every other slot is free.
 * File-backed buffers are first given files of the child's own (buffers.c): the parent's are
 * mapped MAP_SHARED and must never be written by the child. */
void fxt_slots_reset_after_fork(struct session *s, struct fxt_tslot *keep, pid_t pid, pid_t tid)
{
  pthread_mutex_init(&s->pool_lock, NULL);
  uint32_t k = UINT32_MAX;
  for (uint32_t i = 0; i < s->nslots && keep; i++)
    if (session_slot(s, i) == keep &&
        atomic_load_explicit(&s->info[i].state, memory_order_relaxed) == SLOT_LIVE)
      k = i;
  if (fxt_buffers_after_fork(s, k, k != UINT32_MAX) != 0)
    k = UINT32_MAX; /* its slot could not be kept: the thread attaches again */
  for (uint32_t i = 0; i < s->nslots; i++) {
    struct fxt_tslot *t = session_slot(s, i);
    /* The pool is the child's own now (new files, or the anonymous copy): pages to allocate
     * (the kept slot's are) and to write once again. */
    s->info[i].reserved = i == k;
    s->info[i].warm_pages = 0;
    s->info[i].cons_warm = 0;
    atomic_store_explicit(&s->info[i].kern_warm, 0, memory_order_relaxed);
    if (i == k) {
      uint32_t flags = s->cfg.mode == FXT_MODE_OVERWRITE ? FXT_RING_OVERWRITE : FXT_RING_DISCARD;
      unsigned char *storage = (unsigned char *)t + (s->stride - s->buffer_bytes);
      fxt_writer_init_flags(&t->w, storage, s->buffer_bytes, flags, (uint64_t)pid, (uint64_t)tid);
      atomic_store_explicit(&t->lost, 0, memory_order_relaxed);
      atomic_store_explicit(&t->gen, s->gen, memory_order_relaxed);
      t->cpu = UINT32_MAX;
      t->cpu_fast = FXT_CPU_SLOW;
      t->fast_end = 0;
      setup_companion(s, t, i, tid); /* the parent's signal-context records stay its own */
      s->info[i].tid = tid;
      s->info[i].ring_pos = 0;
      s->info[i].ring_cpu = FXT_CPU_NOTE_NONE;
      s->info[i].owner_gen++;
      sh_slot_own(s, i, t);
      continue;
    }
    atomic_store_explicit(&s->info[i].state, SLOT_FREE, memory_order_relaxed);
    atomic_store_explicit(&sh_slot(s, i)->state, FXT_SH_SLOT_FREE, memory_order_relaxed);
  }
  /* Records other threads of the parent pushed are the parent's. */
  fxt_ingress_init(s->ingress, s->meta + s->sh->ingress_off + s->sh->ingress_ctl_bytes,
                   FXT_INGRESS_STORAGE_SIZE(INGRESS_SLOTS, INGRESS_PAYLOAD), INGRESS_PAYLOAD);
}

/* ---- rare emit paths --------------------------------------------------------------------- */

/* Leaving an emission on a companion (signal context): its records go to the ingress ring,
 * tagged with the thread's slot; what the ring does not take is counted as the thread's. */
static int copy_nothing(void *ctx, uint32_t off, const void *src, uint32_t len)
{
  (void)ctx, (void)off, (void)src, (void)len;
  return 0;
}

void fxt_emit_nested_done(struct fxt_tslot *n)
{
  struct session *s = &fxt_session;
  struct fxt_tslot *t = session_slot(s, n->slot_index);
  _Alignas(8) unsigned char buf[NESTED_BYTES];
  /* Each record leaves the companion only once it is in the ingress ring (or counted), so a
   * death in between leaves it in both, never in neither: `fxtrace recover` keeps one copy
   * (docs/recovery.md). The companion has no other reader: its tail is ours here. */
  struct fxt_ring_iter it;
  fxt_ring_iter_begin(&n->w.ring, &it);
  uint32_t len;
  while (fxt_ring_iter_next(&it, buf, sizeof(buf), &len) == 1) {
    uint64_t h;
    memcpy(&h, buf, 8);
    int pushed = fxt_ingress_push(s->ingress, buf, len, s->gen, n->slot_index);
    (void)fxt_ring_read(&n->w.ring, copy_nothing, NULL, len); /* consume exactly it */
    if (pushed != 0) {
      uint64_t records = 1;
      if ((h & 0xf) == FXT_RECORD_EVENT && (h >> 48) == FXT_STR_DROP_STATS && len >= 40)
        records = (uint32_t)(*(const uint64_t *)(const void *)(buf + 32) >> 32);
      atomic_fetch_add_explicit(&t->lost, records, memory_order_relaxed);
    }
  }
  /* A record too big for the companion was counted by its writer: the thread's loss too. */
  if (n->w.drop_records) {
    atomic_fetch_add_explicit(&t->lost, n->w.drop_records, memory_order_relaxed);
    n->w.drop_records = n->w.drop_bytes = n->w.drop_first = n->w.drop_last = 0;
  }
  fxt_consumer_wake(s);
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&n->depth, 0, memory_order_relaxed);
}

void fxt_emit_wake(struct fxt_tslot *t)
{
  if (fxt_ring_producer_used(&t->w.ring) <= t->wake_mark ||
      atomic_load_explicit(&t->wake_sent, memory_order_relaxed))
    return;
  atomic_store_explicit(&t->wake_sent, 1, memory_order_relaxed);
  fxt_consumer_wake(&fxt_session);
}

/* Overwrite mode: makes room for `need` bytes by moving the tail past the oldest records, as
 * the ring's make_room would (src/core/ring.c) - and then the ring finds the room and moves
 * nothing - but states the move in the slot's entry of the session file first. make_room
 * moves the tail with a compare-and-swap and updates the overrun counters after it: a death
 * between the two would leave records overwritten and counted nowhere, and `fxtrace recover`
 * could not tell how many (docs/recovery.md). Producer side only (the owner thread, or the
 * consumer once it is gone): the same single-writer rules as make_room for the counters,
 * the same orders for the tail (acquire on both outcomes of the compare-and-swap: pairs with
 * the consumer's release when it claims, ring.c (2); the release fence before the gained
 * space is written is the ring's reserve_slow, which runs because tail_cache is older; and
 * release on success besides, for the CPU note stored before it: cpunote.h (N1)). Before
 * each move it notes the CPU in effect at the new tail, so that a copy starting there can
 * say which CPU its first events ran on. */
void fxt_pass_oldest(struct session *s, struct fxt_tslot *t, uint32_t need)
{
  struct fxt_ring *r = &t->w.ring;
  if (!(r->flags & FXT_RING_OVERWRITE) || need > r->size || !s->sh ||
      t->slot_index >= s->nslots || t->flush_on_leave)
    return;
  struct fxt_sh_slot *e = sh_slot(s, t->slot_index);
  const unsigned char *base = (const unsigned char *)r + r->storage_off;
  uint32_t mask = r->size - 1;
  uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed); /* ours */
  uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
  /* A full ring (a flight recorder: nobody drains it) passes a sixteenth of it at a time, so
   * that the next events find room on the fast path instead of each paying for a pass of its
   * own; the window kept is a sixteenth shorter at worst. */
  uint32_t batch = need > r->size / 16 ? need : r->size / 16;
  while (need > r->size - (head - tail)) {
    uint32_t to = tail, records = 0;
    /* The CPU in effect at the tail, as a note says (cpunote.h: the tail was loaded above with
     * acquire, or by our own move, so the note for it is among these (N1); a note loaded here
     * after a later move of the consumer can only be for a tail our compare-and-swap then
     * does not find). Then the `cpu` records passed over update it. */
    uint64_t notes[4];
    fxt_cpu_notes_load(e, notes);
    uint32_t cpu = fxt_cpu_note_match(notes, tail);
    while (batch > r->size - (head - to) && to != head) {
      /* [tail, head) is ours and committed: the consumer only reads it. */
      uint64_t h = atomic_load_explicit((const _Atomic uint64_t *)(const void *)(base + (to & mask)),
                                        memory_order_relaxed);
      uint32_t n = fxt_ring_record_bytes(h);
      if (n == 0 || n > head - to)
        return; /* corrupt: the ring's own make_room reports it */
      bool meta = (h & 0xf) == FXT_RECORD_EVENT && (h >> 32 & 0xffff) == FXT_STR_KERNEL_META;
      records += !meta;
      if (meta && (h >> 48) == FXT_STR_CPU && n >= 32) {
        /* kernel:meta `cpu` counter: its uint32 argument is the second last word. */
        uint64_t arg = atomic_load_explicit(
            (const _Atomic uint64_t *)(const void *)(base + ((to + n - 16) & mask)),
            memory_order_relaxed);
        cpu = (arg & 0xf) == FXT_ARG_UINT32 ? (uint32_t)(arg >> 32) : cpu;
      }
      to += n;
    }
    uint32_t ovr = atomic_load_explicit(&r->overrun_records, memory_order_relaxed);
    uint32_t ovb = atomic_load_explicit(&r->overrun_bytes, memory_order_relaxed);
    atomic_store_explicit(&e->pass_from, tail, memory_order_relaxed);
    atomic_store_explicit(&e->pass_to, to, memory_order_relaxed);
    atomic_store_explicit(&e->pass_records, records, memory_order_relaxed);
    atomic_store_explicit(&e->pass_ovr_before, ovr, memory_order_relaxed);
    atomic_store_explicit(&e->pass_ovb_before, ovb, memory_order_relaxed);
    /* The CPU at the new tail, before the tail moves there: the release store of the note
     * and the compare-and-swap's release pair with a copier's acquire of the tail (N1). A
     * pass whose compare-and-swap fails leaves a note that is true all the same. */
    fxt_cpu_note_put(e->cpu_note, tail, to, cpu);
    atomic_signal_fence(memory_order_seq_cst);
    atomic_store_explicit(&e->pass_state, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    uint32_t from = tail;
    if (atomic_compare_exchange_strong_explicit(&r->tail, &tail, to, memory_order_acq_rel,
                                                memory_order_acquire)) {
      atomic_store_explicit(&r->overrun_records, ovr + records, memory_order_relaxed);
      atomic_store_explicit(&r->overrun_bytes, ovb + (to - from), memory_order_relaxed);
      tail = to;
    }
    /* On failure the consumer claimed meanwhile: tail is its new position; look again. */
    atomic_signal_fence(memory_order_seq_cst);
    atomic_store_explicit(&e->pass_state, 0, memory_order_relaxed);
  }
}

/* Block mode: waits (yielding) until the consumer made room, the timeout passed, or the
 * session stopped; only then is the record counted as dropped. */
static int reserve_blocking(struct fxt_tslot *t, uint64_t header, uint32_t prefix,
                            struct fxt_reservation *res)
{
  int rc = fxt_writer_try_reserve(&t->w, header, prefix, res);
  if (rc != FXT_ENOSPC)
    return rc;
  struct timespec now, end;
  clock_gettime(CLOCK_MONOTONIC, &end);
  end.tv_sec += t->block_ms / 1000;
  end.tv_nsec += (long)(t->block_ms % 1000) * 1000000;
  if (end.tv_nsec >= 1000000000) {
    end.tv_sec++;
    end.tv_nsec -= 1000000000;
  }
  atomic_store_explicit(&t->wake_sent, 1, memory_order_relaxed);
  fxt_consumer_wake(&fxt_session);
  /* Parked (session_int.h slot_info.parked): filter writes need not wait for this wait.
   * Only the outermost emission: a nested one (signal context) never gets here, as it
   * writes into its companion. Release pairs with the acquire in fxt_slots_sync. */
  struct session *s = &fxt_session;
  _Atomic uint32_t *parked = NULL;
  if (atomic_load_explicit(&t->depth, memory_order_relaxed) == 1) {
    parked = &s->info[((unsigned char *)t - s->pool) / s->stride].parked;
    atomic_store_explicit(parked, 1, memory_order_release);
  }
  for (;;) {
    sched_yield();
    rc = fxt_writer_try_reserve(&t->w, header, prefix, res);
    if (rc != FXT_ENOSPC)
      break;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (atomic_load_explicit(&fxt_session_active, memory_order_relaxed) !=
            atomic_load_explicit(&t->gen, memory_order_relaxed) ||
        now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec)) {
      rc = fxt_writer_reserve_prefixed(&t->w, header, prefix, res); /* counts the drop */
      break;
    }
  }
  /* Cleared before the emission leaves (its release store of depth orders it). */
  if (parked)
    atomic_store_explicit(parked, 0, memory_order_relaxed);
  return rc;
}

struct fxt_cursor fxt_emit_reserve_slow(struct fxt_tslot *t, uint32_t cpu, uint64_t ts,
                                        uint64_t header)
{
  struct fxt_cursor cur = {NULL, 0, 0}, *c = &cur;
  /* kernel:meta counter "cpu" (docs/fxt-conventions.md): hdr, ts, [koids], arg, counter id;
   * in front of the event, in the same reservation, when the thread moved. */
  uint32_t words = cpu != t->cpu ? 4 + fxt_emit_thread_words(t) : 0;
  struct fxt_reservation res;
  if (t->w.ring.flags & FXT_RING_OVERWRITE)
    fxt_pass_oldest(&fxt_session, t,
                    fxt_ring_record_bytes(header) + words * 8 +
                        (t->w.drop_records | t->w.drop_bytes ? FXT_DROP_STATS_BYTES : 0));
  int rc = t->block_ms ? reserve_blocking(t, header, words * 8, &res)
                       : fxt_writer_reserve_prefixed(&t->w, header, words * 8, &res);
  if (rc != 0) {
    t->cpu_fast = FXT_CPU_SLOW; /* the next record that fits reports the drop run first */
    if (!atomic_load_explicit(&t->wake_sent, memory_order_relaxed)) {
      /* Full without a wake pending (the mark was passed while the last one was in
       * flight): the consumer must come now. */
      atomic_store_explicit(&t->wake_sent, 1, memory_order_relaxed);
      fxt_consumer_wake(&fxt_session);
    }
    return cur;
  }
  *c = fxt_cursor_of(&res); /* after the drop_stats record, if one was pending */
  if (words) {
    fxt_put(c, fxt_w_event(FXT_EVENT_COUNTER, 1) | fxt_w_size(words) | t->thread_bits |
                   fxt_w_event_strings(FXT_STR_KERNEL_META, FXT_STR_CPU));
    fxt_put_event_head(c, t, ts);
    fxt_put(c, fxt_w_arg_u32(FXT_STR_CPU, cpu));
    fxt_put(c, 0); /* counter id */
    t->cpu = cpu;
  }
  /* Fast again unless drops are still pending (a drop_stats record carries at most
   * UINT32_MAX: the excess goes into the next reservation's). */
  t->cpu_fast = t->w.drop_records | t->w.drop_bytes || t->thread_bits == 0 ? FXT_CPU_SLOW : cpu;
  return cur;
}

void fxt_put_hex(struct fxt_cursor *c, const void *bytes, uint32_t n)
{
  static const char digits[] = "0123456789abcdef";
  const unsigned char *b = bytes;
  char word[8];
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; i++) {
    word[k++] = digits[b[i] >> 4];
    word[k++] = digits[b[i] & 15];
    if (k == 8) {
      fxt_put_bytes(c, word, 8);
      k = 0;
    }
  }
  if (k)
    fxt_put_bytes(c, word, k);
}
