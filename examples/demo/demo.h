/* demo.h - the pieces of the demo pipeline: blocks, the bounded queue, the work functions and
 * the three stages.
 *
 *   producer --work queue--> worker-0..N-1 --result queue--> sink
 *
 * One struct block travels the whole way; each stage fills its own part of it, and the queue
 * hand-off (a mutex) is what publishes those fields to the next stage.
 */
#ifndef DEMO_H
#define DEMO_H

#include <fxtrace/fxtrace.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- data -------------------------------------------------------------------------------- */

#define BLOCK_MIN_BYTES (32u * 1024u)
#define BLOCK_MAX_BYTES (128u * 1024u)

/* Trace ids of the two queues (the counter id of their "queue_depth" track). */
enum { QUEUE_WORK = 1, QUEUE_RESULT = 2 };

struct block {
  /* Set by the producer. Sequence numbers start at 1; they double as the block's async and
   * flow ids in the trace. */
  uint64_t seq;
  uint64_t born_ns;    /* CLOCK_MONOTONIC when produced: end-to-end latency at the sink */
  uint32_t words;      /* words the producer wrote */
  uint32_t len;        /* bytes of data */
  unsigned char *data; /* freed by the worker once the packed form is verified */

  /* Set by the worker. */
  uint32_t worker;        /* which one: named when a check fails */
  uint32_t crc;           /* CRC-32 of the original data: the packed block's trailer */
  uint32_t counted_words; /* words the worker counted */
  bool roundtrip_ok;      /* unpack(pack(data)) == data */
  uint32_t packed_len;
  unsigned char *packed; /* PackBits run-length encoding of data; freed by the sink */
};

void block_free(struct block *b);

/* ---- bounded blocking queue (queue.c) ------------------------------------------------------
 * Any number of threads may push and pop concurrently. Every function but init/destroy is
 * thread-safe; destroy only after every user is done. */

struct queue {
  pthread_mutex_t lock;
  pthread_cond_t not_empty;
  pthread_cond_t not_full;
  void **items; /* ring of cap slots, items[head] is the oldest */
  uint32_t cap;
  uint32_t head;
  uint32_t count;
  bool closed;
  uint32_t id; /* QUEUE_* */
  /* Statistics, under lock. */
  uint64_t push_wait_ns; /* time pushers spent blocked on a full queue */
  uint64_t pop_wait_ns;  /* time poppers spent blocked on an empty queue */
};

/* Returns 0 or -ENOMEM. */
int queue_init(struct queue *q, uint32_t id, uint32_t capacity);
void queue_destroy(struct queue *q);
/* Blocks while the queue is full. Returns false (item not queued) once the queue is closed. */
bool queue_push(struct queue *q, void *item);
/* Blocks while the queue is empty and open. Returns NULL once it is closed and drained. */
void *queue_pop(struct queue *q);
/* Wakes every waiter; later pushes fail, pops drain what is left. */
void queue_close(struct queue *q);

/* ---- work functions (work.c): thread-safe once work_init() has run ----------------------- */

struct rng {
  uint64_t s;
};

void work_init(void);
uint64_t rng_next(struct rng *r);
uint32_t rng_below(struct rng *r, uint32_t n);
uint64_t now_ns(void); /* CLOCK_MONOTONIC */

/* Fills buf[0..len) with fixed-width, space-padded log records numbered from *record on
 * (advanced past them) and returns the number of words written (whitespace-separated). */
uint32_t gen_records(struct rng *r, uint64_t *record, unsigned char *buf, uint32_t len);
uint32_t count_words(const unsigned char *buf, uint32_t len);
uint32_t crc32_ieee(const unsigned char *buf, uint32_t len);

/* PackBits: a control byte c < 128 copies the next c + 1 bytes, c > 128 repeats the next byte
 * 257 - c times. rle_bound(n) is the worst-case packed size. */
uint32_t rle_bound(uint32_t n);
uint32_t rle_pack(const unsigned char *src, uint32_t n, unsigned char *dst);
/* Returns the unpacked size, or -1 for a malformed stream or one that exceeds cap. */
int64_t rle_unpack(const unsigned char *src, uint32_t n, unsigned char *dst, uint32_t cap);

/* The byte distribution of buf: its Shannon entropy in bits per byte (0..8) and the number of
 * different byte values. A full histogram pass: only for diagnostics. */
void byte_stats(const unsigned char *buf, uint32_t len, double *entropy, uint32_t *distinct);

/* ---- stages (stages.c) ------------------------------------------------------------------ */

struct worker {
  struct pipeline *p;
  pthread_t thread;
  uint32_t id;
  /* Written by the worker thread, read by main after joining it. */
  uint64_t blocks;
  uint64_t busy_ns;
  uint64_t slow_blocks;
};

struct pipeline {
  struct queue work;    /* struct block *: producer -> workers */
  struct queue results; /* struct block *: workers -> sink */
  atomic_bool stop;     /* main -> producer: finish the current block and close the queue */
  uint64_t seed;
  struct worker *workers; /* one per worker thread */

  /* Written by the producer thread, read by main after joining it. */
  uint64_t produced;
  uint64_t produced_bytes;

  /* Written by the sink thread, read by main after joining it. */
  uint64_t committed;
  uint64_t committed_bytes;
  uint64_t packed_bytes;
  uint64_t checks_run;
  uint64_t checks_passed;
  uint64_t blocks_failed; /* blocks with at least one failed check */
};

void *producer_main(void *arg); /* arg: struct pipeline * */
void *worker_main(void *arg);   /* arg: struct worker * */
void *sink_main(void *arg);     /* arg: struct pipeline * */

#endif /* DEMO_H */
