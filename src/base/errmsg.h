/* src/base/errmsg.h - the message every parser of files (the FXT reader, the trace.dat
 * reader) gives with its error code: "offset N: reason" in the caller's buffer, the position
 * in the file first (STYLE.md, errors: one channel, the code returned, the message beside it).
 */
#ifndef FXTRACE_BASE_ERRMSG_H
#define FXTRACE_BASE_ERRMSG_H

#include <stddef.h>
#include <stdint.h>

/* Writes "offset <off>: " and the formatted reason into err (when err is not NULL and err_size
 * > 0; cut to err_size) and returns code. */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
int fxt_fail_at(char *err, size_t err_size, int code, uint64_t off, const char *fmt, ...);

#endif /* FXTRACE_BASE_ERRMSG_H */
