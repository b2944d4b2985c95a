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
 * flag whether the mode is on. Writers of a flag: fxt_fn_mode_store (under fxt_fn_lock, so one
 * at a time) and the flag's own fxt_fn_shim_attach; reader: the shim's hooks, relaxed, on any
 * thread: the flag only decides whether to call in, and fxt_fn_shim_enter and _exit load the
 * mode again, as the hooks did before the shim (the mode's store and the hooks' loads were
 * never ordered with each other: the hooks' table acquire is fxt_fn_table_current's).
 *
 * fxt_fn_shim_attach takes no lock: it runs in the shim's constructor, which a dlopen runs with
 * the loader's lock held (dl_load_lock), and the control side holds fxt_fn_lock while it
 * calls dlsym (fxt_fn_table_update), which takes that lock: a lock here could deadlock with a
 * tracer switched on meanwhile. So the flags' slots are claimed by an atomic count, and every
 * access to the mode, the count, the slots and the flags below is seq_cst: in their one total
 * order, an attach publishes its slot, then stores the flag from the mode it loads, then loads
 * the mode again and stores again until the mode it loaded is the one it finds (a loop of one
 * pass but when a switch raced it). A switch stores the mode, then reads the count and the
 * slots and stores each flag. Either the switch's slot read comes after the attach's slot
 * store (it writes the flag after its mode store: the flag ends at the new mode, or at what the
 * attach stores after reloading that mode), or before it, and then the attach's loads of the
 * mode come after the switch's store of it: the attach stores the new mode's state itself.
 */
#define _GNU_SOURCE
#include <fxtrace/detail/fn_shim.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "functions_int.h"

#define NOINSTR __attribute__((no_instrument_function))

/* Copies of the shim a process can hold: one normally (the shared shim, or its objects in a
 * static link); more when several objects bring their own (a program linked with libfxtrace.a
 * that dlopens plugins linked with the shared shim, say). Past it, a copy's hooks stay off,
 * and the process is told so on stderr, once (fxt_fn_shim_attach). */
#define SHIM_FLAGS 16

/* The shims' flags: slot i is claimed by the attach that took i from shim_flags, which then
 * stores its flag's address there (NULL until then). seq_cst throughout (above). */
static _Atomic(_Atomic uint32_t *) shim_flag[SHIM_FLAGS];
static _Atomic uint32_t shim_flags;

void fxt_fn_mode_store(uint32_t mode)
{
  atomic_store(&fxt_fn_set.mode, mode); /* seq_cst: before the slots are read (above) */
  uint32_t n = atomic_load(&shim_flags);
  for (uint32_t i = 0; i < n && i < SHIM_FLAGS; i++) {
    _Atomic uint32_t *on = atomic_load(&shim_flag[i]);
    if (on) /* NULL: an attach claimed the slot and stores the flag itself (above) */
      atomic_store(on, mode != FXT_FN_NOP);
  }
}

FXT_API void fxt_fn_shim_attach(_Atomic uint32_t *on)
{
  uint32_t i = atomic_fetch_add(&shim_flags, 1);
  if (i >= SHIM_FLAGS) { /* no slot: this shim's hooks stay off (fn_shim.h) */
    static const char msg[] = "fxtrace: more than 16 copies of the function tracer's hooks "
                              "(libfxtrace-functions) are loaded: the functions that call "
                              "the others' are not traced\n";
    if (i == SHIM_FLAGS) /* the first one without a slot says it (write(2): no lock) */
      (void)!write(2, msg, sizeof msg - 1);
    return;
  }
  atomic_store(&shim_flag[i], on);
  uint32_t mode = atomic_load(&fxt_fn_set.mode), again;
  for (;;) {
    atomic_store(on, mode != FXT_FN_NOP);
    again = atomic_load(&fxt_fn_set.mode);
    if (again == mode)
      break;
    mode = again;
  }
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

#if defined(__aarch64__)
FXT_API uintptr_t fxt_fn_shim_a64_sign(uintptr_t v, uintptr_t mod, int kind)
{
  return fxt_fn_pe_a64_sign(v, mod, kind);
}
#endif

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
