/* functions_tramp.c - the patchable-entry engine's trampolines (x86-64, System V ABI),
 * in assembly: what a patched function entry calls, and where function_graph makes a traced
 * function return (functions_pe.c patches the entries; functions.c's fxt_fn_pe_enter and
 * fxt_fn_pe_exit are the C they call).
 *
 * The entry. A site enabled by functions_pe.c runs, at the function's entry fn, `jmp fn-9`,
 * where the 9 bytes before the function (its pre-entry NOPs) hold `call stub; jmp *%r11`: the
 * stub (a page near the object) jumps to fxt_fn_pe_entry_tramp. So at the trampoline's first
 * instruction [rsp] is fn - 4 (the return address of that call) and [rsp + 8] is the
 * function's own return address slot, as the function's caller left it: the function has
 * run nothing yet. The trampoline saves every register an argument may be in (rdi rsi rdx rcx
 * r8 r9, rax: the vector count of a variadic call, r10: the static chain, xmm0-7; with
 * FXT_FN_PE_LEAN the xmm registers only before the general path, fxt_fn_pe_enter_any, which
 * fxt_fn_pe_enter's 2 asks for: its fast path touches none), aligns the
 * stack to 16, calls fxt_fn_pe_enter(fn, slot) and restores them, then returns to fn - 4,
 * whose `jmp *%r11` goes on: to the function's body fn + 2, or when fxt_fn_pe_enter redirected
 * the return to fxt_fn_pe_call_body with the body in the slot (r11: a scratch register no
 * argument uses; the flags are dead at a function's entry). Nothing else is touched: the upper
 * halves of ymm/zmm registers are not saved (libfxtrace is built without AVX, so its C code
 * leaves them alone), and the x87 stack is empty at a call by the ABI. A function that starts
 * with endbr64 (-fcf-protection: the endbr layout, functions_int.h) has the same pre-entry
 * bytes, and its jump at fn + 4 comes to the same fn - 9, but its body is fn + 6: its stub
 * goes to fxt_fn_pe_entry_tramp_endbr, the same code with that body (two copies, so neither
 * layout's entry pays a test of which it is).
 *
 * The return (function_graph). fxt_fn_pe_enter keeps the slot's return address in the thread's
 * shadow frame; fxt_fn_pe_call_body pops the body from the slot and calls it, so the slot
 * holds fxt_fn_pe_return_tramp, the function runs with the stack its caller left (rsp = slot,
 * its arguments above), and every call and ret stays paired for the CPU's return stack buffer:
 * the function's ret goes where the RSB says (fxt_fn_pe_return_tramp, pushed by that call),
 * and so does the return trampoline's, to the caller (the entry's `call stub` was paired with
 * the entry trampoline's ret). A return address overwritten in its slot, as the kernel's and
 * uftrace's return hooks do, makes the ret a mispredicted one and the jump back an indirect
 * branch of many targets (docs/functions.md, Cost: what this saved). The return lands with rsp = slot + 8 and the function's return value in rax:rdx
 * and xmm0:xmm1; the trampoline saves those, calls fxt_fn_pe_exit(slot + 8), which pops the
 * frame and returns the original return address, restores them, pushes the address back into
 * the slot and returns there. It stays valid for the life of the process: a return address
 * redirected before the tracer was switched off still comes here.
 *
 * Unwinding. An unwinder (a C++ exception, pthread_exit's forced unwind, backtrace()) that
 * meets a frame whose return address is fxt_fn_pe_return_tramp looks up the FDE of the byte
 * before it: that byte, the last of fxt_fn_pe_call_body's call, is covered by an FDE whose
 * return address is undefined, which DWARF unwinders take as the outermost frame (_URC_END_OF_STACK), as they do
 * for _start: the walk ends cleanly there instead of reading a made-up caller. Consequences
 * (docs/functions.md): pthread_exit's unwind stops there and glibc jumps to the thread's start
 * (C cleanup handlers still run; C++ destructors of the frames beyond are skipped), and a C++
 * exception thrown under a redirected frame finds no handler beyond it: std::terminate.
 */
#include "functions_int.h"

#if FXT_FN_PE_X86_64

/* The entry: see above. 8 general registers (64 bytes) and, around the general path only
 * (FXT_FN_PE_LEAN: fxt_fn_pe_enter's fast path touches no other register), 8 xmm registers
 * (128 bytes); without it, around every call and fxt_fn_pe_enter never returns 2. One text
 * for both layouts (the call at fn - 9 returns to fn - 4 in both, fn is the symbol's address):
 * body is the body's distance from fn - 4, 6 (fn + 2) or, after endbr64, 10 (fn + 6). */
#define XMM_SAVE                                                                               \
  "  movaps %xmm0, 0(%rsp)\n"                                                                  \
  "  movaps %xmm1, 16(%rsp)\n"                                                                 \
  "  movaps %xmm2, 32(%rsp)\n"                                                                 \
  "  movaps %xmm3, 48(%rsp)\n"                                                                 \
  "  movaps %xmm4, 64(%rsp)\n"                                                                 \
  "  movaps %xmm5, 80(%rsp)\n"                                                                 \
  "  movaps %xmm6, 96(%rsp)\n"                                                                 \
  "  movaps %xmm7, 112(%rsp)\n"
#define XMM_RESTORE                                                                            \
  "  movaps 0(%rsp), %xmm0\n"                                                                  \
  "  movaps 16(%rsp), %xmm1\n"                                                                 \
  "  movaps 32(%rsp), %xmm2\n"                                                                 \
  "  movaps 48(%rsp), %xmm3\n"                                                                 \
  "  movaps 64(%rsp), %xmm4\n"                                                                 \
  "  movaps 80(%rsp), %xmm5\n"                                                                 \
  "  movaps 96(%rsp), %xmm6\n"                                                                 \
  "  movaps 112(%rsp), %xmm7\n"
/* fxt_fn_pe_enter's arguments: fn (from fn - 4, either layout) and the slot. */
#define ENTER_ARGS                                                                             \
  "  movq 8(%rbp), %rdi\n"                                                                     \
  "  addq $4, %rdi\n"                                                                          \
  "  leaq 16(%rbp), %rsi\n"
#if FXT_FN_PE_LEAN
#define XMM_EARLY_SAVE ""
#define XMM_EARLY_RESTORE ""
#define ENTER_GENERAL                                                                          \
  "  cmpl $2, %eax\n"                                                                          \
  "  jne 2f\n"                                                                                 \
  "  subq $128, %rsp\n"                                                                        \
  XMM_SAVE ENTER_ARGS                                                                          \
  "  call fxt_fn_pe_enter_any\n"                                                               \
  XMM_RESTORE                                                                                  \
  "  addq $128, %rsp\n"                                                                        \
  "2:\n"
#else
#define XMM_EARLY_SAVE "  subq $128, %rsp\n" XMM_SAVE
#define XMM_EARLY_RESTORE XMM_RESTORE "  addq $128, %rsp\n"
#define ENTER_GENERAL ""
#endif
#define ENTRY_TRAMP(name, body) \
__asm__(".text\n"                                                                                  \
        ".p2align 4\n"                                                                             \
        ".globl " name "\n"                                                                        \
        ".hidden " name "\n"                                                                       \
        ".type " name ", @function\n"                                                              \
        name ":\n"                                                                              \
        ".cfi_startproc\n"                                                                         \
        "  pushq %rbp\n"                                                                           \
        ".cfi_def_cfa_offset 16\n"                                                                 \
        ".cfi_offset %rbp, -16\n"                                                                  \
        "  movq %rsp, %rbp\n"                                                                      \
        ".cfi_def_cfa_register %rbp\n"                                                             \
        "  subq $64, %rsp\n"                                                                       \
        "  andq $-16, %rsp\n"                                                                      \
        "  movq %rdi, 0(%rsp)\n"                                                                   \
        "  movq %rsi, 8(%rsp)\n"                                                                   \
        "  movq %rdx, 16(%rsp)\n"                                                                  \
        "  movq %rcx, 24(%rsp)\n"                                                                  \
        "  movq %r8, 32(%rsp)\n"                                                                   \
        "  movq %r9, 40(%rsp)\n"                                                                   \
        "  movq %rax, 48(%rsp)\n"                                                                  \
        "  movq %r10, 56(%rsp)\n"                                                                  \
        XMM_EARLY_SAVE ENTER_ARGS                                                                  \
        "  call fxt_fn_pe_enter\n"                                                                 \
        ENTER_GENERAL XMM_EARLY_RESTORE                                                            \
        "  testl %eax, %eax\n"   /* the flags kept to the jz: mov, pop, lea leave them */          \
        "  movq 8(%rbp), %r11\n" /* fn - 4 */                                                      \
        "  movq 0(%rsp), %rdi\n"                                                                   \
        "  movq 8(%rsp), %rsi\n"                                                                   \
        "  movq 16(%rsp), %rdx\n"                                                                  \
        "  movq 24(%rsp), %rcx\n"                                                                  \
        "  movq 32(%rsp), %r8\n"                                                                   \
        "  movq 40(%rsp), %r9\n"                                                                   \
        "  movq 48(%rsp), %rax\n"                                                                  \
        "  movq 56(%rsp), %r10\n"                                                                  \
        "  movq %rbp, %rsp\n"                                                                      \
        "  popq %rbp\n"                                                                            \
        ".cfi_def_cfa %rsp, 8\n"                                                                   \
        "  leaq " body "(%r11), %r11\n" /* fn + 2 (or 6): the body */                              \
        "  jz 1f\n"                                                                                \
        "  movq %r11, 8(%rsp)\n" /* redirected: the slot holds the body for fxt_fn_pe_call_body */ \
        "  leaq fxt_fn_pe_call_body(%rip), %r11\n"                                                 \
        "1:\n"                                                                                     \
        "  ret\n" /* to fn - 4, `jmp *%r11` */                                                     \
        ".cfi_endproc\n"                                                                           \
        ".size " name ", .-" name "\n")
ENTRY_TRAMP("fxt_fn_pe_entry_tramp", "6");
ENTRY_TRAMP("fxt_fn_pe_entry_tramp_endbr", "10");

/* The call of a redirected function's body and its return: see above. The call's last byte is
 * what an unwinder looks up for a return address equal to fxt_fn_pe_return_tramp; its FDE says
 * the return address is undefined. */
__asm__(".text\n"
        ".p2align 4\n"
        ".cfi_startproc\n"
        ".cfi_personality 0x1b, fxt_fn_pe_personality\n" /* functions_pe.c: unwinding on */
        ".cfi_undefined %rip\n"
        ".globl fxt_fn_pe_call_body\n"
        ".hidden fxt_fn_pe_call_body\n"
        ".type fxt_fn_pe_call_body, @function\n"
        "fxt_fn_pe_call_body:\n"
        "  popq %r11\n"   /* the body, from the slot: rsp is slot + 8 */
        "  call *%r11\n"  /* the slot is fxt_fn_pe_return_tramp, and so is the RSB's top */
        ".size fxt_fn_pe_call_body, .-fxt_fn_pe_call_body\n"
        ".globl fxt_fn_pe_return_tramp\n"
        ".hidden fxt_fn_pe_return_tramp\n"
        ".type fxt_fn_pe_return_tramp, @function\n"
        "fxt_fn_pe_return_tramp:\n"
        "  pushq %rbp\n"
        "  movq %rsp, %rbp\n"
        "  subq $48, %rsp\n"
        "  andq $-16, %rsp\n"
        "  movq %rax, 0(%rsp)\n"
        "  movq %rdx, 8(%rsp)\n"
        "  movaps %xmm0, 16(%rsp)\n"
        "  movaps %xmm1, 32(%rsp)\n"
        "  leaq 8(%rbp), %rdi\n" /* the stack pointer after the function's ret: slot + 8 */
        "  call fxt_fn_pe_exit\n"
        "  movq %rax, %r11\n"   /* the original return address */
        "  movq 0(%rsp), %rax\n"
        "  movq 8(%rsp), %rdx\n"
        "  movaps 16(%rsp), %xmm0\n"
        "  movaps 32(%rsp), %xmm1\n"
        "  movq %rbp, %rsp\n"
        "  popq %rbp\n"
        "  pushq %r11\n" /* into the slot again: a ret the RSB predicts */
        "  ret\n"
        ".cfi_endproc\n"
        ".size fxt_fn_pe_return_tramp, .-fxt_fn_pe_return_tramp\n");

#else
typedef int fxt_fn_tramp_none; /* a translation unit may not be empty */
#endif
