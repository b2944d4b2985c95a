/* src/formats/fgraph.c - `fxtrace report`'s function_graph layout (see fgraph.h).
 *
 * Two passes over the file's events in time order. The first applies the selection (its
 * verdicts kept in a bitmap: a filter is evaluated once per event) and rebuilds each thread's
 * nesting, to know which slices have a recorded call inside (a second bitmap): the children
 * of a slice come after it in time order, so its line cannot be chosen when it is met. The
 * second prints; calls still open wait in a min-heap by end time and print their "}" before
 * the first event that does not start before them. Slices of one time are taken outer first
 * by their recorded depth (the tracer writes a call after the calls it holds, so the file's
 * order, which breaks ties of time, is inner first): the first pass keeps a time's slices
 * until the next time, and notes where that order differs from the index's for the second.
 * With recorded depths, a slice is inside the innermost open call of its thread that is less
 * deep and has not ended before it starts; without, inside the one it starts before the end of.
 */
#include "fgraph.h"

#include <stdlib.h>
#include <string.h>

#include "../base/fgraph_text.h"
#include "../base/grow.h"
#include "../base/text.h"
#include "heap.h"

bool fxt_fgraph_is_slice(const struct fxtf_event *e) { return fxt_fgraph_is_slice_ev(&e->ev); }

/* An open call, or (first pass) a slice on its thread's stack. */
struct frame {
  uint64_t start, end;
  uint32_t thread, depth, cpu;
  uint32_t rdepth; /* the recorded depth, NO_DEPTH when the slice has none */
  uint32_t prev; /* the thread's frame below + 1 (first pass) */
  size_t event;  /* first pass */
  const char *name; /* second pass: the call's name (the file's bytes), for funcgraph-tail */
  size_t name_len;
};

struct fg {
  const struct fxtf_file *f;
  const struct fxtf_thread *threads;
  uint32_t nthreads;
  struct frame *frames;
  size_t cap_frames;
  uint32_t nframes;
  uint32_t free_head; /* free frames: a list through prev, + 1 */
  uint32_t *top;      /* per thread: top frame + 1 (first pass); open calls (second) */
  uint32_t *heap;     /* second pass: open frames by end */
  size_t cap_heap;
  uint32_t nheap;
  struct fxt_fgraph_cpus cpus; /* verif_pid's per-CPU thread, the CPU column's width */
  unsigned char *keep, *parent; /* bitmaps over the events */
  struct fxt_tbuf *b;
  /* Slices of one time, kept by the first pass until a later time shows the run whole, then
   * taken by recorded depth (the outer call first: the tracer wrote the inner one first). */
  struct pend *run;
  size_t cap_run, nrun;
  /* Where that order differs from the index's: pairs (position, event index), by position. */
  size_t *remap;
  size_t cap_remap, nremap;
};

#define NO_DEPTH UINT32_MAX
#define RUN_SORT_MAX 4096u /* slices of one time sorted by depth at the most */

struct pend {
  size_t event;
  uint64_t ns, end;
  uint32_t thread, rdepth;
};

static bool bit(const unsigned char *m, size_t i) { return (m[i / 8] >> (i % 8)) & 1; }
static void set_bit(unsigned char *m, size_t i) { m[i / 8] = (unsigned char)(m[i / 8] | 1u << (i % 8)); }

static uint32_t frame_new(struct fg *g) {
  if (g->free_head != 0) {
    uint32_t i = g->free_head - 1;
    g->free_head = g->frames[i].prev;
    return i;
  }
  if (!fxt_grow((void **)&g->frames, &g->cap_frames, (size_t)g->nframes + 1, sizeof *g->frames,
                64))
    return UINT32_MAX;
  return g->nframes++;
}

static void frame_free(struct fg *g, uint32_t i) {
  g->frames[i].prev = g->free_head;
  g->free_head = i + 1;
}

static uint32_t thread_of(const struct fg *g, const struct fxtf_event *e) {
  return (uint32_t)(e->thread - g->threads);
}

static uint32_t cpu_of(const struct fxtf_event *e) {
  return e->cpu == FXTF_CPU_UNKNOWN ? 0 : e->cpu;
}

static uint64_t end_of(const struct fxtf_event *e) {
  uint64_t end = fxtf_ticks_to_ns(e->provider, e->ev.trailer);
  return end > e->ns ? end : e->ns;
}

/* ---- first pass: the selection, the nesting ------------------------------------------------- */

/* The nesting of the run's slices (g->run, one time), in their order. */
static int nest_run(struct fg *g) {
  for (size_t k = 0; k < g->nrun; k++) {
    const struct pend *p = &g->run[k];
    uint32_t t = p->thread;
    /* The thread's calls that ended by this one's start are closed (with recorded depths:
     * ended before it, or as deep as it), none of them holds it. */
    while (g->top[t] != 0) {
      const struct frame *top = &g->frames[g->top[t] - 1];
      bool depths = top->rdepth != NO_DEPTH && p->rdepth != NO_DEPTH;
      if (!(depths ? top->end < p->ns || top->rdepth >= p->rdepth : top->end <= p->ns))
        break;
      uint32_t done = g->top[t] - 1;
      g->top[t] = g->frames[done].prev;
      frame_free(g, done);
    }
    if (g->top[t] != 0)
      set_bit(g->parent, g->frames[g->top[t] - 1].event);
    uint32_t fr = frame_new(g);
    if (fr == UINT32_MAX)
      return FXT_ENOMEM;
    g->frames[fr] = (struct frame){.end = p->end, .event = p->event, .prev = g->top[t],
                                   .rdepth = p->rdepth};
    g->top[t] = fr + 1;
  }
  return 0;
}

/* Each thread's slices of the run by recorded depth (stable: insertion, runs are short), in
 * the positions that thread's slices held; each position whose event changed is noted in
 * remap. Then nested. */
static int end_run(struct fg *g) {
  /* (a longer run, a clock that stood still, keeps the file's order: the sort is quadratic) */
  bool sort = g->nrun > 1 && g->nrun <= RUN_SORT_MAX;
  size_t *pos = sort ? malloc(2 * g->nrun * sizeof *pos) : NULL;
  if (sort && pos == NULL)
    return FXT_ENOMEM;
  size_t *slot = pos != NULL ? pos + g->nrun : NULL; /* one thread's positions in the run */
  for (size_t k = 0; k < g->nrun && pos != NULL; k++)
    pos[k] = g->run[k].event;
  for (size_t k = 0; k < g->nrun && pos != NULL; k++) {
    bool met = false; /* the thread's slices were sorted at an earlier k */
    for (size_t j = 0; j < k && !met; j++)
      met = g->run[j].thread == g->run[k].thread;
    if (met)
      continue;
    size_t ns = 0;
    for (size_t j = k; j < g->nrun; j++)
      if (g->run[j].thread == g->run[k].thread)
        slot[ns++] = j;
    for (size_t a = 1; a < ns; a++) {
      struct pend p = g->run[slot[a]];
      size_t b = a;
      for (; b > 0 && p.rdepth != NO_DEPTH && g->run[slot[b - 1]].rdepth != NO_DEPTH &&
             g->run[slot[b - 1]].rdepth > p.rdepth;
           b--)
        g->run[slot[b]] = g->run[slot[b - 1]];
      g->run[slot[b]] = p;
    }
  }
  for (size_t k = 0; k < g->nrun && pos != NULL; k++) {
    if (g->run[k].event == pos[k])
      continue;
    if (!fxt_grow((void **)&g->remap, &g->cap_remap, g->nremap + 2, sizeof *g->remap, 64)) {
      free(pos);
      return FXT_ENOMEM;
    }
    g->remap[g->nremap++] = pos[k];
    g->remap[g->nremap++] = g->run[k].event;
  }
  free(pos);
  int rc = nest_run(g);
  g->nrun = 0;
  return rc;
}

static int first_pass(struct fg *g, struct fxt_sel *sel, struct fxtf_event *ev, bool *any,
                      char *err, size_t err_size) {
  size_t n = fxtf_event_count(g->f);
  uint32_t max_cpu = 0;
  bool oom = false;
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    if (fxtf_event_at(g->f, i, ev, err, err_size) != 0)
      return FXT_EBADMSG;
    if (sel != NULL && !fxt_sel_match(sel, ev, &oom)) {
      if (oom)
        return FXT_ENOMEM;
      continue;
    }
    set_bit(g->keep, i);
    if (cpu_of(ev) > max_cpu)
      max_cpu = cpu_of(ev);
    if (!fxt_fgraph_is_slice(ev))
      continue;
    *any = true;
    if (g->nrun > 0 && g->run[0].ns != ev->ns)
      rc = end_run(g);
    uint32_t depth;
    struct pend p = {.event = i, .ns = ev->ns, .end = end_of(ev), .thread = thread_of(g, ev),
                     .rdepth = fxt_fgraph_depth(&ev->ev, &depth) ? depth : NO_DEPTH};
    if (!fxt_grow((void **)&g->run, &g->cap_run, g->nrun + 1, sizeof *g->run, 16))
      return FXT_ENOMEM;
    g->run[g->nrun++] = p;
  }
  if (rc == 0 && g->nrun > 0)
    rc = end_run(g);
  g->cpus.cpu_width = fxt_fgraph_cpu_width(max_cpu);
  return rc;
}

/* ---- second pass: the lines ----------------------------------------------------------------- */

static bool close_less(const void *ctx, uint32_t a, uint32_t b) {
  const struct frame *fa = &((const struct fg *)ctx)->frames[a];
  const struct frame *fb = &((const struct fg *)ctx)->frames[b];
  if (fa->end != fb->end)
    return fa->end < fb->end;
  if (fa->depth != fb->depth) /* a call ends before the one it is in */
    return fa->depth > fb->depth;
  return fa->start < fb->start;
}

/* The line's prologue at ns: verif_pid's block, the columns of the options. */
static void prologue(struct fg *g, uint32_t cpu, uint32_t thread, uint64_t ns) {
  const struct fxtf_thread *t = &g->threads[thread];
  struct fxt_fgraph_thread ft = {.key = thread, .tid = t->tid,
                                 .comm = t->named ? t->comm.data : NULL,
                                 .comm_len = t->named ? t->comm.len : 0};
  fxt_fgraph_prologue_at(&g->cpus, g->b, cpu, &ft, ns);
}

static void close_one(struct fg *g) {
  uint32_t fr = g->heap[0];
  g->heap[0] = g->heap[--g->nheap];
  fxtf_heap_sift_down(g->heap, g->nheap, 0, close_less, g);
  struct frame *c = &g->frames[fr];
  prologue(g, c->cpu, c->thread, c->end); /* the kernel's funcgraph_exit: at the return */
  fxt_fgraph_return_opts(g->b, g->cpus.opts, c->depth, c->name, c->name_len,
                         c->end - c->start);
  if (g->top[c->thread] > 0)
    g->top[c->thread]--;
  frame_free(g, fr);
}

/* The calls that ended by e's time, in end order; a call that ends when e, a slice of its
 * thread recorded deeper, starts stays open (it holds e). */
static void close_until(struct fg *g, const struct fxtf_event *e) {
  uint32_t depth = NO_DEPTH, t = thread_of(g, e);
  if (fxt_fgraph_is_slice(e) && !fxt_fgraph_depth(&e->ev, &depth))
    depth = NO_DEPTH;
  while (g->nheap > 0) {
    const struct frame *c = &g->frames[g->heap[0]];
    if (c->end > e->ns || (c->end == e->ns && depth != NO_DEPTH && c->thread == t &&
                           c->rdepth != NO_DEPTH && c->rdepth < depth))
      break;
    close_one(g);
  }
}

static int slice(struct fg *g, const struct fxtf_event *e, bool has_children) {
  uint32_t t = thread_of(g, e), cpu = cpu_of(e), depth = g->top[t];
  uint64_t end = end_of(e);
  prologue(g, cpu, t, e->ns);
  fxt_fgraph_call_opts(g->b, g->cpus.opts, depth, e->ev.name.data, e->ev.name.len, has_children,
                       end - e->ns);
  if (!has_children)
    return 0;
  uint32_t fr = frame_new(g);
  if (fr == UINT32_MAX ||
      !fxt_grow((void **)&g->heap, &g->cap_heap, (size_t)g->nheap + 1, sizeof *g->heap, 64))
    return FXT_ENOMEM;
  uint32_t rdepth;
  g->frames[fr] = (struct frame){.start = e->ns, .end = end, .thread = t, .depth = depth,
                                 .cpu = cpu, .name = e->ev.name.data, .name_len = e->ev.name.len,
                                 .rdepth = fxt_fgraph_depth(&e->ev, &rdepth) ? rdepth : NO_DEPTH};
  g->top[t]++;
  g->heap[g->nheap] = fr;
  fxtf_heap_sift_up(g->heap, g->nheap++, close_less, g);
  return 0;
}

/* print_graph_comment: the event's text as a comment, indented by the thread's innermost open
 * call's depth as the kernel's per-CPU depth is (after a "{" at depth d: d; after a leaf or a
 * "}" at depth d: d - 1; indented only when over 0). */
static void comment(struct fg *g, const struct fxtf_event *e) {
  uint32_t t = thread_of(g, e);
  int64_t depth = (int64_t)g->top[t] - 1;
  prologue(g, cpu_of(e), t, e->ns);
  fxt_fgraph_comment_start_opts(g->b, g->cpus.opts, depth);
  fxt_text_event_body(g->b, e);
  fxt_tbuf_puts(g->b, " */\n");
}

static int second_pass(struct fg *g, struct fxtf_event *ev, size_t flush_bytes,
                       bool (*flush)(void *ctx, struct fxt_tbuf *b), void *ctx, char *err,
                       size_t err_size) {
  size_t n = fxtf_event_count(g->f);
  memset(g->top, 0, (size_t)g->nthreads * sizeof *g->top);
  g->free_head = 0;
  g->nframes = 0;
  fxt_fgraph_header_opts(g->b, g->cpus.opts);
  size_t r = 0; /* the next pair of remap */
  for (size_t pos = 0; pos < n; pos++) {
    size_t i = pos;
    if (r < g->nremap && g->remap[r] == pos) {
      i = g->remap[r + 1];
      r += 2;
    }
    if (!bit(g->keep, i))
      continue;
    if (fxtf_event_at(g->f, i, ev, err, err_size) != 0)
      return FXT_EBADMSG;
    close_until(g, ev);
    if (ev->lost_before || ev->lost_unknown)
      fxt_text_lost(g->b, ev->cpu, ev->lost_before, ev->lost_unknown);
    if (fxt_fgraph_is_slice(ev)) {
      int rc = slice(g, ev, bit(g->parent, i));
      if (rc != 0)
        return rc;
    } else {
      comment(g, ev);
    }
    if (g->b->oom)
      return FXT_ENOMEM;
    if (g->b->len >= flush_bytes && !flush(ctx, g->b))
      return FXT_ENOSPC;
  }
  while (g->nheap > 0)
    close_one(g);
  return g->b->oom ? FXT_ENOMEM : 0;
}

int fxt_fgraph_print(const struct fxtf_file *f, struct fxt_sel *sel, uint32_t opts,
                     struct fxt_tbuf *b, size_t flush_bytes,
                     bool (*flush)(void *ctx, struct fxt_tbuf *b), void *ctx, bool *any_slice,
                     char *err, size_t err_size) {
  struct fg g = {.f = f, .b = b, .cpus = {.opts = opts}};
  size_t n = fxtf_event_count(f);
  *any_slice = false;
  /* Most files have no event of system "function": they are not read twice. */
  struct fxtf_name_count *names;
  size_t nnames;
  if (fxtf_name_counts(f, &names, &nnames) != 0)
    return FXT_ENOMEM;
  bool maybe = false;
  for (size_t i = 0; i < nnames && !maybe; i++)
    maybe = names[i].system.len == 8 && memcmp(names[i].system.data, "function", 8) == 0;
  free(names);
  if (!maybe)
    return 0;
  g.threads = fxtf_threads(f, &g.nthreads);
  g.top = calloc((size_t)g.nthreads + 1, sizeof *g.top);
  g.keep = calloc(n / 8 + 1, 1);
  g.parent = calloc(n / 8 + 1, 1);
  struct fxtf_event *ev = malloc(sizeof *ev);
  int rc = FXT_ENOMEM;
  if (g.top != NULL && g.keep != NULL && g.parent != NULL && ev != NULL) {
    rc = first_pass(&g, sel, ev, any_slice, err, err_size);
    if (rc == 0 && *any_slice)
      rc = second_pass(&g, ev, flush_bytes, flush, ctx, err, err_size);
  }
  free(ev);
  free(g.top);
  free(g.keep);
  free(g.parent);
  free(g.frames);
  free(g.heap);
  fxt_fgraph_cpus_free(&g.cpus);
  free(g.run);
  free(g.remap);
  return rc;
}
