/* src/formats/json.c - fxtrace FXT files as Chrome trace-event JSON, streamed (see json.h).
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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fxtfile_int.h" /* struct fxtf_clockmap */

struct conv {
  const struct fxt_json_options *opt;
  struct fxtf_pass in;
  bool scanning;         /* the first pass (scan_record), else the second (emit_record) */
  struct fxtf_segs segs; /* providers */
  struct fxt_jmap threads; /* (pid, tid) -> {records lost so far, index + 1 of its begins} */
  struct fxt_jmap printk; /* (provider, system_ref << 16 | name_ref) of printk descriptions */
  struct fxt_jout out;
  struct fxt_tbuf msg;  /* a printk message being rendered */
  struct fxt_tbuf ev;   /* the JSON event being made */
  struct fxt_tbuf args; /* scratch: an end's arguments */
  struct jbegins *begins; /* per thread, its durations begun and not ended yet */
  size_t nbegins, cap_begins;
  struct fxt_jorder ord; /* the events, to be written in time order */
  int ord_rc;            /* sticky: the first error of ord */
  struct fxt_json_stats st;
};

/* A duration begun (FXT duration begin) and not ended yet: written as one complete event
 * ("X") when its end comes, so that a viewer that pairs "B"/"E" in file order across
 * threads (DevTools) cannot mis-pair them. */
struct jbegin {
  uint64_t ns;
  size_t off;      /* in text: its head (,"cat",...,"tid") then its arguments' members */
  size_t head_len, args_len;
  bool written;    /* a "B" already (too many open): its end is an "E" */
};
struct jbegins {
  uint64_t pid, tid;
  struct fxt_tbuf text;
  struct jbegin *v;
  size_t n, cap;
};

/* Durations open on one thread beyond this are written as "B" (and their ends as "E"). */
#define MAX_OPEN 1024

static int fail(struct conv *c, int code, const char *msg) {
  if (c->in.err != NULL && c->in.err_size > 0)
    snprintf(c->in.err, c->in.err_size, "%s", msg);
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
  const struct fxt_record *rec = &c->in.rec;
  struct fxtf_seg *g = c->segs.cur ? &c->segs.v[c->segs.cur - 1] : NULL;
  struct fxtf_provider *p = g ? &g->p : NULL;
  if (rec->kind == FXT_KIND_INIT && p != NULL) {
    p->ticks_per_second = rec->u.init.ticks_per_second;
  } else if (rec->kind == FXT_KIND_EVENT) {
    struct fxtf_meta m;
    int rc = fxtf_parse_meta(rec, &m, c->in.err, c->in.err_size);
    if (rc != 0)
      return rc;
    if (m.kind == FXTF_META_CLOCK_SYNC && g != NULL)
      return fxtf_seg_add_sync(g, &m.sync);
  } else if (fxtf_is_desc(rec)) {
    struct fxtf_desc d;
    return fxtf_parse_desc(&c->in.dec, rec, &d, c->in.err, c->in.err_size);
  }
  return 0;
}

/* ---- pass 2: events ---------------------------------------------------------------------- */

/* {"ph":"<ph>" (a new event in c->ev) */
static void open_event(struct conv *c, const char *ph) {
  struct fxt_tbuf *b = &c->ev;
  b->len = 0;
  FXT_JSON_LIT(b, "{\"ph\":\"");
  fxt_json_put(b, ph, 1);
  FXT_JSON_LIT(b, "\"");
}

/* The sticky error of the time order, with its message. */
static int ord_fail(struct conv *c) {
  return c->ord_rc == FXT_ENOMEM ? fail(c, FXT_ENOMEM, "out of memory")
                                 : fail(c, c->ord_rc, c->ord.err);
}

/* The event in c->ev, complete, goes to the time order at ns (UINT64_MAX: metadata, first). */
static void close_event(struct conv *c, uint64_t ns) {
  if (c->ord_rc != 0)
    return;
  if (c->ev.oom)
    c->ord_rc = FXT_ENOMEM;
  else if (ns == UINT64_MAX)
    c->ord_rc = fxt_jorder_meta(&c->ord, c->ev.data, c->ev.len);
  else
    c->ord_rc = fxt_jorder_event(&c->ord, ns, c->ev.data, c->ev.len);
}

/* ,"cat":"..." */
static void put_cat(struct conv *c, const char *s, size_t n) {
  FXT_JSON_LIT(&c->ev, ",\"cat\":");
  fxt_json_str(&c->ev, s, n);
}

/* ,"pid":P,"tid":T */
static void put_thread(struct conv *c, uint64_t pid, uint64_t tid) {
  struct fxt_tbuf *b = &c->ev;
  FXT_JSON_LIT(b, ",\"pid\":");
  fxt_json_u64(b, pid);
  FXT_JSON_LIT(b, ",\"tid\":");
  fxt_json_u64(b, tid);
}

/* ,"pid":P,"tid":T,"ts":us */
static void put_where(struct conv *c, uint64_t pid, uint64_t tid, uint64_t ns) {
  put_thread(c, pid, tid);
  FXT_JSON_LIT(&c->ev, ",\"ts\":");
  fxt_json_us(&c->ev, ns);
}

static const char *ref_data(const struct fxt_str_ref *r) { return r->data ? r->data : ""; }

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
  FXT_JSON_LIT(&c->ev, ",\"name\":");
  if (m->oom || m->len == 0)
    FXT_JSON_LIT(&c->ev, "\"printk\"");
  else
    fxt_json_str(&c->ev, m->data, m->len);
}

static void put_name(struct conv *c, const struct fxt_event *ev) {
  struct fxt_tbuf *b = &c->ev;
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

/* The begins of a thread (NULL: out of memory). */
static struct jbegins *begins_of(struct conv *c, uint64_t pid, uint64_t tid) {
  bool added;
  struct jbegins *t = fxt_jmap_elem(&c->threads, pid, tid, 1, (void **)&c->begins, &c->nbegins,
                                    &c->cap_begins, sizeof *c->begins, &added);
  if (added) {
    t->pid = pid;
    t->tid = tid;
    fxt_tbuf_init(&t->text);
  }
  return t;
}

/* ,"cat":..,"name":..,"pid":P,"tid":T of an event into c->ev. */
static void put_head(struct conv *c, const struct fxt_event *ev) {
  put_cat(c, ref_data(&ev->category), ev->category.len);
  put_name(c, ev);
  put_thread(c, ev->thread.process_koid, ev->thread.thread_koid);
}

/* The members of ,"args":{...} that fxt_json_args wrote to b from at (nothing when none). */
static size_t args_members(struct fxt_tbuf *b, size_t at, const char **start) {
  size_t n = b->len - at, lead = sizeof(",\"args\":{") - 1;
  if (n <= lead) {
    *start = "";
    return 0;
  }
  *start = b->data + at + lead;
  return n - lead - 1;
}

/* A begin or end written as it comes, phase ph "B" or "E": a begin past MAX_OPEN, an end whose
 * begin was written so or was lost. */
static void write_alone(struct conv *c, const char *ph, const struct fxt_event *ev, uint64_t ns) {
  open_event(c, ph);
  put_head(c, ev);
  FXT_JSON_LIT(&c->ev, ",\"ts\":");
  fxt_json_us(&c->ev, ns);
  fxt_json_args(&c->ev, ev->args, ev->num_args, false);
  FXT_JSON_LIT(&c->ev, "}");
  close_event(c, ns);
}

/* A duration begin: kept until its end. */
static int on_begin(struct conv *c, const struct fxt_event *ev, uint64_t ns) {
  struct jbegins *t = begins_of(c, ev->thread.process_koid, ev->thread.thread_koid);
  if (t == NULL || (t->n == t->cap && fxtf_grow_size((void **)&t->v, &t->cap, t->n + 1,
                                                      sizeof *t->v) != 0))
    return fail(c, FXT_ENOMEM, "out of memory");
  struct jbegin *bg = &t->v[t->n++];
  *bg = (struct jbegin){.ns = ns, .off = t->text.len};
  if (t->n > MAX_OPEN) { /* written now, as "B" */
    bg->written = true;
    write_alone(c, "B", ev, ns);
    return c->ord_rc;
  }
  c->ev.len = 0;
  put_head(c, ev);
  bg->head_len = c->ev.len;
  fxt_json_args(&c->ev, ev->args, ev->num_args, false);
  const char *members;
  bg->args_len = args_members(&c->ev, bg->head_len, &members);
  fxt_tbuf_put(&t->text, c->ev.data, bg->head_len);
  fxt_tbuf_put(&t->text, members, bg->args_len);
  return t->text.oom || c->ev.oom ? fail(c, FXT_ENOMEM, "out of memory") : 0;
}

/* A duration end: with the thread's innermost begin, one complete event "X" at the begin's
 * time, the arguments of both (the end's after, as a viewer merges them); a slice that flows
 * inside it bind to. */
static int on_end(struct conv *c, const struct fxt_event *ev, uint64_t ns) {
  struct jbegins *t = begins_of(c, ev->thread.process_koid, ev->thread.thread_koid);
  if (t == NULL)
    return fail(c, FXT_ENOMEM, "out of memory");
  if (t->n == 0) { /* its begin was lost */
    c->st.unmatched_end++;
    write_alone(c, "E", ev, ns);
    return c->ord_rc;
  }
  struct jbegin bg = t->v[--t->n];
  t->text.len = bg.off;
  if (bg.written) {
    write_alone(c, "E", ev, ns);
    return c->ord_rc;
  }
  c->args.len = 0;
  fxt_json_args(&c->args, ev->args, ev->num_args, false);
  const char *end_members;
  size_t end_len = args_members(&c->args, 0, &end_members);
  open_event(c, "X");
  fxt_json_put(&c->ev, t->text.data + bg.off, bg.head_len);
  FXT_JSON_LIT(&c->ev, ",\"ts\":");
  fxt_json_us(&c->ev, bg.ns);
  FXT_JSON_LIT(&c->ev, ",\"dur\":");
  fxt_json_dur(&c->ev, bg.ns, ns);
  if (bg.args_len + end_len) {
    FXT_JSON_LIT(&c->ev, ",\"args\":{");
    fxt_json_put(&c->ev, t->text.data + bg.off + bg.head_len, bg.args_len);
    if (bg.args_len && end_len)
      FXT_JSON_LIT(&c->ev, ",");
    fxt_json_put(&c->ev, end_members, end_len);
    FXT_JSON_LIT(&c->ev, "}");
  }
  FXT_JSON_LIT(&c->ev, ",\"fxt_be\":1}");
  close_event(c, bg.ns);
  c->st.paired++;
  if (c->ord_rc == 0)
    c->ord_rc = fxt_jorder_slice(&c->ord, t->pid, t->tid, bg.ns, ns);
  return c->ord_rc;
}

static int emit_event(struct conv *c, const struct fxt_event *ev) {
  struct fxt_tbuf *b = &c->ev;
  uint64_t ns = ns_of(c, ev->timestamp);
  c->st.events++;
  if (ev->type == FXT_EVENT_DURATION_BEGIN)
    return on_begin(c, ev, ns);
  if (ev->type == FXT_EVENT_DURATION_END)
    return on_end(c, ev, ns);
  open_event(c, k_phase[ev->type]);
  if (ev->type == FXT_EVENT_INSTANT)
    FXT_JSON_LIT(b, ",\"s\":\"t\"");
  put_head(c, ev);
  bool flow = ev->type >= FXT_EVENT_FLOW_BEGIN && ev->type <= FXT_EVENT_FLOW_END;
  if (!flow) { /* a flow's time is its slice's: bound in json_order.c */
    FXT_JSON_LIT(b, ",\"ts\":");
    fxt_json_us(b, ns);
  }
  uint64_t end = ns;
  switch (ev->type) {
  case FXT_EVENT_DURATION_COMPLETE:
    end = ns_of(c, ev->trailer);
    end = end > ns ? end : ns;
    FXT_JSON_LIT(b, ",\"dur\":");
    fxt_json_dur(b, ns, end);
    break;
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
  fxt_json_args(b, ev->args, ev->num_args, ev->type == FXT_EVENT_COUNTER);
  if (c->ord_rc != 0 || b->oom)
    return c->ord_rc ? c->ord_rc : fail(c, FXT_ENOMEM, "out of memory");
  if (flow)
    return c->ord_rc = fxt_jorder_flow(&c->ord, ev->thread.process_koid,
                                       ev->thread.thread_koid, ns, b->data, b->len);
  FXT_JSON_LIT(b, "}");
  close_event(c, ns);
  if (ev->type == FXT_EVENT_DURATION_COMPLETE && c->ord_rc == 0)
    c->ord_rc = fxt_jorder_slice(&c->ord, ev->thread.process_koid, ev->thread.thread_koid, ns,
                                 end);
  return c->ord_rc;
}

/* What is still open at the end: "B" events (records were lost), and slices to the end of
 * time for the flows in them. */
static int close_begins(struct conv *c) {
  for (size_t i = 0; i < c->nbegins && c->ord_rc == 0; i++) {
    struct jbegins *t = &c->begins[i];
    for (size_t k = 0; k < t->n && c->ord_rc == 0; k++) {
      struct jbegin *bg = &t->v[k];
      c->st.unmatched_begin++;
      if (bg->written)
        continue;
      open_event(c, "B");
      fxt_json_put(&c->ev, t->text.data + bg->off, bg->head_len);
      FXT_JSON_LIT(&c->ev, ",\"ts\":");
      fxt_json_us(&c->ev, bg->ns);
      if (bg->args_len) {
        FXT_JSON_LIT(&c->ev, ",\"args\":{");
        fxt_json_put(&c->ev, t->text.data + bg->off + bg->head_len, bg->args_len);
        FXT_JSON_LIT(&c->ev, "}");
      }
      FXT_JSON_LIT(&c->ev, "}");
      close_event(c, bg->ns);
      if (c->ord_rc == 0)
        c->ord_rc = fxt_jorder_slice(&c->ord, t->pid, t->tid, bg->ns, UINT64_MAX);
    }
  }
  return c->ord_rc;
}

/* A bookkeeping counter of one thread: "<what> (tid T)" with one sample. */
static void emit_thread_counter(struct conv *c, const struct fxt_event *ev, const char *what,
                                const char *key, uint64_t value) {
  struct fxt_tbuf *b = &c->ev;
  uint64_t ns = ns_of(c, ev->timestamp);
  open_event(c, "C");
  FXT_JSON_LIT(b, ",\"cat\":\"kernel:meta\",\"name\":\"");
  fxt_json_raw(b, what);
  FXT_JSON_LIT(b, " (tid ");
  fxt_json_u64(b, ev->thread.thread_koid);
  FXT_JSON_LIT(b, ")\"");
  put_where(c, ev->thread.process_koid, ev->thread.thread_koid, ns);
  FXT_JSON_LIT(b, ",\"args\":{\"");
  fxt_json_raw(b, key);
  FXT_JSON_LIT(b, "\":");
  fxt_json_u64(b, value);
  FXT_JSON_LIT(b, "}}");
  close_event(c, ns);
}

static int on_event(struct conv *c) {
  const struct fxt_event *ev = &c->in.rec.u.event;
  struct fxtf_meta m;
  int rc = fxtf_parse_meta(&c->in.rec, &m, c->in.err, c->in.err_size);
  if (rc != 0)
    return rc;
  switch (m.kind) {
  case FXTF_META_NONE:
    return emit_event(c, ev);
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
    return c->ord_rc;
  }
  case FXTF_META_CPU:
    if (c->opt->flags & FXT_JSON_NO_CPU)
      break;
    emit_thread_counter(c, ev, "cpu", "cpu", m.cpu);
    c->st.cpu_counters++;
    return c->ord_rc;
  default: /* clock_sync, dropped (losses are shown above), unknown bookkeeping */
    break;
  }
  c->st.skipped++;
  return 0;
}

/* {"ph":"M","name":"<what>","pid":P,"tid":T,"args":{"name":"..."}} */
static void emit_name(struct conv *c, const char *what, uint64_t pid, uint64_t tid,
                      const struct fxt_str_ref *name) {
  struct fxt_tbuf *b = &c->ev;
  open_event(c, "M");
  FXT_JSON_LIT(b, ",\"name\":\"");
  fxt_json_raw(b, what);
  FXT_JSON_LIT(b, "\"");
  put_thread(c, pid, tid);
  FXT_JSON_LIT(b, ",\"args\":{\"name\":");
  fxt_json_str(b, ref_data(name), name->len);
  FXT_JSON_LIT(b, "}}");
  close_event(c, UINT64_MAX); /* metadata first */
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
  uint64_t ns = ns_of(c, l->timestamp);
  open_event(c, "i");
  FXT_JSON_LIT(&c->ev, ",\"s\":\"t\",\"cat\":\"log\",\"name\":");
  fxt_json_str(&c->ev, l->message, l->len);
  put_where(c, l->thread.process_koid, l->thread.thread_koid, ns);
  FXT_JSON_LIT(&c->ev, "}");
  close_event(c, ns);
  c->st.logs++;
}

/* Remembers printk descriptions: their events are named by their rendered message. */
static int on_blob(struct conv *c) {
  if (!fxtf_is_desc(&c->in.rec)) {
    c->st.skipped++;
    return 0;
  }
  struct fxtf_desc d;
  int rc = fxtf_parse_desc(&c->in.dec, &c->in.rec, &d, c->in.err, c->in.err_size);
  if (rc == 0 && d.kind == FXT_TP_PRINTK &&
      fxt_jmap_get(&c->printk, c->segs.cur, (uint64_t)d.system_ref << 16 | d.name_ref) == NULL)
    rc = fail(c, FXT_ENOMEM, "out of memory");
  c->st.skipped++;
  return rc;
}

static int emit_record(struct conv *c) {
  const struct fxt_record *rec = &c->in.rec;
  int rc = 0;
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
  if (rc == 0 && c->ord_rc != 0)
    rc = ord_fail(c);
  return rc;
}

/* ---- driver ------------------------------------------------------------------------------ */

/* Each record of a pass: into its provider (the first pass adds them), then the pass's work. */
static int on_record(void *ctx) {
  struct conv *c = ctx;
  int rc = step_provider(c, &c->in.rec, c->scanning);
  if (rc != 0)
    return rc;
  return c->scanning ? scan_record(c) : emit_record(c);
}

/* One pass over the input (fxtf_pass): the first (scanning) or the second. */
static int pass(struct conv *c, bool scanning) {
  c->scanning = scanning;
  fxtf_segs_rewind(&c->segs);
  return fxtf_pass(&c->in, on_record, c);
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
  int rc = pass(c, false);
  if (rc == 0 && close_begins(c) != 0)
    rc = ord_fail(c);
  if (rc != 0)
    return rc;
  FXT_JSON_LIT(b, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
  rc = fxt_jorder_write(&c->ord, &c->out);
  if (rc != 0)
    return rc == c->out.error ? rc : fail(c, rc, c->ord.err);
  struct fxt_json_stats *s = &c->st;
  s->flows_bound = c->ord.flows_bound;
  s->sort_runs = c->ord.runs;
  FXT_JSON_LIT(b, "\n],\n\"otherData\":{\"source\":\"fxtrace convert --to json\",");
  const struct {
    const char *key;
    uint64_t n;
  } counts[] = {
      {"records", s->records}, {"events", s->events}, {"lost_counters", s->lost_counters},
      {"lost_records", s->lost_records}, {"cpu_counters", s->cpu_counters},
      {"unmatched_begin", s->unmatched_begin}, {"unmatched_end", s->unmatched_end},
      {"paired", s->paired}, {"flows_bound", s->flows_bound}, {"logs", s->logs},
      {"metadata", s->metadata}, {"skipped_records", s->skipped},
  };
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
    put_count(b, counts[i].key, counts[i].n, false);
  if (s->torn)
    put_count(b, "torn_tail_offset", s->torn, false);
  put_count(b, "providers", s->providers, true);
  return fxt_jout_flush(&c->out);
}

static int convert(struct conv *c) {
  int rc = pass(c, true);
  if (rc != 0)
    return rc;
  struct fxt_decoder_stats ds;
  fxt_decoder_stats(&c->in.dec, &ds);
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
    fxtf_pass_init(&c->in, buf, len, table, &c->st.torn, err, err_size);
    c->in.release = opt->release;
    c->in.release_ctx = opt->release_ctx;
    c->in.strict = (opt->flags & FXT_JSON_STRICT) != 0;
    c->in.release_taken = true; /* what is converted is done with */
    fxt_jout_init(&c->out, opt->write, opt->write_ctx);
    fxt_tbuf_init(&c->msg);
    fxt_tbuf_init(&c->ev);
    fxt_tbuf_init(&c->args);
    rc = fxt_jorder_init(&c->ord, opt->tmpdir, opt->run_bytes);
    if (rc != 0)
      rc = fail(c, rc, c->ord.err);
    else
      rc = convert(c);
    if (st != NULL)
      *st = c->st;
    fxt_jorder_free(&c->ord);
    fxt_jout_free(&c->out);
    fxt_tbuf_free(&c->msg);
    fxt_tbuf_free(&c->ev);
    fxt_tbuf_free(&c->args);
    for (size_t i = 0; i < c->nbegins; i++) {
      fxt_tbuf_free(&c->begins[i].text);
      free(c->begins[i].v);
    }
    free(c->begins);
    fxt_jmap_free(&c->threads);
    fxt_jmap_free(&c->printk);
    fxtf_segs_free(&c->segs);
  }
  free(table);
  free(c);
  return rc;
}
