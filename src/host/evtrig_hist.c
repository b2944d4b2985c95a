/* evtrig_hist.c - `hist` event triggers (evtrig.h; the kernel's trace_events_hist.c, whose
 * CONFIG_HIST_TRIGGERS this machine's kernel lacks, so its texts come from its source):
 * "hist:keys=K[,K2,K3][:vals=V,...][:sort=S[.descending],...][:size=N][:pause|:cont|:clear]
 * [:name=X] [if FILTER]" parsed and checked against the event's fields, the table counted on
 * the emit path (the base's, src/base/hist.h: lock-free, no allocation), and the `hist` file.
 *
 * Concurrency: a trigger's histogram is made before the trigger is published and freed with
 * it (evtrig.c, after fxt_filters_set_triggers's wait). `paused` is written by the control
 * side, read relaxed by emissions (nothing is published with it); a clear pauses, waits for
 * every emission that may be counting (fxt_slots_sync: its membarrier makes the pause seen by
 * any later emission, its acquire loads of depth pair with their release at leave), clears,
 * and restores the state.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fxtrace/errors.h>
#include <fxtrace/filter.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/hist.h"
#include "../base/tbuf.h"
#include "evtrig.h"
#include "registry.h"
#include "session_int.h"
#include "slots.h"

enum { SRC_PID = -1, SRC_CPU = -2, SRC_COMM = -3, SRC_TYPE = -4 };

struct fxt_evtrig_hist {
  struct fxt_hist_spec spec;
  struct fxt_hmap *map;
  _Atomic bool paused;
  char name[64]; /* name=X, or "" */
  /* Each key's and value's source: the index of its field in the event's values (the hook's
   * layout: a typed tracepoint's fields, an ad-hoc event's fxt_registry_event_fields, which
   * fxt_filter_pass_adhoc lays its values out by) or SRC_*, and that field's type and bound. */
  int16_t src[FXT_HIST_MAX_KEYS + FXT_HIST_MAX_VALS];
  uint16_t type[FXT_HIST_MAX_KEYS + FXT_HIST_MAX_VALS];
  uint16_t bound[FXT_HIST_MAX_KEYS + FXT_HIST_MAX_VALS];
};

/* ---- the write's text (no state: fuzz_evtrig runs it) ---- */

/* The kernel's error texts (trace_events_hist.c, ERRORS). */
static const char *const k_errs[] = {
    [FXT_HIST_ERR_FIELD_NOT_FOUND] = "Couldn't find field",
    [FXT_HIST_ERR_BAD_FIELD_MODIFIER] = "Invalid field modifier",
    [FXT_HIST_ERR_TRIGGER_EEXIST] = "Hist trigger already exists",
    [FXT_HIST_ERR_TRIGGER_ENOENT_CLEAR] = "Can't clear or continue a nonexistent hist trigger",
    [FXT_HIST_ERR_INVALID_SORT_FIELD] = "Sort field must be a key or a val",
    [FXT_HIST_ERR_TOO_MANY_SORT_FIELDS] = "Too many sort fields (Max = 2)",
    [FXT_HIST_ERR_INVALID_SORT_MODIFIER] = "Invalid sort modifier",
    [FXT_HIST_ERR_EMPTY_SORT_FIELD] = "Empty sort field",
};

const char *fxt_evtrig_hist_strerror(int code)
{
  return code > 0 && (size_t)code < sizeof(k_errs) / sizeof(k_errs[0]) && k_errs[code]
             ? k_errs[code]
             : "";
}

static int fail(struct fxt_evtrig_hist_error *e, int code, size_t pos, int rc)
{
  e->code = code;
  e->pos = pos;
  return rc;
}

/* The kernel's errpos(str): where str first occurs in the logged command, "hist:" + param. */
static size_t errpos(const char *param, const char *tok, size_t n)
{
  const char *at = n ? memmem(param, strlen(param), tok, n) : NULL;
  return at ? 5 + (size_t)(at - param) : 0;
}

/* A piece s[0..n) of the attributes starting with prefix: its value's offset, or 0. */
static size_t after(const char *s, size_t n, const char *prefix)
{
  size_t k = strlen(prefix);
  return n >= k && memcmp(s, prefix, k) == 0 ? k : 0;
}

int fxt_evtrig_hist_attrs(const char *param, size_t len, struct fxt_evtrig_hist_attrs *a,
                          struct fxt_evtrig_hist_error *err)
{
  memset(a, 0, sizeof(*a));
  err->code = 0;
  err->pos = 0;
  a->size = 2048;
  /* The kernel's parse_hist_trigger_attrs: ':'-separated, each one attribute. */
  for (size_t at = 0; at <= len;) {
    const char *c = memchr(param + at, ':', len - at);
    size_t n = c ? (size_t)(c - (param + at)) : len - at;
    const char *s = param + at;
    size_t v;
    struct fxt_evtrig_hist_str *dst = NULL;
    if ((v = after(s, n, "keys=")) || (v = after(s, n, "key=")))
      dst = &a->keys;
    else if ((v = after(s, n, "vals=")) || (v = after(s, n, "values=")) ||
             (v = after(s, n, "val=")))
      dst = &a->vals;
    else if ((v = after(s, n, "sort=")))
      dst = &a->sort;
    else if ((v = after(s, n, "name=")))
      dst = &a->name;
    if (dst) {
      dst->at = at + v;
      dst->len = n - v;
    } else if ((v = after(s, n, "size="))) {
      char num[32];
      if (n - v == 0 || n - v >= sizeof(num))
        return FXT_EINVAL;
      memcpy(num, s + v, n - v);
      num[n - v] = 0;
      char *end;
      unsigned long long x = strtoull(num, &end, 0);
      if (*end != 0 || num[0] == '-' || num[0] == '+' || num[0] == ' ' ||
          (a->size = fxt_hist_size_of(x)) == 0)
        return FXT_EINVAL;
    } else if (n == 5 && memcmp(s, "pause", 5) == 0) {
      a->pause = true;
    } else if ((n == 4 && memcmp(s, "cont", 4) == 0) ||
               (n == 8 && memcmp(s, "continue", 8) == 0)) {
      a->cont = true;
    } else if (n == 5 && memcmp(s, "clear", 5) == 0) {
      a->clear = true;
    } else {
      return FXT_EINVAL; /* variables, actions, clock=, nohitcount: not supported */
    }
    if (!c)
      break;
    at += n + 1;
  }
  if (a->keys.len == 0)
    return FXT_EINVAL; /* the kernel: no keys, no histogram */
  if (a->name.len >= 64)
    return FXT_EINVAL;
  return 0;
}

/* ---- a trigger's histogram made for its event ---- */

/* The event's fields a hist trigger's keys and values name: those its filters are compiled
 * against (an ad-hoc event's head and its sites' arguments: fxt_registry_event_fields). */
struct fields {
  struct fxt_field f[FXT_TP_FIELDS_MAX];
  uint32_t n;
};

static void fields_of(const struct fxt_tracepoint *tp, struct fields *fs)
{
  fs->n = fxt_registry_event_fields(tp, fs->f);
}

/* name's source in fs (its index, SRC_*, or -100: none), whether it is a string and the
 * width of a string key; *f the field (NULL for the common ones). */
static int field_src(const struct fields *fs, const char *name, bool *str, uint32_t *width,
                     const struct fxt_field **f)
{
  *str = false;
  *width = 0;
  *f = NULL;
  for (uint32_t i = 0; i < fs->n; i++)
    if (strcmp(fs->f[i].name, name) == 0) {
      uint16_t t = fs->f[i].type;
      *str = t == FXT_TYPE_STR || t == FXT_TYPE_BYTES;
      uint32_t b = fs->f[i].bound ? fs->f[i].bound : FXT_HIST_STR_MAX;
      *width = *str ? (b < FXT_HIST_STR_MAX ? b : FXT_HIST_STR_MAX) : 0;
      *f = &fs->f[i];
      return (int)i;
    }
  if (strcmp(name, "common_pid") == 0)
    return SRC_PID;
  if (strcmp(name, "common_cpu") == 0 || strcmp(name, "cpu") == 0 || strcmp(name, "CPU") == 0)
    return SRC_CPU;
  if (strcmp(name, "comm") == 0 || strcmp(name, "common_comm") == 0 ||
      strcmp(name, "COMM") == 0) {
    *str = true;
    *width = FXT_HIST_COMM;
    return SRC_COMM;
  }
  if (strcmp(name, "common_type") == 0)
    return SRC_TYPE;
  return -100;
}

/* Checks one list (keys or vals) of param against tp, with the kernel's errors. */
static int check_list(const struct fields *fs, const char *param,
                      struct fxt_evtrig_hist_str l, bool keys,
                      struct fxt_evtrig_hist_error *err)
{
  for (size_t at = l.at; at <= l.at + l.len;) {
    const char *c = memchr(param + at, ',', l.at + l.len - at);
    size_t n = c ? (size_t)(c - (param + at)) : l.at + l.len - at;
    char f[128];
    if (n == 0 || n >= sizeof(f))
      return FXT_EINVAL;
    memcpy(f, param + at, n);
    f[n] = 0;
    char *dot = strchr(f, '.');
    if (dot)
      *dot = 0;
    bool str;
    uint32_t w;
    const struct fxt_field *fl;
    if (!(strcmp(f, "hitcount") == 0 && !keys) && field_src(fs, f, &str, &w, &fl) == -100)
      return fail(err, FXT_HIST_ERR_FIELD_NOT_FOUND, errpos(param, f, strlen(f)), FXT_EINVAL);
    if (dot) {
      const char *m = dot + 1;
      bool ok = strcmp(m, "hex") == 0 ||
                (keys && (strcmp(m, "log2") == 0 || strncmp(m, "buckets=", 8) == 0 ||
                          strncmp(m, "bucket=", 7) == 0 ||
                          (strcmp(m, "execname") == 0 && strcmp(f, "common_pid") == 0)));
      if (!ok)
        return fail(err, FXT_HIST_ERR_BAD_FIELD_MODIFIER, errpos(param, m, strlen(m)),
                    FXT_EINVAL);
    }
    if (!c)
      break;
    at += n + 1;
  }
  return 0;
}

/* The sort list's errors, as the kernel's parse_sort_keys gives them. */
static int check_sort(const char *param, struct fxt_evtrig_hist_str l,
                      struct fxt_evtrig_hist_error *err)
{
  size_t k = 0;
  for (size_t at = l.at; at <= l.at + l.len; k++) {
    const char *c = memchr(param + at, ',', l.at + l.len - at);
    size_t n = c ? (size_t)(c - (param + at)) : l.at + l.len - at;
    size_t sort_at = errpos(param, "sort=", 5); /* errpos("sort=") */
    if (n == 0)
      return fail(err, FXT_HIST_ERR_EMPTY_SORT_FIELD, sort_at, FXT_EINVAL);
    if (k == FXT_HIST_MAX_SORT - 1 && c)
      return fail(err, FXT_HIST_ERR_TOO_MANY_SORT_FIELDS, sort_at, FXT_EINVAL);
    const char *dot = memchr(param + at, '.', n);
    if (dot == param + at)
      return fail(err, FXT_HIST_ERR_EMPTY_SORT_FIELD, sort_at, FXT_EINVAL);
    if (dot) {
      size_t mn = n - (size_t)(dot + 1 - (param + at));
      if (!((mn == 10 && memcmp(dot + 1, "descending", 10) == 0) ||
            (mn == 9 && memcmp(dot + 1, "ascending", 9) == 0)))
        return fail(err, FXT_HIST_ERR_INVALID_SORT_MODIFIER, errpos(param, dot + 1, mn),
                    FXT_EINVAL);
    }
    if (!c)
      break;
    at += n + 1;
  }
  return 0;
}

static char *copy(char *dst, size_t size, const char *s, struct fxt_evtrig_hist_str l)
{
  size_t n = l.len < size - 1 ? l.len : size - 1;
  memcpy(dst, s + l.at, n);
  dst[n] = 0;
  return dst;
}

int fxt_evtrig_hist_new(const struct fxt_tracepoint *tp, const char *param,
                        const struct fxt_evtrig_hist_attrs *a, struct fxt_evtrig_hist **out,
                        struct fxt_evtrig_hist_error *err)
{
  *out = NULL;
  struct fields fs;
  fields_of(tp, &fs);
  int rc = check_list(&fs, param, a->keys, true, err);
  if (rc == 0 && a->vals.len)
    rc = check_list(&fs, param, a->vals, false, err);
  if (rc == 0 && a->sort.len)
    rc = check_sort(param, a->sort, err);
  if (rc < 0)
    return rc;
  char keys[1024], vals[1024], sort[256], size[16], msg[256];
  snprintf(size, sizeof(size), "%u", a->size);
  struct fxt_evtrig_hist *h = calloc(1, sizeof(*h));
  if (!h)
    return FXT_ENOMEM;
  if (fxt_hist_parse(&h->spec, copy(keys, sizeof(keys), param, a->keys),
                     a->vals.len ? copy(vals, sizeof(vals), param, a->vals) : NULL,
                     a->sort.len ? copy(sort, sizeof(sort), param, a->sort) : NULL, size, msg,
                     sizeof(msg)) != 0) {
    free(h);
    /* What the checks above let through: more keys or values than the kernel's map holds, a
     * sort key that is not one of them. */
    return strstr(msg, "sort key") ? fail(err, FXT_HIST_ERR_INVALID_SORT_FIELD,
                                          errpos(param, param + a->sort.at,
                                                 strcspn(param + a->sort.at, ".,:")),
                                          FXT_EINVAL)
                                   : FXT_EINVAL;
  }
  for (uint32_t i = 0; i < h->spec.nkeys + h->spec.nvals; i++) {
    bool key = i < h->spec.nkeys, str;
    struct fxt_hist_field *f = key ? &h->spec.keys[i] : &h->spec.vals[i - h->spec.nkeys];
    uint32_t w, at = key ? i : FXT_HIST_MAX_KEYS + i - h->spec.nkeys;
    const struct fxt_field *fl;
    int s = field_src(&fs, f->name, &str, &w, &fl);
    if ((str && !key) || (str && f->mod != FXT_HIST_PLAIN)) {
      free(h); /* a string is a key only, and takes no modifier */
      return FXT_EINVAL;
    }
    if (key)
      f->width = w;
    h->src[at] = (int16_t)s;
    h->type[at] = fl ? fl->type : FXT_TYPE_U64;
    h->bound[at] = fl ? fl->bound : 0;
  }
  copy(h->name, sizeof(h->name), param, a->name);
  atomic_init(&h->paused, a->pause);
  if (!(h->map = fxt_hmap_new(&h->spec))) {
    free(h);
    return FXT_ENOMEM;
  }
  *out = h;
  return 0;
}

void fxt_evtrig_hist_free(struct fxt_evtrig_hist *h)
{
  if (!h)
    return;
  fxt_hmap_free(h->map);
  free(h);
}

bool fxt_evtrig_hist_same(const struct fxt_evtrig_hist *a, const struct fxt_evtrig_hist *b)
{
  const struct fxt_hist_spec *x = &a->spec, *y = &b->spec;
  if (x->nkeys != y->nkeys || x->nvals != y->nvals || x->nsort != y->nsort ||
      strcmp(a->name, b->name) != 0)
    return false;
  for (uint32_t i = 0; i < x->nkeys + x->nvals; i++) {
    const struct fxt_hist_field *f = i < x->nkeys ? &x->keys[i] : &x->vals[i - x->nkeys];
    const struct fxt_hist_field *g = i < y->nkeys ? &y->keys[i] : &y->vals[i - y->nkeys];
    if (strcmp(f->name, g->name) != 0 || f->mod != g->mod || f->buckets != g->buckets)
      return false;
  }
  for (uint32_t i = 0; i < x->nsort; i++)
    if (x->sort[i].field != y->sort[i].field || x->sort[i].descending != y->sort[i].descending)
      return false;
  return true;
}

void fxt_evtrig_hist_control(struct fxt_evtrig_hist *h, const struct fxt_evtrig_hist_attrs *a)
{
  if (a->clear) {
    bool was = atomic_load_explicit(&h->paused, memory_order_relaxed);
    atomic_store_explicit(&h->paused, true, memory_order_relaxed);
    fxt_slots_sync(&fxt_session); /* no emission counts into it any more */
    fxt_hmap_clear(h->map);
    atomic_store_explicit(&h->paused, was, memory_order_relaxed);
  }
  if (a->pause)
    atomic_store_explicit(&h->paused, true, memory_order_relaxed);
  else if (a->cont)
    atomic_store_explicit(&h->paused, false, memory_order_relaxed);
}

void fxt_evtrig_hist_pause(struct fxt_evtrig_hist *h, bool paused)
{
  atomic_store_explicit(&h->paused, paused, memory_order_relaxed);
}

void fxt_evtrig_hist_describe(const struct fxt_evtrig_hist *h, const char *filter,
                              struct fxt_tbuf *b)
{
  fxt_hist_describe(&h->spec, h->name[0] ? h->name : NULL, filter,
                    atomic_load_explicit(&h->paused, memory_order_relaxed), b);
}

void fxt_evtrig_hist_show(const struct fxt_evtrig_hist *h, const char *filter, bool first,
                          struct fxt_tbuf *b)
{
  if (!first)
    fxt_tbuf_puts(b, "\n\n");
  (void)fxt_hmap_print(h->map, h->name[0] ? h->name : NULL, filter,
                       atomic_load_explicit(&h->paused, memory_order_relaxed), b);
}

/* ---- the emit path ---- */

static uint64_t number(const struct fxt_evtrig_hist *h, uint32_t at, const union fxt_value *v,
                       const struct fxt_filter_common *c)
{
  int s = h->src[at];
  switch (s) {
  case SRC_PID: return (uint64_t)(int64_t)c->pid;
  case SRC_CPU: return c->cpu;
  case SRC_TYPE: return c->type;
  default: break;
  }
  switch (h->type[at]) {
  case FXT_TYPE_S8:
  case FXT_TYPE_S16:
  case FXT_TYPE_S32:
  case FXT_TYPE_S64: return (uint64_t)v[s].i;
  case FXT_TYPE_DOUBLE: {
    double d = v[s].d;
    return d > -9.2e18 && d < 9.2e18 ? (uint64_t)(int64_t)d : 0;
  }
  case FXT_TYPE_PTR: return (uint64_t)(uintptr_t)v[s].p;
  default: return v[s].u;
  }
}

void fxt_evtrig_hist_count(struct fxt_evtrig_hist *h, const union fxt_value *values,
                           const uint32_t *lens, const struct fxt_filter_common *c)
{
  if (atomic_load_explicit(&h->paused, memory_order_relaxed))
    return;
  unsigned char key[FXT_HIST_MAX_KEYS * (2 + FXT_HIST_STR_MAX)];
  uint64_t vals[FXT_HIST_MAX_VALS];
  size_t o = 0;
  for (uint32_t i = 0; i < h->spec.nkeys + h->spec.nvals; i++) {
    bool k = i < h->spec.nkeys;
    uint32_t at = k ? i : FXT_HIST_MAX_KEYS + i - h->spec.nkeys;
    int s = h->src[at];
    if (s >= 0 && !values)
      return; /* no values (none are passed: not counted) */
    const struct fxt_hist_field *f = k ? &h->spec.keys[i] : NULL;
    if (k && s == SRC_COMM) {
      const char *p = c->comm ? c->comm : "";
      o = fxt_hist_key_str(key, o, f, p, strnlen(p, FXT_HIST_COMM));
    } else if (k && f->width && h->type[at] == FXT_TYPE_BYTES) {
      o = fxt_hist_key_str(key, o, f, values[s].p, strnlen(values[s].p, h->bound[at]));
    } else if (k && f->width) {
      o = fxt_hist_key_str(key, o, f, values[s].s ? values[s].s : "", lens[s]);
    } else if (k) {
      o = fxt_hist_key_num(key, o, f, number(h, at, values, c));
    } else {
      vals[i - h->spec.nkeys] = number(h, at, values, c);
    }
  }
  (void)fxt_hmap_add(h->map, key, vals, c->comm);
}
