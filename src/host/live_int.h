/* live_int.h - what live.c (the view's rings, fed by the consumer), live_ctl.c (their size,
 * clearing, fork, cmdlines, options) and live_read.c (the view read: `trace` a chunk at a
 * time, `trace_pipe`, the per-CPU stats, formatting) share:
 * the entries, the rings and the view's state, all under fxt_live.lock. */
#ifndef FXTRACE_HOST_LIVE_INT_H
#define FXTRACE_HOST_LIVE_INT_H

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

#include <fxtrace/detail/emit.h>

#include "../base/fgraph_text.h"
#include "../base/text.h"
#include "consumer.h"
#include "../base/cpunote.h"
#include "intern.h"
#include "session_int.h"
#include "slots.h"

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
  /* function_graph lines (live_fgraph.c): 0 for a run of events; else the run's records are
   * lines, and lines_at is the offset in the run of their line words (a uint32 per record:
   * live_line_word). taken_recs: the records of the run trace_pipe took. */
  uint32_t lines_at;
  uint32_t taken_recs;
  /* The view's feed order of a run the consumer pushed (1, 2, ...: fxt_live.feed_seq), which
   * the function_graph layout has not arranged yet (live_fgraph.c fxt_live_fg_arrange); 0 for
   * an entry arranged (a lines run, or a run of events it passed on). */
  uint64_t feed_seq;
};

/* A line word: its kind (LIVE_LINE_*), depth (the call's; a comment's: the innermost open
 * call's + 1, 0 for none) and the CPU its record was written on. */
static inline uint32_t live_line_word(uint32_t kind, uint32_t depth, uint32_t cpu)
{
  return kind | (depth < 0xfff ? depth : 0xfff) << 4 | (cpu < 0xffff ? cpu : 0xffff) << 16;
}

enum {
  LIVE_LINE_PLAIN = 0,
  LIVE_LINE_CALL,    /* "f() {" (a call with calls or events inside) */
  LIVE_LINE_LEAF,    /* duration, "f();" */
  LIVE_LINE_RETURN,  /* duration, "}": a copy of the call's record, its two times swapped */
  LIVE_LINE_COMMENT, /* another event inside a call: "/<star> text <star>/" */
  LIVE_LINE_MARK,    /* the calls that follow were printed before their caller returned */
};

/* A thread's records held while its outermost traced call is open (live_fgraph.c). */
struct live_fg_item {
  uint32_t off, bytes; /* in the thread's data */
  uint32_t cpu, depth; /* depth: slices only */
  uint64_t start, end, seq; /* ticks (end: slices only); seq: arrival */
  bool slice;
};
struct live_fg_thread {
  uint32_t tid;
  char comm[16];
  uint64_t used; /* the table's clock at its last record (the least recent is flushed first) */
  unsigned char *data;
  size_t len, cap;
  struct live_fg_item *items;
  size_t n, cap_items;
};
struct live_fg_key;
struct live_fg {
  struct live_fg_thread *t; /* at most HOLD_THREADS; those with n == 0 hold nothing */
  size_t n, cap;
  uint64_t clock;
  struct live_fg_key *ord; /* a flush's order of the items, and its sort's scratch */
  size_t cap_ord;
  /* An arrangement's entries taken out of the rings (fxt_live_fg_arrange): ring k's are
   * [ring[k].at, ring[k].end) of raw; ring[k].lost: its losses after them. */
  unsigned char *raw;
  size_t raw_cap;
  struct live_fg_ring {
    size_t at, end;
    uint64_t lost;
  } *ring;
  size_t cap_ring;
};

static inline const unsigned char *run_at(const struct entry *e, uint32_t off)
{
  return (const unsigned char *)(e + 1) + off;
}

/* Bytes of the run's records. */
static inline uint32_t run_len(const struct entry *e)
{
  return e->lines_at ? e->lines_at : e->size - (uint32_t)sizeof(*e);
}

/* The line word of record idx of a lines run (0: LIVE_LINE_PLAIN for a run of events). */
static inline uint32_t run_line(const struct entry *e, uint32_t idx)
{
  uint32_t w = 0;
  if (e->lines_at)
    memcpy(&w, run_at(e, e->lines_at + 4 * idx), 4);
  return w;
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
   * ever taken off the front and put at the back, since the last fxt_live.gen change. */
  uint64_t popped, pushed_records;
  /* The entries not arranged yet (feed_seq != 0), always the newest ones: those numbered
   * from raw_seq (an entry's number: popped + its index from the tail) to popped + count;
   * raw_seq == popped + count when there are none. raw_pos: the first one's offset, while
   * raw_seq > popped (else it is the tail's entry). */
  uint64_t raw_seq;
  size_t raw_pos;
};

struct desc_cache {
  uint16_t system_ref, name_ref;
  struct fxtf_desc desc;
  char *storage; /* the strings desc points to */
};

/* The view (live.c's comment). */
struct fxt_live_state {
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
  uint32_t ndescs;
  size_t descs_cap;
  struct {
    uint32_t pid;
    char comm[16];
  } *cmdlines;
  uint32_t cmdlines_size, cmdlines_next;
  /* function_graph (live_fgraph.c): the threads' held records, of the CPU rings [0] and of the
   * copies [1]; the category ref of the function tracer's records once one was seen (0: not
   * yet), and the last other category of a complete event; trace_pipe's verif_pid state
   * (its readers share it; reset when one opens). */
  struct live_fg fg[2];
  uint16_t fn_category, other_category;
  struct fxt_fgraph_cpus pipe_fg;
  /* The consumer's runs numbered as it pushes them (entry.feed_seq); `trace` readers open in
   * the plain layout, whose places an arrangement would move (it bumps gen when there are). */
  uint64_t feed_seq;
  uint32_t plain_iters;
};
extern struct fxt_live_state fxt_live;


/* Readers inside live_wait: written by them, read by the consumer to choose how soon it looks
 * again (live_has_waiters). Relaxed: a stale value costs one poll period of latency at most. */
extern atomic_uint fxt_live_waiters;

/* Open trace_pipe files: written by their openers (tracefs.c), read by the consumer in each
 * pass. Relaxed: an opener then wakes the consumer (fxt_consumer_flush), whose acquire of the
 * wake word pairs with that release and orders the count before the pass that reads it. */
extern atomic_uint fxt_live_pipe_readers;

size_t fxt_live_entry_at(const struct cpu_ring *r, size_t off);
/* Under lock: pushes records [p, p + len) (nrec of them) of thread tid (named name, 16 bytes)
 * as one entry on cpu of ring set `set`; lines: their line words (NULL: a run of events). */
void fxt_live_push(struct cpu_ring *set, uint32_t cpu, const unsigned char *p, uint32_t len,
                   uint32_t nrec, uint32_t tid, const char *name, const uint32_t *lines);
/* Under lock: the entries of r the consumer pushed since the last arrangement (feed_seq !=
 * 0) moved out of it, appended to *buf (*len of *cap bytes, grown); false: no memory, r as
 * it was. */
bool fxt_live_ring_take_raw(struct cpu_ring *r, unsigned char **buf, size_t *len, size_t *cap);
/* Under lock: the entry after e in r (a wrap followed). */
static inline struct entry *fxt_live_entry_next(struct cpu_ring *r, const struct entry *e)
{
  size_t off = fxt_live_entry_at(r, (size_t)((const unsigned char *)e - r->buf) + e->size);
  return (struct entry *)(void *)(r->buf + off);
}
/* live_fgraph.c, under lock, in a reader's thread (the consumer calls none of them).
 * fxt_live_fg_arrange: the entries of ring set `set` the consumer pushed since the last
 * arrangement taken out of its rings and put back in the function_graph layout, in the order
 * the consumer pushed them: the slices and what a thread emits while it holds some become
 * lines, the other records go back as runs of events. fxt_live_fg_flush_all:
 * what every thread holds of `set` printed (its outer calls still open: behind a mark).
 * fxt_live_fg_drop: what `set`'s threads hold discarded. fxt_live_fg_line: the line of
 * record fe of entry e (its line word), read from ring cpu, in the layout; s: the reader's verif_pid state. */
void fxt_live_fg_arrange(struct cpu_ring *set);
void fxt_live_fg_flush_all(struct cpu_ring *set);
void fxt_live_fg_drop(struct cpu_ring *set);
void fxt_live_fg_line(struct fxt_fgraph_cpus *s, struct fxt_tbuf *b, const struct entry *e,
                      uint32_t word, const struct fxtf_event *fe, uint32_t cpu);
/* Whether `trace` and `trace_pipe` print the function_graph layout now (current_tracer). */
bool fxt_live_fg_layout(void);
struct entry *fxt_live_ring_oldest(struct cpu_ring *r);
uint64_t fxt_live_count_taken(const struct entry *e);
void fxt_live_ring_pop(struct cpu_ring *r);
uint64_t fxt_live_mono_now(void);
/* The clock mapping of the view's events (live_set_clock). */
extern struct fxtf_provider fxt_live_clock;

/* ---- a CPU's ring made (live.c's live_init, live_ctl.c's new sizes and copies) ---- */

/* The ring's capacity for a buffer_size_kb of kb, and what the file reads back. */
static inline size_t fxt_live_capacity_of(uint64_t kb, uint32_t *read_back)
{
  uint64_t pages = (kb * 1024 + PAGE_DATA - 1) / PAGE_DATA;
  if (pages < 2)
    pages = 2;
  *read_back = (uint32_t)(pages * PAGE_DATA / 1024);
  return (size_t)pages * PAGE_DATA;
}

/* Storage bytes of a ring of `capacity` entry bytes (room for a wrap and a largest entry). */
static inline size_t fxt_live_ring_bytes(size_t capacity)
{
  return capacity + 2 * (sizeof(struct entry) + MAX_RECORD) + 64;
}

/* r, emptied, on buf of fxt_live_ring_bytes(capacity) bytes (its pages already written:
 * `warm`). */
static inline void fxt_live_ring_adopt(struct cpu_ring *r, unsigned char *buf, size_t capacity,
                                       bool warm)
{
  free(r->buf);
  memset(r, 0, sizeof(*r));
  r->buf = buf;
  r->size = fxt_live_ring_bytes(capacity);
  r->capacity = capacity;
  r->warmed = warm ? r->size : 0;
}

static inline int fxt_live_ring_alloc(struct cpu_ring *r, size_t capacity)
{
  unsigned char *buf = malloc(fxt_live_ring_bytes(capacity));
  if (!buf)
    return FXT_ENOMEM;
  fxt_live_ring_adopt(r, buf, capacity, false);
  return 0;
}

/* r with no entry (its count of popped entries kept). */
static inline void fxt_live_ring_empty(struct cpu_ring *r)
{
  r->head = r->tail = r->payload = 0;
  r->count = r->events = 0;
  r->raw_seq = r->popped; /* none to arrange */
}

#endif /* FXTRACE_HOST_LIVE_INT_H */
