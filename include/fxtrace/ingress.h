/* fxtrace/ingress.h - bounded multi-producer single-consumer ingress of fixed-size records.
 *
 * Where events go when they cannot go to their thread's own ring: a signal handler (or an
 * interrupt) that fired while its thread was in the middle of an emission (DESIGN.md, data
 * path 4). Producers are any threads and any signal handlers, nested to any depth, including a
 * handler that interrupted a push on its own thread; one consumer drains in FIFO order of
 * publication. Every push that does not get in is counted: too large (oversize) or no free slot
 * (full). Nothing allocates, blocks, spins on another context, or calls the OS.
 *
 * Storage is caller-provided: exactly FXT_INGRESS_STORAGE_SIZE(slots, slot_payload) bytes,
 * 8-byte aligned, slots a power of two in [1, FXT_INGRESS_MAX_SLOTS]. It holds a pool of
 * slots (a 16-byte header plus slot_payload bytes each, rounded up to 8), a free list of slot
 * indices and a ready queue of slot indices. The control block (struct fxt_ingress) holds
 * positions and sizes only, no pointers (storage is found by its offset), so both may live in
 * shared memory mapped at different addresses. Positions are free-running uint32_t counters
 * compared by difference; every atomic is 32 bits wide, lock-free on 32-bit targets too.
 *
 * A push takes a free slot (one compare-and-swap), fills it, and publishes its index into the
 * ready queue (one compare-and-swap on the queue cell, then a best-effort one on the tail that
 * any later push completes if this one is interrupted). Between the first and the second
 * compare-and-swap the slot is owned by its writer alone and is in no queue, so:
 *
 *  - A signal handler that interrupts a push on its own thread, at any point, pushes through
 *    the other free slots and the same ready queue without ever waiting for the interrupted
 *    push. Its records are published, and can be popped, while the interrupted push is still
 *    suspended under it; the interrupted record is published when its push resumes, after
 *    them (FIFO of publication). The consumer never sees an unpublished slot, so it never
 *    waits for one and never skips one.
 *  - A push that never finishes (its handler longjmp'd out, its thread died) keeps its slot:
 *    its record was never published and is not delivered; the slot shows in
 *    fxt_ingress_stats().in_flight forever and the queue runs on with one slot fewer (until
 *    fxt_ingress_init is called again when nothing runs). A push interrupted after its
 *    publishing compare-and-swap is complete: its record is delivered.
 *
 * Who may call what concurrently (P = any number of producers, in any threads and in signal
 * handlers, nested to any depth; C = the one consumer; R = any reader):
 *
 *   operation               side  may run concurrently with
 *   fxt_ingress_push          P   every P (same thread included, from a handler), C, R
 *   fxt_ingress_pop_batch     C   every P, R; never with itself (its callback may push, and a
 *                                 handler that interrupts it may push, but neither may pop)
 *   fxt_ingress_pending       C   every P, R (from another thread: a snapshot, see below)
 *   fxt_ingress_stats         R   everything
 *   fxt_ingress_init          -   nothing
 *
 * fxt_ingress_push is async-signal-safe, lock-free, and wait-free unless other pushes keep
 * succeeding in its way (each retry of its loops means another push got a slot or a position).
 *
 * Embedder API (docs/architecture.md, "Public headers").
 */
#ifndef FXTRACE_INGRESS_H
#define FXTRACE_INGRESS_H

#include "common.h"
#include "errors.h"

#define FXT_INGRESS_MAX_SLOTS 65536u    /* slot indices and queue laps share one 32-bit cell */
#define FXT_INGRESS_MAX_PAYLOAD 65536u  /* bytes per slot */
#define FXT_INGRESS_SLOT_HEADER 16u     /* len, epoch, producer_tag, reserved */

/* Bytes of storage for `slots` slots of `payload` bytes: the slot (header + payload rounded up
 * to 8) plus one free-list cell and one ready-queue cell (4 bytes each). */
#define FXT_INGRESS_STORAGE_SIZE(slots, payload)                                              \
  ((size_t)(slots) * (FXT_INGRESS_SLOT_HEADER + (((size_t)(payload) + 7u) & ~(size_t)7u) + 8u))

/* The control block. Treat every member as private; the definition is public so it can be
 * placed in static or shared storage. Positions are free-running; the four positions count,
 * since init: claims (free_head), frees + slots (free_tail), publications (ready_tail, which
 * may lag the published cells by one), pops (ready_head). See src/core/ingress.c for every
 * release/acquire pair. */
struct fxt_ingress {
  /* Written by fxt_ingress_init only; read by everyone. */
  uint32_t slots;        /* a power of two */
  uint32_t payload;      /* bytes of payload per slot */
  uint32_t stride;       /* bytes per slot: header + payload rounded up to 8 */
  uint32_t reserved;
  int64_t storage_off;   /* storage address minus the address of this struct */

  /* Producer line: compare-and-swapped by every producer. */
  FXT_ALIGNAS(FXT_CACHE_LINE) FXT_ATOMIC(uint32_t) free_head; /* next free-list position to
        claim. Acq_rel compare-and-swap by P (ingress.c (2)); acquire loads by P. */
  FXT_ATOMIC(uint32_t) ready_tail; /* next ready-queue position to publish at; a hint, the
        cells are the truth (relaxed, ingress.c (3)). */

  /* Loss line: fetch-and-add by producers whose push failed; read by anyone. */
  FXT_ALIGNAS(FXT_CACHE_LINE) FXT_ATOMIC(uint32_t) oversize; /* free-running */
  FXT_ATOMIC(uint32_t) full;                                 /* free-running */

  /* Consumer line: written by the consumer only. */
  FXT_ALIGNAS(FXT_CACHE_LINE) FXT_ATOMIC(uint32_t) free_tail; /* end of the free list.
        Release store by C, pairs with P's acquire loads in the claim (ingress.c (1)). */
  FXT_ATOMIC(uint32_t) ready_head; /* next ready-queue position to pop (relaxed; stats) */
};

/* Counters and occupancy. The counters are free-running modulo 2^32 (take differences). While
 * producers and the consumer run, the occupancy numbers are a snapshot, each clamped to
 * [0, slots]; when nothing runs, free + in_flight + pending == slots. */
struct fxt_ingress_stats {
  uint32_t slots;
  uint32_t slot_payload;
  uint32_t free;      /* slots a push can take now */
  uint32_t in_flight; /* taken by a push that has not published yet (or never will) */
  uint32_t pending;   /* published, not yet popped */
  uint32_t popped;    /* records popped since init */
  uint32_t oversize;  /* pushes refused with FXT_EMSGSIZE since init */
  uint32_t full;      /* pushes refused with FXT_ENOSPC since init */
};

/* Called by fxt_ingress_pop_batch for each record, in FIFO order of publication. rec points
 * into the slot (8-byte aligned) and is valid only during the call. The callback may push into
 * the same queue; it must not pop from it. */
typedef void (*fxt_ingress_fn)(void *ctx, const void *rec, uint32_t len, uint32_t epoch,
                               uint32_t producer_tag);

FXT_EXTERN_C_BEGIN

/* Sets up q over storage with slot_payload bytes per slot. Returns 0, or FXT_EINVAL when
 * storage is NULL or not 8-byte aligned, slot_payload is 0 or above FXT_INGRESS_MAX_PAYLOAD,
 * or storage_size is not FXT_INGRESS_STORAGE_SIZE(n, slot_payload) for a power of two n in
 * [1, FXT_INGRESS_MAX_SLOTS]. Storage contents need not be initialized. Forgets every record
 * and slot held, so call it only when no producer or consumer runs. */
FXT_API int fxt_ingress_init(struct fxt_ingress *q, void *storage, size_t storage_size,
                             uint32_t slot_payload);

/* Copies len bytes from rec into a free slot with epoch and producer_tag, and publishes it.
 * Returns 0; FXT_EMSGSIZE when len exceeds the slot payload (counted in oversize); FXT_ENOSPC
 * when no slot is free (counted in full); FXT_EINVAL when rec is NULL and len is not 0 (not
 * counted). Async-signal-safe; see the file comment for interrupted and unfinished pushes. */
FXT_API int fxt_ingress_push(struct fxt_ingress *q, const void *rec, uint32_t len,
                             uint32_t epoch, uint32_t producer_tag);

/* Consumer: pops up to max records in FIFO order of publication, passing each to fn, and
 * returns the number popped (0 when none is published). Each slot is back in the free list
 * right after its callback returns. */
FXT_API uint32_t fxt_ingress_pop_batch(struct fxt_ingress *q, fxt_ingress_fn fn, void *ctx,
                                       uint32_t max);

/* Consumer: the number of records published and not yet popped (what pop_batch would deliver
 * now, and more if producers publish meanwhile). 0 means nothing was published when looked
 * at. From another thread it is a snapshot clamped to [0, slots]. */
FXT_API uint32_t fxt_ingress_pending(const struct fxt_ingress *q);

/* Fills *st (any thread, any time). */
FXT_API void fxt_ingress_stats(const struct fxt_ingress *q, struct fxt_ingress_stats *st);

FXT_EXTERN_C_END

#endif /* FXTRACE_INGRESS_H */
