/* src/formats/tracedat_read_int.h - helpers shared by the trace.dat reader's files
 * (tracedat_read_*.c, tracedat_read.c). */
#ifndef FXTRACE_FORMATS_TRACEDAT_READ_INT_H
#define FXTRACE_FORMATS_TRACEDAT_READ_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes "offset N: <fmt...>" into err (when err_size > 0) and returns code. */
int fxt_td_fail(char *err, size_t err_size, int code, uint64_t offset, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

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

#endif /* FXTRACE_FORMATS_TRACEDAT_READ_INT_H */
