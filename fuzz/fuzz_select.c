/* fuzz/fuzz_select.c - libFuzzer target for the selection options' values
 * (src/formats/select.h): the input, cut at its first NUL, parsed as a list ("1,3-5") and as a
 * time ("S.fraction", "+S"). Properties checked (abort() on any violation, on top of
 * ASan/UBSan):
 *  - a list either parses into at least one range, each lo <= hi, or fails with FXT_EINVAL, no
 *    array, and a message "... at offset N" with N within the text;
 *  - a parsed list printed back ("lo" or "lo-hi", comma-separated) parses into the same ranges;
 *  - a time either parses (relative exactly when it starts with '+'; printed exactly when it
 *    is absolute with at most 6 decimals) or fails with such a message.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/select.h"

static void check(int ok) {
  if (!ok)
    abort();
}

/* The offset a message names is within the text (its end included). */
static void check_offset(const char *err, size_t len) {
  const char *at = strstr(err, " at offset ");
  check(at != NULL);
  check(strtoull(at + 11, NULL, 10) <= len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  check(s != NULL);
  memcpy(s, data, size);
  s[size] = 0;
  size_t len = strlen(s);
  char err[256];
  struct fxt_sel_range *r;
  size_t n;
  int rc = fxt_sel_parse_list(s, &r, &n, err, sizeof err);
  if (rc == 0) {
    check(n >= 1 && r != NULL);
    char *again = malloc(n * 44 + 1);
    check(again != NULL);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
      check(r[i].lo <= r[i].hi);
      o += (size_t)sprintf(again + o, i ? ",%" PRIu64 : "%" PRIu64, r[i].lo);
      if (r[i].hi != r[i].lo)
        o += (size_t)sprintf(again + o, "-%" PRIu64, r[i].hi);
    }
    struct fxt_sel_range *r2;
    size_t n2;
    check(fxt_sel_parse_list(again, &r2, &n2, err, sizeof err) == 0);
    check(n2 == n && memcmp(r2, r, n * sizeof *r) == 0);
    free(r2);
    free(again);
    free(r);
  } else {
    check(rc == FXT_EINVAL && r == NULL && n == 0);
    check_offset(err, len);
  }
  struct fxt_sel_time t;
  rc = fxt_sel_parse_time(s, &t, err, sizeof err);
  if (rc == 0) {
    check(t.relative == (s[0] == '+'));
    const char *dot = strchr(s, '.');
    check(t.printed == (!t.relative && (dot == NULL || strlen(dot + 1) <= 6)));
  } else {
    check(rc == FXT_EINVAL);
    check_offset(err, len);
  }
  free(s);
  return 0;
}
