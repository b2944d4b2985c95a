/* fxtrace/ring.h - single-producer single-consumer byte ring of FXT records.
 *
 * The ring lives over caller-provided storage: a power of two from 64 bytes to 2 GiB, 8-byte
 * aligned. Records are whole 8-byte words; the ring finds their boundaries from the FXT header
 * word at the start of each one (size bits [4..15], or [4..35] for a large record, type 15), so
 * every reservation must start with a valid FXT header whose size matches the bytes reserved
 * (one reservation may hold several records back to back, each with its header).
 *
 * The control block (struct fxt_ring) holds positions and sizes only, no pointers: the storage
 * is found through its offset from the control block, so control block and storage may live
 * together in shared or file-backed memory mapped at different addresses.
 *
 * Positions are free-running uint32_t byte counters (storage <= 2 GiB), compared only by
 * difference, so every atomic is lock-free on 32-bit targets too.
 *
 * Modes (flags to fxt_ring_init):
 *  - discard (default): a reservation that does not fit fails with FXT_ENOSPC; the producer
 *    path has no atomic read-modify-write.
 *  - FXT_RING_OVERWRITE (flight recorder): a reservation that does not fit advances the tail by
 *    whole records (a compare-and-swap, only then) and counts them as overrun. A concurrent
 *    reader stages records with relaxed word loads and claims them with a compare-and-swap on
 *    the tail; if the producer moved the tail first, the staged copy is thrown away and read
 *    again. The copy callback only ever sees claimed, intact records. The producer may also
 *    move the tail ahead of its need, in steps its caller sees (fxt_ring_pass_oldest).
 *    Records whose header matches a pattern the embedder sets (fxt_ring_set_uncounted: the
 *    tracer's own bookkeeping records) are overwritten like any other but not counted in
 *    overrun_records.
 *
 * Who may call what concurrently (P = the one producer, C = the one consumer):
 *
 *   operation              side  runs concurrently with
 *   fxt_ring_reserve         P   C's read / drain / iterator / stats
 *   fxt_ring_res_write       P   same
 *   fxt_ring_res_commit      P   same
 *   fxt_ring_producer_used   P   same
 *   fxt_ring_pass_oldest     P   same (overwrite mode)
 *   fxt_ring_room            P   same (C only, inline)
 *   fxt_ring_word            P   same (a position it committed and still owns)
 *   fxt_ring_read            C   P's operations
 *   fxt_ring_drain           C   P's operations
 *   fxt_ring_iter_*          any reader, with P and C (never consumes; see fxt_ring_iter_next)
 *   fxt_ring_stats           anyone
 *   fxt_ring_init            nobody
 *   fxt_ring_set_uncounted   nobody (after fxt_ring_init, before the first reservation)
 *
 * At most one producer and one consumer at a time; the embedder provides that exclusivity
 * (interrupts off in a kernel, one thread per buffer in user space). One reservation at a time:
 * reserve, write, commit, then the next reserve.
 *
 * Embedder API (docs/architecture.md, "Public headers").
 */
#ifndef FXTRACE_RING_H
#define FXTRACE_RING_H

#include "common.h"
#include "detail/atomic.h"
#include "detail/fxt_words.h"
#include "errors.h"

#define FXT_RING_MIN_SIZE 64u
#define FXT_RING_MAX_SIZE 0x80000000u

/* fxt_ring_init flags */
#define FXT_RING_DISCARD 0u
#define FXT_RING_OVERWRITE 1u

/* Bytes of stack fxt_ring_read() uses to stage records in overwrite mode; a record larger
 * than this needs fxt_ring_read_staged() with a larger stage. */
#ifndef FXT_RING_STAGE_SIZE
#define FXT_RING_STAGE_SIZE 4096u
#endif

/* The control block. Treat every member as private; the definition is public so a ring can be
 * placed in static, per-CPU or shared storage. Layout: one read-only block, then one cache line
 * per writer side. */
struct fxt_ring {
  /* Written by fxt_ring_init (and fxt_ring_set_uncounted) only; read by everyone. */
  uint32_t size;       /* storage bytes, a power of two */
  uint32_t flags;      /* FXT_RING_* */
  int64_t storage_off; /* storage address minus the address of this struct */
  /* Records whose header word h has (h & uncounted_mask) == uncounted_match are not counted
   * in overrun_records (fxt_ring_set_uncounted; fxt_ring_init: none). */
  uint64_t uncounted_mask, uncounted_match;

  /* Producer line: written by the producer only. */
  FXT_ALIGNAS(FXT_CACHE_LINE) FXT_ATOMIC(uint32_t) head; /* end of committed records.
        Release store in commit, pairs with the acquire loads in read / drain / iter. */
  uint32_t tail_cache;                   /* producer's last view of tail (discard mode) */
  FXT_ATOMIC(uint32_t) overrun_records;  /* free-running; relaxed stores by P, any reader */
  FXT_ATOMIC(uint32_t) overrun_bytes;    /* free-running; relaxed stores by P, any reader */

  /* Consumer line: tail is written by the consumer (and, in overwrite mode, by the producer
   * with a compare-and-swap); the lost counters by the consumer only. */
  FXT_ALIGNAS(FXT_CACHE_LINE) FXT_ATOMIC(uint32_t) tail; /* start of the oldest unread record.
        Discard mode: release store by C, pairs with P's acquire load in reserve (C finished
        reading before P reuses the space). Overwrite mode: see src/core/ring.c. */
  FXT_ATOMIC(uint32_t) lost_records; /* claimed by C but not delivered; free-running */
  FXT_ATOMIC(uint32_t) lost_bytes;
};

/* An open reservation: private to the producer, lives on its stack. */
struct fxt_ring_res {
  struct fxt_ring *ring;
  unsigned char *base; /* storage */
  uint32_t mask;       /* size - 1 */
  uint32_t pos;        /* next byte position to write (free-running) */
  uint32_t end;        /* position after the reservation */
  uint32_t partial_len; /* bytes collected in partial (0..7) */
  uint64_t partial;    /* bytes of an unfinished 8-byte word, in memory order */
};

/* Non-consuming iterator over committed records (for snapshots). */
struct fxt_ring_iter {
  const struct fxt_ring *ring;
  uint32_t pos;           /* next record to return */
  uint32_t end;           /* head when the iteration began */
  uint64_t skipped_bytes; /* bytes passed over because the tail moved past them */
};

/* Statistics; every counter is free-running modulo 2^32 (take differences). */
struct fxt_ring_stats {
  uint32_t size;            /* storage bytes */
  uint32_t used;            /* committed, unread bytes */
  uint32_t overrun_records; /* overwritten by the producer before being read (overwrite mode);
                             * records fxt_ring_set_uncounted names are not counted here, only
                             * in overrun_bytes */
  uint32_t overrun_bytes;
  uint32_t lost_records;    /* claimed by the consumer but not delivered (overwrite mode) */
  uint32_t lost_bytes;
};

/* copy_fn receives each contiguous piece of whole committed records: offset is where the piece
 * goes in the caller's output (the sum of the previous pieces' lengths in this call). A record
 * that wraps around the end of the storage arrives as two pieces. Non-zero return stops the
 * read; nothing after the last record that was copied whole is consumed. */
typedef int (*fxt_copy_fn)(void *ctx, uint32_t offset, const void *src, uint32_t len);

/* One move of the tail by fxt_ring_pass_oldest, as its hooks see it. */
struct fxt_ring_pass {
  uint32_t from;            /* the tail the move starts from */
  uint32_t to;              /* the tail after it: whole records passed over */
  uint32_t records;         /* records in [from, to) that overrun_records counts */
  uint32_t overrun_records; /* the ring's counters before the move */
  uint32_t overrun_bytes;
};

/* What the caller of fxt_ring_pass_oldest sees of each move, and when; every hook may be NULL.
 * They run on the producer, in its pass. */
struct fxt_ring_pass_hooks {
  void *ctx;
  /* Records whose header word h has (h & watch_mask) == watch_match are shown to watched. */
  uint64_t watch_mask, watch_match;
  /* A move starts at tail (loaded with acquire, or where the producer's last move left it). */
  void (*begin)(void *ctx, uint32_t tail);
  /* A watched record of `bytes` bytes at position pos, about to be passed over (committed:
   * fxt_ring_word reads its words). */
  void (*watched)(void *ctx, const struct fxt_ring *r, uint32_t pos, uint64_t header,
                  uint32_t bytes);
  /* Before the compare-and-swap that moves the tail from p->from to p->to: what the caller
   * stores here happens before the move for whoever acquires the new tail. */
  void (*moving)(void *ctx, const struct fxt_ring_pass *p);
  /* After it, whether it moved the tail or the consumer had claimed first (the next move
   * then starts from the consumer's tail). */
  void (*moved)(void *ctx, const struct fxt_ring_pass *p);
};

FXT_EXTERN_C_BEGIN

/* Sets up r over storage. Returns 0, or FXT_EINVAL when size is not a power of two in
 * [FXT_RING_MIN_SIZE, FXT_RING_MAX_SIZE], storage is NULL or not 8-byte aligned, or flags has
 * unknown bits. Storage contents need not be initialized. */
FXT_API int fxt_ring_init(struct fxt_ring *r, void *storage, uint32_t size, uint32_t flags);

/* Consumes up to max_bytes of whole committed records, passing them to copy_fn. Returns the
 * bytes consumed (0 when empty or when the oldest record is larger than max_bytes), or
 * FXT_EBADMSG when a committed record header is invalid (size 0 or past the committed end:
 * the ring was corrupted by its producer; nothing is consumed). In overwrite mode, records are
 * staged through FXT_RING_STAGE_SIZE bytes of stack; see fxt_ring_read_staged. */
FXT_API int64_t fxt_ring_read(struct fxt_ring *r, fxt_copy_fn copy_fn, void *ctx,
                              uint32_t max_bytes);

/* fxt_ring_read with a caller-provided staging area (8-byte aligned) used in overwrite mode
 * (ignored in discard mode). A claimed record larger than stage_size, and the records of a
 * claimed batch that copy_fn refused, are consumed and counted as lost. */
FXT_API int64_t fxt_ring_read_staged(struct fxt_ring *r, void *stage, uint32_t stage_size,
                                     fxt_copy_fn copy_fn, void *ctx, uint32_t max_bytes);

/* Discards every committed record (consumer side). Returns the bytes discarded. */
FXT_API uint32_t fxt_ring_drain(struct fxt_ring *r);

/* Starts a non-consuming iteration over the records committed now. */
FXT_API void fxt_ring_iter_begin(const struct fxt_ring *r, struct fxt_ring_iter *it);

/* Copies the next record into buf. Returns 1 with *len set; 0 at the end; FXT_ENOBUFS with
 * *len = the record's size when buf_size is too small (the iterator does not advance);
 * FXT_EBADMSG on a corrupt header. If the record was overwritten or consumed while it was
 * being copied, it is skipped (counted in it->skipped_bytes) and the iteration resumes at
 * the oldest record still in the ring: every record returned is whole and untorn. */
FXT_API int fxt_ring_iter_next(struct fxt_ring_iter *it, void *buf, uint32_t buf_size,
                               uint32_t *len);

/* Producer: refreshes the producer's view of the consumer's position and returns the bytes
 * committed and not yet consumed (for watermarks). */
FXT_API uint32_t fxt_ring_producer_used(struct fxt_ring *r);

/* Fills *st with the ring's counters (any thread). */
FXT_API void fxt_ring_stats(const struct fxt_ring *r, struct fxt_ring_stats *st);

/* Records whose header word h has (h & mask) == match are overwritten like any other but not
 * counted in overrun_records (bookkeeping of the embedder's: only events are counted there);
 * overrun_bytes counts them. fxt_ring_init sets a pattern nothing matches. */
FXT_API void fxt_ring_set_uncounted(struct fxt_ring *r, uint64_t mask, uint64_t match);

/* Producer, overwrite mode: makes room for need bytes after head by moving the tail past the
 * oldest records, as a reservation that does not fit would, but in steps of at least
 * size >> batch_shift bytes (batch_shift 0 to 31: the next reservations then find room without
 * a pass of their own), each shown to hooks before and after its compare-and-swap (NULL:
 * none). Nothing moves when the room is there (fxt_ring_room, inline, tells it without the
 * call). Returns 0; FXT_EINVAL in discard mode; FXT_ENOSPC when need > size (nothing moved);
 * FXT_EBADMSG when a committed record header is invalid (the moves made until then stand). */
FXT_API int fxt_ring_pass_oldest(struct fxt_ring *r, uint32_t need, uint32_t batch_shift,
                                 const struct fxt_ring_pass_hooks *hooks);

/* Producer: the 8-byte word at ring position pos (a whole word of a record it committed and
 * that is still in the ring), with relaxed loads. */
FXT_API uint64_t fxt_ring_word(const struct fxt_ring *r, uint32_t pos);

/* Out-of-line rare cases of the producer functions below (not for direct use). */
FXT_API int fxt_ring_reserve_slow(struct fxt_ring *r, uint32_t nbytes,
                                  struct fxt_ring_res *res) FXT_NOEXCEPT;
FXT_API int fxt_ring_res_write_slow(struct fxt_ring_res *res, const void *src,
                                    uint32_t len) FXT_NOEXCEPT;
FXT_API void fxt_ring_res_finish_slow(struct fxt_ring_res *res) FXT_NOEXCEPT;

/* ---- producer fast paths ------------------------------------------------------------------
 * Inline in both languages: C99 inline definitions in C (src/core/ring.c emits the external
 * definitions that non-inlined calls link to), static inline in C++ (FXT_INLINE), so a C++
 * unit neither links to the library's copies nor exports copies of its own. */

/* Stores the 8 bytes of w (in memory order) at byte offset off of base (word aligned). */
FXT_API FXT_INLINE void fxt_ring_put_word(unsigned char *base, uint32_t off, uint64_t w);

/* Record size in bytes from an FXT header word: size bits [4..15] in words, or [4..35] for a
 * large record (type 15). Returns 0 for a size of zero words or one over 2^32 - 1 bytes. */
FXT_API FXT_INLINE uint32_t fxt_ring_record_bytes(uint64_t header);

/* Reserves nbytes (a multiple of 8, > 0) for the producer. Returns 0 and fills *res;
 * FXT_EINVAL when nbytes is 0 or not a multiple of 8; FXT_ENOSPC when it does not fit now
 * (discard mode) or can never fit (nbytes > size, both modes). In overwrite mode, makes room by
 * overwriting the oldest records, counted in overrun_records / overrun_bytes. */
FXT_API FXT_INLINE int fxt_ring_reserve(struct fxt_ring *r, uint32_t nbytes, struct fxt_ring_res *res);

/* Appends len bytes to the reservation. Returns 0, or FXT_EOVERFLOW (writing nothing) when
 * they do not fit in what is left of it. */
FXT_API FXT_INLINE int fxt_ring_res_write(struct fxt_ring_res *res, const void *src, uint32_t len);

/* Publishes the reservation to the consumer. An unfinished word is padded with zero bytes and
 * any unwritten rest of the reservation is zero-filled. Returns 0. */
FXT_API FXT_INLINE int fxt_ring_res_commit(struct fxt_ring_res *res);

FXT_EXTERN_C_END

/* Storage is accessed in the widest lock-free unit, with relaxed atomics (see ring.c). */
#if UINTPTR_MAX > 0xffffffffu
typedef uint64_t fxt_ring_unit;
#else
typedef uint32_t fxt_ring_unit;
#endif

FXT_API inline void fxt_ring_put_word(unsigned char *base, uint32_t off, uint64_t w)
{
  FXT_ATOMIC_PTR(fxt_ring_unit) p = (FXT_ATOMIC_PTR(fxt_ring_unit))(void *)(base + off);
#if UINTPTR_MAX > 0xffffffffu
  FXT_STORE(p, w, FXT_MO_RELAXED);
#else
  fxt_ring_unit u[2];
  __builtin_memcpy(u, &w, 8);
  FXT_STORE(&p[0], u[0], FXT_MO_RELAXED);
  FXT_STORE(&p[1], u[1], FXT_MO_RELAXED);
#endif
}

FXT_API inline uint32_t fxt_ring_record_bytes(uint64_t header)
{
  uint64_t words = FXT_W_RECORD_WORDS(header); /* (fxtrace/detail/fxt_words.h) */
  if (words == 0 || words > 0xffffffffu / 8)
    return 0;
  return (uint32_t)words * 8;
}

/* Producer: the bytes free after head as of the consumer's tail now, so that a caller of
 * fxt_ring_pass_oldest calls it only when need exceeds them (the pass would move nothing).
 * Two atomic loads besides size (set at init): head relaxed, as the producer wrote it; tail
 * with acquire, as fxt_ring_pass_oldest loads it (pairs with the consumer's release when it
 * claims, src/core/ring.c (2)). Safe for the producer to act on: the tail only moves forward
 * (the consumer's claims, the producer's own passes), so the room only grows until the
 * producer commits; nothing is written (tail_cache keeps its older view, and the reservation
 * that follows refreshes it with reserve_slow's release fence). */
static inline uint32_t fxt_ring_room(const struct fxt_ring *r)
{
  uint32_t head = FXT_LOAD(&r->head, FXT_MO_RELAXED); /* ours */
  uint32_t tail = FXT_LOAD(&r->tail, FXT_MO_ACQUIRE); /* (2) */
  return r->size - (head - tail);
}

FXT_API inline int fxt_ring_reserve(struct fxt_ring *r, uint32_t nbytes, struct fxt_ring_res *res)
{
  uint32_t head = FXT_LOAD(&r->head, FXT_MO_RELAXED); /* ours */
  /* Room as of the producer's cached view of tail; anything else is the slow path. */
  if (FXT_UNLIKELY((nbytes & 7) != 0 || nbytes - 1 >= r->size - (head - r->tail_cache)))
    return fxt_ring_reserve_slow(r, nbytes, res);
  res->ring = r;
  res->base = (unsigned char *)((uintptr_t)r + (uintptr_t)(intptr_t)r->storage_off);
  res->mask = r->size - 1;
  res->pos = head;
  res->end = head + nbytes;
  res->partial_len = 0;
  res->partial = 0;
  return 0;
}

FXT_API inline int fxt_ring_res_write(struct fxt_ring_res *res, const void *src, uint32_t len)
{
  if (FXT_UNLIKELY(res->partial_len != 0 || (len & 7) != 0 || len > res->end - res->pos))
    return fxt_ring_res_write_slow(res, src, len);
  const unsigned char *s = (const unsigned char *)src;
  for (uint32_t i = 0; i < len; i += 8) {
    uint64_t w;
    __builtin_memcpy(&w, s + i, 8);
    fxt_ring_put_word(res->base, (res->pos + i) & res->mask, w);
  }
  res->pos += len;
  return 0;
}

FXT_API inline int fxt_ring_res_commit(struct fxt_ring_res *res)
{
  if (FXT_UNLIKELY(res->partial_len != 0 || res->pos != res->end))
    fxt_ring_res_finish_slow(res);
  /* Release pairs with the acquire loads of head in every reader (ring.c, (1)). */
  FXT_STORE(&res->ring->head, res->end, FXT_MO_RELEASE);
  return 0;
}

#endif /* FXTRACE_RING_H */
