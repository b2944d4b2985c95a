/* dl.c (libfxtrace-functions, the function tracer's shim) - a library loaded with dlopen
 * while the function tracer (or the profiler) is on is traced from its load: its symbols read
 * into the table, its patchable entries patched as the filters want, before dlopen returns to
 * its caller (docs/functions.md).
 *
 * How. The shim interposes dlopen (as uftrace's libmcount does, libmcount/wrap.c) and, after
 * the real one (RTLD_NEXT from the shim: libc's) returned a handle, calls libfxtrace's
 * fxt_fn_shim_dlopened (src/host/functions_shim.c): under the tracer's lock, the table rebuilt
 * when objects were added and the sites synced. The kernel does the same for a module between
 * its load and its init (ftrace_module_init, ftrace_module_enable). The alternatives do not see
 * a library before its code runs: a check of dl_iterate_phdr's dlpi_adds where the tracer runs
 * (the hooks; the new library's code calls none), the r_debug rendezvous (_dl_debug_state: a
 * breakpoint in ld.so, called before the new objects are relocated, with the loader's lock
 * held), LD_AUDIT's la_objopen (set in the environment before the process starts). The
 * library's constructors run inside the real dlopen, before the patching: not traced (as with
 * uftrace).
 *
 * The caller. glibc's dlopen takes its caller's object from its return address: the search
 * path of a name without '/' (the caller's RPATH and RUNPATH), $ORIGIN, the namespace. A
 * wrapper that called the real dlopen would make the shim the caller. So the wrapper
 * (assembly, below) enters the real dlopen by a jump with a return address inside the
 * caller's own code: a byte C3 (`ret`) found on the page of the caller's return address
 * (fxt_fn_dl_gadget), under which it leaves its own continuation. The real dlopen returns
 * to that byte, which returns to the continuation: glibc sees the caller's object. Where no
 * such byte is found, or the thread runs with a CET shadow stack (whose returns must match
 * its calls), the wrapper calls the real dlopen itself (the shim then the caller).
 *
 * aarch64: the return address is x30, not a stack slot, and a RET returns to x30: a lone RET
 * there would return to itself. So the gadget is an epilogue on that page, `ldp x29, x30,
 * [sp], #N; ret` (N a multiple of 16), under which the wrapper leaves a frame of N bytes
 * holding its own x29 and continuation: the real dlopen, entered by a BR with x30 = the
 * gadget, returns there; the gadget loads the continuation into x30, pops the N bytes and
 * returns to it. An epilogue that authenticates (pac-ret: `autiasp; ret`, `retaa`, key B's)
 * gets the continuation signed as that function's prologue would have signed its return
 * address (the modifier: the stack pointer after the pop, the wrapper's). A page with none of
 * these, the fallback above.
 *
 * dlclose needs nothing: a table or a site array of objects since unloaded is never freed
 * (a hook or the SIGTRAP handler may hold it), a frame of an unloaded function on a shadow
 * stack (left by a longjmp) is popped as cut as any, and the patching holds dl_iterate_phdr's
 * lock, which dlclose takes to unmap an object (functions_pe.c).
 *
 * In libfxtrace.a too: a program linked with it whose objects call dlopen (module.c does)
 * takes this dlopen from the archive, and its own calls of dlopen go through it; a library's
 * calls go to libc's (the executable does not export it).
 *
 * x86-64 and aarch64 Linux (the patchable-entry engine's: elsewhere no site is patched, and a
 * new library's names are read at the next write of a filter file or switch of the tracer).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>

#include "fnshim.h"

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))

#define PAGE 4096u /* the page of a return address (a larger page holds it whole) */

/* glibc's dlopen, looked up once (two threads may both: the same value); read by the
 * wrapper's jump. Hidden (-fvisibility=hidden): the wrapper reaches it PC-relative. */
void *(*fxt_fn_dl_real)(const char *, int);

/* The address of a byte C3 on the page of the caller's return address caller (its code: that
 * page is mapped executable while the caller runs), or 0; fxt_fn_dl_real set. aarch64: of an
 * epilogue (above), frame the wrapper's stack pointer, whose word 4 gets the continuation cont
 * as the epilogue will read it (signed with frame, its stack pointer then, when it
 * authenticates). */
#if defined(__x86_64__)
uintptr_t fxt_fn_dl_gadget(uintptr_t caller);
uintptr_t fxt_fn_dl_gadget(uintptr_t caller)
#else
uintptr_t fxt_fn_dl_gadget(uintptr_t caller, uintptr_t *frame, uintptr_t cont);
uintptr_t fxt_fn_dl_gadget(uintptr_t caller, uintptr_t *frame, uintptr_t cont)
#endif
{
  void *(*r)(const char *, int) = __atomic_load_n(&fxt_fn_dl_real, __ATOMIC_RELAXED);
  if (!r) {
    *(void **)&r = dlsym(RTLD_NEXT, "dlopen");
    __atomic_store_n(&fxt_fn_dl_real, r, __ATOMIC_RELAXED);
  }
#if defined(__x86_64__)
  uint64_t ssp = 0;
  __asm__ volatile("rdsspq %0" : "+r"(ssp)); /* a NOP without a shadow stack: stays 0 */
  if (ssp != 0)
    return 0;
  const volatile uint8_t *page = (const uint8_t *)(caller & ~(uintptr_t)(PAGE - 1));
  for (uintptr_t i = caller - (uintptr_t)page; i < PAGE; i++)
    if (page[i] == 0xC3)
      return (uintptr_t)&page[i];
  for (uintptr_t i = caller - (uintptr_t)page; i > 0; i--)
    if (page[i - 1] == 0xC3)
      return (uintptr_t)&page[i - 1];
#else
  /* `ldp x29, x30, [sp], #N` (post-index, imm7 = N / 8 in bits 15-21), N a positive
   * multiple of 16 (the stack stays aligned), then `ret`, `autiasp; ret` or `retaa` (key A),
   * `autibsp; ret` or `retab` (key B). Instructions are 4-byte aligned. */
  const volatile uint32_t *page = (const uint32_t *)(caller & ~(uintptr_t)(PAGE - 1));
  for (size_t i = 0; i + 2 < PAGE / 4; i++) {
    uint32_t w = page[i], imm7 = w >> 15 & 0x7f, n = page[i + 1];
    if ((w & 0xffc07fffu) != 0xa8c07bfdu || imm7 == 0 || imm7 >= 0x40 || imm7 % 2 != 0)
      continue;
    bool ret = page[i + 2] == 0xd65f03c0u;
    int kind = n == 0xd65f03c0u                        ? 0
               : n == 0xd65f0bffu || (n == 0xd50323bfu && ret) ? 1
               : n == 0xd65f0fffu || (n == 0xd50323ffu && ret) ? 2
                                                               : -1;
    if (kind >= 0) {
      frame[4] = fxt_fn_shim_a64_sign(cont, (uintptr_t)frame, kind);
      return (uintptr_t)&page[i];
    }
  }
#endif
  return 0;
}

/* dlopen(file, mode). Stack at entry: S (= rsp) holds the caller's return address, S = 8 mod
 * 16. Gadget path: [S-24] = the continuation, [S-32] = the gadget, rsp = S - 32 at the jump
 * (8 mod 16, as after a call); the real dlopen returns to the gadget, the gadget to 2:, with
 * rsp = S - 16. Fallback: a call from rsp = S - 24. Either way fxt_fn_shim_dlopened(handle) from
 * rsp = S - 24 (0 mod 16 at the call), then back to the caller. */
#if defined(__x86_64__)
__asm__(".text\n"
        ".p2align 4\n"
        ".globl dlopen\n"
        ".type dlopen, @function\n"
        "dlopen:\n"
        ".cfi_startproc\n"
        "  subq $24, %rsp\n"
        ".cfi_def_cfa_offset 32\n"
        "  movq %rdi, 0(%rsp)\n"
        "  movq %rsi, 8(%rsp)\n"
        "  movq 24(%rsp), %rdi\n"
        "  call fxt_fn_dl_gadget\n"
        "  movq 0(%rsp), %rdi\n"
        "  movq 8(%rsp), %rsi\n"
        "  testq %rax, %rax\n"
        "  jz 1f\n"
        "  leaq 2f(%rip), %rcx\n"
        "  movq %rcx, 0(%rsp)\n"
        "  pushq %rax\n"
        ".cfi_adjust_cfa_offset 8\n"
        "  jmp *fxt_fn_dl_real(%rip)\n"
        ".cfi_adjust_cfa_offset -8\n"
        "1:\n"
        "  call *fxt_fn_dl_real(%rip)\n"
        "  addq $8, %rsp\n"
        ".cfi_adjust_cfa_offset -8\n"
        "2:\n"
        "  pushq %rax\n"
        ".cfi_adjust_cfa_offset 8\n"
        "  movq %rax, %rdi\n"
        "  call fxt_fn_shim_dlopened@PLT\n"
        "  addq $24, %rsp\n"
        ".cfi_def_cfa_offset 8\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size dlopen, .-dlopen\n");
#else
/* dlopen(file, mode), aarch64. A frame of 48 bytes (x29, x30, file, mode, the continuation
 * as the gadget reads it). Gadget path (x0 the gadget, its N in bits 15-21 times 8): N bytes
 * below the frame hold x29 and the continuation 2:, sp at their base, x30 the gadget, a BR to
 * the real dlopen; its RET goes to the gadget, which loads them and pops the N bytes: at 2:
 * sp is the frame again. Fallback: a BLR. Either way fxt_fn_shim_dlopened(handle), then back
 * to the caller. The `bti c`: the PLT reaches it by a BR. */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl dlopen\n"
        ".type dlopen, %function\n"
        "dlopen:\n"
        ".cfi_startproc\n"
        "  hint #34\n" /* bti c */
        "  stp x29, x30, [sp, #-48]!\n"
        ".cfi_def_cfa_offset 48\n"
        ".cfi_offset x29, -48\n"
        ".cfi_offset x30, -40\n"
        "  mov x29, sp\n"
        ".cfi_def_cfa x29, 48\n"
        "  stp x0, x1, [sp, #16]\n"
        "  mov x0, x30\n"
        "  mov x1, sp\n"
        "  adr x2, 2f\n"
        "  bl fxt_fn_dl_gadget\n"
        "  adrp x17, fxt_fn_dl_real\n"
        "  ldr x17, [x17, :lo12:fxt_fn_dl_real]\n"
        "  cbz x0, 1f\n"
        "  ldr w9, [x0]\n"
        "  ubfx x9, x9, #15, #7\n"
        "  sub sp, sp, x9, lsl #3\n"
        "  ldr x10, [x29, #32]\n"
        "  stp x29, x10, [sp]\n"
        "  mov x30, x0\n"
        "  ldp x0, x1, [x29, #16]\n"
        "  br x17\n"
        "1:\n"
        "  ldp x0, x1, [sp, #16]\n"
        "  blr x17\n"
        "2:\n"
        "  bl fxt_fn_shim_dlopened\n"
        "  ldp x29, x30, [sp], #48\n"
        ".cfi_def_cfa sp, 0\n"
        ".cfi_restore x29\n"
        ".cfi_restore x30\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size dlopen, .-dlopen\n");
#endif

#endif
