/* src/core/filter_value.c - the kernel's number and CPU-list readers, as the filter parser
 * uses them (lib/kstrtox.c, lib/bitmap-str.c). No 64-bit division: 32-bit targets need no
 * runtime helper. */
#include "filter_int.h"

#define OVERFLOW 0x80000000u

/* _parse_integer: digits of base from s[0..n) (it also stops at a NUL); returns how many,
 * | OVERFLOW when the value does not fit 64 bits (the value then wraps, as the kernel's does). */
static uint32_t parse_integer(const char *s, uint32_t n, uint32_t base, uint64_t *res)
{
  uint64_t r = 0;
  uint32_t rv = 0;
  for (; n > 0; s++, n--) {
    const uint32_t c = (unsigned char)*s, lc = c | 0x20;
    uint32_t val;
    if (c >= '0' && c <= '9')
      val = c - '0';
    else if (lc >= 'a' && lc <= 'f')
      val = lc - 'a' + 10;
    else
      break;
    if (val >= base)
      break;
    /* r * base + val > 2^64 - 1, without dividing */
    if (base == 16 ? r >> 60 != 0
        : base == 8 ? r >> 61 != 0
                    : r > UINT64_C(1844674407370955161) ||
                          (r == UINT64_C(1844674407370955161) && val > 5))
      rv |= OVERFLOW;
    r = base == 16 ? r << 4 : base == 8 ? r << 3 : (r << 3) + (r << 1);
    r += val;
    rv++;
  }
  *res = r;
  return rv;
}

static bool isxdigit_(unsigned char c)
{
  return fxt_filter_isdigit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/* _kstrtoull with base 0 (auto-detected). */
static int kstrtoull_(const char *s, uint64_t *res)
{
  uint32_t base = 10, rv;
  uint64_t r;
  if (s[0] == '0') {
    if ((s[1] | 0x20) == 'x' && isxdigit_((unsigned char)s[2]))
      base = 16;
    else
      base = 8;
  }
  if (base == 16)
    s += 2;
  rv = parse_integer(s, 0xffffffffu, base, &r);
  if (rv & OVERFLOW)
    return -1; /* -ERANGE */
  if (rv == 0)
    return -1; /* -EINVAL */
  s += rv;
  if (*s == '\n')
    s++;
  if (*s)
    return -1;
  *res = r;
  return 0;
}

int fxt_filter_kstrtoull(const char *s, uint64_t *res)
{
  if (s[0] == '+')
    s++;
  return kstrtoull_(s, res);
}

int fxt_filter_kstrtoll(const char *s, uint64_t *res)
{
  const uint64_t sign = (uint64_t)1 << 63;
  uint64_t tmp;
  if (s[0] == '-') {
    if (kstrtoull_(s + 1, &tmp) != 0)
      return -1;
    if (tmp > sign) /* (long long)-tmp > 0 */
      return -1;
    *res = (uint64_t)0 - tmp;
    return 0;
  }
  if (fxt_filter_kstrtoull(s, &tmp) != 0)
    return -1;
  if (tmp >= sign) /* (long long)tmp < 0 */
    return -1;
  *res = tmp;
  return 0;
}

/* ---- bitmap_parselist ------------------------------------------------------------------- */

struct list {
  const char *s;
  uint32_t n, i;
};

static unsigned char ch(const struct list *l, uint32_t k)
{
  return l->i + k < l->n ? (unsigned char)l->s[l->i + k] : 0;
}

static bool end_of_str(unsigned char c)
{
  return c == '\0' || c == '\n';
}

static bool end_of_region_(unsigned char c) /* __end_of_region */
{
  return fxt_filter_isspace(c) || c == ',';
}

static bool end_of_region(unsigned char c)
{
  return end_of_region_(c) || end_of_str(c);
}

/* bitmap_getnum: a decimal number or N (the last bit). */
static bool getnum(struct list *l, uint32_t *num, uint32_t lastbit)
{
  uint32_t len;
  uint64_t n;
  if (ch(l, 0) == 'N') {
    *num = lastbit;
    l->i++;
    return true;
  }
  len = parse_integer(l->s + l->i, l->n - l->i, 10, &n);
  if (len == 0)
    return false;
  if ((len & OVERFLOW) || n > 0xffffffffu)
    return false;
  *num = (uint32_t)n;
  l->i += len;
  return true;
}

/* The separator sep, then a number: a region's "-b", ":o" and "/g". */
static bool sep_getnum(struct list *l, unsigned char sep, uint32_t *num, uint32_t lastbit)
{
  if (ch(l, 0) != sep)
    return false;
  l->i++;
  return getnum(l, num, lastbit);
}

struct region {
  uint32_t start, end, off, group_len;
};

/* bitmap_parse_region: one "a", "a-b", "a-b:o/g" or "all[:o/g]". Returns 1 when parsing goes
 * on, 0 when the list ended, -1 on an error. */
static int parse_region(struct list *l, struct region *r, uint32_t nbits)
{
  const uint32_t lastbit = nbits - 1;
  if ((ch(l, 0) | 0x20) == 'a' && (ch(l, 1) | 0x20) == 'l' && (ch(l, 2) | 0x20) == 'l') {
    r->start = 0;
    r->end = lastbit;
    l->i += 3;
    goto check_pattern;
  }
  if (!getnum(l, &r->start, lastbit))
    return -1;
  if (end_of_region(ch(l, 0))) {
    r->end = r->start;
    goto no_pattern;
  }
  if (!sep_getnum(l, '-', &r->end, lastbit))
    return -1;
check_pattern:
  if (end_of_region(ch(l, 0)))
    goto no_pattern;
  if (!sep_getnum(l, ':', &r->off, lastbit))
    return -1;
  return sep_getnum(l, '/', &r->group_len, lastbit) ? 1 : -1;
no_pattern:
  r->off = r->end + 1;
  r->group_len = r->end + 1;
  return end_of_str(ch(l, 0)) ? 0 : 1;
}

bool fxt_filter_cpulist(const char *s, uint32_t n, uint8_t *mask, uint32_t nbits)
{
  struct list l = {s, n, 0};
  memset(mask, 0, (nbits + 7) / 8);
  for (;;) {
    struct region r;
    int more;
    while (end_of_region_(ch(&l, 0)) && !end_of_str(ch(&l, 0))) /* bitmap_find_region */
      l.i++;
    if (end_of_str(ch(&l, 0)))
      return true;
    more = parse_region(&l, &r, nbits);
    if (more < 0)
      return false;
    /* bitmap_check_region */
    if (r.start > r.end || r.group_len == 0 || r.off > r.group_len || r.end >= nbits)
      return false;
    /* bitmap_set_region (uint32 arithmetic, as the kernel's unsigned int) */
    for (uint32_t start = r.start; start <= r.end; start += r.group_len) {
      const uint32_t span = r.end - start + 1, len = span < r.off ? span : r.off;
      for (uint32_t b = start; b < start + len; b++)
        mask[b >> 3] = (uint8_t)(mask[b >> 3] | (1u << (b & 7)));
    }
    if (!more)
      return true;
  }
}

uint32_t fxt_filter_mask_weight(const uint8_t *mask, uint32_t nbits, uint32_t *first)
{
  uint32_t w = 0;
  *first = nbits;
  for (uint32_t b = 0; b < nbits; b++) {
    if (mask[b >> 3] >> (b & 7) & 1) {
      if (!w)
        *first = b;
      w++;
    }
  }
  return w;
}
