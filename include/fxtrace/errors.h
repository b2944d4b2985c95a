/* fxtrace/errors.h - the one error channel: functions return 0 (or a count) or a negative
 * errno value. The values equal Linux's errno numbers so host code may compare with -EINVAL
 * from <errno.h>; they are spelled out here because a freestanding build has no <errno.h>.
 *
 * User API (docs/architecture.md, "Public headers").
 */
#ifndef FXTRACE_ERRORS_H
#define FXTRACE_ERRORS_H

#include "common.h"

/* X(name, positive value, message) */
#define FXT_ERRNO_MAP(X)                                                                  \
  X(EPERM, 1, "operation not permitted")                                                  \
  X(ENOENT, 2, "no such entry")                                                           \
  X(ESRCH, 3, "no such process")                                                          \
  X(E2BIG, 7, "argument list or record too long")                                         \
  X(EAGAIN, 11, "resource temporarily unavailable")                                       \
  X(ENOMEM, 12, "out of memory")                                                          \
  X(EBUSY, 16, "resource busy")                                                           \
  X(EINVAL, 22, "invalid argument")                                                       \
  X(ENOSPC, 28, "no space left (a buffer, a table or a device is full)")                  \
  X(ERANGE, 34, "value out of range")                                                     \
  X(ENOSYS, 38, "not implemented")                                                        \
  X(EBADMSG, 74, "malformed record")                                                      \
  X(EOVERFLOW, 75, "value too large")                                                     \
  X(EMSGSIZE, 90, "record too long")                                                      \
  X(ENOBUFS, 105, "buffer too small")

enum fxt_errno {
#define FXT_ERRNO_ENUM(name, value, msg) FXT_##name = -(value),
  FXT_ERRNO_MAP(FXT_ERRNO_ENUM)
#undef FXT_ERRNO_ENUM
};

FXT_EXTERN_C_BEGIN
/* Message for a return code (0 or negative): the text above, the system's (strerror) for
 * another errno value a host function passed through (EMFILE, EROFS, ...), "unknown error"
 * for anything else. Host only. */
FXT_API const char *fxt_strerror(int err);
/* Symbolic name ("EINVAL") for a return code; "UNKNOWN" for anything else. Host only. */
FXT_API const char *fxt_err_name(int err);
FXT_EXTERN_C_END

#endif /* FXTRACE_ERRORS_H */
