/* src/formats/json_out.c - the JSON exporter's output buffer, value writers (an event's
 * arguments among them) and hash map (see json_int.h). Strings and integers are written by
 * hand: a conversion writes tens of millions of them. Doubles go through snprintf/strtod.
 */
#include "json_int.h"

#include "fxtfile_int.h" /* fxtf_grow_size */

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- output ------------------------------------------------------------------------------ */

void fxt_jout_init(struct fxt_jout *o, fxt_json_write_fn write, void *ctx) {
  memset(o, 0, sizeof *o);
  fxt_tbuf_init(&o->b);
  o->write = write;
  o->ctx = ctx;
}

void fxt_jout_free(struct fxt_jout *o) { fxt_tbuf_free(&o->b); }

int fxt_jout_flush(struct fxt_jout *o) {
  if (o->error == 0 && o->b.oom)
    o->error = FXT_ENOMEM;
  if (o->error == 0 && o->b.len > 0) {
    int rc = o->write(o->ctx, o->b.data, o->b.len);
    if (rc < 0)
      o->error = rc;
    else
      o->bytes += o->b.len;
  }
  o->b.len = 0;
  return o->error;
}

/* ---- strings ------------------------------------------------------------------------------ */

static const char k_hex[] = "0123456789abcdef";

/* Length of the valid UTF-8 sequence at s[0..n) (s[0] >= 0x80), or 0: the length its lead
 * byte announces, when fxt_utf8_valid (RFC 3629, the core's) finds all of it well-formed. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  size_t len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
  return n >= len && fxt_utf8_valid((const char *)s, len) == len ? len : 0;
}

void fxt_json_str_body(struct fxt_tbuf *b, const char *str, size_t n) {
  /* Worst case: 6 bytes (\u00XX) per input byte. */
  if (n == 0 || n > SIZE_MAX / 6 || !fxt_tbuf_reserve(b, 6 * n))
    return;
  const unsigned char *s = (const unsigned char *)str, *end = s + n;
  char *o = b->data + b->len;
  while (s < end) {
    unsigned char c = *s;
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      *o++ = (char)c;
      s++;
      continue;
    }
    if (c >= 0x80) {
      size_t len = utf8_len(s, (size_t)(end - s));
      if (len == 0) { /* U+FFFD */
        memcpy(o, "\xef\xbf\xbd", 3);
        o += 3;
        s++;
      } else {
        memcpy(o, s, len);
        o += len;
        s += len;
      }
      continue;
    }
    *o++ = '\\';
    s++;
    switch (c) {
    case '"': *o++ = '"'; break;
    case '\\': *o++ = '\\'; break;
    case '\b': *o++ = 'b'; break;
    case '\f': *o++ = 'f'; break;
    case '\n': *o++ = 'n'; break;
    case '\r': *o++ = 'r'; break;
    case '\t': *o++ = 't'; break;
    default:
      memcpy(o, "u00", 3);
      o[3] = k_hex[c >> 4];
      o[4] = k_hex[c & 15];
      o += 5;
    }
  }
  b->len = (size_t)(o - b->data);
}

static void put_char(struct fxt_tbuf *b, char c) {
  if (fxt_tbuf_reserve(b, 1))
    b->data[b->len++] = c;
}

void fxt_json_str(struct fxt_tbuf *b, const char *s, size_t n) {
  put_char(b, '"');
  fxt_json_str_body(b, s, n);
  put_char(b, '"');
}

void fxt_json_raw(struct fxt_tbuf *b, const char *s) { fxt_tbuf_put(b, s, strlen(s)); }

/* ---- numbers ------------------------------------------------------------------------------ */

#define EXACT_MAX (UINT64_C(1) << 53) /* every integer up to here is a double */

void fxt_json_u64(struct fxt_tbuf *b, uint64_t v) {
  char buf[24], *p = buf + sizeof buf;
  do {
    *--p = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  fxt_json_put(b, p, (size_t)(buf + sizeof buf - p));
}

static uint64_t magnitude(int64_t v) { return v < 0 ? (uint64_t)-(v + 1) + 1 : (uint64_t)v; }

void fxt_json_i64(struct fxt_tbuf *b, int64_t v) {
  if (v < 0)
    put_char(b, '-');
  fxt_json_u64(b, magnitude(v));
}

/* An integer, '-' first when neg, then mag's digits: in quotes past EXACT_MAX, where a reader
 * that takes every JSON number as a double would round it. */
static void put_safe(struct fxt_tbuf *b, bool neg, uint64_t mag) {
  bool quoted = mag > EXACT_MAX;
  if (quoted)
    put_char(b, '"');
  if (neg)
    put_char(b, '-');
  fxt_json_u64(b, mag);
  if (quoted)
    put_char(b, '"');
}

void fxt_json_u64_safe(struct fxt_tbuf *b, uint64_t v) { put_safe(b, false, v); }

void fxt_json_i64_safe(struct fxt_tbuf *b, int64_t v) { put_safe(b, v < 0, magnitude(v)); }

void fxt_json_double(struct fxt_tbuf *b, double v) {
  if (isnan(v)) {
    FXT_JSON_LIT(b, "\"NaN\"");
    return;
  }
  if (isinf(v)) {
    fxt_json_raw(b, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return;
  }
  char buf[40];
  int n = 0;
  for (int prec = 15; prec <= 17; prec++) { /* the shortest that reads back exactly */
    n = snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (strtod(buf, NULL) == v)
      break;
  }
  /* %g writes "1e+20", "-0", "0.5": all JSON numbers. A double stays one for readers that
   * tell integers from reals by the text ("1" -> "1.0"). */
  fxt_tbuf_put(b, buf, n > 0 ? (size_t)n : 0);
  if (n > 0 && strpbrk(buf, ".e") == NULL)
    FXT_JSON_LIT(b, ".0");
}

void fxt_json_hex(struct fxt_tbuf *b, uint64_t v) {
  char buf[24], *p = buf + sizeof buf;
  *--p = '"';
  do {
    *--p = k_hex[v & 15];
    v >>= 4;
  } while (v != 0);
  *--p = 'x';
  *--p = '0';
  *--p = '"';
  fxt_json_put(b, p, (size_t)(buf + sizeof buf - p));
}

void fxt_json_us(struct fxt_tbuf *b, uint64_t ns) {
  fxt_json_u64(b, ns / 1000);
  unsigned frac = (unsigned)(ns % 1000);
  char d[4] = {'.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
               (char)('0' + frac % 10)};
  fxt_json_put(b, d, 4);
}

void fxt_json_dur(struct fxt_tbuf *b, uint64_t start, uint64_t end) {
  uint64_t dur = end > start ? end - start : 0;
  /* Below 2^53 ns the integers are exact doubles and a division is rounded once: each is the
   * double a reader gets from the three decimals fxt_json_us writes. */
  if (FLT_EVAL_METHOD == 0 && dur != 0 && end < (UINT64_C(1) << 53)) { /* no wider sums */
    double s = (double)start / 1000.0, e = (double)end / 1000.0;
    double d3 = (double)dur / 1000.0;
    if (s + d3 != e) {
      double d = e - s; /* exact where start >= end / 2 (Sterbenz) */
      if (s + d == e) {
        fxt_json_double(b, d);
        return;
      }
    }
  }
  fxt_json_us(b, dur);
}

/* ---- map ---------------------------------------------------------------------------------- */

static size_t slot_of(uint64_t a, uint64_t b, size_t mask) {
  uint64_t x = a * UINT64_C(0x9e3779b97f4a7c15) ^ b;
  x ^= x >> 33; /* murmur3's finalizer */
  x *= UINT64_C(0xff51afd7ed558ccd);
  x ^= x >> 33;
  return (size_t)x & mask;
}

uint64_t *fxt_jmap_find(const struct fxt_jmap *m, uint64_t a, uint64_t b) {
  if (m->e == NULL)
    return NULL;
  for (size_t i = slot_of(a, b, m->mask);; i = (i + 1) & m->mask) {
    struct fxt_jmap_entry *e = &m->e[i];
    if (!e->used)
      return NULL;
    if (e->a == a && e->b == b)
      return e->v;
  }
}

static struct fxt_jmap_entry *place(struct fxt_jmap_entry *tab, size_t mask, uint64_t a,
                                    uint64_t b) {
  size_t i = slot_of(a, b, mask);
  while (tab[i].used)
    i = (i + 1) & mask;
  return &tab[i];
}

uint64_t *fxt_jmap_get(struct fxt_jmap *m, uint64_t a, uint64_t b) {
  uint64_t *v = fxt_jmap_find(m, a, b);
  if (v != NULL)
    return v;
  size_t cap = m->e ? m->mask + 1 : 0;
  if ((m->count + 1) * 4 > cap * 3) { /* keep the load under 3/4 */
    size_t ncap = cap ? cap * 2 : 16;
    if (ncap > SIZE_MAX / 2 / sizeof *m->e)
      return NULL;
    struct fxt_jmap_entry *tab = calloc(ncap, sizeof *tab);
    if (tab == NULL)
      return NULL;
    for (size_t i = 0; i < cap; i++)
      if (m->e[i].used)
        *place(tab, ncap - 1, m->e[i].a, m->e[i].b) = m->e[i];
    free(m->e);
    m->e = tab;
    m->mask = ncap - 1;
  }
  struct fxt_jmap_entry *e = place(m->e, m->mask, a, b);
  e->a = a;
  e->b = b;
  e->v[0] = e->v[1] = 0;
  e->used = true;
  m->count++;
  return e->v;
}

void *fxt_jmap_elem(struct fxt_jmap *m, uint64_t a, uint64_t b, unsigned k, void **arr,
                    size_t *n, size_t *cap, size_t elem, bool *added) {
  uint64_t *v = fxt_jmap_get(m, a, b);
  if (added != NULL)
    *added = false;
  if (v == NULL)
    return NULL;
  if (v[k] == 0) {
    if (fxtf_grow_size(arr, cap, *n + 1, elem) != 0)
      return NULL;
    memset((char *)*arr + *n * elem, 0, elem);
    v[k] = ++*n;
    if (added != NULL)
      *added = true;
  }
  return (char *)*arr + (v[k] - 1) * elem;
}

void fxt_jmap_free(struct fxt_jmap *m) {
  free(m->e);
  m->e = NULL;
  m->mask = m->count = 0;
}

/* ---- arguments ---------------------------------------------------------------------------- */

static bool numeric(const struct fxt_arg *a) {
  switch (a->type) {
  case FXT_ARG_INT32:
  case FXT_ARG_UINT32:
  case FXT_ARG_INT64:
  case FXT_ARG_UINT64:
  case FXT_ARG_KOID:
  case FXT_ARG_BOOL:
    return true;
  case FXT_ARG_DOUBLE:
    return isfinite(a->value.f64);
  default:
    return false;
  }
}

/* A counter sample: every integer as a number (readers plot doubles), bools as 0 and 1. */
static void put_number(struct fxt_tbuf *b, const struct fxt_arg *a) {
  switch (a->type) {
  case FXT_ARG_INT32: fxt_json_i64(b, a->value.i32); return;
  case FXT_ARG_UINT32: fxt_json_u64(b, a->value.u32); return;
  case FXT_ARG_INT64: fxt_json_i64(b, a->value.i64); return;
  case FXT_ARG_BOOL: fxt_json_raw(b, a->value.b ? "1" : "0"); return;
  case FXT_ARG_DOUBLE: fxt_json_double(b, a->value.f64); return;
  default: fxt_json_u64(b, a->value.u64); return; /* uint64, koid */
  }
}

static void put_value(struct fxt_tbuf *b, const struct fxt_arg *a) {
  switch (a->type) {
  case FXT_ARG_INT32: fxt_json_i64(b, a->value.i32); return;
  case FXT_ARG_UINT32: fxt_json_u64(b, a->value.u32); return;
  case FXT_ARG_INT64: fxt_json_i64_safe(b, a->value.i64); return;
  case FXT_ARG_UINT64: fxt_json_u64_safe(b, a->value.u64); return;
  case FXT_ARG_KOID: fxt_json_u64_safe(b, a->value.koid); return;
  case FXT_ARG_DOUBLE: fxt_json_double(b, a->value.f64); return;
  case FXT_ARG_STRING: fxt_json_str(b, fxtf_text_of(&a->value.str).data, a->value.str.len); return;
  case FXT_ARG_POINTER: fxt_json_hex(b, a->value.pointer); return;
  case FXT_ARG_BOOL: fxt_json_raw(b, a->value.b ? "true" : "false"); return;
  case FXT_ARG_BLOB:
    FXT_JSON_LIT(b, "\"<blob ");
    fxt_json_u64(b, a->value.blob.size);
    FXT_JSON_LIT(b, " bytes>\"");
    return;
  default: FXT_JSON_LIT(b, "null"); return;
  }
}

static bool same_name(const struct fxt_arg *x, const struct fxt_arg *y) {
  return x->name.len == y->name.len &&
         (x->name.len == 0 || memcmp(x->name.data, y->name.data, x->name.len) == 0);
}

/* ,"args":{...}; counter samples keep only numeric arguments (and always have "args"). A name
 * an earlier argument already has becomes "name #2", "name #3"... (JSON keys are unique). */
void fxt_json_args(struct fxt_tbuf *b, const struct fxt_arg *args, uint32_t n, bool counter) {
  if (n == 0 && !counter)
    return;
  FXT_JSON_LIT(b, ",\"args\":{");
  bool first = true;
  for (uint32_t i = 0; i < n; i++) {
    const struct fxt_arg *a = &args[i];
    if (counter && !numeric(a))
      continue;
    uint64_t dup = 0;
    for (uint32_t j = 0; j < i; j++)
      dup += same_name(a, &args[j]);
    fxt_json_raw(b, first ? "\"" : ",\"");
    first = false;
    fxt_json_str_body(b, fxtf_text_of(&a->name).data, a->name.len);
    if (dup) {
      FXT_JSON_LIT(b, " #");
      fxt_json_u64(b, dup + 1);
    }
    FXT_JSON_LIT(b, "\":");
    if (counter)
      put_number(b, a);
    else
      put_value(b, a);
  }
  FXT_JSON_LIT(b, "}");
}
