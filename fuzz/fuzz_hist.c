/* fuzz/fuzz_hist.c - libFuzzer target for `fxtrace hist`'s description (src/formats/hist.h):
 * the input split at its NUL bytes into KEYS, VALS, SORT and SIZE (those missing: NULL).
 * Properties checked (abort() on any violation, on top of ASan/UBSan):
 *  - the result is 0 or FXT_EINVAL with a NUL-terminated message;
 *  - on success: 1 to 3 keys and at most 15 values, each named (NUL-terminated, no '.'),
 *    buckets only with their modifier and never 0; 1 or 2 sort keys naming hitcount, a key or
 *    a value; a size that is a power of two from 128 to 131072.
 */
#define _GNU_SOURCE /* strnlen */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/hist.h"

static void check(int ok) {
  if (!ok)
    abort();
}

static void check_field(const struct fxt_hist_field *f) {
  size_t n = strnlen(f->name, sizeof f->name);
  check(n > 0 && n < sizeof f->name && strchr(f->name, '.') == NULL);
  check((f->mod == FXT_HIST_BUCKETS) == (f->buckets != 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  check(s != NULL);
  memcpy(s, data, size);
  s[size] = 0;
  const char *part[4] = {NULL, NULL, NULL, NULL};
  const char *p = s;
  for (int i = 0; i < 4 && p <= s + size; i++) {
    part[i] = p;
    p += strlen(p) + 1;
  }
  struct fxt_hist_spec spec;
  char err[256];
  err[0] = 1;
  int rc = fxt_hist_parse(&spec, part[0], part[1], part[2], part[3], err, sizeof err);
  if (rc != 0) {
    check(rc == FXT_EINVAL && memchr(err, 0, sizeof err) != NULL);
  } else {
    check(spec.nkeys >= 1 && spec.nkeys <= FXT_HIST_MAX_KEYS && spec.nvals <= FXT_HIST_MAX_VALS);
    for (uint32_t i = 0; i < spec.nkeys; i++)
      check_field(&spec.keys[i]);
    for (uint32_t i = 0; i < spec.nvals; i++) {
      check_field(&spec.vals[i]);
      check(spec.vals[i].mod == FXT_HIST_PLAIN || spec.vals[i].mod == FXT_HIST_HEX);
    }
    check(spec.nsort >= 1 && spec.nsort <= FXT_HIST_MAX_SORT);
    for (uint32_t i = 0; i < spec.nsort; i++) {
      int f = spec.sort[i].field;
      check(f == -1 || (f >= 0 && (uint32_t)f < spec.nkeys) ||
            (f >= FXT_HIST_MAX_KEYS && (uint32_t)(f - FXT_HIST_MAX_KEYS) < spec.nvals));
    }
    check(spec.size >= 128 && spec.size <= 131072 && (spec.size & (spec.size - 1)) == 0);
  }
  free(s);
  return 0;
}
