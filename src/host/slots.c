/* slots.c - the pool of per-thread buffers: set up for a session, a slot's entry in the session
 * file and its companion writer made for a new owner, a slot freed by the consumer, the
 * handshake that lets fxt_session_stop take over every writer (and its lighter form for filter
 * programs), and the reset in a child of fork. A thread's attach and exit are slots_attach.c's,
 * the pages warmed ahead slots_warm.c's, the general emit path slots_emit.c's (slots_int.h).
 * State transitions and their ordering are described in session_int.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fxtrace/detail/emit.h>
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

#include "../base/cpunote.h"
#include "slots_int.h"

size_t fxt_companion_storage_off(void)
{
  return (2 * sizeof(struct fxt_tslot) + 7) & ~(size_t)7;
}

int fxt_slots_setup(struct session *s)
{
  fxt_slots_exit_key_init();
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
  /* What the held flags of the new session come from: the old pool and its bookkeeping. */
  const unsigned char *old_pool = s->pool;
  struct slot_info *old_info = s->info;
  uint32_t old_nslots = s->nslots;
  uint32_t old_info_n = s->info ? (uint32_t)(s->info_bytes / sizeof(struct slot_info)) : 0;
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
  /* A slot LIVE at the last stop, or held since an earlier one, may be in a live thread's
   * fxt_tls_slot: held in a pool reused at the same address (session_int.h, "Stale
   * pointers"). A pool at a new address is clear: its old slots keep their old gens for ever.
   * Under pool_lock against a stale owner's fxt_slot_drop_hold. No thread attaches
   * concurrently: fxt_session_active is 0 until the session is set up. */
  bool same_pool = old_pool != NULL && s->pool == old_pool;
  pthread_mutex_lock(&s->pool_lock);
  for (uint32_t i = 0; i < nslots; i++) {
    bool held = false;
    if (same_pool && i < old_info_n)
      held = old_info[i].held ||
             (i < old_nslots &&
              atomic_load_explicit(&old_info[i].state, memory_order_relaxed) == SLOT_LIVE);
    s->info[i].held = held;
  }
  pthread_mutex_unlock(&s->pool_lock);
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
  /* pool_lock is initialized once (session.c), never again here: a thread of an earlier
   * session may hold it while this one starts (fxt_slot_drop_hold at its exit). */
  /* The stop handshake uses membarrier; register once (harmless if it fails: see quiesce). */
  syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
  return 0;
}

void fxt_slot_companion_setup(struct session *s, struct fxt_tslot *t, uint32_t i, pid_t tid)
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

void fxt_slot_sh_own(struct session *s, uint32_t i, const struct fxt_tslot *t)
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

void fxt_slot_free(struct session *s, uint32_t i)
{
  pthread_mutex_lock(&s->pool_lock);
  /* The owner is gone (EXITED, acquired by the consumer, the only caller): its writes of
   * warm_pages happened before; what the consumer touched counts as warm for the next owner
   * when it reaches the end (the owner wrote the pages before it). */
  struct slot_info *info = &s->info[i];
  if (info->cons_warm >= s->buffer_bytes / 4096 && info->warm_pages >= fxt_slots_sync_pages(s))
    info->warm_pages = s->buffer_bytes / 4096;
  atomic_store_explicit(&sh_slot(s, i)->state, FXT_SH_SLOT_FREE, memory_order_relaxed);
  atomic_store_explicit(&s->info[i].state, SLOT_FREE, memory_order_relaxed);
  atomic_fetch_add_explicit(&s->slot_freed_gen, 1, memory_order_relaxed);
  pthread_mutex_unlock(&s->pool_lock);
}

void fxt_slot_drop_hold(struct session *s, const struct fxt_tslot *t)
{
  pthread_mutex_lock(&s->pool_lock);
  const unsigned char *p = (const unsigned char *)t;
  if (s->pool && s->stride && p >= s->pool && p < s->pool + (size_t)s->nslots * s->stride &&
      (size_t)(p - s->pool) % s->stride == 0) {
    uint32_t i = (uint32_t)((size_t)(p - s->pool) / s->stride);
    if (s->info[i].held) {
      s->info[i].held = false;
      /* Threads that found no slot look again (fxt_emit_enter_slow). */
      atomic_fetch_add_explicit(&s->slot_freed_gen, 1, memory_order_relaxed);
    }
  }
  pthread_mutex_unlock(&s->pool_lock);
}

/* A full fence on every thread of the process (membarrier, private expedited, else global):
 * true; false when membarrier is not available, after a 20 ms grace period instead. */
static bool fence_all_threads(void)
{
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0 ||
      syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0)
    return true;
  struct timespec ts = {0, 20000000};
  nanosleep(&ts, NULL);
  return false;
}

/* The stop handshake. The caller has set fxt_session_active to 0. membarrier() is a full
 * fence on every thread of the process, so for each thread either its raise of depth is
 * visible here, or its next load of fxt_session_active sees 0 and it refuses to emit. After
 * every LIVE slot's depth is seen at 0, no thread is inside emit nor will enter it again, and
 * the caller may act as producer of every writer. Returns false only if membarrier is not
 * available, after falling back on a 20 ms grace period. */
bool fxt_slots_quiesce(struct session *s)
{
  bool fenced = fence_all_threads();
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
  (void)fence_all_threads();
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
  atomic_store_explicit(&s->attaching_threads, 0, memory_order_relaxed); /* the parent's */
  uint32_t k = UINT32_MAX;
  for (uint32_t i = 0; i < s->nslots && keep; i++)
    if (session_slot(s, i) == keep &&
        atomic_load_explicit(&s->info[i].state, memory_order_relaxed) == SLOT_LIVE)
      k = i;
  if (fxt_buffers_after_fork(s, k, k != UINT32_MAX) != 0)
    k = UINT32_MAX; /* its slot could not be kept: the thread attaches again */
  for (uint32_t i = 0; i < s->nslots; i++) {
    struct fxt_tslot *t = session_slot(s, i);
    /* The only thread is the forking one: the slot it points at, when not kept, is its stale
     * pointer's (it attaches again on its next event: fxt_emit_refused). */
    s->info[i].held = t == keep && i != k;
    /* The pool is the child's own now (new files, or the anonymous copy): pages to allocate
     * (the kept slot's are) and to write once again. */
    s->info[i].reserved = i == k;
    s->info[i].warm_pages = 0;
    s->info[i].cons_warm = 0;
    atomic_store_explicit(&s->info[i].kern_warm, 0, memory_order_relaxed);
    if (i == k) {
      /* The kept header was copied from the parent's file-backed slot (MAP_SHARED until
       * fxt_buffers_after_fork) while the parent's thread goes on using it: the parent's
       * values of the owner's fields, torn, not the child's. The child's one thread is in
       * fork(), outside any emission: depth 0 (copied at 1 from a parent inside an event,
       * about 1 fork in 20 in tests/check/fn_fork, it left the child's session stop waiting
       * in fxt_slots_quiesce for ever), and no wake sent yet. The rest is set below. */
      atomic_store_explicit(&t->depth, 0, memory_order_relaxed);
      atomic_store_explicit(&t->wake_sent, 0, memory_order_relaxed);
      uint32_t flags = s->cfg.mode == FXT_MODE_OVERWRITE ? FXT_RING_OVERWRITE : FXT_RING_DISCARD;
      unsigned char *storage = (unsigned char *)t + (s->stride - s->buffer_bytes);
      fxt_writer_init_flags(&t->w, storage, s->buffer_bytes, flags, (uint64_t)pid, (uint64_t)tid);
      fxt_slot_ring_policy(&t->w.ring);
      atomic_store_explicit(&t->lost, 0, memory_order_relaxed);
      atomic_store_explicit(&t->gen, s->gen, memory_order_relaxed);
      t->cpu = UINT32_MAX;
      t->cpu_fast = FXT_CPU_SLOW;
      t->fast_end = 0;
      fxt_slot_companion_setup(s, t, i, tid); /* the parent's signal-context records stay its own */
      s->info[i].tid = tid;
      s->info[i].ring_pos = 0;
      s->info[i].ring_cpu = FXT_CPU_NOTE_NONE;
      s->info[i].owner_gen++;
      fxt_slot_sh_own(s, i, t);
      continue;
    }
    atomic_store_explicit(&s->info[i].state, SLOT_FREE, memory_order_relaxed);
    atomic_store_explicit(&sh_slot(s, i)->state, FXT_SH_SLOT_FREE, memory_order_relaxed);
  }
  /* Records other threads of the parent pushed are the parent's. */
  fxt_ingress_init(s->ingress, s->meta + s->sh->ingress_off + s->sh->ingress_ctl_bytes,
                   FXT_INGRESS_STORAGE_SIZE(INGRESS_SLOTS, INGRESS_PAYLOAD), INGRESS_PAYLOAD);
}
