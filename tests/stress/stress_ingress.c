/* stress_ingress - producer threads (and signal handlers on them) push into one MPSC ingress;
 * one consumer pops; every push attempt is accounted for.
 *
 *   stress_ingress --mode plain|signal --producers P --slots N --records R [--payload B]
 *
 * R push attempts are made by the producer threads' own code (R / P each). Each attempt is a
 * record of a stream (producer, stream) with the next sequence number of that stream, a
 * length that follows from the sequence number (24 .. B bytes; about one in 53 is made longer
 * than B on purpose, to be refused as oversize), epoch and producer tag derived from it, and a
 * checksum over its bytes.
 *
 * signal: on top, a signaller thread sends SIGUSR1 to the producers in turn with pthread_kill,
 *   and an interval timer (setitimer) sends SIGALRM to the process, which only the producers
 *   accept. Each handler pushes 2 records of its own stream (1 for SIGUSR1, 2 for SIGALRM), so
 *   a handler interrupts its own thread's pushes at any point, and SIGALRM also interrupts the
 *   SIGUSR1 handler's pushes (two pushes suspended under a third).
 *
 * The consumer (main thread) pops in batches of 128 until the producers are done, then drains.
 * Checked: no bad checksum, length, epoch or tag; per stream, sequence numbers strictly
 * increase (FIFO), popped == pushes that returned 0, and popped + full + oversize == attempts
 * exactly, the gaps in the sequence being exactly the refused attempts; the ingress's own full
 * and oversize counters equal the sums over the streams (modulo 2^32); at the end nothing is
 * pending or in flight and every slot is free. Exit 0 only if every invariant held.
 */
#define _DEFAULT_SOURCE
#include <fxtrace/ingress.h>

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_PRODUCERS 64
#define STREAMS 3 /* 0: thread code, 1: SIGUSR1 handler, 2: SIGALRM handler */
#define HANDLER_PUSHES 2
#define BATCH 128
#define MAX_PAYLOAD 4096 /* records live on the (signal handler's) stack */

struct config {
  bool signals;
  uint32_t producers, slots, payload;
  uint64_t records;
};

/* Written only by its producer's thread code (stream 0) or its handlers (streams 1, 2); read
 * by main after pthread_join. */
struct producer {
  _Alignas(64) pthread_t thread;
  uint32_t index;
  uint64_t attempts[STREAMS], ok[STREAMS], full[STREAMS], oversize[STREAMS];
  volatile sig_atomic_t in_push[STREAMS]; /* inside fxt_ingress_push now */
  uint64_t hits[STREAMS][STREAMS]; /* hits[s][t]: runs of the handler of stream s that found
                                    * a push of stream t in progress on their thread (written
                                    * by that handler only) */
};

/* Written only by the consumer. */
struct stream_check {
  uint64_t next;   /* lowest sequence number the next record may carry */
  uint64_t popped;
  uint64_t gaps;   /* sequence numbers skipped */
};

static struct config cfg;
static struct fxt_ingress q;
static void *qstorage;
static struct producer prod[MAX_PRODUCERS];
static struct stream_check chk[MAX_PRODUCERS][STREAMS];
static _Thread_local struct producer *self; /* set by a producer thread; NULL elsewhere */

/* Handshakes: producers_done counts producers whose thread code finished (release by each,
 * acquire by main and the signaller); signals_off is set by main once no signal will be sent
 * any more (release; producers acquire it before blocking signals and returning). */
static atomic_uint producers_done;
static atomic_bool signals_off;
static atomic_bool start_flag;

static uint64_t mix(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

static uint64_t stream_key(uint32_t p, uint32_t s, uint64_t seq)
{
  return mix(seq ^ (uint64_t)p << 48 ^ (uint64_t)s << 56);
}

/* Length of the record: 24 .. payload, or payload + 1 .. payload + 7 (oversize). */
static uint32_t len_of(uint32_t p, uint32_t s, uint64_t seq)
{
  uint64_t k = stream_key(p, s, seq);
  if (k % 53 == 0)
    return cfg.payload + 1 + (uint32_t)(k >> 8) % 7;
  return 24 + (uint32_t)((k >> 16) % (cfg.payload - 24 + 1));
}

static uint32_t epoch_of(uint64_t seq)
{
  return (uint32_t)(seq * 2654435761u) ^ (uint32_t)(seq >> 32);
}
static uint32_t tag_of(uint32_t p, uint32_t s) { return p | s << 16 | 0x5a000000u; }

static uint64_t checksum(const unsigned char *b, uint32_t n)
{
  uint64_t c = 0x9e3779b97f4a7c15ull;
  for (uint32_t i = 0; i < n; i += 8) {
    uint64_t w = 0;
    memcpy(&w, b + i, n - i < 8 ? n - i : 8);
    c = mix(c ^ w ^ i);
  }
  return c;
}

/* Record: producer (4), stream (4), seq (8), body bytes, checksum of all before it (8). */
static void make_record(unsigned char *b, uint32_t p, uint32_t s, uint64_t seq, uint32_t len)
{
  memcpy(b, &p, 4);
  memcpy(b + 4, &s, 4);
  memcpy(b + 8, &seq, 8);
  uint64_t k = stream_key(p, s, seq);
  for (uint32_t i = 16; i < len - 8; i++)
    b[i] = (unsigned char)(k >> (i % 8 * 8)) ^ (unsigned char)i;
  uint64_t c = checksum(b, len - 8);
  memcpy(b + len - 8, &c, 8);
}

static void die_async(const char *msg)
{
  ssize_t r = write(2, msg, strlen(msg));
  (void)r;
  _exit(1);
}

/* One push attempt of stream s of producer pr (async-signal-safe). */
static int attempt(struct producer *pr, uint32_t s)
{
  unsigned char b[MAX_PAYLOAD + 16];
  uint64_t seq = pr->attempts[s]++;
  uint32_t len = len_of(pr->index, s, seq);
  if (len <= cfg.payload)
    make_record(b, pr->index, s, seq, len);
  pr->in_push[s] = 1;
  int rc = fxt_ingress_push(&q, b, len, epoch_of(seq), tag_of(pr->index, s));
  pr->in_push[s] = 0;
  if (rc == 0)
    pr->ok[s]++;
  else if (rc == FXT_ENOSPC)
    pr->full[s]++;
  else if (rc == FXT_EMSGSIZE && len > cfg.payload)
    pr->oversize[s]++;
  else
    die_async("FAIL: unexpected push result\n");
  if ((rc == FXT_EMSGSIZE) != (len > cfg.payload))
    die_async("FAIL: oversize mismatch\n");
  return rc;
}

static void on_signal(int sig)
{
  struct producer *pr = self;
  if (pr == NULL)
    return; /* not a producer thread (cannot happen: they block both signals) */
  uint32_t s = sig == SIGUSR1 ? 1 : 2;
  for (uint32_t t = 0; t < s; t++)
    pr->hits[s][t] += pr->in_push[t] != 0;
  for (int i = 0; i < HANDLER_PUSHES; i++)
    (void)attempt(pr, s);
}

static void *producer_main(void *arg)
{
  struct producer *pr = arg;
  self = pr;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGALRM);
  pthread_sigmask(SIG_UNBLOCK, &set, NULL);
  while (!atomic_load_explicit(&start_flag, memory_order_acquire))
    sched_yield();
  uint64_t n = cfg.records / cfg.producers + (pr->index < cfg.records % cfg.producers);
  for (uint64_t i = 0; i < n; i++)
    if (attempt(pr, 0) == FXT_ENOSPC)
      sched_yield(); /* full is counted; give the consumer a chance before the next one */
  atomic_fetch_add_explicit(&producers_done, 1, memory_order_release);
  /* pthread_kill needs this thread alive until the signaller has stopped. */
  while (!atomic_load_explicit(&signals_off, memory_order_acquire))
    sched_yield();
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  return NULL;
}

static uint64_t signals_sent;

static void *signaller_main(void *arg)
{
  (void)arg;
  uint32_t i = 0;
  while (atomic_load_explicit(&producers_done, memory_order_acquire) < cfg.producers) {
    pthread_kill(prod[i].thread, SIGUSR1);
    signals_sent++;
    i = (i + 1) % cfg.producers;
    if (i == 0)
      sched_yield(); /* let the producers run between rounds */
  }
  return NULL;
}

static void fail(const char *what, uint32_t p, uint32_t s, uint64_t seq)
{
  fprintf(stderr, "FAIL: %s (producer %u stream %u seq %" PRIu64 ")\n", what, p, s, seq);
  exit(1);
}

static void check_record(void *ctx, const void *rec, uint32_t len, uint32_t epoch, uint32_t tag)
{
  const unsigned char *b = rec;
  uint32_t p, s;
  uint64_t seq, c;
  (void)ctx;
  if (len < 24 || len > cfg.payload)
    fail("bad length", 0, 0, len);
  memcpy(&p, b, 4);
  memcpy(&s, b + 4, 4);
  memcpy(&seq, b + 8, 8);
  memcpy(&c, b + len - 8, 8);
  if (p >= cfg.producers || s >= STREAMS)
    fail("bad producer or stream", p, s, seq);
  if (c != checksum(b, len - 8))
    fail("bad checksum", p, s, seq);
  if (len != len_of(p, s, seq))
    fail("length does not match the sequence number", p, s, seq);
  if (epoch != epoch_of(seq) || tag != tag_of(p, s))
    fail("epoch or tag not carried", p, s, seq);
  struct stream_check *k = &chk[p][s];
  if (seq < k->next)
    fail("sequence went backwards or repeated", p, s, seq);
  k->gaps += seq - k->next;
  k->next = seq + 1;
  k->popped++;
}

int main(int argc, char **argv)
{
  cfg.producers = 4;
  cfg.slots = 1024;
  cfg.payload = 256;
  cfg.records = 2000000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--mode") && (!strcmp(argv[i + 1], "plain") ||
                                       !strcmp(argv[i + 1], "signal")))
      cfg.signals = !strcmp(argv[i + 1], "signal");
    else if (!strcmp(argv[i], "--producers"))
      cfg.producers = (uint32_t)strtoul(argv[i + 1], NULL, 0);
    else if (!strcmp(argv[i], "--slots"))
      cfg.slots = (uint32_t)strtoul(argv[i + 1], NULL, 0);
    else if (!strcmp(argv[i], "--payload"))
      cfg.payload = (uint32_t)strtoul(argv[i + 1], NULL, 0);
    else if (!strcmp(argv[i], "--records"))
      cfg.records = strtoull(argv[i + 1], NULL, 0);
    else {
      fprintf(stderr,
              "usage: %s --mode plain|signal --producers P --slots N --records R"
              " [--payload B]\n", argv[0]);
      return 2;
    }
  }
  if (argc % 2 == 0 || cfg.producers == 0 || cfg.producers > MAX_PRODUCERS ||
      cfg.payload < 24 || cfg.payload > MAX_PAYLOAD) {
    fprintf(stderr, "FAIL: bad arguments\n");
    return 2;
  }
  size_t bytes = FXT_INGRESS_STORAGE_SIZE(cfg.slots, cfg.payload);
  qstorage = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
  if (!qstorage || fxt_ingress_init(&q, qstorage, bytes, cfg.payload) != 0) {
    fprintf(stderr, "FAIL: cannot set up an ingress of %u slots of %u bytes\n", cfg.slots,
            cfg.payload);
    return 1;
  }

  /* Every thread starts with both signals blocked; producers unblock them. */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGALRM);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask); /* SIGALRM may interrupt the SIGUSR1 handler and vice versa */
  sigaction(SIGUSR1, &sa, NULL);
  sigaction(SIGALRM, &sa, NULL);

  for (uint32_t i = 0; i < cfg.producers; i++) {
    prod[i].index = i;
    if (pthread_create(&prod[i].thread, NULL, producer_main, &prod[i]) != 0) {
      fprintf(stderr, "FAIL: pthread_create\n");
      return 1;
    }
  }
  pthread_t signaller;
  struct itimerval tick = {{0, 50}, {0, 50}}, off = {{0, 0}, {0, 0}};
  if (cfg.signals) {
    pthread_create(&signaller, NULL, signaller_main, NULL);
    setitimer(ITIMER_REAL, &tick, NULL);
  }

  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  atomic_store_explicit(&start_flag, true, memory_order_release);
  uint64_t batches = 0, full_batches = 0;
  while (atomic_load_explicit(&producers_done, memory_order_acquire) < cfg.producers) {
    uint32_t n = fxt_ingress_pop_batch(&q, check_record, NULL, BATCH);
    batches++;
    full_batches += n == BATCH;
    if (n == 0)
      sched_yield();
  }
  if (cfg.signals) {
    setitimer(ITIMER_REAL, &off, NULL);
    pthread_join(signaller, NULL);
  }
  atomic_store_explicit(&signals_off, true, memory_order_release);
  for (uint32_t i = 0; i < cfg.producers; i++)
    pthread_join(prod[i].thread, NULL);
  /* Every push has returned: everything that got in is published. */
  while (fxt_ingress_pop_batch(&q, check_record, NULL, BATCH) != 0)
    batches++;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

  uint64_t attempts = 0, popped = 0, full = 0, oversize = 0, handler_attempts = 0;
  uint64_t interrupted_thread = 0, interrupted_handler = 0;
  for (uint32_t p = 0; p < cfg.producers; p++) {
    for (uint32_t s = 0; s < STREAMS; s++) {
      struct producer *pr = &prod[p];
      struct stream_check *k = &chk[p][s];
      k->gaps += pr->attempts[s] - k->next; /* refused attempts after the last popped one */
      if (k->popped != pr->ok[s])
        fail("popped != pushes that returned 0", p, s, k->popped);
      if (k->popped + pr->full[s] + pr->oversize[s] != pr->attempts[s])
        fail("popped + full + oversize != attempts", p, s, pr->attempts[s]);
      if (k->gaps != pr->full[s] + pr->oversize[s])
        fail("gaps in the sequence != refused attempts", p, s, k->gaps);
      attempts += pr->attempts[s];
      popped += k->popped;
      full += pr->full[s];
      oversize += pr->oversize[s];
      if (s != 0)
        handler_attempts += pr->attempts[s];
      interrupted_thread += pr->hits[s][0];
      interrupted_handler += pr->hits[s][1];
    }
  }
  struct fxt_ingress_stats st;
  fxt_ingress_stats(&q, &st);
  printf("%s producers=%u slots=%u payload=%u attempts=%" PRIu64 " (in handlers %" PRIu64
         ") popped=%" PRIu64 " full=%" PRIu64 " oversize=%" PRIu64 " signals_sent=%" PRIu64
         " handlers_in_a_push=%" PRIu64 "+%" PRIu64 " batches=%" PRIu64 " full_batches=%" PRIu64
         " seconds=%.2f pushes/s=%.0f\n",
         cfg.signals ? "signal" : "plain", cfg.producers, cfg.slots, cfg.payload, attempts,
         handler_attempts, popped, full, oversize, signals_sent, interrupted_thread,
         interrupted_handler, batches, full_batches, secs, (double)attempts / secs);
  if (st.full != (uint32_t)full || st.oversize != (uint32_t)oversize)
    fail("the ingress counters differ from the refused attempts", 0, 0, st.full);
  if (st.popped != (uint32_t)popped)
    fail("the ingress popped counter differs", 0, 0, st.popped);
  if (st.pending != 0 || st.in_flight != 0 || st.free != cfg.slots)
    fail("records or slots left over at the end", 0, 0, st.free);
  if (popped == 0 || oversize == 0)
    fail("nothing popped, or no oversize attempt made", 0, 0, 0);
  if (cfg.signals && handler_attempts == 0)
    fail("no push was made from a signal handler", 0, 0, 0);
  free(qstorage);
  return 0;
}
