/* fxtrace/emit.h - the emit path shared by the macros of fxtrace/fxtrace.h (host, C only).
 *
 * Nothing here is meant to be called directly; it is public because the fast path is inline.
 * Per event, after the fire site's relaxed load found the tracepoint enabled:
 *
 *   fxt_emit_enter   thread's slot from initial-exec TLS (attached on the thread's first
 *                    event: the only call that may allocate or lock); nesting depth raised;
 *                    session-active check (the handshake with fxt_session_stop)
 *   fxt_emit_time    a fresh timestamp; a `cpu` record first when the thread moved
 *   reserve / put words / commit through the thread's fxt_writer
 *   fxt_emit_leave   nesting depth lowered
 *
 * No lock, no allocation, no syscall on that path (the CPU comes from glibc's rseq area).
 */
#ifndef FXTRACE_EMIT_H
#define FXTRACE_EMIT_H

#include "common.h"
#include "meta.h"
#include "tracepoint.h"
#include "writer.h"

#ifndef __cplusplus
#include <stdatomic.h>
#include <stdbool.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/* A thread's buffer and emit state. The slot's owner thread is the writer's producer. */
struct fxt_tslot {
  struct fxt_writer w;
  /* Emission nesting depth: written by the owner thread only (relaxed; compiler barriers
   * order it against the emission). fxt_session_stop reads it after membarrier(), which acts
   * as a full fence on every thread: a thread whose depth it reads as 0 will see the session
   * inactive before it touches its buffer again (see fxt_emit_enter). */
  FXT_ATOMIC(uint32_t) depth;
  FXT_ATOMIC(uint32_t) gen; /* the session this slot belongs to (see fxt_session_active);
                               FXT_GEN_MUTED set while set_event_pid excludes the thread.
                               Written by the owner (attach) and the control side, relaxed */
  uint32_t cpu;          /* CPU named by the last `cpu` record in the buffer; owner only */
  uint32_t cpu_fast;     /* == cpu while an event may take the fast path; FXT_CPU_SLOW when the
                            next one must go through the writer (a run of drops to report, a
                            thread's first event); owner only */
  uint64_t thread_bits;  /* thread ref << 24 for event headers; 0 = inline koids */
  uint32_t wake_mark;    /* bytes in the buffer at which the consumer is woken */
  uint32_t block_ms;     /* block mode: how long a full buffer waits for the consumer; 0 =
                            drop at once (discard and overwrite modes) */
  FXT_ATOMIC(uint32_t) wake_sent; /* 1 after a wake, until the consumer drained the buffer:
                                     set by the owner, cleared by the consumer (relaxed: a
                                     lost race costs one extra wake or one poll period) */
  FXT_ATOMIC(uint64_t) lost; /* events of this thread lost outside the ring: emissions nested
                                deeper than the companion takes, ingress full, and events fired
                                before the thread could get a buffer; the owner adds (relaxed
                                RMW, rare), the consumer reads */
  /* Signal context: an emission that interrupts this thread's own emission writes into the
   * companion slot `nested` (a small writer of its own); leaving it pushes its records into
   * the session's ingress ring, tagged with slot_index, for the consumer to merge back into
   * this thread's stream by time. The companion has nested == NULL and flush_on_leave set. */
  struct fxt_tslot *nested;
  uint32_t flush_on_leave;
  uint32_t slot_index;
};

/* The calling thread's slot; NULL until its first event. */
FXT_API extern _Thread_local struct fxt_tslot *fxt_tls_slot __attribute__((tls_model("initial-exec")));
/* The running session's generation (never 0), or 0 when no session accepts events. Written
 * by session start/stop, read relaxed per event and compared with the slot's gen: a slot of an
 * earlier session is re-attached on the slow path. */
FXT_API extern FXT_ATOMIC(uint32_t) fxt_session_active;
/* The trace clock: 1 = TSC (x86), 0 = CLOCK_MONOTONIC in ns. Set before a session starts. */
FXT_API extern uint32_t fxt_clock_is_tsc;
/* glibc's rseq area offset from the thread pointer, or 0 when rseq is not registered. */
FXT_API extern ptrdiff_t fxt_rseq_offset;

FXT_EXTERN_C_BEGIN
FXT_API struct fxt_tslot *fxt_emit_enter_slow(void);
FXT_API struct fxt_tslot *fxt_emit_refused(struct fxt_tslot *t, uint32_t depth);
FXT_API void fxt_emit_nested_done(struct fxt_tslot *n);
/* Evaluates tp's filter program for an event of thread slot t on cpu (values and string
 * lengths of its fields, or NULL for events without fields): true to record it. */
FXT_API bool fxt_filter_pass(struct fxt_tracepoint *tp, const struct fxt_tslot *t,
                             const union fxt_value *values, const uint32_t *lens, uint32_t cpu);
FXT_API uint64_t fxt_ticks_slow(void);
FXT_API void fxt_emit_wake(struct fxt_tslot *t);
FXT_API uint32_t fxt_cpu_slow(void);
/* Writing words into a reservation whose size was computed exactly. */
struct fxt_cursor {
  unsigned char *base; /* NULL: no reservation */
  uint32_t mask;
  uint32_t pos;
};
/* By value (two registers), so the caller's cursor never has its address taken and stays in
 * registers on the fast path. */
FXT_API struct fxt_cursor fxt_emit_reserve_slow(struct fxt_tslot *t, uint32_t cpu, uint64_t ts,
                                                uint64_t header);
FXT_EXTERN_C_END

/* cpu_fast when the next event must take the slow path. */
#define FXT_CPU_SLOW 0xffffffffu

/* A slot generation with this bit is muted: its events are not recorded (set_event_pid). */
#define FXT_GEN_MUTED 0x80000000u

/* Enters emission on the calling thread and returns its slot, or NULL (no session, no buffer,
 * or nested: counted). Every non-NULL return must be paired with fxt_emit_leave. */
static inline struct fxt_tslot *fxt_emit_enter(void)
{
  struct fxt_tslot *t = fxt_tls_slot;
  if (FXT_UNLIKELY(t == NULL))
    return fxt_emit_enter_slow();
  uint32_t depth = atomic_load_explicit(&t->depth, memory_order_relaxed);
  atomic_store_explicit(&t->depth, depth + 1, memory_order_relaxed);
  /* Depth is raised before the session-active load, in program order; the stopper's
   * membarrier() makes the pair a Dekker handshake without a fence here. */
  atomic_signal_fence(memory_order_seq_cst);
  if (FXT_UNLIKELY(depth != 0 ||
                   atomic_load_explicit(&fxt_session_active, memory_order_relaxed) !=
                       atomic_load_explicit(&t->gen, memory_order_relaxed)))
    return fxt_emit_refused(t, depth); /* nested, stopped, or a slot of an earlier session */
  /* Pairs with the registry's release store of the tracepoint's enabled flag. */
  atomic_thread_fence(memory_order_acquire);
  return t;
}

static inline void fxt_emit_leave(struct fxt_tslot *t)
{
  atomic_signal_fence(memory_order_seq_cst); /* the commit stays inside the depth window */
  if (FXT_UNLIKELY(t->flush_on_leave)) {
    fxt_emit_nested_done(t); /* a companion: hand its records to the ingress ring */
    return;
  }
  /* Release pairs with the acquire load of depth in fxt_slots_sync / quiesce: everything this
   * emission read (a filter program) happens before a waiter that sees it left. A plain store
   * on x86. */
  atomic_store_explicit(&t->depth, atomic_load_explicit(&t->depth, memory_order_relaxed) - 1,
                        memory_order_release);
}

static inline uint64_t fxt_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
  if (FXT_LIKELY(fxt_clock_is_tsc))
    return __rdtsc();
#endif
  return fxt_ticks_slow();
}

static inline uint32_t fxt_current_cpu(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__aarch64__))
  if (FXT_LIKELY(fxt_rseq_offset != 0))
    /* struct rseq { u32 cpu_id_start; u32 cpu_id; ... }: the kernel keeps cpu_id current. */
    return *(volatile const uint32_t *)((const char *)__builtin_thread_pointer() +
                                         fxt_rseq_offset + 4);
#endif
  return fxt_cpu_slow();
}

/* A fresh timestamp for the event about to be written, and the CPU it runs on. */
static inline uint64_t fxt_emit_time(uint32_t *cpu)
{
  uint64_t ts = fxt_ticks();
  *cpu = fxt_current_cpu();
  return ts;
}

/* Words of the thread part of an event (the inline koids when there is no thread ref). */
static inline uint32_t fxt_emit_thread_words(const struct fxt_tslot *t)
{
  return t->thread_bits == 0 ? 2 : 0;
}

static inline struct fxt_cursor fxt_cursor_of(const struct fxt_reservation *res)
{
  struct fxt_cursor c = {res->res.base, res->res.mask, res->res.pos};
  return c;
}

/* Reserves an event of header's size on the thread's buffer and returns a cursor at its
 * start (the caller writes header and body, then fxt_emit_commit). The common case is inline:
 * the thread is where its stream last said, nothing is pending, and the buffer has room as of
 * the producer's cached view of the consumer. Anything else - a `cpu` record to write first,
 * a run of drops to report (drop_stats), a full buffer (drop, or waiting in block mode) - is
 * fxt_emit_reserve_slow, which may put bookkeeping records in front in the same reservation.
 * Returns false when the event does not fit (it has been counted as dropped). */
static inline bool fxt_emit_reserve(struct fxt_tslot *t, uint32_t cpu, uint64_t ts,
                                    uint64_t header, struct fxt_cursor *c)
{
  struct fxt_ring *r = &t->w.ring;
  uint32_t bytes = (uint32_t)(header >> 4 & 0xfff) * 8;
  uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed); /* ours */
  if (FXT_LIKELY(cpu == t->cpu_fast && bytes <= r->size - (head - r->tail_cache))) {
    c->base = (unsigned char *)((uintptr_t)r + (uintptr_t)(intptr_t)r->storage_off);
    c->mask = r->size - 1;
    c->pos = head;
    return true;
  }
  *c = fxt_emit_reserve_slow(t, cpu, ts, header);
  return c->base != NULL;
}

static inline void fxt_put(struct fxt_cursor *c, uint64_t w)
{
  fxt_ring_put_word(c->base, c->pos & c->mask, w);
  c->pos += 8;
}

/* len bytes then zero padding to a word boundary. */
static inline void fxt_put_bytes(struct fxt_cursor *c, const void *p, uint32_t len)
{
  const unsigned char *s = (const unsigned char *)p;
  for (; len >= 8; len -= 8, s += 8) {
    uint64_t w;
    __builtin_memcpy(&w, s, 8);
    fxt_put(c, w);
  }
  if (len) {
    uint64_t w = 0;
    __builtin_memcpy(&w, s, len);
    fxt_put(c, w);
  }
}

/* Event start: timestamp and, without a thread ref, the koids. */
static inline void fxt_put_event_head(struct fxt_cursor *c, const struct fxt_tslot *t,
                                      uint64_t ts)
{
  fxt_put(c, ts);
  if (t->thread_bits == 0) {
    fxt_put(c, t->w.process_koid);
    fxt_put(c, t->w.thread_koid);
  }
}

/* Publishes the event whose last word the cursor just wrote (sizes are exact by
 * construction), then wakes the consumer once the buffer looks past its watermark. The
 * producer's cached tail is old, so the estimate only errs high; fxt_emit_wake refreshes it
 * before deciding, and wakes at most once per drain cycle. */
static inline void fxt_emit_commit(struct fxt_tslot *t, const struct fxt_cursor *c)
{
  /* Release pairs with the acquire loads of head in every reader (src/core/ring.c, (1)). */
  atomic_store_explicit(&t->w.ring.head, c->pos, memory_order_release);
  if (FXT_UNLIKELY(c->pos - t->w.ring.tail_cache > t->wake_mark))
    fxt_emit_wake(t);
}

/* Length of s up to bound (strnlen without libc). */
static inline uint32_t fxt_strnlen(const char *s, uint32_t bound)
{
  uint32_t n = 0;
  if (s)
    while (n < bound && s[n])
      n++;
  return n;
}

/* ---- typed fields (type is a constant at every call: the switches fold away) ---------- */

/* Bytes of a field's variable part: string length, or 2 hex digits per byte of an array. */
static inline uint32_t fxt_field_len(uint32_t type, uint32_t bound, union fxt_value v)
{
  if (type == FXT_TYPE_STR)
    return fxt_strnlen(v.s, bound < FXT_STR_MAX_BOUND ? bound : FXT_STR_MAX_BOUND);
  if (type == FXT_TYPE_BYTES)
    return 2 * bound;
  return 0;
}

/* Words of a field's FXT argument. */
static inline uint32_t fxt_field_words(uint32_t type, uint32_t len)
{
  switch (type) {
  case FXT_TYPE_U64:
  case FXT_TYPE_S64:
  case FXT_TYPE_DOUBLE:
  case FXT_TYPE_PTR:
    return 2;
  case FXT_TYPE_STR:
  case FXT_TYPE_BYTES:
    return 1 + (len + 7) / 8;
  default:
    return 1;
  }
}

FXT_EXTERN_C_BEGIN
FXT_API void fxt_put_hex(struct fxt_cursor *c, const void *bytes, uint32_t n);
FXT_EXTERN_C_END

/* Writes a field as an FXT argument; ah = the argument header's type and name bits. */
static inline void fxt_put_field(struct fxt_cursor *c, uint64_t ah, uint32_t type,
                                 union fxt_value v, uint32_t len)
{
  uint64_t words = fxt_field_words(type, len);
  switch (type) {
  case FXT_TYPE_U8:
  case FXT_TYPE_U16:
  case FXT_TYPE_U32:
    fxt_put(c, ah | 1u << 4 | (uint64_t)(uint32_t)v.u << 32);
    break;
  case FXT_TYPE_S8:
  case FXT_TYPE_S16:
  case FXT_TYPE_S32:
    fxt_put(c, ah | 1u << 4 | (uint64_t)(uint32_t)(int32_t)v.i << 32);
    break;
  case FXT_TYPE_BOOL:
    fxt_put(c, ah | 1u << 4 | (uint64_t)(v.u != 0) << 32);
    break;
  case FXT_TYPE_DOUBLE: {
    uint64_t bits;
    __builtin_memcpy(&bits, &v.d, 8);
    fxt_put(c, ah | 2u << 4);
    fxt_put(c, bits);
    break;
  }
  case FXT_TYPE_PTR:
    fxt_put(c, ah | 2u << 4);
    fxt_put(c, (uint64_t)(uintptr_t)v.p);
    break;
  case FXT_TYPE_STR:
    /* Inline string value (ref 0x8000 | len); an empty string is ref 0. */
    fxt_put(c, ah | words << 4 | (len ? (uint64_t)(0x8000u | len) << 32 : 0));
    fxt_put_bytes(c, v.s, len);
    break;
  case FXT_TYPE_BYTES:
    fxt_put(c, ah | words << 4 | (len ? (uint64_t)(0x8000u | len) << 32 : 0));
    fxt_put_hex(c, v.p, len / 2);
    break;
  default: /* U64, S64 */
    fxt_put(c, ah | 2u << 4);
    fxt_put(c, v.u);
    break;
  }
}

#endif /* !__cplusplus */
#endif /* FXTRACE_EMIT_H */
