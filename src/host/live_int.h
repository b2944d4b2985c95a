/* live_int.h - what live.c (the view's rings, fed by the consumer) and live_read.c (the
 * view read: `trace` a chunk at a time, `trace_pipe`, the per-CPU stats, formatting) share:
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
   * ever taken off the front and put at the back, since the last fxt_live.gen change. */
  uint64_t popped, pushed_records;
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
struct entry *fxt_live_ring_oldest(struct cpu_ring *r);
uint64_t fxt_live_count_taken(const struct entry *e);
void fxt_live_ring_pop(struct cpu_ring *r);
uint64_t fxt_live_mono_now(void);
/* The clock mapping of the view's events (live_set_clock). */
extern struct fxtf_provider fxt_live_clock;

#endif /* FXTRACE_HOST_LIVE_INT_H */
