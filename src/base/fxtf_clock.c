/* src/base/fxtf_clock.c - a provider's ticks to CLOCK_MONOTONIC ns through its clock syncs
 * (fxtf_clock.h), the way every reader and the live text place events: below both the tracer
 * (the text of an event, live.c) and the formats library. */
#include "fxtf_clock.h"

/* True when syncs[0..n) go forward in ticks and do not go back in ns. */
static bool syncs_in_order(const struct fxtf_sync *s, uint32_t n) {
  for (uint32_t k = 1; k < n; k++)
    if (s[k].ticks <= s[k - 1].ticks || s[k].monotonic_ns < s[k - 1].monotonic_ns)
      return false;
  return true;
}

struct fxtf_clockmap fxtf_clockmap_of(const struct fxtf_provider *p) {
  struct fxtf_clockmap m = {0, 0, 1.0L, NULL, 0};
  if (p->ticks_per_second != 0)
    m.slope = 1e9L / (long double)p->ticks_per_second;
  if (p->nsyncs == 0)
    return m;
  const struct fxtf_sync *a = &p->first_sync, *z = &p->last_sync;
  m.base_ticks = a->ticks;
  m.base_ns = a->monotonic_ns;
  if (p->nsyncs >= 2 && z->ticks > a->ticks && z->monotonic_ns >= a->monotonic_ns)
    m.slope = (long double)(z->monotonic_ns - a->monotonic_ns) / (long double)(z->ticks - a->ticks);
  if (p->syncs && p->nsyncs >= 3 && syncs_in_order(p->syncs, p->nsyncs)) {
    m.syncs = p->syncs;
    m.nsyncs = p->nsyncs;
  }
  return m;
}

/* The segment [k, k + 1] of m's syncs that ticks falls in (the first or last beyond them). */
static uint32_t sync_segment(const struct fxtf_clockmap *m, uint64_t ticks) {
  uint32_t lo = 0, hi = m->nsyncs - 2; /* the answer is in [lo, hi] */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo + 1) / 2;
    if (m->syncs[mid].ticks <= ticks)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* base_ns + (ticks - base_ticks) * slope, rounded; saturated at 0 and UINT64_MAX. */
static uint64_t map_line(uint64_t base_ticks, uint64_t base_ns, long double slope, uint64_t ticks) {
  long double d = ticks >= base_ticks ? (long double)(ticks - base_ticks)
                                      : -(long double)(base_ticks - ticks);
  long double ns = (long double)base_ns + d * slope + 0.5L;
  if (!(ns >= 1.0L)) /* also NaN */
    return 0;
  if (ns >= 0x1p64L)
    return UINT64_MAX;
  return (uint64_t)ns;
}

/* The line of m that ticks falls on, with the ticks it holds for ([lo, hi]). */
static void clockmap_seg(const struct fxtf_clockmap *m, uint64_t ticks, struct fxtf_clockseg *g) {
  g->base_ticks = m->base_ticks;
  g->base_ns = m->base_ns;
  g->slope = m->slope;
  g->lo = 0;
  g->hi = UINT64_MAX;
  if (m->nsyncs >= 3) {
    uint32_t k = sync_segment(m, ticks);
    const struct fxtf_sync *a = &m->syncs[k], *z = a + 1;
    g->base_ticks = a->ticks;
    g->base_ns = a->monotonic_ns;
    g->slope =
        (long double)(z->monotonic_ns - a->monotonic_ns) / (long double)(z->ticks - a->ticks);
    if (k > 0)
      g->lo = a->ticks;
    if (k + 2 < m->nsyncs)
      g->hi = z->ticks - 1; /* syncs in order: z->ticks > a->ticks */
  }
  g->valid = true;
}

uint64_t fxtf_clockmap_apply(const struct fxtf_clockmap *m, uint64_t ticks) {
  struct fxtf_clockseg g;
  clockmap_seg(m, ticks, &g);
  return map_line(g.base_ticks, g.base_ns, g.slope, ticks);
}

uint64_t fxtf_clockmap_apply_seg(const struct fxtf_clockmap *m, struct fxtf_clockseg *g,
                                 uint64_t ticks) {
  if (!g->valid || ticks < g->lo || ticks > g->hi)
    clockmap_seg(m, ticks, g);
  return map_line(g->base_ticks, g->base_ns, g->slope, ticks);
}

uint64_t fxtf_ticks_to_ns(const struct fxtf_provider *p, uint64_t ticks) {
  struct fxtf_clockmap m = fxtf_clockmap_of(p);
  return fxtf_clockmap_apply(&m, ticks);
}
