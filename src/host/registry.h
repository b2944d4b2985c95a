/* registry.h - what the rest of the host library needs of the tracepoint registry. */
#ifndef FXT_HOST_REGISTRY_H
#define FXT_HOST_REGISTRY_H

#include <fxtrace/tracepoint.h>

/* Changes whenever tracepoints are registered or unregistered (acquire load). */
uint32_t fxt_registry_generation(void);

/* Held across fork() by the session's atfork handlers. */
void fxt_registry_lock(void);
void fxt_registry_unlock(void);

#endif
