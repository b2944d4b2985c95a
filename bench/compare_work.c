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
 * BUFFER_KB (fxtrace) is the per-thread buffer; 0 or absent = fxtrace's default. With two
 * threads, thread i is pinned to CPU i (both tracers; their consumers are not). Every thread
 * fires one `warm` event before its timed loop (fxtrace attaches and faults its buffer in;
 * LTTng-UST registers the thread with its RCU), then waits at a barrier.
 *
 * Prints name=value lines: secs= (from the first thread leaving the barrier to the last one
 * finishing its loop), emitted= (measured events or scopes fired), and for fxtrace what the
 * file holds (landed=, event_bytes=, meta_drops=, file_bytes=; see the glue). LTTng's landed
 * count is taken by bench/compare from the trace.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include CMP_GLUE

enum kind { K_OFF, K_TWO, K_STR, K_SCOPE, K_PACED };

struct worker {
  pthread_t th;
  enum kind kind;
  int cpu; /* pinned to this CPU, or -1 */
  uint64_t n;
  double rate;
  double t_start, t_end;
  uint64_t emitted;
};

static pthread_barrier_t barrier;
static const char str32[] = "0123456789abcdef0123456789abcdef"; /* 32 bytes and a NUL */

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
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

static void *body(void *arg)
{
  struct worker *w = arg;
  if (w->cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(w->cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  }
  if (w->kind != K_OFF)
    CMP_WARM(0);
  pthread_barrier_wait(&barrier);
  w->t_start = now_s();
  switch (w->kind) {
  case K_OFF:
    cmp_loop_off(w->n);
    break;
  case K_TWO:
    cmp_loop_two(w->n);
    break;
  case K_STR:
    cmp_loop_str(w->n);
    break;
  case K_SCOPE:
    cmp_loop_scope(w->n);
    break;
  case K_PACED:
    loop_paced(w->n, w->rate);
    break;
  }
  w->t_end = now_s();
  w->emitted = w->n;
  return NULL;
}

static double run(enum kind kind, int nthreads, uint64_t n, double rate)
{
  struct worker w[2];
  pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
  /* Several threads: thread i on CPU i, so that a run of a few tens of ms measures the tracer
   * rather than how long the scheduler takes to spread the threads over the CPUs. */
  int pin = nthreads > 1 && sysconf(_SC_NPROCESSORS_ONLN) >= nthreads;
  for (int i = 0; i < nthreads; i++) {
    w[i] = (struct worker){.kind = kind, .cpu = pin ? i : -1, .n = n, .rate = rate};
    if (pthread_create(&w[i].th, NULL, body, &w[i]) != 0) {
      fprintf(stderr, "compare: pthread_create failed\n");
      exit(1);
    }
  }
  double t0 = 1e300, t1 = 0;
  uint64_t emitted = 0;
  for (int i = 0; i < nthreads; i++) {
    pthread_join(w[i].th, NULL);
    t0 = w[i].t_start < t0 ? w[i].t_start : t0;
    t1 = w[i].t_end > t1 ? w[i].t_end : t1;
    emitted += w[i].emitted;
  }
  pthread_barrier_destroy(&barrier);
  printf("tracer=%s\nsecs=%.9f\nemitted=%llu\n", CMP_TRACER, t1 - t0,
         (unsigned long long)emitted);
  return t1 - t0;
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
    cmp_tracer_begin("two", buffer_kb, 0);
    run(K_TWO, wl[7] ? 2 : 1, n, 0);
    cmp_tracer_stop();
    cmp_tracer_count("two", 0);
  } else if (!strcmp(wl, "str32")) {
    cmp_tracer_begin("str32", buffer_kb, 0);
    run(K_STR, 1, n, 0);
    cmp_tracer_stop();
    cmp_tracer_count("str32", 0);
  } else if (!strcmp(wl, "scope")) {
    cmp_tracer_begin("scope", buffer_kb, 0);
    run(K_SCOPE, 1, n, 0);
    cmp_tracer_stop();
    cmp_tracer_count("scope", 0);
  } else if (!strcmp(wl, "paced")) {
    if (argc < 4)
      usage(argv[0]);
    double rate = (double)n, secs = strtod(argv[3], NULL);
    cmp_tracer_begin("two", argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 10) : 0, 0);
    run(K_PACED, 1, (uint64_t)(rate * secs), rate);
    cmp_tracer_stop();
    cmp_tracer_count("two", 0);
  } else if (!strcmp(wl, "filewrite")) {
    /* The whole session, consumer's last pass and file close included. */
    double t0 = now_s();
    cmp_tracer_begin("two", buffer_kb, 1);
    run(K_TWO, 1, n, 0);
    cmp_tracer_stop();
    printf("session_secs=%.9f\n", now_s() - t0);
    cmp_tracer_count("two", 0);
  } else if (!strcmp(wl, "report")) {
    cmp_tracer_begin("two", buffer_kb, 0);
    run(K_TWO, 1, n, 0);
    cmp_tracer_stop();
    cmp_tracer_count("two", 1);
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
