/* hooks.c (libfxtrace-functions, the function tracer's shim) - the compiler's
 * -finstrument-functions hooks, __cyg_profile_func_enter and __cyg_profile_func_exit, which
 * code built with fxtrace-functions-instrument's flags calls at every function's entry and
 * before each of its returns (docs/functions.md).
 *
 * Off path: one load of the shim's flag `on` (relaxed, PC-relative: hidden in this object)
 * and a branch, then the return: the same as when the hooks were libfxtrace's and loaded its
 * mode. On: a tail call of fxt_fn_shim_enter or _exit (libfxtrace), which loads the mode again
 * and does the rest (src/host/functions_shim.c).
 *
 * The flag. Written by libfxtrace only (fxt_fn_mode_store at each switch, fxt_fn_shim_attach at
 * the attach; seq_cst, their invariants in src/host/functions_shim.c); read by the hooks on any
 * thread, relaxed, paired with no acquire: it only decides whether to call in, and what the
 * call reads is ordered by libfxtrace's own loads. Registered by the constructor below:
 * libfxtrace is the shim's dependency, so its constructors (a session started from FXTRACE, a
 * tracer switched on) ran before, and the attach copies the mode as it is then. Until the
 * attach the flag is 0: calls made before it are not traced (only libfxtrace's own constructors
 * run before it). The shim is linked -z nodelete, so the flag libfxtrace writes is never
 * unmapped.
 *
 * In libfxtrace.a too (the same object): a static link of code built with the hooks takes
 * them, and this constructor, from the archive.
 */
#include <stdatomic.h>
#include <stdint.h>

#include "fnshim.h"

static _Atomic uint32_t on;

__attribute__((constructor)) NOINSTR static void attach(void)
{
  fxt_fn_shim_attach(&on);
}

/* __builtin_dwarf_cfa(): the stack pointer of the hook's caller at the call (the instrumented
 * function's, or at the exit hook its caller's when the compiler jumped to the hook:
 * functions.c's design); site is the instrumented function's return address at both. */
SHIM_API NOINSTR void __cyg_profile_func_enter(void *fn, void *site)
{
  if (FXT_LIKELY(atomic_load_explicit(&on, memory_order_relaxed) == 0))
    return;
  fxt_fn_shim_enter(fn, site, (uintptr_t)__builtin_dwarf_cfa());
}

SHIM_API NOINSTR void __cyg_profile_func_exit(void *fn, void *site)
{
  if (FXT_LIKELY(atomic_load_explicit(&on, memory_order_relaxed) == 0))
    return;
  fxt_fn_shim_exit(fn, site, (uintptr_t)__builtin_dwarf_cfa());
}
