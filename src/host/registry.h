/* registry.h - what the rest of the host library needs of the tracepoint registry. */
#ifndef FXT_HOST_REGISTRY_H
#define FXT_HOST_REGISTRY_H

#include <fxtrace/tracepoint.h>
#include <stdbool.h>
#include <stddef.h>

#include "../base/tp_format.h" /* fxt_tracepoint_print_fmt, fxt_tracepoint_fields */

/* Changes whenever tracepoints are registered or unregistered (acquire load). */
uint32_t fxt_registry_generation(void);

/* Enables (on) or disables every tracepoint matching glob ("sys:event", "sys:*", "*:*"), now
 * and when registered later: appended to the enabled patterns, where the last match wins.
 * Returns how many registered tracepoints matched, or FXT_ENOMEM. */
int fxt_registry_set_glob(const char *glob, bool on);

/* The payload of tp's `fxtrace:tracepoint` blob (docs/fxt-conventions.md) into out (cap
 * bytes, 8192 always suffice). Returns its length, or 0 when tp has no id or it does not fit. */
size_t fxt_tp_describe(const struct fxt_tracepoint *tp, unsigned char *out, size_t cap);

/* The fields of tp's event, as its live `format` and filter show them, into
 * out[FXT_TP_FIELDS_MAX]; returns how many. A typed event's are tp's; an ad-hoc event's are
 * tp's (fxt_tracepoint_fields), then each field of its other sites (the tracepoints of tp's
 * id, in registration order) whose name is not there yet, as many as fit: FXT_BEGIN with
 * arguments and FXT_END without are one event with the arguments. Names point into the
 * tracepoints (valid while their objects are loaded). Takes the registry lock. */
uint32_t fxt_registry_event_fields(const struct fxt_tracepoint *tp, struct fxt_field *out);

/* Calls fn under the registry lock for every registered tracepoint now, and then for each one
 * registered later, until it is set again (NULL: none). The session's tracepoint table
 * (buffers_tables.c) is kept this way. */
void fxt_registry_set_mirror(void (*fn)(struct fxt_tracepoint *tp));

/* Held across fork() by the session's atfork handlers. */
void fxt_registry_lock(void);
void fxt_registry_unlock(void);

#endif
