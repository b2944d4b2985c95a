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
 * kernel's graph-time and sleep-time options, both on by default; fxtrace has neither
 * switch), at its return on the CPU it returns on, shown when that CPU counted the function -
 * the kernel's profile_graph_return. Times need the return: -finstrument-functions has an exit
 * hook; the patchable-entry engine redirects the return of every profiled call, as
 * function_graph does.
 * Calls deeper than the shadow stack (overflow) and calls that started before the profile
 * (re)started are not timed.
 *
 * N is the CPU, as the kernel's: trace_stat/function0 .. function<ncpus-1>, the CPUs of
 * per_cpu/ (live_ncpus). Tools that read the kernel's files (sum over function*) read these
 * unchanged; a CPU is where the time was spent whichever thread spent it.
 *
 * Tables, allocated at the first enable (control side) and never freed (a hook may be in one
 * at any time), each of mask + 1 slots with mask + 1 the power of two at least twice the
 * functions the symbol tables list (1024 at the least, 65536 at the most), open addressing:
 *  - a thread's own table, handed to each of the first THREAD_TABLES threads that count after
 *    a (re)start, whose slots are (function, CPU) pairs: one writer, so a count is a load and a
 *    store (no lock prefix); its nested calls (a signal handler inside the update: busy) go to
 *    the shared tables. Reading such a slot needs no more than its fields' relaxed loads.
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
#include "live.h"

#define NOINSTR __attribute__((no_instrument_function))
#define PROBES 32u       /* slots a lookup tries before the call is counted as a miss */
#define THREAD_TABLES 32 /* tables handed to the first threads that count (per reset) */

/* A function's counts: in a CPU's shared table (cpu unused), or in a thread's table, whose
 * slots are a function on a CPU (fn, cpu). */
struct prof_slot {
  _Atomic uintptr_t fn;   /* the function's entry address; 0 = free */
  _Atomic uint32_t cpu;   /* a thread's table: the CPU of these counts (stored before fn) */
  _Atomic uint64_t hit;   /* calls started on the CPU */
  _Atomic uint64_t time;  /* ns of the calls returned on the CPU */
  _Atomic uint64_t time2; /* the sum of their squares (ns^2; wraps as the kernel's) */
};

static struct {
  _Atomic(struct prof_slot *) slots; /* ncpus shared tables then THREAD_TABLES thread tables,
                                        mask + 1 slots each; NULL before the first enable
                                        (release/acquire: above) */
  _Atomic uint64_t *miss;            /* per CPU: calls whose function found no slot */
  uint32_t ncpus, mask;              /* written before slots is published, then fixed */
  _Atomic uint32_t gen;              /* raised at each reset: threads take a table again */
  _Atomic uint32_t claimed;          /* thread tables handed out since the last reset */
  _Atomic uint64_t since;            /* ticks when the profile last started */
  _Atomic uint64_t ns_mul;           /* ns per tick, 32.32 fixed point */
} prof = {.ns_mul = (uint64_t)1 << 32};

/* A thread's table: the owner thread only. busy is set while it updates its table: a signal
 * handler that interrupts the update (and calls a profiled function) counts in the shared
 * tables instead, so the owner's load-and-store adds never lose one of the handler's. */
struct prof_thread {
  struct prof_slot *t; /* NULL: none was left, the thread counts in the shared tables */
  uint32_t gen;        /* prof.gen it was handed out in; 0: none yet */
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
  return c < prof.ncpus ? c : prof.ncpus - 1;
}

/* The (fn, cpu) slot of table t: found, or (claim) a free one taken; NULL when none within
 * PROBES. A shared table's cpu is 0 in every slot. The claim stores cpu, then takes fn by a
 * compare-and-swap (release: pairs with the reader's acquire load of fn, which then sees the
 * slot's cpu); in a shared table two threads may claim at once (one wins, the other goes on),
 * and storing cpu (0) over a slot another thread claimed changes nothing. */
NOINSTR static struct prof_slot *slot_of(struct prof_slot *t, uintptr_t fn, uint32_t cpu,
                                         bool claim)
{
  uint32_t mask = prof.mask;
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
NOINSTR static struct prof_slot *own_table(struct prof_thread *th, struct prof_slot *all)
{
  if (th->busy)
    return NULL;
  uint32_t gen = atomic_load_explicit(&prof.gen, memory_order_acquire);
  if (FXT_LIKELY(th->gen == gen))
    return th->t;
  uint32_t i = atomic_fetch_add_explicit(&prof.claimed, 1, memory_order_relaxed);
  th->t = i < THREAD_TABLES ? all + ((size_t)prof.ncpus + i) * (prof.mask + 1) : NULL;
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
NOINSTR static bool count(struct prof_slot *all, uintptr_t fn, uint32_t cpu, uint64_t hit,
                          uint64_t ns)
{
  struct prof_thread *th = &prof_tls;
  struct prof_slot *own = own_table(th, all);
  if (own) {
    th->busy = 1;
    atomic_signal_fence(memory_order_seq_cst); /* busy before the slot, for a handler */
    struct prof_slot *slot = slot_of(own, fn, cpu, true);
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
  struct prof_slot *slot = slot_of(all + (size_t)cpu * (prof.mask + 1), fn, 0, true);
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
  struct prof_slot *all = atomic_load_explicit(&prof.slots, memory_order_acquire);
  if (!all || !wanted(s))
    return false;
  uint32_t cpu = this_cpu();
  if (count(all, fn, cpu, 1, 0))
    return true;
  atomic_fetch_add_explicit(&prof.miss[cpu], 1, memory_order_relaxed);
  return false;
}

NOINSTR void fxt_fn_prof_exit(uintptr_t fn, uint64_t start, uint64_t end)
{
  struct prof_slot *all = atomic_load_explicit(&prof.slots, memory_order_acquire);
  if (!all || start < atomic_load_explicit(&prof.since, memory_order_relaxed) || end < start)
    return;
  __extension__ typedef unsigned __int128 u128;
  uint64_t ns = (uint64_t)(((u128)(end - start) *
                            atomic_load_explicit(&prof.ns_mul, memory_order_relaxed)) >> 32);
  (void)count(all, fn, this_cpu(), 0, ns);
}

/* ---- control side (under fxt_fn_lock) -------------------------------------------------- */

void fxt_fn_prof_rate(uint64_t ticks_per_second)
{
  uint64_t tps = ticks_per_second ? ticks_per_second : 1000000000u;
  __extension__ typedef unsigned __int128 u128;
  atomic_store_explicit(&prof.ns_mul, (uint64_t)(((u128)1000000000u << 32) / tps),
                        memory_order_relaxed);
}

/* The tables, allocated the first time (sized for the functions table t lists), else zeroed
 * (the shared ones and the thread tables handed out), threads sent to take a table again
 * (gen): the kernel's ftrace_profile_init, which resets a profile already made. */
static int tables_ready(const struct fxt_fn_table *t)
{
  struct prof_slot *all = atomic_load_explicit(&prof.slots, memory_order_relaxed);
  if (all) {
    uint32_t taken = atomic_load_explicit(&prof.claimed, memory_order_relaxed);
    size_t n = ((size_t)prof.ncpus + (taken < THREAD_TABLES ? taken : THREAD_TABLES)) *
               (prof.mask + 1);
    for (size_t i = 0; i < n; i++) {
      atomic_store_explicit(&all[i].fn, 0, memory_order_relaxed);
      atomic_store_explicit(&all[i].cpu, 0, memory_order_relaxed);
      atomic_store_explicit(&all[i].hit, 0, memory_order_relaxed);
      atomic_store_explicit(&all[i].time, 0, memory_order_relaxed);
      atomic_store_explicit(&all[i].time2, 0, memory_order_relaxed);
    }
    for (uint32_t c = 0; c < prof.ncpus; c++)
      atomic_store_explicit(&prof.miss[c], 0, memory_order_relaxed);
    atomic_store_explicit(&prof.claimed, 0, memory_order_relaxed);
    /* Release: pairs with own_table's acquire (the tables zeroed before a thread takes one). */
    atomic_fetch_add_explicit(&prof.gen, 1, memory_order_release);
    return 0;
  }
  uint32_t slots = 1024;
  while (slots < 65536 && slots < 2 * (uint64_t)t->n)
    slots *= 2;
  uint32_t ncpus = live_ncpus();
  ncpus = ncpus ? ncpus : 1;
  all = calloc(((size_t)ncpus + THREAD_TABLES) * slots, sizeof *all);
  _Atomic uint64_t *miss = calloc(ncpus, sizeof *miss);
  if (!all || !miss) {
    free(all);
    free(miss);
    return FXT_ENOMEM;
  }
  prof.ncpus = ncpus;
  prof.mask = slots - 1;
  prof.miss = miss;
  atomic_store_explicit(&prof.gen, 1, memory_order_relaxed); /* a thread's 0: none yet */
  /* Release: a hook that loads the pointer with acquire sees ncpus, mask, miss and gen. */
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

static int fn_cmp(const void *a, const void *b)
{
  const struct row *x = a, *y = b;
  return x->fn < y->fn ? -1 : x->fn > y->fn;
}

/* cpu's counts, merged: its shared table's and those of the thread tables handed out; rows
 * (one a function, NULL names) and their number, or -1 (out of memory). */
static ptrdiff_t gather(struct prof_slot *all, uint32_t cpu, struct row **out)
{
  uint32_t taken = atomic_load_explicit(&prof.claimed, memory_order_relaxed);
  taken = taken < THREAD_TABLES ? taken : THREAD_TABLES;
  size_t n = 0, cap = 0, size = (size_t)prof.mask + 1;
  struct row *rows = NULL;
  for (uint32_t k = 0; k <= taken; k++) { /* k = 0: the shared table, then thread k - 1's */
    struct prof_slot *t = all + (k == 0 ? cpu : prof.ncpus + k - 1) * size;
    for (size_t i = 0; i < size; i++) {
      /* Acquire: pairs with slot_of's release claim (the slot's cpu is the claimer's). */
      uintptr_t fn = atomic_load_explicit(&t[i].fn, memory_order_acquire);
      if (fn == 0 || (k > 0 && atomic_load_explicit(&t[i].cpu, memory_order_relaxed) != cpu))
        continue;
      if (n == cap) {
        cap = cap ? 2 * cap : 256;
        struct row *bigger = realloc(rows, cap * sizeof *rows);
        if (!bigger) {
          free(rows);
          return -1;
        }
        rows = bigger;
      }
      rows[n++] = (struct row){NULL, fn, atomic_load_explicit(&t[i].hit, memory_order_relaxed),
                               atomic_load_explicit(&t[i].time, memory_order_relaxed),
                               atomic_load_explicit(&t[i].time2, memory_order_relaxed)};
    }
  }
  if (n > 1)
    qsort(rows, n, sizeof *rows, fn_cmp);
  size_t w = 0;
  for (size_t i = 0; i < n; i++) {
    if (w > 0 && rows[w - 1].fn == rows[i].fn) {
      rows[w - 1].hit += rows[i].hit;
      rows[w - 1].time += rows[i].time;
      rows[w - 1].time2 += rows[i].time2;
    } else {
      rows[w++] = rows[i];
    }
  }
  *out = rows;
  return (ptrdiff_t)w;
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
  struct fxt_fn_table *tab = fxt_fn_table_current();
  uint64_t thresh = fxt_fn_thresh_ns();
  struct row *rows = NULL;
  ptrdiff_t got = gather(all, cpu, &rows);
  size_t n = got > 0 ? (size_t)got : 0, shown = 0;
  char (*hex)[2 + 16 + 1] = n ? malloc(n * sizeof *hex) : NULL;
  for (size_t i = 0; hex && i < n; i++) {
    struct row r = rows[i];
    if (r.hit == 0 || (thresh && r.time / r.hit < thresh))
      continue;
    const struct fxt_fn_sym *s = tab ? fxt_fn_sym_entry(tab, r.fn) : NULL;
    if (s) {
      r.name = s->name;
    } else {
      snprintf(hex[shown], sizeof hex[shown], "0x%lx", (unsigned long)r.fn);
      r.name = hex[shown];
    }
    rows[shown++] = r;
  }
  if (shown > 1)
    qsort(rows, shown, sizeof *rows, row_cmp);
  char line[128];
  for (size_t i = 0; i < shown; i++)
    put_row(b, &rows[i], line, sizeof line);
  uint64_t miss = atomic_load_explicit(&prof.miss[cpu], memory_order_relaxed);
  if (got < 0 || (n && !hex)) {
    fxt_tbuf_puts(b, "  # out of memory: the table is not shown\n");
  } else if (miss) {
    snprintf(line, sizeof line, "  # %llu calls not counted: this CPU's table (%u slots) is full\n",
             (unsigned long long)miss, prof.mask + 1);
    fxt_tbuf_puts(b, line);
  }
  free(rows);
  free(hex);
  pthread_mutex_unlock(&fxt_fn_lock);
}
