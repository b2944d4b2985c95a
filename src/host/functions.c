/* functions.c - the function tracer's runtime: the entry and exit hooks, each thread's shadow
 * stack, and the records they write (ftrace's `function` and `function_graph` tracers for the
 * functions of a program built with fxtrace-functions' flags).
 *
 * Design (docs/functions.md has the user's side):
 *
 * Layers. An entry mechanism calls fxt_fn_entry(fn, site, cfa) when an instrumented function
 * starts and fxt_fn_exit(fn, site, cfa) when it returns: fn is the function's entry address,
 * site the return address into its caller, cfa a stack pointer of the activation's frame: not
 * the same at both ends (GCC jumps to the exit hook from a function with no call left, so the
 * hook sees the caller's stack pointer; Clang with ASan calls the entry hook before the frame
 * is allocated), but below it is only what the activation called. The first mechanism is GCC's
 * and Clang's -finstrument-functions (__cyg_profile_func_enter/exit, below). The second, the
 * patchable-entry engine (functions_pe.c: -fpatchable-function-entry, code rewritten live),
 * calls fxt_fn_pe_enter from its entry trampoline and, for function_graph, redirects the
 * function's return address to its return trampoline, which calls fxt_fn_pe_exit: the same
 * shadow stack, filters and records, a frame whose cfa is the return address's slot and whose
 * site is the original return address (FRAME_REDIRECT). Such a frame is popped by its return
 * only (or counted as cut when a return further up shows a jump left it): it holds the
 * address the function must go back to, whatever the tracer became since. Everything above
 * the hooks - the settings, filters, names, records - is the runtime's, whichever mechanism
 * calls it.
 *
 * Off path. Each hook loads fxt_fn_set.mode (relaxed) and returns when it is FXT_FN_NOP: one
 * load and a branch in the hook, and the call the compiler planted. The mode also carries
 * FXT_FN_PROF, the function profiler (functions_prof.c), which counts whatever the tracer:
 * it counts a call's hit at its entry and, through the call's frame (start), its time at its
 * return - with the engine, a profiled call's return is redirected as function_graph's.
 *
 * Shadow stack. Each thread has one in initial-exec TLS (struct fn_thread, no allocation, no
 * lock: a hook may run in any thread at any time, a signal handler included). A frame holds
 * fn, site, cfa and the entry's timestamp; every instrumented call is pushed, traced or not,
 * so an exit finds its own frame: the first from the top with its fn and site. Frames above
 * it (their cfa below the exit's) are activations left without their exit
 * (longjmp, a C++ exception, a handler that jumped out): popped and counted as cut, never
 * closed with a made-up time. (A jump that lands inside a recursive function, above frames of
 * the same function called from the same site, cannot be told from its own frame: the next
 * exits then take those frames' times. Frames deeper than FXT_FN_DEPTH are counted
 * (overflow) and not traced.) A switch of the tracer raises fxt_fn_set.gen; a thread that
 * sees a new generation drops its frames (counted as cut) but the redirected ones (kept,
 * without a record: cut_old), and a thread's exit counts those
 * it left open (pthread_exit unwinds without the exit hooks: a key's destructor, the key set
 * at the thread's first hook of a generation). Signal safety: a push claims its
 * index before writing the frame, a pop reads the frame before giving the index back
 * (compiler barriers between), so a handler that interrupts either pushes and pops above it.
 *
 * Names. When the tracer is switched on, functions_syms.c builds a table of every function of
 * every loaded object (ELF symtab, else dynsym; PIE and ASLR by the objects' load bias;
 * demangled when the process has __cxa_demangle) with a hash of entry addresses. The hook
 * finds its function there (one hash probe); the name is interned the first time a record
 * names it (intern.c: lock-free, no allocation) and the index kept in the table, so the
 * records carry string refs and the file names every function: no binary is needed to read it.
 * A function the table does not know is named "0x<address>" (not traced when a filter is set).
 *
 * Records, through the thread's ring as every event (drops counted in-band by the writer):
 *   function        an instant event, category "function", named for the function, with one
 *                   argument "parent": the caller's name (the shadow stack's previous frame,
 *                   else the function that contains the return address)
 *   function_graph  a complete (duration) event, category "function", named for the
 *                   function, from entry to exit, written at the exit: a slice on the thread's
 *                   track in Perfetto; one record per call, and tracing_thresh can leave out
 *                   short calls without having written their entry. One argument "depth"
 *                   (uint32, in the argument's header word): the traced frames open below
 *                   it, 0 for the outermost (the kernel's ftrace_graph_ent.depth), which
 *                   readers nest by: a call's children return, so are written, before it
 */
#define _GNU_SOURCE
#include <fxtrace/fxtrace.h>
#include <fxtrace/functions.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "functions_int.h"
#include "intern.h"

#define FXT_FN_DEPTH 64 /* frames of a thread's shadow stack */

/* Low bits of a frame's cfa (the stack is at least 8-byte aligned). */
#define FRAME_TRACED 1u  /* its exit writes a record (function_graph) */
#define FRAME_NOGRAPH 2u /* set_graph_notrace: nothing under it is traced */
#define FRAME_REDIRECT 4u /* patchable entry: its cfa is the return address slot, which holds
                             fxt_fn_pe_return_tramp; site is the original return address */
#define FRAME_BITS 7u

struct fn_frame {
  uintptr_t fn;
  uintptr_t site; /* the return address into the caller */
  uintptr_t cfa;  /* | FRAME_* bits */
  uint64_t start;
  struct fxt_fn_sym *sym; /* fn's symbol when it was pushed, or NULL: its exit names the
                             record without a second lookup (tables are never freed) */
  uint64_t sub; /* the profiler's subtime (functions_prof.c, "Self time"): written at every
                   push, 0 when the profiler times the call, else FXT_FN_PROF_NONE; while
                   graph-time is 0, the times (ns) of the timed calls that returned into it
                   are added (prof_parent); its own return reads it. Owner thread only. */
};

/* A thread's shadow stack: owner thread only (and its signal handlers, see above). */
struct fn_thread {
  uint32_t n;        /* frames pushed, including those past FXT_FN_DEPTH (not stored) */
  uint32_t gen;      /* fxt_fn_set.gen its frames belong to */
  uint32_t keyed;    /* fn_key's value set: the thread's exit counts its open frames */
  uint32_t traced;   /* frames with FRAME_TRACED */
  uint32_t nograph;  /* frames with FRAME_NOGRAPH */
  uint32_t redirected; /* frames with FRAME_REDIRECT */
  struct fn_frame f[FXT_FN_DEPTH];
};

static _Thread_local struct fn_thread fn_tls __attribute__((tls_model("initial-exec")));

struct fxt_fn_settings fxt_fn_set;
struct fxt_fn_counts fxt_fn_counts;

#define NOINSTR __attribute__((no_instrument_function))

/* ---- names ------------------------------------------------------------------------------ */

/* The interned name of fn (0 when the string table is full). */
NOINSTR static uint32_t name_ref(struct fxt_fn_sym *s, uintptr_t fn)
{
  if (s) {
    uint32_t ref = atomic_load_explicit(&s->ref, memory_order_relaxed);
    if (FXT_LIKELY(ref != 0))
      return ref;
    int r = fxt_intern_cstr(s->name);
    if (r <= 0)
      return 0;
    atomic_store_explicit(&s->ref, (uint32_t)r, memory_order_relaxed);
    return (uint32_t)r;
  }
  char hex[2 + 16 + 1];
  int len = snprintf(hex, sizeof hex, "0x%lx", (unsigned long)fn);
  int r = fxt_intern(hex, (uint32_t)len);
  return r > 0 ? (uint32_t)r : 0;
}

/* ---- records ---------------------------------------------------------------------------- */

/* One record named for the function, with one argument word: function_graph's complete event
 * [start, end] (arg: its depth), or function's instant (now; arg: the parent). */
NOINSTR static void write_record(struct fxt_fn_sym *s, uintptr_t fn, uint32_t etype,
                                 uint64_t start, uint64_t end, uint64_t arg)
{
  struct fxt_tslot *t = fxt_emit_enter();
  if (!t)
    return;
  uint32_t cpu = fxt_current_cpu();
  bool instant = etype == FXT_EVENT_INSTANT;
  uint64_t now = instant ? fxt_ticks() : end; /* an instant's time: read inside the emission */
  start = instant ? now : start;
  uint32_t cat = atomic_load_explicit(&fxt_fn_set.category, memory_order_relaxed);
  uint32_t words = 3 + !instant + fxt_emit_thread_words(t);
  uint64_t hdr = fxt_w_event(etype, 1) | fxt_w_size(words) | t->thread_bits |
                 fxt_w_event_strings(cat, name_ref(s, fn));
  struct fxt_cursor c;
  if (fxt_emit_reserve(t, cpu, now, hdr, &c)) {
    fxt_put(&c, hdr);
    fxt_put_event_head(&c, t, start);
    fxt_put(&c, arg);
    if (!instant)
      fxt_put(&c, end);
    fxt_emit_commit(t, &c);
    fxt_fast_refresh(t);
  }
  fxt_emit_leave(t);
}

/* function: an instant named for the function, its caller's name as argument "parent". */
NOINSTR static void write_call(struct fxt_fn_sym *s, uintptr_t fn, struct fxt_fn_sym *ps,
                               uintptr_t parent)
{
  uint32_t arg = atomic_load_explicit(&fxt_fn_set.parent_name, memory_order_relaxed);
  write_record(s, fn, FXT_EVENT_INSTANT, 0, 0,
               fxt_w_arg(FXT_ARG_STRING, 1, arg) |
                   (uint64_t)name_ref(ps, parent) << FXT_ARG_STRING_VALUE_SHIFT);
}

/* function_graph: the slice [start, end], its argument "depth" the traced frames below it
 * (th->traced once its own frame is popped: 0 for the outermost traced call). */
NOINSTR static void write_slice(struct fxt_fn_sym *s, uintptr_t fn, uint64_t start,
                                uint64_t end, uint32_t depth)
{
  uint32_t arg = atomic_load_explicit(&fxt_fn_set.depth_name, memory_order_relaxed);
  write_record(s, fn, FXT_EVENT_DURATION_COMPLETE, start, end, fxt_w_arg_u32(arg, depth));
}

/* ---- the shadow stack ------------------------------------------------------------------- */

/* Pops the top frame (stored or not), keeping the counts of its bits. */
NOINSTR static inline void pop(struct fn_thread *th, struct fn_frame *out)
{
  uint32_t n = th->n;
  if (n <= FXT_FN_DEPTH) {
    *out = th->f[n - 1];
    th->traced -= (out->cfa & FRAME_TRACED) != 0;
    th->nograph -= (out->cfa & FRAME_NOGRAPH) != 0;
    th->redirected -= (out->cfa & FRAME_REDIRECT) != 0;
  } else {
    out->fn = 0;
    out->cfa = 0;
    out->sym = NULL;
    out->start = 0;
    out->sub = FXT_FN_PROF_NONE;
  }
  atomic_signal_fence(memory_order_seq_cst); /* frame read before the index is given back */
  th->n = n - 1;
}

/* Frames left open, counted as cut (those past FXT_FN_DEPTH were counted as overflow). */
NOINSTR static void cut_all(struct fn_thread *th)
{
  uint32_t open = th->n < FXT_FN_DEPTH ? th->n : FXT_FN_DEPTH;
  if (open)
    atomic_fetch_add_explicit(&fxt_fn_counts.cut, open, memory_order_relaxed);
  th->n = th->traced = th->nograph = th->redirected = 0;
}

/* A new generation in a thread with redirected frames: those are kept (their functions will
 * return through the trampoline, which needs their original return addresses whatever the
 * tracer is now) with their TRACED and NOGRAPH bits cleared (no record: their slices were the
 * old tracer's, counted as cut); the others are dropped, counted as cut. The thread's gen is
 * already the new one, so a handler that interrupts this pushes and pops above th->n and
 * leaves the frames below alone. */
NOINSTR static void cut_old(struct fn_thread *th)
{
  if (th->redirected == 0) {
    cut_all(th);
    return;
  }
  uint32_t n = th->n < FXT_FN_DEPTH ? th->n : FXT_FN_DEPTH, w = 0, cut = 0;
  for (uint32_t r = 0; r < n; r++) {
    struct fn_frame f = th->f[r];
    if (!(f.cfa & FRAME_REDIRECT) || (f.cfa & FRAME_TRACED))
      cut++;
    if (!(f.cfa & FRAME_REDIRECT))
      continue;
    f.cfa &= ~(uintptr_t)(FRAME_TRACED | FRAME_NOGRAPH);
    th->f[w++] = f;
  }
  atomic_fetch_add_explicit(&fxt_fn_counts.cut, cut, memory_order_relaxed);
  th->traced = th->nograph = 0;
  th->redirected = w;
  atomic_signal_fence(memory_order_seq_cst);
  th->n = w;
}

/* Where the subtime of a profiled call without a profiled parent goes (graph-time 0): nowhere
 * anyone reads. Owner thread only. */
static _Thread_local uint64_t prof_no_parent __attribute__((tls_model("initial-exec")));

/* The subtime a profiled call that just returned (its frame popped) adds its time to: that of
 * the nearest stored frame below the profiler times, else prof_no_parent (graph-time 0 only;
 * the kernel's fgraph_retrieve_parent_data). Frames the profiler does not time (left out by
 * the filters, or timed for function_graph alone) are skipped: their time stays their
 * parent's own. Out of line: graph-time 1 does not run it. */
NOINSTR __attribute__((noinline)) static uint64_t *prof_parent(struct fn_thread *th)
{
  for (uint32_t i = th->n < FXT_FN_DEPTH ? th->n : FXT_FN_DEPTH; i > 0; i--)
    if (th->f[i - 1].sub != FXT_FN_PROF_NONE)
      return &th->f[i - 1].sub;
  return &prof_no_parent;
}

/* The profiler's part of a timed call's return, its frame f popped (mode had FXT_FN_PROF);
 * inline: with graph-time 1 it adds a load and a branch to the return. */
NOINSTR __attribute__((always_inline)) static inline void
prof_return(struct fn_thread *th, const struct fn_frame *f, uint64_t end)
{
  uint64_t *parent = NULL;
  if (FXT_UNLIKELY(atomic_load_explicit(&fxt_fn_set.prof_self, memory_order_relaxed)))
    parent = prof_parent(th);
  fxt_fn_prof_exit(f->fn, f->start, end, f->sub, parent);
}

/* A thread's exit: pthread_exit (or a cancellation) unwinds without the exit hooks. Runs in
 * the exiting thread (the key's destructor), after its last hook. */
static pthread_key_t fn_key;
static pthread_once_t fn_key_once = PTHREAD_ONCE_INIT;

NOINSTR static void thread_gone(void *arg)
{
  struct fn_thread *th = arg;
  if (th->gen == atomic_load_explicit(&fxt_fn_set.gen, memory_order_relaxed))
    cut_all(th);
}

NOINSTR static void make_key(void)
{
  pthread_key_create(&fn_key, thread_gone);
}

NOINSTR void fxt_fn_runtime_setup(void)
{
  pthread_once(&fn_key_once, make_key);
}

/* A thread that sees a new generation drops the frames of the older one; the first time,
 * it sets its key (one of the first 32 keys: no allocation) so its exit counts what it left
 * open. The check is inline in every hook, the change out of line. */
NOINSTR __attribute__((noinline, cold)) static void new_gen(struct fn_thread *th, uint32_t gen)
{
  th->gen = gen;
  atomic_signal_fence(memory_order_seq_cst); /* a handler from here on sees the new gen */
  cut_old(th);
  if (!th->keyed) {
    th->keyed = 1;
    pthread_setspecific(fn_key, th);
  }
}

NOINSTR static inline void check_gen(struct fn_thread *th)
{
  uint32_t gen = atomic_load_explicit(&fxt_fn_set.gen, memory_order_relaxed);
  if (FXT_UNLIKELY(th->gen != gen))
    new_gen(th, gen);
}

/* Whether a call of s is traced, given the frames open (ftrace's rules: set_ftrace_filter
 * and set_ftrace_notrace choose functions; in function_graph, set_graph_function traces
 * only what runs under those functions, set_graph_notrace nothing under them, and
 * max_graph_depth stops at that many traced frames). */
NOINSTR static inline bool traced(const struct fn_thread *th, const struct fxt_fn_sym *s,
                           uint32_t mode, uint32_t *frame_bits)
{
  uint32_t fl = s ? atomic_load_explicit(&s->flags, memory_order_relaxed) : 0;
  bool on = !(fl & FXT_FN_F_NOTRACE) &&
            (!atomic_load_explicit(&fxt_fn_set.has_filter, memory_order_relaxed) ||
             (fl & FXT_FN_F_FILTER));
  if (mode != FXT_FN_GRAPH)
    return on;
  if (th->nograph || (fl & FXT_FN_F_GRAPH_NOTRACE)) {
    *frame_bits |= FRAME_NOGRAPH;
    return false;
  }
  if (atomic_load_explicit(&fxt_fn_set.has_graph, memory_order_relaxed) && th->traced == 0 &&
      !(fl & FXT_FN_F_GRAPH))
    return false;
  uint32_t max = atomic_load_explicit(&fxt_fn_set.max_depth, memory_order_relaxed);
  if (max && th->traced >= max)
    return false;
  if (on)
    *frame_bits |= FRAME_TRACED;
  return on;
}

NOINSTR void fxt_fn_entry(uintptr_t fn, uintptr_t site, uintptr_t cfa, uint32_t mode)
{
  uint32_t prof = mode & FXT_FN_PROF; /* the profiler (functions_prof.c), whatever the tracer */
  mode &= FXT_FN_TRACER;
  struct fn_thread *th = &fn_tls;
  check_gen(th);
  uint32_t n = th->n;
  th->n = n + 1; /* claimed before it is written: a handler pushes above it */
  atomic_signal_fence(memory_order_seq_cst);
  if (n >= FXT_FN_DEPTH) {
    atomic_fetch_add_explicit(&fxt_fn_counts.overflow, 1, memory_order_relaxed);
    return;
  }
  struct fxt_fn_table *tab = fxt_fn_table_current();
  struct fxt_fn_sym *s = tab ? fxt_fn_sym_entry(tab, fn) : NULL;
  uint32_t bits = 0;
  bool on = (s || !atomic_load_explicit(&fxt_fn_set.has_filter, memory_order_relaxed)) &&
            traced(th, s, mode, &bits);
  struct fn_frame *f = &th->f[n];
  f->fn = fn;
  f->site = site;
  f->cfa = cfa | bits;
  f->start = 0;
  f->sym = s;
  th->traced += (bits & FRAME_TRACED) != 0;
  th->nograph += (bits & FRAME_NOGRAPH) != 0;
  bool timed = mode == FXT_FN_GRAPH && on;
  f->sub = FXT_FN_PROF_NONE;
  if (FXT_UNLIKELY(prof) && fxt_fn_prof_enter(s, fn)) {
    f->sub = 0;
    timed = true;
  }
  if (timed)
    f->start = fxt_ticks(); /* last: the entry's own work is not in the slice */
  if (mode != FXT_FN_FUNCTION || !on)
    return;
  /* The parent: the frame below when it is the caller's (its cfa not below ours: equal for
   * an inlined call, whose hooks see the containing function's frame), else the
   * function that holds the return address. */
  uintptr_t parent = 0;
  struct fxt_fn_sym *ps = NULL;
  if (n > 0 && (th->f[n - 1].cfa & ~(uintptr_t)FRAME_BITS) >= cfa) {
    parent = th->f[n - 1].fn;
    ps = tab ? fxt_fn_sym_entry(tab, parent) : NULL;
  } else {
    ps = tab ? fxt_fn_sym_at(tab, site) : NULL;
    parent = ps ? ps->addr : site;
  }
  write_call(s, fn, ps, parent);
}

NOINSTR void fxt_fn_exit(uintptr_t fn, uintptr_t site, uintptr_t cfa, uint32_t mode)
{
  uint64_t end = mode & (FXT_FN_GRAPH | FXT_FN_PROF) ? fxt_ticks() : 0; /* first: the exit's
                                                             own work is not in the slice */
  uint32_t prof = mode & FXT_FN_PROF;
  mode &= FXT_FN_TRACER;
  struct fn_thread *th = &fn_tls;
  check_gen(th);
  struct fn_frame f;
  for (;;) {
    if (th->n == 0)
      return; /* an exit without its entry (the tracer was switched on inside it) */
    if (th->n > FXT_FN_DEPTH) { /* not stored: ours, unless a jump left it (not known) */
      pop(th, &f);
      return;
    }
    const struct fn_frame *top = &th->f[th->n - 1];
    uintptr_t tcfa = top->cfa & ~(uintptr_t)FRAME_BITS;
    bool ours = top->fn == fn && top->site == site;
    if (!ours && (tcfa >= cfa || (top->cfa & FRAME_REDIRECT)))
      return; /* as above: the frame on top is a caller's (a redirected frame is popped by
                 its return only: the trampoline needs its return address) */
    pop(th, &f);
    if (ours)
      break;
    /* Deeper than ours: left without its exit, a jump went past it. */
    atomic_fetch_add_explicit(&fxt_fn_counts.cut, 1, memory_order_relaxed);
  }
  if (FXT_UNLIKELY(prof) && f.sub != FXT_FN_PROF_NONE)
    prof_return(th, &f, end);
  if (!(f.cfa & FRAME_TRACED) || mode != FXT_FN_GRAPH)
    return;
  uint64_t thresh = atomic_load_explicit(&fxt_fn_set.thresh_ticks, memory_order_relaxed);
  if (thresh && end - f.start < thresh)
    return;
  write_slice(f.sym, fn, f.start, end, th->traced);
}

/* ---- the patchable-entry engine's C (functions_tramp.c calls these) -------------------- */

/* The function whose patched entry called: fn. */
NOINSTR static struct fxt_fn_sym *pe_sym(const struct fxt_fn_table *tab, uintptr_t fn)
{
  return tab ? fxt_fn_sym_entry(tab, fn) : NULL;
}

/* function: the instant, its parent the function that holds the return address (as the
 * kernel's parent_ip). function_graph: when the call is traced (or starts a
 * set_graph_notrace subtree), a frame is pushed and the return redirected; the slot is the
 * frame's cfa, so the return finds it by the stack pointer. Full shadow stack: not redirected,
 * counted as overflow. Order, for a handler that interrupts (runs the same code above):
 * index claimed, frame written, then (returned 1) the slot redirected by the trampoline's
 * call of the body - a return through the trampoline always finds its frame complete. */
NOINSTR int fxt_fn_pe_enter(uintptr_t fn, uintptr_t *slot)
{
  uint32_t mode = atomic_load_explicit(&fxt_fn_set.mode, memory_order_relaxed);
  if (mode == FXT_FN_NOP)
    return 0; /* a site still enabled while the tracer goes off */
  uint32_t prof = mode & FXT_FN_PROF;
  mode &= FXT_FN_TRACER;
  struct fn_thread *th = &fn_tls;
  check_gen(th);
  struct fxt_fn_table *tab = fxt_fn_table_current();
  struct fxt_fn_sym *s = pe_sym(tab, fn);
  uint32_t bits = 0;
  bool on = (s || !atomic_load_explicit(&fxt_fn_set.has_filter, memory_order_relaxed)) &&
            traced(th, s, mode, &bits);
  /* The profiler times its calls through the return, redirected whatever the tracer. */
  bool timed = FXT_UNLIKELY(prof) && fxt_fn_prof_enter(s, fn);
  if (mode != FXT_FN_GRAPH) {
    if (on && mode == FXT_FN_FUNCTION) {
      struct fxt_fn_sym *ps = tab ? fxt_fn_sym_at(tab, *slot) : NULL;
      write_call(s, fn, ps, ps ? ps->addr : *slot);
    }
    on = false; /* no slice */
  }
  if (bits == 0 && !timed)
    return 0;
  uint32_t n = th->n;
  if (n >= FXT_FN_DEPTH) {
    atomic_fetch_add_explicit(&fxt_fn_counts.overflow, 1, memory_order_relaxed);
    return 0;
  }
  th->n = n + 1;
  atomic_signal_fence(memory_order_seq_cst);
  struct fn_frame *f = &th->f[n];
  f->fn = fn;
  f->site = *slot;
  f->cfa = (uintptr_t)slot | bits | FRAME_REDIRECT;
  f->sym = s;
  f->sub = timed ? 0 : FXT_FN_PROF_NONE;
  f->start = on || timed ? fxt_ticks() : 0;
  th->traced += (bits & FRAME_TRACED) != 0;
  th->nograph += (bits & FRAME_NOGRAPH) != 0;
  th->redirected++;
  atomic_signal_fence(memory_order_seq_cst); /* the frame whole before the return goes to it */
  return 1;
}

/* A return through the trampoline: its frame is the topmost redirected one whose slot is sp
 * - 8. Frames above it were left without their return (longjmp, a handler that jumped out):
 * popped, counted as cut. A frame is there whatever the tracer became since (cut_old keeps
 * redirected frames); none would mean the shadow stack was corrupted, and there is no address
 * to return to: the process stops with a message. */
NOINSTR uintptr_t fxt_fn_pe_exit(uintptr_t sp)
{
  uint64_t end = fxt_ticks(); /* first: the exit's own work is not in the slice */
  struct fn_thread *th = &fn_tls;
  check_gen(th);
  uintptr_t slot = sp - sizeof(uintptr_t);
  uint32_t i = th->n < FXT_FN_DEPTH ? th->n : FXT_FN_DEPTH;
  while (i > 0 && !((th->f[i - 1].cfa & FRAME_REDIRECT) &&
                    (th->f[i - 1].cfa & ~(uintptr_t)FRAME_BITS) == slot))
    i--;
  if (i == 0) {
    static const char msg[] = "fxtrace: function_graph: a return without its shadow frame\n";
    (void)!write(2, msg, sizeof msg - 1);
    abort();
  }
  struct fn_frame f;
  while (th->n > i) {
    pop(th, &f);
    atomic_fetch_add_explicit(&fxt_fn_counts.cut, 1, memory_order_relaxed);
  }
  pop(th, &f);
  if (FXT_UNLIKELY(atomic_load_explicit(&fxt_fn_set.mode, memory_order_relaxed) & FXT_FN_PROF) &&
      f.sub != FXT_FN_PROF_NONE)
    prof_return(th, &f, end);
  if (f.cfa & FRAME_TRACED) { /* cleared at a switch: set means function_graph still */
    uint64_t thresh = atomic_load_explicit(&fxt_fn_set.thresh_ticks, memory_order_relaxed);
    if (!thresh || end - f.start >= thresh)
      write_slice(f.sym, f.fn, f.start, end, th->traced);
  }
  return f.site;
}

#if FXT_FN_PE_SUPPORTED
/* The redirections an unwinder's walk undid, until the exception is caught: bit i for the
 * shadow frame at index i (FXT_FN_DEPTH fits), with its TRACED and NOGRAPH bits, in the
 * thread's generation gen (a switch of the tracer compacts the frames: the bits are then
 * stale and dropped). On aarch64 also where each one's return address was saved and how it
 * was signed (functions_unwind_a64.c); on x86-64 that is its slot, plain. Owner thread only,
 * as the shadow stack; a handler that throws and catches inside itself sets and takes bits of
 * frames above those it interrupted. */
_Static_assert(FXT_FN_DEPTH <= 64, "one bit per shadow frame");
struct pe_unwound {
  uint64_t restored, traced, nograph;
  uint32_t gen;
#if FXT_FN_PE_A64
  uintptr_t *loc[FXT_FN_DEPTH];
  uint8_t kind[FXT_FN_DEPTH];
#endif
};
static _Thread_local struct pe_unwound pe_unw __attribute__((tls_model("initial-exec")));

/* Frame i (f) no longer redirected, remembered in pe_unw when restored (its return address
 * put back). */
NOINSTR static void pe_unredirect(struct fn_thread *th, struct fn_frame *f, uint32_t i,
                                  bool restored)
{
  if (restored) {
    uint64_t bit = (uint64_t)1 << i;
    pe_unw.restored |= bit;
    pe_unw.traced |= (f->cfa & FRAME_TRACED) ? bit : 0;
    pe_unw.nograph |= (f->cfa & FRAME_NOGRAPH) ? bit : 0;
  }
  th->traced -= (f->cfa & FRAME_TRACED) != 0;
  th->nograph -= (f->cfa & FRAME_NOGRAPH) != 0;
  th->redirected--;
  f->cfa &= ~(uintptr_t)(FRAME_REDIRECT | FRAME_TRACED | FRAME_NOGRAPH);
}

/* An unwinder is about to walk this thread's stack (src/fnshim/unwind.c: a C++ exception, any
 * _Unwind_RaiseException, a rethrow, a forced unwind, pthread_exit): every
 * redirected return address is put back, so the walk sees the real callers; the frames stay
 * (no REDIRECT, no record), popped as cut by a later return or switch, or redirected again by
 * fxt_fn_pe_caught when they outlive the catch (pe_unw remembers them). Top down: a tail call
 * shares its caller's slot, and its frame, on top, holds the trampoline as its return
 * address; the caller's, below, the real one. */
#if FXT_FN_PE_X86_64
/* A slot that does not hold the trampoline (a frame a longjmp left, its stack since reused)
 * is not written. */
NOINSTR void fxt_fn_pe_unwinding(void)
{
  struct fn_thread *th = &fn_tls;
  uint32_t n = th->n < FXT_FN_DEPTH ? th->n : FXT_FN_DEPTH;
  if (th->redirected > 0 && pe_unw.gen != th->gen)
    pe_unw = (struct pe_unwound){.gen = th->gen};
  for (uint32_t i = n; i > 0 && th->redirected > 0; i--) {
    struct fn_frame *f = &th->f[i - 1];
    if (!(f->cfa & FRAME_REDIRECT))
      continue;
    uintptr_t *slot = (uintptr_t *)(f->cfa & ~(uintptr_t)FRAME_BITS);
    bool restored = *slot == (uintptr_t)fxt_fn_pe_return_tramp;
    if (restored)
      *slot = f->site;
    pe_unredirect(th, f, i - 1, restored);
  }
}
#else
/* aarch64: each walk (fxt_fn_pe_a64_next) finds the first return still redirected on the
 * stack, which belongs to the redirected frames of slot CFA - 8 (two with a tail call: the
 * lowest holds the real address); written back signed as it was; then the next walk. A frame
 * no walk reaches (a longjmp left it) stays redirected. At most one walk per frame, and one
 * more that finds none. */
NOINSTR void fxt_fn_pe_unwinding(void)
{
  struct fn_thread *th = &fn_tls;
  uint32_t n = th->n < FXT_FN_DEPTH ? th->n : FXT_FN_DEPTH;
  if (th->redirected > 0 && pe_unw.gen != th->gen)
    pe_unw = (struct pe_unwound){.gen = th->gen};
  struct fxt_fn_a64_ra ra;
  for (uint32_t k = 0; k < n && th->redirected > 0 && fxt_fn_pe_a64_next(&ra); k++) {
    uintptr_t slot = ra.cfa - sizeof(uintptr_t);
    uint32_t low = n;
    for (uint32_t i = n; i > 0; i--)
      if ((th->f[i - 1].cfa & FRAME_REDIRECT) &&
          (th->f[i - 1].cfa & ~(uintptr_t)FRAME_BITS) == slot)
        low = i - 1;
    if (low == n)
      return; /* not this thread's: the unwinder will stop there */
    for (uint32_t i = n; i > low; i--)
      if ((th->f[i - 1].cfa & FRAME_REDIRECT) &&
          (th->f[i - 1].cfa & ~(uintptr_t)FRAME_BITS) == slot)
        pe_unredirect(th, &th->f[i - 1], i - 1, i - 1 == low);
    ra.kind = fxt_fn_pe_a64_kind(ra.kind, ra.cfa, th->f[low].fn);
    *ra.loc = fxt_fn_pe_a64_sign(th->f[low].site, ra.cfa, ra.kind);
    pe_unw.loc[low] = ra.loc;
    pe_unw.kind[low] = (uint8_t)ra.kind;
  }
}

uintptr_t fxt_fn_pe_a64_site(uintptr_t slot)
{
  struct fn_thread *th = &fn_tls;
  uint32_t n = th->n < FXT_FN_DEPTH ? th->n : FXT_FN_DEPTH;
  for (uint32_t i = 0; i < n; i++)
    if ((th->f[i].cfa & ~(uintptr_t)FRAME_BITS) == slot &&
        th->f[i].site != (uintptr_t)fxt_fn_pe_return_tramp)
      return th->f[i].site;
  return 0;
}
#endif

/* Where frame i's return address is (its slot on x86-64) and its value v as stored there. */
NOINSTR static uintptr_t *pe_ra_loc(const struct pe_unwound *u, uint32_t i, uintptr_t *slot)
{
#if FXT_FN_PE_A64
  (void)slot;
  return u->loc[i];
#else
  (void)u;
  (void)i;
  return slot;
#endif
}

NOINSTR static uintptr_t pe_ra_value(const struct pe_unwound *u, uint32_t i, uintptr_t *slot,
                                     uintptr_t v)
{
#if FXT_FN_PE_A64
  return fxt_fn_pe_a64_sign(v, (uintptr_t)(slot + 1), u->kind[i]);
#else
  (void)u;
  (void)i;
  (void)slot;
  return v;
#endif
}

/* A C++ exception caught (src/fnshim/unwind.c, __cxa_begin_catch): sp is the catching
 * function's stack pointer. The frames the exception went through are on top, their cfa (a
 * redirected one's slot, a hook's stack pointer) below sp (the catching function's own: its
 * slot above sp, its hook's stack pointer sp itself): popped, counted as cut. The
 * frames fxt_fn_pe_unwinding put back that are still open above sp get their redirection (and
 * their TRACED and NOGRAPH bits) again, so their slices are written when they return (as
 * uftrace's mcount_rstack_reset). Order as fxt_fn_pe_enter's: the frame whole before its
 * return address goes to the trampoline. A place that no longer holds the frame's return
 * address is not written (the frame was left by a longjmp meanwhile). Not redirect: another
 * unwind is still walking up the stack (src/fnshim/unwind.c) and must read the real return
 * addresses; the frames stay put back, remembered for the catch that ends it. */
NOINSTR void fxt_fn_pe_caught(uintptr_t sp, bool redirect)
{
  struct fn_thread *th = &fn_tls;
  check_gen(th);
  struct fn_frame f;
  while (th->n > 0 && th->n <= FXT_FN_DEPTH &&
         (th->f[th->n - 1].cfa & ~(uintptr_t)FRAME_BITS) < sp) {
    pop(th, &f);
    atomic_fetch_add_explicit(&fxt_fn_counts.cut, 1, memory_order_relaxed);
  }
  if (!redirect)
    return; /* another unwind walks on: the frames keep their real return addresses */
  struct pe_unwound *u = &pe_unw;
  uint64_t restored = u->restored, traced = u->traced, nograph = u->nograph;
  u->restored = u->traced = u->nograph = 0;
  if (u->gen != th->gen) {
    u->gen = th->gen;
    return;
  }
  uint32_t n = th->n < FXT_FN_DEPTH ? th->n : FXT_FN_DEPTH;
  for (uint32_t i = 0; i < n && restored >> i; i++) {
    uint64_t bit = (uint64_t)1 << i;
    struct fn_frame *fr = &th->f[i];
    uintptr_t *slot = (uintptr_t *)(fr->cfa & ~(uintptr_t)FRAME_BITS);
    if (!(restored & bit) || (fr->cfa & FRAME_REDIRECT) || (uintptr_t)slot <= sp)
      continue;
    uintptr_t *loc = pe_ra_loc(u, i, slot);
    if (*loc != pe_ra_value(u, i, slot, fr->site))
      continue;
    uintptr_t bits = FRAME_REDIRECT | ((traced & bit) ? FRAME_TRACED : 0) |
                     ((nograph & bit) ? FRAME_NOGRAPH : 0);
    fr->cfa |= bits;
    th->traced += (bits & FRAME_TRACED) != 0;
    th->nograph += (bits & FRAME_NOGRAPH) != 0;
    th->redirected++;
    atomic_signal_fence(memory_order_seq_cst); /* the frame whole before the return goes to it */
    *loc = pe_ra_value(u, i, slot, (uintptr_t)fxt_fn_pe_return_tramp);
  }
}
#endif

FXT_API int fxt_functions_counts(struct fxt_functions_counts *c)
{
  if (!c || c->struct_size < sizeof(*c))
    return FXT_EINVAL;
  c->cut = atomic_load_explicit(&fxt_fn_counts.cut, memory_order_relaxed);
  c->overflow = atomic_load_explicit(&fxt_fn_counts.overflow, memory_order_relaxed);
  return 0;
}
