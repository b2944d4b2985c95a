/* live.c - the live view behind `trace` and `trace_pipe` (see live.h).
 *
 * Each CPU has a circular byte buffer of entries, each entry contiguous (an entry that does
 * not fit before the end of the buffer starts again at 0 after a wrap marker), so readers
 * format entries in place. The buffer holds at most `capacity` bytes of entries: the kernel's
 * rounding of buffer_size_kb (pages of 4080 data bytes). A flight recorder's copies are a
 * second such ring per CPU (`copy`, set up on first use), filled and emptied as a whole.
 * Everything is under `fxt_live.lock`. This file: the rings made and the consumer's feeding;
 * live_ctl.c: their size, clearing, fork, cmdlines (compiled for size); live_read.c: reading
 * and formatting (live_int.h).
 */
#define _GNU_SOURCE
#include "live_int.h"
#include "../base/grow.h"
#include "../base/metarec.h"
#include <fxtrace/detail/emit.h> /* fxt_session_active */

struct fxt_live_state fxt_live = {.lock = PTHREAD_MUTEX_INITIALIZER,
                                  .cond = PTHREAD_COND_INITIALIZER};
atomic_uint fxt_live_waiters;
atomic_uint fxt_live_pipe_readers;

/* ---- clock ------------------------------------------------------------------------------- */

/* The session's clock as a file reader sees it: one clock-sync point and the rate. */
struct fxtf_provider fxt_live_clock = {.ticks_per_second = 1000000000u};

void live_set_clock(uint64_t ticks, uint64_t mono_ns, uint64_t tps)
{
  pthread_mutex_lock(&fxt_live.lock);
  fxt_live_clock.ticks_per_second = tps ? tps : 1000000000u;
  fxt_live_clock.nsyncs = 1;
  fxt_live_clock.first_sync.ticks = fxt_live_clock.last_sync.ticks = ticks;
  fxt_live_clock.first_sync.monotonic_ns = fxt_live_clock.last_sync.monotonic_ns = mono_ns;
  pthread_mutex_unlock(&fxt_live.lock);
}

uint64_t live_ticks_to_ns(uint64_t ticks)
{
  return fxtf_ticks_to_ns(&fxt_live_clock, ticks);
}

uint64_t fxt_live_mono_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- rings -------------------------------------------------------------------------------- */

/* The entry at off, following a wrap: an entry never starts where its header would not fit
 * before the end, and a wrap marker (size 0) sends the reader back to 0. */
size_t fxt_live_entry_at(const struct cpu_ring *r, size_t off)
{
  if (off + sizeof(struct entry) > r->size ||
      ((const struct entry *)(const void *)(r->buf + off))->size == 0)
    return 0;
  return off;
}

struct entry *fxt_live_ring_oldest(struct cpu_ring *r)
{
  if (r->count == 0)
    return NULL;
  r->tail = fxt_live_entry_at(r, r->tail);
  return (struct entry *)(void *)(r->buf + r->tail);
}

void fxt_live_ring_pop(struct cpu_ring *r)
{
  struct entry *e = fxt_live_ring_oldest(r);
  if (!e)
    return;
  r->tail = (size_t)((unsigned char *)e - r->buf) + e->size;
  r->payload -= e->size;
  r->popped++;
  if (--r->count == 0)
    fxt_live_ring_empty(r);
}

/* Where an entry of n bytes can go now, or NULL. */
static unsigned char *ring_place(struct cpu_ring *r, size_t n)
{
  if (r->count == 0) {
    r->head = r->tail = 0;
    return r->buf;
  }
  if (r->head > r->tail) { /* free: [head, size) and [0, tail) */
    if (r->size - r->head >= n)
      return r->buf + r->head;
    if (r->tail > n) { /* wrap (strictly: head == tail would read as empty) */
      if (r->size - r->head >= sizeof(struct entry))
        ((struct entry *)(void *)(r->buf + r->head))->size = 0; /* marker; else entry_at wraps */
      r->head = 0;
      return r->buf;
    }
    return NULL;
  }
  return r->tail - r->head > n ? r->buf + r->head : NULL; /* free: [head, tail) */
}

/* Under lock: the entries of r to arrange (live_int.h) moved out of it and appended to *buf
 * (*len of its *cap bytes, grown), r left with the others. Returns false when memory ran out
 * (r unchanged). */
bool fxt_live_ring_take_raw(struct cpu_ring *r, unsigned char **buf, size_t *len, size_t *cap)
{
  uint64_t first = r->raw_seq > r->popped ? r->raw_seq : r->popped;
  uint64_t n = r->popped + r->count - first;
  if (n == 0)
    return true;
  struct entry *e0 = r->raw_seq > r->popped ? (struct entry *)(void *)(r->buf + r->raw_pos)
                                            : fxt_live_ring_oldest(r);
  size_t bytes = 0;
  struct entry *e = e0;
  for (uint64_t i = 0; i < n; i++, e = fxt_live_entry_next(r, e))
    bytes += e->size;
  if (!fxt_grow((void **)buf, cap, *len + bytes, 1, 1u << 16))
    return false;
  e = e0;
  for (uint64_t i = 0; i < n; i++, e = fxt_live_entry_next(r, e)) {
    memcpy(*buf + *len, e, e->size);
    *len += e->size;
    r->payload -= e->size;
    r->events -= e->nrec - e->taken_recs;
    r->pushed_records -= e->nrec;
  }
  r->count -= n;
  r->head = (size_t)((unsigned char *)e0 - r->buf);
  if (r->count == 0)
    fxt_live_ring_empty(r);
  else
    r->raw_seq = r->popped + r->count;
  return true;
}

/* Records of the run already taken by trace_pipe. */
uint64_t fxt_live_count_taken(const struct entry *e)
{
  uint64_t n = 0;
  for (uint32_t off = 0; off < e->taken; off += rec_bytes(run_at(e, off)))
    n++;
  return n;
}

/* h, the records rec (len bytes) and after them more (more_len bytes: a lines run's words). */
static void ring_push(struct cpu_ring *r, const struct entry *h, const void *rec, size_t len,
                      const void *more, size_t more_len)
{
  size_t n = h->size;
  unsigned char *at;
  while (r->payload + n > r->capacity || (at = ring_place(r, n)) == NULL) {
    struct entry *old = fxt_live_ring_oldest(r);
    uint64_t left = old->nrec - fxt_live_count_taken(old);
    r->overrun += left;
    /* trace_pipe shows what it never got as one LOST line: these records, and the losses in
     * front of them if it never showed them (an entry it started on showed them). */
    r->pipe_lost += left + (old->taken == 0 ? old->lost_before : 0);
    r->events -= left;
    fxt_live_ring_pop(r);
  }
  memcpy(at, h, sizeof(*h));
  memcpy(at + sizeof(*h), rec, len);
  if (more_len)
    memcpy(at + sizeof(*h) + len, more, more_len);
  memset(at + sizeof(*h) + len + more_len, 0, n - sizeof(*h) - len - more_len);
  if (h->feed_seq == 0) /* arranged: after every entry (fxt_live_fg_arrange took the others) */
    r->raw_seq = r->popped + r->count + 1;
  else if (r->raw_seq >= r->popped + r->count) { /* the first entry to arrange */
    r->raw_seq = r->popped + r->count;
    r->raw_pos = (size_t)(at - r->buf);
  }
  r->head = (size_t)(at - r->buf) + n;
  r->payload += n;
  r->count++;
  r->events += h->nrec;
  r->pushed_records += h->nrec;
}

bool live_warm(size_t budget)
{
  if (live_init() != 0)
    return false;
  bool more = false;
  pthread_mutex_lock(&fxt_live.lock);
  for (uint32_t i = 0; i < fxt_live.ncpus; i++) {
    struct cpu_ring *r = &fxt_live.cpu[i];
    if (i > 0 && (size_t)(i + 1) * r->size > WARM_MAX_BYTES)
      break; /* the others warm as they are used */
    if (r->warmed >= r->size || r->payload != 0)
      continue; /* written already, or holding entries (nothing of them is to be touched) */
    if (budget == 0) {
      more = true;
      break;
    }
    size_t n = r->size - r->warmed < budget ? r->size - r->warmed : budget;
    fxt_write_pages(r->buf + r->warmed, n);
    r->warmed += n;
    budget -= n;
  }
  pthread_mutex_unlock(&fxt_live.lock);
  return more;
}

int live_init(void)
{
  int rc = 0;
  pthread_mutex_lock(&fxt_live.lock);
  if (!fxt_live.ready) {
    long n = sysconf(_SC_NPROCESSORS_CONF);
    fxt_live.ncpus = n > 0 ? (uint32_t)n : 1;
    fxt_live.cpu = calloc(fxt_live.ncpus, sizeof(*fxt_live.cpu));
    uint32_t kb;
    size_t cap = fxt_live_capacity_of(DEFAULT_KB, &kb);
    for (uint32_t i = 0; fxt_live.cpu && i < fxt_live.ncpus && rc == 0; i++)
      rc = fxt_live_ring_alloc(&fxt_live.cpu[i], cap);
    fxt_live.cmdlines_size = 128;
    fxt_live.cmdlines = calloc(fxt_live.cmdlines_size, sizeof(*fxt_live.cmdlines));
    if (!fxt_live.cpu || !fxt_live.cmdlines)
      rc = FXT_ENOMEM;
    fxt_live.buffer_kb = kb;
    fxt_live.on = true;
    fxt_live.ready = rc == 0;
  }
  pthread_mutex_unlock(&fxt_live.lock);
  return rc;
}

/* ---- cmdlines ----------------------------------------------------------------------------- */

/* Under lock. The latest name per pid; a new pid takes the next slot round-robin. */
static void cmdline_note(uint32_t pid, const char *comm)
{
  for (uint32_t i = 0; i < fxt_live.cmdlines_size; i++)
    if (fxt_live.cmdlines[i].pid == pid) {
      memcpy(fxt_live.cmdlines[i].comm, comm, 16);
      return;
    }
  uint32_t i = fxt_live.cmdlines_next++ % fxt_live.cmdlines_size;
  fxt_live.cmdlines[i].pid = pid;
  memcpy(fxt_live.cmdlines[i].comm, comm, 16);
}

/* ---- feeding (the consumer) --------------------------------------------------------------- */

/* The first argument's 32-bit value of a kernel:meta event record of `words` words. */
static uint32_t meta_arg0(const uint64_t *w, uint32_t words)
{
  uint32_t at = 2 + (((w[0] >> 24) & 0xff) == 0 ? 2 : 0);
  return at < words ? (uint32_t)(w[at] >> 32) : 0;
}

/* An entry of records (lines: their line words, or NULL) on cpu of set; feed_seq: the
 * consumer's number of a run to arrange, 0 for an arranged one. */
static void push(struct cpu_ring *set, uint32_t cpu, const unsigned char *p, uint32_t len,
                 uint32_t nrec, uint32_t tid, const char *name, const uint32_t *lines,
                 uint64_t feed_seq)
{
  if (nrec == 0)
    return;
  struct cpu_ring *r = &set[cpu < fxt_live.ncpus ? cpu : 0];
  uint32_t extra = lines ? (4 * nrec + 7) & ~7u : 0;
  struct entry h = {(uint32_t)(sizeof(h) + len + extra), tid, nrec, 0, r->lost_pending,
                    r->pushed_records, {0}, lines ? len : 0, 0, feed_seq};
  memcpy(h.comm, name, 16);
  ring_push(r, &h, p, len, lines, lines ? 4 * nrec : 0);
  r->lost_pending = 0;
}

void fxt_live_push(struct cpu_ring *set, uint32_t cpu, const unsigned char *p, uint32_t len,
                   uint32_t nrec, uint32_t tid, const char *name, const uint32_t *lines)
{
  push(set, cpu, p, len, nrec, tid, name, lines, 0);
}

/* The consumer's run: the function_graph layout arranges it when a reader reads in it. */
static void push_run(struct cpu_ring *set, uint32_t cpu, const unsigned char *p, uint32_t len,
                     uint32_t nrec, uint32_t tid, const char *name)
{
  if (nrec != 0)
    push(set, cpu, p, len, nrec, tid, name, NULL, ++fxt_live.feed_seq);
}

/* Under lock: live_feed into ring set `set`; the copies (set == fxt_live.copy) take events while
 * tracing is off too, and wake no trace_pipe reader (they never consume them). */
static void feed(struct cpu_ring *set, const unsigned char *p, uint32_t len, uint32_t tid,
                 const char *comm, uint32_t *cpu, uint64_t *events, uint64_t *dropped,
                 uint32_t *last_cpu)
{
  *last_cpu = FXT_CPU_NOTE_NONE;
  bool copy = set == fxt_live.copy;
  char name[16] = {0};
  strncpy(name, comm, 15);
  cmdline_note(tid, name);
  uint32_t run = 0, nrec = 0; /* the run being gathered: [run, off) */
  /* Drops a drop_stats record reported and no run carries yet: shown in front of the next
   * run, on the CPU that run is on. The writer puts a drop_stats record right before the
   * record that fits after the drops, with a `cpu` record between when the thread moved; kept
   * on the CPU before the move, the LOST line waited for that CPU's next event, which may
   * never come (trace_pipe showed no gap). The per-CPU drop counts stay with the CPU before. */
  uint64_t carry = 0;
  bool fed = false;
  uint32_t off = 0;
  while (off + 16 <= len) {
    uint64_t h;
    memcpy(&h, p + off, 8);
    uint32_t bytes = rec_bytes(p + off);
    if (bytes < 16 || bytes > len - off)
      break;
    bool event = (h & 0xf) == FXT_RECORD_EVENT;
    *events += event && !fxt_meta_is_bookkeeping(h);
    /* Off by a tracing_on write, the view takes nothing; a traceon event trigger turns
     * recording on in the session's active word alone (evtrig_fire.c). */
    bool on = fxt_live.on || atomic_load_explicit(&fxt_session_active, memory_order_relaxed);
    bool keep = event && !fxt_meta_is_bookkeeping(h) && (on || copy) &&
                rec_ticks(p + off) >= fxt_live.clear_ticks;
    /* (function_graph's lines are made by the readers: fxt_live_fg_arrange) */
    if (!keep || off + bytes - run > RUN_MAX) { /* the run ends before this record */
      push_run(set, *cpu, p + run, off - run, nrec, tid, name); /* carry is 0 while nrec > 0 */
      fed |= nrec != 0;
      run = keep ? off : off + bytes;
      nrec = 0;
    }
    if (keep) {
      if (nrec++ == 0 && carry) { /* the first record of a run */
        set[*cpu < fxt_live.ncpus ? *cpu : 0].lost_pending += carry;
        carry = 0;
      }
    } else if (event && fxt_meta_is_bookkeeping(h)) {
      uint64_t w[8] = {0};
      uint32_t words = bytes / 8;
      memcpy(w, p + off, bytes < sizeof(w) ? bytes : sizeof(w));
      uint32_t c = *cpu < fxt_live.ncpus ? *cpu : 0;
      uint16_t nm = (uint16_t)(h >> 48);
      if (nm == FXT_STR_CPU) {
        *cpu = meta_arg0(w, words);
        uint32_t c = fxt_cpu_of_record(p + off, bytes);
        *last_cpu = c != FXT_CPU_NOTE_NONE ? c : *last_cpu;
      }
      else if (nm == FXT_STR_DROP_STATS) {
        *dropped += meta_arg0(w, words);
        set[c].dropped += meta_arg0(w, words);
        carry += meta_arg0(w, words);
      }
    }
    off += bytes;
  }
  push_run(set, *cpu, p + run, off - run, nrec, tid, name);
  set[*cpu < fxt_live.ncpus ? *cpu : 0].lost_pending += carry; /* the thread's CPU now */
  fed |= nrec != 0;
  if (off != len) /* stopped before the end (a record shorter than 16 bytes): walk it all */
    *last_cpu = fxt_cpu_after(p, len, FXT_CPU_NOTE_NONE);
  if (fed && !copy)
    pthread_cond_broadcast(&fxt_live.cond);
}

void live_feed(const unsigned char *p, uint32_t len, uint32_t tid, const char *comm,
               uint32_t *cpu, uint64_t *events, uint64_t *dropped, uint32_t *last_cpu)
{
  if (live_init() != 0) {
    *last_cpu = fxt_cpu_after(p, len, FXT_CPU_NOTE_NONE);
    return;
  }
  pthread_mutex_lock(&fxt_live.lock);
  feed(fxt_live.cpu, p, len, tid, comm, cpu, events, dropped, last_cpu);
  pthread_mutex_unlock(&fxt_live.lock);
}

/* Under lock (set NULL: nothing, the copies were never set up). */
static void lost(struct cpu_ring *set, uint32_t cpu, uint64_t records, bool overrun)
{
  if (!set)
    return;
  struct cpu_ring *r = &set[cpu < fxt_live.ncpus ? cpu : 0];
  if (overrun)
    r->overrun += records;
  else
    r->dropped += records;
  r->lost_pending += records;
}

void live_lost(uint32_t cpu, uint64_t records, bool overrun)
{
  if (live_init() != 0)
    return;
  pthread_mutex_lock(&fxt_live.lock);
  lost(fxt_live.cpu, cpu, records, overrun);
  pthread_mutex_unlock(&fxt_live.lock);
}

/* ---- a flight recorder's copies (the consumer fills them, a reader empties them) ---------- */

void live_copy_feed(const unsigned char *p, uint32_t len, uint32_t tid, const char *comm,
                    uint32_t *cpu)
{
  uint64_t events = 0, dropped = 0; /* the threads' counters are the drains' */
  uint32_t last_cpu;
  pthread_mutex_lock(&fxt_live.lock);
  if (fxt_live.copy)
    feed(fxt_live.copy, p, len, tid, comm, cpu, &events, &dropped, &last_cpu);
  pthread_mutex_unlock(&fxt_live.lock);
}

void live_copy_lost(uint32_t cpu, uint64_t records, bool overrun)
{
  pthread_mutex_lock(&fxt_live.lock);
  lost(fxt_live.copy, cpu, records, overrun);
  pthread_mutex_unlock(&fxt_live.lock);
}

bool live_pipe_readers(void)
{
  return atomic_load_explicit(&fxt_live_pipe_readers, memory_order_relaxed) != 0;
}

