/* clock.h - the trace clock (clock.c): chosen at the session's start (TSC checked, or
 * CLOCK_MONOTONIC), and its mapping to the system's clocks. */
#ifndef FXTRACE_HOST_CLOCK_H
#define FXTRACE_HOST_CLOCK_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* which: enum fxt_clock; dir: the buffers' base directory, where an earlier process of this
 * boot may have left the counter's verdict (clock_verdict.c; "": none). */
int fxt_clock_setup(uint32_t which, const char *dir, uint64_t *ticks_per_second);
/* The clock fxt_clock_setup chose ("tsc", "cntvct", "monotonic") and why, in words. */
const char *fxt_clock_source(void);
const char *fxt_clock_reason(void);
void fxt_clock_sync(uint64_t *ticks, uint64_t *mono_ns, uint64_t *real_ns);
/* CLOCK_MONOTONIC in ns (clock.c; the clock check of clock_setup.c reads it too). */
uint64_t fxt_clock_mono_ns(void);
/* The counter's verdict kept for the boot in directory dir (clock_verdict.c): true, with the
 * rate and why, when an earlier process of this boot found the counter in order across CPUs
 * that include `cpus` with the kernel's clocksource the same; save records a positive verdict
 * for the next. */
bool fxt_clock_verdict_load(const char *dir, const char *counter, const char *clocksource,
                            const cpu_set_t *cpus, uint64_t *rate, char *why, size_t why_size);
void fxt_clock_verdict_save(const char *dir, const char *counter, const char *clocksource,
                            const cpu_set_t *cpus, uint64_t rate, const char *why);

#endif
