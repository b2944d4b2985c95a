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

#endif /* FXTRACE_CORE_MEM_H */
