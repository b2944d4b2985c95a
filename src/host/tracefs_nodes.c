/* tracefs_nodes.c - what the files of the tracefs tree hold and do (tracefs.c resolves the
 * paths and keeps the open files): the events of the registry as enable, id, format and filter
 * files and as set_event and available_events; the content of every read file, made at open;
 * and what a write to each writable file applies, all of it or nothing, with the kernel's
 * errno.
 */
#define _GNU_SOURCE
#include <fxtrace/filter.h>
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/fgraph_text.h"
#include "../base/ftrace_format.h"
#include "control.h"
#include "evtrig.h"
#include "filters.h"
#include "functions.h"
#include "live.h"
#include "registry.h"
#include "tracefs_int.h"

/* The kernel's events/ftrace/print, written by trace_marker (printed "tracing_mark_write"). */
FXT_TRACEPOINT(ftrace, print, "%s", (str, buf, 1024));

/* The library's section of tracepoints (this one), registered as fxtrace.h's units register
 * theirs, but once for all the library's units (fxtrace.h); before the library's other
 * constructors (priority 101, the first one not reserved), as its first unit's was: an FXTRACE
 * session (session.c) starts with the section registered. */
__attribute__((constructor(101))) static void register_library_section(void)
{
  fxt_register_section(__start_fxt_tp, __stop_fxt_tp);
}
/* The library going (the process's exit, after the destructors of every object that uses it,
 * or its unload): a running session stops first - its consumer is this library's code, and the
 * stop writes every description the file needs - so that the section's unregistering does not
 * wait for a consumer pass to describe it (fxt_unregister_section: 1.5-3 ms at every traced
 * program's exit on a KVM guest, the consumer in a warm-up step). An FXTRACE session's own
 * stop (session.c, at exit) then finds none. */
__attribute__((destructor)) static void unregister_library_section(void)
{
  (void)fxt_session_stop(); /* FXT_ENOENT without a session */
  fxt_unregister_section(__start_fxt_tp, __stop_fxt_tp);
}

/* ---- the events of the registry ------------------------------------------------------ */

static int find_fn(void *ctx, struct fxt_tracepoint *tp)
{
  struct fxt_tfs_find *f = ctx;
  if ((f->sys && strcmp(tp->system, f->sys) != 0) || (f->ev && strcmp(tp->name, f->ev) != 0))
    return 0;
  if (!f->tp)
    f->tp = tp;
  if (atomic_load_explicit(&tp->enabled, memory_order_relaxed))
    f->on++;
  else
    f->off++;
  return 0;
}

struct fxt_tfs_find fxt_tfs_find(const char *sys, const char *ev)
{
  struct fxt_tfs_find f = {sys, ev, NULL, 0, 0};
  fxt_tracepoint_foreach(find_fn, &f);
  return f;
}

static bool seen(struct fxt_tbuf *b, const char *name, char sep)
{
  size_t n = strlen(name);
  for (size_t i = 0; i + n <= b->len; i++) {
    if ((i == 0 || b->data[i - 1] == sep) && memcmp(b->data + i, name, n) == 0 &&
        (i + n == b->len || b->data[i + n] == sep))
      return true;
    while (i < b->len && b->data[i] != sep)
      i++;
  }
  return false;
}

int fxt_tfs_names_fn(void *ctx, struct fxt_tracepoint *tp)
{
  struct fxt_tfs_names *n = ctx;
  if (n->sys && strcmp(tp->system, n->sys) != 0)
    return 0;
  if (n->enabled && !atomic_load_explicit(&tp->enabled, memory_order_relaxed))
    return 0;
  char name[700];
  if (n->systems)
    snprintf(name, sizeof(name), "%s", tp->system);
  else if (n->sys)
    snprintf(name, sizeof(name), "%s", tp->name);
  else
    snprintf(name, sizeof(name), "%s:%s", tp->system, tp->name);
  char sep = n->lines ? '\n' : '\0';
  if (!seen(n->b, name, sep)) {
    fxt_tbuf_puts(n->b, name);
    fxt_tbuf_put(n->b, &sep, 1);
  }
  return 0;
}

/* ---- content of read files ------------------------------------------------------------- */

static void put_num(struct fxt_tbuf *b, const char *fmt, uint64_t v)
{
  char line[64];
  int n = snprintf(line, sizeof(line), fmt, (unsigned long long)v);
  fxt_tbuf_put(b, line, (size_t)n);
}

static void put_ts(struct fxt_tbuf *b, const char *label, uint64_t ns)
{
  char line[96];
  uint64_t us = (ns + 500) / 1000;
  int n = snprintf(line, sizeof(line), "%s%5llu.%06llu\n", label,
                   (unsigned long long)(us / 1000000), (unsigned long long)(us % 1000000));
  fxt_tbuf_put(b, line, (size_t)n);
}

/* "0", "1", "X" (mixed) or "?" (no event). */
static void put_enable(struct fxt_tbuf *b, const struct fxt_tfs_find *f)
{
  fxt_tbuf_puts(b, f->on + f->off == 0 ? "?\n" : f->off == 0 ? "1\n" : f->on == 0 ? "0\n" : "X\n");
}

static void stats_text(struct fxt_tbuf *b, uint64_t entries, uint64_t overrun, uint64_t bytes,
                       uint64_t oldest_ns, uint64_t dropped, uint64_t read)
{
  put_num(b, "entries: %llu\n", entries);
  put_num(b, "overrun: %llu\n", overrun);
  put_num(b, "commit overrun: %llu\n", 0);
  put_num(b, "bytes: %llu\n", bytes);
  put_ts(b, "oldest event ts: ", oldest_ns);
  put_ts(b, "now ts: ", live_now_ns());
  put_num(b, "dropped events: %llu\n", dropped);
  put_num(b, "read events: %llu\n", read);
}

/* options/: the kernel's function_graph options of the layout (fgraph_text.h, the table
 * fxtrace report -O reads too), then the function profiler's graph-time (the function tracer's
 * file FXT_FN_GRAPH_TIME, functions.h; the kernel lists it with the function graph tracer
 * configured, fxtrace always). f->option indexes them in that order. */
static bool is_graph_time(int i)
{
  return fxt_fgraph_option((size_t)i) == NULL;
}

const char *fxt_tfs_option_name(int i)
{
  const struct fxt_fgraph_option *o = i >= 0 ? fxt_fgraph_option((size_t)i) : NULL;
  if (o != NULL)
    return o->name;
  return i > 0 && fxt_fgraph_option((size_t)i - 1) != NULL ? "graph-time" : NULL;
}

void fxt_tfs_fill(struct fxt_fs_file *f)
{
  struct fxt_tbuf *b = &f->text;
  char tmp[65536];
  switch (f->node) {
  case N_EVENTS_ENABLE: {
    struct fxt_tfs_find x = fxt_tfs_find(NULL, NULL);
    put_enable(b, &x);
    break;
  }
  case N_SYS_ENABLE: {
    struct fxt_tfs_find x = fxt_tfs_find(f->sys, NULL);
    put_enable(b, &x);
    break;
  }
  case N_EV_ENABLE: {
    struct fxt_tfs_find x = fxt_tfs_find(f->sys, f->ev);
    int soft = fxt_evtrig_soft_state(f->sys, f->ev); /* soft mode: "0*" or "1*" */
    if (soft >= 0)
      fxt_tbuf_puts(b, soft ? "1*\n" : "0*\n");
    else
      put_enable(b, &x);
    break;
  }
  case N_EV_ID: {
    struct fxt_tfs_find x = fxt_tfs_find(f->sys, f->ev);
    if (x.tp)
      put_num(b, "%llu\n", x.tp->id);
    break;
  }
  case N_EV_FORMAT: {
    struct fxt_tfs_find x = fxt_tfs_find(f->sys, f->ev);
    struct fxt_field fields[FXT_TP_FIELDS_MAX];
    if (x.tp)
      fxt_tp_format_fields(b, x.tp, x.tp->id, fields,
                           fxt_registry_event_fields(x.tp, fields));
    break;
  }
  case N_EV_FILTER:
    fxt_filters_read_event(f->sys, f->ev, b);
    break;
  case N_SYS_FILTER:
    fxt_tbuf_puts(b, FXT_FILTER_SYSTEM_DEFAULT);
    break;
  case N_EV_TRIGGER:
    fxt_evtrig_read(f->sys, f->ev, b);
    break;
  case N_EV_HIST:
    fxt_evtrig_hist_read(f->sys, f->ev, b);
    break;
  case N_ERROR_LOG:
    fxt_filters_error_log(b);
    break;
  case N_SET_EVENT:
  case N_AVAILABLE_EVENTS: {
    struct fxt_tfs_names n = {b, NULL, false, f->node == N_SET_EVENT, true};
    fxt_tracepoint_foreach(fxt_tfs_names_fn, &n);
    break;
  }
  case N_SET_EVENT_PID:
  case N_SET_EVENT_NOTRACE_PID:
    fxt_control_pids(f->node == N_SET_EVENT_NOTRACE_PID, tmp, sizeof(tmp));
    fxt_tbuf_puts(b, tmp);
    break;
  case N_TRACE: {
    /* What the threads emitted until now, as the kernel's shows: a flight recorder's buffers
     * copied as they are (they keep it all), another session's drained into the view. */
    bool held = fxt_control_view_hold();
    if (!held)
      fxt_session_flush();
    f->iter = live_iter_open(b);
    if (held) { /* the copies are the consumer's again at the release: all of them now */
      while (f->iter && live_iter_next(f->iter, b, SIZE_MAX))
        ;
      fxt_control_view_release();
    }
    break;
  }
  case N_SAVED_CMDLINES:
    live_cmdlines(b);
    break;
  case N_SAVED_CMDLINES_SIZE:
    put_num(b, "%llu\n", live_cmdlines_size());
    break;
  case N_TRACING_ON:
    fxt_tbuf_puts(b, fxt_control_recording() ? "1\n" : "0\n");
    break;
  case N_OPTION: {
    if (is_graph_time(f->option)) {
      fxt_fn_file_read(FXT_FN_GRAPH_TIME, b);
      break;
    }
    const struct fxt_fgraph_option *o = fxt_fgraph_option((size_t)f->option);
    bool set = (live_fg_options() & o->bit) != 0;
    fxt_tbuf_puts(b, set == o->set_is_on ? "1\n" : "0\n");
    break;
  }
  case N_BUFFER_SIZE_KB:
    put_num(b, "%llu\n", live_buffer_kb());
    break;
  case N_BUFFER_TOTAL_SIZE_KB:
    put_num(b, "%llu\n", (uint64_t)live_buffer_kb() * live_ncpus());
    break;
  case N_TRACE_CLOCK:
    /* Timestamps are shown in CLOCK_MONOTONIC seconds, whatever the recording clock. */
    fxt_tbuf_puts(b, "[mono]\n");
    break;
  case N_CPU_STATS: {
    /* A flight recorder's counts are of the view with the copies, as `trace` shows it. */
    struct live_cpu_stats st;
    bool held = fxt_control_view_hold();
    live_cpu_stats(f->cpu, &st);
    if (held)
      fxt_control_view_release();
    stats_text(b, st.entries, st.overrun, st.bytes, st.oldest_ns, st.dropped, st.read);
    break;
  }
  case N_FUNCTIONS:
    fxt_fn_file_read((enum fxt_fn_file)f->fn_file, b);
    break;
  case N_FN_STAT:
    fxt_fn_prof_stat(f->cpu, b);
    break;
  case N_THREAD_STATS: {
    struct fxt_thread_stats st;
    if (fxt_control_thread_stats(f->tid, &st) == 0)
      stats_text(b, st.entries, st.overrun, st.bytes, 0, st.dropped + st.lost, st.read);
    break;
  }
  default:
    break;
  }
  f->filled = true;
}

/* ---- writes ---------------------------------------------------------------------------- */

int fxt_tfs_set_glob(const char *glob, bool on)
{
  int rc = fxt_registry_set_glob(glob, on);
  fxt_evtrig_enable_written(glob, on);
  return rc;
}

static int set_enabled(const char *glob, bool on)
{
  if (on) {
    int rc = fxt_control_ensure_session();
    if (rc < 0)
      return rc;
  }
  int rc = fxt_tfs_set_glob(glob, on);
  return rc < 0 ? rc : 0;
}

/* set_event: tokens "sys:event", "sys:*", "event" (any system), "sys:" ; "!" disables. */
static int write_set_event(const char *v)
{
  char *copy = strdup(v), *save = NULL;
  int rc = copy ? 0 : FXT_ENOMEM;
  for (char *tok = copy ? strtok_r(copy, " \t\n", &save) : NULL; tok && rc == 0;
       tok = strtok_r(NULL, " \t\n", &save)) {
    bool on = tok[0] != '!';
    char *name = tok + !on, glob[700];
    char *colon = strchr(name, ':');
    if (!colon)
      snprintf(glob, sizeof(glob), "*:%s", name);
    else if (colon[1] == 0)
      snprintf(glob, sizeof(glob), "%s*", name);
    else
      snprintf(glob, sizeof(glob), "%s", name);
    if (fxt_tfs_find(NULL, NULL).tp == NULL || name[0] == 0) {
      rc = FXT_EINVAL;
      break;
    }
    struct fxt_tbuf probe;
    fxt_tbuf_init(&probe);
    struct fxt_tfs_names all = {&probe, NULL, false, false, true};
    fxt_tracepoint_foreach(fxt_tfs_names_fn, &all);
    bool any = false;
    for (char *p = fxt_tbuf_str(&probe) ? probe.data : NULL; p && *p;) {
      char *nl = strchr(p, '\n');
      if (nl)
        *nl = 0;
      any |= fxt_glob_match(glob, p);
      p = nl ? nl + 1 : p + strlen(p);
    }
    fxt_tbuf_free(&probe);
    rc = any ? set_enabled(glob, on) : FXT_EINVAL; /* the kernel: EINVAL for no such event */
  }
  free(copy);
  return rc;
}

int fxt_tfs_apply(struct fxt_fs_file *f, const char *v)
{
  unsigned long n;
  bool on;
  int rc;
  char glob[700];
  switch (f->node) {
  case N_EVENTS_ENABLE:
  case N_SYS_ENABLE:
  case N_EV_ENABLE:
    /* 0 or 1 as kstrtoul reads them ("+1", "01"; one trailing newline allowed): any other
     * number EINVAL, past ULONG_MAX ERANGE (the kernel's event_enable_write). */
    if ((rc = fxt_tfs_kstrto01(v, &on)) != 0)
      return rc;
    if (f->node == N_EVENTS_ENABLE)
      snprintf(glob, sizeof(glob), "*:*");
    else if (f->node == N_SYS_ENABLE)
      snprintf(glob, sizeof(glob), "%s:*", f->sys);
    else
      snprintf(glob, sizeof(glob), "%s:%s", f->sys, f->ev);
    return set_enabled(glob, on);
  case N_SET_EVENT:
    return write_set_event(v);
  case N_EV_FILTER:
    return fxt_filters_write_event(f->sys, f->ev, v, strlen(v));
  case N_SYS_FILTER:
    return fxt_filters_write_system(f->sys, v, strlen(v));
  case N_EV_TRIGGER:
    return fxt_evtrig_write(f->sys, f->ev, v);
  case N_ERROR_LOG:
    return 0; /* only a truncating open changes it (`echo > error_log` clears) */
  case N_SET_EVENT_PID:
  case N_SET_EVENT_NOTRACE_PID:
    return fxt_control_set_pids(f->node == N_SET_EVENT_NOTRACE_PID, v,
                                !(f->flags & FXT_FS_TRUNC));
  case N_TRACE:
    /* Only a truncating open changes trace (`echo > trace`); its content is ignored. */
    return 0;
  case N_TRACE_MARKER:
    if (fxt_control_ensure_session() < 0)
      return FXT_EINVAL;
    fxt_fire_ftrace_print(0, v); /* always recorded, like the kernel's marker */
    return 0;
  case N_SAVED_CMDLINES_SIZE:
    if ((rc = fxt_tfs_kstrtoul(v, &n)) != 0)
      return rc;
    if (n > UINT32_MAX)
      return FXT_EINVAL;
    return live_set_cmdlines_size(n);
  case N_TRACING_ON:
    if ((rc = fxt_tfs_kstrtoul(v, &n)) != 0)
      return rc;
    fxt_control_set_recording(n != 0);
    return 0;
  case N_OPTION: { /* as the kernel's: 0 or 1 */
    if (is_graph_time(f->option))
      return fxt_fn_file_write(FXT_FN_GRAPH_TIME, v);
    if ((rc = fxt_tfs_kstrto01(v, &on)) != 0)
      return rc;
    const struct fxt_fgraph_option *o = fxt_fgraph_option((size_t)f->option);
    live_set_fg_option(o->bit, on == o->set_is_on);
    return 0;
  }
  case N_FUNCTIONS:
    /* A tracer switched on needs a session to take its records, as an event enabled. */
    if (f->fn_file == FXT_FN_CURRENT_TRACER &&
        (strcmp(v, "function") == 0 || strcmp(v, "function_graph") == 0) &&
        fxt_control_ensure_session() < 0)
      return FXT_EINVAL;
    return fxt_fn_file_write((enum fxt_fn_file)f->fn_file, v);
  case N_BUFFER_SIZE_KB: {
    if ((rc = fxt_tfs_kstrtoul(v, &n)) != 0)
      return rc;
    if (n == 0)
      return FXT_EINVAL;
    rc = live_set_buffer_kb(n);
    return rc < 0 ? rc : 0;
  }
  default:
    return FXT_EINVAL;
  }
}
