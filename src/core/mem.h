/* src/core/mem.h - the only external symbols src/core may use.
 *
 * Freestanding builds have no <string.h>; these are the C standard prototypes, which every
 * hosted and freestanding C runtime (and the compiler's own expansions) provide. Compatible
 * with <string.h> when both are included.
 */
#ifndef FXTRACE_CORE_MEM_H
#define FXTRACE_CORE_MEM_H

#include <stddef.h>

void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

/* Every build compiles src/core -ffreestanding, which turns gcc's and clang's builtins off: each
 * 8-byte memcpy of the codec and the rings would be a call. With FXT_CORE_BUILTINS (the
 * library's build defines it) their builtins expand the small fixed-size ones inline, as a
 * hosted build does, and call the functions above for the rest. Not by default: on other
 * targets the rest may be other functions (32-bit ARM: __aeabi_memcpy, ...), and the core
 * alone references no more than the four above (tests/check/freestanding.sh). */
#if defined(FXT_CORE_BUILTINS) && defined(__GNUC__)
#define memcpy(dst, src, n) __builtin_memcpy(dst, src, n)
#define memmove(dst, src, n) __builtin_memmove(dst, src, n)
#define memset(dst, c, n) __builtin_memset(dst, c, n)
#define memcmp(a, b, n) __builtin_memcmp(a, b, n)
#endif

#endif /* FXTRACE_CORE_MEM_H */
