/* src/formats/tracedat_read_int.h - helpers shared by the trace.dat reader's files
 * (tracedat_read_*.c, tracedat_read.c). */
#ifndef FXTRACE_FORMATS_TRACEDAT_READ_INT_H
#define FXTRACE_FORMATS_TRACEDAT_READ_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/errmsg.h" /* fxt_fail_at */
#include "tracedat_read.h"

/* An unsigned integer of n (1..8) bytes at p, in the file's byte order. */
static inline uint64_t fxt_td_rd(const unsigned char *p, unsigned n, bool big_endian) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++)
    v |= (uint64_t)p[big_endian ? i : n - 1 - i] << (8 * (n - 1 - i));
  return v;
}

struct fxt_td_event;
/* fxt_td_parse_format without a system; need_name false also reads texts without "name:" and
 * "ID:" lines (header_page). */
int fxt_td_parse_text(const char *text, size_t len, uint64_t offset, bool need_name,
                      struct fxt_td_event *ev, char *err, size_t err_size);

/* tracedat_read_text.c */

/* The bracketed name in trace_clock text ("local global [mono] ..."); {NULL, 0} when none. */
struct fxt_td_text fxt_td_bracketed(const char *p, size_t n);
/* strtoll(s, NULL, 0) over a bounded, possibly unterminated text; false when no number. */
bool fxt_td_parse_ll(const char *p, size_t n, int64_t *v);
/* The decimal after "key" (and spaces) on the line of p[0..n) that starts with key;
 * UINT64_MAX when there is none or no digit follows. */
uint64_t fxt_td_stat_line(const char *p, size_t n, const char *key);

#endif /* FXTRACE_FORMATS_TRACEDAT_READ_INT_H */
