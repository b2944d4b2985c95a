/* demo - a multi-threaded compression pipeline, instrumented with fxtrace.
 *
 *   demo [--duration SECONDS] [--workers N] [--seed N]
 *
 * A producer thread generates blocks of synthetic log records; N worker threads checksum each
 * block, count its words and run-length pack it, verifying that the packed form unpacks to the
 * original; a sink thread puts the blocks back in order, unpacks them again and checks every
 * result against what the producer recorded. Bounded queues connect the stages. After the
 * duration (or on SIGINT/SIGTERM) the producer stops, the pipeline drains and one summary line
 * is printed; the exit status is 0 only if every check passed.
 *
 * The program never starts a tracing session itself: run it with FXTRACE set, e.g.
 *
 *   FXTRACE='events=demo:*,printk:*;output=/tmp/demo-%p.fxt' ./demo --duration 1
 *
 * and open the file in Perfetto UI (stages.c says what each thread's track shows).
 */
#define _GNU_SOURCE
#include "demo.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define QUEUE_DEPTH 8 /* per queue: enough to ride out jitter, small enough to show back-pressure */
#define MAX_WORKERS 64

struct options {
  double duration_s;
  uint32_t workers;
  uint64_t seed;
};

static void usage(FILE *f)
{
  fprintf(f,
          "usage: demo [--duration SECONDS] [--workers N] [--seed N]\n"
          "\n"
          "Runs a producer -> workers -> sink compression pipeline and checks every block.\n"
          "\n"
          "  --duration SECONDS  how long the producer runs (default 3; fractions allowed)\n"
          "  --workers N         worker threads, 1..%d (default 3)\n"
          "  --seed N            seed of the generated data (default 1)\n"
          "  --help              this text\n"
          "\n"
          "Tracing is off unless FXTRACE is set, e.g.\n"
          "  FXTRACE='events=demo:*,printk:*;output=demo-%%p.fxt' demo --duration 1\n",
          MAX_WORKERS);
}

/* Returns 0, 1 after --help, or -1 after a usage error (reported). */
static int parse_options(int argc, char **argv, struct options *o)
{
  static const struct option longopts[] = {{"duration", required_argument, NULL, 'd'},
                                            {"workers", required_argument, NULL, 'w'},
                                            {"seed", required_argument, NULL, 's'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
  *o = (struct options){.duration_s = 3, .workers = 3, .seed = 1};
  int c;
  while ((c = getopt_long(argc, argv, "d:w:s:h", longopts, NULL)) != -1) {
    char *end;
    errno = 0;
    switch (c) {
    case 'd':
      o->duration_s = strtod(optarg, &end);
      /* The comparison also rejects NaN and infinities. */
      if (errno || end == optarg || *end || !(o->duration_s > 0 && o->duration_s <= 86400)) {
        fprintf(stderr, "demo: --duration wants seconds in (0, 86400], not '%s'\n", optarg);
        return -1;
      }
      break;
    case 'w': {
      unsigned long n = strtoul(optarg, &end, 10);
      if (errno || end == optarg || *end || n < 1 || n > MAX_WORKERS) {
        fprintf(stderr, "demo: --workers wants 1..%d, not '%s'\n", MAX_WORKERS, optarg);
        return -1;
      }
      o->workers = (uint32_t)n;
      break;
    }
    case 's':
      o->seed = strtoull(optarg, &end, 0);
      if (errno || end == optarg || *end) {
        fprintf(stderr, "demo: --seed wants a number, not '%s'\n", optarg);
        return -1;
      }
      break;
    case 'h':
      usage(stdout);
      return 1;
    default:
      usage(stderr);
      return -1;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "demo: unexpected argument '%s'\n", argv[optind]);
    return -1;
  }
  return 0;
}

/* Waits for the duration or for SIGINT/SIGTERM (blocked in every thread, so only this
 * sigtimedwait sees them). Returns what ended the wait. */
static const char *wait_run(const sigset_t *stop_signals, double seconds)
{
  uint64_t deadline = now_ns() + (uint64_t)(seconds * 1e9);
  for (;;) {
    uint64_t now = now_ns();
    if (now >= deadline)
      return "duration";
    uint64_t left = deadline - now;
    struct timespec ts = {.tv_sec = (time_t)(left / 1000000000u),
                          .tv_nsec = (long)(left % 1000000000u)};
    int sig = sigtimedwait(stop_signals, NULL, &ts);
    if (sig == SIGINT)
      return "SIGINT";
    if (sig == SIGTERM)
      return "SIGTERM";
    /* -1: EAGAIN (timed out: the loop sees the deadline) or EINTR (retry). */
  }
}

static int start_thread(pthread_t *t, void *(*fn)(void *), void *arg, const char *what)
{
  int rc = pthread_create(t, NULL, fn, arg);
  if (rc != 0)
    fprintf(stderr, "demo: cannot start the %s thread: %s\n", what, strerror(rc));
  return rc;
}

int main(int argc, char **argv)
{
  struct options opt;
  int rc = parse_options(argc, argv, &opt);
  if (rc != 0)
    return rc > 0 ? 0 : 2;

  work_init();
  struct pipeline p = {.seed = opt.seed};
  atomic_init(&p.stop, false);
  p.workers = calloc(opt.workers, sizeof(*p.workers));
  if (!p.workers || queue_init(&p.work, QUEUE_WORK, QUEUE_DEPTH) != 0 ||
      queue_init(&p.results, QUEUE_RESULT, QUEUE_DEPTH) != 0) {
    fprintf(stderr, "demo: out of memory\n");
    return 1;
  }

  /* Threads inherit the mask: the signals wait for wait_run() instead of killing the process
   * (which would also lose the trace, written at exit). */
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);

  FXT_INSTANT("demo", "start", FXT_U32("workers", opt.workers),
              FXT_F64("duration_s", opt.duration_s), FXT_U64("seed", opt.seed));
  FXT_PRINTK("demo: %u workers, %.2f s, seed %llu", opt.workers, opt.duration_s,
             (unsigned long long)opt.seed);
  uint64_t t0 = now_ns();

  /* Start the pipeline back to front so every stage finds its consumer running. */
  pthread_t producer, sink;
  uint32_t started = 0;
  if (start_thread(&sink, sink_main, &p, "sink") != 0)
    return 1;
  for (; started < opt.workers; started++) {
    struct worker *w = &p.workers[started];
    w->p = &p;
    w->id = started;
    if (start_thread(&w->thread, worker_main, w, "worker") != 0)
      break;
  }
  bool producing = started == opt.workers &&
                   start_thread(&producer, producer_main, &p, "producer") == 0;

  const char *reason = "startup failure";
  if (producing) {
    FXT_BEGIN("demo", "run");
    reason = wait_run(&stop_signals, opt.duration_s);
    FXT_END("demo", "run");
  }
  FXT_INSTANT("demo", "stop", FXT_STR("reason", reason));

  /* Drain: the producer closes the work queue when it stops; the result queue is closed once
   * no worker can push any more, and the sink then commits what remains. */
  FXT_BEGIN("demo", "drain");
  atomic_store_explicit(&p.stop, true, memory_order_relaxed);
  if (producing)
    pthread_join(producer, NULL);
  else
    queue_close(&p.work);
  for (uint32_t i = 0; i < started; i++)
    pthread_join(p.workers[i].thread, NULL);
  queue_close(&p.results);
  pthread_join(sink, NULL);
  FXT_END("demo", "drain");
  double elapsed = (double)(now_ns() - t0) / 1e9;

  /* End-to-end accounting on top of the sink's per-block checks. */
  p.checks_run++;
  p.checks_passed += p.committed == p.produced && p.committed_bytes == p.produced_bytes;
  uint64_t busy_ns = 0, slow = 0;
  for (uint32_t i = 0; i < started; i++) {
    busy_ns += p.workers[i].busy_ns;
    slow += p.workers[i].slow_blocks;
  }
  bool ok = producing && p.checks_passed == p.checks_run && p.blocks_failed == 0;

  FXT_PRINTK("demo done: %llu blocks, %llu bytes, %llu/%llu checks passed",
             (unsigned long long)p.committed, (unsigned long long)p.committed_bytes,
             (unsigned long long)p.checks_passed, (unsigned long long)p.checks_run);
  double pct = 100.0 / elapsed / 1e9; /* nanoseconds -> percent of the run */
  printf("demo: %s after %.2f s (%s): %llu blocks, %.1f MiB (%.1f MiB/s), packed to %.1f%%, "
         "%llu/%llu checks passed; %u workers %.0f%% busy, producer blocked %.0f%%, "
         "sink idle %.0f%%, %llu slow blocks\n",
         ok ? "ok" : "FAILED", elapsed, reason, (unsigned long long)p.committed,
         (double)p.committed_bytes / (1 << 20), (double)p.committed_bytes / (1 << 20) / elapsed,
         p.committed_bytes ? 100.0 * (double)p.packed_bytes / (double)p.committed_bytes : 0.0,
         (unsigned long long)p.checks_passed, (unsigned long long)p.checks_run, started,
         started ? (double)busy_ns * pct / started : 0.0, (double)p.work.push_wait_ns * pct,
         (double)p.results.pop_wait_ns * pct, (unsigned long long)slow);

  queue_destroy(&p.results);
  queue_destroy(&p.work);
  free(p.workers);
  return ok ? 0 : 1;
}
