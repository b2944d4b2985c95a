/* fuzz/fuzz_json.c - libFuzzer target for the Chrome JSON exporter (src/formats/json.h).
 *
 * The input is converted as an FXT file into memory. Properties checked (abort() on a
 * violation, on top of ASan/UBSan):
 *  - a failed conversion says why ("offset N: reason" for bad input) and, when the input did
 *    not decode, wrote nothing (the first pass rejects it before any output);
 *  - a successful one is one valid JSON text (RFC 8259, checked by the validator below: strict
 *    grammar, strings of valid UTF-8 without raw control characters, numbers in JSON's form)
 *    whose traceEvents array has one element per event the stats count (a begin/end pair
 *    written as one complete event counting one);
 *  - it agrees with the reader: when fxtf_load accepts the input, the conversion succeeds with
 *    the same number of events and of lost records (the converter accepts a little more: a
 *    string index re-bound to other text);
 *  - the input is released in order, inside its bounds.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/formats/fxtfile.h"
#include "../src/formats/json.h"
#include "../tests/mem_sink.h" /* the output in memory */

static void check(int ok) {
  if (!ok)
    abort();
}

struct rel {
  uint64_t next, len;
};

static void on_release(void *ctx, uint64_t from, uint64_t to) {
  struct rel *r = ctx;
  if (from == 0)
    r->next = 0; /* a pass starts */
  check(from == r->next && from < to && to <= r->len);
  r->next = to;
}

/* ---- a strict JSON validator -------------------------------------------------------------- */

struct jv {
  const unsigned char *p, *end;
  uint64_t events; /* elements of arrays at depth 1 (traceEvents) */
};

#define MAX_DEPTH 16

static void skip_ws(struct jv *v) {
  while (v->p < v->end && (*v->p == ' ' || *v->p == '\t' || *v->p == '\n' || *v->p == '\r'))
    v->p++;
}

static bool lit(struct jv *v, const char *s) {
  size_t n = strlen(s);
  if ((size_t)(v->end - v->p) < n || memcmp(v->p, s, n) != 0)
    return false;
  v->p += n;
  return true;
}

static bool digits(struct jv *v) {
  const unsigned char *s = v->p;
  while (v->p < v->end && *v->p >= '0' && *v->p <= '9')
    v->p++;
  return v->p > s;
}

static bool number(struct jv *v) {
  if (v->p < v->end && *v->p == '-')
    v->p++;
  if (v->p < v->end && *v->p == '0')
    v->p++;
  else if (v->p >= v->end || *v->p < '1' || *v->p > '9' || !digits(v))
    return false;
  if (v->p < v->end && *v->p == '.' && (v->p++, !digits(v)))
    return false;
  if (v->p < v->end && (*v->p == 'e' || *v->p == 'E')) {
    v->p++;
    if (v->p < v->end && (*v->p == '+' || *v->p == '-'))
      v->p++;
    return digits(v);
  }
  return true;
}

/* One UTF-8 sequence (RFC 3629) at v->p, first byte >= 0x80. */
static bool utf8(struct jv *v) {
  unsigned c = *v->p, n, min;
  if (c >= 0xc0 && c < 0xe0)
    n = 1, min = 0x80;
  else if (c >= 0xe0 && c < 0xf0)
    n = 2, min = 0x800;
  else if (c >= 0xf0 && c < 0xf8)
    n = 3, min = 0x10000;
  else
    return false;
  if ((size_t)(v->end - v->p) <= n)
    return false;
  uint32_t cp = c & (0x3fu >> n);
  for (unsigned i = 1; i <= n; i++) {
    if ((v->p[i] & 0xc0) != 0x80)
      return false;
    cp = cp << 6 | (v->p[i] & 0x3fu);
  }
  v->p += n + 1;
  return cp >= min && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
}

static bool string(struct jv *v) {
  v->p++; /* the opening quote */
  while (v->p < v->end) {
    unsigned char c = *v->p;
    if (c == '"') {
      v->p++;
      return true;
    }
    if (c < 0x20)
      return false;
    if (c >= 0x80) {
      if (!utf8(v))
        return false;
      continue;
    }
    v->p++;
    if (c != '\\')
      continue;
    if (v->p >= v->end)
      return false;
    c = *v->p++;
    if (c == 'u') {
      for (int i = 0; i < 4; i++, v->p++)
        if (v->p >= v->end || strchr("0123456789abcdefABCDEF", *v->p) == NULL || *v->p == 0)
          return false;
    } else if (c == 0 || strchr("\"\\/bfnrt", c) == NULL) {
      return false;
    }
  }
  return false;
}

static bool value(struct jv *v, int depth);

/* '[' or '{' at v->p: elements until the closing bracket. */
static bool container(struct jv *v, int depth) {
  bool object = *v->p == '{';
  unsigned char close = object ? '}' : ']';
  v->p++;
  skip_ws(v);
  if (v->p < v->end && *v->p == close) {
    v->p++;
    return true;
  }
  for (;;) {
    skip_ws(v);
    if (object) {
      if (v->p >= v->end || *v->p != '"' || !string(v))
        return false;
      skip_ws(v);
      if (v->p >= v->end || *v->p++ != ':')
        return false;
    } else if (depth == 1) {
      v->events++;
    }
    if (!value(v, depth + 1))
      return false;
    skip_ws(v);
    if (v->p >= v->end)
      return false;
    unsigned char c = *v->p++;
    if (c == close)
      return true;
    if (c != ',')
      return false;
  }
}

static bool value(struct jv *v, int depth) {
  skip_ws(v);
  if (v->p >= v->end || depth > MAX_DEPTH)
    return false;
  switch (*v->p) {
  case '{':
  case '[':
    return container(v, depth);
  case '"':
    return string(v);
  case 't':
    return lit(v, "true");
  case 'f':
    return lit(v, "false");
  case 'n':
    return lit(v, "null");
  default:
    return number(v);
  }
}

/* The whole text is one JSON value; returns the elements of its depth-1 arrays, or -1. */
static int64_t validate(const unsigned char *p, size_t n) {
  struct jv v = {p, p + n, 0};
  if (!value(&v, 0))
    return -1;
  skip_ws(&v);
  return v.p == v.end ? (int64_t)v.events : -1;
}

/* ---- the target --------------------------------------------------------------------------- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct mem_sink m = {NULL, 0, 0};
  struct rel r = {0, size};
  struct fxt_json_options o = {size % 2 ? FXT_JSON_NO_CPU : 0, mem_sink_write, &m, on_release, &r,
                               NULL, 0};
  struct fxt_json_stats st;
  char err[256];
  int rc = fxt_json_convert(data, size, &o, &st, err, sizeof err);

  struct fxtf_file *f = NULL;
  char ferr[FXTF_ERR_SIZE];
  int frc = fxtf_load(data, size, &f, ferr, sizeof ferr);
  if (frc == 0) {
    struct fxtf_totals t;
    fxtf_totals(f, &t);
    check(rc == 0);
    check(st.events == t.events);
    check(st.lost_records == t.dropped + t.overrun + t.lost);
    check(st.providers == t.providers);
    fxtf_close(f);
  }
  if (rc == 0) {
    int64_t n = validate(m.buf, m.len);
    check(n >= 0);
    /* a begin/end pair is one complete event */
    check((uint64_t)n == st.events - st.paired + st.lost_counters + st.cpu_counters + st.logs +
                             st.metadata);
    check(st.bytes == m.len);
    check(m.len > 0 && m.buf[m.len - 1] == '\n');
  } else {
    check(err[0] != '\0');
    if (rc == FXT_EBADMSG || rc == FXT_ENOSYS) {
      check(strncmp(err, "offset ", 7) == 0);
      check(m.len == 0);
    }
  }
  free(m.buf);
  return 0;
}
