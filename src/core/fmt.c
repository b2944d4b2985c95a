/* src/core/fmt.c - see fmt.h. */
#include "fmt.h"

void fxt_fmt_init(struct fxt_fmt *f, char *buf, size_t size) {
  f->buf = buf;
  f->size = buf ? size : 0;
  f->len = 0;
  if (f->size > 0)
    buf[0] = '\0';
}

static void fmt_char(struct fxt_fmt *f, char c) {
  if (f->len + 1 < f->size) {
    f->buf[f->len++] = c;
    f->buf[f->len] = '\0';
  }
}

void fxt_fmt_str(struct fxt_fmt *f, const char *s) {
  while (*s)
    fmt_char(f, *s++);
}

/* Decimal by subtracting powers of ten: no 64-bit division, at most 9 steps per digit. */
static const uint64_t pow10_table[] = {
    UINT64_C(10000000000000000000), UINT64_C(1000000000000000000),
    UINT64_C(100000000000000000),   UINT64_C(10000000000000000),
    UINT64_C(1000000000000000),     UINT64_C(100000000000000),
    UINT64_C(10000000000000),       UINT64_C(1000000000000),
    UINT64_C(100000000000),         UINT64_C(10000000000),
    UINT64_C(1000000000),           UINT64_C(100000000),
    UINT64_C(10000000),             UINT64_C(1000000),
    UINT64_C(100000),               UINT64_C(10000),
    UINT64_C(1000),                 UINT64_C(100),
    UINT64_C(10),                   UINT64_C(1)};

void fxt_fmt_dec(struct fxt_fmt *f, uint64_t v) {
  int started = 0;
  for (size_t i = 0; i < sizeof pow10_table / sizeof pow10_table[0]; i++) {
    char digit = '0';
    while (v >= pow10_table[i]) {
      v -= pow10_table[i];
      digit++;
    }
    if (digit != '0' || started || pow10_table[i] == 1) {
      fmt_char(f, digit);
      started = 1;
    }
  }
}

void fxt_fmt_hex(struct fxt_fmt *f, uint64_t v) {
  static const char digits[] = "0123456789abcdef";
  int started = 0;
  fxt_fmt_str(f, "0x");
  for (int shift = 60; shift >= 0; shift -= 4) {
    unsigned nibble = (unsigned)(v >> shift) & 0xfu;
    if (nibble != 0 || started || shift == 0) {
      fmt_char(f, digits[nibble]);
      started = 1;
    }
  }
}

void fxt_fmt_spec(struct fxt_fmt *f, const char *spec, const char *const *strs, size_t nstrs,
                  const uint64_t *nums, size_t nnums) {
  size_t next_num = 0, next_str = 0;
  for (const char *p = spec; *p; p++) {
    char conv = p[0] == '%' ? p[1] : '\0';
    if (conv != 'u' && conv != 'x' && conv != 's' && conv != '%') {
      fmt_char(f, *p);
      continue;
    }
    p++;
    if (conv == '%') {
      fmt_char(f, '%');
    } else if (conv == 's') {
      const char *s = next_str < nstrs && strs[next_str] ? strs[next_str] : "";
      next_str++;
      fxt_fmt_str(f, s);
    } else {
      uint64_t v = next_num < nnums ? nums[next_num] : 0;
      next_num++;
      if (conv == 'u')
        fxt_fmt_dec(f, v);
      else
        fxt_fmt_hex(f, v);
    }
  }
}

const char *fxt_str_nth(const char *list, size_t n) {
  for (; n > 0; n--)
    while (*list++ != '\0')
      ;
  return list;
}
