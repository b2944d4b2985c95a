/* consumer.c - the session's consumer thread: the one reader of every ring, and the FXT file
 * writer (docs/fxt-conventions.md gives the file order).
 *
 * Each pass takes every non-free slot in turn: it announces a new owner thread (thread and
 * kernel-object records), stages the ring's records without consuming them (in place in
 * discard mode, a copy in overwrite mode; deliver.c), writes whatever strings and tracepoint
 * descriptions appeared meanwhile (after the staging, so every string a staged record refers
 * to was interned before and is covered), writes loss records for the gap in front of the
 * staged records, then the staged records themselves, and only once write() has taken them
 * moves the ring's tail past them (fxt_cons_commit; deliver.c). A slot whose thread exited is
 * drained to the end, its pending drop statistics written (the thread is gone, so the consumer
 * may act as its producer), and freed. A flight recorder's live slots are left alone unless a
 * trace_pipe is open (pass); its `trace` is shown from copies of the rings (view_refresh,
 * consumer_snap.c), and snapshots are copies too.
 *
 * Every write to the output goes through fxt_cons_commit() (consumer_out.c), the protocol that
 * lets `fxtrace recover` know after a crash which records are in the file and which are still
 * in their buffers (docs/recovery.md): the intent (what the write holds, where it starts) is
 * stored in the session file before the write, marked WRITTEN after it returned, then applied
 * (the slot's delivered position and reported losses, the committed length), and only then
 * does the ring's tail move. All of it is the consumer thread's alone (consumer_int.h lists
 * the files that share its state, fxt_cons).
 */
#define _GNU_SOURCE
#include "consumer_int.h"
#include "evtrig.h"

struct fxt_consumer_state fxt_cons;

int fxt_session_counters(struct fxt_session_counters *c)
{
  if (!c || c->struct_size < sizeof(*c))
    return FXT_EINVAL;
  c->nested_records = atomic_load_explicit(&fxt_cons.nested_records, memory_order_relaxed);
  c->no_buffer_lost = atomic_load_explicit(&fxt_cons.no_buffer_lost, memory_order_relaxed);
  return 0;
}


/* ---- draining ---------------------------------------------------------------------------- */

/* Timestamp of the first record of a chunk when it is an event, else the clock now. */
uint64_t fxt_cons_first_ts(const unsigned char *p, uint32_t len)
{
  uint64_t h, ts;
  if (len >= 16) {
    memcpy(&h, p, 8);
    if ((h & 0xf) == FXT_RECORD_EVENT) {
      memcpy(&ts, p + 8, 8);
      return ts;
    }
  }
  return fxt_ticks();
}

/* Overrun the producer counted (count, free-running) that no loss record reports yet: less
 * what it counted after the records were delivered (the credit; deliver.c) and what is
 * reported (rep). A count not yet caught up with its credit waits (0). */
uint32_t fxt_cons_unreported(uint32_t count, uint32_t credit, uint32_t rep)
{
  uint32_t n = count - credit - rep;
  return (int32_t)n > 0 ? n : 0;
}

/* Drains slot i: until it is empty, or (when `bounded`) one buffer's worth, so that a
 * producer as fast as the consumer cannot keep it on one slot (starving the others and the
 * ingress ring); with `upto`, only the records before that ring position (a head the
 * producer published: a record boundary). Returns the bytes read. */
static uint64_t drain_slot_to(struct session *s, uint32_t i, bool bounded, const uint32_t *upto)
{
  struct fxt_tslot *t = session_slot(s, i);
  struct slot_info *info = &s->info[i];
  struct fxt_sh_slot *e = sh_slot(s, i);
  uint64_t total = 0;
  fxt_cons_announce(s, i);
  for (;;) {
    if (bounded && total >= s->buffer_bytes)
      break;
    uint32_t cap = STAGE_BYTES;
    if (upto) {
      /* The records before *upto: the ring's tail is ours in discard mode; in overwrite mode
       * the producer may have moved it past *upto, and then nothing is left to take. */
      int32_t left = (int32_t)(*upto - atomic_load_explicit(&t->w.ring.tail,
                                                            memory_order_relaxed));
      if (left <= 0)
        break;
      cap = (uint32_t)left < cap ? (uint32_t)left : cap;
    }
    struct effect fx = {.slot = i};
    fx.rep[0] = atomic_load_explicit(&e->rep_overrun_records, memory_order_relaxed);
    fx.rep[1] = atomic_load_explicit(&e->rep_overrun_bytes, memory_order_relaxed);
    fx.rep[2] = atomic_load_explicit(&e->rep_lost_records, memory_order_relaxed);
    fx.rep[3] = atomic_load_explicit(&e->rep_lost_bytes, memory_order_relaxed);
    fx.rep_nested = atomic_load_explicit(&e->rep_nested, memory_order_relaxed);
    /* The counters before the copy: an overrun counted now is of records older than the
     * ones staged, so it is reported in front of them; a producer that overwrites staged
     * records after this counts them later, and the claim credits them (deliver.c). */
    /* Held records so far, and whether the thread is outside any emission now: acquire pairs
     * with the release store of depth in fxt_emit_leave (its commits are visible). */
    uint32_t half = atomic_load_explicit(&s->sh->held_active, memory_order_relaxed);
    uint64_t safe_end = atomic_load_explicit(&s->sh->held_len[half], memory_order_relaxed);
    if (atomic_load_explicit(&t->depth, memory_order_acquire) != 0)
      safe_end = 0;
    struct fxt_ring_stats rs;
    fxt_ring_stats(&t->w.ring, &rs);
    uint64_t nested = atomic_load_explicit(&t->lost, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire); /* those loads before the copy's */
    int rc = fxt_deliver_stage(&t->w.ring, e, fxt_cons.stage, cap, &fx.st);
    /* Then the signal-context records: a handler pushes its record before the emissions that
     * follow it commit, so everything the thread pushed before the newest staged record (the
     * acquire of its commit makes the push visible) is popped now and merged below in time
     * order, never in a later chunk behind newer records. */
    fxt_cons_pop_ingress(s);
    fxt_cons_out_reserve(4096); /* this slot's loss records and its commit go out together */
    if (rc < 0) {
      /* A corrupt ring (a producer wrote a bad header): drop its contents, count them. */
      uint32_t lost = fxt_ring_drain(&t->w.ring);
      FXT_ADD_OWNED(&e->consumed, lost);
      fxt_cons_write_loss(s, i, FXT_STR_LOST, 1, lost, fxt_ticks());
      fx.st.len = 0;
      fxt_cons_commit(NULL, 0, &fx);
      continue;
    }
    uint64_t ts = fxt_cons_first_ts(fx.st.data, fx.st.len);
    bool wrote = false;
    /* Records that do not follow the last ones staged (the producer passed records in
     * between, overwrite mode): their CPU, from the producer's note (cpunote.h), goes in
     * front of the chunk below unless their first record names it. */
    uint32_t cpu = info->ring_cpu;
    bool put_cpu = false;
    if (fx.st.len && fx.st.from != info->ring_pos) {
      cpu = fx.st.cpu;
      uint64_t h;
      memcpy(&h, fx.st.data, 8);
      put_cpu = cpu != FXT_CPU_NOTE_NONE &&
                fxt_cpu_of_record(fx.st.data, fxt_ring_record_bytes(h)) == FXT_CPU_NOTE_NONE;
      if (put_cpu)
        info->live_cpu = cpu; /* for the losses' CPU:N lines too */
    }
    /* Overrun records the producer counted and the output does not report yet. */
    uint32_t orec = fxt_cons_unreported(rs.overrun_records,
                               atomic_load_explicit(&e->credit_records, memory_order_relaxed),
                               fx.rep[0]);
    uint32_t obytes = fxt_cons_unreported(rs.overrun_bytes,
                                 atomic_load_explicit(&e->credit_bytes, memory_order_relaxed),
                                 fx.rep[1]);
    if (orec || obytes) {
      fxt_cons_write_loss(s, i, FXT_STR_OVERRUN, orec, obytes, ts);
      live_lost(info->live_cpu, orec, true);
      fx.rep[0] += orec;
      fx.rep[1] += obytes;
      wrote = true;
    }
    uint32_t lrec = rs.lost_records - fx.rep[2];
    uint32_t lbytes = rs.lost_bytes - fx.rep[3];
    if (lrec || lbytes) { /* claimed by the consumer but not delivered (overwrite mode) */
      fxt_cons_write_loss(s, i, FXT_STR_LOST, lrec, lbytes, ts);
      live_lost(info->live_cpu, lrec, false);
      fx.rep[2] = rs.lost_records;
      fx.rep[3] = rs.lost_bytes;
      wrote = true;
    }
    if (nested != fx.rep_nested) {
      fxt_cons_write_loss(s, i, FXT_STR_LOST, nested - fx.rep_nested, 0, ts);
      live_lost(info->live_cpu, nested - fx.rep_nested, false);
      fx.rep_nested = nested;
      wrote = true;
    }
    fxt_cons_write_metadata(); /* strings interned before the copy: every staged ref is covered */
    /* Signal-context records of this thread, merged by time (all of them once the ring is
     * empty: they are newer than anything left in it). */
    unsigned char *chunk;
    uint32_t ring_used;
    uint32_t len = fxt_cons_merge_held(i, fx.st.data, fx.st.len, fx.st.len == 0, safe_end, &chunk,
                              &ring_used);
    fx.st.len = ring_used; /* the rest stays in the ring for the next chunk */
    fx.st.to = fx.st.from + ring_used;
    if (len == 0) {
      if (wrote)
        fxt_cons_commit(NULL, 0, &fx); /* the loss records, and what they report */
      break;
    }
    if (put_cpu && ring_used) {
      /* At the time of the chunk's first record (ts_of: the thread's order), so that the
       * signal-context records merged in front of the ring's stay in order behind it. */
      uint64_t h, w[6];
      memcpy(&h, chunk, 8);
      uint64_t ts = fxt_cons_ts_of(chunk, fxt_ring_record_bytes(h));
      fxt_cons_out_write(&fxt_cons.out, w, fxt_cons_encode_cpu(s, i, cpu, ts, w));
    }
    uint64_t events_before = info->events_read, dropped_before = info->dropped_total;
    uint32_t last_cpu;
    live_feed(chunk, len, (uint32_t)info->tid, info->comm, &info->live_cpu, &info->events_read,
              &info->dropped_total, &last_cpu);
    if (ring_used) {
      /* The CPU at the end of what is staged, noted before the claim moves the tail there
       * (cpunote.h (N1): deliver.c's claim is a release); the note kept is the one for the
       * end of the previous claim. The feed's walk found the chunk's last cpu record, unless
       * signal-context records were merged into it (then a walk of the ring's part). */
      if (chunk != fx.st.data || len != ring_used)
        last_cpu = fxt_cpu_after(fx.st.data, ring_used, FXT_CPU_NOTE_NONE);
      info->ring_cpu = last_cpu != FXT_CPU_NOTE_NONE ? last_cpu : cpu;
      fxt_cpu_note_put(e->cons_cpu_note, info->ring_pos, fx.st.to, info->ring_cpu);
      info->ring_pos = fx.st.to;
    }
    atomic_store_explicit(&info->events_read_pub, info->events_read, memory_order_relaxed);
    atomic_store_explicit(&info->dropped_pub, info->dropped_total, memory_order_relaxed);
    if (fxt_cons.out.error) {
      /* The output failed: nothing is written any more; what the chunk held is counted. */
      fxt_cons.unwritten_records +=
          info->events_read - events_before + info->dropped_total - dropped_before;
      fxt_cons_commit(NULL, 0, &fx);
    } else if (fxt_cons.out.limit && fxt_cons.out.written + len > fxt_cons.out.limit) {
      /* Past max_file_kb: the chunk is not written, and what it held is counted in-band as
       * the thread's lost events (its events, and the drops its drop_stats reported); the
       * small bookkeeping record may go past the limit. */
      uint64_t lost = info->events_read - events_before + info->dropped_total - dropped_before;
      fxt_cons_write_loss(s, i, FXT_STR_LOST, lost, len, ts);
      fxt_cons.capped_records += lost;
      fxt_cons_commit(NULL, 0, &fx);
    } else {
      fxt_cons.out.written += len;
      /* Records on ring pages the kernel has not read yet go through the staging area (a
       * copy at ~10 GB/s, against ~2.7 ms a MiB for the kernel's first access to a page on a
       * VM with shadow paging; fxt_slots_kernel_warm reads them between passes). */
      const unsigned char *from = chunk;
      if (chunk == fx.st.data && chunk != fxt_cons.stage &&
          !fxt_slot_kernel_warm(s, i, fx.st.from, len)) {
        memcpy(fxt_cons.stage, chunk, len);
        from = fxt_cons.stage;
      }
      fxt_cons_commit(from, len, &fx);
      if (fxt_cons.out.error) /* this write failed: the file kept the chunk's first kept_b bytes */
        fxt_cons.unwritten_records +=
            fxt_cons_records_in(chunk + fxt_cons.out.kept_b, len - fxt_cons.out.kept_b);
      info->loss_total += info->dropped_total - dropped_before; /* its drop_stats records */
    }
    fxt_cons_write_dropped(s, i, ts);
    total += fx.st.len;
  }
  info->delivered_bytes += total;
  fxt_cons_write_dropped(s, i, fxt_ticks()); /* losses written with nothing after them */
  atomic_store_explicit(&t->wake_sent, 0, memory_order_relaxed); /* drained: wake me again */
  return total;
}

static uint64_t drain_slot(struct session *s, uint32_t i)
{
  return drain_slot_to(s, i, false, NULL);
}

/* A slot whose thread is gone (or, at stop, every slot: the handshake has run): write the
 * pending drop statistics as its producer, drain, and for an exited thread free the slot. */
static void finish_slot(struct session *s, uint32_t i, bool free_it)
{
  struct fxt_tslot *t = session_slot(s, i);
  drain_slot(s, i);
  for (;;) {
    if (t->w.drop_records | t->w.drop_bytes)
      fxt_pass_oldest(s, t, FXT_DROP_STATS_BYTES); /* as its producer (overwrite mode) */
    if (fxt_writer_emit_drop_stats(&t->w) == 0)
      break;
    drain_slot(s, i);
  }
  drain_slot(s, i);
  if (free_it)
    fxt_slot_free(s, i);
}

/* A live slot in a pass. A pass that only the poll timer started (`timer`: no thread woke the
 * consumer, no reader waits on trace_pipe) takes a buffer below its wake mark only up to where
 * its head was at the previous such pass: records that have waited a whole poll period. A
 * burst that fits below the mark is so written after it, instead of competing with it for
 * the CPUs; a trickle of events is in the file within two poll periods. */
static void drain_live(struct session *s, uint32_t i, bool timer)
{
  struct fxt_tslot *t = session_slot(s, i);
  struct slot_info *info = &s->info[i];
  /* Acquire pairs with the producer's release of head (ring.c (1)). */
  uint32_t head = atomic_load_explicit(&t->w.ring.head, memory_order_acquire);
  uint32_t tail = atomic_load_explicit(&t->w.ring.tail, memory_order_relaxed);
  bool seen = info->poll_gen == info->owner_gen; /* poll_head is of this owner's ring */
  if (timer && head - tail <= t->wake_mark) {
    uint32_t upto = seen ? info->poll_head : tail;
    drain_slot_to(s, i, true, &upto);
  } else {
    drain_slot_to(s, i, true, NULL);
  }
  info->poll_head = head;
  info->poll_gen = info->owner_gen;
}

/* A pass drains the live slots, except in a flight recorder, which keeps its threads'
 * records in their rings until a trace_pipe is open (it consumes, as the kernel's does); a
 * flight recorder's `trace` reader showing copies of the rings (view.state DONE; acquire
 * pairs with fxt_consumer_view_release) holds back every ring's records, exited threads'
 * too, until it is done. */
void fxt_cons_pass(struct session *s, bool timer)
{
  timer = timer && !live_has_waiters();
  bool flight = fxt_flight_recorder(s);
  bool held = flight && fxt_cons_view_held();
  bool drain = !flight || (!held && live_pipe_readers());
  for (uint32_t i = 0; i < s->nslots; i++) {
    uint32_t state = atomic_load_explicit(&s->info[i].state, memory_order_acquire);
    if (state == SLOT_LIVE && drain)
      drain_live(s, i, timer);
    else if (state == SLOT_EXITED && !held)
      finish_slot(s, i, true);
  }
  fxt_cons_refresh_names(s);
  fxt_cons_write_metadata();
  /* About once a second a clock sync in the file, so that readers follow the counter's drift
   * against CLOCK_MONOTONIC through a long trace, and a crash leaves a recent one behind. */
  if (fxt_ticks_slow() - fxt_cons.last_sync_ns >= SYNC_NS)
    fxt_cons_write_clock_sync(s, false);
  fxt_buffers_maintain(s); /* the latest clock sync, room for new strings */
  /* Hand each pass to the kernel: a process killed without running its exit handlers still
   * leaves a readable file with everything drained so far. */
  fxt_cons_out_flush();
}

/* Passes completed, for fxt_session_flush: the consumer bumps it after each pass. */
static pthread_mutex_t pass_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pass_cond = PTHREAD_COND_INITIALIZER;
static uint64_t passes;
_Atomic unsigned fxt_cons_flushers; /* consumer_int.h; relaxed: a test hook's hint only */

static void pass_done(void)
{
  pthread_mutex_lock(&pass_lock);
  passes++;
  pthread_cond_broadcast(&pass_cond);
  pthread_mutex_unlock(&pass_lock);
}

int fxt_consumer_flush(struct session *s)
{
  if (!s->consumer_running)
    return FXT_ENOENT;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 10;
  atomic_fetch_add_explicit(&fxt_cons_flushers, 1, memory_order_relaxed);
  pthread_mutex_lock(&pass_lock);
  uint64_t target = passes + 2; /* the pass under way may have begun before this call */
  int rc = 0;
  while (passes < target && rc == 0) {
    pthread_mutex_unlock(&pass_lock);
    fxt_consumer_wake(s);
    pthread_mutex_lock(&pass_lock);
    if (passes < target)
      rc = pthread_cond_timedwait(&pass_cond, &pass_lock, &until);
  }
  pthread_mutex_unlock(&pass_lock);
  atomic_fetch_sub_explicit(&fxt_cons_flushers, 1, memory_order_relaxed);
  return rc == 0 ? 0 : FXT_EAGAIN;
}

/* The output failed (out.error): the file ends at the last whole write before the failure,
 * and nothing was written since. One last small try: a `lost` record of the process (thread
 * koid 0) counting the records not written, and the closing clock sync; if even that does not
 * fit, it is cut off again and the count is only on stderr. */
__attribute__((cold)) void fxt_cons_write_failed_tail(struct session *s)
{
  int error = fxt_cons.out.error;
  fxt_cons.out.len = 0; /* what is buffered could not be written either */
  bool counted = false;
  if (!fxt_cons.out.torn) { /* records after a torn one would be read from inside it */
    fxt_cons.out.error = 0;
    if (fxt_cons.unwritten_records)
      fxt_cons_write_process_loss(s, fxt_cons.unwritten_records);
    fxt_cons_write_clock_sync(s, false);
    fxt_cons_out_flush();
    counted = fxt_cons.out.error == 0;
    fxt_cons.out.error = error;
  }
  fprintf(stderr,
          "fxtrace: %s: write failed at byte %llu: %s; stopped writing there: %llu records not "
          "written (%s)\n",
          s->output, (unsigned long long)fxt_cons.out.failed_at, strerror(error),
          (unsigned long long)fxt_cons.unwritten_records,
          counted      ? "counted in the file as lost, thread 0"
          : fxt_cons.out.torn ? "not counted in the file: it ends inside a record, which a shared "
                         "stdout is not cut back to"
                       : "not counted in the file: no room");
}

/* Bytes the consumer writes for the first time between two looks at the wake word: 64 pages,
 * ~1 ms on a VM with shadow paging (~15 us a page). */
#define WARM_STEP (256u << 10)

/* Between passes, until a producer wakes the consumer (wake moved from w): first writes and
 * first kernel reads of what the passes will touch, a step at a time, so that they are not
 * paid inside a pass (the order is in the loop). Never before the first pass, nor in one go:
 * a producer that starts at once filled its 4 MiB buffer (8.7 ms at 10 M events/s) while the
 * consumer wrote ~6 MiB for the first time at its start, and lost events in 5 of 8 runs on
 * such a VM. The staging areas (3 MiB, for records that wrap, flight recorders and
 * signal-context records) hold nothing between passes. */
static void warm_between_passes(struct session *s, uint32_t w)
{
  static size_t own; /* bytes of the staging areas done: they live as long as the process */
  while (atomic_load_explicit(&s->wake, memory_order_relaxed) == w) {
    /* What the next pass reads and writes first: the staging area a pass writes a ring's
     * first lap from (its first MiB), the view the pass feeds, the live rings for the kernel
     * (pages not read yet go through the staging area), the file's next pages; then the area
     * of merged signal-context records and the rest of what is allocated ahead. The view
     * before the rings: with the kernel's reads of a new ring first (a call a page, 1,024 for
     * 4 MiB), a paced run's first pass fed a view never written (7.3 ms from the wake to its
     * first write, the ring full meanwhile: 3 of 32 runs lost events, 0 of 32 after). */
    bool first_mib = own < STAGE_BYTES;
    if (!first_mib && (live_warm(WARM_STEP) || fxt_slots_kernel_warm(s)))
      continue;
    if (own < STAGE_BYTES * 3) { /* STAGE_BYTES is a multiple of WARM_STEP */
      unsigned char *p = first_mib ? fxt_cons.stage + own : fxt_cons.merged + (own - STAGE_BYTES);
      fxt_write_pages(p, WARM_STEP);
      fxt_kernel_touch(p, WARM_STEP);
      own += WARM_STEP;
      if (first_mib)
        continue;
    }
    if (fxt_cons_out_prealloc(PREALLOC_AHEAD / 4) || own < STAGE_BYTES * 3 ||
        fxt_cons_out_prealloc(PREALLOC_AHEAD))
      continue;
    fxt_slots_prewarm(s); /* returns as soon as wake moves */
    break;
  }
}

static void *consumer_main(void *arg)
{
  struct session *s = arg;
  prctl(PR_SET_NAME, "fxtrace-consumer"); /* signals: blocked from birth (fxt_consumer_start) */
  bool timer = false; /* the first pass takes everything */
  for (;;) {
    uint32_t w = atomic_load_explicit(&s->wake, memory_order_acquire);
    /* Acquire pairs with fxt_consumer_stop's release: the stop handshake is complete. */
    bool stopping = atomic_load_explicit(&s->stop, memory_order_acquire);
    if (stopping)
      break;
    fxt_cons_pass(s, timer);
    fxt_cons_snap_serve(s);
    fxt_evtrig_serve(s); /* a `snapshot` event trigger's */
    fxt_cons_view_serve(s);
    fxt_buffers_harvest_children(s, false); /* children that died unstopped (buffers_children.c) */
    pass_done();
    warm_between_passes(s, w);
    struct timespec to = {0, live_has_waiters() ? POLL_LIVE_NS : POLL_NS};
    syscall(SYS_futex, &s->wake, FUTEX_WAIT_PRIVATE, w, &to, NULL, 0);
    /* Woken (a wake mark, a flush, a snapshot, a stop), or only the timer: nobody bumped wake
     * since it was loaded above, during the pass or the wait. */
    timer = atomic_load_explicit(&s->wake, memory_order_acquire) == w;
  }
  /* Last pass: no thread emits any more; the consumer is every writer's producer now. */
  for (uint32_t i = 0; i < s->nslots; i++) {
    uint32_t state = atomic_load_explicit(&s->info[i].state, memory_order_acquire);
    if (state != SLOT_FREE)
      finish_slot(s, i, state == SLOT_EXITED);
  }
  /* Threads that never got a buffer: what is not reported yet (rep_no_slot is applied with
   * the commit that writes it, so a recovery reports the rest once). */
  uint64_t no_slot = atomic_load_explicit(&s->sh->no_slot_drops, memory_order_relaxed);
  uint64_t fresh = no_slot - atomic_load_explicit(&s->sh->rep_no_slot, memory_order_relaxed);
  fxt_cons_out_reserve(4096);
  if (fresh)
    fxt_cons_write_process_loss(s, fresh);
  fxt_cons.no_slot_written = fresh;
  atomic_store_explicit(&fxt_cons.no_buffer_lost, no_slot, memory_order_relaxed);
  fxt_cons_write_metadata();
  fxt_cons_write_clock_sync(s, false);
  fxt_cons_out_flush();
  if (fxt_cons.capped_records)
    fprintf(stderr,
            "fxtrace: %s: %llu events not written (max_file_kb=%llu; counted in the file)\n",
            s->output, (unsigned long long)fxt_cons.capped_records,
            (unsigned long long)s->cfg.max_file_kb);
  if (fxt_cons.out.error)
    fxt_cons_write_failed_tail(s);
  if (fxt_cons.out.fd > 1 && fxt_cons.out.fd != OUT_LOST) {
    fxt_cons_out_prealloc_release();
    fxt_outfile_close(fxt_cons.out.fd, s->output, fxt_cons.out.error == 0);
  }
  fxt_cons.out.fd = -1;
  return NULL;
}

/* ---- lifecycle --------------------------------------------------------------------------- */

/* Once a session (cold: compiled for size, as the control path's files are, CMakeLists.txt). */
__attribute__((cold)) int fxt_consumer_start(struct session *s)
{
  if (live_init() != 0)
    return FXT_ENOMEM;
  memset(&fxt_cons.described, 0, sizeof(fxt_cons.described));
  fxt_cons.capped_records = 0;
  fxt_cons.unwritten_records = 0;
  fxt_cons.last_comm_check = 0;
  atomic_store_explicit(&fxt_cons.nested_records, 0, memory_order_relaxed);
  atomic_store_explicit(&fxt_cons.no_buffer_lost, 0, memory_order_relaxed);
  if (!fxt_cons.stage)
    fxt_cons.stage = malloc(STAGE_BYTES);
  if (!fxt_cons.merged)
    fxt_cons.merged = malloc(STAGE_BYTES * 2);
  fxt_cons.s = s;
  fxt_cons.seq = atomic_load_explicit(&s->sh->intent_seq, memory_order_relaxed) + 1;
  fxt_cons.seq = fxt_cons.seq ? fxt_cons.seq : 1;
  fxt_cons.held_taken = false;
  fxt_cons.no_slot_written = 0;
  /* No `trace` reader holds the view (session.c: its lifecycle lock is ours now); one that
   * gave up on the last consumer, or a parent's across fork, left nothing to wait for. */
  fxt_cons_view_reset();
  if (!fxt_cons.out.buf) {
    unsigned char *b = malloc(SECTION_BYTES + OUT_BYTES);
    fxt_cons.out.buf = b ? b + SECTION_BYTES : NULL; /* room for a provider section before it */
  }
  if (!fxt_cons.stage || !fxt_cons.merged || !fxt_cons.out.buf)
    return FXT_ENOMEM;
  fxt_cons.out.len = 0;
  fxt_cons.out.written = 0;
  fxt_cons.out.file_len = 0;
  fxt_cons.out.error = 0;
  fxt_cons.out.failed_at = 0;
  fxt_cons.out.torn = false;
  fxt_cons.out.limit = s->cfg.max_file_kb * 1024;
  if (s->output[0] == 0)
    fxt_cons.out.fd = -1;
  else if (fxt_outfile_fd(s->output) >= 0) /* output=fd:N, or "-" from code: stdout */
    fxt_cons.out.fd = dup(fxt_outfile_fd(s->output));
  else if (s->output_append) /* after exec: the previous image's trace is in it (buffers_dir.c) */
    fxt_cons.out.fd = fxt_outfile_open_append(s->output, &fxt_cons.out.file_len);
  else
    fxt_cons.out.fd = fxt_outfile_open(s->output);
  fxt_cons.out.id = fxt_fd_id(fxt_cons.out.fd);
  struct stat st;
  bool to_stdout = fxt_outfile_fd(s->output) >= 0; /* (any descriptor: as stdout) */
  bool regular = fxt_cons.out.fd >= 0 && fstat(fxt_cons.out.fd, &st) == 0 && S_ISREG(st.st_mode);
  fxt_cons.out.prealloc = s->output[0] && !to_stdout && regular && fxt_cons.out.limit == 0;
  fxt_cons.out.prealloc_end = 0;
  if (s->output[0] && fxt_cons.out.fd < 0) {
    int e = errno;
    fprintf(stderr, "fxtrace: %s: %s\n", s->output, strerror(e));
    return -e; /* ENOENT, EROFS, EMFILE, ...: fxt_strerror says it in the system's words */
  }
  /* stdout on a regular file: each write's place in it goes in its intent (stdout_place). */
  int fl = to_stdout && regular ? fcntl(fxt_cons.out.fd, F_GETFL) : -1;
  fxt_cons.out.shared_stdout = fl >= 0;
  fxt_cons.out.append = fl >= 0 && (fl & O_APPEND);
  fxt_cons.out.sections = to_stdout;
  const char *die = getenv("FXTRACE_TEST_DIE_IN_WRITE");
  fxt_cons_die_in_write = !die                         ? 0
                          : strcmp(die, "before") == 0 ? 1
                          : strcmp(die, "after") == 0  ? 2
                                                       : 0;
  /* The file's identity, before it holds anything of this session: a harvest by another
   * process writes into what the path names only while it is this file (harvest.h); for
   * stdout on a regular file, the file a harvester reads the last write back from. */
  bool own_file = !to_stdout || fxt_cons.out.shared_stdout; /* (id: 0s without a file) */
  atomic_store_explicit(&s->sh->out_dev, own_file ? fxt_cons.out.id.dev : 0,
                        memory_order_relaxed);
  atomic_store_explicit(&s->sh->out_ino, own_file ? fxt_cons.out.id.ino : 0,
                        memory_order_relaxed);
  /* Not known, for good, but where each write to such a stdout says (stdout_place). */
  atomic_store_explicit(&s->sh->intent_out_pos, UINT64_MAX, memory_order_relaxed);
  /* What the file holds before this session's records is whole (a recovery keeps it); the
   * records that follow carry no magic record of their own (docs/fxt-conventions.md:
   * single-process traces concatenated). */
  atomic_store_explicit(&s->sh->committed, fxt_cons.out.file_len, memory_order_relaxed);
  fxt_cons.no_magic = fxt_cons.out.file_len != 0;
  fxt_cons_write_header(s, true);
  fxt_cons_out_flush();
  atomic_store_explicit(&s->stop, 0, memory_order_relaxed);
  /* The consumer is born with every signal blocked (a thread inherits its creator's mask):
   * process-directed signals must go to the program's threads, never run a handler here. */
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  int created = pthread_create(&s->consumer, NULL, consumer_main, s);
  pthread_sigmask(SIG_SETMASK, &saved, NULL);
  if (created != 0) {
    if (fxt_cons.out.fd > 1)
      fxt_outfile_close(fxt_cons.out.fd, s->output, false);
    return FXT_ENOMEM;
  }
  s->consumer_running = true;
  return 0;
}

void fxt_consumer_wake(struct session *s)
{
  atomic_fetch_add_explicit(&s->wake, 1, memory_order_release);
  syscall(SYS_futex, &s->wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void fxt_consumer_stop(struct session *s)
{
  if (!s->consumer_running)
    return;
  /* Release pairs with the consumer's acquire load of stop. */
  atomic_store_explicit(&s->stop, 1, memory_order_release);
  fxt_consumer_wake(s);
  pthread_join(s->consumer, NULL);
  s->consumer_running = false;
}

