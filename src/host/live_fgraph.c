/* live_fgraph.c - the function_graph layout of the live `trace` and `trace_pipe` (live.h), as
 * the kernel's function_graph tracer prints them (kernel/trace/trace_functions_graph.c; the
 * lines are src/base/fgraph_text.c's, report's too).
 *
 * The kernel writes an entry record at a call and an exit record at its return; fxtrace's
 * tracer writes one slice at the return, after the slices of the calls inside it, each with
 * its depth (docs/functions.md, "Records"). The consumer pushes the records into the view's
 * rings as runs of events, as for any tracer (live.c feed); the layout is made by the readers,
 * in their threads, when `trace` is opened or trace_pipe read or waited on in it
 * (fxt_live_fg_arrange, under fxt_live.lock): the entries pushed since the last arrangement
 * are taken out of the rings and fed again, in the order the consumer pushed them
 * (entry.feed_seq), through take(): a slice of depth over 0 starts holding a thread's records,
 * and every later record of the thread (other events too: they print inside the calls, as
 * comments) is held, across reads, until a slice of depth 0 closes the tree. (A slice of
 * depth 0 of a thread that holds nothing, a call with no call inside, and an event of such a
 * thread go back as runs of events, and print as a leaf and a comment.) Then the held records,
 * ordered by start (calls of one time by depth), are turned into lines and pushed into the
 * ring of the CPU the thread is on, as runs of records with a line word each (struct entry's
 * lines_at): a call with anything inside "f() {", its return "}" (a copy of its record with
 * the two times swapped, so that the ring's lines stay in time order), a call with nothing
 * inside "f();", another event "/<star> text <star>/" at the innermost open call's depth.
 * Readers then format each record alone, from its line word: `trace` twice gives the same
 * text, `trace_pipe` consumes line by line. So the consumer pays one copy per run whether or
 * not anyone reads, the reader the layout of what it reads; what nobody arranged is evicted
 * from the rings as runs of events (a tree whose first records were evicted prints without
 * them, after the LOST line).
 *
 * Bounds: a thread holds at most HOLD_BYTES of records and HOLD_THREADS threads hold at once.
 * Past either (a thread whose outermost call runs long, or a thread that exited inside its
 * calls), what the thread holds is printed at once, behind a MARK comment line, as a forest:
 * the calls that returned, nested by their depths, without the callers still open; the rest
 * of that tree is held anew. A flight recorder's copies (filled from the buffers for each
 * `trace`) print what their threads hold that way when `trace` is opened.
 *
 * Which layout is read: the current tracer's when `trace` is opened, or at each trace_pipe
 * read (fxt_live_fg_layout); only a read in the function_graph layout arranges. The lines are
 * kept whatever the tracer is: read in the plain layout, a CALL, LEAF or COMMENT line prints
 * its record as before, a RETURN or MARK nothing; entries not arranged print as recorded.
 *
 * Concurrency: everything here (the held records, the scratch of an arrangement, the rings)
 * is under fxt_live.lock, written and read by readers' threads only; the consumer, under the
 * same lock, only appends runs to the rings (and bumps fxt_live.feed_seq). No atomics.
 */
#define _GNU_SOURCE
#include "live_int.h"

#include "../base/grow.h"
#include "functions_int.h"

#define HOLD_BYTES (128u << 10)
#define HOLD_THREADS 64u

static const char k_mark[] = "fxtrace: the calls below returned inside calls still open";

bool fxt_live_fg_layout(void)
{
  return atomic_load_explicit(&fxt_fn_set.mode, memory_order_relaxed) == FXT_FN_GRAPH;
}

/* ---- the records -------------------------------------------------------------------------- */

/* Whether the event record p (bytes long, header h) is a function_graph slice: a complete
 * event of category "function" (its ref, interned once per process, is cached). */
static bool is_slice(uint64_t h)
{
  if ((h >> 16 & 0xf) != FXT_EVENT_DURATION_COMPLETE)
    return false;
  uint16_t cat = (uint16_t)(h >> 32);
  if (cat == 0 || (cat & 0x8000))
    return false;
  if (cat == fxt_live.fn_category)
    return true;
  if (cat == fxt_live.other_category)
    return false;
  const char *s;
  uint32_t n;
  bool fn = fxt_intern_lookup(cat, &s, &n) && n == 8 && memcmp(s, "function", 8) == 0;
  if (fn)
    fxt_live.fn_category = cat;
  else
    fxt_live.other_category = cat;
  return fn;
}

/* Word k of the record (the caller checked its size). */
static uint64_t word(const unsigned char *p, uint32_t k)
{
  uint64_t w;
  memcpy(&w, p + 8 * k, 8);
  return w;
}

/* A slice's depth: its first argument's value when it is a uint32 (the tracer's "depth"),
 * else 0. Interned names only (the tracer's records). */
static uint32_t depth_of(const unsigned char *p, uint32_t bytes)
{
  uint64_t h = word(p, 0);
  uint32_t at = 2 + ((h >> 24 & 0xff) == 0 ? 2 : 0);
  if ((h >> 20 & 0xf) == 0 || (at + 1) * 8 > bytes)
    return 0;
  uint64_t a = word(p, at);
  return (a & 0xf) == FXT_ARG_UINT32 ? (uint32_t)(a >> 32) : 0;
}

/* ---- the threads' held records ------------------------------------------------------------ */

static struct live_fg *table_of(struct cpu_ring *set)
{
  return &fxt_live.fg[set != NULL && set == fxt_live.copy];
}

/* A thread's place freed: its buffers stay for the next tree (no allocation per tree). */
static void release(struct live_fg_thread *t)
{
  t->n = t->len = 0;
}

/* An item's place in a flush's order: by start; a call before an event of its first tick (the
 * event is in it); calls of one time by depth; then as they came (idx: items are kept in
 * arrival order). Sorted as these keys, not through the items: a tree is thousands of them. */
struct live_fg_key {
  uint64_t start;
  uint32_t rank; /* calls: depth; events: 1 << 31 */
  uint32_t idx;
};

static bool before(const struct live_fg_key *a, const struct live_fg_key *b)
{
  if (a->start != b->start)
    return a->start < b->start;
  if (a->rank != b->rank)
    return a->rank < b->rank;
  return a->idx < b->idx;
}

/* g->ord: t's items in order (a merge sort, its scratch kept in the table). Returns false
 * when memory ran out. */
static bool order(struct live_fg *g, const struct live_fg_thread *t)
{
  if (!fxt_grow((void **)&g->ord, &g->cap_ord, 2 * t->n, sizeof *g->ord, 256))
    return false;
  struct live_fg_key *a = g->ord, *tmp = g->ord + t->n;
  for (size_t k = 0; k < t->n; k++)
    a[k] = (struct live_fg_key){t->items[k].start,
                                t->items[k].slice ? t->items[k].depth : UINT32_C(1) << 31,
                                (uint32_t)k};
  for (size_t w = 1; w < t->n; w *= 2) {
    for (size_t lo = 0; lo < t->n; lo += 2 * w) {
      size_t mid = lo + w < t->n ? lo + w : t->n, hi = lo + 2 * w < t->n ? lo + 2 * w : t->n;
      size_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi)
        tmp[o++] = before(&a[j], &a[i]) ? a[j++] : a[i++];
      while (i < mid)
        tmp[o++] = a[i++];
      while (j < hi)
        tmp[o++] = a[j++];
    }
    struct live_fg_key *x = a;
    a = tmp;
    tmp = x;
  }
  if (a != g->ord) /* the result is in the second half */
    memcpy(g->ord, a, t->n * sizeof *a);
  return true;
}

/* The lines being gathered into one entry (a run of up to RUN_MAX bytes of records and their
 * line words) of one thread, for ring cpu of set. Under lock. */
static struct {
  unsigned char rec[RUN_MAX + MAX_RECORD];
  uint32_t words[RUN_MAX / 16 + 1];
  uint32_t len, n;
  struct cpu_ring *set;
  uint32_t cpu, tid;
  char comm[16];
} batch;

static void batch_end(void)
{
  fxt_live_push(batch.set, batch.cpu, batch.rec, batch.len, batch.n, batch.tid, batch.comm,
                batch.words);
  batch.len = batch.n = 0;
}

static void batch_start(struct cpu_ring *set, uint32_t ring_cpu, uint32_t tid,
                        const char *comm)
{
  batch.set = set;
  batch.cpu = ring_cpu;
  batch.tid = tid;
  memcpy(batch.comm, comm, 16);
  batch.len = batch.n = 0;
}

/* One line: the record at p; returns where it was copied (a RETURN line rewrites it). */
static unsigned char *line(const unsigned char *p, uint32_t bytes, uint32_t kind,
                           uint32_t depth, uint32_t cpu)
{
  if (batch.n > 0 && (batch.len + bytes > RUN_MAX || batch.n == RUN_MAX / 16 + 1))
    batch_end();
  unsigned char *at = batch.rec + batch.len;
  memcpy(at, p, bytes);
  batch.len += bytes;
  batch.words[batch.n++] = live_line_word(kind, depth, cpu);
  return at;
}

/* A RETURN line: the call's record with its start and end swapped. */
static void line_return(const struct live_fg_thread *t, const struct live_fg_item *c)
{
  unsigned char *at = line(t->data + c->off, c->bytes, LIVE_LINE_RETURN, c->depth, c->cpu);
  uint32_t words = c->bytes / 8;
  memcpy(at + 8, t->data + c->off + 8 * (words - 1), 8);
  memcpy(at + 8 * (words - 1), t->data + c->off + 8, 8);
}

/* Prints what thread i of set's table holds as lines into ring cpu of set (behind a MARK when
 * mark), and frees its place. */
static void flush(struct cpu_ring *set, size_t i, uint32_t ring_cpu, bool mark)
{
  struct live_fg *g = table_of(set);
  struct live_fg_thread *t = &g->t[i];
  const struct live_fg_item *it = t->items;
  if (t->n == 0 || !order(g, t)) { /* (no memory: what it held is lost) */
    release(t);
    return;
  }
  const struct live_fg_key *ord = g->ord;
  const struct live_fg_item *first = &it[ord[0].idx];
  batch_start(set, ring_cpu, t->tid, t->comm);
  if (mark)
    line(t->data + first->off, first->bytes, LIVE_LINE_MARK, 0, first->cpu);
  /* The calls open, as items; the innermost on top. */
  static const struct live_fg_item *open[4096]; /* under lock */
  size_t nopen = 0;
  for (size_t k = 0; k < t->n; k++) {
    const struct live_fg_item *c = &it[ord[k].idx];
    /* Calls that ended before this starts, or (a call) are as deep as it, are closed. */
    while (nopen > 0 && (open[nopen - 1]->end < c->start ||
                         (c->slice && open[nopen - 1]->depth >= c->depth)))
      line_return(t, open[--nopen]);
    if (!c->slice) {
      uint32_t d = nopen > 0 ? open[nopen - 1]->depth + 1 : 0;
      line(t->data + c->off, c->bytes, LIVE_LINE_COMMENT, d, c->cpu);
      continue;
    }
    /* Something inside: the next record, a deeper call or an event before the end. */
    const struct live_fg_item *x = k + 1 < t->n ? &it[ord[k + 1].idx] : NULL;
    bool inside = x && (x->slice ? x->depth > c->depth && x->start <= c->end
                                 : x->start <= c->end);
    if (inside && nopen == sizeof open / sizeof open[0])
      inside = false; /* (deeper than the shadow stack: cannot be) */
    line(t->data + c->off, c->bytes, inside ? LIVE_LINE_CALL : LIVE_LINE_LEAF, c->depth,
         c->cpu);
    if (inside)
      open[nopen++] = c;
  }
  while (nopen > 0)
    line_return(t, open[--nopen]);
  batch_end();
  release(t);
}

/* Thread tid's place in the table when it holds records, else SIZE_MAX; with make, a place is
 * found for it: its own, a free one, a new one up to HOLD_THREADS, else the least recently
 * fed thread's, whose records are printed first. */
static size_t find(struct cpu_ring *set, uint32_t tid, const char *name, bool make)
{
  struct live_fg *g = table_of(set);
  size_t free_at = SIZE_MAX;
  for (size_t i = 0; i < g->n; i++) {
    if (g->t[i].tid == tid && (g->t[i].n > 0 || make))
      return i;
    if (g->t[i].n == 0 && free_at == SIZE_MAX)
      free_at = i;
  }
  if (!make)
    return SIZE_MAX;
  if (free_at == SIZE_MAX && g->n == HOLD_THREADS) {
    free_at = 0;
    for (size_t i = 1; i < g->n; i++)
      free_at = g->t[i].used < g->t[free_at].used ? i : free_at;
    const struct live_fg_thread *t = &g->t[free_at];
    flush(set, free_at, t->items[t->n - 1].cpu, true);
  }
  if (free_at == SIZE_MAX) {
    if (!fxt_grow((void **)&g->t, &g->cap, g->n + 1, sizeof *g->t, 8))
      return SIZE_MAX;
    memset(&g->t[g->n], 0, sizeof *g->t);
    free_at = g->n++;
  }
  g->t[free_at].tid = tid;
  memcpy(g->t[free_at].comm, name, 16);
  return free_at;
}

/* A record of thread tid on cpu arranged into ring set `set`: true when the function_graph
 * lines took it (a slice, or an event of a thread holding slices), false when it goes into
 * the set as a run of events. */
static bool take(struct cpu_ring *set, const unsigned char *p, uint32_t bytes, uint32_t tid,
                 const char *name, uint32_t cpu)
{
  uint64_t h = word(p, 0);
  bool slice = is_slice(h) && bytes >= 32;
  uint32_t depth = slice ? depth_of(p, bytes) : 0;
  size_t i = find(set, tid, name, slice && depth > 0);
  if (i == SIZE_MAX)
    return false; /* an event of a thread that holds nothing, or a call of depth 0 with
                     nothing inside (its line: fxt_live_fg_line's, from its run): as before */
  struct live_fg *g = table_of(set);
  struct live_fg_item c = {.bytes = bytes, .cpu = cpu, .depth = depth, .slice = slice,
                           .start = word(p, 1), .seq = g->clock++};
  c.end = slice ? word(p, bytes / 8 - 1) : c.start;
  struct live_fg_thread *t = &g->t[i];
  t->used = c.seq;
  memcpy(t->comm, name, 16);
  if (!fxt_grow((void **)&t->data, &t->cap, t->len + bytes, 1, 4096) ||
      !fxt_grow((void **)&t->items, &t->cap_items, t->n + 1, sizeof *t->items, 64)) {
    flush(set, i, cpu, true); /* no memory: what it holds, and this record as before */
    return false;
  }
  c.off = (uint32_t)t->len;
  memcpy(t->data + t->len, p, bytes);
  t->len += bytes;
  t->items[t->n++] = c;
  if (slice && depth == 0)
    flush(set, i, cpu, false);
  else if (t->len >= HOLD_BYTES)
    flush(set, i, cpu, true);
  return true;
}

/* The ring whose next entry to arrange the consumer pushed first, or -1. */
static int next_ring(const struct live_fg *g)
{
  int best = -1;
  uint64_t best_seq = 0;
  for (uint32_t k = 0; k < fxt_live.ncpus; k++) {
    if (g->ring[k].at >= g->ring[k].end)
      continue;
    const struct entry *e = (const struct entry *)(const void *)(g->raw + g->ring[k].at);
    if (best < 0 || e->feed_seq < best_seq) {
      best = (int)k;
      best_seq = e->feed_seq;
    }
  }
  return best;
}

/* Entry e of ring k arranged: its records not taken yet (by trace_pipe in the plain layout)
 * through take(), as the consumer fed them before the layout moved to the readers;
 * the records it does not take go back as runs of events, in their order. */
static void arrange_entry(struct cpu_ring *set, uint32_t k, const struct entry *e)
{
  const unsigned char *p = run_at(e, 0);
  uint32_t len = run_len(e), start = e->taken, nrec = 0;
  if (e->taken == 0)
    set[k].lost_pending += e->lost_before;
  for (uint32_t off = e->taken, bytes; off + 16 <= len; off += bytes) {
    bytes = rec_bytes(p + off);
    if (take(set, p + off, bytes, e->tid, e->comm, k)) {
      fxt_live_push(set, k, p + start, off - start, nrec, e->tid, e->comm, NULL);
      start = off + bytes;
      nrec = 0;
    } else {
      nrec++;
    }
  }
  fxt_live_push(set, k, p + start, len - start, nrec, e->tid, e->comm, NULL);
}

void fxt_live_fg_arrange(struct cpu_ring *set)
{
  struct live_fg *g = table_of(set);
  if (!fxt_grow((void **)&g->ring, &g->cap_ring, fxt_live.ncpus, sizeof *g->ring, 8))
    return; /* (no memory: they stay runs of events, read as such) */
  size_t len = 0;
  for (uint32_t k = 0; k < fxt_live.ncpus; k++) {
    g->ring[k].at = len;
    if (!fxt_live_ring_take_raw(&set[k], &g->raw, &len, &g->raw_cap))
      len = g->ring[k].at; /* (the same: ring k's stay) */
    g->ring[k].end = len;
    g->ring[k].lost = 0;
    if (len > g->ring[k].at) { /* its losses after them: shown after what they become */
      g->ring[k].lost = set[k].lost_pending;
      set[k].lost_pending = 0;
    }
  }
  if (len == 0)
    return;
  if (fxt_live.plain_iters > 0)
    fxt_live.gen++; /* their places were in the entries taken out */
  for (int k; (k = next_ring(g)) >= 0;) {
    const struct entry *e = (const struct entry *)(const void *)(g->raw + g->ring[k].at);
    g->ring[k].at += e->size;
    arrange_entry(set, (uint32_t)k, e);
  }
  for (uint32_t k = 0; k < fxt_live.ncpus; k++)
    set[k].lost_pending += g->ring[k].lost;
  if (g->raw_cap > (1u << 20)) { /* (a large one is not kept between readers' reads) */
    free(g->raw);
    g->raw = NULL;
    g->raw_cap = 0;
  }
}

void fxt_live_fg_flush_all(struct cpu_ring *set)
{
  struct live_fg *g = table_of(set);
  for (size_t i = 0; i < g->n; i++)
    if (g->t[i].n > 0)
      flush(set, i, g->t[i].items[0].cpu, true);
}

void fxt_live_fg_drop(struct cpu_ring *set)
{
  struct live_fg *g = table_of(set);
  for (size_t i = 0; i < g->n; i++) {
    free(g->t[i].data);
    free(g->t[i].items);
  }
  free(g->t);
  free(g->ord);
  free(g->raw);
  free(g->ring);
  memset(g, 0, sizeof *g);
}

/* ---- a line read ------------------------------------------------------------------------ */

void fxt_live_fg_line(struct fxt_fgraph_cpus *s, struct fxt_tbuf *b, const struct entry *e,
                      uint32_t word, const struct fxtf_event *fe, uint32_t cpu)
{
  if (s->cpu_width == 0)
    s->cpu_width = fxt_fgraph_cpu_width(fxt_live.ncpus > 0 ? fxt_live.ncpus - 1 : 0);
  size_t comm_len = strnlen(e->comm, 16);
  struct fxt_fgraph_thread th = {.key = e->tid, .tid = e->tid,
                                 .comm = comm_len ? e->comm : NULL, .comm_len = comm_len};
  uint32_t kind = word & 0xf, depth = word >> 4 & 0xfff;
  fxt_fgraph_prologue_at(s, b, e->lines_at ? word >> 16 : cpu, &th, fe->ns);
  uint64_t a = fe->ns, z = live_ticks_to_ns(fe->ev.trailer), dur = z > a ? z - a : a - z;
  const char *name = fe->ev.name.data;
  uint32_t o = s->opts, len = fe->ev.name.len;
  switch (kind) {
  case LIVE_LINE_CALL:
  case LIVE_LINE_LEAF:
    fxt_fgraph_call_opts(b, o, depth, name, len, kind == LIVE_LINE_CALL, dur);
    return;
  case LIVE_LINE_RETURN:
    fxt_fgraph_return_opts(b, o, depth, name, len, dur);
    return;
  case LIVE_LINE_MARK:
    fxt_fgraph_comment_start_opts(b, o, -1);
    fxt_tbuf_puts(b, k_mark);
    break;
  case LIVE_LINE_PLAIN:
    if (fxt_fgraph_is_slice_ev(&fe->ev)) { /* a call of a thread that held nothing: a leaf */
      if (!fxt_fgraph_depth(&fe->ev, &depth))
        depth = 0;
      fxt_fgraph_call_opts(b, o, depth, name, len, false, dur);
      return;
    }
    fxt_fgraph_comment_start_opts(b, o, -1); /* an event of a thread that held nothing */
    fxt_text_event_body(b, fe);
    break;
  default: /* a comment inside calls (the innermost open call's depth + 1, 0 for none) */
    fxt_fgraph_comment_start_opts(b, o, (int64_t)depth - 1);
    fxt_text_event_body(b, fe);
    break;
  }
  fxt_tbuf_puts(b, " */\n");
}
