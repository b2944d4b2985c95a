/* adhoc.c - emission of ad-hoc events (FXT_INSTANT, FXT_COUNTER, ...), printk and scopes.
 *
 * Out of line: the arguments are a runtime list. A call site's argument names are interned at
 * its registration (its static table of names and types, fxtrace.h: registry.c) or, for a
 * site of an older build without one, on its first emission (lock-free, see intern.c), and
 * cached in the tracepoint.
 */
#include <fxtrace/fxt.h>
#include <fxtrace/fxtrace.h>

#include "filters.h"
#include "intern.h"
#include "session_int.h"

/* Name ref of argument i of a call site (0 if the string table is full). */
static uint64_t arg_name(struct fxt_tracepoint *tp, uint32_t i, const char *name)
{
  uint32_t ref = atomic_load_explicit(&tp->reg.arg_ref[i], memory_order_relaxed);
  if (FXT_LIKELY(ref != 0))
    return ref;
  int r = fxt_intern_cstr(name);
  if (r <= 0)
    return 0;
  atomic_store_explicit(&tp->reg.arg_ref[i], (uint32_t)r, memory_order_relaxed);
  return (uint32_t)r;
}

/* ticks as nanoseconds, at the session's rate (a duration: no epoch involved). */
static uint64_t ticks_ns(uint64_t d)
{
  uint64_t tps = fxt_session.ticks_per_second;
  if (tps == 0 || tps == 1000000000u)
    return d;
  return d / tps * 1000000000u + d % tps * 1000000000u / tps; /* tps < 18 GHz: no overflow */
}

/* Whether the event passes tp's filter, on the fields fxt_tracepoint_fields gives it: its
 * head - a duration's dur_ns (complete: end - start; 0 for a begin or an end), a counter's,
 * async's or flow's id - then its arguments av[0..n). Out of line: fxt_emit_adhoc's body
 * stays the instructions it was without a filter. */
static uint64_t adhoc_head(const struct fxt_tracepoint *tp, uint32_t etype, uint64_t trailer,
                           uint64_t now)
{
  if (tp->kind == FXT_TP_DURATION && etype == FXT_EVENT_DURATION_COMPLETE)
    return now > trailer ? ticks_ns(now - trailer) : 0;
  if (tp->kind == FXT_TP_COUNTER || tp->kind == FXT_TP_ASYNC || tp->kind == FXT_TP_FLOW)
    return trailer;
  return 0;
}

__attribute__((noinline)) static bool
adhoc_pass(struct fxt_tracepoint *tp, const struct fxt_tslot *t, uint32_t etype, uint64_t trailer,
           uint64_t now, uint32_t cpu, const struct fxt_argv *av, uint32_t n)
{
  return fxt_filter_pass_adhoc(tp, t, adhoc_head(tp, etype, trailer, now), av,
                               n < FXT_MAX_FIELDS ? n : FXT_MAX_FIELDS, cpu);
}

/* An emission refused while tp has a hook: while recording is off, its triggers still run
 * (fxt_filter_off_adhoc), as a typed tracepoint's do (fxt_filter_off). True when a traceon
 * turned recording on before the event, which is then to be recorded. */
__attribute__((noinline, cold)) static bool adhoc_off(struct fxt_tracepoint *tp, uint32_t etype,
                                                      uint64_t trailer,
                                                      const struct fxt_argv *av, uint32_t n)
{
  struct fxt_adhoc_off a = {adhoc_head(tp, etype, trailer, fxt_ticks()), av,
                            n < FXT_MAX_FIELDS ? n : FXT_MAX_FIELDS};
  return fxt_filter_off_adhoc(tp, &a);
}

static bool has_trailer(uint32_t etype)
{
  return etype == FXT_EVENT_COUNTER || etype >= FXT_EVENT_DURATION_COMPLETE;
}

void fxt_emit_adhoc(struct fxt_tracepoint *tp, uint32_t etype, uint64_t trailer,
                    const struct fxt_argv *av, uint32_t n)
{
  struct fxt_tslot *t = fxt_emit_enter();
  uint32_t cpu;
  uint64_t now;
  if (!t) {
    /* Recording off: the triggers run; when a traceon turned it on before this event (the
     * kernel's order: a trigger without a filter fires before the event is recorded), the
     * event is recorded as any, its filter and triggers done. Recording off again by then
     * (another thread, a tracing_on write): not recorded, as any event after it. */
    if (FXT_LIKELY(atomic_load_explicit(&tp->reg.filter, memory_order_relaxed) == NULL) ||
        !adhoc_off(tp, etype, trailer, av, n) || !(t = fxt_emit_enter()))
      return;
    now = fxt_emit_time(&cpu);
  } else {
    now = fxt_emit_time(&cpu);
    /* Ad-hoc events' filters see the common fields, dur_ns or id, and the arguments
     * (src/base/tp_format.h, fxt_tracepoint_fields). */
    if (FXT_UNLIKELY(atomic_load_explicit(&tp->reg.filter, memory_order_acquire) != NULL) &&
        !adhoc_pass(tp, t, etype, trailer, now, cpu, av, n)) {
      fxt_emit_leave(t);
      return;
    }
  }
  uint64_t ts = now;
  if (etype == FXT_EVENT_DURATION_COMPLETE) { /* trailer was the start: it becomes the end */
    ts = trailer;
    trailer = now;
  }
  if (n > FXT_MAX_FIELDS)
    n = FXT_MAX_FIELDS;
  uint64_t ah[FXT_MAX_FIELDS], wide = 0;
  uint32_t len[FXT_MAX_FIELDS];
  uint32_t words = 2 + fxt_emit_thread_words(t) + has_trailer(etype);
  for (uint32_t i = 0; i < n; i++) {
    ah[i] = fxt_arg_header(av[i].type, (uint32_t)arg_name(tp, i, av[i].name));
    len[i] = fxt_field_len(av[i].type, FXT_STR_MAX_BOUND, av[i].v);
    wide |= fxt_field_wide(av[i].type, av[i].v);
  }
  for (uint32_t i = 0; i < n; i++) /* 64-bit integers in one word when all fit: as typed ones */
    words += fxt_field_words_n(av[i].type, len[i], wide == 0);
  struct fxt_cursor c;
  uint64_t hdr = fxt_w_event(etype, n) | fxt_w_size(words) | t->thread_bits | tp->reg.header;
  if (fxt_emit_reserve(t, cpu, now, hdr, &c)) { /* a cpu record is stamped now */
    fxt_put(&c, hdr);
    fxt_put_event_head(&c, t, ts);
    for (uint32_t i = 0; i < n; i++)
      fxt_put_field(&c, ah[i], av[i].type, av[i].v, len[i], wide == 0);
    if (has_trailer(etype))
      fxt_put(&c, trailer);
    fxt_emit_commit(t, &c);
  }
  fxt_emit_leave(t);
}

void fxt_emit_printk(struct fxt_tracepoint *tp, const struct fxt_argv *av, uint32_t n)
{
  fxt_emit_adhoc(tp, FXT_EVENT_INSTANT, 0, av, n);
}

/* A scope's end: a duration-complete event without arguments, written straight (the generic
 * path's argument loop is not needed): header, start, [koids], end. */
static void scope_end_slow(struct fxt_scope *s);

void fxt_scope_end(struct fxt_scope *s)
{
  struct fxt_fast f;
  if (FXT_LIKELY(fxt_fast_begin(s->tp, 3, fxt_w_event(FXT_EVENT_DURATION_COMPLETE, 0), false,
                                &f))) {
    fxt_put(&f.c, s->start);
    fxt_put(&f.c, fxt_fast_ticks());
    fxt_fast_end(&f);
    return;
  }
  scope_end_slow(s);
}

__attribute__((noinline)) static void scope_end_slow(struct fxt_scope *s)
{
  struct fxt_fast f; /* the fast path's CLOCK_MONOTONIC form first */
  if (!fxt_clock_is_tsc &&
      fxt_fast_begin(s->tp, 3, fxt_w_event(FXT_EVENT_DURATION_COMPLETE, 0), true, &f)) {
    fxt_put(&f.c, s->start);
    fxt_put(&f.c, f.ts);
    fxt_fast_end(&f);
    return;
  }
  struct fxt_tslot *t = fxt_emit_enter();
  uint32_t cpu;
  uint64_t now;
  if (!t) { /* recording off: as fxt_emit_adhoc's */
    if (atomic_load_explicit(&s->tp->reg.filter, memory_order_relaxed) == NULL ||
        !adhoc_off(s->tp, FXT_EVENT_DURATION_COMPLETE, s->start, NULL, 0) ||
        !(t = fxt_emit_enter()))
      return;
    now = fxt_emit_time(&cpu);
  } else {
    now = fxt_emit_time(&cpu);
    /* A filter makes the fast path decline: it is evaluated here, on the scope's dur_ns. */
    if (atomic_load_explicit(&s->tp->reg.filter, memory_order_acquire) != NULL &&
        !adhoc_pass(s->tp, t, FXT_EVENT_DURATION_COMPLETE, s->start, now, cpu, NULL, 0)) {
      fxt_emit_leave(t);
      return;
    }
  }
  uint32_t words = 3 + fxt_emit_thread_words(t);
  uint64_t hdr = fxt_w_event(FXT_EVENT_DURATION_COMPLETE, 0) | fxt_w_size(words) |
                 t->thread_bits | s->tp->reg.header;
  struct fxt_cursor c;
  if (fxt_emit_reserve(t, cpu, now, hdr, &c)) {
    fxt_put(&c, hdr);
    fxt_put_event_head(&c, t, s->start);
    fxt_put(&c, now);
    fxt_emit_commit(t, &c);
    fxt_fast_refresh(t);
  }
  fxt_emit_leave(t);
}
