/* fxtrace/detail/tslot.h - a thread's slot: its buffer and emit state (host).
 *
 * NOT API: the layout and every member may change in any release. The struct is defined in a
 * header only because the inline fast path (fxtrace/detail/emit.h) reads and writes its
 * members at every fire site; src/host (slots.c, buffers.c) owns it. Programs never name it.
 */
#ifndef FXTRACE_DETAIL_TSLOT_H
#define FXTRACE_DETAIL_TSLOT_H

#include "../common.h"
#include "../writer.h"

#include <stdint.h>

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
  unsigned char *fast_base; /* the ring's storage and size - 1, for the fast path; set at */
  uint32_t fast_mask;       /* attach */
  uint32_t fast_end;     /* ring position up to which an event may take the fast path: no
                            further than the room as of tail_cache, the end of the storage
                            (no wrap) and the wake watermark, or once the consumer was woken
                            a watermark's length (fxt_fast_refresh); owner only */
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

/* cpu_fast when the next event must take the slow path: a value no CPU number and no rseq
 * cpu_id (-1 uninitialized, -2 registration failed) ever has. */
#define FXT_CPU_SLOW 0xfffffff0u
/* What fxt_fast_cpu_at reads when the fast path is off (no TSC clock or no rseq): a value
 * that is no cpu_fast, so every event takes the general path. */
#define FXT_CPU_NEVER 0xfffffff1u

/* A slot generation with this bit is muted: its events are not recorded (set_event_pid). */
#define FXT_GEN_MUTED 0x80000000u

#endif /* FXTRACE_DETAIL_TSLOT_H */
