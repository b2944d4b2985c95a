/* src/base/hist.c - event histograms in the kernel's format (hist.h): the description parsed,
 * keys encoded, the table of entries (lock-free: the kernel's tracing_map_insert's scheme, in
 * our own code) and the text of the `hist` file.
 *
 * The table: `size` entries, allocated at once (zeroed pages, touched when claimed), and twice
 * as many slots, open addressing from the key's hash. A slot is a tag (the hash's high bits,
 * never 0; 0: free) and the index + 1 of its entry (0: being filled). Concurrency, per slot:
 *  - an adder claims a free slot by a compare-and-swap of its tag 0 -> tag (the one writer of
 *    everything after it), then claims an entry (fetch-add of `next`; past `size`: the table
 *    is full, the tag is given back, the event counted in `drops`), writes the entry's key
 *    (and execname), and publishes it: the release store of `ent` pairs with the acquire
 *    loads of `ent` in adders (fxt_hmap_add) and readers (fxt_hmap_print), which read the
 *    key only after it;
 *  - an adder that finds its tag with `ent` still 0 reads the slot again, at most `size`
 *    times (the kernel's dup_try bound), then counts a drop: no thread ever waits on another
 *    for longer;
 *  - counts (hitcount, values, Dropped) are relaxed atomic adds: each is exact, a reader
 *    alongside adders may see an entry's hitcount before its values. Hits is the entries'
 *    hitcounts summed when printed (the kernel's map->hits is the same number), so adders of
 *    different keys share no counter.
 * fxt_hmap_clear runs when no add does (the tracer waits for emissions: evtrig_hist.c).
 */
#define _GNU_SOURCE /* qsort_r */
#include "hist.h"
#include "grow.h"

#include <fxtrace/errors.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    } else if (key && strcmp(m, "execname") == 0) {
      f->mod = FXT_HIST_EXECNAME;
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
      return bad(err, err_size, key ? "unknown modifier (hex, log2, buckets=N, execname) in"
                                     : "unknown modifier (hex) in", whole);
    }
  }
  if (text[0] == 0 || strlen(text) >= sizeof f->name)
    return bad(err, err_size, "bad field name in", whole);
  if (f->mod == FXT_HIST_EXECNAME && strcmp(text, "common_pid") != 0)
    return bad(err, err_size, "execname is common_pid's modifier only:", whole);
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
  spec->size = fxt_hist_size_of(n);
  if (spec->size == 0)
    return bad(err, err_size, "size out of range (65..131072):", size ? size : "");
  return 0;
}

uint32_t fxt_hist_size_of(unsigned long long n) {
  /* the kernel's map: ilog2(roundup_pow_of_two(size)) bits, 7 to 17 */
  uint32_t bits = 0;
  while (bits < 64 && (1ull << bits) < n)
    bits++;
  return bits < 7 || bits > 17 ? 0 : 1u << bits;
}

/* ---- keys ---------------------------------------------------------------------------------- */

static size_t comp_size(const struct fxt_hist_field *f) { return f->width ? 2u + f->width : 9u; }

size_t fxt_hist_key_size(const struct fxt_hist_spec *spec) {
  size_t n = 0;
  for (uint32_t i = 0; i < spec->nkeys; i++)
    n += comp_size(&spec->keys[i]);
  return n;
}

/* The kernel's hist_field_log2: ilog2(roundup_pow_of_two(v)); 0 for 0 and 1. */
static uint64_t log2_up(uint64_t v) {
  uint64_t b = 0;
  while (b < 64 && (v > 1 ? (v - 1) >> b : 0) != 0)
    b++;
  return b;
}

size_t fxt_hist_key_num(unsigned char *key, size_t at, const struct fxt_hist_field *f,
                        uint64_t v) {
  if (f->mod == FXT_HIST_LOG2)
    v = log2_up(v);
  else if (f->mod == FXT_HIST_BUCKETS)
    v = v / f->buckets * f->buckets;
  key[at] = 0;
  memcpy(key + at + 1, &v, 8);
  return at + 9;
}

size_t fxt_hist_key_str(unsigned char *key, size_t at, const struct fxt_hist_field *f,
                        const char *s, size_t n) {
  uint32_t w = f->width ? f->width : FXT_HIST_STR_MAX;
  n = n > w ? w : n;
  key[at] = 1;
  key[at + 1] = (unsigned char)n;
  memcpy(key + at + 2, s, n);
  memset(key + at + 2 + n, 0, w - n);
  return at + 2 + w;
}

/* ---- the table ------------------------------------------------------------------------------ */

struct slot {
  _Atomic uint32_t tag; /* 0: free */
  _Atomic uint32_t ent; /* entry index + 1; 0: being filled */
};

/* An entry: hitcount, the values, the execname, the key (stride bytes in all). */
struct fxt_hmap {
  struct fxt_hist_spec spec;
  size_t key_size, stride, comm_at, key_at;
  uint32_t nslots; /* 2 * size */
  bool execname;
  struct slot *slots;
  unsigned char *e;
  _Atomic uint32_t next; /* entries claimed (may pass size: those are dropped) */
  _Atomic uint64_t drops; /* (Hits is the entries' hitcounts summed: no counter every adder
                           * would share) */
};

struct fxt_hmap *fxt_hmap_new(const struct fxt_hist_spec *spec) {
  struct fxt_hmap *m = calloc(1, sizeof *m);
  if (m == NULL)
    return NULL;
  m->spec = *spec;
  for (uint32_t i = 0; i < spec->nkeys; i++)
    m->execname |= spec->keys[i].mod == FXT_HIST_EXECNAME;
  m->key_size = fxt_hist_key_size(spec);
  m->comm_at = 8u * (1 + spec->nvals);
  m->key_at = m->comm_at + (m->execname ? FXT_HIST_COMM : 0);
  m->stride = (m->key_at + m->key_size + 7) & ~(size_t)7;
  m->nslots = 2 * spec->size;
  m->slots = calloc(m->nslots, sizeof *m->slots);
  m->e = calloc(spec->size, m->stride);
  if (m->slots == NULL || m->e == NULL) {
    fxt_hmap_free(m);
    return NULL;
  }
  return m;
}

void fxt_hmap_free(struct fxt_hmap *m) {
  if (m != NULL)
    FXT_FREE_ALL(m->slots, m->e, m);
}

static uint64_t hash_bytes(const unsigned char *p, size_t n) {
  uint64_t x = 0x9e3779b97f4a7c15u ^ n;
  for (size_t i = 0; i < n; i++)
    x = (x ^ p[i]) * 0x100000001b3u;
  return x ^ (x >> 31);
}

static unsigned char *entry(const struct fxt_hmap *m, uint32_t i) {
  return m->e + (size_t)i * m->stride;
}

static void count(struct fxt_hmap *m, unsigned char *x, const uint64_t *vals) {
  _Atomic uint64_t *c = (_Atomic uint64_t *)(void *)x;
  atomic_fetch_add_explicit(&c[0], 1, memory_order_relaxed);
  for (uint32_t i = 0; i < m->spec.nvals; i++)
    atomic_fetch_add_explicit(&c[1 + i], vals[i], memory_order_relaxed);
}

static bool drop(struct fxt_hmap *m) {
  atomic_fetch_add_explicit(&m->drops, 1, memory_order_relaxed);
  return false;
}

bool fxt_hmap_add(struct fxt_hmap *m, const unsigned char *key, const uint64_t *vals,
                  const char *comm) {
  uint64_t h = hash_bytes(key, m->key_size);
  uint32_t tag = (uint32_t)(h >> 32) | 1u, mask = m->nslots - 1, at = (uint32_t)h & mask;
  uint32_t dup = 0;
  for (uint32_t probes = 0; probes < m->nslots;) {
    struct slot *s = &m->slots[at];
    uint32_t t = atomic_load_explicit(&s->tag, memory_order_acquire);
    if (t == tag) {
      /* Acquire pairs with the publisher's release store of ent: its key is complete. */
      uint32_t e = atomic_load_explicit(&s->ent, memory_order_acquire);
      if (e == 0) { /* being filled, perhaps with this key: read it again */
        if (++dup > m->spec.size)
          return drop(m);
        continue;
      }
      unsigned char *x = entry(m, e - 1);
      if (memcmp(x + m->key_at, key, m->key_size) == 0) {
        count(m, x, vals);
        return true;
      }
    } else if (t == 0) {
      uint32_t free_tag = 0;
      if (!atomic_compare_exchange_strong_explicit(&s->tag, &free_tag, tag, memory_order_acquire,
                                                   memory_order_acquire)) {
        dup++; /* another adder took it: read what it put there */
        continue;
      }
      uint32_t i = atomic_fetch_add_explicit(&m->next, 1, memory_order_relaxed);
      if (i >= m->spec.size) { /* full: the slot given back (release: our reads are done) */
        atomic_store_explicit(&s->tag, 0, memory_order_release);
        return drop(m);
      }
      unsigned char *x = entry(m, i);
      memcpy(x + m->key_at, key, m->key_size);
      if (m->execname && comm)
        strncpy((char *)x + m->comm_at, comm, FXT_HIST_COMM - 1);
      /* Release pairs with the acquire loads of ent: the key is written before. */
      atomic_store_explicit(&s->ent, i + 1, memory_order_release);
      count(m, x, vals);
      return true;
    }
    at = (at + 1) & mask;
    probes++;
  }
  return drop(m);
}

void fxt_hmap_clear(struct fxt_hmap *m) {
  uint32_t n = atomic_load_explicit(&m->next, memory_order_relaxed);
  n = n < m->spec.size ? n : m->spec.size;
  memset(m->e, 0, (size_t)n * m->stride);
  memset(m->slots, 0, m->nslots * sizeof *m->slots);
  atomic_store_explicit(&m->next, 0, memory_order_relaxed);
  atomic_store_explicit(&m->drops, 0, memory_order_relaxed);
}

/* ---- the text ------------------------------------------------------------------------------ */

static uint64_t load(const unsigned char *x, uint32_t i) {
  return atomic_load_explicit((_Atomic uint64_t *)(void *)(uintptr_t)(x + 8u * i),
                              memory_order_relaxed);
}

/* Key component i of entry x: its bytes. */
static const unsigned char *component(const struct fxt_hmap *m, const unsigned char *x,
                                      uint32_t i) {
  const unsigned char *p = x + m->key_at;
  for (uint32_t k = 0; k < i; k++)
    p += comp_size(&m->spec.keys[k]);
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

static int cmp_entry(const void *pa, const void *pb, void *ctx) {
  const struct fxt_hmap *m = ctx;
  const unsigned char *a = *(const unsigned char *const *)pa;
  const unsigned char *b = *(const unsigned char *const *)pb;
  for (uint32_t i = 0; i < m->spec.nsort; i++) {
    int f = m->spec.sort[i].field, c;
    if (f < 0 || f >= FXT_HIST_MAX_KEYS) {
      uint32_t v = f < 0 ? 0 : 1u + (uint32_t)(f - FXT_HIST_MAX_KEYS);
      uint64_t x = load(a, v), y = load(b, v);
      c = (x > y) - (x < y);
    } else {
      c = cmp_component(component(m, a, (uint32_t)f), component(m, b, (uint32_t)f));
    }
    if (c != 0)
      return m->spec.sort[i].descending ? -c : c;
  }
  for (uint32_t i = 0; i < m->spec.nkeys; i++) {
    int c = cmp_component(component(m, a, i), component(m, b, i));
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
  static const char *const mods[] = {"", ".hex", ".log2", ".buckets", ".execname"};
  putf(b, "%s%s", f->name, mods[f->mod]);
  if (f->mod == FXT_HIST_BUCKETS)
    putf(b, "=%" PRIu64, f->buckets);
}

void fxt_hist_describe(const struct fxt_hist_spec *spec, const char *name, const char *filter,
                       bool paused, struct fxt_tbuf *b) {
  fxt_tbuf_puts(b, "hist:");
  if (name != NULL) {
    fxt_tbuf_puts(b, name);
    fxt_tbuf_puts(b, ":");
  }
  fxt_tbuf_puts(b, "keys=");
  for (uint32_t i = 0; i < spec->nkeys; i++) {
    if (i)
      fxt_tbuf_puts(b, ",");
    field_desc(b, &spec->keys[i]);
  }
  fxt_tbuf_puts(b, ":vals=hitcount");
  for (uint32_t i = 0; i < spec->nvals; i++) {
    fxt_tbuf_puts(b, ",");
    field_desc(b, &spec->vals[i]);
  }
  fxt_tbuf_puts(b, ":sort=");
  for (uint32_t i = 0; i < spec->nsort; i++) {
    int f = spec->sort[i].field;
    if (i)
      fxt_tbuf_puts(b, ",");
    if (f < 0)
      fxt_tbuf_puts(b, "hitcount");
    else
      field_desc(b, f < FXT_HIST_MAX_KEYS ? &spec->keys[f] : &spec->vals[f - FXT_HIST_MAX_KEYS]);
    if (spec->sort[i].descending)
      fxt_tbuf_puts(b, ".descending");
  }
  putf(b, ":size=%u", spec->size);
  if (filter != NULL) {
    fxt_tbuf_puts(b, " if ");
    fxt_tbuf_puts(b, filter);
  }
  fxt_tbuf_puts(b, paused ? " [paused]\n" : " [active]\n");
}

/* hist_trigger_entry_print: "{ key: value, ... } hitcount: N  val: N". */
static void entry_line(const struct fxt_hmap *m, const unsigned char *x, struct fxt_tbuf *b) {
  fxt_tbuf_puts(b, "{ ");
  for (uint32_t i = 0; i < m->spec.nkeys; i++) {
    const struct fxt_hist_field *f = &m->spec.keys[i];
    const unsigned char *c = component(m, x, i);
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
    else if (f->mod == FXT_HIST_EXECNAME)
      putf(b, "%s: %-16.16s[%10" PRIu64 "]", f->name,
           x[m->comm_at] ? (const char *)x + m->comm_at : "<unknown>", v);
    else
      putf(b, "%s: %10" PRIu64, f->name, v);
  }
  putf(b, " } hitcount: %10" PRIu64, load(x, 0));
  for (uint32_t i = 0; i < m->spec.nvals; i++)
    putf(b, m->spec.vals[i].mod == FXT_HIST_HEX ? "  %s: %10" PRIx64 : "  %s: %10" PRIu64,
         m->spec.vals[i].name, load(x, 1 + i));
  fxt_tbuf_puts(b, "\n");
}

int fxt_hmap_print(const struct fxt_hmap *m, const char *name, const char *filter, bool paused,
                   struct fxt_tbuf *out) {
  const unsigned char **order = malloc(m->spec.size * sizeof *order);
  if (order == NULL)
    return FXT_ENOMEM;
  size_t n = 0;
  uint64_t hits = 0;
  for (uint32_t i = 0; i < m->nslots; i++) {
    /* Acquire pairs with the publisher's release store: the entry's key is complete. */
    uint32_t e = atomic_load_explicit(&m->slots[i].ent, memory_order_acquire);
    if (e != 0 && n < m->spec.size) {
      order[n++] = entry(m, e - 1);
      hits += load(order[n - 1], 0);
    }
  }
  qsort_r(order, n, sizeof *order, cmp_entry, (void *)(uintptr_t)m);
  fxt_tbuf_puts(out, "# event histogram\n#\n# trigger info: ");
  fxt_hist_describe(&m->spec, name, filter, paused, out);
  fxt_tbuf_puts(out, "#\n\n");
  for (size_t i = 0; i < n; i++)
    entry_line(m, order[i], out);
  putf(out, "\nTotals:\n    Hits: %" PRIu64 "\n    Entries: %zu\n    Dropped: %" PRIu64 "\n",
       hits, n,
       atomic_load_explicit(&m->drops, memory_order_relaxed));
  free(order);
  return out->oom ? FXT_ENOMEM : 0;
}
