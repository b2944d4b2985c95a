/* src/base/errors.c - names and messages for fxtrace return codes. */
#include <fxtrace/errors.h>

#include <errno.h>
#include <string.h>

/* The public values are Linux's errno numbers, negated. */
#define FXT_CHECK_ERRNO(name, value, msg) _Static_assert(value == name, #name " matches errno");
FXT_ERRNO_MAP(FXT_CHECK_ERRNO)
#undef FXT_CHECK_ERRNO

const char *fxt_strerror(int err)
{
  switch (err) {
  case 0:
    return "success";
#define FXT_STRERROR_CASE(name, value, msg) \
  case -(value):                            \
    return msg;
    FXT_ERRNO_MAP(FXT_STRERROR_CASE)
#undef FXT_STRERROR_CASE
  }
  /* Host return codes pass other errno values through (EMFILE, EROFS, ...): the system's
   * words for them. */
  return err < 0 && err > -4096 ? strerror(-err) : "unknown error";
}

const char *fxt_err_name(int err)
{
  switch (err) {
  case 0:
    return "OK";
#define FXT_ERR_NAME_CASE(name, value, msg) \
  case -(value):                            \
    return #name;
    FXT_ERRNO_MAP(FXT_ERR_NAME_CASE)
#undef FXT_ERR_NAME_CASE
  }
  return "UNKNOWN";
}
