/* ring.c - SPSC byte ring of FXT records (see include/fxtrace/ring.h for the contract).
 *
 * Memory ordering, in one place:
 *
 *  (1) commit -> read. The producer writes a record's words with relaxed atomic stores, then
 *      publishes it with a release store of head (fxt_ring_res_commit). Readers load head with
 *      acquire (read, drain, iterator): everything before head is fully written for them.
 *
 *  (2) read -> reuse. The consumer finishes reading records, then moves tail past them with a
 *      release store (discard mode) or a release compare-and-swap (overwrite mode). The
 *      producer loads tail with acquire before writing into the space that move freed, so the
 *      consumer's reads happen before the producer's overwrites.
 *
 *  (3) overwrite -> optimistic readers. Whenever the producer's view of tail advances (it
 *      loaded a newer tail, or it moved tail itself with a compare-and-swap to overwrite old
 *      records), it issues a release fence before writing into the space it gained. A reader
 *      that copies a record with relaxed loads issues an acquire fence after the copy and then
 *      checks tail (a compare-and-swap in fxt_ring_read_staged, a load in the iterator). If
 *      any word it copied came from a store the producer made into gained space, the two
 *      fences synchronize, so the tail move that gave the producer that space happens before
 *      the check: the check sees tail past the record and the copy is thrown away. A copy that
 *      passes the check is therefore untorn (the seqlock argument, with tail as the sequence).
 *
 * Storage is accessed only through atomics (relaxed), so optimistic readers never race in the
 * C11 sense; on x86-64 and AArch64 relaxed word stores and loads are plain moves. The unit is
 * the widest lock-free word: 8 bytes on 64-bit targets, 4 bytes elsewhere.
 */
#include <fxtrace/ring.h>

#include <stdatomic.h>
#include <stdbool.h>

#include "mem.h"
#include "rmw.h"

typedef fxt_ring_unit unit_t;
#if UINTPTR_MAX > 0xffffffffu
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics must be lock-free");
#endif
_Static_assert(ATOMIC_INT_LOCK_FREE == 2 || FXT_RMW_HOOKED,
               "32-bit atomics must be lock-free, or their read-modify-writes hooked (rmw.h)");
_Static_assert(sizeof(_Atomic unit_t) == sizeof(unit_t), "atomic unit has the plain size");
_Static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t), "C++ view of the struct matches");
_Static_assert(FXT_RING_STAGE_SIZE % 8 == 0, "stage is whole words");
_Static_assert(FXT_CACHE_LINE >= 8, "FXT_CACHE_LINE: 8 or more (a power of two)");

#define UNITS_PER_WORD (8 / sizeof(unit_t))

/* External definitions of the inline fast paths in fxtrace/ring.h. */
extern inline void fxt_ring_put_word(unsigned char *base, uint32_t off, uint64_t w);
extern inline uint32_t fxt_ring_record_bytes(uint64_t header);
extern inline int fxt_ring_reserve(struct fxt_ring *r, uint32_t nbytes, struct fxt_ring_res *res);
extern inline int fxt_ring_res_write(struct fxt_ring_res *res, const void *src, uint32_t len);
extern inline int fxt_ring_res_commit(struct fxt_ring_res *res);

static inline _Atomic unit_t *slot(unsigned char *base, uint32_t off)
{
  return (_Atomic unit_t *)(void *)(base + off);
}

static inline uint64_t get_word(unsigned char *base, uint32_t off)
{
  _Atomic unit_t *p = slot(base, off);
  unit_t u[UNITS_PER_WORD];
  uint64_t w;
  for (unsigned i = 0; i < UNITS_PER_WORD; i++)
    u[i] = atomic_load_explicit(&p[i], memory_order_relaxed);
  memcpy(&w, u, sizeof(w));
  return w;
}

/* Whether overrun_records counts the record whose header this is (fxt_ring_set_uncounted). */
static inline uint32_t counted(const struct fxt_ring *r, uint64_t header)
{
  return (header & r->uncounted_mask) != r->uncounted_match;
}

static inline unsigned char *storage(const struct fxt_ring *r)
{
  return (unsigned char *)((uintptr_t)r + (uintptr_t)(intptr_t)r->storage_off);
}

/* Copies n bytes (whole words) from ring position pos into dst with relaxed loads. */
static void load_words(const struct fxt_ring *r, uint32_t pos, void *dst, uint32_t n)
{
  unsigned char *base = storage(r), *d = dst;
  uint32_t mask = r->size - 1;
  for (uint32_t i = 0; i < n; i += 8) {
    uint64_t w = get_word(base, (pos + i) & mask);
    memcpy(d + i, &w, 8);
  }
}

int fxt_ring_init(struct fxt_ring *r, void *storage_, uint32_t size, uint32_t flags)
{
  if (size < FXT_RING_MIN_SIZE || size > FXT_RING_MAX_SIZE || (size & (size - 1)) != 0)
    return FXT_EINVAL;
  if (storage_ == NULL || ((uintptr_t)storage_ & 7) != 0 || (flags & ~FXT_RING_OVERWRITE) != 0)
    return FXT_EINVAL;
  r->size = size;
  r->flags = flags;
  r->storage_off = (int64_t)((intptr_t)storage_ - (intptr_t)r);
  r->uncounted_mask = 0;
  r->uncounted_match = 1; /* (h & 0) is never 1: every record counts */
  atomic_init(&r->head, 0);
  r->tail_cache = 0;
  atomic_init(&r->overrun_records, 0);
  atomic_init(&r->overrun_bytes, 0);
  atomic_init(&r->tail, 0);
  atomic_init(&r->lost_records, 0);
  atomic_init(&r->lost_bytes, 0);
  return 0;
}

void fxt_ring_set_uncounted(struct fxt_ring *r, uint64_t mask, uint64_t match)
{
  r->uncounted_mask = mask;
  r->uncounted_match = match;
}

/* ---- producer ---------------------------------------------------------------------------- */

/* Overwrite mode: the whole records from *to on that must go for room bytes to fit after head
 * (room <= size); *to moves past them and *records counts those overrun_records counts. The
 * watched ones (hooks may be NULL) are shown to the hook first. False when a committed record
 * header is invalid. */
static inline bool pass_over(const struct fxt_ring *r, uint32_t head, uint32_t room, uint32_t *to,
                             uint32_t *records, const struct fxt_ring_pass_hooks *hooks)
{
  unsigned char *base = storage(r);
  uint32_t mask = r->size - 1, t = *to;
  while (room > r->size - (head - t) && t != head) {
    /* Records between tail and head are ours and committed: plain reading is safe. */
    uint64_t h = get_word(base, t & mask);
    uint32_t n = fxt_ring_record_bytes(h);
    if (n == 0 || n > head - t)
      return false;
    *records += counted(r, h);
    if (hooks && hooks->watched && (h & hooks->watch_mask) == hooks->watch_match)
      hooks->watched(hooks->ctx, r, t, h, n);
    t += n;
  }
  *to = t;
  return true;
}

/* Overwrite mode: moves tail forward by whole records until nbytes fit after head, counting
 * them as overrun. Returns 0 with the tail the producer now works against in *tail_out, or
 * FXT_EBADMSG when a committed record header is invalid. */
static int make_room(struct fxt_ring *r, uint32_t head, uint32_t nbytes, uint32_t *tail_out)
{
  /* Acquire pairs with the consumer's release compare-and-swap (2). */
  uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
  while (nbytes > r->size - (head - tail)) {
    uint32_t t = tail, records = 0;
    if (!pass_over(r, head, nbytes, &t, &records, NULL))
      return FXT_EBADMSG;
    /* Acquire on both outcomes: on success for (2) against an earlier consumer claim, on
     * failure because the consumer's newer tail is what we continue from. */
    if (fxt_cas_weak(&r->tail, &tail, t, memory_order_acquire, memory_order_acquire)) {
      /* The producer is the only writer of the overrun counters. */
      FXT_ADD_OWNED(&r->overrun_records, records);
      FXT_ADD_OWNED(&r->overrun_bytes, t - tail);
      tail = t;
    }
  }
  *tail_out = tail;
  return 0;
}

/* The same move as make_room's, for a caller that states each move somewhere before it is
 * made (the tracer: in its session file, so that a death between the compare-and-swap and the
 * counters leaves no record overwritten and counted nowhere) and follows what the records
 * passed over say (watched). Producer side only (the owner thread, or whoever acts as the
 * producer once it is gone): the same single-writer rules as make_room for the counters, the
 * same orders for the tail: acquire on both outcomes of the compare-and-swap (pairs with the
 * consumer's release when it claims, (2)); the release fence before the gained space is
 * written is reserve_slow's, which runs because tail_cache is older; and release on success
 * besides, for what the moving hook stored before it (the tracer's CPU note, src/base/cpunote.h
 * (N1)). */
int fxt_ring_pass_oldest(struct fxt_ring *r, uint32_t need, uint32_t batch_shift,
                         const struct fxt_ring_pass_hooks *hooks)
{
  if (!(r->flags & FXT_RING_OVERWRITE))
    return FXT_EINVAL;
  if (need > r->size)
    return FXT_ENOSPC;
  uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed); /* ours */
  uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire); /* (2) */
  uint32_t batch = need > r->size >> batch_shift ? need : r->size >> batch_shift;
  while (need > r->size - (head - tail)) {
    struct fxt_ring_pass p = {tail, tail, 0, 0, 0};
    if (hooks && hooks->begin)
      hooks->begin(hooks->ctx, tail);
    if (!pass_over(r, head, batch, &p.to, &p.records, hooks))
      return FXT_EBADMSG;
    p.overrun_records = atomic_load_explicit(&r->overrun_records, memory_order_relaxed);
    p.overrun_bytes = atomic_load_explicit(&r->overrun_bytes, memory_order_relaxed);
    if (hooks && hooks->moving)
      hooks->moving(hooks->ctx, &p);
    if (fxt_cas_strong(&r->tail, &tail, p.to, memory_order_acq_rel, memory_order_acquire)) {
      /* Single writer: load + store, no read-modify-write needed. */
      atomic_store_explicit(&r->overrun_records, p.overrun_records + p.records,
                            memory_order_relaxed);
      atomic_store_explicit(&r->overrun_bytes, p.overrun_bytes + (p.to - p.from),
                            memory_order_relaxed);
      tail = p.to;
    }
    /* On failure the consumer claimed meanwhile: tail is its new position; look again. */
    if (hooks && hooks->moved)
      hooks->moved(hooks->ctx, &p);
  }
  return 0;
}

int fxt_ring_reserve_slow(struct fxt_ring *r, uint32_t nbytes, struct fxt_ring_res *res)
{
  if (nbytes == 0 || (nbytes & 7) != 0)
    return FXT_EINVAL;
  if (nbytes > r->size)
    return FXT_ENOSPC;
  uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed); /* ours */
  if (nbytes > r->size - (head - r->tail_cache)) {
    uint32_t tail;
    if (r->flags & FXT_RING_OVERWRITE) {
      int rc = make_room(r, head, nbytes, &tail);
      if (rc < 0)
        return rc;
    } else {
      /* Acquire pairs with the consumer's release store of tail (2). */
      tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    }
    /* Our view of tail may have advanced: release fence before anything is written into the
     * gained space (now or by a later reservation that fits the cached tail); pairs with the
     * acquire fences of optimistic readers (3). A compiler barrier on x86. */
    atomic_thread_fence(memory_order_release);
    r->tail_cache = tail;
    if (nbytes > r->size - (head - tail))
      return FXT_ENOSPC;
  }
  /* nbytes, a non-zero multiple of 8, fits as of tail_cache now: the fast path's check
   * passes, and it fills *res (one fill for both paths; head is ours, unchanged). */
  return fxt_ring_reserve(r, nbytes, res);
}

int fxt_ring_res_write_slow(struct fxt_ring_res *res, const void *src, uint32_t len)
{
  const unsigned char *s = src;
  if (len > res->end - res->pos - res->partial_len)
    return FXT_EOVERFLOW;
  if (res->partial_len != 0) {
    uint32_t take = 8 - res->partial_len;
    if (take > len)
      take = len;
    memcpy((unsigned char *)&res->partial + res->partial_len, s, take);
    res->partial_len += take;
    s += take;
    len -= take;
    if (res->partial_len < 8)
      return 0;
    fxt_ring_put_word(res->base, res->pos & res->mask, res->partial);
    res->pos += 8;
    res->partial_len = 0;
    res->partial = 0;
  }
  for (; len >= 8; len -= 8, s += 8, res->pos += 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    fxt_ring_put_word(res->base, res->pos & res->mask, w);
  }
  if (len != 0) {
    memcpy(&res->partial, s, len);
    res->partial_len = len;
  }
  return 0;
}

void fxt_ring_res_finish_slow(struct fxt_ring_res *res)
{
  if (res->partial_len != 0) {
    fxt_ring_put_word(res->base, res->pos & res->mask, res->partial);
    res->pos += 8;
    res->partial_len = 0;
  }
  for (; res->pos != res->end; res->pos += 8)
    fxt_ring_put_word(res->base, res->pos & res->mask, 0);
}

/* ---- consumer, discard mode ------------------------------------------------------------ */

static int64_t read_discard(struct fxt_ring *r, fxt_copy_fn copy_fn, void *ctx,
                            uint32_t max_bytes)
{
  unsigned char *base = storage(r);
  uint32_t size = r->size, mask = size - 1;
  uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed); /* ours */
  uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire); /* (1) */
  uint32_t pos = tail;   /* next record to look at */
  uint32_t piece = tail; /* start of the bytes not yet handed to copy_fn */
  uint32_t done = tail;  /* end of the last record handed over whole */

  while (pos != head) {
    uint32_t n = fxt_ring_record_bytes(get_word(base, pos & mask));
    if (n == 0 || n > head - pos) {
      if (pos == tail)
        return FXT_EBADMSG;
      break; /* hand over what precedes; the next read reports the damage */
    }
    if (n > max_bytes - (pos - tail))
      break;
    uint32_t first = size - (pos & mask); /* bytes left before the end of storage */
    if (n > first) {
      /* The record wraps: its first part ends the current piece. */
      if (copy_fn(ctx, piece - tail, base + (piece & mask), pos + first - piece) != 0)
        goto out;
      piece = pos + first;
      done = pos;
    }
    pos += n;
    if ((pos & mask) == 0) {
      /* The record ends at the end of storage: the piece cannot grow past it. */
      if (copy_fn(ctx, piece - tail, base + (piece & mask), pos - piece) != 0)
        goto out;
      piece = done = pos;
    }
  }
  if (pos != piece && copy_fn(ctx, piece - tail, base + (piece & mask), pos - piece) == 0)
    done = pos;
out:
  if (done != tail)
    atomic_store_explicit(&r->tail, done, memory_order_release); /* (2) */
  return done - tail;
}

/* ---- consumer, overwrite mode ---------------------------------------------------------- */

static void count_lost(struct fxt_ring *r, uint32_t records, uint32_t bytes)
{
  /* The consumer is the only writer of the lost counters. */
  FXT_ADD_OWNED(&r->lost_records, records);
  FXT_ADD_OWNED(&r->lost_bytes, bytes);
}

static int64_t read_overwrite(struct fxt_ring *r, unsigned char *stage, uint32_t stage_size,
                              fxt_copy_fn copy_fn, void *ctx, uint32_t max_bytes)
{
  unsigned char *base = storage(r);
  uint32_t mask = r->size - 1;
  uint32_t total = 0;       /* bytes consumed by this call */
  uint32_t out = 0;         /* bytes handed to copy_fn by this call */
  uint32_t batch = stage_size; /* bytes to stage before claiming: halved after each lost race
                                * with the producer, so a reader that a lapping producer keeps
                                * overtaking still makes progress one record at a time */

  for (;;) {
    uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire); /* (1) */
    uint32_t room = max_bytes - total < stage_size ? max_bytes - total : stage_size;
    uint32_t pos = tail, records = 0, n = 0;
    bool bad = false;

    /* Stage whole records. The producer may be overwriting them as we copy: what is read here
     * is only trusted once the claim below succeeds. */
    while (pos != head && head - pos <= r->size) {
      n = fxt_ring_record_bytes(get_word(base, pos & mask));
      if (n == 0 || n > head - pos) {
        bad = true;
        break;
      }
      if (n > room - (pos - tail) || (records > 0 && n > batch - (pos - tail)))
        break;
      load_words(r, pos, stage + (pos - tail), n);
      pos += n;
      records++;
      if (pos - tail >= batch)
        break;
    }
    /* Acquire fence after the copy, before the check: pairs with the producer's release
     * fence (3). */
    atomic_thread_fence(memory_order_acquire);

    if (records == 0) {
      uint32_t now = atomic_load_explicit(&r->tail, memory_order_relaxed);
      if (now != tail)
        continue; /* the producer moved on while we looked: look again */
      if (pos == head)
        break; /* empty */
      if (bad || head - pos > r->size)
        return total ? (int64_t)total : FXT_EBADMSG;
      if (n > stage_size && n <= max_bytes - total) {
        /* Too large to stage: claim it unread and count it. */
        if (fxt_cas_strong(&r->tail, &tail, tail + n, memory_order_release, memory_order_relaxed)) {
          count_lost(r, 1, n);
          total += n;
        }
        continue;
      }
      break; /* the oldest record does not fit in what is left of max_bytes */
    }

    /* Claim the staged records. Release pairs with the producer's acquire load of tail (2):
     * our copy happens before it reuses the space. Failure: the producer moved tail first and
     * counted what it overwrote; restage from the new tail. */
    if (!fxt_cas_strong(&r->tail, &tail, pos, memory_order_release, memory_order_relaxed)) {
      batch = batch / 2 > 8 ? (batch / 2) & ~7u : 8;
      continue;
    }
    uint32_t bytes = pos - tail;
    total += bytes;
    if (copy_fn(ctx, out, stage, bytes) != 0) {
      count_lost(r, records, bytes);
      break;
    }
    out += bytes;
    if (batch < stage_size)
      batch = batch * 2 < stage_size ? batch * 2 : stage_size;
  }
  return total;
}

int64_t fxt_ring_read_staged(struct fxt_ring *r, void *stage, uint32_t stage_size,
                             fxt_copy_fn copy_fn, void *ctx, uint32_t max_bytes)
{
  if (r->flags & FXT_RING_OVERWRITE)
    return read_overwrite(r, stage, stage_size & ~7u, copy_fn, ctx, max_bytes);
  return read_discard(r, copy_fn, ctx, max_bytes);
}

int64_t fxt_ring_read(struct fxt_ring *r, fxt_copy_fn copy_fn, void *ctx, uint32_t max_bytes)
{
  if (r->flags & FXT_RING_OVERWRITE) {
    _Alignas(8) unsigned char stage[FXT_RING_STAGE_SIZE];
    return read_overwrite(r, stage, sizeof(stage), copy_fn, ctx, max_bytes);
  }
  return read_discard(r, copy_fn, ctx, max_bytes);
}

uint32_t fxt_ring_drain(struct fxt_ring *r)
{
  uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
  uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire); /* (1) */
  if (!(r->flags & FXT_RING_OVERWRITE)) {
    atomic_store_explicit(&r->tail, head, memory_order_release); /* (2) */
    return head - tail;
  }
  /* Overwrite mode: the producer may move tail too. Head never falls behind tail, so moving
   * tail to a head we loaded after it is always a step forward. */
  while (!fxt_cas_weak(&r->tail, &tail, head, memory_order_release, memory_order_relaxed))
    head = atomic_load_explicit(&r->head, memory_order_acquire);
  return head - tail;
}

/* ---- non-consuming iterator ------------------------------------------------------------ */

void fxt_ring_iter_begin(const struct fxt_ring *r, struct fxt_ring_iter *it)
{
  it->ring = r;
  it->pos = atomic_load_explicit(&((struct fxt_ring *)r)->tail, memory_order_acquire);
  it->end = atomic_load_explicit(&((struct fxt_ring *)r)->head, memory_order_acquire); /* (1) */
  it->skipped_bytes = 0;
}

/* After an acquire fence: true when tail has moved past the record at it->pos, in which case
 * the iterator is moved to the new tail (or the end). */
static bool iter_resync(struct fxt_ring_iter *it)
{
  uint32_t tail = atomic_load_explicit(&((struct fxt_ring *)it->ring)->tail,
                                       memory_order_relaxed);
  if (it->pos - tail <= it->ring->size)
    return false; /* tail is at or behind pos: the record was intact while we read it */
  uint32_t skip = tail - it->pos < it->end - it->pos ? tail - it->pos : it->end - it->pos;
  it->skipped_bytes += skip;
  it->pos += skip;
  return true;
}

int fxt_ring_iter_next(struct fxt_ring_iter *it, void *buf, uint32_t buf_size, uint32_t *len)
{
  const struct fxt_ring *r = it->ring;
  while (it->pos != it->end) {
    uint32_t n = fxt_ring_record_bytes(get_word(storage(r), it->pos & (r->size - 1)));
    bool bad = n == 0 || n > it->end - it->pos;
    if (!bad && n <= buf_size)
      load_words(r, it->pos, buf, n);
    atomic_thread_fence(memory_order_acquire); /* (3) */
    if (iter_resync(it))
      continue;
    if (bad)
      return FXT_EBADMSG;
    *len = n;
    if (n > buf_size)
      return FXT_ENOBUFS;
    it->pos += n;
    return 1;
  }
  return 0;
}

uint64_t fxt_ring_word(const struct fxt_ring *r, uint32_t pos)
{
  return get_word(storage(r), pos & (r->size - 1));
}

uint32_t fxt_ring_producer_used(struct fxt_ring *r)
{
  uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed); /* ours */
  /* Acquire pairs with the consumer's release of tail (2); the release fence keeps the
   * protocol of (3): stores into space this view gained come after it. */
  uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
  atomic_thread_fence(memory_order_release);
  r->tail_cache = tail;
  return head - tail;
}

void fxt_ring_stats(const struct fxt_ring *r, struct fxt_ring_stats *st)
{
  struct fxt_ring *m = (struct fxt_ring *)r; /* atomics loads need a non-const object */
  uint32_t tail = atomic_load_explicit(&m->tail, memory_order_relaxed);
  uint32_t head = atomic_load_explicit(&m->head, memory_order_relaxed);
  st->size = r->size;
  st->used = head - tail <= r->size ? head - tail : 0;
  st->overrun_records = atomic_load_explicit(&m->overrun_records, memory_order_relaxed);
  st->overrun_bytes = atomic_load_explicit(&m->overrun_bytes, memory_order_relaxed);
  st->lost_records = atomic_load_explicit(&m->lost_records, memory_order_relaxed);
  st->lost_bytes = atomic_load_explicit(&m->lost_bytes, memory_order_relaxed);
}
