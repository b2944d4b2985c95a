/* functions_shim.c - libfxtrace's side of the function tracer's shim (libfxtrace-functions:
 * src/fnshim, include/fxtrace/detail/fn_shim.h): the entry points the shim's hooks and
 * interposers call, and the mode stored where the shim's hooks read it.
 *
 * libfxtrace.so exports only fxt_* names (src/fxtrace.map). The names the compiler and the
 * interposition need as they are (__cyg_profile_func_enter and _exit, _Unwind_RaiseException,
 * _Unwind_ForcedUnwind, __cxa_begin_catch, pthread_exit, dlopen) are defined by the shim,
 * which calls these.
 *
 * The shim's flags. Each hook's off path is one load of a flag of the shim's own (PC-relative
 * in its object: a flag of libfxtrace's would cost a GOT load more) and a branch. Every store
 * of fxt_fn_set.mode goes through fxt_fn_mode_store, which then stores into each registered
 * flag whether the mode is on. Writers: fxt_fn_mode_store and fxt_fn_shim_attach, both under
 * fxt_fn_lock (the flags' array and count are read and written only under it). Readers: the
 * shim's hooks, relaxed, on any thread: the flag only decides whether to call in, and
 * fxt_fn_shim_enter and _exit load the mode again, as the hooks did before the shim (a hook
 * that sees the flag a switch late calls in and finds nop, or returns as the switch's own
 * window allows: the mode's store and the hooks' loads were never ordered with each other).
 * The flag's release store pairs with no acquire: the hooks' table acquire is
 * fxt_fn_table_current's, after their load of the mode (functions_ctl.c's set_tracer).
 */
#define _GNU_SOURCE
#include <fxtrace/detail/fn_shim.h>
#include <pthread.h>
#include <stdatomic.h>

#include "functions_int.h"

#define NOINSTR __attribute__((no_instrument_function))

#define SHIM_FLAGS 4

/* The shims' flags (under fxt_fn_lock). */
static _Atomic uint32_t *shim_flag[SHIM_FLAGS];
static uint32_t shim_flags;

void fxt_fn_mode_store(uint32_t mode)
{
  atomic_store_explicit(&fxt_fn_set.mode, mode, memory_order_release);
  for (uint32_t i = 0; i < shim_flags; i++)
    atomic_store_explicit(shim_flag[i], mode != FXT_FN_NOP, memory_order_release);
}

FXT_API void fxt_fn_shim_attach(_Atomic uint32_t *on)
{
  pthread_mutex_lock(&fxt_fn_lock);
  uint32_t i = 0;
  while (i < shim_flags && shim_flag[i] != on)
    i++;
  if (i == shim_flags && i < SHIM_FLAGS)
    shim_flag[shim_flags++] = on;
  if (i < shim_flags) {
    uint32_t mode = atomic_load_explicit(&fxt_fn_set.mode, memory_order_relaxed);
    atomic_store_explicit(on, mode != FXT_FN_NOP, memory_order_release);
  }
  pthread_mutex_unlock(&fxt_fn_lock);
}

/* The hooks' work, as it was in the hooks: the mode loaded (relaxed), nothing when nop. */
FXT_API NOINSTR void fxt_fn_shim_enter(void *fn, void *site, uintptr_t cfa)
{
  uint32_t mode = atomic_load_explicit(&fxt_fn_set.mode, memory_order_relaxed);
  if (FXT_LIKELY(mode == FXT_FN_NOP))
    return;
  fxt_fn_entry((uintptr_t)fn, (uintptr_t)site, cfa, mode);
}

FXT_API NOINSTR void fxt_fn_shim_exit(void *fn, void *site, uintptr_t cfa)
{
  uint32_t mode = atomic_load_explicit(&fxt_fn_set.mode, memory_order_relaxed);
  if (FXT_LIKELY(mode == FXT_FN_NOP))
    return;
  fxt_fn_exit((uintptr_t)fn, (uintptr_t)site, cfa, mode);
}

FXT_API NOINSTR void fxt_fn_shim_unwinding(void)
{
#if FXT_FN_PE_SUPPORTED
  fxt_fn_pe_unwinding();
#endif
}

FXT_API NOINSTR void fxt_fn_shim_caught(uintptr_t sp, bool redirect)
{
#if FXT_FN_PE_SUPPORTED
  fxt_fn_pe_caught(sp, redirect);
#else
  (void)sp;
  (void)redirect;
#endif
}

/* After the real dlopen (the shim's interposer, src/fnshim/dl.c): under fxt_fn_lock, the
 * table rebuilt when objects were added (fxt_fn_table_update: keeps the filters' flags) and
 * the sites synced (fxt_fn_pe_sync), before dlopen returns to its caller. */
FXT_API void *fxt_fn_shim_dlopened(void *handle)
{
  if (!handle || atomic_load_explicit(&fxt_fn_set.mode, memory_order_relaxed) == FXT_FN_NOP)
    return handle;
  pthread_mutex_lock(&fxt_fn_lock);
  uint32_t mode = atomic_load_explicit(&fxt_fn_set.mode, memory_order_relaxed);
  if (mode != FXT_FN_NOP && fxt_fn_table_update())
    (void)fxt_fn_pe_sync(mode); /* a refusal (EPERM) leaves the library untraced */
  pthread_mutex_unlock(&fxt_fn_lock);
  return handle;
}
