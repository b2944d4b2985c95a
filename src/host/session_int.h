/* session_int.h - the session itself: its state, its pool of slots and their bookkeeping,
 * shared by the tracer's modules. What each module offers the others is in its own header
 * (buffers.h, slots.h, clock.h, consumer.h, trigger.h); this one holds the session and what
 * session.c offers.
 *
 * Threads and their buffers: the session owns a pool of slots, each a struct fxt_tslot (the
 * thread's writer and emit state) followed by its ring storage. A thread takes a free slot on
 * its first event (slots_attach.c) and gives it back when it exits; the consumer then drains
 * what is left and frees the slot. Slot states and who moves them:
 *
 *   FREE -> LIVE      the attaching thread, under pool_lock (release store: the slot is set up)
 *   LIVE -> EXITED    the thread's exit destructor (release store: its last commit is visible)
 *   EXITED -> FREE    the consumer, after draining it (under pool_lock)
 *
 * The consumer reads state with acquire loads. Pools are never unmapped (threads keep a TLS
 * pointer into them); a new session reuses the pool when its geometry matches.
 *
 * Stale pointers. A thread that attached in an earlier session keeps fxt_tls_slot pointing at
 * that slot until its next event (fxt_emit_refused sees the slot's gen is not the running
 * session's and attaches again) or its exit. The slot's gen is the only thing that keeps it
 * from writing there, so a slot of a reused pool it may still point at is `held` (slot_info):
 * FREE, but given to no other thread, until the stale owner lets go of it. Were it given away,
 * the new owner's take_slot would store the running session's gen into it and the stale owner's
 * next event would pass the gen check (fast path or fxt_emit_enter) and go into another
 * thread's ring: under that thread's name, two producers on one ring, or, once that thread
 * exited and the consumer freed the slot, into a ring nobody drains, lost and uncounted.
 */
#ifndef FXT_HOST_SESSION_INT_H
#define FXT_HOST_SESSION_INT_H

#include <fxtrace/detail/emit.h>
#include <fxtrace/ingress.h>
#include <fxtrace/session.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

#include "../base/shfile.h"
#include "outfile.h"

enum slot_state { SLOT_FREE = 0, SLOT_LIVE = 1, SLOT_EXITED = 2 };

/* Per-slot bookkeeping that is not on the emit path. What a recovery needs of a slot (owner,
 * state, delivered position, what losses the file reports) is in its entry of the session
 * file's slot table (struct fxt_sh_slot, shfile.h), written beside this. */
struct slot_info {
  _Atomic uint32_t state; /* enum slot_state; see above */
  uint32_t owner_gen;     /* bumped each time a new thread takes the slot (under pool_lock) */
  pid_t tid;
  char comm[16];          /* thread name when attached (the consumer refreshes it) */
  /* Consumer-only. */
  uint32_t announced_gen; /* owner_gen whose thread/kobj records are in the file */
  uint64_t delivered_bytes;
  uint32_t live_cpu;       /* CPU of the thread as its stream last said (live view) */
  uint32_t ring_pos;       /* ring position its staged records ended at (drain_slot_to) */
  uint32_t ring_cpu;       /* the CPU in effect there (cpunote.h; FXT_CPU_NOTE_NONE) */
  uint64_t events_read;    /* events the consumer drained from this buffer */
  uint64_t dropped_total;  /* events its drop_stats records reported */
  /* Copies of those two for other threads (per_thread stats, control.c): stored by the
   * consumer after each chunk, reset when a thread takes the slot; relaxed, counters only. */
  _Atomic uint64_t events_read_pub, dropped_pub;
  uint64_t loss_total;     /* events the file's loss records of this thread add up to */
  uint64_t loss_shown;     /* loss_total as of the last `dropped` counter written */
  uint32_t poll_head;      /* the ring's head at the previous pass (consumer.c drain_live) */
  uint32_t poll_gen;       /* owner_gen whose ring poll_head is of */
  void *alt_stack;         /* the trigger's signal stack for the slot's owners (trigger.c) */
  uint32_t warm_pages;     /* pages of the ring written once from the process
                              (slots_warm.c fxt_slot_warm says who writes it); 0 with a new pool */
  uint32_t cons_warm;      /* pages of a live ring the consumer has touched
                              (slots_warm.c touch_live): set by take_slot, then the consumer's */
  _Atomic uint32_t kern_warm; /* pages [0, kern_warm) of the ring the kernel has read once
                              from the process (fxt_kernel_touch): the consumer's (0 with a
                              new pool); atomic for fxt_slot_kernel_warm's readers */
  bool reserved;           /* the slot's file pages allocated (fxt_buffers_reserve_slot);
                              under pool_lock; false with a new pool */
  /* 1 while the owner waits for room in a full buffer, outermost emission (block mode,
   * slots_emit.c reserve_blocking): it has read its filter program already and reads none until
   * it leaves. Written by the owner (1 with release, 0 before the emission leaves), read by
   * fxt_slots_sync (acquire), which then need not wait for it. */
  _Atomic uint32_t parked;
  /* The slot is FREE but a thread of an earlier session of this pool may still have it in
   * fxt_tls_slot (see "Stale pointers" above): no thread but that one may take it. Set by
   * fxt_slots_setup for the slots LIVE when the pool is reused (their owners may be alive);
   * cleared by the stale owner itself, after it dropped its pointer, when it attaches again
   * (fxt_emit_refused) or exits (on_thread_exit): fxt_slot_drop_hold. Read and written under
   * pool_lock only: the unlock after the owner's clear pairs with the lock of the next
   * attach that may take the slot, so the owner's pointer is gone before anyone else's gen
   * is stored into it (and only the owner reads its own fxt_tls_slot). */
  bool held;
};

struct session {
  struct fxt_session_config cfg;
  char events[4096];
  char output_pattern[4096]; /* as configured (%p unexpanded): children of fork expand it */
  char output[4096];         /* expanded path ("" = no file, "-" = stdout) */
  char trigger[4096];        /* the trigger's snapshot file, %p expanded ("" = none) */
  char trigger_pattern[4096]; /* as configured: a child of fork expands it with its pid */
  uint32_t gen;      /* this session's generation (fxt_session_active while running) */

  /* Pool geometry and memory. */
  uint32_t buffer_bytes; /* ring storage per slot, a power of two */
  uint32_t nslots;
  size_t stride;         /* bytes per slot: fxt_tslot header page(s) + storage */
  unsigned char *pool;
  size_t pool_map_bytes; /* bytes mapped at pool (at least stride * nslots) */
  struct slot_info *info;
  size_t info_bytes;
  pthread_mutex_t pool_lock;
  _Atomic uint32_t slot_freed_gen; /* bumped when a slot is freed (threads without a slot retry) */

  /* The session file (buffers.c, shfile.h): its header (sh->no_slot_drops counts the events
   * of threads that could get no buffer), the slot table, and these regions of it. */
  unsigned char *meta;
  size_t meta_bytes, meta_map_bytes;
  struct fxt_sh *sh;
  /* Signal context: records of emissions nested in a thread's own emission (slots_emit.c pushes,
   * the consumer pops and merges them into their thread's stream). */
  struct fxt_ingress *ingress;
  unsigned char *held;   /* the consumer's popped, not yet written ingress records */

  /* Buffers directory (buffers_dir.c): files under buffers_dir, or anonymous memory. */
  char buffers_base[4096]; /* the configured directory; "" = anonymous memory */
  bool buffers_explicit;   /* configured (a failure is an error), not the default */
  char buffers_dir[4096];  /* this session's directory; "" when anonymous */
  /* Pool and session file are files in buffers_dir, mapped (else anonymous memory). No
   * descriptor of theirs is kept: a program may close every descriptor it did not open and
   * give the numbers to files of its own (outfile.h); fxt_buffers_fallocate opens them. */
  bool file_backed;
  char pool_path[4200], meta_path[4200]; /* theirs (set with file_backed) */
  /* The lock of buffers_dir (harvest.h), held from its creation to its removal; -1 when
   * anonymous. Written by the thread that starts, stops or forks the session. lock_id: the
   * file it was opened on (closed only while it still is). */
  int lock_fd;
  struct fxt_fd_id lock_id;
  char parent_dir[4096];   /* a child of fork: the parent's session directory ("" none) */
  bool output_append;      /* after exec: the output holds the previous image's trace */
  uint64_t strings_alloc, tps_alloc; /* session file bytes allocated (fallocate) so far */

  /* Clock. */
  uint64_t ticks_per_second;

  /* Consumer. */
  pthread_t consumer;
  bool consumer_running;
  _Atomic uint32_t wake;  /* futex word: bumped to wake the consumer */
  _Atomic uint32_t stop;  /* 1: the consumer makes its last pass and exits */
  /* Threads on their way to a slot: from before pool_lock to the end of their warm-up
   * (fxt_emit_enter_slow). While it is not 0 the consumer leaves the spare slot and the live
   * buffers' pages alone (slots_warm.c warm_yields): a mutex does not hand over - the consumer
   * taking pool_lock again chunk after chunk of the spare slot held a new thread for the whole
   * of it - and on a VM with shadow paging a process's first touches are taken one at a time.
   * Its own areas (staging, view, file) it warms on: stopping those too made a producer that
   * starts at once lose events in 2 of 18 paced runs, against 0 of 46 (docs/performance.md).
   * Relaxed: a count, ordering nothing. */
  _Atomic uint32_t attaching_threads;
  pid_t pid;
};

extern struct session fxt_session; /* the one session of the process (guarded by its lifecycle) */

/* Companion writer of a slot, for signal context (see fxt_tslot.nested). */
#define NESTED_BYTES 2048u
#define INGRESS_SLOTS 1024u
#define INGRESS_PAYLOAD 512u

static inline struct fxt_tslot *session_slot(const struct session *s, uint32_t i)
{
  return (struct fxt_tslot *)(void *)(s->pool + (size_t)i * s->stride);
}

/* Slot i's entry in the session file's slot table. */
static inline struct fxt_sh_slot *sh_slot(const struct session *s, uint32_t i)
{
  return (struct fxt_sh_slot *)(void *)(s->meta + s->sh->slots_off +
                                        (size_t)i * FXT_SH_SLOT_BYTES);
}

/* session.c */
void fxt_session_pause(bool paused);
/* The running session's gen while its recording is off, else 0 (session.c says who writes). */
extern _Atomic uint32_t fxt_session_off_gen;

/* Overwrite mode without an output file: a live thread's ring is the record (its newest
 * records, which fxt_snapshot writes), so the consumer leaves it alone and its producer never
 * wakes it; an exited thread's ring is drained and freed as always. The live view shows the
 * rings through copies (`trace`, fxt_consumer_view_hold), and while a trace_pipe is open the
 * consumer drains them into it after all (trace_pipe consumes; consumer.c pass). */
static inline bool fxt_flight_recorder(const struct session *s)
{
  return s->cfg.mode == FXT_MODE_OVERWRITE && s->output[0] == 0;
}

/* session.c: fxt_snapshot from a signal handler (no lock; nothing while no consumer runs, or
 * on the consumer thread itself). */
void fxt_snapshot_in_signal(const char *path, uint32_t timeout_ms);

#endif
