/* functions_stack.h - the function tracer's per-thread shadow stack, shared by functions.c
 * (the hooks, the records: its design is at the top of that file) and functions_pe_unwind.c
 * (the patchable-entry engine's redirected returns around an unwinder's walk). Not API.
 */
#ifndef FXTRACE_HOST_FUNCTIONS_STACK_H
#define FXTRACE_HOST_FUNCTIONS_STACK_H

#include <stdatomic.h>
#include <stdint.h>

#include <fxtrace/common.h>

#include "functions_int.h"

#define NOINSTR __attribute__((no_instrument_function))

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

/* The calling thread's shadow stack (functions.c): no allocation, no lock. */
extern _Thread_local struct fn_thread fxt_fn_tls __attribute__((tls_model("initial-exec")));

/* A thread that sees a new generation of the tracer (fxt_fn_set.gen) drops the frames of the
 * older one, but those whose returns are redirected (functions.c). */
NOINSTR __attribute__((cold)) void fxt_fn_new_gen(struct fn_thread *th, uint32_t gen);

/* Inline in every hook; the change out of line. */
NOINSTR static inline void check_gen(struct fn_thread *th)
{
  uint32_t gen = atomic_load_explicit(&fxt_fn_set.gen, memory_order_relaxed);
  if (FXT_UNLIKELY(th->gen != gen))
    fxt_fn_new_gen(th, gen);
}

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

#endif
