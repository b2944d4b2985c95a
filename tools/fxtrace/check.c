/* tools/fxtrace/check.c - `fxtrace check FILE`: validates a file against
 * docs/fxt-conventions.md.
 *
 * Two passes. The reader (fxtf_open) decodes the whole file strictly: any decoder error,
 * malformed tracepoint description or bookkeeping record is reported alone, as nothing after
 * it can be trusted. Then check walks the records again with its own decoder, in file order,
 * and tests the rules that depend on order, looking threads, names and descriptions up in
 * what the reader collected. Every violation is printed with its offset, sorted by offset.
 *
 * Rules (one message per thing, not per record, so a bad file gives a readable list):
 *  - the magic record first and nowhere else; a provider info record `fxtrace/1` before
 *    anything else; the initialization record before any timestamped record of its provider;
 *  - every event's system:event interned and described (a fxtrace:tracepoint blob) before the
 *    event; typed events carry one argument per field, by name, of the field's FXT type;
 *    ad-hoc events have the event type of their kind; bookkeeping records theirs;
 *  - per thread, timestamps never decrease in the thread's own record order (events and the
 *    records its producer writes: cpu, drop_stats; overrun and lost are written by the
 *    consumer at the point it notices a loss, so their timestamps are excluded);
 *  - every thread with events has a kernel-object name record, and every process one;
 *  - every string is well-formed UTF-8 (string records, inline names and values, object
 *    names, log messages; Fuchsia's reader refuses a file at the first that is not): the
 *    offset given is the bad byte's;
 *  - a clock_sync record before the first event of each provider and one after its last
 *    (but the last provider's of a file with a torn tail: the tail held it).
 * A torn tail (the file ends inside a record, cli.h) is a warning, and the records before it
 * are checked; with --strict it is a violation.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "base/ftrace_format.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <fxtrace/tracepoint.h>

static const char k_usage[] =
    "usage: fxtrace check [--help] [--strict] FILE\n"
    "\n"
    "Validates FILE against fxtrace's FXT conventions (docs/fxt-conventions.md). Prints\n"
    "\"ok: N records, M events, T threads\" and exits 0, or prints each violation as\n"
    "\"FILE: offset N: reason\" and a count, and exits 1. A file that ends inside a record\n"
    "(a write cut short) is checked up to it, with a warning on stderr; --strict makes that\n"
    "a violation.\n";

#define MAX_PRINTED 1000 /* violations kept for printing; all are counted */

struct violation {
  uint64_t offset;
  char *msg;
};

/* Per provider, as the pass goes. */
struct prov_state {
  bool init_seen, order_reported;
  uint64_t first_event, last_event; /* UINT64_MAX: none */
};

struct checker {
  const char *path;
  struct fxtf_file *f;
  struct violation *v;
  size_t nv, total;
  struct prov_state *prov;
  uint64_t *last_ts;    /* per thread: last timestamp; UINT64_MAX before the first */
  bool *ts_reported;    /* per thread: one message per thread */
  bool *name_reported;  /* per system:event id */
  bool meta_reported[FXTF_META_OTHER + 1];
  bool provider_seen, before_provider_reported;
  uint64_t events;
  bool torn; /* the file has a torn tail: its last provider's closing records are gone */
  const unsigned char *base; /* the file's bytes (offsets of strings) */
};

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void violation(struct checker *c, uint64_t offset, const char *fmt, ...) {
  c->total++;
  if (c->nv == MAX_PRINTED)
    return;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  char *msg = strdup(buf);
  if (msg == NULL)
    return;
  c->v[c->nv].offset = offset;
  c->v[c->nv++].msg = msg;
}

/* ---- descriptions against events ----------------------------------------------------------- */

/* Whether an event type fits a description kind. Typed tracepoints and printk are instants.
 * Ad-hoc call sites of different kinds may share one name (one event to the ftrace surface,
 * described once with the first site's kind): e.g. an async "block" and a flow "block", as
 * Perfetto pairs them by name. So any ad-hoc type fits an ad-hoc kind. */
static bool type_fits_kind(uint32_t type, uint16_t kind) {
  if (kind == FXT_TP_TYPED || kind == FXT_TP_PRINTK)
    return type == FXT_EVENT_INSTANT;
  return type <= FXT_EVENT_FLOW_END;
}

/* Why a typed event does not match its fields, or NULL. */
static const char *typed_mismatch(const struct fxt_event *ev, const struct fxtf_desc *d,
                                  char *buf, size_t n) {
  if (ev->num_args != d->nfields) {
    snprintf(buf, n, "%u arguments for %u fields", ev->num_args, d->nfields);
    return buf;
  }
  for (uint32_t i = 0; i < ev->num_args; i++) {
    const struct fxt_arg *a = &ev->args[i];
    const struct fxtf_field *fl = &d->fields[i];
    size_t len;
    const char *name = fxt_str_text(&a->name, &len);
    if (len != fl->name.len || memcmp(name, fl->name.data, len) != 0) {
      snprintf(buf, n, "argument %u is '%.*s', field %u is '%.*s'", i, (int)len, name, i,
               (int)fl->name.len, fl->name.data);
      return buf;
    }
    if (!fxt_ff_arg_fits(fl->type, a->type)) {
      snprintf(buf, n, "argument '%.*s' has FXT type %u, its field type %u is recorded as %u",
               (int)len, name, a->type, fl->type, fxt_ff_arg_type(fl->type));
      return buf;
    }
  }
  return NULL;
}

static void check_described(struct checker *c, const struct fxt_record *rec, uint32_t prov) {
  const struct fxt_event *ev = &rec->u.event;
  int64_t name = fxtf_name_find(c->f, prov, &ev->category, &ev->name);
  if (name < 0 || c->name_reported[name])
    return;
  const struct fxtf_desc *d = fxtf_desc_find(c->f, prov, name);
  size_t sl, nl;
  const char *sys = fxt_str_text(&ev->category, &sl), *nm = fxt_str_text(&ev->name, &nl);
  char why[200];
  const char *problem = NULL;
  bool fn = sl == 8 && memcmp(sys, "function", 8) == 0; /* the function tracer's: named for
                                                           each function, no description */
  if (ev->category.index == FXT_STR_REF_INLINE || ev->name.index == FXT_STR_REF_INLINE)
    problem = "category or name is an inline string (fxtrace interns both)";
  else if (fn && ev->type != FXT_EVENT_INSTANT && ev->type != FXT_EVENT_DURATION_COMPLETE)
    problem = "a function tracer's event is neither instant nor duration complete";
  else if (fn)
    return;
  else if (d == NULL || d->offset > rec->offset)
    problem = "no tracepoint description before the event";
  else if (!type_fits_kind(ev->type, d->kind)) {
    snprintf(why, sizeof why, "event type %u does not fit its kind %u", ev->type, d->kind);
    problem = why;
  } else if (d->kind == FXT_TP_TYPED)
    problem = typed_mismatch(ev, d, why, sizeof why);
  if (problem == NULL)
    return;
  c->name_reported[name] = true;
  violation(c, rec->offset, "%.*s:%.*s: %s", (int)sl, sys, (int)nl, nm, problem);
}

/* ---- per-record rules ------------------------------------------------------------------------ */

/* A string of the file (s inside it, n bytes) that must be well-formed UTF-8. */
static void check_utf8(struct checker *c, const char *s, size_t n, const char *what) {
  size_t bad = fxt_utf8_valid(s, n);
  if (bad == n)
    return;
  char shown[64];
  violation(c, (uint64_t)((const unsigned char *)s - c->base) + bad,
            "%s \"%s\" is not valid UTF-8 (byte 0x%02x at %zu of its %zu)", what,
            cli_printable(s, n < 16 ? n : 16, shown, sizeof shown), (unsigned char)s[bad], bad,
            n);
}

/* An inline string ref (a table ref's text is checked in its string record). */
static void check_ref(struct checker *c, const struct fxt_str_ref *r, const char *what) {
  if (r->index == FXT_STR_REF_INLINE && r->data != NULL)
    check_utf8(c, r->data, r->len, what);
}

static void check_args(struct checker *c, const struct fxt_arg *a, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    check_ref(c, &a[i].name, "argument name");
    if (a[i].type == FXT_ARG_STRING)
      check_ref(c, &a[i].value.str, "string argument");
  }
}

static void check_strings(struct checker *c, const struct fxt_record *rec) {
  switch (rec->kind) {
  case FXT_KIND_STRING:
    check_utf8(c, rec->u.string.data, rec->u.string.len, "string record");
    break;
  case FXT_KIND_PROVIDER_INFO:
    check_utf8(c, rec->u.provider_info.name, rec->u.provider_info.name_len, "provider name");
    break;
  case FXT_KIND_KERNEL_OBJECT:
    check_ref(c, &rec->u.kernel_object.name, "object name");
    check_args(c, rec->u.kernel_object.args, rec->u.kernel_object.num_args);
    break;
  case FXT_KIND_EVENT:
    check_ref(c, &rec->u.event.category, "category");
    check_ref(c, &rec->u.event.name, "event name");
    check_args(c, rec->u.event.args, rec->u.event.num_args);
    break;
  case FXT_KIND_LOG:
    check_utf8(c, rec->u.log.message, rec->u.log.len, "log message");
    break;
  default:
    break;
  }
}

static void check_thread_order(struct checker *c, const struct fxt_event *ev, uint64_t offset,
                               uint32_t prov) {
  int64_t t = fxtf_thread_find(c->f, prov, ev->thread.process_koid, ev->thread.thread_koid);
  if (t < 0)
    return;
  /* A duration-complete event (a scope, drop_stats) is written when it ends: its place in the
   * thread's order is its end time; its start is earlier by design. */
  uint64_t ts = ev->type == FXT_EVENT_DURATION_COMPLETE ? ev->trailer : ev->timestamp;
  if (c->last_ts[t] != UINT64_MAX && ts < c->last_ts[t] && !c->ts_reported[t]) {
    c->ts_reported[t] = true;
    violation(c, offset,
              "thread %" PRIu64 "/%" PRIu64 ": timestamp %" PRIu64 " before the thread's "
              "previous one (%" PRIu64 ")",
              ev->thread.process_koid, ev->thread.thread_koid, ts, c->last_ts[t]);
  }
  if (c->last_ts[t] == UINT64_MAX || ts > c->last_ts[t])
    c->last_ts[t] = ts;
}

static void check_event(struct checker *c, const struct fxt_record *rec, uint32_t prov) {
  const struct fxt_event *ev = &rec->u.event;
  struct fxtf_meta m;
  if (fxtf_parse_meta(rec, &m, NULL, 0) != 0) /* the reader accepted it: cannot happen */
    return;
  if (m.want_type >= 0 && ev->type != (uint32_t)m.want_type && !c->meta_reported[m.kind]) {
    c->meta_reported[m.kind] = true;
    violation(c, rec->offset, "kernel:meta %.*s has event type %u (conventions: %d)",
              (int)ev->name.len, ev->name.data, ev->type, m.want_type);
  }
  if (m.kind == FXTF_META_NONE) {
    c->events++;
    struct prov_state *p = &c->prov[prov];
    if (p->first_event == UINT64_MAX)
      p->first_event = rec->offset;
    p->last_event = rec->offset;
    check_described(c, rec, prov);
  }
  if (m.kind == FXTF_META_NONE || m.kind == FXTF_META_CPU || m.kind == FXTF_META_DROP_STATS)
    check_thread_order(c, ev, rec->offset, prov);
}

static bool timestamped(uint32_t kind) {
  return kind == FXT_KIND_EVENT || kind == FXT_KIND_CONTEXT_SWITCH || kind == FXT_KIND_WAKEUP ||
         kind == FXT_KIND_LEGACY_CONTEXT_SWITCH || kind == FXT_KIND_LOG ||
         kind == FXT_KIND_LARGE_BLOB_EVENT;
}

static void check_record(struct checker *c, const struct fxt_record *rec) {
  check_strings(c, rec);
  if (rec->kind == FXT_KIND_MAGIC) {
    if (rec->offset != 0)
      violation(c, rec->offset, "magic record inside the file (only the first file of a "
                                "concatenation keeps it)");
    return;
  }
  if (rec->kind == FXT_KIND_PROVIDER_INFO) {
    c->provider_seen = true;
    const struct fxt_provider_info *pi = &rec->u.provider_info;
    if (pi->name_len != 9 || memcmp(pi->name, "fxtrace/1", 9) != 0)
      violation(c, rec->offset, "provider name '%.*s' (this checker knows 'fxtrace/1')",
                (int)pi->name_len, pi->name);
  } else if (!c->provider_seen && !c->before_provider_reported) {
    c->before_provider_reported = true;
    violation(c, rec->offset, "record before the first provider info record");
  }
  uint32_t prov = fxtf_provider_at(c->f, rec->offset);
  if (prov == UINT32_MAX)
    return;
  struct prov_state *p = &c->prov[prov];
  if (rec->kind == FXT_KIND_INIT)
    p->init_seen = true;
  if (timestamped(rec->kind) && !p->init_seen && !p->order_reported) {
    p->order_reported = true;
    violation(c, rec->offset, "timestamped record before the initialization record");
  }
  if (rec->kind == FXT_KIND_EVENT)
    check_event(c, rec, prov);
}

/* ---- after the pass -------------------------------------------------------------------------- */

static void check_names_and_syncs(struct checker *c) {
  uint32_t nt;
  const struct fxtf_thread *t = fxtf_threads(c->f, &nt);
  for (uint32_t i = 0; i < nt; i++)
    if (t[i].events && !t[i].named)
      violation(c, t[i].first_offset,
                "thread %" PRIu64 "/%" PRIu64 " has events but no kernel-object name record",
                t[i].pid, t[i].tid);
  for (uint32_t i = 0; i < fxtf_provider_count(c->f); i++) {
    const struct fxtf_provider *p = fxtf_provider(c->f, i);
    const struct prov_state *s = &c->prov[i];
    if (p->process_name.len == 0 && p->name.len != 0) /* else reported as out of place */
      violation(c, p->offset, "process %" PRIu32 " has no kernel-object name record", p->id);
    if (s->first_event == UINT64_MAX)
      continue;
    if (p->nsyncs == 0 || p->first_sync.offset > s->first_event)
      violation(c, s->first_event, "no clock_sync record before the first event of process %"
                PRIu32, p->id);
    bool tail_gone = c->torn && i + 1 == fxtf_provider_count(c->f);
    if (!tail_gone && (p->nsyncs == 0 || p->last_sync.offset < s->last_event))
      violation(c, s->last_event, "no clock_sync record after the last event of process %"
                PRIu32, p->id);
  }
}

static int by_offset(const void *a, const void *b) {
  const struct violation *x = a, *y = b;
  return (x->offset > y->offset) - (x->offset < y->offset);
}

static int walk(struct checker *c) {
  size_t len;
  const void *buf = fxtf_data(c->f, &len);
  c->base = buf;
  struct fxt_str_slot *table = malloc(FXT_STRING_TABLE_SIZE * sizeof *table);
  struct fxt_decoder *d = malloc(sizeof *d);
  struct fxt_record *rec = malloc(sizeof *rec);
  struct fxtf_tables more = {.n = 0};
  int rc = table && d && rec ? fxtf_decoder_init(d, buf, len, table, &more) : FXT_ENOMEM;
  char err[FXT_DECODER_MSG_SIZE];
  while (rc == 0 && (rc = fxt_decoder_next(d, rec, err, sizeof err)) == 1) {
    check_record(c, rec);
    rc = 0;
  }
  if (rc < 0 && rc != FXT_ENOMEM) /* the reader decoded it all: cannot happen */
    violation(c, 0, "%s", err);
  free(rec);
  free(d);
  fxtf_tables_free(&more);
  free(table);
  return rc == FXT_ENOMEM ? rc : 0;
}

static int report(struct checker *c) {
  struct fxtf_totals tot;
  fxtf_totals(c->f, &tot);
  if (c->total == 0) {
    uint32_t nt, threads = 0;
    const struct fxtf_thread *t = fxtf_threads(c->f, &nt);
    for (uint32_t i = 0; i < nt; i++)
      threads += t[i].events != 0;
    printf("ok: %" PRIu64 " records, %" PRIu64 " events, %" PRIu32 " threads\n", tot.records,
           c->events, threads);
    return CLI_EXIT_OK;
  }
  qsort(c->v, c->nv, sizeof *c->v, by_offset);
  char shown[2048]; /* names from the file are in the messages: never raw */
  for (size_t i = 0; i < c->nv; i++)
    printf("%s: offset %" PRIu64 ": %s\n", c->path, c->v[i].offset,
           cli_printable(c->v[i].msg, strlen(c->v[i].msg), shown, sizeof shown));
  if (c->total > c->nv)
    printf("%s: ... and %zu more\n", c->path, c->total - c->nv);
  printf("%s: %zu violation%s (%" PRIu64 " records, %" PRIu64 " events)\n", c->path, c->total,
         c->total == 1 ? "" : "s", tot.records, c->events);
  return CLI_EXIT_FAIL;
}

static int check_file(const char *path, bool strict) {
  char err[FXTF_ERR_SIZE];
  struct checker c = {0};
  c.path = path;
  int orc = fxtf_open(path, &c.f, err, sizeof err);
  if (orc == FXT_ENOENT || orc == FXT_ENOMEM) { /* not the file's fault */
    cli_file_error("check", path, err);
    return CLI_EXIT_FAIL;
  }
  if (orc != 0) { /* nothing after a decoding error can be checked */
    char shown[1024];
    printf("%s: %s\n%s: 1 violation\n", path, cli_printable(err, strlen(err), shown, sizeof shown),
           path);
    return CLI_EXIT_FAIL;
  }
  uint64_t torn = fxtf_torn(c.f);
  if (torn != UINT64_MAX) {
    c.torn = true;
    struct stat st;
    size_t len;
    fxtf_data(c.f, &len);
    cli_torn("check", path, torn, stat(path, &st) == 0 ? (uint64_t)st.st_size : len, strict);
  }
  uint32_t nt, np = fxtf_provider_count(c.f);
  fxtf_threads(c.f, &nt);
  c.v = malloc(MAX_PRINTED * sizeof *c.v);
  c.prov = malloc((np + 1) * sizeof *c.prov);
  c.last_ts = malloc((nt + 1) * sizeof *c.last_ts);
  c.ts_reported = calloc(nt + 1, 1);
  c.name_reported = calloc(fxtf_name_ids(c.f) + 1, 1);
  int rc = CLI_EXIT_FAIL;
  if (c.v && c.prov && c.last_ts && c.ts_reported && c.name_reported) {
    for (uint32_t i = 0; i < np; i++)
      c.prov[i] = (struct prov_state){false, false, UINT64_MAX, UINT64_MAX};
    memset(c.last_ts, 0xff, (nt + 1) * sizeof *c.last_ts);
    if (walk(&c) == 0) {
      if (c.torn && strict)
        violation(&c, torn, "the file ends inside a record (a write cut short)");
      check_names_and_syncs(&c);
      rc = report(&c);
    }
  }
  if (rc == CLI_EXIT_FAIL && c.total == 0)
    fprintf(stderr, "fxtrace check: out of memory\n");
  for (size_t i = 0; i < c.nv; i++)
    free(c.v[i].msg);
  free(c.v);
  free(c.prov);
  free(c.last_ts);
  free(c.ts_reported);
  free(c.name_reported);
  fxtf_close(c.f);
  return rc;
}

int cmd_check(int argc, char **argv) {
  return cli_file_cmd("check", k_usage, argc, argv, check_file);
}
