/* clock_setup.c - the trace clock chosen at a session's start: the CPU counter checked (in
 * order across the CPUs, its rate calibrated) once per process, the emit path's offsets set.
 * Runs at a session's start only: compiled for size (CMakeLists.txt, FXT_COLD_SOURCES). The
 * design is at the top of clock.c. */
#define _GNU_SOURCE
#include <fxtrace/detail/emit.h>
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "../base/namefix.h"
#include "clock.h"

static ptrdiff_t tls_offset(const void *p)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__aarch64__))
  return (const char *)p - (const char *)__builtin_thread_pointer();
#else
  (void)p;
  return 0; /* no fast path here (fxt_fast_begin) */
#endif
}

static void kernel_clocksource(char *buf, size_t size)
{
  if (!fxt_read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", buf,
                     size))
    snprintf(buf, size, "unknown");
}

/* ---- the counter ----------------------------------------------------------------------- */

#if defined(__x86_64__) || defined(__i386__)
#define HAVE_COUNTER 1
#define COUNTER_NAME "tsc"
/* A read that neither earlier loads nor later instructions pass (the order check needs it). */
static uint64_t counter_fenced(void)
{
  _mm_lfence();
  uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}

static bool counter_invariant(char *why, size_t size)
{
  unsigned a, b, c, d;
  if (__get_cpuid(0x80000000u, &a, &b, &c, &d) == 0 || a < 0x80000007u ||
      __get_cpuid(0x80000007u, &a, &b, &c, &d) == 0 || !(d & (1u << 8))) {
    snprintf(why, size, "the TSC is not invariant (CPUID 80000007h EDX bit 8 clear)");
    return false;
  }
  return true;
}
#elif defined(__aarch64__)
#define HAVE_COUNTER 1
#define COUNTER_NAME "cntvct"
static uint64_t counter_fenced(void)
{
  uint64_t t;
  __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(t)::"memory");
  return t;
}

static bool counter_invariant(char *why, size_t size)
{
  (void)why, (void)size;
  return true; /* the generic timer's virtual count is synchronized by the architecture */
}
#else
#define HAVE_COUNTER 0
#define COUNTER_NAME "none"
#endif

#if HAVE_COUNTER
/* One (counter, monotonic ns) pair read as close together as possible. */
static void counter_pair(uint64_t *ticks, uint64_t *ns)
{
  uint64_t best = UINT64_MAX;
  *ticks = *ns = 0;
  for (int i = 0; i < 5; i++) {
    uint64_t a = counter_fenced(), n = fxt_clock_mono_ns(), b = counter_fenced();
    if (b - a < best) {
      best = b - a;
      *ticks = a + (b - a) / 2;
      *ns = n;
    }
  }
}

/* ---- the order check: two threads on two CPUs take turns reading the counter ------------
 * Turn by turn, the thread whose turn it is reads the counter (fenced: after it saw the turn
 * pass to it) and compares with the other thread's reading, which happened before the other
 * passed the turn. Counters in step never go back from one turn to the next; counters out of
 * step do, in one direction or the other. */
/* A pair takes ORDER_ROUNDS turns, or stops at ORDER_SOFT_NS with ORDER_MIN_ROUNDS done (a busy
 * machine, where a turn waits for the other thread's CPU); at ORDER_HARD_NS it gives up. */
enum {
  ORDER_ROUNDS = 400,
  ORDER_MIN_ROUNDS = 16,
  ORDER_SOFT_NS = 20000000,  /* 20 ms */
  ORDER_HARD_NS = 500000000, /* 500 ms */
};

struct order_pair {
  /* turn: whose turn (0 or 1), or 2 when one thread gave up. Written by the thread whose turn
   * it is (release: its stamp is written before), read by both (acquire: the stamp is read
   * after). */
  _Alignas(64) FXT_ATOMIC(uint32_t) turn;
  uint64_t stamp;    /* the last reading; written and read only by the thread whose turn it is */
  uint32_t rounds;   /* turns taken; likewise */
  int64_t worst;     /* the largest step back seen (0: none); likewise */
  uint32_t worst_to; /* the thread (0, 1) that saw it */
  uint64_t start_ns;
  int cpu[2];
  int pinned[2]; /* written by each thread before its first turn, read after the join */
};

struct order_arg {
  struct order_pair *p;
  uint32_t me;
};

/* For the test that the check catches counters out of step: ticks added to every reading of
 * the second thread of each pair (FXTRACE_CLOCK_TEST_SKEW, negative: behind). */
static int64_t test_skew;

static void *order_thread(void *arg)
{
  struct order_arg *a = arg;
  struct order_pair *p = a->p;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(p->cpu[a->me], &set);
  p->pinned[a->me] = pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
  for (;;) {
    uint32_t spins = 0, turn;
    while ((turn = atomic_load_explicit(&p->turn, memory_order_acquire)) != a->me) {
      if (turn == 2)
        return NULL;
      if (++spins % 1024 == 0 && fxt_clock_mono_ns() - p->start_ns > ORDER_HARD_NS) {
        atomic_store_explicit(&p->turn, 2, memory_order_relaxed);
        return NULL;
      }
    }
    uint64_t now = counter_fenced() + (a->me ? (uint64_t)test_skew : 0);
    if (p->rounds > 0 && (int64_t)(p->stamp - now) > p->worst) {
      p->worst = (int64_t)(p->stamp - now);
      p->worst_to = a->me;
    }
    p->stamp = now;
    if (++p->rounds >= ORDER_ROUNDS ||
        (p->rounds >= ORDER_MIN_ROUNDS && p->rounds % 8 == 0 &&
         fxt_clock_mono_ns() - p->start_ns > ORDER_SOFT_NS)) {
      atomic_store_explicit(&p->turn, 2, memory_order_release);
      return NULL;
    }
    atomic_store_explicit(&p->turn, 1 - a->me, memory_order_release);
  }
}

/* Checks the counter of CPU `other` against that of CPU `first`: 0, or -1 with why. */
static int order_check_pair(int first, int other, char *why, size_t size)
{
  struct order_pair p = {.cpu = {first, other}, .start_ns = fxt_clock_mono_ns()};
  atomic_init(&p.turn, 0);
  struct order_arg args[2] = {{&p, 0}, {&p, 1}};
  pthread_t th[2];
  int made = 0;
  for (; made < 2; made++)
    if (pthread_create(&th[made], NULL, order_thread, &args[made]) != 0)
      break;
  if (made < 2)
    atomic_store_explicit(&p.turn, 2, memory_order_relaxed);
  for (int k = 0; k < made; k++)
    pthread_join(th[k], NULL);
  if (made < 2) {
    snprintf(why, size, "could not start the threads that check the %s across CPUs",
             COUNTER_NAME);
    return -1;
  }
  if (!p.pinned[0] || !p.pinned[1]) {
    snprintf(why, size, "could not run a thread on CPU %d to check the %s",
             p.pinned[0] ? other : first, COUNTER_NAME);
    return -1;
  }
  if (p.worst > 0) {
    snprintf(why, size, "the %s of CPU %d read %lld ticks behind that of CPU %d", COUNTER_NAME,
             p.cpu[p.worst_to], (long long)p.worst, p.cpu[1 - p.worst_to]);
    return -1;
  }
  if (p.rounds < ORDER_MIN_ROUNDS) {
    snprintf(why, size, "CPUs %d and %d took %u turns in %d ms (busy machine?)", first, other,
             p.rounds, ORDER_HARD_NS / 1000000);
    return -1;
  }
  return 0;
}

/* The counter in order across every CPU of set (those this thread may run on): 0, or -1 with
 * why. */
static int order_check(const cpu_set_t *set, char *why, size_t size)
{
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, set))
      continue;
    if (first < 0)
      first = c;
    else if (order_check_pair(first, c, why, size) != 0)
      return -1;
  }
  return 0;
}
#endif

/* ---- the verdict ------------------------------------------------------------------------ */

/* Reached once per process under the session lifecycle lock (fxt_clock_setup's callers). */
static struct {
  bool done;
  bool counter_ok;
  uint64_t rate;  /* counter ticks per second */
  char why[240];  /* why the counter is or is not the clock */
} verdict;

static const char *clock_reason = "";

#if HAVE_COUNTER
static uint64_t counter_rate(uint64_t t0, uint64_t n0)
{
#if defined(__aarch64__)
  (void)t0, (void)n0;
  uint64_t f;
  __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(f));
  if (f != 0)
    return f;
#endif
  uint64_t t1 = 0, n1 = 0;
  do
    counter_pair(&t1, &n1);
  while (n1 - n0 < 5000000); /* 5 ms: ~1e-5 relative error; clock-sync records fix the rest */
  return (uint64_t)((double)(t1 - t0) * 1e9 / (double)(n1 - n0) + 0.5);
}

static void decide(const char *dir)
{
  char src[32];
  kernel_clocksource(src, sizeof src);
  const char *skew = getenv("FXTRACE_CLOCK_TEST_SKEW");
  test_skew = skew ? strtoll(skew, NULL, 0) : 0;
  /* An earlier process's verdict of this boot (clock_verdict.c), unless a test of the check. */
  cpu_set_t cpus;
  bool known_cpus = sched_getaffinity(0, sizeof cpus, &cpus) == 0;
  char why[160] = "";
  bool invariant = counter_invariant(why, sizeof why);
  if (known_cpus && !skew && invariant &&
      fxt_clock_verdict_load(dir, COUNTER_NAME, src, &cpus, &verdict.rate, verdict.why,
                             sizeof verdict.why)) {
    verdict.counter_ok = verdict.done = true;
    return;
  }
  uint64_t t0, n0;
  counter_pair(&t0, &n0);
  /* Where it cannot tell where it runs, nothing to compare. */
  unsigned ncpus = known_cpus ? (unsigned)CPU_COUNT(&cpus) : 1;
  verdict.counter_ok = invariant && (!known_cpus || order_check(&cpus, why, sizeof why) == 0);
  verdict.rate = counter_rate(t0, n0);
  if (verdict.counter_ok)
    snprintf(verdict.why, sizeof verdict.why,
             "%s %s, %.3f MHz, in order across %u CPU%s (kernel clocksource %s)",
             strcmp(COUNTER_NAME, "tsc") == 0 ? "invariant" : "architected", COUNTER_NAME,
             (double)verdict.rate / 1e6, ncpus, ncpus == 1 ? "" : "s", src);
  else
    snprintf(verdict.why, sizeof verdict.why, "%s (kernel clocksource %s)", why, src);
  verdict.done = true;
  if (verdict.counter_ok && known_cpus && !skew)
    fxt_clock_verdict_save(dir, COUNTER_NAME, src, &cpus, verdict.rate, verdict.why);
}
#endif

int fxt_clock_setup(uint32_t which, const char *dir, uint64_t *ticks_per_second)
{
  fxt_rseq_offset = __rseq_size >= 8 ? __rseq_offset : 0;
  fxt_clock_is_tsc = 0;
  *ticks_per_second = 1000000000u;
  const char *forced = "";
  /* FXTRACE_CLOCK=tsc|monotonic stands for clock=auto: one switch for a whole test suite. */
  const char *env = getenv("FXTRACE_CLOCK");
  if (which == FXT_CLOCK_AUTO && env && strcmp(env, "monotonic") == 0) {
    which = FXT_CLOCK_MONOTONIC;
    forced = "FXTRACE_CLOCK=monotonic";
  } else if (which == FXT_CLOCK_AUTO && env && strcmp(env, "tsc") == 0) {
    which = FXT_CLOCK_TSC;
    forced = "FXTRACE_CLOCK=tsc";
  }
#if HAVE_COUNTER
  if (which != FXT_CLOCK_MONOTONIC && !verdict.done)
    decide(dir);
  if (which == FXT_CLOCK_TSC || (which == FXT_CLOCK_AUTO && verdict.counter_ok)) {
    *ticks_per_second = verdict.rate;
    fxt_clock_is_tsc = 1;
    clock_reason = which == FXT_CLOCK_AUTO ? verdict.why
                   : forced[0]             ? forced
                                           : "clock=" COUNTER_NAME " (forced)";
  } else {
    clock_reason = which == FXT_CLOCK_AUTO ? verdict.why
                   : forced[0]             ? forced
                                           : "clock=monotonic (forced)";
  }
#else
  if (which == FXT_CLOCK_TSC)
    return FXT_EINVAL;
  clock_reason = "no CPU counter on this architecture";
#endif
  /* The same offset in every thread: initial-exec TLS and glibc's rseq area are both at fixed
   * offsets from the thread pointer. The fast path (fxtrace/detail/emit.h) has a form per
   * clock, each with its CPU word: the other's is the no-CPU word, so it never goes on.
   * Without rseq every event takes the general path. */
#if defined(__x86_64__)
  ptrdiff_t rseq_cpu = fxt_rseq_offset ? fxt_rseq_offset + 4 : tls_offset(&fxt_tls_no_cpu);
  fxt_fast_cpu_at = fxt_clock_is_tsc ? rseq_cpu : tls_offset(&fxt_tls_no_cpu);
  fxt_clk_cpu_at = fxt_clock_is_tsc ? tls_offset(&fxt_tls_no_cpu) : rseq_cpu;
#else
  fxt_fast_cpu_at = fxt_clk_cpu_at = tls_offset(&fxt_tls_no_cpu);
#endif
  return 0;
}

const char *fxt_clock_source(void)
{
  return fxt_clock_is_tsc ? COUNTER_NAME : "monotonic";
}

const char *fxt_clock_reason(void)
{
  return clock_reason;
}
