/* clock.c - the trace clock, the CPU number, and the emit-path globals they use.
 *
 * The clock is the CPU's own counter wherever it can be trusted, whatever the kernel's
 * clocksource (a KVM guest's is kvm-clock even where the TSC is invariant, and reading it costs
 * two to three times a bare rdtsc): on x86 the TSC when CPUID says it is invariant (leaf
 * 80000007h, EDX bit 8) and a check at the first session start finds it in order across the
 * CPUs this process may run on; on aarch64 the virtual counter CNTVCT_EL0 (architecturally
 * synchronized, its rate in CNTFRQ_EL0). Elsewhere, or when the check fails, CLOCK_MONOTONIC in
 * nanoseconds. `clock=tsc|monotonic` forces one. The counter's rate is calibrated against
 * CLOCK_MONOTONIC; files also carry clock-sync records (the counter, CLOCK_MONOTONIC and
 * CLOCK_REALTIME read together) at their start, about once a second and at their end, so
 * readers map ticks to CLOCK_MONOTONIC through drift. Which clock and why is recorded in every
 * file (a kernel:meta `clock` record, docs/fxt-conventions.md) and shown by `fxtrace stats`.
 *
 * The verdict is reached once per process (a forked child inherits it: same machine, same
 * CPUs): the check costs a few milliseconds, the calibration 5 ms; a positive one is kept for
 * the boot in the buffers' directory, and a later process whose CPUs and kernel clocksource
 * are the same takes it from there (clock_verdict.c; its reason then ends "as checked earlier
 * this boot"). This file holds what the emit path and the consumer read; the check and the
 * choice at a session's start are clock_setup.c's, compiled for size.
 */
#define _GNU_SOURCE
#include <fxtrace/detail/emit.h>
#include <fxtrace/fxtrace.h>
#include <sched.h>
#include <time.h>

#include "clock.h"

_Thread_local struct fxt_tslot *fxt_tls_slot __attribute__((tls_model("initial-exec")));
FXT_ATOMIC(uint32_t) fxt_session_active;
uint32_t fxt_clock_is_tsc;
ptrdiff_t fxt_rseq_offset;
ptrdiff_t fxt_fast_cpu_at;
ptrdiff_t fxt_clk_cpu_at;
_Thread_local const uint32_t fxt_tls_no_cpu __attribute__((tls_model("initial-exec"))) =
    FXT_CPU_NEVER;

uint64_t fxt_clock_mono_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t fxt_ticks_slow(void)
{
  return fxt_clock_mono_ns();
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

/* The counter read on both sides of the two clocks, SYNC_TRIES times, keeping the closest
 * pair: a thread preempted between its reads (a busy machine) made a pair off by as long as
 * it waited (133 us in a merge of kernel and user timelines, tdr_merge.sh, with three test
 * suites on two CPUs); one try of the eight is rarely preempted. ~0.5 us a try. */
#define SYNC_TRIES 8

void fxt_clock_sync(uint64_t *ticks, uint64_t *mono, uint64_t *real)
{
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < SYNC_TRIES; i++) {
    struct timespec r;
    uint64_t t0 = fxt_ticks();
    uint64_t m = fxt_clock_mono_ns();
    clock_gettime(CLOCK_REALTIME, &r);
    uint64_t t1 = fxt_ticks();
    if (t1 - t0 < best) {
      best = t1 - t0;
      *ticks = t0 + (t1 - t0) / 2;
      *mono = m;
      *real = (uint64_t)r.tv_sec * 1000000000u + (uint64_t)r.tv_nsec;
    }
  }
}
