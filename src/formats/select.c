/* src/formats/select.c - the selection of a file's events (select.h): the options' values
 * parsed, and each event checked against every criterion, with what depends only on an
 * event's kind (the events globs' verdict, the filter's program) or its thread (pid, tid,
 * comm) worked out once and kept.
 */
#define _GNU_SOURCE /* strdup */
#include "select.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/globs.h"
#include "../base/grow.h"

/* ---- the options' values ----------------------------------------------------------------- */

static bool digit(char c) { return c >= '0' && c <= '9'; }

/* A decimal number at s[*i]; false when there is none or it overflows. */
static bool number(const char *s, size_t *i, uint64_t *out) {
  if (!digit(s[*i]))
    return false;
  uint64_t v = 0;
  for (; digit(s[*i]); (*i)++) {
    unsigned d = (unsigned)(s[*i] - '0');
    if (v > (UINT64_MAX - d) / 10)
      return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

static int bad(char *err, size_t size, const char *what, size_t at) {
  snprintf(err, size, "%s at offset %zu", what, at);
  return FXT_EINVAL;
}

int fxt_sel_parse_list(const char *s, struct fxt_sel_range **out, size_t *n, char *err,
                       size_t err_size) {
  struct fxt_sel_range *r = NULL;
  size_t cap = 0, count = 0, i = 0;
  *out = NULL;
  *n = 0;
  for (;;) {
    struct fxt_sel_range x;
    size_t at = i;
    if (!number(s, &i, &x.lo)) {
      free(r);
      return bad(err, err_size, i == at && !digit(s[i]) ? "expected a number" : "number too large",
                 i);
    }
    x.hi = x.lo;
    if (s[i] == '-') {
      i++;
      at = i;
      if (!number(s, &i, &x.hi)) {
        free(r);
        return bad(err, err_size, i == at && !digit(s[i]) ? "expected a number" : "number too large",
                   i);
      }
      if (x.hi < x.lo) {
        free(r);
        return bad(err, err_size, "range ends before it starts", at);
      }
    }
    if (!fxt_grow((void **)&r, &cap, count + 1, sizeof *r, 8)) {
      free(r);
      snprintf(err, err_size, "out of memory");
      return FXT_ENOMEM;
    }
    r[count++] = x;
    if (s[i] == 0)
      break;
    if (s[i] != ',') {
      free(r);
      return bad(err, err_size, "expected ',' or '-'", i);
    }
    i++;
  }
  *out = r;
  *n = count;
  return 0;
}

int fxt_sel_parse_time(const char *s, struct fxt_sel_time *out, char *err, size_t err_size) {
  size_t i = 0;
  uint64_t sec;
  *out = (struct fxt_sel_time){0, false, false};
  if (s[0] == '+') {
    out->relative = true;
    i++;
  }
  if (!number(s, &i, &sec))
    return bad(err, err_size, digit(s[i]) ? "number too large" : "expected seconds", i);
  if (sec > UINT64_MAX / 1000000000u)
    return bad(err, err_size, "number too large", 0);
  uint64_t ns = 0, unit = 1000000000u;
  if (s[i] == '.') {
    i++;
    if (!digit(s[i]))
      return bad(err, err_size, "expected digits after '.'", i);
    for (; digit(s[i]); i++) {
      if (unit == 1)
        return bad(err, err_size, "more than 9 decimals", i);
      unit /= 10;
      ns += (uint64_t)(s[i] - '0') * unit;
    }
  }
  if (s[i] != 0)
    return bad(err, err_size, "expected seconds (S or S.fraction, '+' before: from the first event)",
               i);
  if (sec * 1000000000u > UINT64_MAX - ns)
    return bad(err, err_size, "number too large", 0);
  out->ns = sec * 1000000000u + ns;
  out->printed = !out->relative && unit >= 1000;
  return 0;
}

/* ---- criteria ---------------------------------------------------------------------------- */

struct crit {
  enum fxt_sel_kind kind;
  char *text;                  /* events, comm, filter */
  struct fxt_sel_range *r;     /* pid, tid, cpu */
  size_t nr;
  struct fxt_sel_time t;       /* from, to */
  uint8_t *by_kind;            /* events, filter: 0 unknown, 1 pass, 2 fail; per kind */
  void **progs;                /* filter: the program of each kind (NULL: none compiled) */
  size_t cap;                  /* of by_kind and progs */
  uint64_t compiled;           /* filter: kinds it compiled for */
  struct fxt_filter_error err; /* filter: the first error of a kind, one other than a missing
                                  field when there is one */
};

struct fxt_sel {
  struct crit *c;
  size_t n, cap;
  struct fxt_sel_kinds *kinds;
  uint8_t *by_thread; /* 0 unknown, 1 pass, 2 fail: the pid, tid and comm criteria */
  uint32_t nthreads;
  const struct fxtf_thread *threads;
  uint64_t first_ns, unfiltered;
  struct fxt_filter_error first_err; /* the first error other than a missing field */
  struct fxt_sel_values vals;
  unsigned char scratch[FXT_SEL_MAX_FIELDS * FXT_STR_MAX_BOUND];
};

struct fxt_sel *fxt_sel_new(void) {
  struct fxt_sel *s = calloc(1, sizeof *s);
  if (s != NULL && (s->kinds = fxt_sel_kinds_new()) == NULL) {
    free(s);
    s = NULL;
  }
  return s;
}

void fxt_sel_free(struct fxt_sel *s) {
  if (s == NULL)
    return;
  for (size_t i = 0; i < s->n; i++) {
    struct crit *c = &s->c[i];
    for (size_t k = 0; c->progs != NULL && k < c->cap; k++)
      free(c->progs[k]);
    FXT_FREE_ALL(c->progs, c->by_kind, c->text, c->r);
  }
  fxt_sel_kinds_free(s->kinds);
  FXT_FREE_ALL(s->c, s->by_thread, s);
}

bool fxt_sel_any(const struct fxt_sel *s) { return s->n > 0; }

/* Syntax: compiled against an event without fields, every error but a missing field is the
 * text's own. */
static int check_filter(const char *text, char *err, size_t err_size,
                        struct fxt_filter_error *ferr) {
  size_t len = strlen(text);
  struct fxt_filter_event ev = {NULL, 0, 0};
  size_t size = FXT_FILTER_PROG_MAX(len);
  void *prog = aligned_alloc(FXT_FILTER_ALIGN, (size + FXT_FILTER_ALIGN - 1) & ~(size_t)7);
  struct fxt_filter_error e;
  if (prog == NULL) {
    snprintf(err, err_size, "out of memory");
    return FXT_ENOMEM;
  }
  int rc = fxt_filter_compile(text, len, &ev, prog, size, &e);
  free(prog);
  if (rc >= 0 || e.code == FXT_FILTER_ERR_FIELD_NOT_FOUND)
    return 0;
  if (ferr != NULL)
    *ferr = e;
  snprintf(err, err_size, "%s at offset %u", e.msg, e.pos);
  return rc < 0 ? rc : FXT_EINVAL;
}

int fxt_sel_add(struct fxt_sel *s, enum fxt_sel_kind kind, const char *arg, char *err,
                size_t err_size, struct fxt_filter_error *ferr) {
  struct crit c = {.kind = kind};
  int rc = 0;
  switch (kind) {
  case FXT_SEL_PID:
  case FXT_SEL_TID:
  case FXT_SEL_CPU: rc = fxt_sel_parse_list(arg, &c.r, &c.nr, err, err_size); break;
  case FXT_SEL_FROM:
  case FXT_SEL_TO: rc = fxt_sel_parse_time(arg, &c.t, err, err_size); break;
  case FXT_SEL_FILTER: rc = check_filter(arg, err, err_size, ferr); break;
  default: break;
  }
  if (rc == 0 && kind == FXT_SEL_EVENTS && (c.text = fxt_globs_normalize(arg)) == NULL) {
    /* As record -e's list (src/base/globs.h): a glob has no blank inside it. */
    snprintf(err, err_size, "bad event glob list '%s': a blank inside a glob", arg);
    rc = FXT_EINVAL;
  }
  if (rc == 0 && (kind == FXT_SEL_COMM || kind == FXT_SEL_FILTER) && (c.text = strdup(arg)) == NULL)
    rc = FXT_ENOMEM;
  if (rc == 0 && !fxt_grow((void **)&s->c, &s->cap, s->n + 1, sizeof *s->c, 8))
    rc = FXT_ENOMEM;
  if (rc != 0) {
    if (rc == FXT_ENOMEM)
      snprintf(err, err_size, "out of memory");
    free(c.text);
    free(c.r);
    return rc;
  }
  s->c[s->n++] = c;
  return 0;
}

int fxt_sel_bind(struct fxt_sel *s, const struct fxtf_file *f) {
  struct fxtf_event first;
  char err[FXTF_ERR_SIZE];
  s->threads = fxtf_threads(f, &s->nthreads);
  free(s->by_thread);
  s->by_thread = calloc(s->nthreads ? s->nthreads : 1, 1);
  s->first_ns = fxtf_event_count(f) > 0 && fxtf_event_at(f, 0, &first, err, sizeof err) == 0
                    ? first.ns
                    : 0;
  return s->by_thread != NULL ? 0 : FXT_ENOMEM;
}

/* ---- matching ------------------------------------------------------------------------------ */

static bool in_list(const struct crit *c, uint64_t v) {
  for (size_t i = 0; i < c->nr; i++)
    if (v >= c->r[i].lo && v <= c->r[i].hi)
      return true;
  return false;
}

static bool thread_match(struct fxt_sel *s, const struct fxtf_thread *t) {
  for (size_t i = 0; i < s->n; i++) {
    const struct crit *c = &s->c[i];
    if ((c->kind == FXT_SEL_PID && !in_list(c, t->pid)) ||
        (c->kind == FXT_SEL_TID && !in_list(c, t->tid)))
      return false;
    if (c->kind == FXT_SEL_COMM) {
      char comm[260];
      uint32_t n = t->named ? t->comm.len : 5;
      if (n >= sizeof comm)
        n = sizeof comm - 1;
      memcpy(comm, t->named ? t->comm.data : "<...>", n);
      comm[n] = 0;
      if (fnmatch(c->text, comm, 0) != 0)
        return false;
    }
  }
  return true;
}

static bool grow_kind(struct crit *c, size_t kind) {
  if (kind < c->cap)
    return true;
  size_t cap = c->cap ? 2 * c->cap : 16;
  while (cap <= kind)
    cap *= 2;
  uint8_t *b = realloc(c->by_kind, cap);
  if (b == NULL)
    return false;
  memset(b + c->cap, 0, cap - c->cap);
  c->by_kind = b;
  if (c->kind == FXT_SEL_FILTER) {
    void **p = realloc(c->progs, cap * sizeof *p);
    if (p == NULL)
      return false;
    memset(p + c->cap, 0, (cap - c->cap) * sizeof *p);
    c->progs = p;
  }
  c->cap = cap;
  return true;
}

/* The events verdict or the filter program of kind for c; false on an allocation failure. */
static bool settle_kind(struct fxt_sel *s, struct crit *c, size_t kind, const struct fxtf_event *e) {
  if (!grow_kind(c, kind))
    return false;
  if (c->by_kind[kind] != 0)
    return true;
  if (c->kind == FXT_SEL_EVENTS) {
    char name[600];
    int n = snprintf(name, sizeof name, "%.*s:%.*s", (int)(e->ev.category.len < 290 ? e->ev.category.len : 290),
                     e->ev.category.data ? e->ev.category.data : "",
                     (int)(e->ev.name.len < 290 ? e->ev.name.len : 290),
                     e->ev.name.data ? e->ev.name.data : "");
    c->by_kind[kind] = n > 0 && fxt_globs_match(c->text, name) ? 1 : 2;
    return true;
  }
  const struct fxt_sel_fields *fl = fxt_sel_kind_fields(s->kinds, kind);
  struct fxt_filter_event fe = {fl->f, fl->n, 0};
  size_t len = strlen(c->text), size = FXT_FILTER_PROG_MAX(len);
  void *prog = aligned_alloc(FXT_FILTER_ALIGN, (size + FXT_FILTER_ALIGN - 1) & ~(size_t)7);
  struct fxt_filter_error err;
  if (prog == NULL)
    return false;
  int rc = fxt_filter_compile(c->text, len, &fe, prog, size, &err);
  c->compiled += rc >= 0;
  if (rc > 0) {
    c->progs[kind] = prog;
    c->by_kind[kind] = 1;
    return true;
  }
  free(prog);
  c->by_kind[kind] = rc == 0 ? 1 : 2; /* "0": no filter */
  bool field = err.code == FXT_FILTER_ERR_FIELD_NOT_FOUND;
  if (rc < 0 && (c->err.code == FXT_FILTER_ERR_NONE ||
                 (c->err.code == FXT_FILTER_ERR_FIELD_NOT_FOUND && !field)))
    c->err = err;
  if (rc < 0 && !field && s->first_err.code == FXT_FILTER_ERR_NONE)
    s->first_err = err;
  return true;
}

bool fxt_sel_match(struct fxt_sel *s, const struct fxtf_event *e, bool *oom) {
  size_t ti = (size_t)(e->thread - s->threads);
  if (ti < s->nthreads) {
    if (s->by_thread[ti] == 0)
      s->by_thread[ti] = thread_match(s, e->thread) ? 1 : 2;
    if (s->by_thread[ti] == 2)
      return false;
  } else if (!thread_match(s, e->thread)) {
    return false;
  }
  int64_t kind = -2;
  bool values = false;
  for (size_t i = 0; i < s->n; i++) {
    struct crit *c = &s->c[i];
    switch (c->kind) {
    case FXT_SEL_CPU:
      if (e->cpu == FXTF_CPU_UNKNOWN || !in_list(c, e->cpu))
        return false;
      break;
    case FXT_SEL_FROM:
    case FXT_SEL_TO: {
      uint64_t t = c->t.ns + (c->t.relative ? s->first_ns : 0), at = e->ns;
      if (c->t.printed) { /* text.c's rounding of the printed microseconds */
        t /= 1000;
        at = at / 1000 + (at % 1000 >= 500);
      }
      if (c->kind == FXT_SEL_FROM ? at < t : at > t)
        return false;
      break;
    }
    case FXT_SEL_EVENTS:
    case FXT_SEL_FILTER: {
      bool is_new;
      if (kind == -2)
        kind = fxt_sel_kind(s->kinds, e, &is_new);
      if (kind < 0 || !settle_kind(s, c, (size_t)kind, e)) {
        *oom = true;
        return false;
      }
      if (c->by_kind[kind] == 2) {
        if (c->kind == FXT_SEL_FILTER && c->err.code != FXT_FILTER_ERR_FIELD_NOT_FOUND)
          s->unfiltered++;
        return false;
      }
      if (c->kind == FXT_SEL_FILTER && c->progs[kind] != NULL) {
        const struct fxt_sel_fields *fl = fxt_sel_kind_fields(s->kinds, (size_t)kind);
        if (!values)
          fxt_sel_values_of(e, fl, &s->vals, s->scratch);
        values = true;
        if (!fxt_filter_match(c->progs[kind], s->vals.v, s->vals.lens, &s->vals.common))
          return false;
      }
      break;
    }
    default: break;
    }
  }
  return true;
}

uint64_t fxt_sel_unfiltered(const struct fxt_sel *s, struct fxt_filter_error *first) {
  if (first != NULL)
    *first = s->first_err;
  return s->unfiltered;
}

const char *fxt_sel_filter_failed(const struct fxt_sel *s, struct fxt_filter_error *err) {
  for (size_t i = 0; i < s->n; i++)
    if (s->c[i].kind == FXT_SEL_FILTER && s->c[i].compiled == 0 &&
        s->c[i].err.code != FXT_FILTER_ERR_NONE) {
      *err = s->c[i].err;
      return s->c[i].text;
    }
  return NULL;
}
