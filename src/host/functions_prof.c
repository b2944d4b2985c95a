/* functions_prof.c - the function profiler: ftrace's function_profile_enabled and
 * trace_stat/function<N> (kernel/trace/ftrace.c, function_profile_call, profile_graph_entry and
 * _return, function_stat_show) for the functions the function tracer's hooks see.
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
 * kernel's graph-time and sleep-time options, both on by default; fxtrace has neither switch),
 * at its return on the CPU it returns on, when that CPU counted the function - the kernel's
 * profile_graph_return. Times need the return: -finstrument-functions has an exit hook; the
 * patchable-entry engine redirects the return of every profiled call, as function_graph does.
 * Calls deeper than the shadow stack (overflow) and calls that started before the profile
 * (re)started are not timed.
 *
 * N is the CPU, as the kernel's: trace_stat/function0 .. function<ncpus-1>, the CPUs of
 * per_cpu/ (live_ncpus). Tools that read the kernel's files (sum over function*) read these
 * unchanged; a CPU is where the time was spent whichever thread spent it.
 *
 * Tables. One per CPU, allocated at the first enable (control side) and never freed (a hook
 * may be in one at any time): open addressing on the function's entry address, mask + 1 slots
 * with mask + 1 the power of two at least twice the functions the symbol tables list (1024 at
 * the least, 65536 at the most). A slot's fn is claimed once by a compare-and-swap (0 -> fn)
 * and keeps it until a reset; hit, time and time2 (ns, ns^2) are added with relaxed atomic
 * adds: a thread may be moved to another CPU between reading its CPU and adding, so two
 * threads can add to one CPU's slot at once; no lock, no allocation. A call whose function
 * finds no free slot within PROBES of its hash is counted in its CPU's miss counter, shown
 * under the table. Every field is read and written relaxed: a reader merges nothing across
 * fields (a slot seen claimed with no hit yet is not shown, as the kernel skips a record with
 * no hit), and the counts are each exact once the calls are done.
 *
 * Publication: the tables pointer is stored with release before FXT_FN_PROF is stored (release,
 * functions_ctl.c's pattern); the hooks load it with acquire (pairs) and find the tables whole.
 * A reset (0 then 1, as the kernel's ftrace_profile_reset) zeroes every slot while the bit is
 * off; a hook that loaded the mode before the bit went off and is still running may add to a
 * slot after the reset (a straggler's call, counted once, never a torn value).
 */
#define _GNU_SOURCE
#include <fxtrace/errors.h>
#include <fxtrace/fxtrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "functions_int.h"
#include "live.h"

#define NOINSTR __attribute__((no_instrument_function))
#define PROBES 32u /* slots a lookup tries before the call is counted as a miss */

struct prof_slot {
  _Atomic uintptr_t fn;   /* the function's entry address; 0 = free */
  _Atomic uint64_t hit;   /* calls started on this CPU */
  _Atomic uint64_t time;  /* ns of the calls returned on this CPU */
  _Atomic uint64_t time2; /* the sum of their squares (ns^2; wraps as the kernel's) */
};

static struct {
  _Atomic(struct prof_slot *) slots; /* ncpus tables of mask + 1 slots; NULL before the first
                                        enable (release/acquire: above) */
  _Atomic uint64_t *miss;            /* per CPU: calls whose function found no slot */
  uint32_t ncpus, mask;              /* written before slots is published, then fixed */
  _Atomic uint64_t since;            /* ticks when the profile last started */
  _Atomic uint64_t ns_mul;           /* ns per tick, 32.32 fixed point */
} prof = {.ns_mul = (uint64_t)1 << 32};

/* The kernel's profiler follows the global filter: set_ftrace_filter, set_ftrace_notrace. */
NOINSTR static bool wanted(const struct fxt_fn_sym *s)
{
  bool has_filter = atomic_load_explicit(&fxt_fn_set.has_filter, memory_order_relaxed);
  if (!s)
    return !has_filter;
  uint32_t fl = atomic_load_explicit(&s->flags, memory_order_relaxed);
  return !(fl & FXT_FN_F_NOTRACE) && (!has_filter || (fl & FXT_FN_F_FILTER));
}

/* This CPU's table (a CPU number past the tables, which sysconf's count should not give,
 * goes to the last). */
NOINSTR static struct prof_slot *cpu_table(struct prof_slot *all, uint32_t *cpu)
{
  uint32_t c = fxt_current_cpu();
  c = c < prof.ncpus ? c : prof.ncpus - 1;
  *cpu = c;
  return all + (size_t)c * (prof.mask + 1);
}

/* fn's slot in table t: found, or (claim) a free one taken; NULL when none within PROBES. */
NOINSTR static struct prof_slot *slot_of(struct prof_slot *t, uintptr_t fn, bool claim)
{
  uint32_t mask = prof.mask;
  uint32_t i = (uint32_t)(((uint64_t)fn * 0x9E3779B97F4A7C15ull) >> 40) & mask;
  for (uint32_t k = 0; k < PROBES; k++, i = (i + 1) & mask) {
    uintptr_t cur = atomic_load_explicit(&t[i].fn, memory_order_relaxed);
    if (cur == fn)
      return &t[i];
    if (cur != 0)
      continue;
    if (!claim)
      return NULL; /* a lookup stops at the first free slot: fn was never claimed past it */
    if (atomic_compare_exchange_strong_explicit(&t[i].fn, &cur, fn, memory_order_relaxed,
                                                memory_order_relaxed) ||
        cur == fn)
      return &t[i];
  }
  return NULL;
}

NOINSTR bool fxt_fn_prof_enter(const struct fxt_fn_sym *s, uintptr_t fn)
{
  struct prof_slot *all = atomic_load_explicit(&prof.slots, memory_order_acquire);
  if (!all || !wanted(s))
    return false;
  uint32_t cpu;
  struct prof_slot *slot = slot_of(cpu_table(all, &cpu), fn, true);
  if (!slot) {
    atomic_fetch_add_explicit(&prof.miss[cpu], 1, memory_order_relaxed);
    return false;
  }
  atomic_fetch_add_explicit(&slot->hit, 1, memory_order_relaxed);
  return true;
}

NOINSTR void fxt_fn_prof_exit(uintptr_t fn, uint64_t start, uint64_t end)
{
  struct prof_slot *all = atomic_load_explicit(&prof.slots, memory_order_acquire);
  if (!all || start < atomic_load_explicit(&prof.since, memory_order_relaxed) || end < start)
    return;
  uint32_t cpu;
  struct prof_slot *slot = slot_of(cpu_table(all, &cpu), fn, false);
  if (!slot)
    return;
  __extension__ typedef unsigned __int128 u128;
  uint64_t ns = (uint64_t)(((u128)(end - start) *
                            atomic_load_explicit(&prof.ns_mul, memory_order_relaxed)) >> 32);
  atomic_fetch_add_explicit(&slot->time, ns, memory_order_relaxed);
  atomic_fetch_add_explicit(&slot->time2, ns * ns, memory_order_relaxed);
}

/* ---- control side (under fxt_fn_lock) -------------------------------------------------- */

void fxt_fn_prof_rate(uint64_t ticks_per_second)
{
  uint64_t tps = ticks_per_second ? ticks_per_second : 1000000000u;
  __extension__ typedef unsigned __int128 u128;
  atomic_store_explicit(&prof.ns_mul, (uint64_t)(((u128)1000000000u << 32) / tps),
                        memory_order_relaxed);
}

/* The tables, allocated the first time (sized for the functions table t lists), else zeroed:
 * the kernel's ftrace_profile_init, which resets a profile already made. */
static int tables_ready(const struct fxt_fn_table *t)
{
  struct prof_slot *all = atomic_load_explicit(&prof.slots, memory_order_relaxed);
  if (all) {
    size_t n = (size_t)prof.ncpus * (prof.mask + 1);
    for (size_t i = 0; i < n; i++) {
      atomic_store_explicit(&all[i].fn, 0, memory_order_relaxed);
      atomic_store_explicit(&all[i].hit, 0, memory_order_relaxed);
      atomic_store_explicit(&all[i].time, 0, memory_order_relaxed);
      atomic_store_explicit(&all[i].time2, 0, memory_order_relaxed);
    }
    for (uint32_t c = 0; c < prof.ncpus; c++)
      atomic_store_explicit(&prof.miss[c], 0, memory_order_relaxed);
    return 0;
  }
  uint32_t slots = 1024;
  while (slots < 65536 && slots < 2 * (uint64_t)t->n)
    slots *= 2;
  uint32_t ncpus = live_ncpus();
  ncpus = ncpus ? ncpus : 1;
  all = calloc((size_t)ncpus * slots, sizeof *all);
  _Atomic uint64_t *miss = calloc(ncpus, sizeof *miss);
  if (!all || !miss) {
    free(all);
    free(miss);
    return FXT_ENOMEM;
  }
  prof.ncpus = ncpus;
  prof.mask = slots - 1;
  prof.miss = miss;
  /* Release: a hook that loads the pointer with acquire sees ncpus, mask and miss. */
  atomic_store_explicit(&prof.slots, all, memory_order_release);
  return 0;
}

int fxt_fn_prof_parse(const char *v, unsigned long *out)
{
  /* kstrtoul_from_user reads 66 bytes at most: a sign, 64 digits, a newline. */
  const char *end = v + strnlen(v, 66), *p = v + (*v == '+'), *digits = p;
  unsigned long n = 0;
  bool overflow = false;
  for (; p < end && *p >= '0' && *p <= '9'; p++) {
    unsigned digit = (unsigned)(*p - '0');
    overflow |= n > (~0ul - digit) / 10;
    n = n * 10 + digit;
  }
  if (overflow) /* checked first, as _kstrtoull does */
    return FXT_ERANGE;
  if (p == digits || p != end)
    return FXT_EINVAL;
  *out = n;
  return 0;
}

int fxt_fn_prof_write(const char *v)
{
  unsigned long val;
  int rc = fxt_fn_prof_parse(v, &val);
  if (rc != 0)
    return rc;
  uint32_t mode = atomic_load_explicit(&fxt_fn_set.mode, memory_order_relaxed);
  if ((val != 0) == ((mode & FXT_FN_PROF) != 0))
    return 0; /* as the kernel's: only a change does anything (1 on 1 does not reset) */
  if (val == 0) {
    atomic_store_explicit(&fxt_fn_set.mode, mode & ~FXT_FN_PROF, memory_order_release);
    /* The entries back to their NOPs when no tracer needs them, after the mode. */
    return (mode & FXT_FN_TRACER) == FXT_FN_NOP ? fxt_fn_pe_sync(FXT_FN_NOP) : 0;
  }
  fxt_fn_runtime_setup();
  struct fxt_fn_table *t = fxt_fn_table_update();
  if (!t)
    return FXT_ENOMEM;
  rc = tables_ready(t);
  if (rc != 0)
    return rc;
  atomic_store_explicit(&prof.since, fxt_ticks(), memory_order_relaxed);
  rc = fxt_fn_pe_sync(mode | FXT_FN_PROF); /* the entries patched before the mode says so */
  if (rc != 0)
    return rc;
  /* Release: pairs with the hooks' acquire of the tables (above). */
  atomic_store_explicit(&fxt_fn_set.mode, mode | FXT_FN_PROF, memory_order_release);
  return 0;
}

/* ---- trace_stat/function<N> ------------------------------------------------------------ */

struct row {
  const char *name;
  uintptr_t fn;
  uint64_t hit, time, time2;
};

/* function_stat_cmp with the function graph tracer: by time, the longest first (trace_stat.c
 * inserts in descending order); ties by name, then address, for a stable order. */
static int row_cmp(const void *a, const void *b)
{
  const struct row *x = a, *y = b;
  if (x->time != y->time)
    return x->time < y->time ? 1 : -1;
  int c = strcmp(x->name, y->name);
  if (c != 0)
    return c;
  return x->fn < y->fn ? -1 : x->fn > y->fn;
}

/* trace_print_graph_duration: µs, then up to 3 digits of ns so that the number has at most 7
 * digits (and its point), " us ", spaces up to 8 characters of number. */
static void put_duration(struct fxt_tbuf *b, uint64_t ns)
{
  char us[24], frac[5];
  int len = snprintf(us, sizeof us, "%llu", (unsigned long long)(ns / 1000));
  fxt_tbuf_puts(b, us);
  if (len < 7) {
    snprintf(frac, (size_t)(8 - len) < sizeof frac ? (size_t)(8 - len) : sizeof frac, "%03u",
             (unsigned)(ns % 1000));
    fxt_tbuf_puts(b, ".");
    fxt_tbuf_puts(b, frac);
    len += (int)strlen(frac) + 1;
  }
  fxt_tbuf_puts(b, " us ");
  for (; len < 8; len++)
    fxt_tbuf_puts(b, " ");
}

/* function_stat_show: the name (30 columns), hits, then time, average and s^2 (the kernel's
 * variance formula, (n * sum(x^2) - sum(x)^2) / (n * (n - 1)), shown in µs^2 by dividing by
 * 1000 before the duration's own division). A row whose average is under tracing_thresh is
 * left out, as the kernel's. */
static void put_row(struct fxt_tbuf *b, const struct row *r, char *line, size_t size)
{
  snprintf(line, size, "  %-30.30s  %10llu    ", r->name, (unsigned long long)r->hit);
  fxt_tbuf_puts(b, line);
  uint64_t avg = r->time / r->hit;
  uint64_t var = 0, denom = r->hit * (r->hit - 1) * 1000;
  if (denom != 0)
    var = (r->hit * r->time2 - r->time * r->time) / denom;
  put_duration(b, r->time);
  fxt_tbuf_puts(b, "    ");
  put_duration(b, avg);
  fxt_tbuf_puts(b, "    ");
  put_duration(b, var);
  fxt_tbuf_puts(b, "\n");
}

void fxt_fn_prof_stat(uint32_t cpu, struct fxt_tbuf *b)
{
  fxt_tbuf_puts(b, "  Function                               Hit    Time            Avg"
                   "             s^2\n"
                   "  --------                               ---    ----            ---"
                   "             ---\n");
  pthread_mutex_lock(&fxt_fn_lock);
  struct prof_slot *all = atomic_load_explicit(&prof.slots, memory_order_acquire);
  if (!all || cpu >= prof.ncpus) {
    pthread_mutex_unlock(&fxt_fn_lock);
    return;
  }
  struct prof_slot *t = all + (size_t)cpu * (prof.mask + 1);
  struct fxt_fn_table *tab = fxt_fn_table_current();
  uint64_t thresh = fxt_fn_thresh_ns();
  struct row *rows = malloc(((size_t)prof.mask + 1) * sizeof *rows);
  char (*hex)[2 + 16 + 1] = malloc(((size_t)prof.mask + 1) * sizeof *hex);
  size_t n = 0;
  for (uint32_t i = 0; rows && hex && i <= prof.mask; i++) {
    struct row r = {NULL, atomic_load_explicit(&t[i].fn, memory_order_relaxed),
                    atomic_load_explicit(&t[i].hit, memory_order_relaxed),
                    atomic_load_explicit(&t[i].time, memory_order_relaxed),
                    atomic_load_explicit(&t[i].time2, memory_order_relaxed)};
    if (r.fn == 0 || r.hit == 0 || (thresh && r.time / r.hit < thresh))
      continue;
    const struct fxt_fn_sym *s = tab ? fxt_fn_sym_entry(tab, r.fn) : NULL;
    if (s) {
      r.name = s->name;
    } else {
      snprintf(hex[n], sizeof hex[n], "0x%lx", (unsigned long)r.fn);
      r.name = hex[n];
    }
    rows[n++] = r;
  }
  if (n > 1)
    qsort(rows, n, sizeof *rows, row_cmp);
  char line[128];
  for (size_t i = 0; i < n; i++)
    put_row(b, &rows[i], line, sizeof line);
  uint64_t miss = atomic_load_explicit(&prof.miss[cpu], memory_order_relaxed);
  if (miss || !rows || !hex) {
    snprintf(line, sizeof line, "  # %llu calls not counted: this CPU's table (%u slots) is full\n",
             (unsigned long long)miss, prof.mask + 1);
    fxt_tbuf_puts(b, rows && hex ? line : "  # out of memory: the table is not shown\n");
  }
  free(rows);
  free(hex);
  pthread_mutex_unlock(&fxt_fn_lock);
}
