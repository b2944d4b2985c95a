/* functions_ctl.c - the function tracer's settings: current_tracer, the function filters,
 * max_graph_depth, tracing_thresh and function_profile_enabled (its work: functions_prof.c),
 * as ftrace's files read and write them (texts and errnos of the kernel's
 * kernel/trace/ftrace.c and trace.c), and FXTRACE's keys for them.
 *
 * Everything here runs on the control side (tracefs writes, session start) under
 * fxt_fn_lock; the hooks read what it sets relaxed (functions_int.h: a change reaches each
 * thread's next call). Filters are kept as the kernel keeps them: as flags on the functions
 * the globs matched when written (a library loaded later is not matched by an older glob).
 */
#define _GNU_SOURCE
#include <fxtrace/errors.h>
#include <fxtrace/tracepoint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "functions_int.h"
#include "intern.h"
#include "tracefs_int.h"

pthread_mutex_t fxt_fn_lock = PTHREAD_MUTEX_INITIALIZER;

void fxt_fn_atfork_prepare(void)
{
  pthread_mutex_lock(&fxt_fn_lock);
}

void fxt_fn_atfork_parent(void)
{
  pthread_mutex_unlock(&fxt_fn_lock);
}

void fxt_fn_atfork_child(void)
{
  pthread_mutex_init(&fxt_fn_lock, NULL);
}

static uint64_t thresh_us;          /* tracing_thresh as written */
static uint64_t rate = 1000000000u; /* trace clock ticks per second */

static const char *const k_tracers[] = {"nop", "function", "function_graph"};

static void set_thresh_ticks(void)
{
  /* µs to ticks, saturated (a huge threshold only means nothing is written). */
  uint64_t t = thresh_us > UINT64_MAX / rate ? UINT64_MAX : thresh_us * rate / 1000000u;
  atomic_store_explicit(&fxt_fn_set.thresh_ticks, t, memory_order_relaxed);
}

uint64_t fxt_fn_thresh_ns(void)
{
  return thresh_us > UINT64_MAX / 1000u ? UINT64_MAX : thresh_us * 1000u;
}

void fxt_fn_set_rate(uint64_t ticks_per_second)
{
  pthread_mutex_lock(&fxt_fn_lock);
  rate = ticks_per_second ? ticks_per_second : 1000000000u;
  set_thresh_ticks();
  fxt_fn_prof_rate(rate);
  pthread_mutex_unlock(&fxt_fn_lock);
}

/* current_tracer: the table built and the names the records use interned before the mode is
 * stored, so a hook that sees the mode finds them. */
static int set_tracer(const char *v)
{
  uint32_t mode = 0;
  while (mode < 3 && strcmp(v, k_tracers[mode]) != 0)
    mode++;
  if (mode == 3)
    return FXT_EINVAL;
  /* The profiler's bit (functions_prof.c) is kept: it counts whatever the tracer. */
  uint32_t prof = atomic_load_explicit(&fxt_fn_set.mode, memory_order_relaxed) & FXT_FN_PROF;
  if ((mode | prof) == atomic_load_explicit(&fxt_fn_set.mode, memory_order_relaxed))
    return 0;
  if (mode != FXT_FN_NOP) {
    fxt_fn_runtime_setup();
    if (mode == FXT_FN_FUNCTION)
      fxt_fn_table_all(); /* a caller is named wherever it is (libc's dl_iterate_phdr) */
    if (!fxt_fn_table_update())
      return FXT_ENOMEM;
    int cat = fxt_intern_cstr("function"), parent = fxt_intern_cstr("parent");
    int depth = fxt_intern_cstr("depth");
    if (cat <= 0 || parent <= 0 || depth <= 0)
      return FXT_ENOSPC;
    atomic_store_explicit(&fxt_fn_set.depth_name, (uint32_t)depth, memory_order_relaxed);
    atomic_store_explicit(&fxt_fn_set.category, (uint32_t)cat, memory_order_relaxed);
    atomic_store_explicit(&fxt_fn_set.parent_name, (uint32_t)parent, memory_order_relaxed);
    /* The patchable entries enabled before the mode is stored (a hook that runs first sees
     * nop and returns); a refusal leaves everything as it was. */
    int rc = fxt_fn_pe_sync(mode | prof);
    if (rc != 0)
      return rc;
  }
  /* Threads drop the frames of the tracer before: their exits would be the new one's. */
  atomic_fetch_add_explicit(&fxt_fn_set.gen, 1, memory_order_relaxed);
  /* Release: a hook that loads the mode (relaxed, then the table with acquire) finds the
   * table; the settings it reads relaxed may lag by a call. */
  fxt_fn_mode_store(mode | prof);
  /* Off: the entries back to their NOPs, after the mode (a hook still reached sees nop).
   * Returns already redirected keep working: the return trampoline never goes away. */
  return mode == FXT_FN_NOP ? fxt_fn_pe_sync(mode | prof) : 0;
}

/* The patchable entries for filters just changed. */
static int resync(void)
{
  return fxt_fn_pe_sync(atomic_load_explicit(&fxt_fn_set.mode, memory_order_relaxed));
}

static uint32_t flag_of(enum fxt_fn_file file)
{
  switch (file) {
  case FXT_FN_SET_FTRACE_FILTER:
    return FXT_FN_F_FILTER;
  case FXT_FN_SET_FTRACE_NOTRACE:
    return FXT_FN_F_NOTRACE;
  case FXT_FN_SET_GRAPH_FUNCTION:
    return FXT_FN_F_GRAPH;
  case FXT_FN_SET_GRAPH_NOTRACE:
    return FXT_FN_F_GRAPH_NOTRACE;
  default:
    return 0;
  }
}

static uint32_t flags_any; /* the flags of every function ORed (recount) */

/* fxt_fn_set.rules from the flags and max_graph_depth. */
static void set_rules(void)
{
  uint32_t max = atomic_load_explicit(&fxt_fn_set.max_depth, memory_order_relaxed);
  atomic_store_explicit(&fxt_fn_set.rules, flags_any | (max != 0), memory_order_relaxed);
}

/* has_filter, has_graph and rules from the flags. */
static void recount(const struct fxt_fn_table *t)
{
  uint32_t any = 0;
  for (uint32_t i = 0; t && i < t->n; i++)
    any |= atomic_load_explicit(&t->syms[i].flags, memory_order_relaxed);
  flags_any = any;
  set_rules();
  atomic_store_explicit(&fxt_fn_set.has_filter, (any & FXT_FN_F_FILTER) != 0,
                        memory_order_relaxed);
  atomic_store_explicit(&fxt_fn_set.has_graph, (any & FXT_FN_F_GRAPH) != 0,
                        memory_order_relaxed);
}

/* A ':' that is not part of a C++ "::": the kernel's command or module syntax
 * (func:traceon, :mod:name), which fxtrace does not have. */
static bool has_command(const char *g)
{
  for (const char *c = strchr(g, ':'); c; c = strchr(c + 1, ':')) {
    if (c[1] == ':') {
      c++;
      continue;
    }
    return true;
  }
  return false;
}

/* Sets (or with '!' clears) flag on the functions each glob of v matches; v is globs
 * separated by blanks (C++ names are matched demangled: ns::K::f* is one). All or nothing: a
 * glob that matches no function is EINVAL (the kernel's), and so is a command or module. */
static int set_flags(struct fxt_fn_table *t, uint32_t flag, const char *v)
{
  char *copy = strdup(v), *save = NULL;
  if (!copy)
    return FXT_ENOMEM;
  int rc = 0;
  for (int pass = 0; pass < 2 && rc == 0; pass++) { /* check all, then apply */
    strcpy(copy, v);
    for (char *g = strtok_r(copy, " \t\n", &save); g && rc == 0;
         g = strtok_r(NULL, " \t\n", &save)) {
      bool clear = g[0] == '!';
      g += clear;
      if (has_command(g) || !*g) {
        rc = FXT_EINVAL;
        break;
      }
      bool any = false;
      for (uint32_t i = 0; i < t->n; i++) {
        if (!t->syms[i].traceable || !fxt_glob_match(g, t->syms[i].name))
          continue;
        any = true;
        if (pass == 1 && clear)
          atomic_fetch_and_explicit(&t->syms[i].flags, ~flag, memory_order_relaxed);
        else if (pass == 1)
          atomic_fetch_or_explicit(&t->syms[i].flags, flag, memory_order_relaxed);
      }
      if (!any)
        rc = FXT_EINVAL;
    }
  }
  free(copy);
  recount(t);
  return rc;
}

void fxt_fn_file_truncate(enum fxt_fn_file file)
{
  uint32_t flag = flag_of(file);
  pthread_mutex_lock(&fxt_fn_lock);
  struct fxt_fn_table *t = fxt_fn_table_current();
  for (uint32_t i = 0; flag && t && i < t->n; i++)
    atomic_fetch_and_explicit(&t->syms[i].flags, ~flag, memory_order_relaxed);
  recount(t);
  (void)resync(); /* only enables sites: the switch on made their pages writable already */
  pthread_mutex_unlock(&fxt_fn_lock);
}

int fxt_fn_file_write(enum fxt_fn_file file, const char *v)
{
  unsigned long n;
  int rc = FXT_EINVAL;
  pthread_mutex_lock(&fxt_fn_lock);
  switch (file) {
  case FXT_FN_CURRENT_TRACER: {
    char name[32];
    if (sscanf(v, " %31s", name) == 1)
      rc = set_tracer(name);
    break;
  }
  case FXT_FN_SET_FTRACE_FILTER:
  case FXT_FN_SET_FTRACE_NOTRACE:
  case FXT_FN_SET_GRAPH_FUNCTION:
  case FXT_FN_SET_GRAPH_NOTRACE: {
    struct fxt_fn_table *t = fxt_fn_table_update();
    rc = t ? set_flags(t, flag_of(file), v) : FXT_ENOMEM;
    if (rc == 0)
      rc = resync();
    break;
  }
  case FXT_FN_MAX_GRAPH_DEPTH:
    /* The kernel's graph_depth_write: kstrtoul, stored in an unsigned int (cut as there). */
    if ((rc = fxt_tfs_kstrtoul(v, &n)) == 0) {
      atomic_store_explicit(&fxt_fn_set.max_depth, (uint32_t)n, memory_order_relaxed);
      set_rules();
    }
    break;
  case FXT_FN_TRACING_THRESH: /* the kernel's tracing_nsecs_write: kstrtoul (µs) */
    if ((rc = fxt_tfs_kstrtoul(v, &n)) == 0) {
      thresh_us = n;
      set_thresh_ticks();
    }
    break;
  case FXT_FN_FUNCTION_PROFILE_ENABLED:
    rc = fxt_fn_prof_write(v);
    break;
  case FXT_FN_GRAPH_TIME:
    rc = fxt_fn_graph_time_write(v);
    break;
  default:
    break;
  }
  pthread_mutex_unlock(&fxt_fn_lock);
  return rc;
}

/* The functions with flag, a name a line; empty: the kernel's line for none. */
static void list_flag(struct fxt_tbuf *b, uint32_t flag, const char *none)
{
  struct fxt_fn_table *t = fxt_fn_table_current();
  size_t before = b->len;
  for (uint32_t i = 0; t && i < t->n; i++)
    if (atomic_load_explicit(&t->syms[i].flags, memory_order_relaxed) & flag) {
      fxt_tbuf_puts(b, t->syms[i].name);
      fxt_tbuf_puts(b, "\n");
    }
  if (b->len == before)
    fxt_tbuf_puts(b, none);
}

void fxt_fn_file_read(enum fxt_fn_file file, struct fxt_tbuf *b)
{
  char num[32];
  pthread_mutex_lock(&fxt_fn_lock);
  switch (file) {
  case FXT_FN_AVAILABLE_TRACERS:
    fxt_tbuf_puts(b, "function_graph function nop\n");
    break;
  case FXT_FN_CURRENT_TRACER:
    fxt_tbuf_puts(b, k_tracers[atomic_load_explicit(&fxt_fn_set.mode, memory_order_relaxed) &
                               FXT_FN_TRACER]);
    fxt_tbuf_puts(b, "\n");
    break;
  case FXT_FN_AVAILABLE_FILTER_FUNCTIONS: {
    /* As the kernel's: a function a line, a module's with " [module]" (a library here). */
    struct fxt_fn_table *t = fxt_fn_table_update();
    for (uint32_t i = 0; t && i < t->n; i++) {
      if (!t->syms[i].traceable)
        continue; /* kept to name callers (the function tracer) */
      fxt_tbuf_puts(b, t->syms[i].name);
      if (t->syms[i].obj != 0) {
        fxt_tbuf_puts(b, " [");
        fxt_tbuf_puts(b, t->objs[t->syms[i].obj]);
        fxt_tbuf_puts(b, "]");
      }
      fxt_tbuf_puts(b, "\n");
    }
    break;
  }
  case FXT_FN_SET_FTRACE_FILTER:
  case FXT_FN_SET_GRAPH_FUNCTION:
    list_flag(b, flag_of(file), "#### all functions enabled ####\n");
    break;
  case FXT_FN_SET_FTRACE_NOTRACE:
  case FXT_FN_SET_GRAPH_NOTRACE:
    list_flag(b, flag_of(file), "#### no functions disabled ####\n");
    break;
  case FXT_FN_MAX_GRAPH_DEPTH:
    snprintf(num, sizeof num, "%u\n",
             atomic_load_explicit(&fxt_fn_set.max_depth, memory_order_relaxed));
    fxt_tbuf_puts(b, num);
    break;
  case FXT_FN_TRACING_THRESH:
    snprintf(num, sizeof num, "%llu\n", (unsigned long long)thresh_us);
    fxt_tbuf_puts(b, num);
    break;
  case FXT_FN_FUNCTION_PROFILE_ENABLED:
    fxt_tbuf_puts(b, atomic_load_explicit(&fxt_fn_set.mode, memory_order_relaxed) & FXT_FN_PROF
                         ? "1\n"
                         : "0\n");
    break;
  case FXT_FN_GRAPH_TIME:
    fxt_tbuf_puts(b, atomic_load_explicit(&fxt_fn_set.prof_self, memory_order_relaxed) ? "0\n"
                                                                                        : "1\n");
    break;
  }
  pthread_mutex_unlock(&fxt_fn_lock);
}

/* ---- FXTRACE -------------------------------------------------------------------------- */

static const struct {
  const char *key;
  enum fxt_fn_file file;
} k_keys[] = {
    {"ftrace_filter", FXT_FN_SET_FTRACE_FILTER},   {"ftrace_notrace", FXT_FN_SET_FTRACE_NOTRACE},
    {"graph_function", FXT_FN_SET_GRAPH_FUNCTION}, {"graph_notrace", FXT_FN_SET_GRAPH_NOTRACE},
    {"max_graph_depth", FXT_FN_MAX_GRAPH_DEPTH},   {"tracing_thresh", FXT_FN_TRACING_THRESH},
    {"graph_time", FXT_FN_GRAPH_TIME}, /* before the profile starts */
    {"function_profile", FXT_FN_FUNCTION_PROFILE_ENABLED}, /* after the filters, as tracer */
    {"tracer", FXT_FN_CURRENT_TRACER}, /* last: the filters are in place when it starts */
};

void fxt_fn_apply_config(const char *text)
{
  for (size_t k = 0; k < sizeof k_keys / sizeof k_keys[0]; k++) {
    char value[4096];
    if (fxt_config_value(text, k_keys[k].key, value, sizeof value) <= 0)
      continue;
    for (char *c = value; *c; c++) /* a list in FXTRACE is separated by ',' */
      if (*c == ',')
        *c = ' ';
    int rc = fxt_fn_file_write(k_keys[k].file, value);
    if (rc < 0)
      fprintf(stderr, "fxtrace: FXTRACE: %s=%s: %s\n", k_keys[k].key, value, fxt_strerror(rc));
  }
}
