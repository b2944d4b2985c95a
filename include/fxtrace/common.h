/* fxtrace/common.h - macros shared by every public header.
 *
 * Freestanding: includes only <stdint.h> and <stddef.h>. Safe to include from C11 and C++.
 *
 * User API (docs/architecture.md, "Public headers").
 */
#ifndef FXTRACE_COMMON_H
#define FXTRACE_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* Symbol visibility: the library is built with -fvisibility=hidden; only FXT_API names are
 * exported from the shared object. */
#if defined(FXT_BUILDING_LIBRARY) && defined(__GNUC__)
#define FXT_API __attribute__((visibility("default")))
#else
#define FXT_API
#endif

#if defined(__GNUC__)
#define FXT_LIKELY(x) __builtin_expect(!!(x), 1)
#define FXT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define FXT_ALWAYS_INLINE __attribute__((always_inline))
#else
#define FXT_LIKELY(x) (x)
#define FXT_UNLIKELY(x) (x)
#define FXT_ALWAYS_INLINE
#endif

/* Atomic members of public structs. C code sees _Atomic(T); C++ code (which may include the
 * headers but never touches these members) sees a plain T of the same size and alignment on
 * every target we build for (checked with static assertions in src/core). */
#ifdef __cplusplus
#define FXT_ATOMIC(T) T
#define FXT_ALIGNAS(n) alignas(n)
#define FXT_EXTERN_C_BEGIN extern "C" {
#define FXT_EXTERN_C_END }
#else
#define FXT_ATOMIC(T) _Atomic(T)
#define FXT_ALIGNAS(n) _Alignas(n)
#define FXT_EXTERN_C_BEGIN
#define FXT_EXTERN_C_END
#endif

/* Fast paths are C99 inline definitions in the headers (the library emits the one external
 * definition of each). Every C declaration of them must say inline too, or the definition
 * would become external in each translation unit; C++ sees plain extern declarations. */
#ifdef __cplusplus
#define FXT_INLINE
#else
#define FXT_INLINE inline
#endif

/* Alignment that keeps producer-owned and consumer-owned state apart (struct fxt_ring,
 * struct fxt_ingress): the cache line. A target without a data cache (Cortex-M0/M3/M4) may
 * define it smaller, down to 8, for the core and every file that includes these headers alike
 * (it changes the structs' layout): struct fxt_ring shrinks from 192 to 48 bytes with 8. */
#ifndef FXT_CACHE_LINE
#define FXT_CACHE_LINE 64
#endif

#endif /* FXTRACE_COMMON_H */
