/* fxtrace/detail/emit.h - the emit path shared by the macros of fxtrace/fxtrace.h (host, C
 * and C++: one text, its atomics spelled by detail/atomic.h).
 *
 * NOT API: nothing here is meant to be called or read directly, and any of it may change in
 * any release (names, signatures, struct layouts). It is installed only because the fast path
 * is inline in every fire site (fxtrace/fxtrace.h); programs include fxtrace/fxtrace.h.
 *
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
#ifndef FXTRACE_DETAIL_EMIT_H
#define FXTRACE_DETAIL_EMIT_H

#include "../common.h"
#include "../meta.h"
#include "../tracepoint.h"
#include "../writer.h"
#include "atomic.h"
#include "fxt_words.h"
#include "tslot.h"

#include <stddef.h>
#ifdef __cplusplus
#include <string.h> /* strnlen: C++ compilers define _GNU_SOURCE, which declares it */
#else
#include <stdbool.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/* Thread-local objects the library defines. C++ says __thread (GNU C's keyword, which both
 * g++ and clang++ take), not thread_local: a C++ extern thread_local object may have a dynamic
 * initializer in its defining unit, so every access would go through a call to its TLS
 * wrapper; __thread promises none, and the access is one %fs-relative load, as in C. */
#ifdef __cplusplus
#define FXT_THREAD_LOCAL __thread
#else
#define FXT_THREAD_LOCAL _Thread_local
#endif

FXT_EXTERN_C_BEGIN
/* The calling thread's slot; NULL until its first event. */
FXT_API extern FXT_THREAD_LOCAL struct fxt_tslot *fxt_tls_slot
    __attribute__((tls_model("initial-exec")));
/* The running session's generation (never 0), or 0 when no session accepts events. Written
 * by session start/stop, read relaxed per event and compared with the slot's gen: a slot of an
 * earlier session is re-attached on the slow path. */
FXT_API extern FXT_ATOMIC(uint32_t) fxt_session_active;
/* The trace clock: 1 = the CPU's counter (the TSC on x86, CNTVCT_EL0 on aarch64), 0 =
 * CLOCK_MONOTONIC in ns. Set before a session starts (src/host/clock.c says when each). */
FXT_API extern uint32_t fxt_clock_is_tsc;
/* glibc's rseq area offset from the thread pointer, or 0 when rseq is not registered. */
FXT_API extern ptrdiff_t fxt_rseq_offset;
/* Where the fast path reads the CPU, as an offset from the thread pointer: the rseq area's
 * cpu_id when the trace clock is the TSC and rseq is registered, else fxt_tls_no_cpu (which
 * holds FXT_CPU_NEVER: no event takes the fast path; the general path reads the CPU from rseq
 * all the same, whatever the clock). Set before a session starts. */
FXT_API extern ptrdiff_t fxt_fast_cpu_at;
/* The same for the fast path's CLOCK_MONOTONIC form (fxt_fast_begin with clk): glibc's rseq
 * cpu_id when the trace clock is CLOCK_MONOTONIC and rseq is registered, else
 * fxt_tls_no_cpu. */
FXT_API extern ptrdiff_t fxt_clk_cpu_at;
FXT_API extern FXT_THREAD_LOCAL const uint32_t fxt_tls_no_cpu
    __attribute__((tls_model("initial-exec")));

FXT_API struct fxt_tslot *fxt_emit_enter_slow(void) FXT_NOEXCEPT;
FXT_API struct fxt_tslot *fxt_emit_refused(struct fxt_tslot *t, uint32_t depth) FXT_NOEXCEPT;
FXT_API void fxt_emit_nested_done(struct fxt_tslot *n) FXT_NOEXCEPT;
/* Runs tp's hook for an event of thread slot t on cpu (values and string lengths of its
 * fields, or NULL for events without fields): its filter program, then, when it has any, its
 * event triggers and soft mode (src/host/evtrig*.c), which fire whatever the filter said, as
 * the kernel's; true to record the event. */
FXT_API bool fxt_filter_pass(struct fxt_tracepoint *tp, const struct fxt_tslot *t,
                             const union fxt_value *values, const uint32_t *lens,
                             uint32_t cpu) FXT_NOEXCEPT;
/* The same for an event of tp whose emission was refused (recording off, no slot, nested)
 * while tp has a hook: while recording is off, the event's triggers still run (a traceon
 * among them turns recording on and records the event), as the kernel's; nothing else. */
FXT_API void fxt_filter_off(struct fxt_tracepoint *tp, const union fxt_value *values,
                            const uint32_t *lens) FXT_NOEXCEPT;
FXT_API uint64_t fxt_ticks_slow(void) FXT_NOEXCEPT;
FXT_API void fxt_emit_wake(struct fxt_tslot *t) FXT_NOEXCEPT;
FXT_API uint32_t fxt_cpu_slow(void) FXT_NOEXCEPT;
/* Writing words into a reservation whose size was computed exactly. */
struct fxt_cursor {
  unsigned char *base; /* NULL: no reservation */
  uint32_t mask;
  uint32_t pos;
};
/* By value (two registers), so the caller's cursor never has its address taken and stays in
 * registers on the fast path. */
FXT_API struct fxt_cursor fxt_emit_reserve_slow(struct fxt_tslot *t, uint32_t cpu, uint64_t ts,
                                                uint64_t header) FXT_NOEXCEPT;
FXT_EXTERN_C_END


/* Enters emission on the calling thread and returns its slot, or NULL (no session, no buffer,
 * or nested: counted). Every non-NULL return must be paired with fxt_emit_leave. */
static inline struct fxt_tslot *fxt_emit_enter(void)
{
  struct fxt_tslot *t = fxt_tls_slot;
  if (FXT_UNLIKELY(t == NULL))
    return fxt_emit_enter_slow();
  uint32_t depth = FXT_LOAD(&t->depth, FXT_MO_RELAXED);
  FXT_STORE(&t->depth, depth + 1, FXT_MO_RELAXED);
  /* Depth is raised before the session-active load, in program order; the stopper's
   * membarrier() makes the pair a Dekker handshake without a fence here. */
  FXT_SIGNAL_FENCE(FXT_MO_SEQ_CST);
  if (FXT_UNLIKELY(depth != 0 ||
                   FXT_LOAD(&fxt_session_active, FXT_MO_RELAXED) !=
                       FXT_LOAD(&t->gen, FXT_MO_RELAXED)))
    return fxt_emit_refused(t, depth); /* nested, stopped, or a slot of an earlier session */
  /* Pairs with the registry's release store of the tracepoint's enabled flag. */
  FXT_FENCE(FXT_MO_ACQUIRE);
  return t;
}

static inline void fxt_emit_leave(struct fxt_tslot *t)
{
  FXT_SIGNAL_FENCE(FXT_MO_SEQ_CST); /* the commit stays inside the depth window */
  if (FXT_UNLIKELY(t->flush_on_leave)) {
    fxt_emit_nested_done(t); /* a companion: hand its records to the ingress ring */
    return;
  }
  /* Release pairs with the acquire load of depth in fxt_slots_sync / quiesce: everything this
   * emission read (a filter program) happens before a waiter that sees it left. A plain store
   * on x86. */
  FXT_STORE(&t->depth, FXT_LOAD(&t->depth, FXT_MO_RELAXED) - 1,
                        FXT_MO_RELEASE);
}

static inline uint64_t fxt_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
  if (FXT_LIKELY(fxt_clock_is_tsc))
    return __rdtsc();
#elif defined(__aarch64__) && defined(__GNUC__)
  if (FXT_LIKELY(fxt_clock_is_tsc)) {
    uint64_t t;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(t));
    return t;
  }
#endif
  return fxt_ticks_slow();
}

static inline uint32_t fxt_current_cpu(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__aarch64__))
  if (FXT_LIKELY(fxt_rseq_offset != 0))
    /* struct rseq { u32 cpu_id_start; u32 cpu_id; ... }: the kernel keeps cpu_id current. */
    return *(volatile const uint32_t *)(const void *)((const char *)__builtin_thread_pointer() +
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
  uint32_t bytes = fxt_w_size_of(header) * 8;
  uint32_t head = FXT_LOAD(&r->head, FXT_MO_RELAXED); /* ours */
  if (FXT_LIKELY(cpu == t->cpu_fast && bytes <= r->size - (head - r->tail_cache))) {
    c->base = (unsigned char *)((uintptr_t)r + (uintptr_t)(intptr_t)r->storage_off);
    c->mask = r->size - 1;
    c->pos = head;
    return true;
  }
  *c = fxt_emit_reserve_slow(t, cpu, ts, header);
  return c->base != FXT_NULL;
}

static inline FXT_ALWAYS_INLINE void fxt_put(struct fxt_cursor *c, uint64_t w)
{
  fxt_ring_put_word(c->base, c->pos & c->mask, w);
  c->pos += 8;
}

/* len bytes then zero padding to a word boundary. */
static inline FXT_ALWAYS_INLINE void fxt_put_bytes(struct fxt_cursor *c, const void *p, uint32_t len)
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
  FXT_STORE(&t->w.ring.head, c->pos, FXT_MO_RELEASE);
  if (FXT_UNLIKELY(c->pos - t->w.ring.tail_cache > t->wake_mark))
    fxt_emit_wake(t);
}

/* ---- the fast path ------------------------------------------------------------------------
 * One event of a thread in the common case, with no call: the thread has a slot of the running
 * session, is not inside another emission, runs where its stream last said, has nothing to
 * report first (drops, a `cpu` record) and uses a thread ref, the tracepoint has no filter,
 * and the event fits in the ring without wrapping. Anything else returns false having changed
 * nothing, and the caller takes the general path (fxt_emit_enter ...), which re-checks all of
 * it. fxt_fast_begin raises the nesting depth and writes the header; the caller writes the
 * rest (fxt_fast_ticks for the timestamp, or f->ts) through f->c and ends with fxt_fast_end
 * (commit, leave).
 *
 * Two forms, by the constant clk. With the TSC clock (clk false) the counter is read inline
 * and the function makes no call. With CLOCK_MONOTONIC (clk true: fxt_fire_clk_ of
 * fxtrace.h, which the first form falls back to) the clock is read by a call, after the depth
 * is raised as the general path does (a handler that interrupts after the read writes into the
 * companion slot, so the thread's ring stays in time order), into f->ts; the CPU is then
 * checked at fxt_clk_cpu_at. Each form's CPU word is fxt_tls_no_cpu when the clock is the
 * other's, so only one of them ever goes on. */
struct fxt_fast {
  struct fxt_cursor c; /* mask all ones: offsets from the event's first byte fold away */
  struct fxt_tslot *t;
  uint32_t end; /* ring position after the event */
  uint64_t ts;  /* clk: the timestamp */
};

/* How fxt_fast_open stamps the event: FXT_FAST_TSC and FXT_FAST_CLK are fxt_fast_begin's
 * two forms (clk false and true); FXT_FAST_STAMPED is for a record without a tracepoint whose
 * times the caller read before (the function tracer's slices, src/host/functions.c): no clock
 * is read, the CPU word is the running clock's form's, and there is no filter to decline for.
 * tp is not read then (it may be NULL), and the header is header_bits alone. */
enum { FXT_FAST_TSC = 0, FXT_FAST_CLK = 1, FXT_FAST_STAMPED = 2 };

static inline FXT_ALWAYS_INLINE bool fxt_fast_open(const struct fxt_tracepoint *tp,
                                                   uint32_t words, uint64_t header_bits,
                                                   int how, struct fxt_fast *f)
{
#if defined(__GNUC__) && defined(__x86_64__)
  struct fxt_tslot *t = fxt_tls_slot;
  if (FXT_UNLIKELY(t == NULL))
    return false;
  uint32_t depth = FXT_LOAD(&t->depth, FXT_MO_RELAXED);
  /* 1, not depth + 1: the fast path goes on only from depth 0, and gives the old value back
   * when it does not (an instruction less). A handler that interrupts the moment in between
   * sees a nonzero depth, which is all fxt_slots_sync reads; fxt_emit_refused takes it for
   * the first nesting level, and then uses the companion slot only if the companion's own
   * depth is 0, so a deeper emission still in the companion keeps it (the handler's event is
   * counted lost, as it was at depth 3). */
  FXT_STORE(&t->depth, 1, FXT_MO_RELAXED);
  /* Depth is raised before the session-active load, in program order (as fxt_emit_enter). */
  FXT_SIGNAL_FENCE(FXT_MO_SEQ_CST);
  if (how == FXT_FAST_CLK)
    f->ts = fxt_ticks_slow();
  /* The thread's word at fxt_fast_cpu_at, one %fs-relative load (not the thread pointer's
   * load and an add; __seg_fs is not in strict ISO C modes). It may be done before the
   * depth store: the CPU is only compared, and the thread can move at any point anyway. */
  ptrdiff_t at = how == FXT_FAST_TSC   ? fxt_fast_cpu_at
                 : how == FXT_FAST_CLK ? fxt_clk_cpu_at
                 : fxt_clock_is_tsc    ? fxt_fast_cpu_at
                                       : fxt_clk_cpu_at;
  uint32_t cpu;
  __asm__ __volatile__("movl %%fs:(%1), %0" : "=r"(cpu) : "r"(at));
  struct fxt_ring *r = &t->w.ring;
  uint32_t head = FXT_LOAD(&r->head, FXT_MO_RELAXED); /* ours */
  uint32_t bytes = words * 8;
  if (FXT_UNLIKELY((depth | (cpu ^ t->cpu_fast) |
                    (FXT_LOAD(&fxt_session_active, FXT_MO_RELAXED) ^
                     FXT_LOAD(&t->gen, FXT_MO_RELAXED))) != 0 ||
                   (int32_t)(t->fast_end - head - bytes) < 0 ||
                   (how != FXT_FAST_STAMPED &&
                    FXT_LOAD(&tp->reg.filter, FXT_MO_RELAXED) != NULL))) {
    FXT_STORE(&t->depth, depth, FXT_MO_RELAXED);
    return false;
  }
  /* Pairs with the registry's release store of the tracepoint's enabled flag. */
  FXT_FENCE(FXT_MO_ACQUIRE);
  f->c.base = t->fast_base + (head & t->fast_mask);
  f->c.mask = 0xffffffffu;
  f->c.pos = 0;
  f->t = t;
  f->end = head + bytes;
  fxt_put(&f->c, (how != FXT_FAST_STAMPED ? tp->reg.header : 0) | t->thread_bits |
                     header_bits | fxt_w_size(words));
  return true;
#else
  (void)tp, (void)words, (void)header_bits, (void)how, (void)f;
  return false;
#endif
}

static inline FXT_ALWAYS_INLINE bool fxt_fast_begin(const struct fxt_tracepoint *tp,
                                                    uint32_t words, uint64_t header_bits,
                                                    bool clk, struct fxt_fast *f)
{
  return fxt_fast_open(tp, words, header_bits, clk ? FXT_FAST_CLK : FXT_FAST_TSC, f);
}

/* The timestamp on the fast path, which runs only where the trace clock is the TSC (see
 * fxt_fast_cpu_at): a call to the CLOCK_MONOTONIC reader here would make every event save and
 * restore five registers around it (71 instructions an event instead of 58). */
static inline FXT_ALWAYS_INLINE uint64_t fxt_fast_ticks(void)
{
#if defined(__GNUC__) && defined(__x86_64__)
  return __rdtsc();
#else
  return fxt_ticks();
#endif
}

/* Publishes the event (release pairs with the readers' acquire loads of head) and leaves
 * (depth back to 0: see fxt_emit_leave). No watermark check: fast_end stops short of it. */
static inline FXT_ALWAYS_INLINE void fxt_fast_end(const struct fxt_fast *f)
{
  FXT_STORE(&f->t->w.ring.head, f->end, FXT_MO_RELEASE);
  FXT_SIGNAL_FENCE(FXT_MO_SEQ_CST);
  FXT_STORE(&f->t->depth, 0, FXT_MO_RELEASE);
}

/* Recomputes fast_end after the general path wrote (owner only). */
static inline void fxt_fast_refresh(struct fxt_tslot *t)
{
  struct fxt_ring *r = &t->w.ring;
  uint32_t head = FXT_LOAD(&r->head, FXT_MO_RELAXED);
  uint32_t used = head - r->tail_cache;
  uint32_t d = r->size - used;                   /* room */
  uint32_t w = r->size - (head & (r->size - 1)); /* to the end of the storage */
  uint32_t m = t->wake_mark > used ? t->wake_mark - used : 0; /* to the watermark */
  /* Past the mark with the consumer already woken, the mark has done its work until the
   * consumer drains (and clears wake_sent): the fast path goes on, a mark's length at a time,
   * so the general path looks again (and wakes again if need be) at the end of each. */
  if (m == 0 && FXT_LOAD(&t->wake_sent, FXT_MO_RELAXED))
    m = t->wake_mark;
  d = w < d ? w : d;
  t->fast_end = head + (m < d ? m : d);
}

#ifndef __cplusplus
/* POSIX, declared here too for programs built with a strict -std=c11 (which hides it). */
size_t strnlen(const char *s, size_t maxlen);
#endif

/* Length of s up to bound; NULL is empty. (libc's strnlen: async-signal-safe, no lock, and
 * a word or a vector at a time where a loop here would go byte by byte.) */
static inline FXT_ALWAYS_INLINE uint32_t fxt_strnlen(const char *s, uint32_t bound)
{
  return s ? (uint32_t)strnlen(s, bound) : 0;
}

/* ---- typed fields (type is a constant at every call: the switches fold away) ---------- */

FXT_EXTERN_C_BEGIN
FXT_API uint32_t fxt_utf8_cut(const char *s, uint32_t n) FXT_NOEXCEPT; /* fxt.h */
FXT_EXTERN_C_END

/* Bytes of a field's variable part: string length, or 2 hex digits per byte of an array.
 * A string as long as its bound may have been cut there, maybe inside a UTF-8 character: it
 * then backs off to the character's start, so the value is never a cut character (what is
 * guaranteed where: docs/fxt-conventions.md). A string shorter than its bound costs one
 * compare more; invalid bytes the program passes are written as they are (readers show
 * U+FFFD, `fxtrace check` names them). */
static inline FXT_ALWAYS_INLINE uint32_t fxt_field_len(uint32_t type, uint32_t bound, union fxt_value v)
{
  if (type == FXT_TYPE_STR) {
    uint32_t b = bound < FXT_STR_MAX_BOUND ? bound : FXT_STR_MAX_BOUND;
    uint32_t n = fxt_strnlen(v.s, b);
    return FXT_UNLIKELY(n == b) && n != 0 ? fxt_utf8_cut(v.s, n) : n;
  }
  if (type == FXT_TYPE_BYTES)
    return 2 * bound;
  return 0;
}

/* Nonzero when a u64 or s64 field's value needs more than 32 bits. A tracepoint whose 64-bit
 * integer fields all fit is written with them as uint32 / int32 arguments (one word each, not
 * two: a two_u64 event is 32 bytes, not 48; docs/fxt-conventions.md), as Perfetto's varints
 * and LTTng's compact headers keep records small: fewer bytes to write into memory the
 * machine may be touching for the first time, and more events per buffer. One OR and one
 * branch per event decide it (fxt_field_words_n and fxt_put_field take the outcome). */
static inline FXT_ALWAYS_INLINE uint64_t fxt_field_wide(uint32_t type, union fxt_value v)
{
  if (type == FXT_TYPE_U64)
    return v.u >> 32;
  if (type == FXT_TYPE_S64)
    return ((uint64_t)v.i + 0x80000000u) >> 32;
  return 0;
}

/* Words of a field's FXT argument; narrow: the tracepoint's 64-bit integers fit in 32 bits. */
static inline FXT_ALWAYS_INLINE uint32_t fxt_field_words_n(uint32_t type, uint32_t len,
                                                          bool narrow)
{
  switch (type) {
  case FXT_TYPE_U64:
  case FXT_TYPE_S64:
    return narrow ? 1 : 2;
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

/* Words of a field's FXT argument (64-bit integers in two words). */
static inline FXT_ALWAYS_INLINE uint32_t fxt_field_words(uint32_t type, uint32_t len)
{
  return fxt_field_words_n(type, len, false);
}

FXT_EXTERN_C_BEGIN
FXT_API void fxt_put_hex(struct fxt_cursor *c, const void *bytes, uint32_t n) FXT_NOEXCEPT;
FXT_EXTERN_C_END

/* A field's FXT argument header as the emit path takes it (the registry's arg_header): the
 * argument type (fxt_layout.h enum fxt_arg_type), the size bits of a fixed-size type and the
 * name ref; a u64 or s64 field's in its 32-bit form (uint32 or int32, one word), which
 * fxt_put_field widens when the value needs it. */
static inline FXT_ALWAYS_INLINE uint64_t fxt_arg_header(uint32_t type, uint32_t name_ref)
{
  uint64_t t, words = 1;
  switch (type) {
  case FXT_TYPE_U8:
  case FXT_TYPE_U16:
  case FXT_TYPE_U32:
  case FXT_TYPE_U64:
    t = FXT_ARG_UINT32;
    break;
  case FXT_TYPE_S8:
  case FXT_TYPE_S16:
  case FXT_TYPE_S32:
  case FXT_TYPE_S64:
    t = FXT_ARG_INT32;
    break;
  case FXT_TYPE_BOOL:
    t = FXT_ARG_BOOL;
    break;
  case FXT_TYPE_DOUBLE:
    t = FXT_ARG_DOUBLE;
    words = 2;
    break;
  case FXT_TYPE_PTR:
    t = FXT_ARG_POINTER;
    words = 2;
    break;
  default:
    t = FXT_ARG_STRING; /* strings, byte arrays in hex: size bits per value */
    words = 0;
    break;
  }
  return fxt_w_arg((uint32_t)t, words, name_ref);
}

/* Writes a field as an FXT argument; ah = fxt_arg_header's; narrow: as fxt_field_words_n. */
static inline FXT_ALWAYS_INLINE void fxt_put_field(struct fxt_cursor *c, uint64_t ah,
                                                   uint32_t type, union fxt_value v,
                                                   uint32_t len, bool narrow)
{
  uint64_t words = fxt_field_words(type, len);
  switch (type) {
  case FXT_TYPE_U8:
  case FXT_TYPE_U16:
  case FXT_TYPE_U32:
    fxt_put(c, ah | fxt_w_arg_value32((uint32_t)v.u));
    break;
  case FXT_TYPE_S8:
  case FXT_TYPE_S16:
  case FXT_TYPE_S32:
    fxt_put(c, ah | fxt_w_arg_value32((uint32_t)(int32_t)v.i));
    break;
  case FXT_TYPE_BOOL:
    fxt_put(c, ah | fxt_w_arg_bool(v.u != 0));
    break;
  case FXT_TYPE_DOUBLE: {
    uint64_t bits;
    __builtin_memcpy(&bits, &v.d, 8);
    fxt_put(c, ah);
    fxt_put(c, bits);
    break;
  }
  case FXT_TYPE_PTR:
    fxt_put(c, ah);
    fxt_put(c, (uint64_t)(uintptr_t)v.p);
    break;
  case FXT_TYPE_STR:
    /* Inline string value (ref 0x8000 | len); an empty string is ref 0. */
    fxt_put(c, ah | fxt_w_arg_size(words) | fxt_w_arg_inline_str(len));
    fxt_put_bytes(c, v.s, len);
    break;
  case FXT_TYPE_BYTES:
    fxt_put(c, ah | fxt_w_arg_size(words) | fxt_w_arg_inline_str(len));
    fxt_put_hex(c, v.p, len / 2);
    break;
  default: /* U64, S64 */
    if (narrow) {
      fxt_put(c, ah | fxt_w_arg_value32((uint32_t)v.u));
    } else {
      /* uint32 -> uint64 and int32 -> int64 (one xor of the type), size 1 word -> 2 */
      fxt_put(c, ah ^ (fxt_w_arg_size(1 ^ 2) |
                       (type == FXT_TYPE_U64 ? FXT_ARG_UINT32 ^ FXT_ARG_UINT64
                                             : FXT_ARG_INT32 ^ FXT_ARG_INT64)));
      fxt_put(c, v.u);
    }
    break;
  }
}

#endif /* FXTRACE_DETAIL_EMIT_H */
