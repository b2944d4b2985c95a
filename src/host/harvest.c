/* harvest.c - see harvest.h: the tracer's side of harvesting - which recovery it uses (its
 * module, loaded the first time a dead session is to be harvested) and the calls into it.
 * What it acts on, session directories, is src/base/sdir.c's. Runs in the process that acts
 * on another session's directory (a traced parent's consumer thread or its stop, a new
 * session's setup): nothing here is on an emission's path, and nothing here is shared between
 * threads (each caller works on directories whose lock it holds) but the module's state,
 * which says how it is shared.
 */
#define _GNU_SOURCE
#include "harvest.h"

#include <dlfcn.h>
#include <fxtrace/errors.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "module.h"
#include "outfile.h"

/* The recovery module (CMakeLists.txt: fxtrace_recover) and its one entry, which returns its
 * fxt_recover_ops. */
#define RECOVER_MODULE "fxtrace-recover.so"
#define RECOVER_ENTRY FXT_RECOVER_ENTRY

static bool in_fork_child; /* written only by a child of fork's one thread (session.c) */

/* The module is loaded at most once per process, by the first call that needs it, and stays
 * loaded (a parent harvests children at any pass). One caller loads it (the compare and swap
 * from UNTRIED); a caller that finds it LOADING goes without, as after a fork in the middle
 * of a load, whose child sees LOADING forever. The release storing LOADED pairs with the
 * acquire in recovery(): recover_loaded is set before. */
enum { RECOVER_UNTRIED, RECOVER_LOADING, RECOVER_LOADED, RECOVER_FAILED };
static _Atomic int recover_state;
static const struct fxt_recover_ops *recover_loaded;

void fxt_harvest_in_fork_child(bool in)
{
  in_fork_child = in;
}

/* The module's functions, or NULL with why set. */
static const struct fxt_recover_ops *load_recovery(char *why, size_t why_size)
{
  void *h;
  void *sym = fxt_module_load(RECOVER_MODULE, RECOVER_ENTRY, &h, why, why_size);
  if (!sym)
    return NULL;
  const struct fxt_recover_ops *(*entry)(void);
  memcpy(&entry, &sym, sizeof(entry)); /* a function pointer from dlsym (POSIX) */
  const struct fxt_recover_ops *ops = entry();
  if (ops->struct_size < sizeof(*ops)) {
    snprintf(why, why_size, "it is another version's (its table has %u bytes, not %zu)",
             ops->struct_size, sizeof(*ops));
    dlclose(h);
    return NULL;
  }
  return ops;
}

/* The recovery for the session directory dir: the module's, loaded now unless this is a child
 * of fork before it execs (dlopen takes the loader's locks, which
 * another thread of the parent may have held at the fork: the child leaves the dead sessions
 * it finds to the next process that looks). NULL when there is none: dir's buffers stay
 * where they are; a module that cannot be loaded is said once, with the reason, on stderr. */
static const struct fxt_recover_ops *recovery(const char *dir)
{
  int untried = RECOVER_UNTRIED;
  if (!in_fork_child &&
      atomic_compare_exchange_strong_explicit(&recover_state, &untried, RECOVER_LOADING,
                                              memory_order_relaxed, memory_order_relaxed)) {
    char why[512] = "";
    const struct fxt_recover_ops *ops = load_recovery(why, sizeof(why));
    if (ops) {
      recover_loaded = ops;
      atomic_store_explicit(&recover_state, RECOVER_LOADED, memory_order_release);
    } else {
      const char *slash = strrchr(dir, '/');
      int base = slash ? (int)(slash - dir) : (int)strlen(dir);
      fprintf(stderr,
              "fxtrace: the recovery module %s could not be loaded: %s; the buffers of "
              "processes that died stay in %.*s (`fxtrace recover %.*s` completes their "
              "traces)\n",
              RECOVER_MODULE, why, base, dir, base, dir);
      atomic_store_explicit(&recover_state, RECOVER_FAILED, memory_order_relaxed);
    }
  }
  return atomic_load_explicit(&recover_state, memory_order_acquire) == RECOVER_LOADED
             ? recover_loaded
             : NULL;
}

int fxt_harvest(const char *dir, bool keep_dir, bool keep_fxt, const char *adopt_dir,
                struct fxt_rec_stats *st, char *msg, size_t msg_size)
{
  const struct fxt_recover_ops *ops = recovery(dir);
  if (ops)
    return ops->harvest(dir, keep_dir, keep_fxt, adopt_dir, st, msg, msg_size,
                        fxt_outfile_to_dat);
  if (st)
    memset(st, 0, sizeof(*st));
  if (msg_size)
    snprintf(msg, msg_size, "%s: left for `fxtrace recover`: no recovery module", dir);
  return FXT_ENOSYS;
}

enum fxt_rec_dead fxt_recover_dead_state(const char *dir)
{
  const struct fxt_recover_ops *ops = recovery(dir);
  return ops ? ops->dead_state(dir) : FXT_REC_KEEP;
}

int fxt_harvest_dead(const char *base, const char *who)
{
  static const struct fxt_sdir_recovery tracer = {recovery, fxt_outfile_to_dat};
  return fxt_sdir_harvest_dead(base, who, &tracer);
}
