/* src/formats/tracedat_write.c - fxtrace FXT files as trace.dat (see tracedat_write.h): the passes
 * over the input and the CPU data. The head of the file is tracedat_write_head.c.
 *
 * Providers are told apart as fxtfile.c does (a provider info record, or a provider section of
 * another id, starts one; records before any belong to an anonymous provider 0), threads by
 * (provider, pid, tid), descriptions by (provider, system, name), the latest winning; a
 * thread's name is its latest kernel object name; times go through fxtf_clockmap_of, so every
 * event lands where `fxtrace report` puts it.
 */
#include "tracedat_write_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracedat_write_page.h"

/* CPU data goes out in blocks of this many pages. */
#define OUT_PAGES 32u
#define MAX_CPU 65534u

int fxt_td_writer_fail(struct fxt_td_writer *c, int code, uint64_t off, const char *fmt, ...) {
  if (c->in.err == NULL || c->in.err_size == 0)
    return code;
  int n = off == UINT64_MAX ? 0 : snprintf(c->in.err, c->in.err_size, "offset %llu: ",
                                           (unsigned long long)off);
  if (n >= 0 && (size_t)n < c->in.err_size) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->in.err + n, c->in.err_size - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return code;
}

int fxt_td_write(struct fxt_td_writer *c, const void *data, size_t n) {
  if (n == 0)
    return 0;
  int rc = c->opt->write(c->opt->write_ctx, data, n);
  if (rc < 0)
    return fxt_td_writer_fail(c, rc, UINT64_MAX, "write failed (%d)", rc);
  c->st.bytes += n;
  return 0;
}

static int oom(struct fxt_td_writer *c) {
  return fxt_td_writer_fail(c, FXT_ENOMEM, UINT64_MAX, "out of memory");
}

static uint64_t hash_text(uint64_t h, struct fxtf_text t) { /* FNV-1a, length first */
  for (uint32_t i = 0; i < 4; i++)
    h = (h ^ ((t.len >> (8 * i)) & 0xff)) * UINT64_C(0x100000001b3);
  for (uint32_t i = 0; i < t.len; i++)
    h = (h ^ (unsigned char)t.data[i]) * UINT64_C(0x100000001b3);
  return h;
}

static struct fxtf_text text_of(const struct fxt_str_ref *r) {
  struct fxtf_text t = {r->data ? r->data : "", r->len};
  return t;
}

static bool text_eq(struct fxtf_text a, struct fxtf_text b) {
  return a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0);
}

/* ---- providers --------------------------------------------------------------------------- */

/* A provider ends (pass 2): the losses of CPUs none of its events came after are trailing,
 * in the CPU stats only. */
static void close_cpu_losses(struct fxt_td_writer *c) {
  for (uint32_t i = 0; i < c->ncpus; i++) {
    c->st.lost_trailing += c->cpus[i].pend_lost;
    c->cpus[i].pend_lost = 0;
    c->cpus[i].pend_unknown = false;
  }
}

/* Follows the current record into its provider (fxtf_segs_step); string refs start afresh in
 * each provider. */
static int step_provider(struct fxt_td_writer *c, bool add) {
  int rc = fxtf_segs_step(&c->segs, &c->in.rec, add);
  if (rc == FXT_ENOMEM)
    return oom(c);
  if (rc < 0)
    return fxt_td_writer_fail(c, FXT_EBADMSG, c->in.rec.offset, "input changed between passes");
  if (rc >= 1) /* thread refs are the provider's */
    memset(c->refs, 0, sizeof c->refs);
  if (rc == 1 && !add) /* not on a return to a provider (2): its losses are still open */
    close_cpu_losses(c);
  return 0;
}

/* ---- threads --------------------------------------------------------------------------------- */

static int64_t thread_get(struct fxt_td_writer *c, uint64_t pid, uint64_t tid) {
  uint64_t *head = fxt_jmap_get(&c->thread_map, tid, pid);
  if (head == NULL)
    return oom(c);
  for (uint64_t i = head[0]; i != 0; i = c->threads[i - 1].next)
    if (c->threads[i - 1].prov == c->segs.cur - 1)
      return (int64_t)i - 1;
  if (fxtf_grow((void **)&c->threads, &c->cap_threads, (uint64_t)c->nthreads + 1,
                sizeof *c->threads))
    return oom(c);
  struct fxt_td_writer_thread *t = &c->threads[c->nthreads];
  memset(t, 0, sizeof *t);
  t->prov = c->segs.cur - 1;
  t->pid = pid;
  t->tid = tid;
  t->comm.data = "";
  t->cpu = FXTF_CPU_UNKNOWN;
  t->next = (uint32_t)head[0];
  head[0] = ++c->nthreads;
  return c->nthreads - 1;
}

/* The thread of an event: through the ref cache when it has a thread ref. */
static int64_t event_thread(struct fxt_td_writer *c, const struct fxt_event *ev) {
  uint8_t ref = ev->thread.index;
  if (ref != 0 && c->refs[ref] != 0)
    return c->refs[ref] - 1;
  int64_t id = thread_get(c, ev->thread.process_koid, ev->thread.thread_koid);
  if (id >= 0 && ref != 0)
    c->refs[ref] = (uint32_t)id + 1;
  return id;
}

/* A kernel object naming a thread (its koid argument `process` says the pid). */
static int name_thread(struct fxt_td_writer *c, const struct fxt_kernel_object *k) {
  if (k->obj_type != FXT_KOBJ_THREAD)
    return 0;
  uint64_t pid = c->segs.v[c->segs.cur - 1].p.id;
  for (uint32_t i = 0; i < k->num_args; i++)
    if (k->args[i].type == FXT_ARG_KOID && fxtf_str_is(&k->args[i].name, "process"))
      pid = k->args[i].value.koid;
  int64_t id = thread_get(c, pid, k->koid);
  if (id < 0)
    return (int)id;
  c->threads[id].comm = text_of(&k->name);
  c->threads[id].named = true;
  return 0;
}

/* ---- descriptions ---------------------------------------------------------------------------- */

static bool same_content(const struct fxtf_desc *a, const struct fxtf_desc *b) {
  if (a->kind != b->kind || a->nfields != b->nfields || !text_eq(a->system, b->system) ||
      !text_eq(a->name, b->name) || !text_eq(a->fmt, b->fmt))
    return false;
  for (uint32_t i = 0; i < a->nfields; i++)
    if (a->fields[i].type != b->fields[i].type || a->fields[i].bound != b->fields[i].bound ||
        !text_eq(a->fields[i].name, b->fields[i].name))
      return false;
  return true;
}

/* The class of description idx: the first description of the same content (equal
 * tracepoints of several processes share their formats). Classes of one content hash are
 * chained through cnext. */
static int desc_class(struct fxt_td_writer *c, uint32_t idx) {
  const struct fxtf_desc *d = &c->descs[idx].d;
  uint64_t h = hash_text(hash_text(hash_text(UINT64_C(0xcbf29ce484222325), d->system), d->name),
                         d->fmt);
  for (uint32_t i = 0; i < d->nfields; i++)
    h = hash_text(h ^ ((uint64_t)d->fields[i].type << 32 | d->fields[i].bound),
                  d->fields[i].name);
  uint64_t *v = fxt_jmap_get(&c->class_map, h, d->kind);
  if (v == NULL)
    return oom(c);
  for (uint64_t i = v[0]; i != 0; i = c->descs[i - 1].cnext)
    if (same_content(&c->descs[i - 1].d, d)) {
      c->descs[idx].cls = c->descs[i - 1].cls;
      return 0;
    }
  c->descs[idx].cls = idx;
  c->descs[idx].cnext = (uint32_t)v[0];
  v[0] = idx + 1;
  return 0;
}

static uint64_t desc_key(struct fxtf_text system, struct fxtf_text name) {
  return hash_text(hash_text(UINT64_C(0xcbf29ce484222325), system), name);
}

static int add_desc(struct fxt_td_writer *c) {
  struct fxtf_desc d;
  int rc = fxtf_parse_desc(&c->in.dec, &c->in.rec, &d, c->in.err, c->in.err_size);
  if (rc)
    return rc;
  if (fxtf_grow((void **)&c->descs, &c->cap_descs, (uint64_t)c->ndescs + 1, sizeof *c->descs))
    return oom(c);
  uint32_t idx = c->ndescs++;
  c->descs[idx].d = d;
  c->descs[idx].prov = c->segs.cur - 1;
  c->descs[idx].next = c->descs[idx].cnext = 0;
  if ((rc = desc_class(c, idx)) != 0)
    return rc;
  uint64_t *v = fxt_jmap_get(&c->desc_map, c->segs.cur - 1, desc_key(d.system, d.name));
  if (v == NULL)
    return oom(c);
  uint64_t prev = 0; /* the latest of a system:name takes the place of the one before */
  for (uint64_t i = v[0]; i != 0; prev = i, i = c->descs[i - 1].next) {
    const struct fxtf_desc *o = &c->descs[i - 1].d;
    if (!text_eq(o->system, d.system) || !text_eq(o->name, d.name))
      continue;
    c->descs[idx].next = c->descs[i - 1].next;
    if (prev)
      c->descs[prev - 1].next = idx + 1;
    else
      v[0] = idx + 1;
    return 0;
  }
  c->descs[idx].next = (uint32_t)v[0];
  v[0] = idx + 1;
  return 0;
}

static const struct fxt_td_writer_desc *find_desc(struct fxt_td_writer *c,
                                                  const struct fxt_event *ev) {
  struct fxtf_text sys = text_of(&ev->category), name = text_of(&ev->name);
  const uint64_t *v = fxt_jmap_find(&c->desc_map, c->segs.cur - 1, desc_key(sys, name));
  for (uint64_t i = v ? v[0] : 0; i != 0; i = c->descs[i - 1].next)
    if (text_eq(c->descs[i - 1].d.system, sys) && text_eq(c->descs[i - 1].d.name, name))
      return &c->descs[i - 1];
  return NULL;
}

/* ---- pass 1: validate; providers' clocks, thread names, descriptions ------------------------ */

static int scan_record(void *ctx) {
  struct fxt_td_writer *c = ctx;
  const struct fxt_record *rec = &c->in.rec;
  c->st.records++;
  int rc = step_provider(c, true);
  if (rc)
    return rc;
  struct fxtf_seg *p = c->segs.cur ? &c->segs.v[c->segs.cur - 1] : NULL;
  struct fxtf_meta m;
  switch (rec->kind) {
  case FXT_KIND_INIT:
    p->p.ticks_per_second = rec->u.init.ticks_per_second;
    return 0;
  case FXT_KIND_EVENT:
    c->has_fn |= fxt_td_fn_kind_of(&rec->u.event) != FXT_TD_FN_NONE;
    rc = fxtf_parse_meta(rec, &m, c->in.err, c->in.err_size);
    if (rc == 0 && m.kind == FXTF_META_CLOCK_SYNC)
      rc = fxtf_seg_add_sync(p, &m.sync);
    return rc;
  case FXT_KIND_BLOB:
    return fxtf_is_desc(rec) ? add_desc(c) : 0;
  case FXT_KIND_KERNEL_OBJECT:
    return name_thread(c, &rec->u.kernel_object);
  default:
    return 0;
  }
}

/* ---- pass 2: each event's record into the sort ---------------------------------------------- */

static struct fxt_td_writer_cpu *cpu_of(struct fxt_td_writer *c, uint32_t cpu) {
  if (cpu >= c->ncpus) {
    if (fxtf_grow((void **)&c->cpus, &c->cap_cpus, (uint64_t)cpu + 1, sizeof *c->cpus))
      return NULL;
    memset(c->cpus + c->ncpus, 0, (cpu + 1 - c->ncpus) * sizeof *c->cpus);
    c->ncpus = cpu + 1;
  }
  return &c->cpus[cpu];
}

/* CPU n of the current record (an event's, a CPU loss's); NULL with the error in *rc when
 * trace.dat has no such CPU or memory ran out. */
static struct fxt_td_writer_cpu *record_cpu(struct fxt_td_writer *c, uint32_t n, int *rc) {
  struct fxt_td_writer_cpu *cpu = n > MAX_CPU ? NULL : cpu_of(c, n);
  if (n > MAX_CPU)
    *rc = fxt_td_writer_fail(c, FXT_E2BIG, c->in.rec.offset,
                             "CPU %u: trace.dat takes CPUs 0..%u", n, MAX_CPU);
  else if (cpu == NULL)
    *rc = oom(c);
  return cpu;
}

/* Hands a thread's losses so far to the CPU its next event (or, at the end, it) is on. */
static uint64_t take_losses(struct fxt_td_writer_thread *t, struct fxt_td_writer_cpu *cpu) {
  uint64_t n = t->pend_dropped + t->pend_overrun + t->pend_lost;
  cpu->overrun += t->pend_overrun;
  cpu->dropped += t->pend_dropped + t->pend_lost;
  t->pend_dropped = t->pend_overrun = t->pend_lost = 0;
  return n;
}

/* A CPU's own losses (a loss record with a `cpu` argument): in its stats now, and before the
 * provider's next event on it. */
static int add_cpu_loss(struct fxt_td_writer *c, const struct fxtf_meta *m) {
  int rc = 0;
  struct fxt_td_writer_cpu *cpu = record_cpu(c, m->cpu, &rc);
  if (cpu == NULL)
    return rc;
  if (m->kind == FXTF_META_OVERRUN)
    cpu->overrun += m->records;
  else
    cpu->dropped += m->records;
  cpu->pend_lost += m->records;
  cpu->pend_unknown |= m->count_unknown;
  return 0;
}

/* A function tracer's event (tracedat_write_fn.h): a call's ftrace:function record; a slice's
 * funcgraph_entry at its start (with the losses before it) and funcgraph_exit at its end,
 * whose seq (the record's offset + 1: offsets are multiples of 8) follows the entry's. */
static int add_fn_event(struct fxt_td_writer *c, const struct fxt_td_writer_thread *t,
                        struct fxt_td_sort_key *k, enum fxt_td_fn_kind fk) {
  const struct fxt_event *ev = &c->in.rec.u.event;
  int32_t pid = (int32_t)(uint32_t)t->tid;
  int rc;
  if (fk == FXT_TD_FN_CALL) {
    if ((rc = fxt_td_fn_call(&c->fn, ev, pid, &c->payload)) != 0)
      return oom(c);
    k->size = (uint32_t)c->payload.len;
    rc = fxt_td_sort_add(&c->sort, k, c->payload.data);
    return rc ? fxt_td_writer_fail(c, rc, UINT64_MAX, "%s", c->sort.err) : 0;
  }
  uint64_t end = fxtf_clockmap_apply(&c->segs.v[c->segs.cur - 1].map, ev->trailer);
  end = end > k->ns ? end : k->ns; /* as text.c: never before the start */
  for (int exit = 0; exit < 2; exit++) {
    if ((rc = fxt_td_fn_graph(&c->fn, ev, pid, exit, k->ns, end, &c->payload)) != 0)
      return oom(c);
    struct fxt_td_sort_key x = *k;
    if (exit) {
      x.ns = end;
      x.seq = k->seq + 1;
      x.lost = 0;
      x.flags = 0;
    }
    x.size = (uint32_t)c->payload.len;
    if ((rc = fxt_td_sort_add(&c->sort, &x, c->payload.data)) != 0)
      return fxt_td_writer_fail(c, rc, UINT64_MAX, "%s", c->sort.err);
  }
  return 0;
}

static int add_event(struct fxt_td_writer *c, struct fxt_td_writer_thread *t) {
  const struct fxt_event *ev = &c->in.rec.u.event;
  const struct fxtf_seg *p = &c->segs.v[c->segs.cur - 1];
  uint32_t n = t->cpu == FXTF_CPU_UNKNOWN ? 0 : t->cpu;
  int rc = 0;
  struct fxt_td_writer_cpu *cpu = record_cpu(c, n, &rc);
  if (cpu == NULL)
    return rc;
  struct fxt_td_sort_key k = {fxtf_clockmap_apply(&p->map, ev->timestamp), c->in.rec.offset, 0,
                        (uint16_t)n, 0, 0};
  k.lost = take_losses(t, cpu) + cpu->pend_lost;
  if (t->pend_unknown || cpu->pend_unknown)
    k.flags |= FXT_TD_SORT_LOST_UNKNOWN;
  t->pend_unknown = cpu->pend_unknown = false;
  cpu->pend_lost = 0;
  enum fxt_td_fn_kind fk = fxt_td_fn_kind_of(ev);
  if (fk != FXT_TD_FN_NONE)
    return add_fn_event(c, t, &k, fk);
  const struct fxt_td_writer_desc *d = find_desc(c, ev);
  struct fxt_td_ev_key key;
  fxt_td_ev_key_of(&key, ev, d ? &d->d : NULL, d ? d->cls : 0);
  struct fxt_td_ev_variant *v = fxt_td_ev_get(&c->events, &key, &rc);
  if (v == NULL)
    return rc == FXT_E2BIG ? fxt_td_writer_fail(c, rc, c->in.rec.offset,
                                                "more than %u kinds of event",
                                                FXT_TD_EV_MAX_VARIANTS)
                           : oom(c);
  uint64_t dur = 0;
  if (ev->type == FXT_EVENT_DURATION_COMPLETE) { /* as text.c computes it */
    uint64_t end = fxtf_clockmap_apply(&p->map, ev->trailer);
    dur = end > k.ns ? end - k.ns : 0;
  }
  rc = fxt_td_ev_record(v, ev, (int32_t)(uint32_t)t->tid, dur, &c->payload, &c->scratch);
  if (rc == FXT_ENOMEM)
    return oom(c);
  v->events++;
  if (rc == FXT_E2BIG || c->payload.len > FXT_TD_WPAGE_MAX_PAYLOAD) {
    k.flags |= FXT_TD_SORT_TOO_BIG; /* the kernel refuses it; here it is counted */
    cpu->dropped++;
    c->st.too_big++;
  } else {
    k.size = (uint32_t)c->payload.len;
  }
  rc = fxt_td_sort_add(&c->sort, &k, c->payload.data);
  return rc ? fxt_td_writer_fail(c, rc, UINT64_MAX, "%s", c->sort.err) : 0;
}

static int sort_record(void *ctx) {
  struct fxt_td_writer *c = ctx;
  const struct fxt_record *rec = &c->in.rec;
  int rc = step_provider(c, false);
  if (rc || rec->kind != FXT_KIND_EVENT) {
    if (rec->kind == FXT_KIND_THREAD)
      c->refs[rec->u.thread.index] = 0;
    return rc;
  }
  struct fxtf_meta m;
  if ((rc = fxtf_parse_meta(rec, &m, c->in.err, c->in.err_size)) != 0)
    return rc;
  if (m.kind == FXTF_META_CLOCK_SYNC || m.kind == FXTF_META_DROPPED || m.kind == FXTF_META_OTHER)
    return 0;
  int64_t id = event_thread(c, &rec->u.event);
  if (id < 0)
    return (int)id;
  struct fxt_td_writer_thread *t = &c->threads[id];
  if (m.has_cpu)
    return add_cpu_loss(c, &m);
  t->pend_unknown |= m.count_unknown;
  switch (m.kind) {
  case FXTF_META_CPU: t->cpu = m.cpu; return 0;
  case FXTF_META_DROP_STATS: t->pend_dropped += m.records; return 0;
  case FXTF_META_OVERRUN: t->pend_overrun += m.records; return 0;
  case FXTF_META_LOST: t->pend_lost += m.records; return 0;
  default: return add_event(c, t);
  }
}

/* One pass over the input (fxtf_pass), each record to fn: providers and thread refs afresh. */
static int pass(struct fxt_td_writer *c, int (*fn)(void *c)) {
  fxtf_segs_rewind(&c->segs);
  memset(c->refs, 0, sizeof c->refs);
  return fxtf_pass(&c->in, fn, c);
}

/* ---- CPU data ---------------------------------------------------------------------------- */

struct emit {
  struct fxt_td_writer *c;
  bool write; /* false: only count pages and bytes */
  unsigned char *out;
  uint32_t nout; /* finished pages in out */
  struct fxt_td_wpage page;
  uint32_t cpu;
  uint64_t missed; /* too big events and their losses, for the next page of the CPU */
  bool missed_unknown; /* and losses of an unknown count among them */
  uint64_t pages;
};

static int flush_pages(struct emit *e) {
  int rc = e->write ? fxt_td_write(e->c, e->out, (size_t)e->nout * FXT_TD_WPAGE_BYTES) : 0;
  e->nout = 0;
  return rc;
}

/* Finishes the page being filled (when it has events). */
static int end_page(struct emit *e) {
  if (e->page.events == 0)
    return 0;
  fxt_td_page_finish(&e->page);
  struct fxt_td_writer_cpu *cpu = &e->c->cpus[e->cpu];
  cpu->pages += e->write ? 0 : 1;
  e->c->st.pages += e->write ? 1 : 0;
  e->c->st.time_extends += e->write ? e->page.extends : 0;
  e->pages++;
  int rc = ++e->nout == OUT_PAGES ? flush_pages(e) : 0;
  fxt_td_page_init(&e->page, e->write ? e->out + (size_t)e->nout * FXT_TD_WPAGE_BYTES : NULL);
  return rc;
}

static int emit_record(struct emit *e, const struct fxt_td_sort_key *k, const void *payload) {
  struct fxt_td_writer *c = e->c;
  if (k->cpu != e->cpu) { /* the sort gives CPU after CPU */
    fxt_td_fn_restart(&c->fn); /* depths are counted per CPU */
    int rc = end_page(e);
    if (rc)
      return rc;
    c->st.lost_trailing += e->write ? e->missed : 0;
    e->cpu = k->cpu;
    e->missed = 0;
    e->missed_unknown = false;
  }
  e->missed_unknown |= (k->flags & FXT_TD_SORT_LOST_UNKNOWN) != 0;
  if (k->flags & FXT_TD_SORT_TOO_BIG) {
    e->missed += k->lost + 1;
    return 0;
  }
  unsigned char fnbuf[FXT_TD_FN_EXIT_BYTES];
  if ((payload = fxt_td_fn_patch(&c->fn, payload, k->size, fnbuf)) == NULL)
    return oom(c);
  uint64_t missed = e->missed + k->lost;
  uint64_t mark = e->missed_unknown ? FXT_TD_WPAGE_MISSED_UNKNOWN : missed;
  int rc = fxt_td_page_add(&e->page, k->ns, mark, payload, k->size);
  if (rc == FXT_ENOSPC) {
    if ((rc = end_page(e)) != 0)
      return rc;
    rc = fxt_td_page_add(&e->page, k->ns, mark, payload, k->size);
  }
  if (rc)
    return fxt_td_writer_fail(c, rc, UINT64_MAX, "internal error: page refused a record (%d)", rc);
  if (e->write) {
    c->st.missed += missed;
    c->st.missed_unknown += e->missed_unknown;
    c->st.events++;
  } else {
    struct fxt_td_writer_cpu *cpu = &c->cpus[k->cpu];
    if (cpu->events++ == 0)
      cpu->oldest_ns = k->ns;
  }
  e->missed = 0;
  e->missed_unknown = false;
  return 0;
}

/* The sorted records as pages: counted per CPU (write false), or written out. */
static int emit_pages(struct fxt_td_writer *c, bool write) {
  struct emit e = {.c = c, .write = write};
  if (write && (e.out = malloc((size_t)OUT_PAGES * FXT_TD_WPAGE_BYTES)) == NULL)
    return oom(c);
  fxt_td_page_init(&e.page, e.out);
  fxt_td_fn_restart(&c->fn);
  int rc = fxt_td_sort_rewind(&c->sort);
  if (rc)
    rc = fxt_td_writer_fail(c, rc, UINT64_MAX, "%s", c->sort.err);
  struct fxt_td_sort_key k;
  const void *payload;
  while (rc == 0) {
    rc = fxt_td_sort_next(&c->sort, &k, &payload);
    if (rc < 0)
      rc = fxt_td_writer_fail(c, rc, UINT64_MAX, "%s", c->sort.err);
    if (rc <= 0)
      break;
    rc = emit_record(&e, &k, payload);
  }
  if (rc == 0)
    rc = end_page(&e);
  if (rc == 0)
    rc = flush_pages(&e);
  c->st.lost_trailing += write ? e.missed : 0;
  uint64_t want = 0;
  for (uint32_t i = 0; i < c->ncpus; i++)
    want += c->cpus[i].pages;
  if (rc == 0 && write && e.pages != want)
    rc = fxt_td_writer_fail(c, FXT_EBADMSG, UINT64_MAX, "internal error: %llu pages, %llu sized",
                            (unsigned long long)e.pages, (unsigned long long)want);
  free(e.out);
  return rc;
}

/* ---- the conversion ----------------------------------------------------------------------- */

/* Losses after a thread's last event: in its CPU's stats. */
static int trailing_losses(struct fxt_td_writer *c) {
  for (uint32_t i = 0; i < c->nthreads; i++) {
    struct fxt_td_writer_thread *t = &c->threads[i];
    uint32_t n = t->cpu == FXTF_CPU_UNKNOWN || t->cpu > MAX_CPU ? 0 : t->cpu;
    if (t->pend_dropped + t->pend_overrun + t->pend_lost == 0)
      continue;
    struct fxt_td_writer_cpu *cpu = cpu_of(c, n);
    if (cpu == NULL)
      return oom(c);
    c->st.lost_trailing += take_losses(t, cpu);
  }
  return cpu_of(c, 0) ? 0 : oom(c); /* at least one CPU */
}

static int convert(struct fxt_td_writer *c) {
  fxt_td_ev_table_init(&c->events);
  int rc = pass(c, scan_record);
  if (rc)
    return rc;
  for (uint32_t i = 0; i < c->segs.n; i++) {
    c->segs.v[i].map = fxtf_clockmap_of(&c->segs.v[i].p);
    if (c->segs.v[i].p.nsyncs && c->segs.v[i].p.last_sync.monotonic_ns > c->end_ns)
      c->end_ns = c->segs.v[i].p.last_sync.monotonic_ns;
  }
  if (c->has_fn && fxt_td_fn_reserve(&c->fn, &c->events) != 0)
    return fxt_td_writer_fail(c, FXT_E2BIG, UINT64_MAX, "more than %u kinds of event",
                              FXT_TD_EV_MAX_VARIANTS);
  rc = fxt_td_sort_init(&c->sort, c->opt->run_bytes, c->opt->tmpdir);
  c->sort_ready = true;
  if (rc == 0)
    rc = pass(c, sort_record);
  close_cpu_losses(c);
  if (rc == 0)
    rc = trailing_losses(c);
  if (rc == 0 && (rc = fxt_td_sort_finish(&c->sort)) != 0)
    rc = fxt_td_writer_fail(c, rc, UINT64_MAX, "%s", c->sort.err);
  c->st.sort_runs = c->sort.nruns;
  if (rc == 0)
    rc = emit_pages(c, false);
  if (rc == 0)
    rc = fxt_td_write_head(c);
  if (rc == 0)
    rc = emit_pages(c, true);
  return rc;
}

/* Frees what the conversion holds (c itself is the caller's). */
static void release_all(struct fxt_td_writer *c) {
  if (c->sort_ready)
    fxt_td_sort_free(&c->sort);
  fxt_td_ev_table_free(&c->events);
  fxt_td_fn_free(&c->fn);
  fxt_tbuf_free(&c->payload);
  fxt_tbuf_free(&c->scratch);
  fxt_jmap_free(&c->thread_map);
  fxt_jmap_free(&c->desc_map);
  fxt_jmap_free(&c->class_map);
  fxtf_segs_free(&c->segs);
  free(c->threads);
  free(c->descs);
  free(c->cpus);
}

int fxt_tracedat_convert(const void *buf, size_t len, const struct fxt_tracedat_options *opt,
                         struct fxt_tracedat_stats *st, char *err, size_t err_size) {
  struct fxt_td_writer *c = NULL;
  int rc = FXT_EINVAL;
  if (st != NULL)
    memset(st, 0, sizeof *st);
  if (opt != NULL && opt->write != NULL && (buf != NULL || len == 0))
    rc = (c = calloc(1, sizeof *c)) != NULL ? 0 : FXT_ENOMEM;
  if (rc != 0) {
    if (err != NULL && err_size > 0)
      snprintf(err, err_size, "%s", rc == FXT_EINVAL ? "invalid argument" : "out of memory");
    return rc;
  }
  if (err != NULL && err_size > 0)
    err[0] = '\0';
  c->opt = opt; /* (calloc zeroed the rest) */
  fxtf_pass_init(&c->in, buf, len, c->table, &c->st.torn, err, err_size);
  c->in.release = opt->release;
  c->in.release_ctx = opt->release_ctx;
  c->in.strict = opt->strict; /* not release_taken: what is before the record is done with */
  rc = convert(c);
  c->st.formats = c->events.n + (c->fn.on ? 3u : 0u);
  c->st.cpus = c->ncpus;
  if (st != NULL)
    *st = c->st;
  release_all(c);
  free(c);
  return rc;
}
