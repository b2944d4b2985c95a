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

/* Atomic members of public structs. C code sees _Atomic(T); C++ code sees a plain T of the
 * same size and alignment on every target we build for (checked with static assertions in
 * src/core and by tests/check/cxx_headers.sh), which the inline paths access with the
 * compiler's __atomic builtins (fxtrace/detail/atomic.h). */
#ifdef __cplusplus
#define FXT_ATOMIC(T) T
#define FXT_ALIGNAS(n) alignas(n)
#define FXT_EXTERN_C_BEGIN extern "C" {
#define FXT_EXTERN_C_END }
#define FXT_NULL nullptr
/* The library's functions that inline code calls throw nothing (the library is C): said, so
 * that C++ callers need no unwinding path around them. */
#define FXT_NOEXCEPT noexcept
#else
#define FXT_ATOMIC(T) _Atomic(T)
#define FXT_ALIGNAS(n) _Alignas(n)
#define FXT_EXTERN_C_BEGIN
#define FXT_EXTERN_C_END
#define FXT_NULL NULL
#define FXT_NOEXCEPT
#endif

/* Fast paths are C99 inline definitions in the headers (the library emits the one external
 * definition of each). Every C declaration of them must say inline too, or the definition
 * would become external in each translation unit. C++ has no C99 inline: it gets them static
 * inline, each unit its own copy (a C++ inline function of C linkage would be a weak symbol
 * of the library's name in the program, which the dynamic linker could bind the library's own
 * calls to). */
#ifdef __cplusplus
#define FXT_INLINE static inline
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
