/* functions_tramp.c - the patchable-entry engine's two trampolines (x86-64, System V ABI),
 * in assembly: what a patched function entry calls, and where function_graph makes a traced
 * function return (functions_pe.c patches the entries; functions.c's fxt_fn_pe_enter and
 * fxt_fn_pe_exit are the C they call).
 *
 * The entry. A site enabled by functions_pe.c runs, at the function's entry fn, `jmp fn-9`,
 * where the 9 bytes before the function (its pre-entry NOPs) hold `call stub; jmp fn+2`: the
 * stub (a page near the object) jumps to fxt_fn_pe_entry_tramp. So at the trampoline's first
 * instruction [rsp] is fn - 4 (the return address of that call) and [rsp + 8] is the
 * function's own return address slot, as the function's caller left it: the function has
 * run nothing yet. The trampoline saves every register an argument may be in (rdi rsi rdx rcx
 * r8 r9, rax: the vector count of a variadic call, r10: the static chain, xmm0-7), aligns the
 * stack to 16, calls fxt_fn_pe_enter(fn, slot) and restores them, then returns to fn - 4,
 * whose `jmp fn+2` enters the function's body. Nothing else is touched: the upper halves of
 * ymm/zmm registers are not saved (libfxtrace is built without AVX, so its C code leaves them
 * alone), and the x87 stack is empty at a call by the ABI.
 *
 * The return. fxt_fn_pe_enter may replace the slot's return address by fxt_fn_pe_return_tramp
 * (function_graph), keeping the original in the thread's shadow frame. The function's `ret`
 * then lands here with rsp = slot + 8 and its return value in rax:rdx and xmm0:xmm1; the
 * trampoline saves those, calls fxt_fn_pe_exit(slot + 8), which pops the frame and returns
 * the original return address, restores them and jumps there (r11: a scratch register no
 * return value uses). It stays valid for the life of the process: a return address
 * redirected before the tracer was switched off still comes here.
 *
 * Unwinding. An unwinder (a C++ exception, pthread_exit's forced unwind, backtrace()) that
 * meets a frame whose return address is fxt_fn_pe_return_tramp looks up the FDE of the byte
 * before it: that byte, a NOP that never runs, is covered by an FDE whose return address is
 * undefined, which DWARF unwinders take as the outermost frame (_URC_END_OF_STACK), as they do
 * for _start: the walk ends cleanly there instead of reading a made-up caller. Consequences
 * (docs/functions.md): pthread_exit's unwind stops there and glibc jumps to the thread's start
 * (C cleanup handlers still run; C++ destructors of the frames beyond are skipped), and a C++
 * exception thrown under a redirected frame finds no handler beyond it: std::terminate.
 */
#include "functions_int.h"

#if FXT_FN_PE_SUPPORTED

/* The entry: see above. 8 general registers and 8 xmm registers: 64 + 128 bytes. */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl fxt_fn_pe_entry_tramp\n"
        ".hidden fxt_fn_pe_entry_tramp\n"
        ".type fxt_fn_pe_entry_tramp, @function\n"
        "fxt_fn_pe_entry_tramp:\n"
        ".cfi_startproc\n"
        "  pushq %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "  movq %rsp, %rbp\n"
        ".cfi_def_cfa_register %rbp\n"
        "  subq $192, %rsp\n"
        "  andq $-16, %rsp\n"
        "  movq %rdi, 0(%rsp)\n"
        "  movq %rsi, 8(%rsp)\n"
        "  movq %rdx, 16(%rsp)\n"
        "  movq %rcx, 24(%rsp)\n"
        "  movq %r8, 32(%rsp)\n"
        "  movq %r9, 40(%rsp)\n"
        "  movq %rax, 48(%rsp)\n"
        "  movq %r10, 56(%rsp)\n"
        "  movaps %xmm0, 64(%rsp)\n"
        "  movaps %xmm1, 80(%rsp)\n"
        "  movaps %xmm2, 96(%rsp)\n"
        "  movaps %xmm3, 112(%rsp)\n"
        "  movaps %xmm4, 128(%rsp)\n"
        "  movaps %xmm5, 144(%rsp)\n"
        "  movaps %xmm6, 160(%rsp)\n"
        "  movaps %xmm7, 176(%rsp)\n"
        "  movq 8(%rbp), %rdi\n" /* fn - 4 */
        "  addq $4, %rdi\n"      /* fn */
        "  leaq 16(%rbp), %rsi\n" /* the function's return address slot */
        "  call fxt_fn_pe_enter\n"
        "  movq 0(%rsp), %rdi\n"
        "  movq 8(%rsp), %rsi\n"
        "  movq 16(%rsp), %rdx\n"
        "  movq 24(%rsp), %rcx\n"
        "  movq 32(%rsp), %r8\n"
        "  movq 40(%rsp), %r9\n"
        "  movq 48(%rsp), %rax\n"
        "  movq 56(%rsp), %r10\n"
        "  movaps 64(%rsp), %xmm0\n"
        "  movaps 80(%rsp), %xmm1\n"
        "  movaps 96(%rsp), %xmm2\n"
        "  movaps 112(%rsp), %xmm3\n"
        "  movaps 128(%rsp), %xmm4\n"
        "  movaps 144(%rsp), %xmm5\n"
        "  movaps 160(%rsp), %xmm6\n"
        "  movaps 176(%rsp), %xmm7\n"
        "  movq %rbp, %rsp\n"
        "  popq %rbp\n"
        ".cfi_def_cfa %rsp, 8\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size fxt_fn_pe_entry_tramp, .-fxt_fn_pe_entry_tramp\n");

/* The return: see above. The NOP before the label is what an unwinder looks up for a return
 * address equal to the label; its FDE says the return address is undefined. */
__asm__(".text\n"
        ".p2align 4\n"
        ".cfi_startproc\n"
        ".cfi_personality 0x1b, fxt_fn_pe_personality\n" /* functions_pe.c: unwinding on */
        ".cfi_undefined %rip\n"
        "  nop\n"
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
        "  jmp *%r11\n"
        ".cfi_endproc\n"
        ".size fxt_fn_pe_return_tramp, .-fxt_fn_pe_return_tramp\n");

#else
typedef int fxt_fn_tramp_none; /* a translation unit may not be empty */
#endif
