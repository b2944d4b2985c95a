/* src/core/rmw.h - the core's atomic read-modify-writes on 32-bit values, in one place.
 *
 * Where 32-bit atomics are lock-free these are the C11 generic functions themselves (the same
 * code as calling them directly). Where they are not (ARMv6-M: GCC would call __atomic_*
 * library functions, which bare-metal runtimes do not have), or with FXT_NO_ATOMIC_RMW, each
 * runs inside the embedder's critical section (fxtrace/port.h): a relaxed load, the compare,
 * a relaxed store, between sequentially consistent fences, so it orders at least as strongly
 * as any memory_order the caller asked for. Loads, stores and fences are never hooked.
 */
#ifndef FXTRACE_CORE_RMW_H
#define FXTRACE_CORE_RMW_H

#include <fxtrace/port.h>

#include <stdatomic.h>
#include <stdbool.h>

#if ATOMIC_INT_LOCK_FREE == 2 && !defined(FXT_NO_ATOMIC_RMW)
#define FXT_RMW_HOOKED 0
#define fxt_cas_weak atomic_compare_exchange_weak_explicit
#define fxt_cas_strong atomic_compare_exchange_strong_explicit
#define fxt_fetch_add atomic_fetch_add_explicit
#else
#define FXT_RMW_HOOKED 1

static inline bool fxt_cas_strong(_Atomic uint32_t *obj, uint32_t *expected, uint32_t desired,
                                  memory_order success, memory_order failure)
{
  (void)success;
  (void)failure;
  uintptr_t state = fxt_port_critical_enter();
  atomic_thread_fence(memory_order_seq_cst);
  uint32_t now = atomic_load_explicit(obj, memory_order_relaxed);
  bool ok = now == *expected;
  if (ok)
    atomic_store_explicit(obj, desired, memory_order_relaxed);
  else
    *expected = now;
  atomic_thread_fence(memory_order_seq_cst);
  fxt_port_critical_exit(state);
  return ok;
}

/* A weak compare-and-swap may fail spuriously; this one never does. */
#define fxt_cas_weak fxt_cas_strong

static inline uint32_t fxt_fetch_add(_Atomic uint32_t *obj, uint32_t n, memory_order order)
{
  (void)order;
  uintptr_t state = fxt_port_critical_enter();
  atomic_thread_fence(memory_order_seq_cst);
  uint32_t old = atomic_load_explicit(obj, memory_order_relaxed);
  atomic_store_explicit(obj, old + n, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  fxt_port_critical_exit(state);
  return old;
}
#endif

#endif /* FXTRACE_CORE_RMW_H */
