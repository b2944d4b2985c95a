/* src/base/errors.c - names and messages for fxtrace return codes. */
#include <fxtrace/errors.h>

#include <errno.h>
#include <string.h>

/* The public values are Linux's errno numbers, negated. */
#define FXT_CHECK_ERRNO(name, value, msg) _Static_assert(value == name, #name " matches errno");
FXT_ERRNO_MAP(FXT_CHECK_ERRNO)
#undef FXT_CHECK_ERRNO

/* Every fxtrace code, negated as the functions return it, with its name and message. */
static const struct {
  int err;
  const char *name, *msg;
} k_errs[] = {
#define FXT_ERR_ROW(name, value, msg) {-(value), #name, msg},
    FXT_ERRNO_MAP(FXT_ERR_ROW)
#undef FXT_ERR_ROW
};

/* err's row in k_errs, or -1 when it is not an fxtrace code. */
static int find(int err)
{
  for (int i = 0; i < (int)(sizeof k_errs / sizeof k_errs[0]); i++)
    if (k_errs[i].err == err)
      return i;
  return -1;
}

const char *fxt_strerror(int err)
{
  if (err == 0)
    return "success";
  int i = find(err);
  if (i >= 0)
    return k_errs[i].msg;
  /* Host return codes pass other errno values through (EMFILE, EROFS, ...): the system's
   * words for them. */
  return err < 0 && err > -4096 ? strerror(-err) : "unknown error";
}

const char *fxt_err_name(int err)
{
  if (err == 0)
    return "OK";
  int i = find(err);
  return i >= 0 ? k_errs[i].name : "UNKNOWN";
}
