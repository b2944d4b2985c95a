/* src/base/grow.c - the growable array's growth step, the arrays a destructor frees (grow.h). */
#include "grow.h"

#include <stdint.h>
#include <stdlib.h>

bool fxt_grow(void **p, size_t *cap, size_t need, size_t size, size_t first) {
  if (need <= *cap)
    return true;
  size_t c = *cap ? *cap : first;
  while (c < need) {
    if (c > SIZE_MAX / 2)
      return false;
    c *= 2;
  }
  if (c > SIZE_MAX / size)
    return false;
  void *q = realloc(*p, c * size);
  if (q == NULL)
    return false;
  *p = q;
  *cap = c;
  return true;
}

void fxt_free_each(void *const *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(p[i]);
}
