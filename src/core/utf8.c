/* src/core/utf8.c - UTF-8 for the strings fxtrace writes (fxt.h: FXT strings are UTF-8, and
 * Fuchsia's reader refuses a file at a string that is not). Well-formed means RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF. Freestanding, no allocation. */
#include <fxtrace/fxt.h>

#include "mem.h"

/* Length of the well-formed sequence at s[0..n) (n > 0), or 0 when there is none. */
static size_t seq_len(const unsigned char *s, size_t n)
{
  unsigned char c = s[0], lo = 0x80, hi = 0xbf;
  size_t len;
  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    lo = c == 0xe0 ? 0xa0 : 0x80; /* overlong */
    hi = c == 0xed ? 0x9f : 0xbf; /* surrogates */
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    lo = c == 0xf0 ? 0x90 : 0x80; /* overlong */
    hi = c == 0xf4 ? 0x8f : 0xbf; /* above U+10FFFF */
  } else {
    return 0;
  }
  if (n < len || s[1] < lo || s[1] > hi)
    return 0;
  for (size_t i = 2; i < len; i++)
    if (s[i] < 0x80 || s[i] > 0xbf)
      return 0;
  return len;
}

size_t fxt_utf8_valid(const char *s, size_t n)
{
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    if (p[i] < 0x80) { /* the common case: ASCII, then 8 bytes at a time while it lasts */
      i++;
      for (uint64_t w; n - i >= 8; i += 8) {
        memcpy(&w, p + i, 8);
        if (w & UINT64_C(0x8080808080808080))
          break;
      }
      continue;
    }
    size_t len = seq_len(p + i, n - i);
    if (len == 0)
      return i;
    i += len;
  }
  return n;
}

uint32_t fxt_utf8_cut(const char *s, uint32_t n)
{
  const unsigned char *p = (const unsigned char *)s;
  /* The last lead byte among the last four: a sequence it starts that needs more bytes than
   * are left was cut. Continuation bytes with no lead are left alone (the string was not
   * well-formed to begin with; readers show U+FFFD for them). */
  for (uint32_t i = n; i > 0 && n - i < 4; i--) {
    unsigned char c = p[i - 1];
    if ((c & 0xc0) == 0x80)
      continue;
    uint32_t need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return i - 1 + need > n ? i - 1 : n;
  }
  return n;
}

size_t fxt_utf8_sanitize(char *dst, size_t cap, const char *s, size_t n)
{
  static const unsigned char k_fffd[3] = {0xef, 0xbf, 0xbd};
  const unsigned char *p = (const unsigned char *)s;
  unsigned char *o = (unsigned char *)dst;
  size_t i = 0, w = 0;
  while (i < n) {
    size_t len = seq_len(p + i, n - i);
    const unsigned char *from = len ? p + i : k_fffd;
    size_t out = len ? len : 3;
    if (out > cap - w) /* whole characters only */
      break;
    for (size_t k = 0; k < out; k++)
      o[w + k] = from[k];
    w += out;
    i += len ? len : 1;
  }
  return w;
}
