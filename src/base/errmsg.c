/* src/base/errmsg.c - the parsers' error messages (errmsg.h). */
#include "errmsg.h"

#include <stdarg.h>
#include <stdio.h>

int fxt_fail_at(char *err, size_t err_size, int code, uint64_t off, const char *fmt, ...) {
  if (err == NULL || err_size == 0)
    return code;
  int n = snprintf(err, err_size, "offset %llu: ", (unsigned long long)off);
  if (n >= 0 && (size_t)n < err_size) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, err_size - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return code;
}
