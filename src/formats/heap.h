/* src/formats/heap.h - a binary min-heap of uint32_t indices (heap[0] the least), ordered by
 * the caller's less(ctx, a, b): the merges of sorted streams (tracedat_read_iter.c, a trace.dat's
 * CPUs; tracedat_write_sort.c, the sorted runs) keep the index of each stream's next item in one.
 * The functions are inline so that each caller's less, a constant, is inlined into the loop as
 * it was when each file had its own copy.
 */
#ifndef FXTRACE_FORMATS_HEAP_H
#define FXTRACE_FORMATS_HEAP_H

#include <stdbool.h>
#include <stdint.h>

typedef bool (*fxtf_heap_less)(const void *ctx, uint32_t a, uint32_t b);

static inline void fxtf_heap_swap(uint32_t *heap, uint32_t i, uint32_t j) {
  uint32_t t = heap[i];
  heap[i] = heap[j];
  heap[j] = t;
}

/* Moves heap[i] down below every index less than it, among the first n. */
static inline void fxtf_heap_sift_down(uint32_t *heap, uint32_t n, uint32_t i,
                                       fxtf_heap_less less, const void *ctx) {
  for (;;) {
    uint32_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && less(ctx, heap[l], heap[m]))
      m = l;
    if (r < n && less(ctx, heap[r], heap[m]))
      m = r;
    if (m == i)
      return;
    fxtf_heap_swap(heap, i, m);
    i = m;
  }
}

/* Moves heap[i] up above every index it is less than. */
static inline void fxtf_heap_sift_up(uint32_t *heap, uint32_t i, fxtf_heap_less less,
                                     const void *ctx) {
  while (i > 0) {
    uint32_t p = (i - 1) / 2;
    if (!less(ctx, heap[i], heap[p]))
      return;
    fxtf_heap_swap(heap, i, p);
    i = p;
  }
}

#endif /* FXTRACE_FORMATS_HEAP_H */
