/* src/formats/select_kind.c - the ftrace fields of a file's events and the table of their
 * kinds (select.h): what a filter or a histogram is worked out against once per kind.
 */
#include "select.h"

#include <stdlib.h>
#include <string.h>

#include "../base/ftrace_format.h"
#include "../base/grow.h"
#include "../base/tbuf.h"

/* ---- fields ------------------------------------------------------------------------------ */

static bool is_typed(const struct fxtf_event *e) {
  return e->desc != NULL && e->desc->kind == FXT_TP_TYPED && e->ev.type == FXT_EVENT_INSTANT;
}

static void add_field(struct fxt_sel_fields *out, const char *name, size_t len, uint8_t type,
                      uint32_t bound, int arg) {
  uint32_t i = out->n++;
  if (len >= sizeof out->names[i])
    len = sizeof out->names[i] - 1;
  memcpy(out->names[i], name, len);
  out->names[i][len] = 0;
  out->f[i] = (struct fxt_field){out->names[i], type, (uint16_t)bound};
  out->arg[i] = (int8_t)arg;
}

void fxt_sel_fields_of(const struct fxtf_event *e, struct fxt_sel_fields *out) {
  const struct fxt_event *ev = &e->ev;
  out->n = 0;
  if (is_typed(e)) {
    for (uint32_t i = 0; i < ev->num_args && i < FXT_MAX_ARGS; i++) {
      const struct fxt_arg *a = &ev->args[i];
      if (i < e->desc->nfields) {
        const struct fxtf_field *d = &e->desc->fields[i];
        bool fits = fxt_ff_arg_fits(d->type, a->type);
        uint8_t t = fits ? d->type : fxt_ff_type_of_arg(a->type);
        if (t != 0)
          add_field(out, d->name.data, d->name.len, t,
                    t == FXT_TYPE_BYTES || t == FXT_TYPE_STR ? d->bound : 0, (int)i);
      } else if (fxt_ff_type_of_arg(a->type) != 0) {
        add_field(out, a->name.data, a->name.len, fxt_ff_type_of_arg(a->type), 0, (int)i);
      }
    }
    return;
  }
  if (ev->type == FXT_EVENT_DURATION_COMPLETE)
    add_field(out, "dur_ns", 6, FXT_TYPE_U64, 0, -1);
  else if (ev->type == FXT_EVENT_COUNTER || ev->type >= FXT_EVENT_ASYNC_BEGIN)
    add_field(out, "id", 2, FXT_TYPE_U64, 0, -1);
  for (uint32_t i = 0; i < ev->num_args && i < FXT_MAX_ARGS; i++) {
    uint8_t t = fxt_ff_type_of_arg(ev->args[i].type);
    if (t != 0)
      add_field(out, ev->args[i].name.data ? ev->args[i].name.data : "", ev->args[i].name.len, t,
                0, (int)i);
  }
}

static unsigned hexval(char c) {
  return c >= 'a' ? (unsigned)(c - 'a' + 10) : (unsigned)(c - '0');
}

/* The value of argument a as a field of type t. */
static union fxt_value arg_value(const struct fxt_arg *a, const struct fxt_field *f,
                                 unsigned char *bytes, uint32_t *len) {
  union fxt_value v = {.u = 0};
  const union fxt_arg_value *x = &a->value;
  *len = 0;
  switch (a->type) {
  case FXT_ARG_INT32: v.i = x->i32; break;
  case FXT_ARG_UINT32: v.u = x->u32; break;
  case FXT_ARG_INT64: v.i = x->i64; break;
  case FXT_ARG_UINT64: v.u = x->u64; break;
  case FXT_ARG_KOID: v.u = x->koid; break;
  case FXT_ARG_POINTER: v.u = x->pointer; break;
  case FXT_ARG_BOOL: v.u = x->b; break;
  case FXT_ARG_DOUBLE: v.d = x->f64; break;
  case FXT_ARG_STRING:
    if (f->type == FXT_TYPE_BYTES) { /* lowercase hex text of the bytes (fxt-conventions) */
      uint32_t n = f->bound < FXT_STR_MAX_BOUND ? f->bound : FXT_STR_MAX_BOUND;
      memset(bytes, 0, n);
      for (uint32_t i = 0; i < n && 2 * i + 1 < x->str.len; i++)
        bytes[i] = (unsigned char)(hexval(x->str.data[2 * i]) << 4 | hexval(x->str.data[2 * i + 1]));
      v.p = bytes;
    } else {
      v.s = x->str.data ? x->str.data : "";
      *len = x->str.len;
    }
    break;
  default: break;
  }
  return v;
}

void fxt_sel_values_of(const struct fxtf_event *e, const struct fxt_sel_fields *fields,
                       struct fxt_sel_values *out, unsigned char *scratch) {
  const struct fxt_event *ev = &e->ev;
  for (uint32_t i = 0; i < fields->n; i++) {
    int a = fields->arg[i];
    if (a < 0) { /* the head: a duration's length, or the trailer's id */
      uint64_t v = ev->trailer;
      if (ev->type == FXT_EVENT_DURATION_COMPLETE) {
        uint64_t end = fxtf_ticks_to_ns(e->provider, ev->trailer);
        v = end > e->ns ? end - e->ns : 0; /* as report prints dur= */
      }
      out->v[i].u = v;
      out->lens[i] = 0;
    } else {
      out->v[i] = arg_value(&ev->args[a], &fields->f[i], scratch + (size_t)i * FXT_STR_MAX_BOUND,
                            &out->lens[i]);
    }
  }
  const struct fxtf_thread *t = e->thread;
  uint32_t n = t->named ? t->comm.len : 0;
  if (n > 16)
    n = 16;
  memcpy(out->comm, t->comm.data, n);
  out->comm[n] = 0;
  out->common = (struct fxt_filter_common){
      .type = (uint16_t)(is_typed(e) ? e->desc->id : 0),
      .pid = (int32_t)t->tid,
      .cpu = e->cpu == FXTF_CPU_UNKNOWN ? 0 : e->cpu,
      .comm = out->comm,
  };
}

/* ---- the kinds ----------------------------------------------------------------------------- */

struct kind {
  uint64_t hash;
  size_t key_at, key_len;        /* in keys */
  struct fxt_sel_fields *fields; /* its own allocation: its names are pointed at */
};

/* Events' strings point into the mapped file, whose bytes never change, so equal pointers and
 * lengths are equal texts: a kind is first looked up by them (the same text at another place
 * of the file misses here and is found by its bytes). */
#define PTR_WORDS (5 + 2 * FXT_MAX_ARGS)
#define PTR_CACHE 256u
struct ptr_key {
  uint64_t w[PTR_WORDS];
  uint32_t n;
  int64_t kind; /* -1: empty */
};

struct fxt_sel_kinds {
  struct ptr_key cache[PTR_CACHE];
  struct kind *v;
  size_t n, cap;
  uint32_t *slots; /* open addressing: kind index + 1, 0 empty; a power of two */
  size_t nslots;
  unsigned char *keys;
  size_t keys_len, keys_cap;
  struct fxt_tbuf scratch; /* the key being looked up */
};

struct fxt_sel_kinds *fxt_sel_kinds_new(void) {
  struct fxt_sel_kinds *k = calloc(1, sizeof *k);
  if (k == NULL)
    return NULL;
  fxt_tbuf_init(&k->scratch);
  for (size_t i = 0; i < PTR_CACHE; i++)
    k->cache[i].kind = -1;
  return k;
}

void fxt_sel_kinds_free(struct fxt_sel_kinds *k) {
  if (k == NULL)
    return;
  for (size_t i = 0; i < k->n; i++)
    free(k->v[i].fields);
  free(k->v);
  free(k->slots);
  free(k->keys);
  fxt_tbuf_free(&k->scratch);
  free(k);
}

static void put_text(struct fxt_tbuf *b, const char *p, uint32_t len) {
  fxt_tbuf_put(b, (const char *)&len, sizeof len);
  fxt_tbuf_put(b, p ? p : "", len);
}

/* What decides an event's kind, as bytes: its type, description, system:event and arguments'
 * types and names. The description is named by its address (stable while the file is open). */
static void key_of(const struct fxtf_event *e, struct fxt_tbuf *b) {
  const struct fxt_event *ev = &e->ev;
  b->len = 0;
  uintptr_t desc = (uintptr_t)e->desc;
  uint32_t head[2] = {ev->type, ev->num_args};
  fxt_tbuf_put(b, (const char *)head, sizeof head);
  fxt_tbuf_put(b, (const char *)&desc, sizeof desc);
  put_text(b, ev->category.data, ev->category.len);
  put_text(b, ev->name.data, ev->name.len);
  for (uint32_t i = 0; i < ev->num_args && i < FXT_MAX_ARGS; i++) {
    fxt_tbuf_put(b, (const char *)&ev->args[i].type, sizeof ev->args[i].type);
    put_text(b, ev->args[i].name.data, ev->args[i].name.len);
  }
}

static uint64_t hash_bytes(const unsigned char *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325u;
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 0x100000001b3u;
  return h ^ (h >> 29);
}

static bool rehash(struct fxt_sel_kinds *k) {
  size_t n = k->nslots ? 2 * k->nslots : 64;
  uint32_t *s = calloc(n, sizeof *s);
  if (s == NULL)
    return false;
  for (size_t i = 0; i < k->n; i++) {
    size_t at = k->v[i].hash & (n - 1);
    while (s[at] != 0)
      at = (at + 1) & (n - 1);
    s[at] = (uint32_t)i + 1;
  }
  free(k->slots);
  k->slots = s;
  k->nslots = n;
  return true;
}

static uint32_t ptr_key_of(const struct fxtf_event *e, struct ptr_key *p) {
  const struct fxt_event *ev = &e->ev;
  uint32_t n = 0, nargs = ev->num_args < FXT_MAX_ARGS ? ev->num_args : FXT_MAX_ARGS;
  p->w[n++] = (uint64_t)ev->type << 32 | nargs;
  p->w[n++] = (uintptr_t)e->desc;
  p->w[n++] = (uintptr_t)ev->category.data;
  p->w[n++] = (uintptr_t)ev->name.data;
  p->w[n++] = (uint64_t)ev->category.len << 32 | ev->name.len;
  for (uint32_t i = 0; i < nargs; i++) {
    p->w[n++] = (uintptr_t)ev->args[i].name.data;
    p->w[n++] = (uint64_t)ev->args[i].type << 32 | ev->args[i].name.len;
  }
  p->n = n;
  uint64_t h = 0;
  for (uint32_t i = 0; i < n; i++)
    h = (h ^ p->w[i]) * 0x9e3779b97f4a7c15u;
  return (uint32_t)(h >> 56) & (PTR_CACHE - 1);
}

static int64_t by_bytes(struct fxt_sel_kinds *k, const struct fxtf_event *e, bool *is_new);

int64_t fxt_sel_kind(struct fxt_sel_kinds *k, const struct fxtf_event *e, bool *is_new) {
  struct ptr_key p;
  uint32_t at = ptr_key_of(e, &p);
  struct ptr_key *c = &k->cache[at];
  *is_new = false;
  if (c->kind >= 0 && c->n == p.n && memcmp(c->w, p.w, p.n * sizeof p.w[0]) == 0)
    return c->kind;
  int64_t kind = by_bytes(k, e, is_new);
  if (kind >= 0) {
    *c = p;
    c->kind = kind;
  }
  return kind;
}

static int64_t by_bytes(struct fxt_sel_kinds *k, const struct fxtf_event *e, bool *is_new) {
  key_of(e, &k->scratch);
  if (k->scratch.oom)
    return -1;
  const unsigned char *key = (const unsigned char *)k->scratch.data;
  size_t len = k->scratch.len;
  uint64_t h = hash_bytes(key, len);
  if (k->nslots == 0 && !rehash(k))
    return -1;
  size_t at = h & (k->nslots - 1);
  for (; k->slots[at] != 0; at = (at + 1) & (k->nslots - 1)) {
    const struct kind *c = &k->v[k->slots[at] - 1];
    if (c->hash == h && c->key_len == len && memcmp(k->keys + c->key_at, key, len) == 0)
      return k->slots[at] - 1;
  }
  struct fxt_sel_fields *fields = malloc(sizeof *fields);
  if (fields == NULL || k->n >= UINT32_MAX - 1 ||
      !fxt_grow((void **)&k->v, &k->cap, k->n + 1, sizeof *k->v, 16) ||
      !fxt_grow((void **)&k->keys, &k->keys_cap, k->keys_len + len, 1, 4096)) {
    free(fields);
    return -1;
  }
  struct kind *c = &k->v[k->n];
  c->fields = fields;
  c->hash = h;
  c->key_at = k->keys_len;
  c->key_len = len;
  memcpy(k->keys + k->keys_len, key, len);
  k->keys_len += len;
  fxt_sel_fields_of(e, c->fields);
  k->slots[at] = (uint32_t)++k->n;
  if (2 * k->n > k->nslots && !rehash(k)) {
    k->n--; /* not findable: forgotten, the table stays as it was */
    k->slots[at] = 0;
    free(fields);
    return -1;
  }
  *is_new = true;
  return (int64_t)k->n - 1;
}

const struct fxt_sel_fields *fxt_sel_kind_fields(const struct fxt_sel_kinds *k, size_t i) {
  return k->v[i].fields;
}
