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
 * dlclose needs nothing: a table or a site array of objects since unloaded is never freed
 * (a hook or the SIGTRAP handler may hold it), a frame of an unloaded function on a shadow
 * stack (left by a longjmp) is popped as cut as any, and the patching holds dl_iterate_phdr's
 * lock, which dlclose takes to unmap an object (functions_pe.c).
 *
 * In libfxtrace.a too: a program linked with it whose objects call dlopen (module.c does)
 * takes this dlopen from the archive, and its own calls of dlopen go through it; a library's
 * calls go to libc's (the executable does not export it).
 *
 * x86-64 Linux only (the patchable-entry engine's: elsewhere no site is patched, and a new
 * library's names are read at the next write of a filter file or switch of the tracer).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>

#include "fnshim.h"

#if defined(__x86_64__) && defined(__linux__)

#define PAGE 4096u

/* glibc's dlopen, looked up once (two threads may both: the same value); read by the
 * wrapper's jump. Hidden (-fvisibility=hidden): the wrapper reaches it PC-relative. */
void *(*fxt_fn_dl_real)(const char *, int);

/* The address of a byte C3 on the page of the caller's return address caller (its code: that
 * page is mapped executable while the caller runs), or 0; fxt_fn_dl_real set. */
uintptr_t fxt_fn_dl_gadget(uintptr_t caller);
uintptr_t fxt_fn_dl_gadget(uintptr_t caller)
{
  void *(*r)(const char *, int) = __atomic_load_n(&fxt_fn_dl_real, __ATOMIC_RELAXED);
  if (!r) {
    *(void **)&r = dlsym(RTLD_NEXT, "dlopen");
    __atomic_store_n(&fxt_fn_dl_real, r, __ATOMIC_RELAXED);
  }
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
  return 0;
}

/* dlopen(file, mode). Stack at entry: S (= rsp) holds the caller's return address, S = 8 mod
 * 16. Gadget path: [S-24] = the continuation, [S-32] = the gadget, rsp = S - 32 at the jump
 * (8 mod 16, as after a call); the real dlopen returns to the gadget, the gadget to 2:, with
 * rsp = S - 16. Fallback: a call from rsp = S - 24. Either way fxt_fn_shim_dlopened(handle) from
 * rsp = S - 24 (0 mod 16 at the call), then back to the caller. */
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

#endif
