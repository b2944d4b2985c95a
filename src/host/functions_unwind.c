/* functions_unwind.c - C++ exceptions (and any other unwinding: a Rust panic, pthread_exit's
 * forced unwind) through functions whose returns the patchable-entry engine redirected
 * (function_graph).
 *
 * An unwinder finds each caller by the return address on the stack; a redirected one is
 * fxt_fn_pe_return_tramp, whose FDE ends the walk (functions_tramp.c): the exception would
 * find no handler beyond it, std::terminate. So libfxtrace.so interposes the unwinder's entry
 * points the program and its libraries call through the PLT (libfxtrace is loaded before
 * libgcc_s): _Unwind_RaiseException (throw, std::rethrow_exception; and `throw;`, whose
 * _Unwind_Resume_or_Rethrow calls it through libgcc_s's PLT), _Unwind_ForcedUnwind (a
 * program's own), and pthread_exit (below). (_Unwind_Resume, which goes on after each cleanup,
 * needs nothing: no catch redirects frames again while an unwind walks, see inflight.)
 * Before the real one runs, fxt_fn_pe_unwinding puts the thread's redirected return addresses
 * back (as uftrace's mcount_rstack_restore around __cxa_throw). Then __cxa_begin_catch, which
 * every catch block calls first, is interposed too: fxt_fn_pe_caught pops the frames the
 * exception went through (counted as cut) and redirects again those still open above the
 * catching function (uftrace's mcount_rstack_reset), so the catching function and its callers
 * keep their slices. A catch that does not call __cxa_begin_catch (a Rust catch_unwind) leaves
 * them put back: they lose their slices (cut), as the functions the exception left.
 *
 * Each real function is looked up with RTLD_NEXT; a library that reached ours from a dlopen
 * scope of its own (RTLD_LOCAL, which RTLD_NEXT does not search) is found by its name,
 * already loaded (RTLD_NOLOAD). Two threads may both look one up: the same value.
 *
 * Only in the shared library: an executable linked with libfxtrace.a defines its own
 * unwinder or takes libgcc_s's, and two definitions would clash (a static link of libgcc_eh),
 * so this object is never pulled from the archive (nothing refers to it).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unwind.h>

#include <fxtrace/common.h>

#include "functions_int.h"

/* The definition of name after ours, from lib when RTLD_NEXT has none; *cache holds it. */
static void *real(_Atomic(void *) *cache, const char *name, const char *lib)
{
  void *r = atomic_load_explicit(cache, memory_order_relaxed);
  if (r)
    return r;
  r = dlsym(RTLD_NEXT, name);
  if (!r) {
    void *h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
    r = h ? dlsym(h, name) : NULL;
  }
  if (r)
    atomic_store_explicit(cache, r, memory_order_relaxed);
  return r;
}

#define LIBGCC "libgcc_s.so.1"

/* The calling thread's unwinds in flight: exceptions raised and not yet caught (a raise that
 * returns found no handler: not in flight any more), and whether a forced unwind started
 * (pthread_exit, _Unwind_ForcedUnwind: the thread ends, or its stop function jumps out; a
 * catch(...) that sees it must rethrow it, through no entry point of ours). Owner thread only:
 * a signal handler that throws and catches inside itself raises and lowers the count above
 * what it interrupted. A catch redirects the open frames again only when nothing else is in
 * flight: an unwind still walking (a catch inside a destructor, a stop function, a handler)
 * needs the real return addresses of the frames it has not reached. */
static _Thread_local struct {
  uint32_t raised;
  bool forced;
} inflight __attribute__((tls_model("initial-exec")));

static void unwinding(void)
{
#if FXT_FN_PE_SUPPORTED
  fxt_fn_pe_unwinding();
#endif
}

typedef _Unwind_Reason_Code (*raise_fn)(struct _Unwind_Exception *);

FXT_API _Unwind_Reason_Code _Unwind_RaiseException(struct _Unwind_Exception *e)
{
  static _Atomic(void *) cache;
  raise_fn r;
  *(void **)&r = real(&cache, "_Unwind_RaiseException", LIBGCC);
  if (!r)
    return _URC_FATAL_PHASE1_ERROR;
  inflight.raised++;
  unwinding();
  _Unwind_Reason_Code rc = r(e); /* returns only when no handler was found */
  inflight.raised--;
  return rc;
}

typedef _Unwind_Reason_Code (*forced_fn)(struct _Unwind_Exception *, _Unwind_Stop_Fn, void *);

/* Called by a program itself (glibc's pthread_exit takes libgcc_s's own: below). */
FXT_API _Unwind_Reason_Code _Unwind_ForcedUnwind(struct _Unwind_Exception *e,
                                                 _Unwind_Stop_Fn stop, void *arg)
{
  static _Atomic(void *) cache;
  forced_fn r;
  *(void **)&r = real(&cache, "_Unwind_ForcedUnwind", LIBGCC);
  if (!r)
    return _URC_FATAL_PHASE2_ERROR;
  inflight.forced = true;
  unwinding();
  return r(e, stop, arg);
}

/* The catching function's landing pad calls this first: its stack pointer is our CFA. */
FXT_API void *__cxa_begin_catch(void *e)
{
  static _Atomic(void *) cache;
  void *(*r)(void *);
  *(void **)&r = real(&cache, "__cxa_begin_catch", "libstdc++.so.6");
  if (!r)
    abort();
  if (inflight.raised > 0)
    inflight.raised--;
#if FXT_FN_PE_SUPPORTED
  fxt_fn_pe_caught((uintptr_t)__builtin_dwarf_cfa(), inflight.raised == 0 && !inflight.forced);
#endif
  return r(e);
}

/* pthread_exit unwinds the thread with libgcc_s's _Unwind_ForcedUnwind, which glibc reaches
 * through its own dlopen handle (not the PLT: it cannot be interposed); its walk would stop at
 * the first redirected return address and skip the C++ destructors of the frames beyond. So
 * the addresses are put back before glibc starts it. */
FXT_API void pthread_exit(void *ret)
{
  static _Atomic(void *) cache;
  void (*r)(void *);
  *(void **)&r = real(&cache, "pthread_exit", "libc.so.6");
  if (!r)
    abort();
  inflight.forced = true;
  unwinding();
  r(ret);
  abort(); /* pthread_exit does not return */
}
