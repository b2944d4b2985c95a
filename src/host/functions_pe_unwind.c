/* functions_pe_unwind.c - the patchable-entry engine's redirected returns around an
 * unwinder's walk (C++ exceptions, pthread_exit, cancellation): put back before the walk,
 * redirected again after the catch for the frames that outlive it. The shadow stack is
 * functions.c's (functions_stack.h); the shim's interposers call in (src/fnshim/unwind.c).
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>

#include "functions_int.h"
#include "functions_stack.h"

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
  struct fn_thread *th = &fxt_fn_tls;
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
  struct fn_thread *th = &fxt_fn_tls;
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
  struct fn_thread *th = &fxt_fn_tls;
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
  struct fn_thread *th = &fxt_fn_tls;
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

