/* src/formats/hist.c - event histograms in the kernel's format (hist.h): the trigger's
 * description parsed, each event's key made into bytes and counted in a hash table of at most
 * `size` entries, then the entries sorted and printed as the kernel's `hist` file prints them
 * (kernel/trace/trace_events_hist.c: hist_trigger_show, hist_trigger_entry_print,
 * event_hist_trigger_print).
 */
#define _GNU_SOURCE /* strnlen */
#include "hist.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/grow.h"
#include "select.h"

/* ---- the description ------------------------------------------------------------------- */

static int bad(char *err, size_t size, const char *what, const char *text) {
  snprintf(err, size, "%s '%.100s'", what, text);
  return FXT_EINVAL;
}

/* One field "name[.hex|.log2|.buckets=N]" of [s, end). */
static int parse_field(struct fxt_hist_field *f, const char *s, size_t len, bool key, char *err,
                       size_t err_size) {
  char text[128], whole[128];
  if (len == 0 || len >= sizeof text)
    return bad(err, err_size, len ? "field too long:" : "empty field in", s);
  memcpy(text, s, len);
  text[len] = 0;
  memcpy(whole, text, len + 1);
  char *dot = strchr(text, '.');
  memset(f, 0, sizeof *f);
  if (dot != NULL) {
    *dot = 0;
    const char *m = dot + 1;
    if (strcmp(m, "hex") == 0) {
      f->mod = FXT_HIST_HEX;
    } else if (key && strcmp(m, "log2") == 0) {
      f->mod = FXT_HIST_LOG2;
    } else if (key && (strncmp(m, "buckets=", 8) == 0 || strncmp(m, "bucket=", 7) == 0)) {
      char *end;
      const char *num = strchr(m, '=') + 1;
      unsigned long long n = strtoull(num, &end, 0);
      if (*num < '0' || *num > '9' || *end != 0 || n == 0)
        return bad(err, err_size, "bad bucket size in", whole);
      f->mod = FXT_HIST_BUCKETS;
      f->buckets = n;
    } else {
      return bad(err, err_size, key ? "unknown modifier (hex, log2, buckets=N) in"
                                     : "unknown modifier (hex) in", whole);
    }
  }
  if (text[0] == 0 || strlen(text) >= sizeof f->name)
    return bad(err, err_size, "bad field name in", whole);
  strcpy(f->name, text);
  return 0;
}

/* Calls fn on each comma-separated piece of list. */
static int pieces(const char *list, int (*fn)(void *, const char *, size_t, char *, size_t),
                  void *ctx, char *err, size_t err_size) {
  for (const char *p = list;;) {
    const char *c = strchr(p, ',');
    size_t n = c ? (size_t)(c - p) : strlen(p);
    int rc = fn(ctx, p, n, err, err_size);
    if (rc != 0 || c == NULL)
      return rc;
    p = c + 1;
  }
}

static int key_piece(void *ctx, const char *s, size_t n, char *err, size_t err_size) {
  struct fxt_hist_spec *h = ctx;
  if (h->nkeys == FXT_HIST_MAX_KEYS)
    return bad(err, err_size, "more than 3 keys at", s);
  return parse_field(&h->keys[h->nkeys++], s, n, true, err, err_size);
}

static int val_piece(void *ctx, const char *s, size_t n, char *err, size_t err_size) {
  struct fxt_hist_spec *h = ctx;
  if (n == 8 && memcmp(s, "hitcount", 8) == 0)
    return 0;
  if (h->nvals == FXT_HIST_MAX_VALS)
    return bad(err, err_size, "more than 15 values at", s);
  return parse_field(&h->vals[h->nvals++], s, n, false, err, err_size);
}

static int sort_piece(void *ctx, const char *s, size_t n, char *err, size_t err_size) {
  struct fxt_hist_spec *h = ctx;
  if (h->nsort == FXT_HIST_MAX_SORT)
    return bad(err, err_size, "more than 2 sort keys at", s);
  bool desc = false;
  if (n > 11 && memcmp(s + n - 11, ".descending", 11) == 0) {
    desc = true;
    n -= 11;
  } else if (n > 10 && memcmp(s + n - 10, ".ascending", 10) == 0) {
    n -= 10;
  }
  int field = -2;
  if (n == 8 && memcmp(s, "hitcount", 8) == 0)
    field = -1;
  for (uint32_t i = 0; field == -2 && i < h->nkeys; i++)
    if (strlen(h->keys[i].name) == n && memcmp(h->keys[i].name, s, n) == 0)
      field = (int)i;
  for (uint32_t i = 0; field == -2 && i < h->nvals; i++)
    if (strlen(h->vals[i].name) == n && memcmp(h->vals[i].name, s, n) == 0)
      field = FXT_HIST_MAX_KEYS + (int)i;
  if (field == -2)
    return bad(err, err_size, "sort key is not hitcount, a key or a value:", s);
  h->sort[h->nsort].field = field;
  h->sort[h->nsort++].descending = desc;
  return 0;
}

int fxt_hist_parse(struct fxt_hist_spec *spec, const char *keys, const char *vals,
                   const char *sort, const char *size, char *err, size_t err_size) {
  memset(spec, 0, sizeof *spec);
  int rc = pieces(keys, key_piece, spec, err, err_size);
  if (rc == 0 && vals != NULL)
    rc = pieces(vals, val_piece, spec, err, err_size);
  if (rc == 0 && sort != NULL)
    rc = pieces(sort, sort_piece, spec, err, err_size);
  if (rc != 0)
    return rc;
  if (spec->nsort == 0) { /* the kernel's default: hitcount, ascending */
    spec->sort[0].field = -1;
    spec->nsort = 1;
  }
  unsigned long long n = 2048;
  if (size != NULL) {
    char *end;
    n = strtoull(size, &end, 10);
    if (*size < '0' || *size > '9' || *end != 0)
      return bad(err, err_size, "bad size", size);
  }
  /* the kernel's map: ilog2(roundup_pow_of_two(size)) bits, 7 to 17 */
  uint32_t bits = 0;
  while (bits < 64 && (1ull << bits) < n)
    bits++;
  if (bits < 7 || bits > 17)
    return bad(err, err_size, "size out of range (65..131072):", size ? size : "");
  spec->size = 1u << bits;
  return 0;
}

/* ---- counting ---------------------------------------------------------------------------- */

enum { SRC_NONE = -1, SRC_PID = -2, SRC_CPU = -3, SRC_COMM = -4, SRC_TYPE = -5 };

/* Where each key and value of a kind comes from. */
struct res {
  bool ok;                                       /* every field found, values numeric */
  int16_t src[FXT_HIST_MAX_KEYS + FXT_HIST_MAX_VALS]; /* field index or SRC_* */
};

struct entry {
  uint64_t hash;
  size_t key_at;
  uint32_t key_len;
  uint64_t hits;
  uint64_t vals[FXT_HIST_MAX_VALS];
};

struct fxt_hist {
  struct fxt_hist_spec spec;
  struct fxt_sel_kinds *kinds;
  struct res *res;
  size_t nres, capres;
  struct entry *e;
  size_t n;        /* entries, at most spec.size */
  uint32_t *slots; /* 2 * size: entry index + 1 */
  unsigned char *keys;
  size_t keys_len, keys_cap;
  uint64_t hits, drops;
  bool any;
  struct fxt_sel_values vals;
  unsigned char key[FXT_HIST_MAX_KEYS * 260];
  unsigned char scratch[FXT_SEL_MAX_FIELDS * FXT_STR_MAX_BOUND];
};

struct fxt_hist *fxt_hist_new(const struct fxt_hist_spec *spec) {
  struct fxt_hist *h = calloc(1, sizeof *h);
  if (h == NULL)
    return NULL;
  h->spec = *spec;
  h->kinds = fxt_sel_kinds_new();
  h->e = malloc(spec->size * sizeof *h->e);
  h->slots = calloc(2u * spec->size, sizeof *h->slots);
  if (h->kinds == NULL || h->e == NULL || h->slots == NULL) {
    fxt_hist_free(h);
    return NULL;
  }
  return h;
}

void fxt_hist_free(struct fxt_hist *h) {
  if (h == NULL)
    return;
  fxt_sel_kinds_free(h->kinds);
  free(h->res);
  free(h->e);
  free(h->slots);
  free(h->keys);
  free(h);
}

bool fxt_hist_any_kind(const struct fxt_hist *h) { return h->any; }

static bool is_str(uint16_t type) { return type == FXT_TYPE_STR || type == FXT_TYPE_BYTES; }

/* Where field name comes from in fields; SRC_NONE when nowhere. */
static int source(const struct fxt_sel_fields *fl, const char *name) {
  for (uint32_t i = 0; i < fl->n; i++)
    if (strcmp(fl->f[i].name, name) == 0)
      return (int)i;
  if (strcmp(name, "common_pid") == 0)
    return SRC_PID;
  if (strcmp(name, "common_cpu") == 0 || strcmp(name, "cpu") == 0)
    return SRC_CPU;
  if (strcmp(name, "comm") == 0 || strcmp(name, "common_comm") == 0)
    return SRC_COMM;
  if (strcmp(name, "common_type") == 0)
    return SRC_TYPE;
  return SRC_NONE;
}

static void resolve(struct fxt_hist *h, const struct fxt_sel_fields *fl, struct res *r) {
  r->ok = true;
  for (uint32_t i = 0; i < h->spec.nkeys + h->spec.nvals; i++) {
    bool key = i < h->spec.nkeys;
    const char *name = key ? h->spec.keys[i].name : h->spec.vals[i - h->spec.nkeys].name;
    int s = source(fl, name);
    bool str = s == SRC_COMM || (s >= 0 && is_str(fl->f[s].type));
    r->src[key ? i : FXT_HIST_MAX_KEYS + i - h->spec.nkeys] = (int16_t)s;
    if (s == SRC_NONE || (!key && str) || (str && key && h->spec.keys[i].mod >= FXT_HIST_LOG2))
      r->ok = false;
  }
}

/* A number as the kernel's hist reads a field: 64 bits, signed ones sign-extended. */
static uint64_t number(const struct fxt_sel_fields *fl, const struct fxt_sel_values *v, int s) {
  switch (s) {
  case SRC_PID: return (uint64_t)(int64_t)v->common.pid;
  case SRC_CPU: return v->common.cpu;
  case SRC_TYPE: return v->common.type;
  default: break;
  }
  switch (fl->f[s].type) {
  case FXT_TYPE_S8:
  case FXT_TYPE_S16:
  case FXT_TYPE_S32:
  case FXT_TYPE_S64: return (uint64_t)v->v[s].i;
  case FXT_TYPE_DOUBLE: {
    double d = v->v[s].d;
    return d > -9.2e18 && d < 9.2e18 ? (uint64_t)(int64_t)d : 0;
  }
  default: return v->v[s].u;
  }
}

/* The kernel's hist_field_log2: ilog2(roundup_pow_of_two(v)); 0 for 0 and 1. */
static uint64_t log2_up(uint64_t v) {
  uint64_t b = 0;
  while (b < 64 && (v > 1 ? (v - 1) >> b : 0) != 0)
    b++;
  return b;
}

/* The key of the event as bytes: per key, 0 and 8 bytes of number, or 1, a length byte and
 * the string. */
static size_t make_key(struct fxt_hist *h, const struct fxt_sel_fields *fl, const struct res *r) {
  size_t o = 0;
  for (uint32_t i = 0; i < h->spec.nkeys; i++) {
    int s = r->src[i];
    if (s == SRC_COMM || (s >= 0 && is_str(fl->f[s].type))) {
      const char *p;
      size_t n;
      if (s == SRC_COMM) {
        p = h->vals.comm;
        n = strlen(p);
      } else if (fl->f[s].type == FXT_TYPE_BYTES) { /* a char array: up to its NUL */
        p = h->vals.v[s].p;
        n = strnlen(p, fl->f[s].bound);
      } else {
        p = h->vals.v[s].s;
        n = h->vals.lens[s];
      }
      n = n > 255 ? 255 : n;
      h->key[o++] = 1;
      h->key[o++] = (unsigned char)n;
      memcpy(h->key + o, p, n);
      o += n;
      continue;
    }
    uint64_t v = number(fl, &h->vals, s);
    if (h->spec.keys[i].mod == FXT_HIST_LOG2)
      v = log2_up(v);
    else if (h->spec.keys[i].mod == FXT_HIST_BUCKETS)
      v = v / h->spec.keys[i].buckets * h->spec.keys[i].buckets;
    h->key[o++] = 0;
    memcpy(h->key + o, &v, 8);
    o += 8;
  }
  return o;
}

static uint64_t hash_bytes(const unsigned char *p, size_t n) {
  uint64_t x = 0x9e3779b97f4a7c15u ^ n;
  for (size_t i = 0; i < n; i++)
    x = (x ^ p[i]) * 0x100000001b3u;
  return x ^ (x >> 31);
}

int fxt_hist_add(struct fxt_hist *h, const struct fxtf_event *e) {
  bool is_new;
  int64_t kind = fxt_sel_kind(h->kinds, e, &is_new);
  if (kind < 0)
    return FXT_ENOMEM;
  const struct fxt_sel_fields *fl = fxt_sel_kind_fields(h->kinds, (size_t)kind);
  if (is_new) {
    if (!fxt_grow((void **)&h->res, &h->capres, (size_t)kind + 1, sizeof *h->res, 16))
      return FXT_ENOMEM;
    resolve(h, fl, &h->res[kind]);
    h->nres = (size_t)kind + 1;
  }
  const struct res *r = &h->res[kind];
  if (!r->ok)
    return 0;
  h->any = true;
  fxt_sel_values_of(e, fl, &h->vals, h->scratch);
  size_t len = make_key(h, fl, r);
  uint64_t hash = hash_bytes(h->key, len);
  size_t mask = 2u * h->spec.size - 1, at = hash & mask;
  struct entry *x = NULL;
  for (; h->slots[at] != 0; at = (at + 1) & mask) {
    struct entry *c = &h->e[h->slots[at] - 1];
    if (c->hash == hash && c->key_len == len && memcmp(h->keys + c->key_at, h->key, len) == 0) {
      x = c;
      break;
    }
  }
  if (x == NULL) {
    if (h->n == h->spec.size) { /* the kernel's map is full: the event is dropped */
      h->drops++;
      return 0;
    }
    if (!fxt_grow((void **)&h->keys, &h->keys_cap, h->keys_len + len, 1, 4096))
      return FXT_ENOMEM;
    x = &h->e[h->n];
    memset(x, 0, sizeof *x);
    x->hash = hash;
    x->key_at = h->keys_len;
    x->key_len = (uint32_t)len;
    memcpy(h->keys + h->keys_len, h->key, len);
    h->keys_len += len;
    h->slots[at] = (uint32_t)++h->n;
  }
  x->hits++;
  h->hits++;
  for (uint32_t i = 0; i < h->spec.nvals; i++)
    x->vals[i] += number(fl, &h->vals, r->src[FXT_HIST_MAX_KEYS + i]);
  return 0;
}

/* ---- the text ------------------------------------------------------------------------------ */

/* Key component i of entry x: its bytes. */
static const unsigned char *component(const struct fxt_hist *h, const struct entry *x,
                                      uint32_t i) {
  const unsigned char *p = h->keys + x->key_at;
  for (uint32_t k = 0; k < i; k++)
    p += p[0] == 0 ? 9 : 2u + p[1];
  return p;
}

static int cmp_component(const unsigned char *a, const unsigned char *b) {
  if (a[0] != b[0])
    return a[0] < b[0] ? -1 : 1;
  if (a[0] == 0) {
    uint64_t x, y;
    memcpy(&x, a + 1, 8);
    memcpy(&y, b + 1, 8);
    return x < y ? -1 : x > y;
  }
  int c = memcmp(a + 2, b + 2, a[1] < b[1] ? a[1] : b[1]);
  return c != 0 ? c : (a[1] > b[1]) - (a[1] < b[1]);
}

static const struct fxt_hist *g_sorting; /* qsort has no context argument */

static int cmp_entry(const void *pa, const void *pb) {
  const struct fxt_hist *h = g_sorting;
  const struct entry *a = *(const struct entry *const *)pa, *b = *(const struct entry *const *)pb;
  for (uint32_t i = 0; i < h->spec.nsort; i++) {
    int f = h->spec.sort[i].field, c;
    if (f < 0 || f >= FXT_HIST_MAX_KEYS) {
      uint64_t x = f < 0 ? a->hits : a->vals[f - FXT_HIST_MAX_KEYS];
      uint64_t y = f < 0 ? b->hits : b->vals[f - FXT_HIST_MAX_KEYS];
      c = (x > y) - (x < y);
    } else {
      c = cmp_component(component(h, a, (uint32_t)f), component(h, b, (uint32_t)f));
    }
    if (c != 0)
      return h->spec.sort[i].descending ? -c : c;
  }
  for (uint32_t i = 0; i < h->spec.nkeys; i++) {
    int c = cmp_component(component(h, a, i), component(h, b, i));
    if (c != 0)
      return c;
  }
  return 0;
}

static void putf(struct fxt_tbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct fxt_tbuf *b, const char *fmt, ...) {
  char line[400];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n > 0)
    fxt_tbuf_put(b, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* The kernel's hist_field_print: the name, its modifier, a bucket's size. */
static void field_desc(struct fxt_tbuf *b, const struct fxt_hist_field *f) {
  static const char *const mods[] = {"", ".hex", ".log2", ".buckets"};
  putf(b, "%s%s", f->name, mods[f->mod]);
  if (f->mod == FXT_HIST_BUCKETS)
    putf(b, "=%" PRIu64, f->buckets);
}

static void header(const struct fxt_hist *h, const char *filter, struct fxt_tbuf *b) {
  fxt_tbuf_puts(b, "# event histogram\n#\n# trigger info: hist:keys=");
  for (uint32_t i = 0; i < h->spec.nkeys; i++) {
    if (i)
      fxt_tbuf_puts(b, ",");
    field_desc(b, &h->spec.keys[i]);
  }
  fxt_tbuf_puts(b, ":vals=hitcount");
  for (uint32_t i = 0; i < h->spec.nvals; i++) {
    fxt_tbuf_puts(b, ",");
    field_desc(b, &h->spec.vals[i]);
  }
  fxt_tbuf_puts(b, ":sort=");
  for (uint32_t i = 0; i < h->spec.nsort; i++) {
    int f = h->spec.sort[i].field;
    if (i)
      fxt_tbuf_puts(b, ",");
    if (f < 0)
      fxt_tbuf_puts(b, "hitcount");
    else
      field_desc(b, f < FXT_HIST_MAX_KEYS ? &h->spec.keys[f] : &h->spec.vals[f - FXT_HIST_MAX_KEYS]);
    if (h->spec.sort[i].descending)
      fxt_tbuf_puts(b, ".descending");
  }
  putf(b, ":size=%u", h->spec.size);
  if (filter != NULL) {
    fxt_tbuf_puts(b, " if ");
    fxt_tbuf_puts(b, filter);
  }
  fxt_tbuf_puts(b, " [active]\n#\n\n");
}

/* hist_trigger_entry_print: "{ key: value, ... } hitcount: N  val: N". */
static void entry_line(const struct fxt_hist *h, const struct entry *x, struct fxt_tbuf *b) {
  fxt_tbuf_puts(b, "{ ");
  for (uint32_t i = 0; i < h->spec.nkeys; i++) {
    const struct fxt_hist_field *f = &h->spec.keys[i];
    const unsigned char *c = component(h, x, i);
    uint64_t v;
    memcpy(&v, c + 1, 8);
    if (i)
      fxt_tbuf_puts(b, ", ");
    if (c[0] == 1)
      putf(b, "%s: %-50.*s", f->name, c[1], (const char *)c + 2);
    else if (f->mod == FXT_HIST_HEX)
      putf(b, "%s: %" PRIx64, f->name, v);
    else if (f->mod == FXT_HIST_LOG2)
      putf(b, "%s: ~ 2^%-2" PRIu64, f->name, v);
    else if (f->mod == FXT_HIST_BUCKETS)
      putf(b, "%s: ~ %" PRIu64 "-%" PRIu64, f->name, v, v + f->buckets - 1);
    else
      putf(b, "%s: %10" PRIu64, f->name, v);
  }
  putf(b, " } hitcount: %10" PRIu64, x->hits);
  for (uint32_t i = 0; i < h->spec.nvals; i++)
    putf(b, h->spec.vals[i].mod == FXT_HIST_HEX ? "  %s: %10" PRIx64 : "  %s: %10" PRIu64,
         h->spec.vals[i].name, x->vals[i]);
  fxt_tbuf_puts(b, "\n");
}

int fxt_hist_print(struct fxt_hist *h, const char *filter, struct fxt_tbuf *out) {
  const struct entry **order = malloc((h->n ? h->n : 1) * sizeof *order);
  if (order == NULL)
    return FXT_ENOMEM;
  for (size_t i = 0; i < h->n; i++)
    order[i] = &h->e[i];
  g_sorting = h;
  qsort(order, h->n, sizeof *order, cmp_entry);
  header(h, filter, out);
  for (size_t i = 0; i < h->n; i++)
    entry_line(h, order[i], out);
  putf(out, "\nTotals:\n    Hits: %" PRIu64 "\n    Entries: %zu\n    Dropped: %" PRIu64 "\n",
       h->hits, h->n, h->drops);
  free(order);
  return out->oom ? FXT_ENOMEM : 0;
}
