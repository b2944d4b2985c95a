/* functions_tramp_a64.c - the patchable-entry engine's trampolines on aarch64 (AAPCS64), in
 * assembly: what an enabled site calls (functions_pe_a64.h: `mov x9, x30; bl stub`, the stub
 * `br x16` here with x17 the distance back to fn), and where function_graph makes a traced
 * function return. The C they call is functions.c's fxt_fn_pe_enter and fxt_fn_pe_exit, with
 * the x86-64 engine's conventions (functions_tramp.c): a frame is known by its "slot", the
 * address just below the caller's stack pointer at the call, and fxt_fn_pe_exit gets the
 * stack pointer after the function's return, slot + 8.
 *
 * The entry. At its first instruction x30 is fn's body (the return address of the site's bl,
 * past its two instructions), x9 the function's own return address, sp the caller's, as at
 * fn: the function has run nothing yet. The trampoline stores x29 and x9 below sp (a frame
 * record whose return address, x9, is at slot = sp - 8, as x86-64's return address slot),
 * saves every register an argument or a result address may be in (x0-x8, q0-q7; x16, x17 and
 * x9 are scratch at a call), calls fxt_fn_pe_enter(fn = x30 - x17, slot), restores them,
 * puts x9's address back in x30 and goes on to the body with `ret x16` (a RET is no BTI
 * branch: the body, which has no landing pad, may be in a guarded page); when fxt_fn_pe_enter
 * redirected the return (function_graph), x30 is fxt_fn_pe_return_tramp instead: the function
 * returns there (a pac-ret function signs and checks that address as it would the caller's).
 * The `bti c` first is the landing pad of the stub's `br x16`.
 *
 * The return. sp is the caller's again (slot + 8); the results may be in x0-x7, x8's
 * memory and q0-q7: saved, fxt_fn_pe_exit(sp) pops the frame and returns the original return
 * address, which the trampoline returns to. The instruction before it is covered by an FDE
 * whose return address is undefined: an unwinder that meets a redirected return address
 * stops there, unless its personality, fxt_fn_pe_personality (functions_unwind_a64.c), has it
 * go on from the real caller; the shim's entry points (src/fnshim/unwind.c) put the real
 * addresses back before a walk starts (functions_unwind_a64.c: where the function saved x30).
 */
#include "functions_int.h"

#if FXT_FN_PE_A64

/* The argument and result registers (x0-x7, q0-q7) saved at sp (a 208-byte area: x8 and
 * one more at 64, q0-q7 at 80) and restored: both trampolines' frames. */
__asm__(".macro fxt_a64_save\n"
        "  stp x0, x1, [sp, #0]\n"
        "  stp x2, x3, [sp, #16]\n"
        "  stp x4, x5, [sp, #32]\n"
        "  stp x6, x7, [sp, #48]\n"
        "  stp q0, q1, [sp, #80]\n"
        "  stp q2, q3, [sp, #112]\n"
        "  stp q4, q5, [sp, #144]\n"
        "  stp q6, q7, [sp, #176]\n"
        ".endm\n"
        ".macro fxt_a64_restore\n"
        "  ldp q0, q1, [sp, #80]\n"
        "  ldp q2, q3, [sp, #112]\n"
        "  ldp q4, q5, [sp, #144]\n"
        "  ldp q6, q7, [sp, #176]\n"
        "  ldp x0, x1, [sp, #0]\n"
        "  ldp x2, x3, [sp, #16]\n"
        "  ldp x4, x5, [sp, #32]\n"
        "  ldp x6, x7, [sp, #48]\n"
        ".endm\n");

__asm__(".text\n"
        ".p2align 4\n"
        ".globl fxt_fn_pe_entry_tramp\n"
        ".hidden fxt_fn_pe_entry_tramp\n"
        ".type fxt_fn_pe_entry_tramp, %function\n"
        "fxt_fn_pe_entry_tramp:\n"
        ".cfi_startproc\n"
        ".cfi_undefined x30\n"
        "  hint #34\n" /* bti c */
        "  stp x29, x9, [sp, #-16]!\n"
        "  mov x29, sp\n"
        "  sub sp, sp, #208\n"
        "  fxt_a64_save\n"
        "  stp x8, x30, [sp, #64]\n"
        "  sub x0, x30, x17\n" /* fn */
        "  add x1, x29, #8\n"  /* the slot: x9's copy, just below the caller's sp */
        "  bl fxt_fn_pe_enter\n"
        "  mov w17, w0\n"
        "  fxt_a64_restore\n"
        "  ldp x8, x16, [sp, #64]\n" /* x16: the body */
        "  mov sp, x29\n"
        "  ldp x29, x30, [sp], #16\n" /* x30: the function's return address again */
        "  cbz w17, 1f\n"
        "  adrp x30, fxt_fn_pe_return_tramp\n" /* redirected */
        "  add x30, x30, :lo12:fxt_fn_pe_return_tramp\n"
        "1:\n"
        "  ret x16\n"
        ".cfi_endproc\n"
        ".size fxt_fn_pe_entry_tramp, .-fxt_fn_pe_entry_tramp\n");

__asm__(".text\n"
        ".p2align 4\n"
        ".cfi_startproc\n"
        ".cfi_personality 0x1b, fxt_fn_pe_personality\n" /* functions_unwind_a64.c */
        ".cfi_undefined x30\n"
        "  nop\n" /* never run: what an unwinder looks up for the return address below */
        ".globl fxt_fn_pe_return_tramp\n"
        ".hidden fxt_fn_pe_return_tramp\n"
        ".type fxt_fn_pe_return_tramp, %function\n"
        "fxt_fn_pe_return_tramp:\n"
        "  mov x16, sp\n" /* the stack pointer after the function's return: slot + 8 */
        "  sub sp, sp, #208\n"
        "  fxt_a64_save\n"
        "  str x8, [sp, #64]\n"
        "  mov x0, x16\n"
        "  bl fxt_fn_pe_exit\n"
        "  mov x30, x0\n" /* the original return address */
        "  fxt_a64_restore\n"
        "  ldr x8, [sp, #64]\n"
        "  add sp, sp, #208\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size fxt_fn_pe_return_tramp, .-fxt_fn_pe_return_tramp\n");

#else
typedef int fxt_fn_tramp_a64_none; /* a translation unit may not be empty */
#endif
