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

/* Held across fork() by the session's atfork handlers. */
void fxt_registry_lock(void);
void fxt_registry_unlock(void);

#endif
