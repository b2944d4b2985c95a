/* fxtrace/detail/atomic.h - the atomic operations of the inline paths, one spelling for C and
 * C++ (fxtrace/detail/emit.h, fxtrace/ring.h).
 *
 * NOT API: not for direct use; may change in any release.
 *
 * The shared structs declare their atomic members FXT_ATOMIC(T) (fxtrace/common.h): C sees
 * _Atomic(T), C++ a plain T of the same size, alignment and offset (tests/check/cxx_headers.sh
 * asserts every member's). C++ before C++23 has no <stdatomic.h>, and std::atomic<T> is not
 * the C type: so each operation below is C11's atomic_*_explicit in C (the code the library
 * and C programs always had), and in C++ the compiler's __atomic builtin that implements it
 * (g++ and clang++: the same instructions and the same orderings; TSan understands both). The
 * struct layout has one definition, the C one, and C++ never sees a second type for it.
 *
 * FXT_MO_RELAXED ... FXT_MO_SEQ_CST are the orderings; FXT_LOAD(p, mo), FXT_STORE(p, v, mo),
 * FXT_FENCE(mo) (a thread fence) and FXT_SIGNAL_FENCE(mo) (a compiler barrier) the operations,
 * with C11's meaning. FXT_ATOMIC_PTR(T) is a pointer to an atomic T, for the ring's storage
 * words (FXT_ATOMIC itself spells members and objects). FXT_ADD_OWNED(p, v) adds v to the
 * counter *p by its only writer.
 */
#ifndef FXTRACE_DETAIL_ATOMIC_H
#define FXTRACE_DETAIL_ATOMIC_H

#ifdef __cplusplus
#define FXT_MO_RELAXED __ATOMIC_RELAXED
#define FXT_MO_ACQUIRE __ATOMIC_ACQUIRE
#define FXT_MO_RELEASE __ATOMIC_RELEASE
#define FXT_MO_SEQ_CST __ATOMIC_SEQ_CST
#define FXT_LOAD(p, mo) __atomic_load_n((p), (mo))
#define FXT_STORE(p, v, mo) __atomic_store_n((p), (v), (mo))
#define FXT_FENCE(mo) __atomic_thread_fence(mo)
#define FXT_SIGNAL_FENCE(mo) __atomic_signal_fence(mo)
#define FXT_ATOMIC_PTR(T) T *
#else
#include <stdatomic.h>
#define FXT_MO_RELAXED memory_order_relaxed
#define FXT_MO_ACQUIRE memory_order_acquire
#define FXT_MO_RELEASE memory_order_release
#define FXT_MO_SEQ_CST memory_order_seq_cst
#define FXT_LOAD(p, mo) atomic_load_explicit((p), (mo))
#define FXT_STORE(p, v, mo) atomic_store_explicit((p), (v), (mo))
#define FXT_FENCE(mo) atomic_thread_fence(mo)
#define FXT_SIGNAL_FENCE(mo) atomic_signal_fence(mo)
#define FXT_ATOMIC_PTR(T) _Atomic(T) *
#endif

/* *p += v by the counter's only writer: a relaxed load and a relaxed store, no
 * read-modify-write (there is no other writer to race with); a reader sees the old value or
 * the new one, never a torn one. */
#define FXT_ADD_OWNED(p, v) FXT_STORE((p), FXT_LOAD((p), FXT_MO_RELAXED) + (v), FXT_MO_RELAXED)

#endif /* FXTRACE_DETAIL_ATOMIC_H */
