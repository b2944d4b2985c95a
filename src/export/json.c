/* src/export/json.c - fxtrace FXT files as Chrome trace-event JSON, streamed (see json.h).
 *
 * Two passes of the strict decoder in file order. The first validates everything the reader
 * (fxtfile.c) validates - the decoder's checks, bookkeeping records, tracepoint descriptions -
 * and collects each provider's initialization rate and first and last clock syncs, which give
 * the mapping of its ticks to CLOCK_MONOTONIC (fxtf_clockmap_of, as `fxtrace report` uses).
 * The second writes. Providers are told apart exactly as fxtfile.c does (a provider info
 * record, or a provider section of another id, starts one; records before any belong to an
 * anonymous provider 0), so both passes count them alike.
 */
#include "json_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fxtfile_int.h" /* struct fxtf_clockmap */

/* The release callback is called each time a pass has moved this far. */
#define RELEASE_BYTES (8u << 20)

struct conv {
  const struct fxt_json_options *opt;
  const unsigned char *buf;
  size_t len;
  char *err;
  size_t err_size;
  struct fxt_decoder dec;
  struct fxt_record rec;
  struct fxt_str_slot *table;
  struct fxtf_segs segs; /* providers */
  uint64_t released;
  struct fxt_jmap threads; /* (pid, tid) -> {records lost so far, durations begun not ended} */
  struct fxt_jmap printk; /* (provider, system_ref << 16 | name_ref) of printk descriptions */
  struct fxt_jout out;
  struct fxt_tbuf msg; /* a printk message being rendered */
  uint64_t written;    /* JSON events written */
  struct fxt_json_stats st;
};

static int fail(struct conv *c, int code, const char *msg) {
  if (c->err != NULL && c->err_size > 0)
    snprintf(c->err, c->err_size, "%s", msg);
  return code;
}

/* ---- providers ------------------------------------------------------------------------- */

/* Follows rec into its provider (fxtf_segs_step). */
static int step_provider(struct conv *c, const struct fxt_record *rec, bool add) {
  int rc = fxtf_segs_step(&c->segs, rec, add);
  if (rc == FXT_ENOMEM)
    return fail(c, rc, "out of memory");
  if (rc < 0)
    return fail(c, rc, "input changed between the two passes");
  return 0;
}

static const struct fxtf_seg *current(const struct conv *c) { return &c->segs.v[c->segs.cur - 1]; }

/* CLOCK_MONOTONIC ns of the current provider's ticks (before any provider: ticks are ns). */
static uint64_t ns_of(const struct conv *c, uint64_t ticks) {
  return c->segs.cur ? fxtf_clockmap_apply(&current(c)->map, ticks) : ticks;
}

/* ---- pass 1: validate, collect clock syncs ---------------------------------------------- */

static int scan_record(struct conv *c) {
  const struct fxt_record *rec = &c->rec;
  int rc = step_provider(c, rec, true);
  if (rc != 0)
    return rc;
  struct fxtf_provider *p = c->segs.cur ? &c->segs.v[c->segs.cur - 1].p : NULL;
  if (rec->kind == FXT_KIND_INIT && p != NULL) {
    p->ticks_per_second = rec->u.init.ticks_per_second;
  } else if (rec->kind == FXT_KIND_EVENT) {
    struct fxtf_meta m;
    rc = fxtf_parse_meta(rec, &m, c->err, c->err_size);
    if (rc != 0)
      return rc;
    if (m.kind == FXTF_META_CLOCK_SYNC && p != NULL) {
      if (p->nsyncs++ == 0)
        p->first_sync = m.sync;
      p->last_sync = m.sync;
    }
  } else if (fxtf_is_desc(rec)) {
    struct fxtf_desc d;
    return fxtf_parse_desc(&c->dec, rec, &d, c->err, c->err_size);
  }
  return 0;
}

/* ---- pass 2: events ---------------------------------------------------------------------- */

/* {"ph":"<ph>" */
static void open_event(struct conv *c, const char *ph) {
  struct fxt_tbuf *b = &c->out.b;
  if (c->written++)
    FXT_JSON_LIT(b, ",\n{\"ph\":\"");
  else
    FXT_JSON_LIT(b, "\n{\"ph\":\"");
  fxt_json_put(b, ph, 1);
  FXT_JSON_LIT(b, "\"");
}

/* ,"cat":"..." */
static void put_cat(struct conv *c, const char *s, size_t n) {
  FXT_JSON_LIT(&c->out.b, ",\"cat\":");
  fxt_json_str(&c->out.b, s, n);
}

/* ,"pid":P,"tid":T */
static void put_thread(struct conv *c, uint64_t pid, uint64_t tid) {
  struct fxt_tbuf *b = &c->out.b;
  FXT_JSON_LIT(b, ",\"pid\":");
  fxt_json_u64(b, pid);
  FXT_JSON_LIT(b, ",\"tid\":");
  fxt_json_u64(b, tid);
}

/* ,"pid":P,"tid":T,"ts":us */
static void put_where(struct conv *c, uint64_t pid, uint64_t tid, uint64_t ns) {
  put_thread(c, pid, tid);
  FXT_JSON_LIT(&c->out.b, ",\"ts\":");
  fxt_json_us(&c->out.b, ns);
}

static const char *ref_data(const struct fxt_str_ref *r) { return r->data ? r->data : ""; }

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
  case FXT_ARG_STRING: fxt_json_str(b, ref_data(&a->value.str), a->value.str.len); return;
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
static void put_args(struct conv *c, const struct fxt_arg *args, uint32_t n, bool counter) {
  struct fxt_tbuf *b = &c->out.b;
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
    fxt_json_str_body(b, ref_data(&a->name), a->name.len);
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

static bool is_printk(const struct conv *c, const struct fxt_event *ev) {
  if (fxtf_str_is(&ev->category, "printk"))
    return true;
  uint16_t sys = ev->category.index, name = ev->name.index;
  if (sys == 0 || sys > FXT_MAX_STRING_INDEX || name == 0 || name > FXT_MAX_STRING_INDEX)
    return false;
  return fxt_jmap_find(&c->printk, c->segs.cur, (uint64_t)sys << 16 | name) != NULL;
}

/* ,"name":"<the rendered message>" (the format is the event name; no final newline). */
static void put_printk_name(struct conv *c, const struct fxt_event *ev) {
  struct fxt_tbuf *m = &c->msg;
  m->len = 0;
  m->oom = false;
  fxt_text_printf(m, ref_data(&ev->name), ev->name.len, ev->args, ev->num_args);
  if (m->len > 0 && m->data[m->len - 1] == '\n')
    m->len--;
  FXT_JSON_LIT(&c->out.b, ",\"name\":");
  if (m->oom || m->len == 0)
    FXT_JSON_LIT(&c->out.b, "\"printk\"");
  else
    fxt_json_str(&c->out.b, m->data, m->len);
}

static void put_name(struct conv *c, const struct fxt_event *ev) {
  struct fxt_tbuf *b = &c->out.b;
  if (ev->type == FXT_EVENT_INSTANT && is_printk(c, ev)) {
    put_printk_name(c, ev);
    return;
  }
  FXT_JSON_LIT(b, ",\"name\":\"");
  fxt_json_str_body(b, ref_data(&ev->name), ev->name.len);
  if (ev->type == FXT_EVENT_COUNTER && ev->trailer != 0) { /* "name (id)" */
    FXT_JSON_LIT(b, " (");
    fxt_json_u64(b, ev->trailer);
    FXT_JSON_LIT(b, ")");
  }
  FXT_JSON_LIT(b, "\"");
}

static const char *const k_phase[FXT_EVENT_TYPE_LAST + 1] = {
    [FXT_EVENT_INSTANT] = "i",        [FXT_EVENT_COUNTER] = "C",
    [FXT_EVENT_DURATION_BEGIN] = "B", [FXT_EVENT_DURATION_END] = "E",
    [FXT_EVENT_DURATION_COMPLETE] = "X", [FXT_EVENT_ASYNC_BEGIN] = "b",
    [FXT_EVENT_ASYNC_INSTANT] = "n",  [FXT_EVENT_ASYNC_END] = "e",
    [FXT_EVENT_FLOW_BEGIN] = "s",     [FXT_EVENT_FLOW_STEP] = "t",
    [FXT_EVENT_FLOW_END] = "f",
};

static void emit_event(struct conv *c, const struct fxt_event *ev) {
  struct fxt_tbuf *b = &c->out.b;
  uint64_t ns = ns_of(c, ev->timestamp);
  open_event(c, k_phase[ev->type]);
  if (ev->type == FXT_EVENT_INSTANT)
    FXT_JSON_LIT(b, ",\"s\":\"t\"");
  put_cat(c, ref_data(&ev->category), ev->category.len);
  put_name(c, ev);
  put_where(c, ev->thread.process_koid, ev->thread.thread_koid, ns);
  switch (ev->type) {
  case FXT_EVENT_DURATION_COMPLETE: {
    uint64_t end = ns_of(c, ev->trailer);
    FXT_JSON_LIT(b, ",\"dur\":");
    fxt_json_us(b, end > ns ? end - ns : 0);
    break;
  }
  case FXT_EVENT_ASYNC_BEGIN:
  case FXT_EVENT_ASYNC_INSTANT:
  case FXT_EVENT_ASYNC_END: /* async ids are per process (FXT); "id" would be global */
    FXT_JSON_LIT(b, ",\"id2\":{\"local\":");
    fxt_json_hex(b, ev->trailer);
    FXT_JSON_LIT(b, "}");
    break;
  case FXT_EVENT_FLOW_BEGIN:
  case FXT_EVENT_FLOW_STEP:
  case FXT_EVENT_FLOW_END:
    FXT_JSON_LIT(b, ",\"id\":");
    fxt_json_hex(b, ev->trailer);
    if (ev->type == FXT_EVENT_FLOW_END)
      FXT_JSON_LIT(b, ",\"bp\":\"e\"");
    break;
  default:
    break;
  }
  put_args(c, ev->args, ev->num_args, ev->type == FXT_EVENT_COUNTER);
  FXT_JSON_LIT(b, "}");
  c->st.events++;
}

/* A bookkeeping counter of one thread: "<what> (tid T)" with one sample. */
static void emit_thread_counter(struct conv *c, const struct fxt_event *ev, const char *what,
                                const char *key, uint64_t value) {
  struct fxt_tbuf *b = &c->out.b;
  open_event(c, "C");
  FXT_JSON_LIT(b, ",\"cat\":\"kernel:meta\",\"name\":\"");
  fxt_json_raw(b, what);
  FXT_JSON_LIT(b, " (tid ");
  fxt_json_u64(b, ev->thread.thread_koid);
  FXT_JSON_LIT(b, ")\"");
  put_where(c, ev->thread.process_koid, ev->thread.thread_koid, ns_of(c, ev->timestamp));
  FXT_JSON_LIT(b, ",\"args\":{\"");
  fxt_json_raw(b, key);
  FXT_JSON_LIT(b, "\":");
  fxt_json_u64(b, value);
  FXT_JSON_LIT(b, "}}");
}

/* Counts durations that do not pair up on their thread (records lost in between): written as
 * they are, but counted, since a viewer nests everything after an open begin inside it. */
static int count_nesting(struct conv *c, const struct fxt_event *ev) {
  uint64_t *t = fxt_jmap_get(&c->threads, ev->thread.process_koid, ev->thread.thread_koid);
  if (t == NULL)
    return fail(c, FXT_ENOMEM, "out of memory");
  if (ev->type == FXT_EVENT_DURATION_BEGIN)
    t[1]++;
  else if (t[1] > 0)
    t[1]--;
  else
    c->st.unmatched_end++;
  return 0;
}

static int on_event(struct conv *c) {
  const struct fxt_event *ev = &c->rec.u.event;
  struct fxtf_meta m;
  int rc = fxtf_parse_meta(&c->rec, &m, c->err, c->err_size);
  if (rc != 0)
    return rc;
  switch (m.kind) {
  case FXTF_META_NONE:
    emit_event(c, ev);
    return ev->type == FXT_EVENT_DURATION_BEGIN || ev->type == FXT_EVENT_DURATION_END
               ? count_nesting(c, ev)
               : 0;
  case FXTF_META_DROP_STATS:
  case FXTF_META_OVERRUN:
  case FXTF_META_LOST: {
    uint64_t *total = fxt_jmap_get(&c->threads, ev->thread.process_koid, ev->thread.thread_koid);
    if (total == NULL)
      return fail(c, FXT_ENOMEM, "out of memory");
    *total = m.records > UINT64_MAX - *total ? UINT64_MAX : *total + m.records;
    emit_thread_counter(c, ev, "fxtrace lost", "records", *total);
    c->st.lost_counters++;
    c->st.lost_records += m.records;
    return 0;
  }
  case FXTF_META_CPU:
    if (c->opt->flags & FXT_JSON_NO_CPU)
      break;
    emit_thread_counter(c, ev, "cpu", "cpu", m.cpu);
    c->st.cpu_counters++;
    return 0;
  default: /* clock_sync, dropped (losses are shown above), unknown bookkeeping */
    break;
  }
  c->st.skipped++;
  return 0;
}

/* {"ph":"M","name":"<what>","pid":P,"tid":T,"args":{"name":"..."}} */
static void emit_name(struct conv *c, const char *what, uint64_t pid, uint64_t tid,
                      const struct fxt_str_ref *name) {
  struct fxt_tbuf *b = &c->out.b;
  open_event(c, "M");
  FXT_JSON_LIT(b, ",\"name\":\"");
  fxt_json_raw(b, what);
  FXT_JSON_LIT(b, "\"");
  put_thread(c, pid, tid);
  FXT_JSON_LIT(b, ",\"args\":{\"name\":");
  fxt_json_str(b, ref_data(name), name->len);
  FXT_JSON_LIT(b, "}}");
  c->st.metadata++;
}

static void on_kernel_object(struct conv *c, const struct fxt_kernel_object *k) {
  if (k->obj_type == FXT_KOBJ_PROCESS) { /* tid = pid: the main thread, which always exists */
    emit_name(c, "process_name", k->koid, k->koid, &k->name);
    return;
  }
  if (k->obj_type != FXT_KOBJ_THREAD) {
    c->st.skipped++;
    return;
  }
  uint64_t pid = current(c)->p.id;
  for (uint32_t i = 0; i < k->num_args; i++)
    if (k->args[i].type == FXT_ARG_KOID && fxtf_str_is(&k->args[i].name, "process"))
      pid = k->args[i].value.koid;
  emit_name(c, "thread_name", pid, k->koid, &k->name);
}

static void on_log(struct conv *c, const struct fxt_log *l) {
  open_event(c, "i");
  FXT_JSON_LIT(&c->out.b, ",\"s\":\"t\",\"cat\":\"log\",\"name\":");
  fxt_json_str(&c->out.b, l->message, l->len);
  put_where(c, l->thread.process_koid, l->thread.thread_koid, ns_of(c, l->timestamp));
  FXT_JSON_LIT(&c->out.b, "}");
  c->st.logs++;
}

/* Remembers printk descriptions: their events are named by their rendered message. */
static int on_blob(struct conv *c) {
  if (!fxtf_is_desc(&c->rec)) {
    c->st.skipped++;
    return 0;
  }
  struct fxtf_desc d;
  int rc = fxtf_parse_desc(&c->dec, &c->rec, &d, c->err, c->err_size);
  if (rc == 0 && d.kind == FXT_TP_PRINTK &&
      fxt_jmap_get(&c->printk, c->segs.cur, (uint64_t)d.system_ref << 16 | d.name_ref) == NULL)
    rc = fail(c, FXT_ENOMEM, "out of memory");
  c->st.skipped++;
  return rc;
}

static int emit_record(struct conv *c) {
  const struct fxt_record *rec = &c->rec;
  int rc = step_provider(c, rec, false);
  if (rc != 0)
    return rc;
  switch (rec->kind) {
  case FXT_KIND_EVENT:
    rc = on_event(c);
    break;
  case FXT_KIND_KERNEL_OBJECT:
    on_kernel_object(c, &rec->u.kernel_object);
    break;
  case FXT_KIND_LOG:
    on_log(c, &rec->u.log);
    break;
  case FXT_KIND_BLOB:
    rc = on_blob(c);
    break;
  case FXT_KIND_MAGIC:
  case FXT_KIND_PROVIDER_INFO:
  case FXT_KIND_PROVIDER_SECTION:
  case FXT_KIND_INIT:
  case FXT_KIND_STRING:
  case FXT_KIND_THREAD:
    break; /* read by the decoder and the first pass */
  default:
    c->st.skipped++;
  }
  if (rc == 0)
    rc = fxt_jout_tick(&c->out);
  return rc;
}

/* ---- driver ------------------------------------------------------------------------------ */

static int pass(struct conv *c, int (*on_record)(struct conv *)) {
  fxtf_segs_rewind(&c->segs);
  c->released = 0;
  int rc = fxt_decoder_init(&c->dec, c->buf, c->len, c->table);
  while (rc == 0 && (rc = fxt_decoder_next(&c->dec, &c->rec, c->err, c->err_size)) == 1) {
    rc = on_record(c);
    uint64_t end = c->rec.offset + c->rec.size;
    if (rc == 0 && c->opt->release != NULL && end - c->released >= RELEASE_BYTES) {
      c->opt->release(c->opt->release_ctx, c->released, end);
      c->released = end;
    }
  }
  struct fxt_decoder_stats ds;
  fxt_decoder_stats(&c->dec, &ds);
  if (rc == FXT_EBADMSG && !(c->opt->flags & FXT_JSON_STRICT) &&
      fxtf_torn_at(c->buf, c->len, ds.bytes)) { /* the first pass: the input ends there */
    c->st.torn = ds.bytes;
    c->len = (size_t)ds.bytes;
    if (c->err != NULL && c->err_size > 0)
      c->err[0] = '\0';
    rc = 0;
  }
  if (rc == 0 && c->opt->release != NULL && c->released < c->len)
    c->opt->release(c->opt->release_ctx, c->released, c->len);
  return rc;
}

static void put_count(struct fxt_tbuf *b, const char *key, uint64_t v, bool last) {
  FXT_JSON_LIT(b, "\"");
  fxt_json_raw(b, key);
  FXT_JSON_LIT(b, "\":");
  fxt_json_u64(b, v);
  fxt_json_raw(b, last ? "}}\n" : ",");
}

static int write_all(struct conv *c) {
  struct fxt_tbuf *b = &c->out.b;
  FXT_JSON_LIT(b, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
  int rc = pass(c, emit_record);
  if (rc != 0)
    return rc;
  struct fxt_json_stats *s = &c->st;
  for (size_t i = 0; c->threads.e != NULL && i <= c->threads.mask; i++)
    s->unmatched_begin += c->threads.e[i].used ? c->threads.e[i].v[1] : 0;
  FXT_JSON_LIT(b, "\n],\n\"otherData\":{\"source\":\"fxtrace convert --to json\",");
  put_count(b, "records", s->records, false);
  put_count(b, "events", s->events, false);
  put_count(b, "lost_counters", s->lost_counters, false);
  put_count(b, "lost_records", s->lost_records, false);
  put_count(b, "cpu_counters", s->cpu_counters, false);
  put_count(b, "unmatched_begin", s->unmatched_begin, false);
  put_count(b, "unmatched_end", s->unmatched_end, false);
  put_count(b, "logs", s->logs, false);
  put_count(b, "metadata", s->metadata, false);
  put_count(b, "skipped_records", s->skipped, false);
  if (s->torn)
    put_count(b, "torn_tail_offset", s->torn, false);
  put_count(b, "providers", s->providers, true);
  return fxt_jout_flush(&c->out);
}

static int convert(struct conv *c) {
  int rc = pass(c, scan_record);
  if (rc != 0)
    return rc;
  struct fxt_decoder_stats ds;
  fxt_decoder_stats(&c->dec, &ds);
  c->st.records = ds.records;
  c->st.providers = c->segs.n;
  for (uint32_t i = 0; i < c->segs.n; i++)
    c->segs.v[i].map = fxtf_clockmap_of(&c->segs.v[i].p);
  rc = write_all(c);
  c->st.bytes = c->out.bytes;
  if (rc == FXT_ENOMEM)
    return fail(c, rc, "out of memory");
  if (rc < 0 && c->out.error == rc)
    return fail(c, rc, "writing the output failed");
  return rc;
}

int fxt_json_convert(const void *buf, size_t len, const struct fxt_json_options *opt,
                     struct fxt_json_stats *st, char *err, size_t err_size) {
  if (err != NULL && err_size > 0)
    err[0] = '\0';
  if (st != NULL)
    memset(st, 0, sizeof *st);
  if (opt == NULL || opt->write == NULL || (buf == NULL && len > 0)) {
    if (err != NULL && err_size > 0)
      snprintf(err, err_size, "invalid argument");
    return FXT_EINVAL;
  }
  struct conv *c = calloc(1, sizeof *c);
  struct fxt_str_slot *table = malloc(FXT_STRING_TABLE_SIZE * sizeof *table);
  int rc;
  if (c == NULL || table == NULL) {
    rc = FXT_ENOMEM;
    if (err != NULL && err_size > 0)
      snprintf(err, err_size, "out of memory");
  } else {
    c->opt = opt;
    c->buf = buf;
    c->len = len;
    c->err = err;
    c->err_size = err_size;
    c->table = table;
    fxt_jout_init(&c->out, opt->write, opt->write_ctx);
    fxt_tbuf_init(&c->msg);
    rc = convert(c);
    if (st != NULL)
      *st = c->st;
    fxt_jout_free(&c->out);
    fxt_tbuf_free(&c->msg);
    fxt_jmap_free(&c->threads);
    fxt_jmap_free(&c->printk);
    free(c->segs.v);
  }
  free(table);
  free(c);
  return rc;
}
