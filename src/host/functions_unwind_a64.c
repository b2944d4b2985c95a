/* functions_unwind_a64.c - unwinding through functions whose returns the aarch64
 * patchable-entry engine redirected (function_graph, the profiler): where each one saved its
 * return address, and the landing pad of the return trampoline's personality (functions_pe.c;
 * src/fnshim/unwind.c and functions_pe_unwind.c's fxt_fn_pe_unwinding/fxt_fn_pe_caught have
 * the rest, shared with x86-64).
 *
 * On x86-64 the return address is in a known slot, the frame's. Here the entry trampoline
 * hands the body x30 = fxt_fn_pe_return_tramp (functions_tramp_a64.c) and the function saves
 * it wherever its prologue puts x30 - in its frame record with frame pointers, GCC's and
 * Clang's default, signed by `paciasp` (or `pacibsp`) with pac-ret, its stack pointer at the
 * entry (its CFA) the modifier. The unwinder finds that place from the function's CFI and
 * reads the trampoline there; whose FDE says the return address is undefined: the walk ends.
 *
 * So the place is found by walking: _Unwind_Backtrace from here up to the first frame whose
 * return address is the trampoline (its IP; the unwinder has authenticated it). The frame
 * before, F, saved it: its frame record at F's x29 when that lies in F's frame (between F's
 * stack pointer and its CFA) and its second word holds the trampoline, else
 * the lowest word of F's frame that does. "Holds" is exact: the trampoline's address itself,
 * or it signed with key A or B and F's CFA, as F's pac-ret prologue signed it (a stale copy of
 * another frame's signature does not match; without pointer authentication the hint
 * instructions are NOPs and only the plain address matches). fxt_fn_pe_unwinding writes the
 * real return address there, signed the same way, and walks again for the next one.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <unwind.h>

#include "functions_int.h"

#if defined(__aarch64__)
/* v signed with key A (kind 1) or B (kind 2) and modifier mod (PACIA1716, PACIB1716: hint
 * space, NOPs without pointer authentication); kind 0: v. Also without the engine: the
 * shim's dlopen interposer signs its continuation with it (fxt_fn_shim_a64_sign). */
uintptr_t fxt_fn_pe_a64_sign(uintptr_t v, uintptr_t mod, int kind)
{
  register uintptr_t x17 __asm__("x17") = v;
  register uintptr_t x16 __asm__("x16") = mod;
  if (kind == 1)
    __asm__("hint #8" : "+r"(x17) : "r"(x16)); /* pacia1716 */
  else if (kind == 2)
    __asm__("hint #10" : "+r"(x17) : "r"(x16)); /* pacib1716 */
  return x17;
}
#endif

#if FXT_FN_PE_A64

/* How w holds the trampoline for a function whose CFA is cfa: 0 plain, 1 key A, 2 key B, or
 * -1 it does not. */
static int holds_tramp(uintptr_t w, uintptr_t cfa)
{
  uintptr_t t = (uintptr_t)fxt_fn_pe_return_tramp;
  for (int kind = 0; kind < 3; kind++)
    if (w == fxt_fn_pe_a64_sign(t, cfa, kind))
      return kind;
  return -1;
}

/* kind as holds_tramp found it for function fn whose CFA is cfa, made sure: a plain match is
 * also a signed one when the signature of the trampoline's address with that modifier is 0
 * (with top-byte-ignore the PAC field is 7 bits: 1 in 128), so then the function's code
 * decides: a `paciasp` (key A) or `pacibsp` (key B) among its first instructions, before any
 * RET, means it signed. Without pointer authentication the hints are NOPs: either way the same
 * value is written. */
int fxt_fn_pe_a64_kind(int kind, uintptr_t cfa, uintptr_t fn)
{
  uintptr_t t = (uintptr_t)fxt_fn_pe_return_tramp;
  if (kind != 0 || (fxt_fn_pe_a64_sign(t, cfa, 1) != t && fxt_fn_pe_a64_sign(t, cfa, 2) != t))
    return kind;
  const volatile uint32_t *p = (const uint32_t *)fn;
  for (int i = 0; i < 16 && p[i] != 0xd65f03c0u; i++) { /* ret */
    if (p[i] == 0xd503233fu) /* paciasp */
      return fxt_fn_pe_a64_sign(t, cfa, 1) == t ? 1 : 0;
    if (p[i] == 0xd503237fu) /* pacibsp */
      return fxt_fn_pe_a64_sign(t, cfa, 2) == t ? 2 : 0;
  }
  return 0;
}

struct walk {
  uintptr_t sp, fp; /* the frame before: its stack pointer and x29 */
  struct fxt_fn_a64_ra *ra;
  bool found;
};

/* One frame of the walk. _Unwind_GetCFA of a frame's context is its stack pointer (the CFA
 * its callee computed): for the trampoline's "frame", the CFA of the function F that returns
 * to it. */
static _Unwind_Reason_Code step(struct _Unwind_Context *ctx, void *arg)
{
  struct walk *w = arg;
  uintptr_t sp = _Unwind_GetCFA(ctx);
  if (_Unwind_GetIP(ctx) == (uintptr_t)fxt_fn_pe_return_tramp && w->sp != 0) {
    uintptr_t lo = w->sp, hi = sp, fp = w->fp; /* F's frame, its CFA hi */
    int kind;
    if (fp >= lo && fp % 8 == 0 && fp + 16 <= hi &&
        (kind = holds_tramp(((const uintptr_t *)fp)[1], hi)) >= 0) {
      w->ra->loc = (uintptr_t *)fp + 1;
    } else {
      for (fp = (lo + 7) & ~(uintptr_t)7; fp + 8 <= hi; fp += 8)
        if ((kind = holds_tramp(*(const uintptr_t *)fp, hi)) >= 0)
          break;
      if (fp + 8 > hi)
        return _URC_END_OF_STACK; /* not found: the walk ends as the unwinder's would */
      w->ra->loc = (uintptr_t *)fp;
    }
    w->ra->cfa = hi;
    w->ra->kind = kind;
    w->found = true;
    return _URC_END_OF_STACK;
  }
  w->sp = sp;
  w->fp = _Unwind_GetGR(ctx, 29);
  return _URC_NO_REASON;
}

bool fxt_fn_pe_a64_next(struct fxt_fn_a64_ra *ra)
{
  struct walk w = {.ra = ra};
  _Unwind_Backtrace(step, &w);
  return w.found;
}

/* The pad of the return trampoline's personality (functions_pe.c, fxt_fn_pe_personality).
 * Entered with sp the function's CFA (its caller's stack pointer), x0 the exception, x1 the
 * real return address: a frame record (x29, x1) below it, whose CFI gives x1 as the return
 * address, and _Unwind_Resume called from it. The NOP before is never run. */
__asm__(".text\n"
        ".p2align 4\n"
        ".cfi_startproc\n"
        "  nop\n"
        ".globl fxt_fn_pe_unwind_pad\n"
        ".hidden fxt_fn_pe_unwind_pad\n"
        ".type fxt_fn_pe_unwind_pad, %function\n"
        "fxt_fn_pe_unwind_pad:\n"
        "  stp x29, x1, [sp, #-16]!\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset x29, -16\n"
        ".cfi_offset x30, -8\n"
        "  mov x29, sp\n"
        "  bl _Unwind_Resume\n"
        "  brk #1000\n"
        ".cfi_endproc\n"
        ".size fxt_fn_pe_unwind_pad, .-fxt_fn_pe_unwind_pad\n");

#else
typedef int fxt_fn_unwind_a64_none; /* a translation unit may not be empty */
#endif
