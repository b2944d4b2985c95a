/* fxtrace/detail/fn_shim.h - what the function tracer's shim calls in libfxtrace.
 *
 * NOT API: not for direct use; may change in any release.
 *
 * The names the function tracer must define as they are - the compiler's
 * -finstrument-functions hooks (__cyg_profile_func_enter, _exit) and the interposers of
 * _Unwind_RaiseException, _Unwind_ForcedUnwind, __cxa_begin_catch, pthread_exit and dlopen -
 * are not fxtrace's names: libfxtrace.so exports only fxt_* / FXT_* (src/fxtrace.map). They
 * live in a library of their own, libfxtrace-functions.so (src/fnshim, what pkg-config
 * fxtrace-functions and CMake's fxtrace::functions link beside libfxtrace), which calls into
 * libfxtrace through these entry points (src/host/functions_shim.c). libfxtrace.a holds the
 * hooks and the dlopen interposer too (the shim's objects; not the unwinder's, which would
 * clash with a static libgcc_eh): a static link gets them from the one archive.
 *
 * The off path stays in the shim: each hook loads the shim's own flag, non-zero while a tracer
 * or the profiler is on, and returns when it is 0 (one load, PC-relative, and a branch), else
 * tail-calls fxt_fn_shim_enter or _exit, which load the tracer's mode again and do what the
 * hooks did. The flag is registered at the shim's load (fxt_fn_shim_attach) and written by
 * libfxtrace at each switch of the mode.
 */
#ifndef FXTRACE_DETAIL_FN_SHIM_H
#define FXTRACE_DETAIL_FN_SHIM_H

#include "../common.h"

#include <stdbool.h>

FXT_EXTERN_C_BEGIN

/* Registers the shim's flag: libfxtrace stores into *on whether a tracer or the profiler is
 * on, now and at each switch (the hooks read it relaxed). Takes no lock (a dlopen runs the
 * shim's constructor, which calls this, with the loader's lock held). Called once per flag,
 * by the shim's constructor (libfxtrace's constructors ran before: it is the shim's
 * dependency). At most 16 flags (a 17th is not written: its hooks stay off, and stderr says
 * so once). The flag must outlive the process (the shim is linked -z nodelete). */
FXT_API void fxt_fn_shim_attach(FXT_ATOMIC(uint32_t) *on);

/* The -finstrument-functions hooks' work: fn, site as the compiler passes them, cfa the
 * hook's __builtin_dwarf_cfa() (the instrumented function's stack pointer at the call). */
FXT_API void fxt_fn_shim_enter(void *fn, void *site, uintptr_t cfa);
FXT_API void fxt_fn_shim_exit(void *fn, void *site, uintptr_t cfa);

/* An unwinder is about to walk the calling thread's stack: the return addresses the
 * patchable-entry engine redirected put back (a no-op elsewhere than x86-64). */
FXT_API void fxt_fn_shim_unwinding(void);
/* A C++ exception caught: sp the catching function's stack pointer (__cxa_begin_catch's
 * __builtin_dwarf_cfa()); redirect when no other unwind of the thread is still walking. */
FXT_API void fxt_fn_shim_caught(uintptr_t sp, bool redirect);

/* After the real dlopen returned handle: the new objects' functions named and their sites
 * synced when a tracer or the profiler is on. Returns handle. */
FXT_API void *fxt_fn_shim_dlopened(void *handle);

#if defined(__aarch64__)
/* aarch64: v signed as a pac-ret prologue signs its return address, with key A (kind 1) or B
 * (kind 2) and modifier mod (a stack pointer); kind 0: v (the dlopen interposer's
 * continuation, src/fnshim/dl.c). */
FXT_API uintptr_t fxt_fn_shim_a64_sign(uintptr_t v, uintptr_t mod, int kind);
#endif

FXT_EXTERN_C_END

#endif /* FXTRACE_DETAIL_FN_SHIM_H */
