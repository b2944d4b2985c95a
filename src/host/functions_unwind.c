/* functions_unwind.c - C++ exceptions (and any other _Unwind_RaiseException: a Rust panic)
 * through functions whose returns the patchable-entry engine redirected (function_graph).
 *
 * An unwinder finds each caller by the return address on the stack; a redirected one is
 * fxt_fn_pe_return_tramp, whose FDE ends the walk (functions_tramp.c): the exception would
 * find no handler beyond it, std::terminate. So libfxtrace.so interposes
 * _Unwind_RaiseException (the program's libraries call libgcc_s's through the PLT, and
 * libfxtrace is loaded before libgcc_s): before the real one runs, fxt_fn_pe_unwinding puts
 * the thread's redirected return addresses back (as uftrace's mcount_rstack_restore around
 * __cxa_throw). The functions the exception leaves, and those still open under it, lose their
 * slices (counted as cut); the frames are popped as the shadow stack's stack pointers say.
 *
 * Only in the shared library: an executable linked with libfxtrace.a defines its own
 * unwinder or takes libgcc_s's, and two definitions would clash (a static link of libgcc_eh),
 * so this object is never pulled from the archive (nothing refers to it). pthread_exit's
 * forced unwind is not covered: glibc calls libgcc_s's _Unwind_ForcedUnwind through its own
 * handle, not the PLT (docs/functions.md: what that means).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <unwind.h>

#include <fxtrace/common.h>

#include "functions_int.h"

typedef _Unwind_Reason_Code (*raise_fn)(struct _Unwind_Exception *);

FXT_API _Unwind_Reason_Code _Unwind_RaiseException(struct _Unwind_Exception *e)
{
  /* Two threads may both look it up: the same value. */
  static _Atomic(raise_fn) real;
  raise_fn r = atomic_load_explicit(&real, memory_order_relaxed);
  if (!r) {
    *(void **)&r = dlsym(RTLD_NEXT, "_Unwind_RaiseException");
    if (!r)
      return _URC_FATAL_PHASE1_ERROR;
    atomic_store_explicit(&real, r, memory_order_relaxed);
  }
#if FXT_FN_PE_SUPPORTED
  fxt_fn_pe_unwinding();
#endif
  return r(e);
}
