/* functions_prof_int.h - what the function profiler's two files share: its tables and their
 * state (functions_prof.c: the design, the hooks' side; functions_prof_ctl.c: the control
 * side, function_profile_enabled and trace_stat/function<N>, compiled for size). */
#ifndef FXT_FUNCTIONS_PROF_INT_H
#define FXT_FUNCTIONS_PROF_INT_H

#include <stdatomic.h>
#include <stdint.h>

/* Tables handed to the first threads that count (per reset). */
#define FXT_PROF_THREAD_TABLES 32

/* A function's counts: in a CPU's shared table (cpu unused), or in a thread's table, whose
 * slots are a function on a CPU (fn, cpu). */
struct fxt_prof_slot {
  _Atomic uintptr_t fn;   /* the function's entry address; 0 = free */
  _Atomic uint32_t cpu;   /* a thread's table: the CPU of these counts (stored before fn) */
  _Atomic uint64_t hit;   /* calls started on the CPU */
  _Atomic uint64_t time;  /* ns of the calls returned on the CPU */
  _Atomic uint64_t time2; /* the sum of their squares (ns^2; wraps as the kernel's) */
};

/* The profile (functions_prof.c's design says who writes and reads each field). */
struct fxt_prof {
  /* ncpus shared tables then FXT_PROF_THREAD_TABLES thread tables, mask + 1 slots each; NULL
   * before the first enable (release/acquire: functions_prof.c, "Publication") */
  _Atomic(struct fxt_prof_slot *) slots;
  _Atomic uint64_t *miss;   /* per CPU: calls whose function found no slot */
  uint32_t ncpus, mask;     /* written before slots is published, then fixed */
  _Atomic uint32_t gen;     /* raised at each reset: threads take a table again */
  _Atomic uint32_t claimed; /* thread tables handed out since the last reset */
  _Atomic uint64_t since;   /* ticks when the profile last started */
  _Atomic uint64_t ns_mul;  /* ns per tick, 32.32 fixed point */
};
extern struct fxt_prof fxt_prof;

#endif
