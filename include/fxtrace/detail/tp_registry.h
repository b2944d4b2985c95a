/* fxtrace/detail/tp_registry.h - the registry's part of a tracepoint (C and C++).
 *
 * NOT API: the layout and every member may change in any release. The struct is defined in a
 * header only because every tracepoint object embeds it (fxt_tracepoint.reg, statically
 * zero-initialized by the macros of fxtrace/fxtrace.h) and the inline emit path reads its
 * words at every fire site; src/host/registry.c owns it, and src/host/filters.c and adhoc.c
 * set the members their comments name. Programs never read or write it.
 */
#ifndef FXTRACE_DETAIL_TP_REGISTRY_H
#define FXTRACE_DETAIL_TP_REGISTRY_H

#include <stdint.h>

#include "../common.h"

/* FXT's argument limit: the most fields a typed tracepoint has and arguments an event takes.
 * API (fxtrace/tracepoint.h documents it), defined here with the arrays it sizes. */
#define FXT_MAX_FIELDS 15

struct fxt_tracepoint;

/* Set at registration, before the tracepoint's `enabled` can first become non-zero, and
 * read by emission after the acquire fence that pairs with the release store of `enabled`
 * (fxt_tracepoint). Its first member is 8-aligned, so embedding it right after the
 * tracepoint's 4-byte `id` keeps every member at the offset it had as a plain member. */
struct fxt_tp_registry {
  uint64_t header;                     /* FXT event header: category and name refs */
  uint64_t arg_header[FXT_MAX_FIELDS]; /* typed: argument type, name ref and, for a
                                          fixed-size type, size bits of each field */
  FXT_ATOMIC(uint32_t) arg_ref[FXT_MAX_FIELDS]; /* ad-hoc: argument name refs, interned at a
                                                   call site's first emission; 0 = not yet */
  /* The event's hook, or NULL: its filter program (fxtrace/filter.h) and event triggers
   * (src/host/filters.h, struct fxt_evhook); non-NULL sends every event of the tracepoint to
   * the general path. Set by the control side with a release store (under the registry
   * lock); emission loads it with acquire, before the reservation, and a replaced hook is
   * freed only after every thread has left the emission it may have been using it in (the
   * membarrier handshake of src/host/slots.c). */
  FXT_ATOMIC(const void *) filter;
  struct fxt_tracepoint *next; /* registry list, under its lock */
};

#endif /* FXTRACE_DETAIL_TP_REGISTRY_H */
