/* functions_prof.c - the function profiler: ftrace's function_profile_enabled and
 * trace_stat/function<N> (kernel/trace/ftrace.c, function_profile_call, profile_graph_entry and
 * _return, function_stat_show) for the functions the function tracer's hooks see. This file
 * is the hooks' side; the control side and the table's text are functions_prof_ctl.c's
 * (compiled for size), the state both share functions_prof_int.h's.
 *
 * Design (docs/functions.md, "Function profiler", has the user's side):
 *
 * What is counted, as the kernel's. The profiler is its own client of the hooks, as the kernel's
 * registers its own ftrace_ops: it counts whatever current_tracer is (nop included), through
 * the bit FXT_FN_PROF of fxt_fn_set.mode, so the hooks' one load when everything is off stays
 * one load. It follows set_ftrace_filter and set_ftrace_notrace (the kernel's profiler uses the
 * global filter), not set_graph_function, set_graph_notrace nor max_graph_depth (the
 * function_graph tracer's own). A call's hit is counted at its entry on the CPU it runs on;
 * its time, from entry to return (its children's and the time its thread slept included: the
 * kernel's graph-time and sleep-time options, both on by default; graph-time can be switched
 * off, below; sleep-time cannot: user space does not see its thread's switches), at its
 * return on the CPU it returns on, shown when that CPU counted the function -
 * the kernel's profile_graph_return. Times need the return: -finstrument-functions has an exit
 * hook; the patchable-entry engine redirects the return of every profiled call, as
 * function_graph does.
 * Calls deeper than the shadow stack (overflow) and calls that started before the profile
 * (re)started are not timed.
 *
 * Self time (options/graph-time 0: fxt_fn_set.prof_self), the kernel's profile_graph_return
 * with graph-time off. Each call the profiler times has a subtime, the sub field of its shadow
 * frame (functions.c: 0 when pushed; FXT_FN_PROF_NONE in a frame the profiler does not time).
 * At a timed call's return, with graph-time 0, its entry-to-return time T (ns) is added to the
 * subtime of its parent - the nearest frame below it that the profiler times (functions.c,
 * prof_parent; a sink nobody reads when there is none): frames of functions the filters leave
 * out are skipped, as the kernel's fgraph_retrieve_parent_data finds the profiler's nearest
 * data on the return stack - and the time counted is T - subtime, or 0 when subtime is not
 * less than T. So a call's time is its own: its direct children's whole times taken away
 * (theirs include their own children). The flag is read at each return, as the kernel's
 * fgraph_graph_time: a switch counts the calls that return after it by the new rule, their
 * subtimes holding only the children that returned after it too; nothing is reset. Not taken
 * away, as nothing times them: calls deeper than the shadow stack (the kernel's return stack
 * overflows the same way), calls left without their return (cut: a longjmp, an exception the
 * exit hooks do not see), and in a parent that started before the profile (re)started
 * (whose own time is not counted). Kernels since function_graph's several users (6.11)
 * count 0 for a call whose subtime is 0 (`subtime && subtime < calltime`): every leaf's time
 * is lost, against ftrace.rst's graph-time; this follows the earlier, documented rule.
 * Who writes what: prof_self, the control side under fxt_fn_lock (relaxed: it orders nothing
 * else; a thread's next returns see it). A subtime, the thread that owns the shadow stack, at
 * its own returns (a frame's push zeroes it, its children's returns add to it, its own return
 * reads it): no atomics. A signal handler's calls add to the frame they interrupted as any
 * child, by a load and a store; a handler that returns a profiled call while its thread is
 * between its own load and store of that subtime (a child of the frame returning) or pops
 * that frame (a few instructions each) has its add lost: the frame counts the handler's time
 * as its own.
 *
 * N is the CPU, as the kernel's: trace_stat/function0 .. function<ncpus-1>, the CPUs of
 * per_cpu/ (live_ncpus). Tools that read the kernel's files (sum over function*) read these
 * unchanged; a CPU is where the time was spent whichever thread spent it.
 *
 * Tables, allocated at the first enable (control side) and never freed (a hook may be in one
 * at any time), each of mask + 1 slots with mask + 1 the power of two at least twice the
 * functions the symbol tables list (1024 at the least, 65536 at the most), open addressing:
 *  - a thread's own table, handed to each of the first FXT_PROF_THREAD_TABLES (32) threads
 *    that count after a (re)start, whose slots are (function, CPU) pairs: one writer, so a
 *    count is a load and a store (no lock prefix); its nested calls (a signal handler inside
 *    the update: busy) go to the shared tables. Reading such a slot needs no more than its fields' relaxed loads.
 *  - one shared table per CPU for the threads without one (all handed out, or busy): slots
 *    claimed by a compare-and-swap, counts added with relaxed atomic adds (a thread may be
 *    moved to another CPU between reading its CPU and adding, so two threads can add to one
 *    slot at once).
 * trace_stat/function<N> merges, per function, CPU N's shared table and the thread tables'
 * slots of CPU N. A call whose function finds no free slot within PROBES of its hash in the
 * table it goes to (the thread's, then the CPU's shared one) is counted in its CPU's miss
 * counter, shown under the table. A thread that exits keeps its table (its counts stay in the
 * profile); the next (re)start hands the tables out again. Every field is read relaxed but a
 * slot's fn (acquire, pairing with the claim's release: the slot's CPU is then the
 * claimer's): a reader merges nothing across fields (a slot seen claimed with no hit yet is
 * not shown, as the kernel skips a record with no hit), and the counts are each exact once
 * the calls are done.
 *
 * Publication: the tables pointer is stored with release before FXT_FN_PROF is stored (release,
 * functions_ctl.c's pattern); the hooks load it with acquire (pairs) and find the tables whole.
 * A reset (0 then 1, as the kernel's ftrace_profile_reset) zeroes the tables in use while the
 * bit is off and raises gen (release; a thread's acquire load of gen then sees them zeroed and
 * takes a table again); a hook that loaded the mode before the bit went off and is still
 * running may add to a table after the reset (a straggler's call, counted once at most).
 */
#define _GNU_SOURCE
#include <fxtrace/errors.h>
#include <fxtrace/fxtrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "functions_int.h"
#include "functions_prof_int.h"

#define NOINSTR __attribute__((no_instrument_function))
#define PROBES 32u /* slots a lookup tries before the call is counted as a miss */

struct fxt_prof fxt_prof = {.ns_mul = (uint64_t)1 << 32};

/* A thread's table: the owner thread only. busy is set while it updates its table: a signal
 * handler that interrupts the update (and calls a profiled function) counts in the shared
 * tables instead, so the owner's load-and-store adds never lose one of the handler's. */
struct prof_thread {
  struct fxt_prof_slot *t; /* NULL: none was left, the thread counts in the shared tables */
  uint32_t gen;            /* fxt_prof.gen it was handed out in; 0: none yet */
  uint32_t busy;
};
static _Thread_local struct prof_thread prof_tls __attribute__((tls_model("initial-exec")));

/* The kernel's profiler follows the global filter: set_ftrace_filter, set_ftrace_notrace. */
NOINSTR static bool wanted(const struct fxt_fn_sym *s)
{
  bool has_filter = atomic_load_explicit(&fxt_fn_set.has_filter, memory_order_relaxed);
  if (!s)
    return !has_filter;
  uint32_t fl = atomic_load_explicit(&s->flags, memory_order_relaxed);
  return !(fl & FXT_FN_F_NOTRACE) && (!has_filter || (fl & FXT_FN_F_FILTER));
}

/* The CPU the thread runs on (a number past the tables, which sysconf's count should not
 * give, goes to the last). */
NOINSTR static uint32_t this_cpu(void)
{
  uint32_t c = fxt_current_cpu();
  return c < fxt_prof.ncpus ? c : fxt_prof.ncpus - 1;
}

/* The (fn, cpu) slot of table t: found, or (claim) a free one taken; NULL when none within
 * PROBES. A shared table's cpu is 0 in every slot. The claim stores cpu, then takes fn by a
 * compare-and-swap (release: pairs with the reader's acquire load of fn, which then sees the
 * slot's cpu); in a shared table two threads may claim at once (one wins, the other goes on),
 * and storing cpu (0) over a slot another thread claimed changes nothing. */
NOINSTR static struct fxt_prof_slot *slot_of(struct fxt_prof_slot *t, uintptr_t fn, uint32_t cpu,
                                         bool claim)
{
  uint32_t mask = fxt_prof.mask;
  uint32_t i = (uint32_t)((((uint64_t)fn ^ cpu) * 0x9E3779B97F4A7C15ull) >> 40) & mask;
  for (uint32_t k = 0; k < PROBES; k++, i = (i + 1) & mask) {
    uintptr_t cur = atomic_load_explicit(&t[i].fn, memory_order_relaxed);
    if (cur == fn && atomic_load_explicit(&t[i].cpu, memory_order_relaxed) == cpu)
      return &t[i];
    if (cur != 0)
      continue;
    if (!claim)
      return NULL;
    atomic_store_explicit(&t[i].cpu, cpu, memory_order_relaxed);
    if (atomic_compare_exchange_strong_explicit(&t[i].fn, &cur, fn, memory_order_release,
                                                memory_order_relaxed) ||
        (cur == fn && cpu == 0))
      return &t[i];
  }
  return NULL;
}

/* The calling thread's table, taken at its first call of a profile (a reset raises gen):
 * NULL when all were taken, or inside an update of its own (a signal handler's call). The
 * acquire load of gen pairs with the reset's release store: a thread that sees the new gen
 * sees the tables zeroed. */
NOINSTR static struct fxt_prof_slot *own_table(struct prof_thread *th, struct fxt_prof_slot *all)
{
  if (th->busy)
    return NULL;
  uint32_t gen = atomic_load_explicit(&fxt_prof.gen, memory_order_acquire);
  if (FXT_LIKELY(th->gen == gen))
    return th->t;
  uint32_t i = atomic_fetch_add_explicit(&fxt_prof.claimed, 1, memory_order_relaxed);
  th->t = i < FXT_PROF_THREAD_TABLES
              ? all + ((size_t)fxt_prof.ncpus + i) * (fxt_prof.mask + 1)
              : NULL;
  th->gen = gen;
  return th->t;
}

/* An add to a counter of the thread's own table: a load and a store (no other writer; the
 * reader loads it whole). */
NOINSTR static void own_add(_Atomic uint64_t *c, uint64_t v)
{
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
                        memory_order_relaxed);
}

/* Adds (hit, time) to fn's counts on cpu: in the thread's table, else in the CPU's shared
 * one (atomic adds); false when neither has a slot for it. */
NOINSTR static bool count(struct fxt_prof_slot *all, uintptr_t fn, uint32_t cpu, uint64_t hit,
                          uint64_t ns)
{
  struct prof_thread *th = &prof_tls;
  struct fxt_prof_slot *own = own_table(th, all);
  if (own) {
    th->busy = 1;
    atomic_signal_fence(memory_order_seq_cst); /* busy before the slot, for a handler */
    struct fxt_prof_slot *slot = slot_of(own, fn, cpu, true);
    if (slot) {
      own_add(&slot->hit, hit);
      own_add(&slot->time, ns);
      own_add(&slot->time2, ns * ns);
    }
    atomic_signal_fence(memory_order_seq_cst);
    th->busy = 0;
    if (slot)
      return true;
  }
  struct fxt_prof_slot *slot = slot_of(all + (size_t)cpu * (fxt_prof.mask + 1), fn, 0, true);
  if (!slot)
    return false;
  if (hit)
    atomic_fetch_add_explicit(&slot->hit, hit, memory_order_relaxed);
  if (ns) {
    atomic_fetch_add_explicit(&slot->time, ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&slot->time2, ns * ns, memory_order_relaxed);
  }
  return true;
}

NOINSTR bool fxt_fn_prof_enter(const struct fxt_fn_sym *s, uintptr_t fn)
{
  struct fxt_prof_slot *all = atomic_load_explicit(&fxt_prof.slots, memory_order_acquire);
  if (!all || !wanted(s))
    return false;
  uint32_t cpu = this_cpu();
  if (!count(all, fn, cpu, 1, 0))
    atomic_fetch_add_explicit(&fxt_prof.miss[cpu], 1, memory_order_relaxed);
  return true; /* timed even when its hit found no slot: its time is its parent's subtime
                  (graph-time 0), as the kernel's profile_graph_entry reserves its data
                  whatever function_profile_call found */
}

NOINSTR void fxt_fn_prof_exit(uintptr_t fn, uint64_t start, uint64_t end, uint64_t sub,
                              uint64_t *parent)
{
  struct fxt_prof_slot *all = atomic_load_explicit(&fxt_prof.slots, memory_order_acquire);
  if (!all || start < atomic_load_explicit(&fxt_prof.since, memory_order_relaxed) || end < start)
    return;
  __extension__ typedef unsigned __int128 u128;
  uint64_t ns = (uint64_t)(((u128)(end - start) *
                            atomic_load_explicit(&fxt_prof.ns_mul, memory_order_relaxed)) >> 32);
  if (FXT_UNLIKELY(parent)) { /* graph-time 0: "Self time", above */
    *parent += ns;
    ns = sub < ns ? ns - sub : 0;
  }
  (void)count(all, fn, this_cpu(), 0, ns);
}
