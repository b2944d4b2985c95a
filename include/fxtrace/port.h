/* fxtrace/port.h - embedder hooks the core needs on some targets only.
 *
 * Atomic read-modify-writes. The core's few compare-and-swaps and fetch-adds (the overwrite
 * ring's tail, src/core/ring.c; the ingress queue, src/core/ingress.c) are C11 atomics
 * wherever 32-bit atomics are lock-free (ATOMIC_INT_LOCK_FREE == 2: x86-64, AArch64, ARMv7-M
 * and every target with exclusive loads and stores or a compare-and-swap instruction). Where
 * they are not - ARMv6-M (Cortex-M0, M0+, M1) has no LDREX/STREX - or when the core is built
 * with FXT_NO_ATOMIC_RMW defined, each one runs between these two calls instead, which the
 * embedder defines: enter makes the caller the only one touching fxtrace's atomics (e.g. saves
 * PRIMASK and disables interrupts with `cpsid i` on a single core; takes a hardware spinlock
 * too on a multi-core part such as the RP2040) and returns what exit needs to restore the
 * previous state. Plain atomic loads and stores stay lock-free (single-copy atomic word
 * accesses) and never call them. Neither call may itself trace. Both are called from the
 * contexts the core's callers run in (a thread, an interrupt handler).
 *
 * Embedder API (docs/architecture.md, "Public headers").
 */
#ifndef FXTRACE_PORT_H
#define FXTRACE_PORT_H

#include "common.h"

FXT_EXTERN_C_BEGIN

FXT_API uintptr_t fxt_port_critical_enter(void);
FXT_API void fxt_port_critical_exit(uintptr_t state);

FXT_EXTERN_C_END

#endif /* FXTRACE_PORT_H */
