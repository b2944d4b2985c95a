/* clock.c - the trace clock, the CPU number, and the emit-path globals they use.
 *
 * The clock is the TSC where the kernel itself uses it as its clocksource (so it is invariant
 * and synchronized across CPUs), else CLOCK_MONOTONIC in nanoseconds. The TSC rate is
 * calibrated against CLOCK_MONOTONIC when a session starts; files also carry clock-sync
 * records (all three clocks read together) at their start and end, so readers map ticks to
 * CLOCK_MONOTONIC exactly by interpolation.
 */
#define _GNU_SOURCE
#include <fxtrace/emit.h>
#include <fxtrace/fxtrace.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/rseq.h>
#include <time.h>

#include "session_int.h"

_Thread_local struct fxt_tslot *fxt_tls_slot __attribute__((tls_model("initial-exec")));
FXT_ATOMIC(uint32_t) fxt_session_active;
uint32_t fxt_clock_is_tsc;
ptrdiff_t fxt_rseq_offset;
ptrdiff_t fxt_fast_cpu_at;
_Thread_local const uint32_t fxt_tls_no_cpu __attribute__((tls_model("initial-exec"))) =
    FXT_CPU_NEVER;

static ptrdiff_t tls_offset(const void *p)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__aarch64__))
  return (const char *)p - (const char *)__builtin_thread_pointer();
#else
  (void)p;
  return 0; /* no fast path here (fxt_fast_begin) */
#endif
}

static uint64_t mono_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t fxt_ticks_slow(void)
{
  return mono_ns();
}

uint64_t fxt_now(void)
{
  return fxt_ticks();
}

uint32_t fxt_cpu_slow(void)
{
  int cpu = sched_getcpu();
  return cpu < 0 ? 0 : (uint32_t)cpu;
}

static int clocksource_is_tsc(void)
{
  char buf[32] = {0};
  FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
  if (!f)
    return 0;
  int ok = fgets(buf, sizeof(buf), f) != NULL && strncmp(buf, "tsc", 3) == 0 &&
           (buf[3] == '\n' || buf[3] == 0);
  fclose(f);
  return ok;
}

#if defined(__x86_64__) || defined(__i386__)
/* One (tsc, monotonic ns) pair read as close together as possible. */
static void tsc_pair(uint64_t *tsc, uint64_t *ns)
{
  uint64_t best = UINT64_MAX;
  *tsc = *ns = 0;
  for (int i = 0; i < 5; i++) {
    uint64_t a = __rdtsc(), n = mono_ns(), b = __rdtsc();
    if (b - a < best) {
      best = b - a;
      *tsc = a + (b - a) / 2;
      *ns = n;
    }
  }
}

static uint64_t calibrate_tsc(void)
{
  uint64_t t0 = 0, n0 = 0, t1 = 0, n1 = 0;
  tsc_pair(&t0, &n0);
  do
    tsc_pair(&t1, &n1);
  while (n1 - n0 < 5000000); /* 5 ms: ~1e-4 relative error; clock-sync records fix the rest */
  return (uint64_t)((double)(t1 - t0) * 1e9 / (double)(n1 - n0) + 0.5);
}
#endif

int fxt_clock_setup(uint32_t which, uint64_t *ticks_per_second)
{
  fxt_rseq_offset = __rseq_size >= 8 ? __rseq_offset : 0;
  fxt_clock_is_tsc = 0;
  *ticks_per_second = 1000000000u;
#if defined(__x86_64__) || defined(__i386__)
  if (which == FXT_CLOCK_TSC || (which == FXT_CLOCK_AUTO && clocksource_is_tsc())) {
    *ticks_per_second = calibrate_tsc();
    fxt_clock_is_tsc = 1;
  }
  /* The same offset in every thread: initial-exec TLS and glibc's rseq area are both at fixed
   * offsets from the thread pointer. */
  fxt_fast_cpu_at = fxt_clock_is_tsc && fxt_rseq_offset ? fxt_rseq_offset + 4
                                                        : tls_offset(&fxt_tls_no_cpu);
#else
  if (which == FXT_CLOCK_TSC)
    return FXT_EINVAL;
#endif
  return 0;
}

void fxt_clock_sync(uint64_t *ticks, uint64_t *mono, uint64_t *real)
{
  struct timespec r;
  uint64_t t0 = fxt_ticks();
  *mono = mono_ns();
  clock_gettime(CLOCK_REALTIME, &r);
  uint64_t t1 = fxt_ticks();
  *ticks = t0 + (t1 - t0) / 2;
  *real = (uint64_t)r.tv_sec * 1000000000u + (uint64_t)r.tv_nsec;
}
