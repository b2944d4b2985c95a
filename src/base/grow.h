/* src/base/grow.h - the growable array's one growth step, for every layer above the core: the
 * capacity doubled from a first one until the elements needed fit, then realloc; and the
 * arrays a destructor owns freed in one call. */
#ifndef FXTRACE_BASE_GROW_H
#define FXTRACE_BASE_GROW_H

#include <stdbool.h>
#include <stddef.h>

/* Room in *p, an array of *cap elements of size bytes, for need elements: when need > *cap,
 * the capacity is doubled from *cap (from first when *cap is 0; first >= 1) until need fits,
 * and *p reallocated to it. True when need fits (then *p and *cap are the new ones); false
 * when the capacity or its bytes would overflow size_t or realloc fails, *p and *cap then
 * untouched (the old array still the caller's to free). */
bool fxt_grow(void **p, size_t *cap, size_t need, size_t size, size_t first);

/* free() of each of the n pointers p[0..n) (NULL ones do nothing, as free(NULL)). */
void fxt_free_each(void *const *p, size_t n);
/* The arrays (and the object) a destructor owns freed in one call, in the order given:
 * FXT_FREE_ALL(s->runs, s->heap, s). Each argument is an object pointer, not const. */
#define FXT_FREE_ALL(...)                                                                  \
  fxt_free_each((void *const[]){__VA_ARGS__},                                              \
                sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

#endif /* FXTRACE_BASE_GROW_H */
