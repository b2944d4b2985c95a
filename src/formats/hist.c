/* src/formats/hist.c - event histograms in the kernel's format over a file's events (hist.h):
 * each event's kind resolved to the fields the histogram names, its key built and counted in
 * the base's table (src/base/hist.c, which the tracer's live `hist` triggers share), whose
 * text is the kernel's `hist` file's.
 */
#define _GNU_SOURCE /* strnlen */
#include "hist.h"

#include <stdlib.h>
#include <string.h>

#include "../base/grow.h"
#include "select.h"

/* ---- counting ---------------------------------------------------------------------------- */

enum { SRC_NONE = -1, SRC_PID = -2, SRC_CPU = -3, SRC_COMM = -4, SRC_TYPE = -5 };

/* Where each key and value of a kind comes from. */
struct res {
  bool ok;                                       /* every field found, values numeric */
  int16_t src[FXT_HIST_MAX_KEYS + FXT_HIST_MAX_VALS]; /* field index or SRC_* */
};

struct fxt_hist {
  struct fxt_hist_spec spec; /* its string keys' widths set by the first kind counted */
  struct fxt_sel_kinds *kinds;
  struct res *res;
  size_t nres, capres;
  struct fxt_hmap *map; /* made for the first kind with every field */
  bool any;
  struct fxt_sel_values vals;
  unsigned char key[FXT_HIST_MAX_KEYS * (2 + FXT_HIST_STR_MAX)];
  unsigned char scratch[FXT_SEL_MAX_FIELDS * FXT_STR_MAX_BOUND];
};

struct fxt_hist *fxt_hist_new(const struct fxt_hist_spec *spec) {
  struct fxt_hist *h = calloc(1, sizeof *h);
  if (h == NULL)
    return NULL;
  h->spec = *spec;
  h->kinds = fxt_sel_kinds_new();
  if (h->kinds == NULL) {
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
  fxt_hmap_free(h->map);
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
    /* The table's keys are one layout: a string where the first kind has one. */
    if (key && h->map != NULL && (h->spec.keys[i].width != 0) != str)
      r->ok = false;
    if (key && h->map == NULL)
      h->spec.keys[i].width = str ? FXT_HIST_STR_MAX : 0;
  }
  if (r->ok && h->map == NULL && (h->map = fxt_hmap_new(&h->spec)) == NULL)
    r->ok = false; /* (out of memory: fxt_hist_add says) */
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

/* The key of the event (fxt_hist_key_num / fxt_hist_key_str, base/hist.h). */
static void make_key(struct fxt_hist *h, const struct fxt_sel_fields *fl, const struct res *r) {
  size_t o = 0;
  for (uint32_t i = 0; i < h->spec.nkeys; i++) {
    const struct fxt_hist_field *f = &h->spec.keys[i];
    int s = r->src[i];
    if (f->width == 0) {
      o = fxt_hist_key_num(h->key, o, f, number(fl, &h->vals, s));
    } else if (s == SRC_COMM) {
      o = fxt_hist_key_str(h->key, o, f, h->vals.comm, strlen(h->vals.comm));
    } else if (fl->f[s].type == FXT_TYPE_BYTES) { /* a char array: up to its NUL */
      const char *p = h->vals.v[s].p;
      o = fxt_hist_key_str(h->key, o, f, p, strnlen(p, fl->f[s].bound));
    } else {
      o = fxt_hist_key_str(h->key, o, f, h->vals.v[s].s, h->vals.lens[s]);
    }
  }
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
    bool had_map = h->map != NULL;
    resolve(h, fl, &h->res[kind]);
    h->nres = (size_t)kind + 1;
    if (!had_map && h->map == NULL && h->res[kind].ok)
      return FXT_ENOMEM;
  }
  const struct res *r = &h->res[kind];
  if (!r->ok)
    return 0;
  h->any = true;
  fxt_sel_values_of(e, fl, &h->vals, h->scratch);
  make_key(h, fl, r);
  uint64_t vals[FXT_HIST_MAX_VALS];
  for (uint32_t i = 0; i < h->spec.nvals; i++)
    vals[i] = number(fl, &h->vals, r->src[FXT_HIST_MAX_KEYS + i]);
  (void)fxt_hmap_add(h->map, h->key, vals, h->vals.comm);
  return 0;
}

int fxt_hist_print(struct fxt_hist *h, const char *filter, struct fxt_tbuf *out) {
  if (h->map == NULL && (h->map = fxt_hmap_new(&h->spec)) == NULL)
    return FXT_ENOMEM;
  return fxt_hmap_print(h->map, NULL, filter, false, out);
}
