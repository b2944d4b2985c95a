/* consumer_snap.c - work the consumer does for other threads between passes: the request
 * protocol, snapshots (fxt_snapshot), and a flight recorder's `trace` (copies of its rings). */
#define _GNU_SOURCE
#include "consumer_int.h"

/* ---- requests served between passes (snapshots, a flight recorder's `trace`) ------------- *
 * A thread asks the consumer for work through a state word: it moves IDLE -> CLAIMED
 * (compare-and-swap: one request at a time), stores what the work needs, moves CLAIMED ->
 * REQUESTED (release), wakes the consumer and polls. The consumer, between passes, moves
 * REQUESTED -> WORKING, does the work and moves WORKING -> DONE; the requester takes the
 * result and moves DONE -> IDLE. A requester that gives up moves REQUESTED -> IDLE (the work
 * never began) or WORKING -> ABANDONED (the consumer then undoes what it must and moves it to
 * IDLE). Each release store pairs with the acquire load or compare-and-swap of the other
 * side, so what the request holds and what the work produced are handed over with the state.
 * Async-signal-safe on the requester's side (atomics, nanosleep, a futex wake). */
enum { REQ_IDLE, REQ_CLAIMED, REQ_REQUESTED, REQ_WORKING, REQ_DONE, REQ_ABANDONED };

/* Requester: IDLE -> CLAIMED; false when another request is under way. */
static bool req_claim(_Atomic int *state)
{
  int want = REQ_IDLE;
  return atomic_compare_exchange_strong_explicit(state, &want, REQ_CLAIMED, memory_order_relaxed,
                                                 memory_order_relaxed);
}

/* Requester, after req_claim and storing the request: CLAIMED -> REQUESTED, then waits at
 * most about timeout_ms for DONE. Returns REQ_DONE, or the state it gave up in: REQ_REQUESTED
 * (now IDLE: the consumer never saw it) or REQ_WORKING (now ABANDONED). */
static int req_wait(struct session *s, _Atomic int *state, uint32_t timeout_ms)
{
  /* Release: pairs with req_take's acquire (the request is stored). */
  atomic_store_explicit(state, REQ_REQUESTED, memory_order_release);
  fxt_consumer_wake(s);
  for (uint32_t waited = 0;; waited++) {
    /* Acquire: pairs with req_done's release (the work is done). */
    if (atomic_load_explicit(state, memory_order_acquire) == REQ_DONE)
      return REQ_DONE;
    if (waited >= timeout_ms) {
      int want = REQ_REQUESTED;
      if (atomic_compare_exchange_strong_explicit(state, &want, REQ_IDLE, memory_order_relaxed,
                                                  memory_order_relaxed))
        return REQ_REQUESTED;
      want = REQ_WORKING;
      if (atomic_compare_exchange_strong_explicit(state, &want, REQ_ABANDONED,
                                                  memory_order_relaxed, memory_order_relaxed))
        return REQ_WORKING;
      continue; /* DONE meanwhile */
    }
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
}

/* Consumer: REQUESTED -> WORKING (acquire: pairs with req_wait's release); false when nothing
 * is requested. */
static bool req_take(_Atomic int *state)
{
  int want = REQ_REQUESTED;
  return atomic_compare_exchange_strong_explicit(state, &want, REQ_WORKING, memory_order_acquire,
                                                 memory_order_relaxed);
}

/* Consumer: WORKING -> DONE (release: pairs with req_wait's acquire); false, and the state
 * IDLE, when the requester abandoned the work. */
static bool req_done(_Atomic int *state)
{
  int want = REQ_WORKING;
  if (atomic_compare_exchange_strong_explicit(state, &want, REQ_DONE, memory_order_release,
                                              memory_order_relaxed))
    return true;
  atomic_store_explicit(state, REQ_IDLE, memory_order_relaxed); /* abandoned */
  return false;
}

/* ---- snapshots (fxt_snapshot) ------------------------------------------------------------ *
 * A request (above) whose work is writing the file the requester opened: it hands fd over in
 * the request, the consumer closes it and hands back rc. A requester that gives up before
 * the work began closes the file itself. */
static struct {
  _Atomic int state;
  int fd, rc;
  unsigned char *copy; /* a ring's records (consumer thread; buffer_bytes) */
  size_t copy_bytes;
} snap;

/* The ring's committed records now, oldest first, into snap.copy: a contiguous run of whole
 * records (the iterator never returns a torn one; when the producer overwrote records under
 * it, what was copied before the gap is dropped, so the run has no hole). Returns its bytes;
 * *cpu: the CPU in effect at its first record (cpunote.h), or FXT_CPU_NOTE_NONE. */
static uint32_t snap_copy_ring(struct session *s, uint32_t i, bool *lapped, uint32_t *cpu)
{
  struct fxt_cpu_iter it;
  fxt_cpu_iter_begin(&it, &session_slot(s, i)->w.ring, sh_slot(s, i));
  uint32_t len = 0, n = 0;
  *lapped = false;
  *cpu = FXT_CPU_NOTE_NONE;
  for (;;) {
    bool gap;
    int rc = fxt_cpu_iter_next(&it, snap.copy + len, (uint32_t)snap.copy_bytes - len, &n, cpu,
                               &gap);
    if (gap) { /* keep only what follows it */
      *lapped = true;
      if (rc == 1)
        memmove(snap.copy, snap.copy + len, n);
      len = 0;
    }
    if (rc != 1)
      return len;
    len += n;
  }
}

/* Slot i's thread and records, when it has any. */
static void snap_slot(struct session *s, uint32_t i)
{
  uint32_t state = atomic_load_explicit(&s->info[i].state, memory_order_acquire);
  if (state == SLOT_FREE)
    return;
  struct fxt_tslot *t = session_slot(s, i);
  /* A producer that laps the copy leaves only what follows the last gap, possibly nothing (a
   * small ring written flat out while the copy walks it, as under TSan): copy again then. */
  bool lapped = false;
  uint32_t len = 0, cpu = FXT_CPU_NOTE_NONE;
  for (int tries = 0; tries < 64 && len == 0 && (tries == 0 || lapped); tries++)
    len = snap_copy_ring(s, i, &lapped, &cpu);
  if (len == 0)
    return;
  fxt_cons_write_metadata(); /* strings interned before the copy: every ref in it is covered */
  if (t->thread_bits) {
    struct fxt_thread th = {(uint8_t)(t->thread_bits >> 24), (uint64_t)s->pid,
                            (uint64_t)s->info[i].tid};
    EMIT(fxt_encode_thread, &th);
  }
  fxt_cons_write_kobj_thread(s, &s->info[i]);
  /* The CPU its first events ran on, unless the first record says it: the `cpu` record that
   * did was passed or taken before the copy. */
  uint64_t h;
  memcpy(&h, snap.copy, 8);
  if (cpu != FXT_CPU_NOTE_NONE &&
      fxt_cpu_of_record(snap.copy, fxt_ring_record_bytes(h)) == FXT_CPU_NOTE_NONE) {
    uint64_t w[6];
    uint64_t ts = fxt_cons_first_ts(snap.copy, len);
    fxt_cons_out_write(&fxt_cons.out, w, fxt_cons_encode_cpu(s, i, cpu, ts, w));
  }
  fxt_cons_out_write(&fxt_cons.out, snap.copy, len);
}

/* Writes the snapshot into snap.fd: a file of its own (header, every thread's records, clock
 * sync), written with the consumer's writers while its own output's state is set aside. */
static int snap_write(struct session *s, int fd)
{
  if (!snap.copy || snap.copy_bytes < s->buffer_bytes) {
    free(snap.copy);
    snap.copy_bytes = s->buffer_bytes;
    snap.copy = malloc(snap.copy_bytes);
    if (!snap.copy)
      return FXT_ENOMEM;
  }
  static uint8_t described[sizeof(fxt_cons.described)];
  struct out saved = fxt_cons.out;
  uint32_t strings_end = fxt_cons.strings_end, registry_gen = fxt_cons.registry_gen;
  memcpy(described, fxt_cons.described, sizeof(described));
  memset(fxt_cons.described, 0, sizeof(fxt_cons.described));
  /* The output's buffered bytes stay in its buffer: the snapshot has one of its own. */
  unsigned char *buf = malloc(OUT_BYTES);
  fxt_cons.out = (struct out){.fd = fd, .buf = buf, .direct = true};
  int rc = buf ? 0 : FXT_ENOMEM;
  if (rc == 0) {
    fxt_cons_write_header(s, false);
    for (uint32_t i = 0; i < s->nslots; i++)
      snap_slot(s, i);
    fxt_cons_write_metadata();
    fxt_cons_write_clock_sync(s, false);
    fxt_cons_commit(NULL, 0, NULL);
    rc = fxt_cons.out.error ? -fxt_cons.out.error : 0;
  }
  free(buf);
  fxt_cons.out = saved;
  fxt_cons.strings_end = strings_end;
  fxt_cons.registry_gen = registry_gen;
  memcpy(fxt_cons.described, described, sizeof(described));
  return rc;
}

/* Serves a pending request (consumer thread, between passes). */
void fxt_cons_snap_serve(struct session *s)
{
  if (!req_take(&snap.state))
    return;
  snap.rc = snap_write(s, snap.fd);
  close(snap.fd);
  req_done(&snap.state); /* (abandoned: nothing to undo, the file is written and closed) */
}

int fxt_cons_snap_fd(struct session *s, int fd)
{
  return snap_write(s, fd);
}

int fxt_consumer_snapshot(struct session *s, int fd, uint32_t timeout_ms)
{
  if (!req_claim(&snap.state))
    return FXT_EBUSY;
  snap.fd = fd;
  int st = req_wait(s, &snap.state, timeout_ms);
  if (st == REQ_DONE) {
    int rc = snap.rc;
    atomic_store_explicit(&snap.state, REQ_IDLE, memory_order_relaxed);
    return rc;
  }
  if (st == REQ_REQUESTED)
    close(fd); /* the consumer never had it */
  return FXT_EAGAIN;
}

/* ---- a flight recorder's `trace` (fxt_consumer_view_hold) -------------------------------- *
 * A flight recorder's consumer leaves the live threads' rings alone, and `trace` must not
 * consume, so a reader has the consumer copy what the rings hold into the live view's copies
 * (live.h): a request (above) whose work is view_refresh, after which the requester reads the
 * view and moves DONE -> IDLE itself (fxt_consumer_view_release; release store). While the
 * state is DONE, a pass moves no ring's records into the view (its acquire load of the state
 * pairs with that release store): a record the copies hold cannot arrive in the view a
 * second time while a reader shows both, and the reader is done with the copies before any
 * pass goes on. A requester that gives up leaves the copies to the consumer, which empties
 * them. One requester at a time: session.c holds the session's lifecycle lock from the
 * request to the release, so the session cannot stop in between either. */
static struct {
  _Atomic int state;
  struct view_src *src; /* consumer thread: a ring being copied, per slot */
  uint32_t nsrc;        /* allocated */
} view;

#define VIEW_WINDOW 4096u /* bytes of records copied from a ring at a time */

/* A ring being copied: the next records of its non-consuming iterator, oldest first. */
struct view_src {
  struct fxt_cpu_iter it;
  unsigned char *win;
  uint32_t cap, len, off; /* win's bytes, of whole records, the next one */
  uint32_t cpu;           /* the thread's CPU at win + off, as its stream says */
  uint32_t slot;
};

/* The next records of v's ring into its window: whole ones (the iterator never returns a torn
 * record; where the producer overwrote records under it, it goes on from the oldest left, and
 * they are counted in its overrun). The first record, and the first after such a gap, get the
 * thread's `cpu` record in front when they do not begin with one and its CPU is known
 * (cpunote.h): the one that named it was passed. A record larger than the window grows it.
 * False at the end. */
static bool src_fill(struct session *s, struct view_src *v)
{
  v->len = v->off = 0;
  for (;;) {
    uint32_t n = 0, cpu = FXT_CPU_NOTE_NONE;
    bool gap;
    /* Room kept for a `cpu` record (48 bytes at most) in front of the record. */
    uint32_t room = v->cap - v->len > 48 ? v->cap - v->len - 48 : 0;
    int rc = fxt_cpu_iter_next(&v->it, v->win + v->len + 48, room, &n, &cpu, &gap);
    if (rc == 1) {
      uint64_t h, w[6];
      memcpy(&h, v->win + v->len + 48, 8);
      uint32_t c = 0;
      if (cpu != FXT_CPU_NOTE_NONE &&
          fxt_cpu_of_record(v->win + v->len + 48, fxt_ring_record_bytes(h)) == FXT_CPU_NOTE_NONE)
        c = fxt_cons_encode_cpu(s, v->slot, cpu, fxt_cons_ts_of(v->win + v->len + 48, n), w);
      memcpy(v->win + v->len, w, c);
      memmove(v->win + v->len + c, v->win + v->len + 48, n);
      v->len += c + n;
      continue;
    }
    if (rc == FXT_ENOBUFS && v->len == 0) {
      unsigned char *w = realloc(v->win, n + 48);
      if (!w)
        return false;
      v->win = w;
      v->cap = n + 48;
      continue;
    }
    return v->len != 0;
  }
}

static uint32_t src_rec_bytes(const struct view_src *v, uint32_t off)
{
  uint64_t h;
  memcpy(&h, v->win + off, 8);
  return fxt_ring_record_bytes(h);
}

/* The time of v's record at off, as its thread's stream is ordered (ts_of). */
static uint64_t src_ts(const struct view_src *v, uint32_t off)
{
  return fxt_cons_ts_of(v->win + off, src_rec_bytes(v, off));
}

/* Slot i's losses that no loss record reports yet (what a drain would report in front of the
 * records the copy holds), into the copies' counts. */
static void view_losses(struct session *s, uint32_t i)
{
  struct fxt_tslot *t = session_slot(s, i);
  struct fxt_sh_slot *e = sh_slot(s, i);
  struct fxt_ring_stats rs;
  fxt_ring_stats(&t->w.ring, &rs);
  uint32_t orec = fxt_cons_unreported(rs.overrun_records,
                             atomic_load_explicit(&e->credit_records, memory_order_relaxed),
                             atomic_load_explicit(&e->rep_overrun_records, memory_order_relaxed));
  uint64_t lost =
      (uint32_t)(rs.lost_records -
                 atomic_load_explicit(&e->rep_lost_records, memory_order_relaxed)) +
      atomic_load_explicit(&t->lost, memory_order_relaxed) -
      atomic_load_explicit(&e->rep_nested, memory_order_relaxed);
  if (orec)
    live_copy_lost(s->info[i].live_cpu, orec, true);
  if (lost)
    live_copy_lost(s->info[i].live_cpu, lost, false);
}

/* Refills the view's copies with what every ring holds now (consumer thread, between passes;
 * nothing is consumed and no slot counter moves). The rings' records go in merged by time, a
 * window of each at a time, so that where a CPU's copy is full its oldest records give way, as
 * in the kernel's ring buffer, whichever thread they are of. */
static void view_refresh(struct session *s)
{
  if (live_copy_begin() != 0)
    return;
  if (view.nsrc < s->nslots) {
    struct view_src *v = realloc(view.src, s->nslots * sizeof(*v));
    if (!v)
      return;
    memset(v + view.nsrc, 0, (s->nslots - view.nsrc) * sizeof(*v));
    view.src = v;
    view.nsrc = s->nslots;
  }
  uint32_t n = 0; /* rings with records: view.src[0..n) */
  for (uint32_t i = 0; i < s->nslots; i++) {
    /* Acquire pairs with the attaching thread's release of LIVE (the ring is set up); only
     * this thread frees a slot, so its ring stays this thread's to read meanwhile. */
    if (atomic_load_explicit(&s->info[i].state, memory_order_acquire) == SLOT_FREE)
      continue;
    struct view_src *v = &view.src[n];
    if (!v->win && (v->win = malloc(VIEW_WINDOW)) != NULL)
      v->cap = VIEW_WINDOW;
    if (!v->win)
      break;
    view_losses(s, i); /* before the copy: what it counts is older than what is copied */
    fxt_cpu_iter_begin(&v->it, &session_slot(s, i)->w.ring, sh_slot(s, i));
    v->cpu = s->info[i].live_cpu; /* until a `cpu` record says (src_fill puts one first) */
    v->slot = i;
    n += src_fill(s, v);
  }
  for (;;) {
    /* The ring whose next record is the oldest takes its records up to the next ring's. */
    int best = -1;
    uint64_t best_ts = 0, next_ts = UINT64_MAX;
    for (uint32_t k = 0; k < n; k++) {
      if (view.src[k].off == view.src[k].len)
        continue;
      uint64_t ts = src_ts(&view.src[k], view.src[k].off);
      if (best < 0 || ts < best_ts) {
        next_ts = best < 0 ? next_ts : best_ts;
        best = (int)k;
        best_ts = ts;
      } else if (ts < next_ts) {
        next_ts = ts;
      }
    }
    if (best < 0)
      break;
    struct view_src *v = &view.src[best];
    uint32_t end = v->off;
    do
      end += src_rec_bytes(v, end);
    while (end < v->len && src_ts(v, end) <= next_ts);
    const struct slot_info *info = &s->info[v->slot];
    live_copy_feed(v->win + v->off, end - v->off, (uint32_t)info->tid, info->comm, &v->cpu);
    v->off = end;
    if (v->off == v->len)
      src_fill(s, v);
  }
}

void fxt_cons_view_serve(struct session *s)
{
  if (!req_take(&view.state))
    return;
  view_refresh(s);
  if (!req_done(&view.state))
    live_copy_clear(); /* abandoned: before the next pass feeds the view */
}

int fxt_consumer_view_hold(struct session *s, uint32_t timeout_ms)
{
  if (!req_claim(&view.state))
    return FXT_EBUSY; /* an abandoned refresh is still under way */
  return req_wait(s, &view.state, timeout_ms) == REQ_DONE ? 0 : FXT_EAGAIN;
}

void fxt_consumer_view_release(void)
{
  live_copy_clear();
  /* Release: pairs with fxt_cons_pass()'s acquire load (the reader is done with the view). */
  atomic_store_explicit(&view.state, REQ_IDLE, memory_order_release);
}


bool fxt_cons_view_held(void)
{
  return atomic_load_explicit(&view.state, memory_order_acquire) == REQ_DONE;
}

void fxt_cons_view_reset(void)
{
  atomic_store_explicit(&view.state, REQ_IDLE, memory_order_relaxed);
}
