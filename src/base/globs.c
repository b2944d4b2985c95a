/* src/base/globs.c - event glob lists (globs.h): one grammar for the tracer's enabled patterns
 * and the readers' --events. */
#include "globs.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

char *fxt_globs_normalize(const char *in)
{
  size_t n = strlen(in);
  char *out = malloc(2 * n + 3), *o = out;
  if (!out)
    return NULL;
  for (const char *p = in; *p;) {
    while (*p == ' ' || *p == '\t' || *p == ',')
      p++;
    const char *start = p;
    while (*p && *p != ',')
      p++;
    const char *e = p;
    while (e > start && (e[-1] == ' ' || e[-1] == '\t'))
      e--;
    if (e == start)
      continue;
    if (memchr(start, ' ', (size_t)(e - start))) {
      free(out);
      return NULL;
    }
    if (o != out)
      *o++ = ',';
    memcpy(o, start, (size_t)(e - start));
    o += e - start;
    if (!memchr(start, ':', (size_t)(e - start))) {
      memcpy(o, ":*", 2);
      o += 2;
    }
  }
  *o = 0;
  return out;
}

bool fxt_globs_match(const char *norm, const char *name)
{
  bool on = false;
  for (const char *p = norm; *p;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    bool negative = len > 0 && *p == '!';
    char glob[512];
    if (len - negative < sizeof(glob)) {
      memcpy(glob, p + negative, len - negative);
      glob[len - negative] = 0;
      if (fnmatch(glob, name, 0) == 0)
        on = !negative;
    }
    p += len + (comma != NULL);
  }
  return on;
}
