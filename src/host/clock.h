/* clock.h - the trace clock (clock.c): chosen at the session's start (TSC checked, or
 * CLOCK_MONOTONIC), and its mapping to the system's clocks. */
#ifndef FXTRACE_HOST_CLOCK_H
#define FXTRACE_HOST_CLOCK_H

#include <stdint.h>

int fxt_clock_setup(uint32_t which, uint64_t *ticks_per_second);
/* The clock fxt_clock_setup chose ("tsc", "cntvct", "monotonic") and why, in words. */
const char *fxt_clock_source(void);
const char *fxt_clock_reason(void);
void fxt_clock_sync(uint64_t *ticks, uint64_t *mono_ns, uint64_t *real_ns);
/* CLOCK_MONOTONIC in ns (clock.c; the clock check of clock_setup.c reads it too). */
uint64_t fxt_clock_mono_ns(void);

#endif
