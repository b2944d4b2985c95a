/* fuzz/fuzz_fnprof.c - libFuzzer target for the value of a write to function_profile_enabled
 * (fxt_tfs_kstrtoul, src/host/tracefs.c: the kernel's kstrtoul in base 10, of the
 * first 66 bytes as kstrtoul_from_user reads them).
 *
 * The input, cut at its first NUL, is copied into a heap buffer of exactly its size, so ASan
 * sees any read past the end. Properties checked (abort() on any violation), against a model
 * written here from the kernel's _kstrtoull: the first 66 bytes are an optional '+' and one
 * digit or more, nothing else, for 0 (the value strtoul gives them, when it fits in an
 * unsigned long) or FXT_ERANGE (the digits' value past ULONG_MAX: strtoul's ERANGE), or else
 * FXT_EINVAL - except that an overflow in the digits before a bad byte is FXT_ERANGE too.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fxtrace/errors.h>

#include "../src/host/tracefs_int.h"

static void check(int ok)
{
  if (!ok)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  size_t len = 0;
  while (len < size && data[len] != 0)
    len++;
  char *v = malloc(len + 1);
  if (!v)
    return 0;
  memcpy(v, data, len);
  v[len] = 0;
  unsigned long out = 12345;
  int rc = fxt_tfs_kstrtoul(v, &out);

  /* The model: the digits run of the first 66 bytes after one optional '+'. */
  size_t n = len < 66 ? len : 66, i = v[0] == '+', d = i;
  while (d < n && v[d] >= '0' && v[d] <= '9')
    d++;
  char digits[70];
  memcpy(digits, v + i, d - i);
  digits[d - i] = 0;
  errno = 0;
  unsigned long want = d > i ? strtoul(digits, NULL, 10) : 0;
  int range = d > i && errno == ERANGE;
  if (range)
    check(rc == FXT_ERANGE);
  else if (d == i || d != n)
    check(rc == FXT_EINVAL && out == 12345);
  else
    check(rc == 0 && out == want);
  free(v);
  return 0;
}
