/* src/formats/durations.c - durations of a file's scopes and begin/end pairs, with exact
 * percentiles (durations.h): every duration collected with its group, sorted once.
 */
#define _GNU_SOURCE /* strndup */
#include "durations.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/grow.h"

struct sample {
  uint64_t group, ns;
};

struct open_begin {
  int64_t name;
  uint64_t ns;
};

struct stack {
  struct open_begin *v;
  size_t n, cap;
};

struct work {
  const struct fxtf_file *f;
  bool by_thread;
  const struct fxtf_thread *threads;
  uint32_t nthreads;
  struct sample *s;
  size_t ns, cap;
  struct stack *stacks; /* per thread */
  char **names;         /* per system:event id, on first use */
  uint32_t nnames;
};

static bool add(struct work *w, int64_t name, size_t thread, uint64_t ns) {
  if (!fxt_grow((void **)&w->s, &w->cap, w->ns + 1, sizeof *w->s, 1024))
    return false;
  w->s[w->ns].group = (uint64_t)name * (w->by_thread ? w->nthreads : 1u) + (w->by_thread ? thread : 0);
  w->s[w->ns++].ns = ns;
  return true;
}

/* The system:event id of e, its name kept on first use; -1 on failure. */
static int64_t name_of(struct work *w, const struct fxtf_event *e) {
  int64_t id = fxtf_name_find(w->f, e->thread->provider, &e->ev.category, &e->ev.name);
  if (id < 0 || (uint64_t)id >= w->nnames)
    return -1;
  if (w->names[id] == NULL) {
    const struct fxt_str_ref *c = &e->ev.category, *n = &e->ev.name;
    size_t len = (size_t)c->len + 1 + n->len;
    char *s = malloc(len + 1);
    if (s == NULL)
      return -1;
    memcpy(s, c->data ? c->data : "", c->len);
    s[c->len] = ':';
    memcpy(s + c->len + 1, n->data ? n->data : "", n->len);
    s[len] = 0;
    w->names[id] = s;
  }
  return id;
}

static int cmp_sample(const void *a, const void *b) {
  const struct sample *x = a, *y = b;
  if (x->group != y->group)
    return x->group < y->group ? -1 : 1;
  return x->ns < y->ns ? -1 : x->ns > y->ns;
}

static int cmp_row(const void *a, const void *b) {
  const struct fxt_dur_row *x = a, *y = b;
  if (x->total != y->total)
    return x->total > y->total ? -1 : 1;
  int c = strcmp(x->name, y->name);
  if (c != 0 || x->thread == NULL)
    return c;
  return x->thread->tid < y->thread->tid ? -1 : x->thread->tid > y->thread->tid;
}

/* The value at nearest rank ceil(p/100 * n) of the sorted v[0..n). */
static uint64_t rank(const struct sample *v, size_t n, unsigned p) {
  size_t r = n / 100 * p + (n % 100 * p + 99) / 100; /* ceil(n * p / 100), no overflow */
  return v[r ? r - 1 : 0].ns;
}

static int collect(struct work *w, struct fxt_dur_table *out, char *err, size_t err_size) {
  struct fxtf_event *e = malloc(sizeof *e);
  if (e == NULL)
    return FXT_ENOMEM;
  size_t n = fxtf_event_count(w->f);
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    if ((rc = fxtf_event_at(w->f, i, e, err, err_size)) != 0)
      break;
    uint32_t type = e->ev.type;
    if (type != FXT_EVENT_DURATION_COMPLETE && type != FXT_EVENT_DURATION_BEGIN &&
        type != FXT_EVENT_DURATION_END)
      continue;
    size_t t = (size_t)(e->thread - w->threads);
    struct stack *st = &w->stacks[t];
    if (type == FXT_EVENT_DURATION_END) {
      if (st->n == 0) {
        out->lonely_ends++;
        continue;
      }
      struct open_begin b = st->v[--st->n];
      if (!add(w, b.name, t, e->ns > b.ns ? e->ns - b.ns : 0))
        rc = FXT_ENOMEM;
      continue;
    }
    int64_t name = name_of(w, e);
    if (name < 0) {
      rc = FXT_ENOMEM;
    } else if (type == FXT_EVENT_DURATION_BEGIN) {
      if (!fxt_grow((void **)&st->v, &st->cap, st->n + 1, sizeof *st->v, 8))
        rc = FXT_ENOMEM;
      else
        st->v[st->n++] = (struct open_begin){name, e->ns};
    } else {
      uint64_t end = fxtf_ticks_to_ns(e->provider, e->ev.trailer);
      if (!add(w, name, t, end > e->ns ? end - e->ns : 0)) /* as report prints dur= */
        rc = FXT_ENOMEM;
    }
  }
  for (uint32_t t = 0; t < w->nthreads; t++)
    out->open_begins += w->stacks[t].n;
  free(e);
  return rc;
}

static int rows(struct work *w, struct fxt_dur_table *out) {
  qsort(w->s, w->ns, sizeof *w->s, cmp_sample);
  size_t cap = 0;
  for (size_t i = 0, j; i < w->ns; i = j) {
    uint64_t total = 0;
    for (j = i; j < w->ns && w->s[j].group == w->s[i].group; j++)
      total = w->s[j].ns > UINT64_MAX - total ? UINT64_MAX : total + w->s[j].ns;
    if (!fxt_grow((void **)&out->rows, &cap, out->n + 1, sizeof *out->rows, 16))
      return FXT_ENOMEM;
    size_t cnt = j - i;
    uint64_t per = w->by_thread ? w->nthreads : 1u;
    struct fxt_dur_row *r = &out->rows[out->n];
    memset(r, 0, sizeof *r);
    r->name = strdup(w->names[w->s[i].group / per]);
    if (r->name == NULL)
      return FXT_ENOMEM;
    out->n++;
    r->thread = w->by_thread ? &w->threads[w->s[i].group % per] : NULL;
    r->count = cnt;
    r->total = total;
    r->min = w->s[i].ns;
    r->max = w->s[j - 1].ns;
    r->mean = total / cnt + (2 * (total % cnt) >= cnt);
    r->p50 = rank(w->s + i, cnt, 50);
    r->p90 = rank(w->s + i, cnt, 90);
    r->p99 = rank(w->s + i, cnt, 99);
  }
  qsort(out->rows, out->n, sizeof *out->rows, cmp_row);
  return 0;
}

int fxt_dur_compute(const struct fxtf_file *f, bool by_thread, struct fxt_dur_table *out,
                    char *err, size_t err_size) {
  struct work w = {.f = f, .by_thread = by_thread};
  memset(out, 0, sizeof *out);
  w.threads = fxtf_threads(f, &w.nthreads);
  w.nnames = fxtf_name_ids(f);
  w.stacks = calloc(w.nthreads ? w.nthreads : 1, sizeof *w.stacks);
  w.names = calloc(w.nnames ? w.nnames : 1, sizeof *w.names);
  int rc = w.stacks != NULL && w.names != NULL ? collect(&w, out, err, err_size) : FXT_ENOMEM;
  if (rc == 0)
    rc = rows(&w, out);
  if (rc == FXT_ENOMEM)
    snprintf(err, err_size, "out of memory");
  for (uint32_t t = 0; w.stacks != NULL && t < w.nthreads; t++)
    free(w.stacks[t].v);
  for (uint32_t i = 0; w.names != NULL && i < w.nnames; i++)
    free(w.names[i]);
  free(w.stacks);
  free(w.names);
  free(w.s);
  if (rc != 0)
    fxt_dur_free(out);
  return rc;
}

void fxt_dur_free(struct fxt_dur_table *t) {
  for (size_t i = 0; i < t->n; i++)
    free(t->rows[i].name);
  free(t->rows);
  t->rows = NULL;
  t->n = 0;
}
