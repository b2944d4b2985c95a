/* functions_prof_ctl.c - the function profiler's control side: function_profile_enabled
 * written (its tables allocated or reset), the clock's rate, and trace_stat/function<N> read.
 * None of it runs on a call: compiled for size (CMakeLists.txt, FXT_COLD_SOURCES). The design
 * and the hooks' side are in functions_prof.c. */
#define _GNU_SOURCE
#include <fxtrace/errors.h>
#include <fxtrace/fxtrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "functions_int.h"
#include "functions_prof_int.h"
#include "live.h"
#include "tracefs_int.h"

/* ---- control side (under fxt_fn_lock) -------------------------------------------------- */

void fxt_fn_prof_rate(uint64_t ticks_per_second)
{
  uint64_t tps = ticks_per_second ? ticks_per_second : 1000000000u;
  __extension__ typedef unsigned __int128 u128;
  atomic_store_explicit(&fxt_prof.ns_mul, (uint64_t)(((u128)1000000000u << 32) / tps),
                        memory_order_relaxed);
}

/* The tables, allocated the first time (sized for the functions table t lists), else zeroed
 * (the shared ones and the thread tables handed out), threads sent to take a table again
 * (gen): the kernel's ftrace_profile_init, which resets a profile already made. */
static int tables_ready(const struct fxt_fn_table *t)
{
  struct fxt_prof_slot *all = atomic_load_explicit(&fxt_prof.slots, memory_order_relaxed);
  if (all) {
    uint32_t taken = atomic_load_explicit(&fxt_prof.claimed, memory_order_relaxed);
    taken = taken < FXT_PROF_THREAD_TABLES ? taken : FXT_PROF_THREAD_TABLES;
    size_t n = ((size_t)fxt_prof.ncpus + taken) * (fxt_prof.mask + 1);
    for (size_t i = 0; i < n; i++) {
      atomic_store_explicit(&all[i].fn, 0, memory_order_relaxed);
      atomic_store_explicit(&all[i].cpu, 0, memory_order_relaxed);
      atomic_store_explicit(&all[i].hit, 0, memory_order_relaxed);
      atomic_store_explicit(&all[i].time, 0, memory_order_relaxed);
      atomic_store_explicit(&all[i].time2, 0, memory_order_relaxed);
    }
    for (uint32_t c = 0; c < fxt_prof.ncpus; c++)
      atomic_store_explicit(&fxt_prof.miss[c], 0, memory_order_relaxed);
    atomic_store_explicit(&fxt_prof.claimed, 0, memory_order_relaxed);
    /* Release: pairs with own_table's acquire (the tables zeroed before a thread takes one). */
    atomic_fetch_add_explicit(&fxt_prof.gen, 1, memory_order_release);
    return 0;
  }
  uint32_t slots = 1024;
  while (slots < 65536 && slots < 2 * (uint64_t)t->n)
    slots *= 2;
  uint32_t ncpus = live_ncpus();
  ncpus = ncpus ? ncpus : 1;
  all = calloc(((size_t)ncpus + FXT_PROF_THREAD_TABLES) * slots, sizeof *all);
  _Atomic uint64_t *miss = calloc(ncpus, sizeof *miss);
  if (!all || !miss) {
    free(all);
    free(miss);
    return FXT_ENOMEM;
  }
  fxt_prof.ncpus = ncpus;
  fxt_prof.mask = slots - 1;
  fxt_prof.miss = miss;
  atomic_store_explicit(&fxt_prof.gen, 1, memory_order_relaxed); /* a thread's 0: none yet */
  /* Release: a hook that loads the pointer with acquire sees ncpus, mask, miss and gen. */
  atomic_store_explicit(&fxt_prof.slots, all, memory_order_release);
  return 0;
}

int fxt_fn_prof_write(const char *v)
{
  unsigned long val;
  int rc = fxt_tfs_kstrtoul(v, &val);
  if (rc != 0)
    return rc;
  uint32_t mode = atomic_load_explicit(&fxt_fn_set.mode, memory_order_relaxed);
  if ((val != 0) == ((mode & FXT_FN_PROF) != 0))
    return 0; /* as the kernel's: only a change does anything (1 on 1 does not reset) */
  if (val == 0) {
    fxt_fn_mode_store(mode & ~FXT_FN_PROF);
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
  atomic_store_explicit(&fxt_prof.since, fxt_ticks(), memory_order_relaxed);
  rc = fxt_fn_pe_sync(mode | FXT_FN_PROF); /* the entries patched before the mode says so */
  if (rc != 0)
    return rc;
  /* Release: pairs with the hooks' acquire of the tables (above). */
  fxt_fn_mode_store(mode | FXT_FN_PROF);
  return 0;
}

/* options/graph-time (under fxt_fn_lock): the kernel's trace_options_core_write, kstrtoul in
 * base 10 then 0 or 1 (anything else EINVAL), and set_tracer_flag's
 * ftrace_graph_graph_time_control: the flag only, the profile kept (functions_prof.c, "Self
 * time"). */
int fxt_fn_graph_time_write(const char *v)
{
  bool on;
  int rc = fxt_tfs_kstrto01(v, &on);
  if (rc == 0)
    atomic_store_explicit(&fxt_fn_set.prof_self, !on, memory_order_relaxed);
  return rc;
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
static ptrdiff_t gather(struct fxt_prof_slot *all, uint32_t cpu, struct row **out)
{
  uint32_t taken = atomic_load_explicit(&fxt_prof.claimed, memory_order_relaxed);
  taken = taken < FXT_PROF_THREAD_TABLES ? taken : FXT_PROF_THREAD_TABLES;
  size_t n = 0, cap = 0, size = (size_t)fxt_prof.mask + 1;
  struct row *rows = NULL;
  for (uint32_t k = 0; k <= taken; k++) { /* k = 0: the shared table, then thread k - 1's */
    struct fxt_prof_slot *t = all + (k == 0 ? cpu : fxt_prof.ncpus + k - 1) * size;
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
  struct fxt_prof_slot *all = atomic_load_explicit(&fxt_prof.slots, memory_order_acquire);
  if (!all || cpu >= fxt_prof.ncpus) {
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
  uint64_t miss = atomic_load_explicit(&fxt_prof.miss[cpu], memory_order_relaxed);
  if (got < 0 || (n && !hex)) {
    fxt_tbuf_puts(b, "  # out of memory: the table is not shown\n");
  } else if (miss) {
    snprintf(line, sizeof line, "  # %llu calls not counted: this CPU's table (%u slots) is full\n",
             (unsigned long long)miss, fxt_prof.mask + 1);
    fxt_tbuf_puts(b, line);
  }
  free(rows);
  free(hex);
  pthread_mutex_unlock(&fxt_fn_lock);
}
