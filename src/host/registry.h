/* registry.h - what the rest of the host library needs of the tracepoint registry. */
#ifndef FXT_HOST_REGISTRY_H
#define FXT_HOST_REGISTRY_H

#include <fxtrace/tracepoint.h>
#include <stdbool.h>
#include <stddef.h>

/* Changes whenever tracepoints are registered or unregistered (acquire load). */
uint32_t fxt_registry_generation(void);

/* Enables (on) or disables every tracepoint matching glob ("sys:event", "sys:*", "*:*"), now
 * and when registered later: appended to the enabled patterns, where the last match wins.
 * Returns how many registered tracepoints matched, or FXT_ENOMEM. */
int fxt_registry_set_glob(const char *glob, bool on);

/* The tracepoint's print format: its own, or "f1=%u f2=%s..." made from its fields in buf. */
const char *fxt_tracepoint_print_fmt(const struct fxt_tracepoint *tp, char *buf, size_t size);

/* The ftrace fields of tp's events, as its `format` file and its filter see them: a typed
 * tracepoint's own; a duration's (scopes, FXT_COMPLETE, FXT_BEGIN/END) `u64 dur_ns` (0 for a
 * begin or an end: no length yet); a counter's `u64 id`. Laid out as the trace.dat export
 * lays out those events (src/formats/tracedat_write_event.h), whose arguments follow; ad-hoc
 * arguments are known only at emission, so they are not fields here. Others: none. */
const struct fxt_field *fxt_tracepoint_fields(const struct fxt_tracepoint *tp, uint32_t *n);

/* The payload of tp's `fxtrace:tracepoint` blob (docs/fxt-conventions.md) into out (cap
 * bytes, 8192 always suffice). Returns its length, or 0 when tp has no id or it does not fit. */
size_t fxt_tp_describe(const struct fxt_tracepoint *tp, unsigned char *out, size_t cap);

/* Calls fn under the registry lock for every registered tracepoint now, and then for each one
 * registered later, until it is set again (NULL: none). The session's tracepoint table
 * (buffers_tables.c) is kept this way. */
void fxt_registry_set_mirror(void (*fn)(struct fxt_tracepoint *tp));

/* Held across fork() by the session's atfork handlers. */
void fxt_registry_lock(void);
void fxt_registry_unlock(void);

#endif
