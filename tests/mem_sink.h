/* tests/mem_sink.h - a writer's output kept in memory (any write callback of the form
 * int (*)(void *ctx, const void *data, size_t n): recovery's fxt_rec_write_fn, the JSON and
 * trace.dat converters' writers), for the recovery tests, test_tdr_fxt and the fuzz targets.
 * Header-only. Start from {0}; free buf when done.
 */
#ifndef FXT_TESTS_MEM_SINK_H
#define FXT_TESTS_MEM_SINK_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct mem_sink {
  unsigned char *buf;
  size_t len, cap;
};

/* Appends data[0..n) to the sink (a struct mem_sink); 0, or -ENOMEM when it cannot grow. */
static inline int mem_sink_write(void *ctx, const void *data, size_t n)
{
  struct mem_sink *s = ctx;
  if (s->len + n > s->cap) {
    size_t c = s->cap ? s->cap : 1 << 16;
    while (c < s->len + n)
      c *= 2;
    unsigned char *b = realloc(s->buf, c);
    if (!b)
      return -ENOMEM;
    s->buf = b;
    s->cap = c;
  }
  memcpy(s->buf + s->len, data, n);
  s->len += n;
  return 0;
}

#endif /* FXT_TESTS_MEM_SINK_H */
