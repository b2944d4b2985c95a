/* src/base/fxtf_clock.h - a provider's ticks to CLOCK_MONOTONIC ns through its clock syncs:
 * the one mapping every reader of FXT files (src/formats), the `fxtrace` command's merge and
 * the tracer's live text (src/host/live.c) place events with.
 */
#ifndef FXTRACE_BASE_FXTF_CLOCK_H
#define FXTRACE_BASE_FXTF_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "fxtf_event.h"

/* Mapping of ticks to ns: ns = base_ns + (ticks - base_ticks) * slope; or, with nsyncs >= 3
 * (in order of ticks and of ns), piecewise through syncs[] (fxtf_ticks_to_ns). */
struct fxtf_clockmap {
  uint64_t base_ticks, base_ns;
  long double slope;
  const struct fxtf_sync *syncs;
  uint32_t nsyncs;
};

/* One line of a clock map (a segment between two syncs, or the whole map) and the ticks it
 * holds for, [lo, hi]; valid false before the first use. */
struct fxtf_clockseg {
  uint64_t lo, hi, base_ticks, base_ns;
  long double slope;
  bool valid;
};

/* Ticks of provider p on CLOCK_MONOTONIC, in ns: piecewise linear through its clock syncs
 * (fxtrace writes one about once a second: the counter's drift against CLOCK_MONOTONIC is
 * followed), the first and last segments extended beyond them; where the syncs are not in
 * order, or p keeps only its first and last, linear through those two; with one, through it
 * at the initialization record's rate; with none, ticks scaled by the rate (or taken as ns
 * without one). Saturates at 0 and UINT64_MAX. */
uint64_t fxtf_ticks_to_ns(const struct fxtf_provider *p, uint64_t ticks);

struct fxtf_clockmap fxtf_clockmap_of(const struct fxtf_provider *p);
uint64_t fxtf_clockmap_apply(const struct fxtf_clockmap *m, uint64_t ticks);
/* fxtf_clockmap_apply, the same ns, for a run of ticks: g keeps the line of the previous call
 * and is looked up again (a binary search and a division) only when ticks leave it. */
uint64_t fxtf_clockmap_apply_seg(const struct fxtf_clockmap *m, struct fxtf_clockseg *g,
                                 uint64_t ticks);

#endif /* FXTRACE_BASE_FXTF_CLOCK_H */
