/* src/formats/fgraph.c - `fxtrace report`'s function_graph layout (see fgraph.h).
 *
 * Two passes over the file's events in time order. The first applies the selection (its
 * verdicts kept in a bitmap: a filter is evaluated once per event) and rebuilds each thread's
 * nesting, to know which slices have a recorded call inside (a second bitmap): the children
 * of a slice come after it in time order, so its line cannot be chosen when it is met. The
 * second prints; calls still open wait in a min-heap by end time and print their "}" before
 * the first event that does not start before them.
 */
#include "fgraph.h"

#include <stdlib.h>
#include <string.h>

#include "../base/grow.h"
#include "../base/text.h"
#include "heap.h"

bool fxt_fgraph_is_slice(const struct fxtf_event *e) {
  return e->ev.type == FXT_EVENT_DURATION_COMPLETE && e->ev.category.len == 8 &&
         memcmp(e->ev.category.data, "function", 8) == 0;
}

/* The kernel's header: trace.c's "# tracer: %s\n#\n", then __print_graph_headers_flags with
 * funcgraph-cpu and funcgraph-duration. */
void fxt_fgraph_header(struct fxt_tbuf *b) {
  fxt_tbuf_puts(b, "# tracer: function_graph\n"
                   "#\n"
                   "# CPU  DURATION                  FUNCTION CALLS\n"
                   "# |     |   |                     |   |   |   |\n");
}

/* An open call, or (first pass) a slice on its thread's stack. */
struct frame {
  uint64_t start, end;
  uint32_t thread, depth, cpu;
  uint32_t prev; /* the thread's frame below + 1 (first pass) */
  size_t event;  /* first pass */
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
  int64_t *last_pid; /* per CPU: the thread its last line was of (-1: none), as verif_pid */
  size_t cap_cpus;
  uint32_t ncpus;
  unsigned cpu_width;
  unsigned char *keep, *parent; /* bitmaps over the events */
  struct fxt_tbuf *b;
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

static int first_pass(struct fg *g, struct fxt_sel *sel, struct fxtf_event *ev, bool *any,
                      char *err, size_t err_size) {
  size_t n = fxtf_event_count(g->f);
  uint32_t max_cpu = 0;
  bool oom = false;
  for (size_t i = 0; i < n; i++) {
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
    uint32_t t = thread_of(g, ev);
    /* The thread's calls that ended by this one's start are closed: none of them holds it. */
    while (g->top[t] != 0 && g->frames[g->top[t] - 1].end <= ev->ns) {
      uint32_t done = g->top[t] - 1;
      g->top[t] = g->frames[done].prev;
      frame_free(g, done);
    }
    if (g->top[t] != 0)
      set_bit(g->parent, g->frames[g->top[t] - 1].event);
    uint32_t fr = frame_new(g);
    if (fr == UINT32_MAX)
      return FXT_ENOMEM;
    g->frames[fr] = (struct frame){.end = end_of(ev), .event = i, .prev = g->top[t]};
    g->top[t] = fr + 1;
  }
  unsigned w = 1;
  for (uint32_t c = max_cpu; c >= 10; c /= 10)
    w++;
  g->cpu_width = w;
  return 0;
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

static void put_udec(struct fxt_tbuf *b, uint64_t v) {
  char buf[24], *p = buf + sizeof buf;
  do {
    *--p = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  fxt_tbuf_put(b, p, (size_t)(buf + sizeof buf - p));
}

static void put_spaces(struct fxt_tbuf *b, size_t n) {
  static const char k_sp[] = "                                                                ";
  for (size_t k; n > 0; n -= k) {
    k = n < sizeof k_sp - 1 ? n : sizeof k_sp - 1;
    fxt_tbuf_put(b, k_sp, k);
  }
}

/* print_graph_cpu: " %*d) ". */
static void put_cpu(struct fg *g, uint32_t cpu) {
  char buf[12], *p = buf + sizeof buf;
  uint32_t v = cpu;
  do {
    *--p = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  size_t len = (size_t)(buf + sizeof buf - p);
  fxt_tbuf_put(g->b, " ", 1);
  put_spaces(g->b, len < g->cpu_width ? g->cpu_width - len : 0);
  fxt_tbuf_put(g->b, p, len);
  fxt_tbuf_put(g->b, ") ", 2);
}

/* print_graph_proc: "comm-pid" (comm cut to 7 bytes) centred in 14 columns. */
static void put_proc(struct fg *g, uint32_t thread) {
  const struct fxtf_thread *t = &g->threads[thread];
  const char *comm = t->named ? t->comm.data : "<...>";
  size_t clen = t->named ? t->comm.len : 5;
  if (clen > 7)
    clen = 7;
  char buf[24], *p = buf + sizeof buf;
  uint64_t v = t->tid;
  do {
    *--p = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  size_t plen = (size_t)(buf + sizeof buf - p), len = clen + plen + 1;
  size_t spaces = len < 14 ? 14 - len : 0;
  put_spaces(g->b, spaces / 2);
  fxt_tbuf_put(g->b, comm, clen);
  fxt_tbuf_put(g->b, "-", 1);
  fxt_tbuf_put(g->b, p, plen);
  put_spaces(g->b, spaces - spaces / 2);
}

/* Each line starts here: verif_pid's context-switch block when the CPU's lines change
 * thread, then the CPU column. */
static void prologue(struct fg *g, uint32_t cpu, uint32_t thread) {
  if (cpu >= g->ncpus) {
    if (!fxt_grow((void **)&g->last_pid, &g->cap_cpus, (size_t)cpu + 1, sizeof *g->last_pid,
                  8)) {
      g->b->oom = true;
      return;
    }
    for (uint32_t c = g->ncpus; c <= cpu; c++)
      g->last_pid[c] = -1;
    g->ncpus = cpu + 1;
  }
  int64_t prev = g->last_pid[cpu];
  if (prev != (int64_t)thread) {
    g->last_pid[cpu] = thread;
    if (prev != -1) {
      size_t at = g->b->len;
      fxt_tbuf_puts(g->b, " ------------------------------------------\n");
      put_cpu(g, cpu);
      put_proc(g, (uint32_t)prev);
      fxt_tbuf_puts(g->b, " => ");
      put_proc(g, thread);
      fxt_tbuf_puts(g->b, "\n ------------------------------------------\n\n");
      fxt_text_utf8_fix(g->b, at);
    }
  }
  put_cpu(g, cpu);
}

/* trace_find_mark: the first threshold the duration exceeds. */
static char mark_of(uint64_t ns) {
  static const struct {
    uint64_t ns;
    char sym;
  } k_marks[] = {{1000000000u, '$'}, {100000000u, '@'}, {10000000u, '*'},
                 {1000000u, '#'},    {100000u, '!'},    {10000u, '+'}};
  for (size_t i = 0; i < sizeof k_marks / sizeof k_marks[0]; i++)
    if (ns > k_marks[i].ns)
      return k_marks[i].sym;
  return ' ';
}

/* print_graph_duration: the mark, microseconds with the nanoseconds truncated so that the
 * number has at most 7 digits (and its point), " us ", padding to 8, "|  ". */
static void put_duration(struct fxt_tbuf *b, uint64_t ns) {
  char head[2] = {mark_of(ns), ' '};
  fxt_tbuf_put(b, head, 2);
  size_t at = b->len;
  put_udec(b, ns / 1000);
  size_t len = b->len - at;
  if (len < 7) {
    unsigned rem = (unsigned)(ns % 1000);
    char frac[4] = {'.', (char)('0' + rem / 100), (char)('0' + rem / 10 % 10),
                    (char)('0' + rem % 10)};
    size_t digits = 8 - len - 1 < 3 ? 8 - len - 1 : 3; /* snprintf's size min(5, 8 - len) */
    fxt_tbuf_put(b, frac, digits + 1);
    len += digits + 1;
  }
  fxt_tbuf_puts(b, " us ");
  put_spaces(b, len < 8 ? 8 - len : 0);
  fxt_tbuf_puts(b, "|  ");
}

static void close_one(struct fg *g) {
  uint32_t fr = g->heap[0];
  g->heap[0] = g->heap[--g->nheap];
  fxtf_heap_sift_down(g->heap, g->nheap, 0, close_less, g);
  struct frame *c = &g->frames[fr];
  prologue(g, c->cpu, c->thread);
  put_duration(g->b, c->end - c->start);
  put_spaces(g->b, (size_t)c->depth * 2);
  fxt_tbuf_puts(g->b, "}\n");
  if (g->top[c->thread] > 0)
    g->top[c->thread]--;
  frame_free(g, fr);
}

/* The calls that ended by t, in end order. */
static void close_until(struct fg *g, uint64_t t) {
  while (g->nheap > 0 && g->frames[g->heap[0]].end <= t)
    close_one(g);
}

static int slice(struct fg *g, const struct fxtf_event *e, bool has_children) {
  uint32_t t = thread_of(g, e), cpu = cpu_of(e), depth = g->top[t];
  uint64_t end = end_of(e);
  prologue(g, cpu, t);
  size_t at = g->b->len;
  if (has_children)
    fxt_tbuf_puts(g->b, "              |  ");
  else
    put_duration(g->b, end - e->ns);
  put_spaces(g->b, (size_t)depth * 2);
  fxt_tbuf_put(g->b, e->ev.name.data ? e->ev.name.data : "", e->ev.name.len);
  fxt_tbuf_puts(g->b, has_children ? "() {\n" : "();\n");
  fxt_text_utf8_fix(g->b, at);
  if (!has_children)
    return 0;
  uint32_t fr = frame_new(g);
  if (fr == UINT32_MAX ||
      !fxt_grow((void **)&g->heap, &g->cap_heap, (size_t)g->nheap + 1, sizeof *g->heap, 64))
    return FXT_ENOMEM;
  g->frames[fr] = (struct frame){.start = e->ns, .end = end, .thread = t, .depth = depth,
                                 .cpu = cpu};
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
  prologue(g, cpu_of(e), t);
  fxt_tbuf_puts(g->b, "              |  ");
  if (depth > 0)
    put_spaces(g->b, (size_t)(depth + 1) * 2);
  fxt_tbuf_puts(g->b, "/* ");
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
  fxt_fgraph_header(g->b);
  for (size_t i = 0; i < n; i++) {
    if (!bit(g->keep, i))
      continue;
    if (fxtf_event_at(g->f, i, ev, err, err_size) != 0)
      return FXT_EBADMSG;
    close_until(g, ev->ns);
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

int fxt_fgraph_print(const struct fxtf_file *f, struct fxt_sel *sel, struct fxt_tbuf *b,
                     size_t flush_bytes, bool (*flush)(void *ctx, struct fxt_tbuf *b), void *ctx,
                     bool *any_slice, char *err, size_t err_size) {
  struct fg g = {.f = f, .b = b};
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
  free(g.last_pid);
  return rc;
}
