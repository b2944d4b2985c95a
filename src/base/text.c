/* src/base/text.c - ftrace text for fxtrace events (see text.h). Hot paths (prefix,
 * integers, strings) are written by hand: `fxtrace report` prints millions of lines a second
 * and snprintf would dominate. Floats go through snprintf.
 */
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The writers below are inlined: a line makes a dozen of them, and a call each was a fifth of
 * `fxtrace report`'s instructions. */
static inline void put(struct fxt_tbuf *b, const char *s, size_t n) {
  if (n == 0 || !fxt_tbuf_reserve(b, n))
    return;
  char *d = b->data + b->len;
  if (n > 16) {
    memcpy(d, s, n);
  } else if (n >= 8) { /* short texts (names, digits) in two overlapping moves, not a call */
    uint64_t x, y;
    memcpy(&x, s, 8);
    memcpy(&y, s + n - 8, 8);
    memcpy(d, &x, 8);
    memcpy(d + n - 8, &y, 8);
  } else if (n >= 4) {
    uint32_t x, y;
    memcpy(&x, s, 4);
    memcpy(&y, s + n - 4, 4);
    memcpy(d, &x, 4);
    memcpy(d + n - 4, &y, 4);
  } else {
    for (size_t i = 0; i < n; i++)
      d[i] = s[i];
  }
  b->len += n;
}

static inline void put_char(struct fxt_tbuf *b, char c) {
  if (fxt_tbuf_reserve(b, 1))
    b->data[b->len++] = c;
}

static inline void put_fill(struct fxt_tbuf *b, char c, size_t n) {
  if (n == 0 || !fxt_tbuf_reserve(b, n))
    return;
  memset(b->data + b->len, c, n);
  b->len += n;
}

/* "00" "01" ... "99": decimal two digits at a time (half the divisions). */
static const char k_2dig[201] = "0001020304050607080910111213141516171819"
                                "2021222324252627282930313233343536373839"
                                "4041424344454647484950515253545556575859"
                                "6061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";

/* Decimal digits of v at the end of buf[24]; returns the first. */
static inline char *udigits(char *end, uint64_t v) {
  char *p = end;
  while (v > UINT32_MAX) {
    unsigned r = (unsigned)(v % 100);
    v /= 100;
    p -= 2;
    memcpy(p, k_2dig + 2 * r, 2);
  }
  uint32_t w = (uint32_t)v; /* 32-bit divisions from here: cheaper */
  while (w >= 100) {
    unsigned r = w % 100;
    w /= 100;
    p -= 2;
    memcpy(p, k_2dig + 2 * r, 2);
  }
  if (w >= 10) {
    p -= 2;
    memcpy(p, k_2dig + 2 * w, 2);
  } else {
    *--p = (char)('0' + w);
  }
  return p;
}

/* Digits of v in base (8, 10, 16) at the end of buf[24]; returns the first. */
static char *digits(char *end, uint64_t v, unsigned base, bool upper) {
  if (base == 10)
    return udigits(end, v);
  const char *set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  unsigned shift = base == 16 ? 4 : 3, mask = base - 1;
  char *p = end;
  do {
    *--p = set[v & mask];
    v >>= shift;
  } while (v != 0);
  return p;
}

static void put_udec(struct fxt_tbuf *b, uint64_t v) {
  char buf[24], *p = udigits(buf + sizeof buf, v);
  put(b, p, (size_t)(buf + sizeof buf - p));
}

static void put_sdec(struct fxt_tbuf *b, int64_t v) {
  if (v < 0) {
    put_char(b, '-');
    put_udec(b, (uint64_t)-(v + 1) + 1); /* no overflow at INT64_MIN */
  } else {
    put_udec(b, (uint64_t)v);
  }
}

static void put_hex(struct fxt_tbuf *b, uint64_t v) {
  char buf[24], *p = digits(buf + sizeof buf, v, 16, false);
  put(b, "0x", 2);
  put(b, p, (size_t)(buf + sizeof buf - p));
}

/* ---- the line prefix ---------------------------------------------------------------------- */

#define COMM_MAX 15 /* TASK_COMM_LEN - 1 */
/* Room for the longest prefix (16 of comm, '-', a 20-digit pid, " [", a 10-digit CPU,
 * "] ..... ", 14 digits of seconds, '.', 6 of microseconds, ": ") and for the copies of its
 * kept parts, 64 + 16 + 8 bytes. */
#define PREFIX_MAX 96

/* "<comm>-<pid> [<cpu>] ..... " into c->text (at most 16 + 1 + 20 + 2 + 10 + 8 bytes). */
static void prefix_head(struct fxt_tbuf_prefix *c, const char *comm, size_t comm_len,
                        uint64_t pid, uint32_t cpu) {
  char *o = c->text, buf[24];
  memset(o, ' ', 16 - comm_len);
  o += 16 - comm_len;
  memcpy(o, comm, comm_len);
  o += comm_len;
  *o++ = '-';
  char *p = udigits(buf + sizeof buf, pid);
  size_t n = (size_t)(buf + sizeof buf - p);
  memcpy(o, p, n);
  o += n;
  if (n < 7) {
    memset(o, ' ', 7 - n);
    o += 7 - n;
  }
  memcpy(o, " [", 2);
  o += 2;
  if (cpu < 1000) {
    *o++ = (char)('0' + cpu / 100);
    memcpy(o, k_2dig + 2 * (cpu % 100), 2);
    o += 2;
  } else {
    p = udigits(buf + sizeof buf, cpu);
    n = (size_t)(buf + sizeof buf - p);
    memcpy(o, p, n);
    o += n;
  }
  memcpy(o, "] ..... ", 8);
  o += 8;
  c->len = (uint8_t)(o - c->text);
  c->pid = pid;
  c->cpu = cpu;
  c->comm_len = (uint8_t)comm_len;
  memcpy(c->comm, comm, comm_len);
  c->comm_ok = fxt_utf8_valid(comm, comm_len) == comm_len;
}

void fxt_text_prefix(struct fxt_tbuf *b, const char *comm, size_t comm_len, uint64_t pid,
                     uint32_t cpu, uint64_t ns) {
  if (comm == NULL || comm_len == 0) {
    comm = "<...>";
    comm_len = 5;
  }
  if (comm_len > COMM_MAX) /* on a character boundary */
    comm_len = fxt_utf8_cut(comm, COMM_MAX);
  if (cpu == FXTF_CPU_UNKNOWN)
    cpu = 0;
  if (!fxt_tbuf_reserve(b, PREFIX_MAX))
    return;
  /* Written in place: the room for the longest was reserved (the fixed-size copies of the
   * kept parts included). */
  struct fxt_tbuf_prefix *c = &b->pc;
  if (c->len == 0 || c->pid != pid || c->cpu != cpu || c->comm_len != comm_len ||
      memcmp(c->comm, comm, comm_len) != 0)
    prefix_head(c, comm, comm_len, pid, cpu);
  char *o = b->data + b->len;
  memcpy(o, c->text, sizeof c->text);
  o += c->len;
  uint64_t us = ns / 1000 + (ns % 1000 >= 500); /* (ns + 500) / 1000 without overflow */
  uint64_t sec = us / 1000000;
  if (c->sec_len == 0 || c->sec != sec) { /* "%5lu." */
    char buf[24], *p = udigits(buf + sizeof buf, sec), *s = c->sec_text;
    size_t n = (size_t)(buf + sizeof buf - p);
    if (n < 5) {
      memset(s, ' ', 5 - n);
      s += 5 - n;
    }
    memcpy(s, p, n);
    s[n] = '.';
    c->sec_len = (uint8_t)(s + n + 1 - c->sec_text);
    c->sec = sec;
  }
  memcpy(o, c->sec_text, 16);
  o += c->sec_len;
  unsigned frac = (unsigned)(us % 1000000);
  memcpy(o, k_2dig + 2 * (frac / 10000), 2);
  memcpy(o + 2, k_2dig + 2 * (frac / 100 % 100), 2);
  memcpy(o + 4, k_2dig + 2 * (frac % 100), 2);
  memcpy(o + 6, ": ", 2);
  o += 8;
  b->len = (size_t)(o - b->data);
}

/* ---- printf ------------------------------------------------------------------------------- */

struct spec {
  bool minus, plus, space, hash, zero;
  bool bad;  /* a '*' found no integer argument */
  int width; /* 0: none */
  int prec;  /* -1: none */
  int bits;  /* integer width from the length modifier: 8, 16, 32 (none) or 64 */
  char conv;
};

struct args {
  const struct fxt_arg *v;
  uint32_t n, next;
};

static const struct fxt_arg *next_arg(struct args *a) {
  return a->next < a->n ? &a->v[a->next++] : NULL;
}

/* The argument's bits as an integer, for integer conversions and '*'. */
static inline FXT_ALWAYS_INLINE bool arg_bits(const struct fxt_arg *a, uint64_t *v) {
  if (a == NULL)
    return false;
  switch (a->type) {
  case FXT_ARG_INT32:
    *v = (uint64_t)(int64_t)a->value.i32; /* sign-extended, as C promotes */
    return true;
  case FXT_ARG_UINT32:
    *v = a->value.u32;
    return true;
  case FXT_ARG_INT64:
    *v = (uint64_t)a->value.i64;
    return true;
  case FXT_ARG_UINT64:
  case FXT_ARG_POINTER:
  case FXT_ARG_KOID:
    *v = a->value.u64;
    return true;
  case FXT_ARG_BOOL:
    *v = a->value.b ? 1 : 0;
    return true;
  default:
    return false;
  }
}

static uint64_t low_mask(int bits) { return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1; }

/* v cut to bits, as a sign and magnitude (two's complement). */
static bool split_signed(uint64_t v, int bits, uint64_t *mag) {
  uint64_t m = low_mask(bits);
  v &= m;
  bool neg = (v >> (bits - 1)) & 1;
  *mag = neg ? (~v + 1) & m : v;
  if (neg && *mag == 0) /* the most negative value: its magnitude is 2^(bits-1) */
    *mag = UINT64_C(1) << (bits - 1);
  return neg;
}

/* A '*' width or precision: an integer argument read as int. */
static bool star_value(struct args *a, int *out) {
  uint64_t v;
  if (!arg_bits(next_arg(a), &v))
    return false;
  uint64_t mag;
  bool neg = split_signed(v, 32, &mag);
  if (mag > FXT_TEXT_MAX_WIDTH)
    mag = FXT_TEXT_MAX_WIDTH;
  *out = neg ? -(int)mag : (int)mag;
  return true;
}

static const char *parse_number(const char *p, const char *end, int *out) {
  int n = 0;
  for (; p < end && *p >= '0' && *p <= '9'; p++)
    n = n >= FXT_TEXT_MAX_WIDTH ? FXT_TEXT_MAX_WIDTH : n * 10 + (*p - '0');
  *out = n > FXT_TEXT_MAX_WIDTH ? FXT_TEXT_MAX_WIDTH : n;
  return p;
}

static const char *parse_flags(const char *p, const char *end, struct spec *s) {
  for (; p < end; p++) {
    switch (*p) {
    case '-': s->minus = true; break;
    case '+': s->plus = true; break;
    case ' ': s->space = true; break;
    case '#': s->hash = true; break;
    case '0': s->zero = true; break;
    default: return p;
    }
  }
  return p;
}

static const char *parse_width(const char *p, const char *end, struct spec *s, struct args *a) {
  if (p < end && *p == '*') {
    int w = 0;
    s->bad |= !star_value(a, &w);
    if (w < 0) { /* a negative '*' width is the '-' flag and its magnitude (C 7.21.6.1) */
      s->minus = true;
      w = -w;
    }
    s->width = w;
    return p + 1;
  }
  return parse_number(p, end, &s->width);
}

static const char *parse_prec(const char *p, const char *end, struct spec *s, struct args *a) {
  s->prec = -1;
  if (p >= end || *p != '.')
    return p;
  p++;
  if (p < end && *p == '*') {
    int v = 0;
    s->bad |= !star_value(a, &v);
    s->prec = v < 0 ? -1 : v; /* a negative one is as if omitted */
    return p + 1;
  }
  return parse_number(p, end, &s->prec);
}

/* Inlined, as arg_bits: the common conversions call both once each. */
static inline FXT_ALWAYS_INLINE const char *parse_length(const char *p, const char *end,
                                                         struct spec *s) {
  s->bits = 32;
  if (p >= end)
    return p;
  if (*p == 'h') {
    bool hh = p + 1 < end && p[1] == 'h';
    s->bits = hh ? 8 : 16;
    return p + (hh ? 2 : 1);
  }
  if (*p == 'l') {
    s->bits = 64;
    return p + (p + 1 < end && p[1] == 'l' ? 2 : 1);
  }
  if (*p == 'z' || *p == 'j' || *p == 't' || *p == 'L') {
    s->bits = 64;
    return p + 1;
  }
  return p;
}

/* Sign or prefix, zeros and digits, padded to the width. */
static void put_padded(struct fxt_tbuf *b, const struct spec *s, const char *pre, size_t npre,
                       size_t zeros, const char *dig, size_t ndig) {
  size_t body = npre + zeros + ndig;
  size_t pad = (size_t)s->width > body ? (size_t)s->width - body : 0;
  if (!s->minus && !(s->zero && s->prec < 0))
    put_fill(b, ' ', pad);
  for (size_t i = 0; i < npre; i++) /* a sign or 0x: at most 2 */
    put_char(b, pre[i]);
  if (!s->minus && s->zero && s->prec < 0)
    put_fill(b, '0', pad);
  put_fill(b, '0', zeros);
  put(b, dig, ndig);
  if (s->minus)
    put_fill(b, ' ', pad);
}

static void put_integer(struct fxt_tbuf *b, const struct spec *s, uint64_t v) {
  char buf[24], pre[3];
  size_t npre = 0;
  unsigned base = 10;
  bool neg = false;
  uint64_t mag = v & low_mask(s->bits);
  if (s->conv == 'd' || s->conv == 'i') {
    neg = split_signed(v, s->bits, &mag);
    if (neg || s->plus || s->space)
      pre[npre++] = neg ? '-' : s->plus ? '+' : ' ';
  } else if (s->conv == 'x' || s->conv == 'X' || s->conv == 'p') {
    base = 16;
    if (s->conv == 'p') /* a pointer: its 64 bits, always with 0x */
      mag = v;
    if ((s->hash && mag != 0) || s->conv == 'p') {
      pre[npre++] = '0';
      pre[npre++] = s->conv == 'X' ? 'X' : 'x';
    }
  } else if (s->conv == 'o') {
    base = 8;
  }
  char *d = digits(buf + sizeof buf, mag, base, s->conv == 'X');
  size_t ndig = (size_t)(buf + sizeof buf - d);
  if (s->prec == 0 && mag == 0)
    ndig = 0; /* C: precision 0 prints no digits for 0 */
  size_t zeros = s->prec > 0 && (size_t)s->prec > ndig ? (size_t)s->prec - ndig : 0;
  if (base == 8 && s->hash && zeros == 0 && (ndig == 0 || *d != '0'))
    zeros = 1; /* '#' with o: the first digit is 0 */
  put_padded(b, s, pre, npre, zeros, d, ndig);
}

static void put_string(struct fxt_tbuf *b, const struct spec *s, const char *p, size_t n) {
  if (s->prec >= 0 && (size_t)s->prec < n)
    n = (size_t)s->prec;
  struct spec plain = *s;
  plain.zero = false;
  plain.prec = -1;
  put_padded(b, &plain, "", 0, 0, p, n);
}

static void put_float(struct fxt_tbuf *b, const struct spec *s, double v) {
  char f[16];
  size_t n = 0;
  f[n++] = '%';
  if (s->minus) f[n++] = '-';
  if (s->plus) f[n++] = '+';
  if (s->space) f[n++] = ' ';
  if (s->hash) f[n++] = '#';
  if (s->zero) f[n++] = '0';
  f[n++] = '*';
  f[n++] = '.';
  f[n++] = '*';
  f[n++] = s->conv;
  f[n] = '\0';
  int prec = s->prec; /* -1 (none) passed to '.*' is as if omitted */
  int len = snprintf(NULL, 0, f, s->width, prec, v);
  if (len < 0 || !fxt_tbuf_reserve(b, (size_t)len + 1))
    return;
  snprintf(b->data + b->len, (size_t)len + 1, f, s->width, prec, v);
  b->len += (size_t)len;
}

/* One conversion, after its spec was parsed. */
static void convert(struct fxt_tbuf *b, const struct spec *s, struct args *a) {
  const struct fxt_arg *arg = next_arg(a);
  uint64_t v;
  if (s->bad || arg == NULL) {
    put(b, FXT_TEXT_BAD_ARG, sizeof FXT_TEXT_BAD_ARG - 1);
    return;
  }
  switch (s->conv) {
  case 's':
    if (arg->type != FXT_ARG_STRING)
      break;
    put_string(b, s, arg->value.str.data ? arg->value.str.data : "", arg->value.str.len);
    return;
  case 'c': {
    if (!arg_bits(arg, &v))
      break;
    char c = (char)(unsigned char)v;
    put_string(b, s, &c, 1);
    return;
  }
  case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case 'a': case 'A':
    if (arg->type != FXT_ARG_DOUBLE)
      break;
    put_float(b, s, arg->value.f64);
    return;
  default: /* d i u x X o p */
    if (!arg_bits(arg, &v))
      break;
    put_integer(b, s, v);
    return;
  }
  put(b, FXT_TEXT_BAD_ARG, sizeof FXT_TEXT_BAD_ARG - 1);
}

static bool known_conv(char c) {
  switch (c) {
  case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': case 'c': case 's': case 'p':
  case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case 'a': case 'A':
    return true;
  default:
    return false;
  }
}

/* The common conversions with no flag, width or precision (%d %i %u %x %s with any length):
 * what convert() prints for them, without the general padding; false for others. */
static bool plain_conv(struct fxt_tbuf *b, char conv, int bits, struct args *a) {
  if (conv != 'd' && conv != 'i' && conv != 'u' && conv != 'x' && conv != 's')
    return false;
  const struct fxt_arg *arg = next_arg(a);
  uint64_t v;
  if (arg == NULL || (conv == 's' ? arg->type != FXT_ARG_STRING : !arg_bits(arg, &v))) {
    put(b, FXT_TEXT_BAD_ARG, sizeof FXT_TEXT_BAD_ARG - 1);
    return true;
  }
  if (conv == 's') {
    put(b, arg->value.str.data ? arg->value.str.data : "", arg->value.str.len);
    return true;
  }
  char buf[24], *p;
  if (conv == 'x') {
    p = digits(buf + sizeof buf, v & low_mask(bits), 16, false);
  } else if (conv == 'u') {
    p = udigits(buf + sizeof buf, v & low_mask(bits));
  } else {
    uint64_t mag;
    if (split_signed(v, bits, &mag))
      put_char(b, '-');
    p = udigits(buf + sizeof buf, mag);
  }
  put(b, p, (size_t)(buf + sizeof buf - p));
  return true;
}

void fxt_text_printf(struct fxt_tbuf *b, const char *fmt, size_t fmt_len,
                     const struct fxt_arg *args, uint32_t nargs) {
  struct args a = {args, nargs, 0};
  const char *p = fmt, *end = fmt + fmt_len;
  while (p < end) {
    const char *pct = memchr(p, '%', (size_t)(end - p));
    if (pct == NULL)
      pct = end;
    put(b, p, (size_t)(pct - p));
    if (pct == end)
      return;
    if (pct + 1 < end && pct[1] == '%') {
      put_char(b, '%');
      p = pct + 2;
      continue;
    }
    struct spec s = {0};
    const char *q = pct + 1;
    if (q < end && !(*q == '-' || *q == '+' || *q == ' ' || *q == '#' || *q == '*' ||
                     *q == '.' || (*q >= '0' && *q <= '9'))) {
      q = parse_length(q, end, &s);
      if (q < end && plain_conv(b, *q, s.bits, &a)) {
        p = q + 1;
        continue;
      }
      q = pct + 1;
    }
    q = parse_flags(q, end, &s);
    q = parse_width(q, end, &s, &a);
    q = parse_prec(q, end, &s, &a);
    q = parse_length(q, end, &s);
    if (q >= end || !known_conv(*q)) { /* malformed: printed as written, no argument used */
      q = q < end ? q + 1 : end;
      put(b, pct, (size_t)(q - pct));
      p = q;
      continue;
    }
    s.conv = *q;
    convert(b, &s, &a);
    p = q + 1;
  }
}

/* ---- values and pairs ---------------------------------------------------------------------- */

void fxt_text_value(struct fxt_tbuf *b, const struct fxt_arg *a) {
  char buf[40];
  int n;
  switch (a->type) {
  case FXT_ARG_INT32: put_sdec(b, a->value.i32); return;
  case FXT_ARG_INT64: put_sdec(b, a->value.i64); return;
  case FXT_ARG_UINT32: put_udec(b, a->value.u32); return;
  case FXT_ARG_UINT64:
  case FXT_ARG_KOID: put_udec(b, a->value.u64); return;
  case FXT_ARG_POINTER: put_hex(b, a->value.pointer); return;
  case FXT_ARG_BOOL: put_char(b, a->value.b ? '1' : '0'); return;
  case FXT_ARG_STRING:
    put(b, a->value.str.data ? a->value.str.data : "", a->value.str.len);
    return;
  case FXT_ARG_DOUBLE:
    n = snprintf(buf, sizeof buf, "%g", a->value.f64);
    put(b, buf, n > 0 ? (size_t)n : 0);
    return;
  case FXT_ARG_BLOB:
    fxt_tbuf_puts(b, "<blob ");
    put_udec(b, a->value.blob.size);
    fxt_tbuf_puts(b, " bytes>");
    return;
  default: /* null */
    return;
  }
}

void fxt_text_pairs(struct fxt_tbuf *b, const struct fxt_arg *args, uint32_t nargs) {
  for (uint32_t i = 0; i < nargs; i++) {
    if (i)
      put_char(b, ' ');
    put(b, args[i].name.data ? args[i].name.data : "", args[i].name.len);
    put_char(b, '=');
    fxt_text_value(b, &args[i]);
  }
}

/* ---- whole events ------------------------------------------------------------------------- */

void fxt_text_lost(struct fxt_tbuf *b, uint32_t cpu, uint64_t n, bool unknown) {
  put(b, "CPU:", 4);
  put_udec(b, cpu == FXTF_CPU_UNKNOWN ? 0 : cpu);
  put(b, " [LOST ", 7);
  if (!unknown) {
    put_udec(b, n);
    put_char(b, ' ');
  }
  put(b, "EVENTS]\n", 8);
}

static const char *const k_async_flow[] = {
    "async_begin", "async_instant", "async_end", "flow_begin", "flow_step", "flow_end",
};

/* What an ad-hoc event is, before its pairs; false when nothing (instants). */
static bool adhoc_head(struct fxt_tbuf *b, const struct fxtf_event *e) {
  const struct fxt_event *ev = &e->ev;
  switch (ev->type) {
  case FXT_EVENT_COUNTER:
    put(b, "id=", 3);
    put_udec(b, ev->trailer);
    return true;
  case FXT_EVENT_DURATION_BEGIN:
    put_char(b, 'B');
    return true;
  case FXT_EVENT_DURATION_END:
    put_char(b, 'E');
    return true;
  case FXT_EVENT_DURATION_COMPLETE: {
    uint64_t end = fxtf_ticks_to_ns(e->provider, ev->trailer);
    uint64_t dur = end > e->ns ? end - e->ns : 0;
    unsigned ns3 = (unsigned)(dur % 1000);
    char frac[6] = {'.', (char)('0' + ns3 / 100), (char)('0' + ns3 / 10 % 10),
                    (char)('0' + ns3 % 10), 'u', 's'};
    put(b, "dur=", 4);
    put_udec(b, dur / 1000);
    put(b, frac, sizeof frac);
    return true;
  }
  case FXT_EVENT_INSTANT:
    return false;
  default: /* async and flow: 5..10 */
    fxt_tbuf_puts(b, k_async_flow[ev->type - FXT_EVENT_ASYNC_BEGIN]);
    put(b, " id=", 4);
    put_hex(b, ev->trailer);
    return true;
  }
}

static bool is_printk(const struct fxtf_event *e) {
  return (e->desc != NULL && e->desc->kind == FXT_TP_PRINTK) ||
         (e->ev.category.len == 6 && memcmp(e->ev.category.data, "printk", 6) == 0);
}

static void body(struct fxt_tbuf *b, const struct fxtf_event *e, bool printk) {
  const struct fxt_event *ev = &e->ev;
  if (printk) { /* the format is the event name; a final newline is the line's own */
    size_t at = b->len;
    fxt_text_printf(b, ev->name.data ? ev->name.data : "", ev->name.len, ev->args, ev->num_args);
    if (b->len > at && b->data[b->len - 1] == '\n')
      b->len--;
    return;
  }
  if (e->desc != NULL && e->desc->kind == FXT_TP_TYPED && ev->type == FXT_EVENT_INSTANT) {
    fxt_text_printf(b, e->desc->fmt.data, e->desc->fmt.len, ev->args, ev->num_args);
    return;
  }
  bool head = adhoc_head(b, e);
  if (head && ev->num_args)
    put_char(b, ' ');
  fxt_text_pairs(b, ev->args, ev->num_args);
}

/* A trace_marker write: system "ftrace", event "print". */
static bool is_marker(const struct fxtf_event *e) {
  return e->ev.category.len == 6 && memcmp(e->ev.category.data, "ftrace", 6) == 0 &&
         e->ev.name.len == 5 && memcmp(e->ev.name.data, "print", 5) == 0;
}

/* The function tracer's call (docs/functions.md): category "function", an instant with its
 * caller as argument "parent"; printed as the kernel's function tracer prints one,
 * "func <-parent" (kernel/trace/trace_output.c, trace_fn_trace). */
static bool is_function_call(const struct fxtf_event *e) {
  const struct fxt_event *ev = &e->ev;
  return ev->type == FXT_EVENT_INSTANT && ev->category.len == 8 &&
         memcmp(ev->category.data, "function", 8) == 0 && ev->num_args == 1 &&
         ev->args[0].type == FXT_ARG_STRING && ev->args[0].name.len == 6 &&
         memcmp(ev->args[0].name.data, "parent", 6) == 0;
}

/* The line b->data[at..len) made well-formed UTF-8 (a file's strings may not be: each stray
 * byte becomes U+FFFD, as the JSON converter writes it), so report prints valid text; the
 * bytes before from are known to be well-formed and to end on a character. */
static void line_utf8(struct fxt_tbuf *b, size_t at, size_t from) {
  size_t n = b->len - at;
  if (fxt_utf8_valid(b->data + from, b->len - from) == b->len - from ||
      !fxt_tbuf_reserve(b, 4 * n))
    return;
  char *copy = b->data + b->len; /* the line again behind it, then sanitised in its place */
  memcpy(copy, b->data + at, n);
  size_t w = fxt_utf8_sanitize(copy + n, 3 * n, copy, n);
  memmove(b->data + at, copy + n, w);
  b->len = at + w;
}

/* A stacktrace trigger's record (ftrace:kernel_stack, docs/fxt-conventions.md): the kernel's
 * "<stack trace>" and a " => 0x<address>" line per `caller` argument, innermost first (the
 * kernel prints a symbol where it knows one: the addresses are this process's). */
static bool is_stack(const struct fxtf_event *e) {
  return e->ev.category.len == 6 && memcmp(e->ev.category.data, "ftrace", 6) == 0 &&
         e->ev.name.len == 12 && memcmp(e->ev.name.data, "kernel_stack", 12) == 0;
}

static void stack_body(struct fxt_tbuf *b, const struct fxtf_event *e) {
  put(b, "<stack trace>", 13);
  for (uint32_t i = 0; i < e->ev.num_args; i++) {
    uint64_t pc;
    if (!arg_bits(&e->ev.args[i], &pc))
      continue;
    put(b, "\n => ", 5);
    put_hex(b, pc);
  }
}

/* What follows the prefix: "name: body", a function call's "func <-parent", a stack's lines. */
static void event_text(struct fxt_tbuf *b, const struct fxtf_event *e) {
  if (is_stack(e)) {
    stack_body(b, e);
    return;
  }
  if (is_function_call(e)) {
    const struct fxt_str_ref *parent = &e->ev.args[0].value.str;
    put(b, e->ev.name.data ? e->ev.name.data : "", e->ev.name.len);
    put(b, " <-", 3);
    put(b, parent->data ? parent->data : "", parent->len);
    return;
  }
  bool printk = is_printk(e);
  if (printk)
    put(b, "printk", 6);
  else if (is_marker(e)) /* as the kernel: events/ftrace/print prints as tracing_mark_write */
    put(b, "tracing_mark_write", 18);
  else
    put(b, e->ev.name.data ? e->ev.name.data : "", e->ev.name.len);
  put(b, ": ", 2);
  body(b, e, printk);
}

void fxt_text_event_body(struct fxt_tbuf *b, const struct fxtf_event *e) {
  size_t at = b->len;
  event_text(b, e);
  line_utf8(b, at, at);
}

void fxt_text_utf8_fix(struct fxt_tbuf *b, size_t at) { line_utf8(b, at, at); }

void fxt_text_event(struct fxt_tbuf *b, const struct fxtf_event *e) {
  if (e->lost_before || e->lost_unknown)
    fxt_text_lost(b, e->cpu, e->lost_before, e->lost_unknown);
  size_t at = b->len;
  const struct fxtf_thread *t = e->thread;
  fxt_text_prefix(b, t->comm.data, t->named ? t->comm.len : 0, t->tid, e->cpu, e->ns);
  /* The prefix is ASCII but for its comm, which the prefix's cache says is well-formed or not
   * (written only when the prefix was: an empty prefix leaves it stale). */
  size_t from = b->len > at && b->pc.comm_ok ? b->len : at;
  event_text(b, e);
  put_char(b, '\n');
  line_utf8(b, at, from);
}
