/* src/base/errors.c - names and messages for fxtrace return codes. */
#include <fxtrace/errors.h>

#include <errno.h>
#include <string.h>

#include "../core/fmt.h"

/* The public values are Linux's errno numbers, negated. */
#define FXT_CHECK_ERRNO(name, value, msg) _Static_assert(value == name, #name " matches errno");
FXT_ERRNO_MAP(FXT_CHECK_ERRNO)
#undef FXT_CHECK_ERRNO

/* Every fxtrace code, negated as the functions return it; each one's name and message, row by
 * row, in one string (fxt_str_nth: no pointers to relocate). */
static const int k_errs[] = {
#define FXT_ERR_CODE(name, value, msg) -(value),
    FXT_ERRNO_MAP(FXT_ERR_CODE)
#undef FXT_ERR_CODE
};
static const char k_words[] =
#define FXT_ERR_WORDS(name, value, msg) #name "\0" msg "\0"
    FXT_ERRNO_MAP(FXT_ERR_WORDS)
#undef FXT_ERR_WORDS
    ;

/* err's row in k_errs, or -1 when it is not an fxtrace code. */
static int find(int err)
{
  for (int i = 0; i < (int)(sizeof k_errs / sizeof k_errs[0]); i++)
    if (k_errs[i] == err)
      return i;
  return -1;
}

const char *fxt_strerror(int err)
{
  if (err == 0)
    return "success";
  int i = find(err);
  if (i >= 0)
    return fxt_str_nth(k_words, 2 * (size_t)i + 1);
  /* Host return codes pass other errno values through (EMFILE, EROFS, ...): the system's
   * words for them. */
  return err < 0 && err > -4096 ? strerror(-err) : "unknown error";
}

const char *fxt_err_name(int err)
{
  if (err == 0)
    return "OK";
  int i = find(err);
  return i >= 0 ? fxt_str_nth(k_words, 2 * (size_t)i) : "UNKNOWN";
}
