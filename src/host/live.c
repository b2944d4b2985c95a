/* live.c - the live view behind `trace` and `trace_pipe` (see live.h).
 *
 * Each CPU has a circular byte buffer of entries, each entry contiguous (an entry that does
 * not fit before the end of the buffer starts again at 0 after a wrap marker), so readers
 * format entries in place. The buffer holds at most `capacity` bytes of entries: the kernel's
 * rounding of buffer_size_kb (pages of 4080 data bytes). A flight recorder's copies are a
 * second such ring per CPU (`copy`, set up on first use), filled and emptied as a whole.
 * Everything is under `lock`.
 */
#define _GNU_SOURCE
#include "live.h"

#include <fxtrace/errors.h>
#include <fxtrace/fxt.h>
#include <fxtrace/meta.h>
#include <fxtrace/tracepoint.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fxtrace/emit.h>

#include "../export/text.h"
#include "cpunote.h"
#include "intern.h"
#include "session_int.h"

#define PAGE_DATA 4080u      /* data bytes of a kernel ring-buffer page */
#define DEFAULT_KB 1408u     /* the kernel's default request (reads back 1410) */
#define MAX_RECORD (4095u * 8)
#define MAX_CMDLINES 32768u
#define WARM_MAX_BYTES (16u << 20) /* of the rings written ahead (live_warm): ~11 CPUs' */

/* An entry: this header, then a run of FXT event records of one thread on one CPU, as the
 * thread wrote them (runs split at bookkeeping records and at RUN_MAX bytes): the consumer
 * copies a run at once, so the view costs it a copy per run, not per event. */
#define RUN_MAX 16384u
struct entry {
  uint32_t size; /* bytes of the entry, header included, a multiple of 8; 0 = wrap marker */
  uint32_t tid;
  uint32_t nrec;  /* records in the run */
  uint32_t taken; /* bytes of the run already consumed by trace_pipe (the oldest entry only) */
  uint64_t lost_before; /* events of this CPU lost just before the run */
  uint64_t first_rec;   /* records pushed into the ring before this run's first (live_iter) */
  char comm[16];
};

static inline const unsigned char *run_at(const struct entry *e, uint32_t off)
{
  return (const unsigned char *)(e + 1) + off;
}

static inline uint32_t run_len(const struct entry *e)
{
  return e->size - (uint32_t)sizeof(*e);
}

/* Bytes of the FXT record at p (normal or large header). */
static inline uint32_t rec_bytes(const unsigned char *p)
{
  uint64_t h;
  memcpy(&h, p, 8);
  return (h & 0xf) == 15 ? (uint32_t)(h >> 4) * 8 : (uint32_t)(h >> 4 & 0xfff) * 8;
}

static inline uint64_t rec_ticks(const unsigned char *p)
{
  uint64_t t;
  memcpy(&t, p + 8, 8);
  return t;
}

struct cpu_ring {
  unsigned char *buf;
  size_t size;      /* storage bytes */
  size_t capacity;  /* entry bytes allowed */
  size_t head, tail, payload;
  uint64_t count;   /* entries (runs) held */
  uint64_t events;  /* events held (records in the runs, minus those taken) */
  uint64_t overrun; /* evicted before being read */
  uint64_t dropped; /* lost in the threads' buffers while on this CPU */
  uint64_t read;    /* consumed by trace_pipe */
  uint64_t lost_pending; /* becomes the next entry's lost_before */
  uint64_t pipe_lost;    /* evicted since trace_pipe last read here: shown as LOST */
  size_t warmed;         /* bytes of buf written once from the start (live_warm) */
  /* For readers of `trace` that hold a place between reads (live_iter): entries and records
   * ever taken off the front and put at the back, since the last L.gen change. */
  uint64_t popped, pushed_records;
};

struct desc_cache {
  uint16_t system_ref, name_ref;
  struct fxtf_desc desc;
  char *storage; /* the strings desc points to */
};

static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool ready, on;
  uint32_t ncpus, buffer_kb;
  struct cpu_ring *cpu;
  /* A flight recorder's copies of its buffers (live.h): NULL until the first refresh; empty
   * but between live_copy_begin and live_copy_clear. Never consumed, so `taken` stays 0. */
  struct cpu_ring *copy;
  uint64_t clear_ticks; /* entries older than this are not taken (trace was cleared) */
  /* Bumped whenever rings are emptied or replaced as a whole (clear, resize, the copies
   * refilled, fork): a `trace` reader's place (live_iter) is then gone. */
  uint64_t gen;
  struct desc_cache *descs;
  uint32_t ndescs, descs_cap;
  struct {
    uint32_t pid;
    char comm[16];
  } *cmdlines;
  uint32_t cmdlines_size, cmdlines_next;
} L = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

/* Readers inside live_wait: written by them, read by the consumer to choose how soon it looks
 * again (live_has_waiters). Relaxed: a stale value costs one poll period of latency at most. */
static atomic_uint waiters;

/* Open trace_pipe files: written by their openers (tracefs.c), read by the consumer in each
 * pass. Relaxed: an opener then wakes the consumer (fxt_consumer_flush), whose acquire of the
 * wake word pairs with that release and orders the count before the pass that reads it. */
static atomic_uint pipe_readers;

/* ---- clock ------------------------------------------------------------------------------- */

/* The session's clock as a file reader sees it: one clock-sync point and the rate. */
static struct fxtf_provider clock_provider = {.ticks_per_second = 1000000000u};

void live_set_clock(uint64_t ticks, uint64_t mono_ns, uint64_t tps)
{
  pthread_mutex_lock(&L.lock);
  clock_provider.ticks_per_second = tps ? tps : 1000000000u;
  clock_provider.nsyncs = 1;
  clock_provider.first_sync.ticks = clock_provider.last_sync.ticks = ticks;
  clock_provider.first_sync.monotonic_ns = clock_provider.last_sync.monotonic_ns = mono_ns;
  pthread_mutex_unlock(&L.lock);
}

uint64_t live_ticks_to_ns(uint64_t ticks)
{
  return fxtf_ticks_to_ns(&clock_provider, ticks);
}

static uint64_t mono_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- rings -------------------------------------------------------------------------------- */

static size_t capacity_of(uint64_t kb, uint32_t *read_back)
{
  uint64_t pages = (kb * 1024 + PAGE_DATA - 1) / PAGE_DATA;
  if (pages < 2)
    pages = 2;
  *read_back = (uint32_t)(pages * PAGE_DATA / 1024);
  return (size_t)pages * PAGE_DATA;
}

/* Storage bytes of a ring of `capacity` entry bytes (room for a wrap and a largest entry). */
static size_t ring_bytes(size_t capacity)
{
  return capacity + 2 * (sizeof(struct entry) + MAX_RECORD) + 64;
}

/* r, emptied, on buf of ring_bytes(capacity) bytes (its pages already written: `warm`). */
static void ring_adopt(struct cpu_ring *r, unsigned char *buf, size_t capacity, bool warm)
{
  free(r->buf);
  memset(r, 0, sizeof(*r));
  r->buf = buf;
  r->size = ring_bytes(capacity);
  r->capacity = capacity;
  r->warmed = warm ? r->size : 0;
}

static int ring_alloc(struct cpu_ring *r, size_t capacity)
{
  unsigned char *buf = malloc(ring_bytes(capacity));
  if (!buf)
    return FXT_ENOMEM;
  ring_adopt(r, buf, capacity, false);
  return 0;
}

static void ring_empty(struct cpu_ring *r)
{
  r->head = r->tail = r->payload = 0;
  r->count = r->events = 0;
}

/* The entry at off, following a wrap: an entry never starts where its header would not fit
 * before the end, and a wrap marker (size 0) sends the reader back to 0. */
static size_t entry_at(const struct cpu_ring *r, size_t off)
{
  if (off + sizeof(struct entry) > r->size ||
      ((const struct entry *)(const void *)(r->buf + off))->size == 0)
    return 0;
  return off;
}

static struct entry *ring_oldest(struct cpu_ring *r)
{
  if (r->count == 0)
    return NULL;
  r->tail = entry_at(r, r->tail);
  return (struct entry *)(void *)(r->buf + r->tail);
}

static void ring_pop(struct cpu_ring *r)
{
  struct entry *e = ring_oldest(r);
  if (!e)
    return;
  r->tail = (size_t)((unsigned char *)e - r->buf) + e->size;
  r->payload -= e->size;
  r->popped++;
  if (--r->count == 0)
    ring_empty(r);
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

/* Records of the run already taken by trace_pipe. */
static uint64_t count_taken(const struct entry *e)
{
  uint64_t n = 0;
  for (uint32_t off = 0; off < e->taken; off += rec_bytes(run_at(e, off)))
    n++;
  return n;
}

static void ring_push(struct cpu_ring *r, const struct entry *h, const void *rec, size_t len)
{
  size_t n = h->size;
  unsigned char *at;
  while (r->payload + n > r->capacity || (at = ring_place(r, n)) == NULL) {
    struct entry *old = ring_oldest(r);
    uint64_t left = old->nrec - count_taken(old);
    r->overrun += left;
    r->pipe_lost += left;
    r->events -= left;
    ring_pop(r);
  }
  memcpy(at, h, sizeof(*h));
  memcpy(at + sizeof(*h), rec, len);
  memset(at + sizeof(*h) + len, 0, n - sizeof(*h) - len);
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
  pthread_mutex_lock(&L.lock);
  for (uint32_t i = 0; i < L.ncpus; i++) {
    struct cpu_ring *r = &L.cpu[i];
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
  pthread_mutex_unlock(&L.lock);
  return more;
}

int live_init(void)
{
  int rc = 0;
  pthread_mutex_lock(&L.lock);
  if (!L.ready) {
    long n = sysconf(_SC_NPROCESSORS_CONF);
    L.ncpus = n > 0 ? (uint32_t)n : 1;
    L.cpu = calloc(L.ncpus, sizeof(*L.cpu));
    uint32_t kb;
    size_t cap = capacity_of(DEFAULT_KB, &kb);
    for (uint32_t i = 0; L.cpu && i < L.ncpus && rc == 0; i++)
      rc = ring_alloc(&L.cpu[i], cap);
    L.cmdlines_size = 128;
    L.cmdlines = calloc(L.cmdlines_size, sizeof(*L.cmdlines));
    if (!L.cpu || !L.cmdlines)
      rc = FXT_ENOMEM;
    L.buffer_kb = kb;
    L.on = true;
    L.ready = rc == 0;
  }
  pthread_mutex_unlock(&L.lock);
  return rc;
}

int live_set_buffer_kb(uint64_t kb)
{
  if (kb == 0 || kb > (1u << 22))
    return FXT_EINVAL;
  if (live_init() != 0)
    return FXT_ENOMEM;
  uint32_t back;
  size_t cap = capacity_of(kb, &back);
  /* The CPUs' new rings are allocated and written once here, by the writer of the file and
   * outside the lock: filled for the first time by the consumer, 32 MiB of fresh memory
   * (16 MiB a CPU) cost a program firing 5 M events a second 2-41 k dropped events on a VM
   * where a first touch of a page costs ~10 us (0 after). Nothing changes when one cannot
   * be had. */
  unsigned char **fresh = calloc(L.ncpus, sizeof(*fresh));
  bool got = fresh != NULL;
  for (uint32_t i = 0; got && i < L.ncpus; i++) {
    got = (fresh[i] = malloc(ring_bytes(cap))) != NULL;
    if (got)
      fxt_write_pages(fresh[i], ring_bytes(cap));
  }
  if (!got) {
    for (uint32_t i = 0; fresh && i < L.ncpus; i++)
      free(fresh[i]);
    free(fresh);
    return FXT_ENOMEM;
  }
  int rc = 0;
  pthread_mutex_lock(&L.lock);
  for (uint32_t i = 0; i < L.ncpus; i++)
    ring_adopt(&L.cpu[i], fresh[i], cap, true);
  free(fresh);
  for (uint32_t i = 0; L.copy && i < L.ncpus && rc == 0; i++)
    rc = ring_alloc(&L.copy[i], cap);
  if (rc == 0)
    L.buffer_kb = back;
  L.gen++;
  pthread_mutex_unlock(&L.lock);
  return rc ? rc : (int)back;
}

uint32_t live_buffer_kb(void)
{
  live_init();
  return L.buffer_kb;
}

uint32_t live_ncpus(void)
{
  live_init();
  return L.ncpus;
}

void live_set_on(bool on)
{
  live_init();
  pthread_mutex_lock(&L.lock);
  L.on = on;
  pthread_cond_broadcast(&L.cond); /* trace_pipe readers return when tracing stops */
  pthread_mutex_unlock(&L.lock);
}

bool live_on(void)
{
  live_init();
  return L.on;
}

void live_clear(void)
{
  live_init();
  pthread_mutex_lock(&L.lock);
  for (uint32_t i = 0; i < L.ncpus; i++) {
    ring_empty(&L.cpu[i]);
    L.cpu[i].overrun = L.cpu[i].lost_pending = L.cpu[i].pipe_lost = 0;
  }
  /* Everything emitted until now is old: what is still on its way is discarded. */
  L.clear_ticks = fxt_ticks();
  L.gen++;
  pthread_mutex_unlock(&L.lock);
}

/* Under lock: the copies empty, their counts gone with them. */
static void copy_empty(void)
{
  L.gen++;
  for (uint32_t i = 0; L.copy && i < L.ncpus; i++) {
    ring_empty(&L.copy[i]);
    L.copy[i].overrun = L.copy[i].dropped = L.copy[i].lost_pending = L.copy[i].pipe_lost = 0;
  }
}

/* ---- fork: the lock must not be held by another thread at the fork ------------------------ */

void live_atfork_prepare(void)
{
  pthread_mutex_lock(&L.lock);
}

void live_atfork_parent(void)
{
  pthread_mutex_unlock(&L.lock);
}

/* The child starts with an empty view: the parent's records stay the parent's. */
void live_atfork_child(void)
{
  pthread_mutex_init(&L.lock, NULL);
  pthread_cond_init(&L.cond, NULL);
  for (uint32_t i = 0; L.ready && i < L.ncpus; i++) {
    ring_empty(&L.cpu[i]);
    L.cpu[i].overrun = L.cpu[i].dropped = L.cpu[i].read = 0;
    L.cpu[i].lost_pending = L.cpu[i].pipe_lost = 0;
  }
  copy_empty(); /* (L.gen moves: the parent's readers' places are gone) */
  atomic_store_explicit(&pipe_readers, 0, memory_order_relaxed); /* the parent's files */
}

/* ---- cmdlines ----------------------------------------------------------------------------- */

/* Under lock. The latest name per pid; a new pid takes the next slot round-robin. */
static void cmdline_note(uint32_t pid, const char *comm)
{
  for (uint32_t i = 0; i < L.cmdlines_size; i++)
    if (L.cmdlines[i].pid == pid) {
      memcpy(L.cmdlines[i].comm, comm, 16);
      return;
    }
  uint32_t i = L.cmdlines_next++ % L.cmdlines_size;
  L.cmdlines[i].pid = pid;
  memcpy(L.cmdlines[i].comm, comm, 16);
}

void live_cmdlines(struct fxt_tbuf *b)
{
  live_init();
  pthread_mutex_lock(&L.lock);
  for (uint32_t i = 0; i < L.cmdlines_size; i++) {
    if (L.cmdlines[i].pid == 0)
      continue;
    char line[64];
    int n = snprintf(line, sizeof(line), "%u %.15s\n", L.cmdlines[i].pid, L.cmdlines[i].comm);
    fxt_tbuf_put(b, line, (size_t)n);
  }
  pthread_mutex_unlock(&L.lock);
}

int live_set_cmdlines_size(uint64_t n)
{
  if (n == 0 || n > MAX_CMDLINES)
    return FXT_EINVAL;
  live_init();
  void *fresh = calloc((size_t)n, sizeof(*L.cmdlines));
  if (!fresh)
    return FXT_ENOMEM;
  pthread_mutex_lock(&L.lock);
  free(L.cmdlines);
  L.cmdlines = fresh;
  L.cmdlines_size = (uint32_t)n;
  L.cmdlines_next = 0;
  pthread_mutex_unlock(&L.lock);
  return 0;
}

uint32_t live_cmdlines_size(void)
{
  live_init();
  return L.cmdlines_size;
}

/* ---- feeding (the consumer) --------------------------------------------------------------- */

static bool is_meta(uint64_t h)
{
  return (h & 0xf) == FXT_RECORD_EVENT && (h >> 32 & 0xffff) == FXT_STR_KERNEL_META;
}

/* The first argument's 32-bit value of a kernel:meta event record of `words` words. */
static uint32_t meta_arg0(const uint64_t *w, uint32_t words)
{
  uint32_t at = 2 + (((w[0] >> 24) & 0xff) == 0 ? 2 : 0);
  return at < words ? (uint32_t)(w[at] >> 32) : 0;
}

/* Under lock: pushes records [p, p + len) (nrec of them) as one run on cpu of ring set `set`
 * (L.cpu or L.copy). */
static void push_run(struct cpu_ring *set, uint32_t cpu, const unsigned char *p, uint32_t len,
                     uint32_t nrec, uint32_t tid, const char *name)
{
  if (nrec == 0)
    return;
  struct cpu_ring *r = &set[cpu < L.ncpus ? cpu : 0];
  struct entry h = {(uint32_t)(sizeof(h) + len), tid, nrec, 0, r->lost_pending,
                    r->pushed_records, {0}};
  memcpy(h.comm, name, 16);
  ring_push(r, &h, p, len);
  r->lost_pending = 0;
}

/* Under lock: live_feed into ring set `set`; the copies (set == L.copy) take events while
 * tracing is off too, and wake no trace_pipe reader (they never consume them). */
static void feed(struct cpu_ring *set, const unsigned char *p, uint32_t len, uint32_t tid,
                 const char *comm, uint32_t *cpu, uint64_t *events, uint64_t *dropped,
                 uint32_t *last_cpu)
{
  *last_cpu = FXT_CPU_NOTE_NONE;
  bool copy = set == L.copy;
  char name[16] = {0};
  strncpy(name, comm, 15);
  cmdline_note(tid, name);
  uint32_t run = 0, nrec = 0; /* the run being gathered: [run, off) */
  bool fed = false;
  uint32_t off = 0;
  while (off + 16 <= len) {
    uint64_t h;
    memcpy(&h, p + off, 8);
    uint32_t bytes = rec_bytes(p + off);
    if (bytes < 16 || bytes > len - off)
      break;
    bool event = (h & 0xf) == FXT_RECORD_EVENT;
    *events += event && !is_meta(h);
    bool keep = event && !is_meta(h) && (L.on || copy) && rec_ticks(p + off) >= L.clear_ticks;
    if (!keep || off + bytes - run > RUN_MAX) { /* the run ends before this record */
      push_run(set, *cpu, p + run, off - run, nrec, tid, name);
      fed |= nrec != 0;
      run = keep ? off : off + bytes;
      nrec = 0;
    }
    if (keep) {
      nrec++;
    } else if (event && is_meta(h)) {
      uint64_t w[8] = {0};
      uint32_t words = bytes / 8;
      memcpy(w, p + off, bytes < sizeof(w) ? bytes : sizeof(w));
      uint32_t c = *cpu < L.ncpus ? *cpu : 0;
      uint16_t nm = (uint16_t)(h >> 48);
      if (nm == FXT_STR_CPU) {
        *cpu = meta_arg0(w, words);
        uint32_t c = fxt_cpu_of_record(p + off, bytes);
        *last_cpu = c != FXT_CPU_NOTE_NONE ? c : *last_cpu;
      }
      else if (nm == FXT_STR_DROP_STATS) {
        *dropped += meta_arg0(w, words);
        set[c].dropped += meta_arg0(w, words);
        set[c].lost_pending += meta_arg0(w, words);
      }
    }
    off += bytes;
  }
  push_run(set, *cpu, p + run, off - run, nrec, tid, name);
  fed |= nrec != 0;
  if (off != len) /* stopped before the end (a record shorter than 16 bytes): walk it all */
    *last_cpu = fxt_cpu_after(p, len, FXT_CPU_NOTE_NONE);
  if (fed && !copy)
    pthread_cond_broadcast(&L.cond);
}

void live_feed(const unsigned char *p, uint32_t len, uint32_t tid, const char *comm,
               uint32_t *cpu, uint64_t *events, uint64_t *dropped, uint32_t *last_cpu)
{
  if (live_init() != 0) {
    *last_cpu = fxt_cpu_after(p, len, FXT_CPU_NOTE_NONE);
    return;
  }
  pthread_mutex_lock(&L.lock);
  feed(L.cpu, p, len, tid, comm, cpu, events, dropped, last_cpu);
  pthread_mutex_unlock(&L.lock);
}

/* Under lock (set NULL: nothing, the copies were never set up). */
static void lost(struct cpu_ring *set, uint32_t cpu, uint64_t records, bool overrun)
{
  if (!set)
    return;
  struct cpu_ring *r = &set[cpu < L.ncpus ? cpu : 0];
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
  pthread_mutex_lock(&L.lock);
  lost(L.cpu, cpu, records, overrun);
  pthread_mutex_unlock(&L.lock);
}

/* ---- a flight recorder's copies (the consumer fills them, a reader empties them) ---------- */

int live_copy_begin(void)
{
  if (live_init() != 0)
    return FXT_ENOMEM;
  int rc = 0;
  pthread_mutex_lock(&L.lock);
  if (!L.copy) {
    uint32_t kb;
    size_t cap = capacity_of(L.buffer_kb, &kb);
    struct cpu_ring *c = calloc(L.ncpus, sizeof(*c));
    for (uint32_t i = 0; c && i < L.ncpus && rc == 0; i++)
      rc = ring_alloc(&c[i], cap);
    if (!c || rc != 0) {
      for (uint32_t i = 0; c && i < L.ncpus; i++)
        free(c[i].buf);
      free(c);
      rc = FXT_ENOMEM;
    } else {
      L.copy = c;
    }
  }
  copy_empty();
  pthread_mutex_unlock(&L.lock);
  return rc;
}

void live_copy_feed(const unsigned char *p, uint32_t len, uint32_t tid, const char *comm,
                    uint32_t *cpu)
{
  uint64_t events = 0, dropped = 0; /* the threads' counters are the drains' */
  uint32_t last_cpu;
  pthread_mutex_lock(&L.lock);
  if (L.copy)
    feed(L.copy, p, len, tid, comm, cpu, &events, &dropped, &last_cpu);
  pthread_mutex_unlock(&L.lock);
}

void live_copy_lost(uint32_t cpu, uint64_t records, bool overrun)
{
  pthread_mutex_lock(&L.lock);
  lost(L.copy, cpu, records, overrun);
  pthread_mutex_unlock(&L.lock);
}

void live_copy_clear(void)
{
  pthread_mutex_lock(&L.lock);
  copy_empty();
  pthread_mutex_unlock(&L.lock);
}

void live_pipe_open(void)
{
  atomic_fetch_add_explicit(&pipe_readers, 1, memory_order_relaxed);
}

void live_pipe_close(void)
{
  atomic_fetch_sub_explicit(&pipe_readers, 1, memory_order_relaxed);
}

bool live_pipe_readers(void)
{
  return atomic_load_explicit(&pipe_readers, memory_order_relaxed) != 0;
}

/* ---- formatting --------------------------------------------------------------------------- */

static struct fxt_str_ref ref_text(uint16_t ref, const unsigned char *p, uint32_t *at,
                                   uint32_t end)
{
  struct fxt_str_ref r = {"", 0, ref};
  if (ref & 0x8000) { /* inline */
    uint32_t n = ref & 0x7fff;
    if (*at + n <= end) {
      r.data = (const char *)p + *at;
      r.len = (uint16_t)n;
    }
    *at += (n + 7) & ~7u;
    return r;
  }
  const char *s;
  uint32_t n;
  if (ref && fxt_intern_lookup(ref, &s, &n)) {
    r.data = s;
    r.len = (uint16_t)n;
  }
  return r;
}

/* Parses one of our own event records (as emitted in this process) into *ev; strings resolve
 * through the intern table. Returns false when it is not a well-formed event. */
static bool parse_event(const unsigned char *p, uint32_t len, struct fxt_event *ev)
{
  uint64_t h, w;
  if (len < 16)
    return false;
  memcpy(&h, p, 8);
  memset(ev, 0, sizeof(*ev));
  ev->type = (uint32_t)(h >> 16 & 0xf);
  ev->num_args = (uint32_t)(h >> 20 & 0xf);
  ev->thread.index = (uint8_t)(h >> 24);
  memcpy(&ev->timestamp, p + 8, 8);
  uint32_t at = 16;
  if (ev->thread.index == 0)
    at += 16;
  ev->category = ref_text((uint16_t)(h >> 32), p, &at, len);
  ev->name = ref_text((uint16_t)(h >> 48), p, &at, len);
  for (uint32_t i = 0; i < ev->num_args; i++) {
    if (at + 8 > len)
      return false;
    memcpy(&w, p + at, 8);
    uint32_t words = (uint32_t)(w >> 4 & 0xfff), start = at;
    struct fxt_arg *a = &ev->args[i];
    a->type = (uint32_t)(w & 0xf);
    at += 8;
    a->name = ref_text((uint16_t)(w >> 16), p, &at, len);
    switch (a->type) {
    case FXT_ARG_INT32:
      a->value.i32 = (int32_t)(uint32_t)(w >> 32);
      break;
    case FXT_ARG_UINT32:
      a->value.u32 = (uint32_t)(w >> 32);
      break;
    case FXT_ARG_BOOL:
      a->value.b = (w >> 32) & 1;
      break;
    case FXT_ARG_STRING:
      a->value.str = ref_text((uint16_t)(w >> 32), p, &at, len);
      break;
    default: /* int64, uint64, double, pointer, koid: one word */
      if (at + 8 <= len)
        memcpy(&a->value.u64, p + at, 8);
      break;
    }
    at = start + words * 8;
    if (words == 0 || at > len)
      return false;
  }
  if (ev->type == FXT_EVENT_COUNTER || ev->type >= FXT_EVENT_DURATION_COMPLETE) {
    if (at + 8 > len)
      return false;
    memcpy(&ev->trailer, p + at, 8);
  }
  return true;
}

/* The description of system/name from the registry (cached; strings copied, so a library
 * unloaded later leaves nothing dangling). Under lock. NULL when unknown. */
static const struct fxtf_desc *desc_of(const struct fxt_event *ev)
{
  uint16_t sys = ev->category.index, nm = ev->name.index;
  for (uint32_t i = 0; i < L.ndescs; i++)
    if (L.descs[i].system_ref == sys && L.descs[i].name_ref == nm)
      return &L.descs[i].desc;
  char system[256], name[4096];
  snprintf(system, sizeof(system), "%.*s", ev->category.len, ev->category.data);
  snprintf(name, sizeof(name), "%.*s", ev->name.len, ev->name.data);
  struct fxt_tracepoint *tp = fxt_tracepoint_by_name(system, name);
  if (!tp || tp->kind != FXT_TP_TYPED)
    return NULL;
  if (L.ndescs == L.descs_cap) {
    uint32_t cap = L.descs_cap ? L.descs_cap * 2 : 64;
    struct desc_cache *n = realloc(L.descs, cap * sizeof(*n));
    if (!n)
      return NULL;
    L.descs = n;
    L.descs_cap = cap;
  }
  struct desc_cache *d = &L.descs[L.ndescs];
  memset(d, 0, sizeof(*d));
  const char *fmt = tp->print_fmt ? tp->print_fmt : "";
  size_t need = strlen(fmt) + strlen(system) + strlen(name) + 3;
  for (uint32_t i = 0; i < tp->nfields; i++)
    need += strlen(tp->fields[i].name) + 1;
  char *s = d->storage = malloc(need);
  if (!s)
    return NULL;
#define KEEP(dst, src)                                                                       \
  do {                                                                                       \
    size_t n_ = strlen(src);                                                                 \
    memcpy(s, src, n_ + 1);                                                                  \
    (dst).data = s;                                                                          \
    (dst).len = (uint32_t)n_;                                                                \
    s += n_ + 1;                                                                             \
  } while (0)
  KEEP(d->desc.system, system);
  KEEP(d->desc.name, name);
  KEEP(d->desc.fmt, fmt);
  d->desc.kind = tp->kind;
  d->desc.id = tp->id;
  d->desc.nfields = tp->nfields;
  for (uint32_t i = 0; i < tp->nfields && i < FXT_MAX_FIELDS; i++) {
    KEEP(d->desc.fields[i].name, tp->fields[i].name);
    d->desc.fields[i].type = (uint8_t)tp->fields[i].type;
    d->desc.fields[i].bound = tp->fields[i].bound;
  }
#undef KEEP
  d->system_ref = sys;
  d->name_ref = nm;
  L.ndescs++;
  return &d->desc;
}

/* Formats the record at offset off of entry e into b, with lost_before events lost in front
 * of it shown as a LOST line. Under lock. */
static void format_record(struct fxt_tbuf *b, const struct entry *e, uint32_t off,
                          uint32_t cpu, uint64_t lost_before)
{
  static struct fxtf_event fe;
  static struct fxtf_thread th;
  memset(&fe, 0, sizeof(fe));
  memset(&th, 0, sizeof(th));
  if (!parse_event(run_at(e, off), rec_bytes(run_at(e, off)), &fe.ev))
    return;
  th.tid = th.pid = e->tid;
  th.comm.data = e->comm;
  th.comm.len = (uint32_t)strnlen(e->comm, 16);
  th.named = th.comm.len != 0;
  fe.thread = &th;
  fe.provider = &clock_provider;
  fe.desc = desc_of(&fe.ev);
  fe.ns = live_ticks_to_ns(fe.ev.timestamp);
  fe.cpu = cpu;
  fe.lost_before = lost_before;
  fxt_text_event(b, &fe);
}

/* ---- reading ------------------------------------------------------------------------------ */

/* The CPU whose oldest unconsumed record is the oldest of all, or -1. Under lock. */
static int oldest_cpu(void)
{
  int best = -1;
  uint64_t best_ticks = 0;
  for (uint32_t i = 0; i < L.ncpus; i++) {
    struct entry *e = ring_oldest(&L.cpu[i]);
    if (!e)
      continue;
    uint64_t t = rec_ticks(run_at(e, e->taken));
    if (best < 0 || t < best_ticks) {
      best = (int)i;
      best_ticks = t;
    }
  }
  return best;
}

static const char trace_legend[] =
    "#\n"
    "#                                _-----=> irqs-off/BH-disabled\n"
    "#                               / _----=> need-resched\n"
    "#                              | / _---=> hardirq/softirq\n"
    "#                              || / _--=> preempt-depth\n"
    "#                              ||| / _-=> migrate-disable\n"
    "#                              |||| /     delay\n"
    "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
    "#              | |         |   |||||     |         |\n";

/* Under lock: ring k of the view, k < nrings(): the CPU rings, then the copies' (CPU k - ncpus),
 * when they are set up. */
static uint32_t nrings(void)
{
  return L.copy ? 2 * L.ncpus : L.ncpus;
}

static struct cpu_ring *ring_k(uint32_t k)
{
  return k < L.ncpus ? &L.cpu[k] : &L.copy[k - L.ncpus];
}

/* A reader of `trace` between two reads: a place per ring (its rings as they were at open),
 * kept by sequence numbers, not pointers, so that the lock is held only while a read formats
 * its lines: the consumer feeds the view in between (a snapshot formatted whole at open held
 * the lock for all of it while the consumer waited to feed the view and the threads' buffers
 * filled: a 16 MiB-per-CPU view read while a program fired 5 M events a second cost it
 * 0.73-2.06 M dropped events, 150-190 k after, docs/performance.md). Entries that
 * arrived after the open are not shown (the kernel pauses recording while `trace` is open
 * instead); entries that left before the reader reached them (evicted by newer ones) are
 * skipped, their records shown as a LOST line, those trace_pipe consumed are not. */
struct live_iter {
  uint64_t gen; /* L.gen at open: when it moves, what is left is gone */
  uint32_t nr;  /* rings at open: the CPUs', then the copies' */
  bool done;
  struct place {
    uint64_t seq;   /* entry: its number among those the ring ever held (popped + index) */
    size_t pos;     /* its offset in the ring's storage, while seq is still held */
    uint32_t off;   /* the next record in its run */
    uint64_t rec;   /* that record's number among those the ring ever held */
    uint64_t end;   /* entries numbered below this were there at open */
    uint64_t end_rec; /* and records numbered below this */
    uint64_t read;  /* the ring's trace_pipe count when the place was last moved */
    uint64_t lost;  /* records that left before the place reached them, not shown yet */
  } p[];
};

/* Under lock: the entry of place c, the next still held at or after it (the place moved
 * there, what it passed counted in c->lost), or NULL when the ring has nothing left for it. */
static struct entry *place_entry(struct cpu_ring *r, struct place *c)
{
  if (c->seq >= c->end || r->count == 0 || c->seq >= r->popped + r->count)
    return NULL;
  if (c->seq < r->popped) { /* its entry left the ring: go on from the oldest */
    struct entry *e = ring_oldest(r);
    uint64_t at = e->first_rec + count_taken(e);
    uint64_t upto = at < c->end_rec ? at : c->end_rec; /* (later ones are not shown) */
    uint64_t skipped = upto > c->rec ? upto - c->rec : 0, piped = r->read - c->read;
    c->lost += skipped > piped ? skipped - piped : 0;
    c->seq = r->popped;
    c->pos = (size_t)((unsigned char *)e - r->buf);
    c->off = e->taken;
    c->rec = at;
    c->read = r->read;
    return c->seq < c->end ? e : NULL;
  }
  struct entry *e = (struct entry *)(void *)(r->buf + c->pos);
  if (c->seq == r->popped && c->off < e->taken) { /* trace_pipe took the front of it */
    uint64_t n = 0;
    for (uint32_t o = c->off; o < e->taken; o += rec_bytes(run_at(e, o)))
      n++;
    c->off = e->taken;
    c->rec += n;
  }
  return e;
}

struct live_iter *live_iter_open(struct fxt_tbuf *b)
{
  live_init();
  pthread_mutex_lock(&L.lock);
  uint32_t nr = nrings();
  struct live_iter *it = calloc(1, sizeof(*it) + nr * sizeof(struct place));
  if (!it) {
    pthread_mutex_unlock(&L.lock);
    return NULL;
  }
  it->gen = L.gen;
  it->nr = nr;
  uint64_t entries = 0, overrun = 0;
  for (uint32_t k = 0; k < nr; k++) {
    struct cpu_ring *r = ring_k(k);
    struct entry *e = ring_oldest(r);
    struct place *c = &it->p[k];
    entries += r->events;
    overrun += r->overrun;
    c->seq = r->popped;
    c->end = r->popped + r->count;
    c->end_rec = r->pushed_records;
    c->pos = e ? (size_t)((unsigned char *)e - r->buf) : 0;
    c->off = e ? e->taken : 0;
    c->rec = e ? e->first_rec + count_taken(e) : r->pushed_records;
    c->read = r->read;
  }
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  char head[160];
  int n = snprintf(head, sizeof(head),
                   "# tracer: nop\n#\n# entries-in-buffer/entries-written: %llu/%llu   #P:%ld\n",
                   (unsigned long long)entries, (unsigned long long)(entries + overrun),
                   online > 0 ? online : 1);
  fxt_tbuf_put(b, head, (size_t)n);
  fxt_tbuf_puts(b, trace_legend);
  pthread_mutex_unlock(&L.lock);
  return it;
}

bool live_iter_next(struct live_iter *it, struct fxt_tbuf *b, size_t want)
{
  if (it->done)
    return false;
  pthread_mutex_lock(&L.lock);
  if (L.gen != it->gen)
    it->done = true; /* emptied or replaced since the open */
  while (!it->done && b->len < want) {
    /* The oldest record among the places (merged by time; nothing is consumed). */
    int best = -1;
    uint64_t best_ticks = 0;
    struct entry *best_e = NULL;
    for (uint32_t k = 0; k < it->nr; k++) {
      struct entry *e = place_entry(ring_k(k), &it->p[k]);
      if (!e && it->p[k].lost) { /* the ring's last records left before the reader came */
        fxt_text_lost(b, k % L.ncpus, it->p[k].lost, false);
        it->p[k].lost = 0;
      }
      if (!e)
        continue;
      uint64_t t = rec_ticks(run_at(e, it->p[k].off));
      if (best < 0 || t < best_ticks) {
        best = (int)k;
        best_ticks = t;
        best_e = e;
      }
    }
    if (best < 0) {
      it->done = true;
      break;
    }
    struct cpu_ring *r = ring_k((uint32_t)best);
    struct place *c = &it->p[best];
    /* The header counts the buffers' losses; a LOST line here is what left this ring while
     * the reader was on its way to it. */
    format_record(b, best_e, c->off, (uint32_t)best % L.ncpus, c->lost);
    c->lost = 0;
    c->off += rec_bytes(run_at(best_e, c->off));
    c->rec++;
    c->read = r->read;
    if (c->off >= run_len(best_e)) { /* the next entry of this ring */
      c->seq++;
      c->pos = entry_at(r, c->pos + best_e->size);
      c->off = 0;
    }
  }
  pthread_mutex_unlock(&L.lock);
  return !it->done || b->len > 0;
}

void live_iter_close(struct live_iter *it)
{
  free(it);
}

size_t live_consume(struct fxt_tbuf *b, size_t want)
{
  live_init();
  size_t taken = 0;
  pthread_mutex_lock(&L.lock);
  while (b->len < want) {
    int c = oldest_cpu();
    if (c < 0)
      break;
    struct cpu_ring *r = &L.cpu[c];
    struct entry *e = ring_oldest(r);
    uint64_t lost = e->taken == 0 ? e->lost_before : 0;
    lost += r->pipe_lost; /* runs evicted before this reader got them */
    r->pipe_lost = 0;
    format_record(b, e, e->taken, (uint32_t)c, lost);
    e->taken += rec_bytes(run_at(e, e->taken));
    r->events--;
    r->read++;
    taken++;
    if (e->taken >= run_len(e))
      ring_pop(r);
  }
  pthread_mutex_unlock(&L.lock);
  return taken;
}

bool live_wait(int timeout_ms)
{
  live_init();
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  if (timeout_ms > 0) {
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000;
    }
  }
  /* A reader that starts waiting wakes the consumer, which then polls every 10 ms while
   * it waits: the next events reach it within about that. */
  if (atomic_fetch_add_explicit(&waiters, 1, memory_order_relaxed) == 0 && timeout_ms != 0)
    fxt_consumer_wake(&fxt_session);
  pthread_mutex_lock(&L.lock);
  bool ready;
  while (!(ready = oldest_cpu() >= 0) && L.on && timeout_ms != 0) {
    if (timeout_ms < 0)
      pthread_cond_wait(&L.cond, &L.lock);
    else if (pthread_cond_timedwait(&L.cond, &L.lock, &until) != 0)
      break;
  }
  ready = oldest_cpu() >= 0;
  pthread_mutex_unlock(&L.lock);
  atomic_fetch_sub_explicit(&waiters, 1, memory_order_relaxed);
  return ready;
}

bool live_has_waiters(void)
{
  return atomic_load_explicit(&waiters, memory_order_relaxed) != 0;
}

void live_cpu_stats(uint32_t cpu, struct live_cpu_stats *st)
{
  live_init();
  memset(st, 0, sizeof(*st));
  pthread_mutex_lock(&L.lock);
  uint64_t oldest = 0;
  for (uint32_t k = cpu; cpu < L.ncpus && k < nrings(); k += L.ncpus) { /* its ring, its copy */
    struct cpu_ring *r = ring_k(k);
    st->entries += r->events;
    st->overrun += r->overrun;
    st->bytes += r->payload;
    st->dropped += r->dropped;
    st->read += r->read;
    struct entry *e = ring_oldest(r);
    uint64_t t = e ? rec_ticks(run_at(e, e->taken)) : 0;
    if (e && (oldest == 0 || t < oldest))
      oldest = t;
  }
  st->oldest_ns = oldest ? live_ticks_to_ns(oldest) : 0;
  pthread_mutex_unlock(&L.lock);
}

uint64_t live_now_ns(void)
{
  return mono_now();
}
