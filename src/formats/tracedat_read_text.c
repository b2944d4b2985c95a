/* src/formats/tracedat_read_text.c - the text inside a trace.dat's options and sections, read
 * by the structure reader (tracedat_read.c): the bracketed trace clock, numbers as strtoll
 * reads them, "key: value" lines of per-CPU stats (tracedat_read_int.h).
 */
#include "tracedat_read_int.h"

#include <stdlib.h>
#include <string.h>

#include "tracedat_read.h"

/* The bracketed name in trace_clock text ("local global [mono] ..."). */
struct fxt_td_text fxt_td_bracketed(const char *p, size_t n) {
  const char *open = memchr(p, '[', n);
  const char *close = open ? memchr(open, ']', n - (size_t)(open - p)) : NULL;
  if (close == NULL || close == open + 1)
    return (struct fxt_td_text){NULL, 0};
  return (struct fxt_td_text){open + 1, (uint32_t)(close - open - 1)};
}

/* strtoll(s, NULL, 0) over a bounded, possibly unterminated text. */
bool fxt_td_parse_ll(const char *p, size_t n, int64_t *v) {
  char tmp[32];
  size_t k = 0;
  while (k < n && k < sizeof tmp - 1 && p[k] != '\0')
    k++;
  memcpy(tmp, p, k);
  tmp[k] = '\0';
  char *end;
  long long x = strtoll(tmp, &end, 0);
  if (end == tmp)
    return false;
  *v = (int64_t)x;
  return true;
}

uint64_t fxt_td_stat_line(const char *p, size_t n, const char *key) {
  size_t kl = strlen(key);
  for (size_t i = 0; i + kl <= n; i++) {
    if ((i == 0 || p[i - 1] == '\n') && memcmp(p + i, key, kl) == 0) {
      uint64_t v = 0;
      size_t j = i + kl, d = 0;
      while (j < n && p[j] == ' ')
        j++;
      while (j < n && p[j] >= '0' && p[j] <= '9' && d < 20) {
        v = v * 10 + (uint64_t)(p[j++] - '0');
        d++;
      }
      return d ? v : UINT64_MAX;
    }
  }
  return UINT64_MAX;
}
