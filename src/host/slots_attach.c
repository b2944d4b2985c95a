/* slots_attach.c - a thread and its buffer: a free slot taken on the thread's first event
 * (fxt_emit_enter_slow, under pool_lock), an emission the fast path refused (nested in a
 * signal handler: the companion; a slot of an earlier session: attach again), and the slot
 * given back to the consumer at the thread's exit. A thread that finds no free slot has its
 * events counted as lost, and looks again only after a slot was freed.
 */
#define _GNU_SOURCE
#include <fxtrace/detail/emit.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "control.h"
#include "../base/cpunote.h"
#include "../base/namefix.h"
#include "intern.h"
#include "slots_int.h"

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
/* Set while this thread is inside fxt_emit_enter_slow or fxt_slot_drop_hold: a signal handler
 * that fires an event then must not try to attach again (it would take pool_lock twice). */
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
      !s->pool) {
    /* A slot of an earlier session: that session already took it over. If the pool was
     * reused, the slot is held for this thread (session_int.h): let it go. `attaching`: a
     * signal handler's event meanwhile is counted, never takes pool_lock a second time. */
    attaching = 1;
    fxt_slot_drop_hold(s, t);
    attaching = 0;
    return;
  }
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

void fxt_slots_exit_key_init(void)
{
  pthread_once(&exit_key_once, make_exit_key);
}

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

/* Sets up slot i for the calling thread. Under pool_lock. */
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
  fxt_slot_ring_policy(&t->w.ring);
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
  fxt_slot_companion_setup(s, t, i, tid);
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
  info->cons_warm = info->warm_pages > fxt_slots_sync_pages(s) ? info->warm_pages : fxt_slots_sync_pages(s);
  fxt_slot_sh_own(s, i, t);
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
  atomic_fetch_add_explicit(&s->attaching_threads, 1, memory_order_relaxed);
  pthread_mutex_lock(&s->pool_lock);
  if (gen == s->gen) {
    for (uint32_t i = 0; i < s->nslots && !t; i++)
      if (atomic_load_explicit(&s->info[i].state, memory_order_relaxed) == SLOT_FREE &&
          !s->info[i].held) /* not a stale owner's (session_int.h) */
        t = take_slot(s, i);
  }
  pthread_mutex_unlock(&s->pool_lock);
  if (!t) {
    atomic_fetch_sub_explicit(&s->attaching_threads, 1, memory_order_relaxed);
    say_no_slot(s, gen);
    no_slot_seen = gen + atomic_load_explicit(&s->slot_freed_gen, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->sh->no_slot_drops, 1, memory_order_relaxed);
    unattached_drops++;
    attaching = 0;
    return NULL;
  }
  fxt_slot_warm(s, t->slot_index);
  atomic_fetch_sub_explicit(&s->attaching_threads, 1, memory_order_relaxed);
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
  /* The slot belongs to an earlier session: attach to the running one. The pointer is
   * dropped first, then the slot's hold (session_int.h): from the unlock in
   * fxt_slot_drop_hold another thread may take it and store the running gen into it. */
  fxt_tls_slot = NULL;
  attaching = 1; /* as on_thread_exit: a handler's event now is counted, no second lock */
  fxt_slot_drop_hold(&fxt_session, t);
  attaching = 0;
  return fxt_emit_enter_slow();
}
