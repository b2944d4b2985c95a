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
 * Fast paths. function_graph with no rule (fxt_fn_set.rules 0: no function in a filter file,
 * no max_graph_depth) and no profiler traces every call: each hook then does only that case
 * inline (graph_plain) - push the frame and read the clock; pop the call's own frame and
 * write its slice through the event fast path (fxt_fast_open, FXT_FAST_STAMPED) - and leaves
 * everything else to the general paths (entry_any, exit_any, fxt_fn_pe_enter_any, pe_exit_any),
 * which handle every case, that one included, in the same order.
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
#include "functions_stack.h"
#include "intern.h"

_Thread_local struct fn_thread fxt_fn_tls __attribute__((tls_model("initial-exec")));

struct fxt_fn_settings fxt_fn_set;
struct fxt_fn_counts fxt_fn_counts;

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
NOINSTR __attribute__((noinline)) static void write_record(struct fxt_fn_sym *s, uintptr_t fn,
                                                           uint32_t etype, uint64_t start,
                                                           uint64_t end, uint64_t arg)
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
 * (th->traced once its own frame is popped: 0 for the outermost traced call). The common case
 * through the fast path (fxtrace/detail/emit.h), as a scope's end: header, start, the
 * argument, end, for a function whose name is interned. Anything else (the name's first
 * record, no slot yet, the ring's end, the thread moved, drops to report first) takes the
 * general path, which handles all of it; a call there, in tail position, so the fast path
 * saves no register. */
NOINSTR __attribute__((always_inline)) static inline void
write_slice(struct fxt_fn_sym *s, uintptr_t fn, uint64_t start, uint64_t end, uint32_t depth)
{
  uint64_t arg = fxt_w_arg_u32(atomic_load_explicit(&fxt_fn_set.depth_name,
                                                    memory_order_relaxed), depth);
  uint32_t ref = s ? atomic_load_explicit(&s->ref, memory_order_relaxed) : 0;
  uint32_t cat = atomic_load_explicit(&fxt_fn_set.category, memory_order_relaxed);
  struct fxt_fast f;
  if (FXT_LIKELY(ref != 0) &&
      FXT_LIKELY(fxt_fast_open(NULL, 4,
                               fxt_w_event(FXT_EVENT_DURATION_COMPLETE, 1) |
                                   fxt_w_event_strings(cat, ref),
                               FXT_FAST_STAMPED, &f))) {
    fxt_put(&f.c, start);
    fxt_put(&f.c, arg);
    fxt_put(&f.c, end);
    fxt_fast_end(&f);
    return;
  }
  write_record(s, fn, FXT_EVENT_DURATION_COMPLETE, start, end, arg);
}

/* The same out of line, for the general paths (one copy of the fast path's code there). */
NOINSTR __attribute__((noinline)) static void write_slice_any(struct fxt_fn_sym *s, uintptr_t fn,
                                                              uint64_t start, uint64_t end,
                                                              uint32_t depth)
{
  write_slice(s, fn, start, end, depth);
}

/* ---- the shadow stack ------------------------------------------------------------------- */

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
 * open (check_gen of functions_stack.h: the check inline in every hook, the change here). */
NOINSTR void fxt_fn_new_gen(struct fn_thread *th, uint32_t gen)
{
  th->gen = gen;
  atomic_signal_fence(memory_order_seq_cst); /* a handler from here on sees the new gen */
  cut_old(th);
  if (!th->keyed) {
    th->keyed = 1;
    pthread_setspecific(fn_key, th);
  }
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

/* The hooks' general paths, below their fast paths. */
NOINSTR __attribute__((noinline)) static void entry_any(uintptr_t fn, uintptr_t site,
                                                        uintptr_t cfa, uint32_t mode);
NOINSTR __attribute__((noinline)) static void exit_any(uintptr_t fn, uintptr_t site,
                                                       uintptr_t cfa, uint32_t mode,
                                                       uint64_t end);

/* Whether the hooks' fast paths hold for a thread: function_graph alone (no profiler), no rule
 * (every call traced: fxt_fn_set.rules), the thread's frames of the current generation. */
NOINSTR __attribute__((always_inline)) static inline bool
graph_plain(const struct fn_thread *th, uint32_t mode)
{
  return mode == FXT_FN_GRAPH &&
         (atomic_load_explicit(&fxt_fn_set.rules, memory_order_relaxed) |
          (th->gen ^ atomic_load_explicit(&fxt_fn_set.gen, memory_order_relaxed))) == 0;
}

/* The fast paths' push: frame n (stored: n < FXT_FN_DEPTH) for a traced call of fn, cfa with
 * its bits; the index claimed before the frame is written. Returns the frame, whose start the
 * caller writes last, the time read (as entry_any). */
NOINSTR __attribute__((always_inline)) static inline struct fn_frame *
push_traced(struct fn_thread *th, uint32_t n, uintptr_t fn, uintptr_t site, uintptr_t cfa)
{
  th->n = n + 1;
  atomic_signal_fence(memory_order_seq_cst);
  struct fxt_fn_table *tab = fxt_fn_table_current();
  struct fn_frame *f = &th->f[n];
  f->fn = fn;
  f->site = site;
  f->cfa = cfa;
  f->sym = tab ? fxt_fn_sym_entry(tab, fn) : NULL;
  f->sub = FXT_FN_PROF_NONE;
  th->traced++;
  return f;
}

/* The fast paths' pop of the top frame n (stored, traced, fn's; a redirected one's count
 * already taken), as pop() does; its slice written unless shorter than tracing_thresh. */
NOINSTR __attribute__((always_inline)) static inline void
pop_traced(struct fn_thread *th, uint32_t n, uintptr_t fn, uint64_t end)
{
  uint64_t start = th->f[n].start;
  struct fxt_fn_sym *s = th->f[n].sym;
  uint32_t depth = --th->traced;
  atomic_signal_fence(memory_order_seq_cst); /* frame read before the index is given back */
  th->n = n;
  uint64_t thresh = atomic_load_explicit(&fxt_fn_set.thresh_ticks, memory_order_relaxed);
  if (thresh && end - start < thresh)
    return;
  write_slice(s, fn, start, end, depth);
}

/* An entry. The fast path, every call traced, with room on the shadow stack and no
 * set_graph_notrace frame open (there may be one from before the rule was removed): what
 * entry_any does in that case, in the same order (the index claimed before the frame is
 * written, the time last). */
NOINSTR void fxt_fn_entry(uintptr_t fn, uintptr_t site, uintptr_t cfa, uint32_t mode)
{
  struct fn_thread *th = &fxt_fn_tls;
  uint32_t n = th->n;
  if (FXT_UNLIKELY(!graph_plain(th, mode) || n >= FXT_FN_DEPTH || th->nograph != 0)) {
    entry_any(fn, site, cfa, mode);
    return;
  }
  struct fn_frame *f = push_traced(th, n, fn, site, cfa | FRAME_TRACED);
  f->start = fxt_ticks();
}

NOINSTR static void entry_any(uintptr_t fn, uintptr_t site, uintptr_t cfa, uint32_t mode)
{
  uint32_t prof = mode & FXT_FN_PROF; /* the profiler (functions_prof.c), whatever the tracer */
  mode &= FXT_FN_TRACER;
  struct fn_thread *th = &fxt_fn_tls;
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

/* An exit. The fast path: graph_plain, and the frame on top (stored) is this call's, traced
 * (not redirected, no set_graph_notrace): popped as pop() does, its slice written. */
NOINSTR void fxt_fn_exit(uintptr_t fn, uintptr_t site, uintptr_t cfa, uint32_t mode)
{
  uint64_t end = mode & (FXT_FN_GRAPH | FXT_FN_PROF) ? fxt_ticks() : 0; /* first: the exit's
                                                             own work is not in the slice */
  struct fn_thread *th = &fxt_fn_tls;
  uint32_t n = th->n - 1; /* the top frame's index */
  if (FXT_UNLIKELY(!graph_plain(th, mode) || n >= FXT_FN_DEPTH || th->f[n].fn != fn ||
                   th->f[n].site != site || (th->f[n].cfa & FRAME_BITS) != FRAME_TRACED)) {
    exit_any(fn, site, cfa, mode, end);
    return;
  }
  pop_traced(th, n, fn, end);
}

NOINSTR static void exit_any(uintptr_t fn, uintptr_t site, uintptr_t cfa, uint32_t mode,
                             uint64_t end)
{
  uint32_t prof = mode & FXT_FN_PROF;
  mode &= FXT_FN_TRACER;
  struct fn_thread *th = &fxt_fn_tls;
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
  write_slice_any(f.sym, fn, f.start, end, th->traced);
}

/* ---- the patchable-entry engine's C (functions_tramp.c calls these) -------------------- */

/* function: the instant, its parent the function that holds the return address (as the
 * kernel's parent_ip). function_graph: when the call is traced (or starts a
 * set_graph_notrace subtree), a frame is pushed and the return redirected; the slot is the
 * frame's cfa, so the return finds it by the stack pointer. Full shadow stack: not redirected,
 * counted as overflow. Order, for a handler that interrupts (runs the same code above):
 * index claimed, frame written, then (returned 1) the slot redirected by the trampoline's
 * call of the body - a return through the trampoline always finds its frame complete.
 *
 * The fast path: graph_plain, room on the shadow stack, no set_graph_notrace frame open - the
 * call is traced: fxt_fn_pe_enter_any's steps for that case, in its order. With
 * FXT_FN_PE_LEAN it calls nothing (no register but the general ones is touched: the
 * trampoline saved no xmm register), so the clock must be the TSC (fxt_ticks_slow is a
 * call), and the general path is the trampoline's second call (2). */
NOINSTR int fxt_fn_pe_enter(uintptr_t fn, uintptr_t *slot)
{
  uint32_t mode = atomic_load_explicit(&fxt_fn_set.mode, memory_order_relaxed);
  struct fn_thread *th = &fxt_fn_tls;
  uint32_t n = th->n;
  if (FXT_UNLIKELY(!graph_plain(th, mode) || n >= FXT_FN_DEPTH || th->nograph != 0 ||
                   (FXT_FN_PE_LEAN && !fxt_clock_is_tsc)))
    return FXT_FN_PE_LEAN ? 2 : fxt_fn_pe_enter_any(fn, slot);
  struct fn_frame *f =
      push_traced(th, n, fn, *slot, (uintptr_t)slot | FRAME_TRACED | FRAME_REDIRECT);
#if FXT_FN_PE_LEAN
  f->start = __rdtsc(); /* the TSC, checked above: fxt_ticks would test it again, a call to
                           fxt_ticks_slow behind the test */
#else
  f->start = fxt_ticks();
#endif
  th->redirected++;
  atomic_signal_fence(memory_order_seq_cst); /* the frame whole before the return goes to it */
  return 1;
}

NOINSTR int fxt_fn_pe_enter_any(uintptr_t fn, uintptr_t *slot)
{
  uint32_t mode = atomic_load_explicit(&fxt_fn_set.mode, memory_order_relaxed);
  if (mode == FXT_FN_NOP)
    return 0; /* a site still enabled while the tracer goes off */
  uint32_t prof = mode & FXT_FN_PROF;
  mode &= FXT_FN_TRACER;
  struct fn_thread *th = &fxt_fn_tls;
  check_gen(th);
  struct fxt_fn_table *tab = fxt_fn_table_current();
  struct fxt_fn_sym *s = tab ? fxt_fn_sym_entry(tab, fn) : NULL;
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
NOINSTR __attribute__((noinline)) static uintptr_t pe_exit_any(uintptr_t sp, uint64_t end);

/* The fast path: the thread's frames of the current generation, the frame on top (stored)
 * this return's, traced and not timed by the profiler: popped as pop() does, its slice
 * written. */
NOINSTR uintptr_t fxt_fn_pe_exit(uintptr_t sp)
{
  uint64_t end = fxt_ticks(); /* first: the exit's own work is not in the slice */
  struct fn_thread *th = &fxt_fn_tls;
  uint32_t n = th->n - 1; /* the top frame's index */
  uintptr_t want = (sp - sizeof(uintptr_t)) | FRAME_TRACED | FRAME_REDIRECT;
  if (FXT_UNLIKELY(th->gen != atomic_load_explicit(&fxt_fn_set.gen, memory_order_relaxed) ||
                   n >= FXT_FN_DEPTH || th->f[n].cfa != want ||
                   th->f[n].sub != FXT_FN_PROF_NONE))
    return pe_exit_any(sp, end);
  uintptr_t site = th->f[n].site;
  th->redirected--;
  pop_traced(th, n, th->f[n].fn, end);
  return site;
}

NOINSTR static uintptr_t pe_exit_any(uintptr_t sp, uint64_t end)
{
  struct fn_thread *th = &fxt_fn_tls;
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
      write_slice_any(f.sym, f.fn, f.start, end, th->traced);
  }
  return f.site;
}

FXT_API int fxt_functions_counts(struct fxt_functions_counts *c)
{
  if (!c || c->struct_size < sizeof(*c))
    return FXT_EINVAL;
  c->cut = atomic_load_explicit(&fxt_fn_counts.cut, memory_order_relaxed);
  c->overflow = atomic_load_explicit(&fxt_fn_counts.overflow, memory_order_relaxed);
  return 0;
}
