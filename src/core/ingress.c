/* ingress.c - bounded MPSC ingress of fixed-size records (see include/fxtrace/ingress.h).
 *
 * Layout of the storage (N = slots, a power of two, mask = N - 1):
 *
 *   ready[N]  uint32 cells of the ready queue, position p at index p & mask
 *   free[N]   uint32 cells of the free list, position p at index p & mask
 *   slot[N]   stride bytes each: struct slot_header, then the payload
 *
 * Every slot is, at any time, in exactly one of four states, and each transition is one
 * atomic step by one context:
 *
 *   in the free list  --claim CAS on free_head (P)-->         owned by its writer
 *   owned             --publish CAS on a ready cell (P)-->     referenced by a FULL cell
 *   FULL cell         --consumer resets the cell (C)-->        being freed
 *   being freed       --release store of free_tail (C)-->      in the free list
 *
 * Free list (single producer C, multiple consumers P). Positions [free_head, free_tail) hold
 * the indices of free slots. P claims position h by reading free[h] and then moving free_head
 * from h to h + 1 with a compare-and-swap; C appends with a store of the cell and a release
 * store of free_tail. free_tail - free_head is in [0, N] because there are N slots.
 *
 * Ready queue (multiple producers P, single consumer C): a Vyukov-style array whose cells carry
 * their own sequence. Cell value for position p, in one 32-bit word:
 *
 *   EMPTY(p)    = tag(p)                  tag(p) = (p & ~mask) << 1: p's lap (31 bits of p)
 *   FULL(p, s)  = tag(p) | N | s          bit log2(N) says full, the low bits hold slot s
 *
 * So claiming position p of the queue and publishing into it are one compare-and-swap, from
 * EMPTY(p) to FULL(p, s): a push interrupted anywhere leaves no hole for anyone to wait on.
 * ready_tail only says where to look; a push that finds the cell at ready_tail already FULL,
 * or already popped and reset for a later lap, moves ready_tail on for the push that filled it
 * (which may be suspended under us, or never resume), so ready_tail lags the filled cells by
 * at most one. Laps are compared by the difference of their tags. C pops position h when its
 * cell is FULL(h, s), then resets it to EMPTY(h + N).
 *
 * The queue is never full for a publisher: it owns a slot, so at most N - 1 cells are FULL
 * (each references a distinct slot that is not free); if ready_tail is t, positions t - N ..
 * t - 1 are published, so t - N has been popped and its cell reset to EMPTY(t). This holds on
 * the publisher's own thread too (a handler that interrupted the consumer, or a pop callback
 * that pushes): publish never waits for C.
 *
 * Memory ordering, in one place:
 *
 *  (1) free -> claim. C finishes reading a popped slot, writes its index into free[t] and then
 *      stores free_tail = t + 1 with release. P loads free_tail with acquire before it reads
 *      free[h] and claims. If P saw free_tail > h, the store of free[h] and C's last reads of
 *      that slot happen before P reads the index and writes the slot.
 *
 *  (2) claim -> claim. The claim compare-and-swap is acq_rel, and free_head is also loaded
 *      with acquire. Release: P's read of free[h] happens before every later claim (release
 *      sequence), and so before C rewrites free[h] for position h + N (C does that only after
 *      popping h + 1 records, one of them claimed at h or later); P can never read an index
 *      that is not position h's. Acquire: the free_head P loads is one that a claimer who saw
 *      free_tail > h - 1 wrote, so P's own load of free_tail cannot be older (free_tail -
 *      free_head never looks negative).
 *
 *  (3) publish -> pop. P writes the slot header and payload with plain stores, then moves the
 *      ready cell from EMPTY(p) to FULL(p, s) with a release compare-and-swap. C loads the cell
 *      with acquire; seeing FULL(p, s), it reads slot s. ready_tail and the cell reset by C
 *      carry no data and are relaxed: a stale value only costs a retry, because producers
 *      change cells and ready_tail only by compare-and-swap against the current value, and
 *      only C changes a FULL cell.
 *
 * ABA: a push that stalls between reading free_head and its claim while 2^32 claims happen, or
 * between reading a ready cell and its publish while 2^31 publications happen, could succeed
 * wrongly; every 32-bit-position queue shares this bound.
 */
#include <fxtrace/ingress.h>

#include <stdatomic.h>
#include <stdbool.h>

#include "mem.h"
#include "rmw.h"

_Static_assert(ATOMIC_INT_LOCK_FREE == 2 || FXT_RMW_HOOKED,
               "32-bit atomics must be lock-free, or their read-modify-writes hooked (rmw.h)");
_Static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t), "C++ view of the struct matches");
_Static_assert(FXT_INGRESS_MAX_SLOTS <= 1u << 16, "tag keeps at least 15 lap bits");

/* Race hooks (STYLE 13): a test that compiles this file itself may define
 * FXT_INGRESS_RACE_HOOK(q, step) to run code after each observable step of a push, e.g. raise
 * a signal there. The library defines it as nothing. */
#ifndef FXT_INGRESS_RACE_HOOK
#define FXT_INGRESS_RACE_HOOK(q, step) ((void)0)
#endif
enum ingress_step {
  INGRESS_STEP_CLAIM_LOADED, /* free_head, free_tail and free[h] read; claim CAS next */
  INGRESS_STEP_CLAIMED,      /* the slot is ours; nothing written yet */
  INGRESS_STEP_FILLED,       /* header and payload written; not published */
  INGRESS_STEP_CELL_LOADED,  /* cell at ready_tail seen EMPTY; publish CAS next */
  INGRESS_STEP_PUBLISHED,    /* cell FULL; ready_tail not yet moved past it */
  INGRESS_STEPS
};

struct slot_header {
  uint32_t len;
  uint32_t epoch;
  uint32_t producer_tag;
  uint32_t reserved;
};
_Static_assert(sizeof(struct slot_header) == FXT_INGRESS_SLOT_HEADER, "slot header size");

static inline unsigned char *storage(const struct fxt_ingress *q)
{
  return (unsigned char *)((uintptr_t)q + (uintptr_t)(intptr_t)q->storage_off);
}

static inline _Atomic uint32_t *ready_cells(const struct fxt_ingress *q)
{
  return (_Atomic uint32_t *)(void *)storage(q);
}

static inline _Atomic uint32_t *free_cells(const struct fxt_ingress *q)
{
  return (_Atomic uint32_t *)(void *)(storage(q) + (size_t)q->slots * 4);
}

static inline struct slot_header *slot_at(const struct fxt_ingress *q, uint32_t s)
{
  return (struct slot_header *)(void *)(storage(q) + (size_t)q->slots * 8 +
                                        (size_t)s * q->stride);
}

static inline uint32_t cell_empty(const struct fxt_ingress *q, uint32_t pos)
{
  return (pos & ~(q->slots - 1)) << 1;
}

static inline bool cell_is_full(const struct fxt_ingress *q, uint32_t c, uint32_t pos)
{
  return (c & ~(q->slots - 1)) == (cell_empty(q, pos) | q->slots);
}

/* True when cell value c shows that position pos has been published: FULL(pos, s), or any
 * state of a later lap (pos was published and popped since). False for EMPTY(pos) and for a
 * stale value of an earlier lap. Laps are compared by difference of their tags. */
static inline bool cell_passed(const struct fxt_ingress *q, uint32_t c, uint32_t pos)
{
  uint32_t d = (c & ~(2 * q->slots - 1)) - cell_empty(q, pos); /* a multiple of 2N */
  return d == 0 ? (c & q->slots) != 0 : d < 0x80000000u;
}

static inline uint32_t clamp(uint32_t v, uint32_t max)
{
  return v <= max ? v : 0; /* a difference that went "negative" in a racy snapshot */
}

int fxt_ingress_init(struct fxt_ingress *q, void *storage_, size_t storage_size,
                     uint32_t slot_payload)
{
  if (storage_ == NULL || ((uintptr_t)storage_ & 7) != 0 || slot_payload == 0 ||
      slot_payload > FXT_INGRESS_MAX_PAYLOAD)
    return FXT_EINVAL;
  size_t per_slot = FXT_INGRESS_STORAGE_SIZE(1, slot_payload);
  size_t n = storage_size / per_slot;
  if (n == 0 || n > FXT_INGRESS_MAX_SLOTS || (n & (n - 1)) != 0 || storage_size % per_slot != 0)
    return FXT_EINVAL;
  q->slots = (uint32_t)n;
  q->payload = slot_payload;
  q->stride = (uint32_t)(per_slot - 8);
  q->reserved = 0;
  q->storage_off = (int64_t)((intptr_t)storage_ - (intptr_t)q);
  _Atomic uint32_t *ready = ready_cells(q), *free_ = free_cells(q);
  for (uint32_t i = 0; i < q->slots; i++) {
    atomic_init(&ready[i], cell_empty(q, i));
    atomic_init(&free_[i], i);
  }
  atomic_init(&q->free_head, 0);
  atomic_init(&q->ready_tail, 0);
  atomic_init(&q->oversize, 0);
  atomic_init(&q->full, 0);
  atomic_init(&q->free_tail, q->slots); /* every slot is free */
  atomic_init(&q->ready_head, 0);
  return 0;
}

/* ---- producers ----------------------------------------------------------------------- */

/* Takes a free slot. Returns its index, or q->slots when none is free. */
static uint32_t claim(struct fxt_ingress *q)
{
  _Atomic uint32_t *free_ = free_cells(q);
  uint32_t mask = q->slots - 1;
  uint32_t h = atomic_load_explicit(&q->free_head, memory_order_acquire); /* (2) */
  for (;;) {
    uint32_t t = atomic_load_explicit(&q->free_tail, memory_order_acquire); /* (1) */
    if (t == h)
      return q->slots; /* empty free list: every slot is owned, queued or being popped */
    uint32_t s = atomic_load_explicit(&free_[h & mask], memory_order_relaxed); /* (1) */
    FXT_INGRESS_RACE_HOOK(q, INGRESS_STEP_CLAIM_LOADED);
    /* Success: acq_rel (2). Failure: another push (maybe one nested in ours) took position
     * h; h becomes the current free_head, loaded with acquire (2). */
    if (fxt_cas_weak(&q->free_head, &h, h + 1, memory_order_acq_rel, memory_order_acquire))
      return s;
  }
}

/* Publishes slot s at the next ready-queue position. Never fails: we own a slot, so at most
 * N - 1 cells are FULL and the cell at ready_tail is (or is about to be seen) EMPTY. */
static void publish(struct fxt_ingress *q, uint32_t s)
{
  _Atomic uint32_t *ready = ready_cells(q);
  uint32_t mask = q->slots - 1;
  uint32_t t = atomic_load_explicit(&q->ready_tail, memory_order_relaxed); /* (3): a hint */
  for (;;) {
    _Atomic uint32_t *cell = &ready[t & mask];
    uint32_t c = atomic_load_explicit(cell, memory_order_relaxed);
    if (c == cell_empty(q, t)) {
      FXT_INGRESS_RACE_HOOK(q, INGRESS_STEP_CELL_LOADED);
      /* Release pairs with the consumer's acquire load of the cell (3). On failure another
       * push filled position t first: look at the cell again. */
      if (fxt_cas_strong(cell, &c, cell_empty(q, t) | q->slots | s, memory_order_release,
                         memory_order_relaxed)) {
        FXT_INGRESS_RACE_HOOK(q, INGRESS_STEP_PUBLISHED);
        /* Best effort: if a later push already moved ready_tail for us, leave it. */
        fxt_cas_strong(&q->ready_tail, &t, t + 1, memory_order_relaxed, memory_order_relaxed);
        return;
      }
    } else if (cell_passed(q, c, t)) {
      /* Position t is published (the cell is FULL, or already popped and in a later lap) but
       * ready_tail was not moved past it: its publisher is between its two compare-and-swaps,
       * perhaps suspended under us or gone for good. Move ready_tail on for it (at most one
       * position: nobody publishes beyond ready_tail). On failure t becomes the current
       * ready_tail (ours was stale). */
      if (fxt_cas_strong(&q->ready_tail, &t, t + 1, memory_order_relaxed, memory_order_relaxed))
        t++;
    } else {
      /* A stale value of an earlier lap: the consumer has reset this cell already (a
       * publisher owns a slot, so position t - N is popped), we have not seen it yet. This
       * waits for nothing but the cache: the store was made. Look again. */
      t = atomic_load_explicit(&q->ready_tail, memory_order_relaxed);
    }
  }
}

int fxt_ingress_push(struct fxt_ingress *q, const void *rec, uint32_t len, uint32_t epoch,
                     uint32_t producer_tag)
{
  if (FXT_UNLIKELY(len > q->payload)) {
    fxt_fetch_add(&q->oversize, 1, memory_order_relaxed);
    return FXT_EMSGSIZE;
  }
  if (FXT_UNLIKELY(rec == NULL && len != 0))
    return FXT_EINVAL;
  uint32_t s = claim(q);
  if (FXT_UNLIKELY(s == q->slots)) {
    fxt_fetch_add(&q->full, 1, memory_order_relaxed);
    return FXT_ENOSPC;
  }
  FXT_INGRESS_RACE_HOOK(q, INGRESS_STEP_CLAIMED);
  /* The slot is ours alone until publish: plain stores, made visible by (3). */
  struct slot_header *h = slot_at(q, s);
  h->len = len;
  h->epoch = epoch;
  h->producer_tag = producer_tag;
  if (len != 0)
    memcpy(h + 1, rec, len);
  FXT_INGRESS_RACE_HOOK(q, INGRESS_STEP_FILLED);
  publish(q, s);
  return 0;
}

/* ---- consumer ------------------------------------------------------------------------ */

uint32_t fxt_ingress_pop_batch(struct fxt_ingress *q, fxt_ingress_fn fn, void *ctx, uint32_t max)
{
  _Atomic uint32_t *ready = ready_cells(q), *free_ = free_cells(q);
  uint32_t mask = q->slots - 1;
  uint32_t head = atomic_load_explicit(&q->ready_head, memory_order_relaxed); /* ours */
  uint32_t ftail = atomic_load_explicit(&q->free_tail, memory_order_relaxed); /* ours */
  uint32_t n = 0;
  while (n < max) {
    _Atomic uint32_t *cell = &ready[head & mask];
    /* Acquire pairs with the publisher's release compare-and-swap (3). */
    uint32_t c = atomic_load_explicit(cell, memory_order_acquire);
    if (!cell_is_full(q, c, head))
      break; /* nothing published at head (yet) */
    uint32_t s = c & mask;
    const struct slot_header *h = slot_at(q, s);
    fn(ctx, h + 1, h->len, h->epoch, h->producer_tag);
    /* The slot's reads are done. Reset the cell for the next lap (no data: relaxed (3)),
     * then hand the slot back: index store, then release store of free_tail (1). */
    atomic_store_explicit(cell, cell_empty(q, head + q->slots), memory_order_relaxed);
    head++;
    atomic_store_explicit(&q->ready_head, head, memory_order_relaxed);
    atomic_store_explicit(&free_[ftail & mask], s, memory_order_relaxed);
    ftail++;
    atomic_store_explicit(&q->free_tail, ftail, memory_order_release); /* (1) */
    n++;
  }
  return n;
}

/* Publications so far: ready_tail, plus one if position ready_tail is already published (its
 * publisher has not moved ready_tail yet). */
static uint32_t published(const struct fxt_ingress *q)
{
  struct fxt_ingress *m = (struct fxt_ingress *)q; /* atomic loads need a non-const object */
  uint32_t t = atomic_load_explicit(&m->ready_tail, memory_order_relaxed);
  uint32_t c = atomic_load_explicit(&ready_cells(q)[t & (q->slots - 1)], memory_order_relaxed);
  return t + (cell_passed(q, c, t) ? 1u : 0u);
}

uint32_t fxt_ingress_pending(const struct fxt_ingress *q)
{
  struct fxt_ingress *m = (struct fxt_ingress *)q;
  uint32_t head = atomic_load_explicit(&m->ready_head, memory_order_relaxed);
  return clamp(published(q) - head, q->slots);
}

void fxt_ingress_stats(const struct fxt_ingress *q, struct fxt_ingress_stats *st)
{
  struct fxt_ingress *m = (struct fxt_ingress *)q;
  /* Loaded in the order the positions are passed (pop, publish, claim, free), so that each
   * difference is of a later value minus an earlier one when nothing is stale. */
  uint32_t popped = atomic_load_explicit(&m->ready_head, memory_order_relaxed);
  uint32_t pub = published(q);
  uint32_t claims = atomic_load_explicit(&m->free_head, memory_order_relaxed);
  uint32_t ftail = atomic_load_explicit(&m->free_tail, memory_order_relaxed);
  st->slots = q->slots;
  st->slot_payload = q->payload;
  st->free = clamp(ftail - claims, q->slots);
  st->in_flight = clamp(claims - pub, q->slots);
  st->pending = clamp(pub - popped, q->slots);
  st->popped = popped;
  st->oversize = atomic_load_explicit(&m->oversize, memory_order_relaxed);
  st->full = atomic_load_explicit(&m->full, memory_order_relaxed);
}
