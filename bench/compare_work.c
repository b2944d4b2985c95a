/* compare_work - one workload of bench/compare for one tracer. The same loops are built twice:
 * with -DCMP_GLUE='"compare_glue_fxt.h"' (fxtrace) and '"compare_glue_lttng.h"' (LTTng-UST).
 *
 *   compare_work-TRACER WORKLOAD N [BUFFER_KB]
 *
 *   disabled N        N fire sites of an event no session enables (no session running)
 *   two_u64 N         N events with two u64 fields, one thread
 *   two_u64_2t N      N events each on two threads started together (aggregate)
 *   str32 N           N events with a 32-byte string field
 *   scope N           N scoped durations (fxtrace: FXT_SCOPE; LTTng: scope_begin + scope_end)
 *   paced RATE SECS [BUFFER_KB]   RATE events/s of two_u64 for SECS seconds (RATE x SECS
 *                     events), the tracer's default buffers unless BUFFER_KB (fxtrace) says
 *                     otherwise; bursts of at most 64 events between clock reads
 *   filewrite N       (fxtrace) two_u64 in block mode: file bytes on /dev/shm per second
 *   report N          (fxtrace) two_u64, the file is kept (for `fxtrace report`)
 *   instr N [BUFFER_KB [rseq]]   for callgrind: cmp_loop_empty, cmp_loop_off, cmp_loop_two,
 *                     cmp_loop_str, cmp_loop_scope, N iterations each, one thread; "rseq"
 *                     makes fxtrace read the CPU from glibc's rseq area even where the kernel
 *                     did not register it (under valgrind: the cpu_id read is then a constant,
 *                     but the instructions are those of the rseq path)
 *
 * BUFFER_KB (fxtrace) is the per-thread buffer; 0 or absent = fxtrace's default (LTTng always
 * runs with the channel bench/compare gave it). With two threads, thread i is pinned to CPU i
 * (both tracers; their consumers are not).
 *
 * two_u64, two_u64_2t, str32 and scope run as users get them, with default buffers: in bursts
 * of BURST events that fit in either tracer's buffers, each after a pause of PAUSE_MS in which
 * the consumers drain (only the bursts are timed). A new thread's first burst is timed apart
 * (first_secs=: "first events of a new thread", where fxtrace takes and writes its buffer and
 * LTTng-UST registers the thread), then WARM_BURSTS untimed bursts go once around each tracer's
 * buffers (first writes of fresh memory), then N events in timed bursts.
 *
 * Prints name=value lines: secs= (the timed bursts: from the first thread's start to the last
 * thread's end, summed over the bursts), timed= (events or scopes in them), first_secs= and
 * first= (the first burst; with two threads, the slower one's), emitted= (all fired, warm-up
 * included), and for fxtrace what the file holds (landed=, event_bytes=, meta_drops=,
 * file_bytes=, clock=; see the glue). LTTng's landed count is taken by bench/compare from the
 * trace.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include CMP_GLUE

/* K_FLAT: two_u64 in one loop, no bursts (filewrite, report: the consumer is measured). */
enum kind { K_OFF, K_TWO, K_STR, K_SCOPE, K_PACED, K_FLAT };

/* Bursts: 20,000 two_u64 events are 0.96 MB in fxtrace's 4 MiB per thread and ~0.6 MB in
 * LTTng's 2 MiB per CPU (4 x 512 KiB); 20,000 scopes are 40,000 LTTng events. */
#define BURST 20000u
#define PAUSE_MS 10
#define WARM_BURSTS 3
#define MAX_ROUNDS 4096

struct worker {
  pthread_t th;
  enum kind kind;
  int cpu; /* pinned to this CPU, or -1 */
  uint64_t n;
  double rate;
  double first_secs;
  double t_start[MAX_ROUNDS], t_end[MAX_ROUNDS];
  uint64_t emitted;
};

static pthread_barrier_t barrier;
/* The timed bursts start together at a spinning barrier: a timed burst is 0.2-0.3 ms, and
 * threads leaving a pthread barrier (a futex wake) started 43-90 us apart on average on a
 * 2-vCPU KVM guest, which the burst's span (first start to last end) counted: two threads
 * that each ran as fast as one alone showed 1.6-1.75x of it. Each thread adds one per round
 * and waits (pause instructions) until all have: they are pinned to CPUs of their own. */
static atomic_uint spin_arrived;
static int spin_threads;
static const char str32[] = "0123456789abcdef0123456789abcdef"; /* 32 bytes and a NUL */

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pause_ms(long ms)
{
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* Round r's start (0, 1, ...): returns once every thread has arrived at it. */
static void spin_barrier(uint32_t r)
{
  unsigned want = (r + 1) * (unsigned)spin_threads;
  atomic_fetch_add_explicit(&spin_arrived, 1, memory_order_acq_rel);
  while (atomic_load_explicit(&spin_arrived, memory_order_acquire) < want)
    cpu_relax();
}

__attribute__((noinline)) void cmp_loop_empty(uint64_t n)
{
  for (uint64_t i = 0; i < n; i++)
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void cmp_loop_off(uint64_t n)
{
  for (uint64_t i = 0; i < n; i++) {
    CMP_OFF(i);
    __asm__ volatile("" ::: "memory");
  }
}

__attribute__((noinline)) void cmp_loop_two(uint64_t n)
{
  for (uint64_t i = 0; i < n; i++)
    CMP_TWO(i, i);
}

__attribute__((noinline)) void cmp_loop_str(uint64_t n)
{
  for (uint64_t i = 0; i < n; i++)
    CMP_STR(str32);
}

__attribute__((noinline)) void cmp_loop_scope(uint64_t n)
{
  for (uint64_t i = 0; i < n; i++) {
    CMP_SCOPE_BEGIN
    __asm__ volatile("" ::: "memory");
    CMP_SCOPE_END
  }
}

/* RATE events/s until n events: after each clock read, fire the events due (at most 64). */
__attribute__((noinline)) static void loop_paced(uint64_t n, double rate)
{
  double t0 = now_s();
  uint64_t i = 0;
  while (i < n) {
    uint64_t due = (uint64_t)((now_s() - t0) * rate);
    if (due > n)
      due = n;
    if (due <= i) {
      cpu_relax();
      continue;
    }
    uint64_t stop = due - i > 64 ? i + 64 : due;
    for (; i < stop; i++)
      CMP_TWO(i, i);
  }
}

static void burst(enum kind kind, uint64_t n)
{
  switch (kind) {
  case K_TWO:
    cmp_loop_two(n);
    break;
  case K_STR:
    cmp_loop_str(n);
    break;
  case K_SCOPE:
    cmp_loop_scope(n);
    break;
  default:
    break;
  }
}

static uint32_t rounds_of(uint64_t n)
{
  return (uint32_t)((n + BURST - 1) / BURST);
}

static void *body(void *arg)
{
  struct worker *w = arg;
  if (w->cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(w->cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  }
  if (w->kind == K_OFF || w->kind == K_PACED || w->kind == K_FLAT) {
    if (w->kind != K_OFF)
      CMP_WARM(0);
    pthread_barrier_wait(&barrier);
    w->t_start[0] = now_s();
    if (w->kind == K_OFF)
      cmp_loop_off(w->n);
    else if (w->kind == K_FLAT)
      cmp_loop_two(w->n);
    else
      loop_paced(w->n, w->rate);
    w->t_end[0] = now_s();
    w->emitted = w->n;
    return NULL;
  }
  /* A new thread's first events, then the warm-up, then the timed bursts. */
  pthread_barrier_wait(&barrier);
  double t0 = now_s();
  burst(w->kind, BURST);
  w->first_secs = now_s() - t0;
  for (int k = 0; k < WARM_BURSTS; k++) {
    pause_ms(PAUSE_MS);
    burst(w->kind, BURST);
  }
  uint64_t left = w->n;
  for (uint32_t r = 0; r < rounds_of(w->n); r++) {
    pause_ms(PAUSE_MS);
    spin_barrier(r);
    uint64_t b = left < BURST ? left : BURST;
    w->t_start[r] = now_s();
    burst(w->kind, b);
    w->t_end[r] = now_s();
    left -= b;
  }
  w->emitted = w->n + (1 + WARM_BURSTS) * (uint64_t)BURST;
  return NULL;
}

static void run(enum kind kind, int nthreads, uint64_t n, double rate)
{
  static struct worker w[2];
  bool flat = kind == K_OFF || kind == K_PACED || kind == K_FLAT;
  if (!flat && rounds_of(n) > MAX_ROUNDS) {
    fprintf(stderr, "compare: at most %u events a run\n", MAX_ROUNDS * BURST);
    exit(2);
  }
  pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
  atomic_store(&spin_arrived, 0);
  spin_threads = nthreads;
  /* Several threads: thread i on CPU i, so that a run of a few tens of ms measures the tracer
   * rather than how long the scheduler takes to spread the threads over the CPUs. */
  int pin = nthreads > 1 && sysconf(_SC_NPROCESSORS_ONLN) >= nthreads;
  for (int i = 0; i < nthreads; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].kind = kind;
    w[i].cpu = pin ? i : -1;
    w[i].n = n;
    w[i].rate = rate;
    if (pthread_create(&w[i].th, NULL, body, &w[i]) != 0) {
      fprintf(stderr, "compare: pthread_create failed\n");
      exit(1);
    }
  }
  uint64_t emitted = 0;
  double first = 0;
  for (int i = 0; i < nthreads; i++) {
    pthread_join(w[i].th, NULL);
    emitted += w[i].emitted;
    first = w[i].first_secs > first ? w[i].first_secs : first;
  }
  pthread_barrier_destroy(&barrier);
  uint32_t rounds = flat ? 1 : rounds_of(n);
  double secs = 0;
  for (uint32_t r = 0; r < rounds; r++) {
    double t0 = 1e300, t1 = 0;
    for (int i = 0; i < nthreads; i++) {
      t0 = w[i].t_start[r] < t0 ? w[i].t_start[r] : t0;
      t1 = w[i].t_end[r] > t1 ? w[i].t_end[r] : t1;
    }
    secs += t1 - t0;
  }
  printf("tracer=%s\nsecs=%.9f\ntimed=%llu\nemitted=%llu\n", CMP_TRACER, secs,
         (unsigned long long)(n * (uint64_t)nthreads), (unsigned long long)emitted);
  if (!flat)
    printf("first_secs=%.9f\nfirst=%u\n", first, BURST);
}

/* One session of the workloads that count what landed: `event` enabled with buffers of
 * buffer_kb (0: the default), run(), the session stopped, the events named `event` counted
 * (keep: the file kept and named, for `report`). */
static void traced_run(const char *event, uint32_t buffer_kb, enum kind kind, int nthreads,
                       uint64_t n, double rate, int keep)
{
  cmp_tracer_begin(event, buffer_kb, 0);
  run(kind, nthreads, n, rate);
  cmp_tracer_stop();
  cmp_tracer_count(event, keep);
}

static void usage(const char *argv0)
{
  fprintf(stderr,
          "usage: %s disabled|two_u64|two_u64_2t|str32|scope|filewrite|report|instr N "
          "[BUFFER_KB]\n       %s paced RATE SECS [BUFFER_KB]\n",
          argv0, argv0);
  exit(2);
}

int main(int argc, char **argv)
{
  if (argc < 3)
    usage(argv[0]);
  const char *wl = argv[1];
  uint64_t n = strtoull(argv[2], NULL, 10);
  uint32_t buffer_kb = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 0;
  if (n == 0)
    usage(argv[0]);
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (!strcmp(wl, "disabled")) {
    run(K_OFF, 1, n, 0); /* no session: nothing enables bench:off */
  } else if (!strcmp(wl, "two_u64") || !strcmp(wl, "two_u64_2t")) {
    traced_run("two", buffer_kb, K_TWO, wl[7] ? 2 : 1, n, 0, 0);
  } else if (!strcmp(wl, "str32")) {
    traced_run("str32", buffer_kb, K_STR, 1, n, 0, 0);
  } else if (!strcmp(wl, "scope")) {
    traced_run("scope", buffer_kb, K_SCOPE, 1, n, 0, 0);
  } else if (!strcmp(wl, "paced")) {
    if (argc < 4)
      usage(argv[0]);
    double rate = (double)n, secs = strtod(argv[3], NULL);
    traced_run("two", argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 10) : 0, K_PACED, 1,
               (uint64_t)(rate * secs), rate, 0);
  } else if (!strcmp(wl, "filewrite")) {
    /* The whole session, consumer's last pass and file close included. */
    double t0 = now_s();
    cmp_tracer_begin("two", buffer_kb, 1);
    run(K_FLAT, 1, n, 0);
    cmp_tracer_stop();
    printf("session_secs=%.9f\n", now_s() - t0);
    cmp_tracer_count("two", 0);
  } else if (!strcmp(wl, "report")) {
    traced_run("two", buffer_kb, K_FLAT, 1, n, 0, 1);
  } else if (!strcmp(wl, "instr")) {
    cmp_tracer_begin("two,bench:str32,bench:scope", buffer_kb, 0);
    if (argc > 4 && !strcmp(argv[4], "rseq"))
      cmp_force_rseq_path();
    CMP_WARM(0);
    cmp_loop_empty(n);
    cmp_loop_off(n);
    cmp_loop_two(n);
    cmp_loop_str(n);
    cmp_loop_scope(n);
    cmp_tracer_stop();
    cmp_tracer_count("two", 0);
  } else {
    usage(argv[0]);
  }
  return 0;
}
