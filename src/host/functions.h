/* functions.h - what the function tracer (functions*.c) offers the rest of the tracer: its
 * tracefs files (tracefs_nodes.c) and its settings from the session (session.c). */
#ifndef FXTRACE_HOST_FUNCTIONS_H
#define FXTRACE_HOST_FUNCTIONS_H

#include <stdint.h>

#include "../base/tbuf.h"

/* The tracefs files of the tracer (functions_ctl.c): the content of a read, and a write's
 * effect (0, or the kernel's negative errno, nothing changed). A filter file's write adds to
 * what it holds (`!glob` takes away): a truncating open clears it first. */
enum fxt_fn_file {
  FXT_FN_AVAILABLE_TRACERS,
  FXT_FN_CURRENT_TRACER,
  FXT_FN_AVAILABLE_FILTER_FUNCTIONS,
  FXT_FN_SET_FTRACE_FILTER,
  FXT_FN_SET_FTRACE_NOTRACE,
  FXT_FN_SET_GRAPH_FUNCTION,
  FXT_FN_SET_GRAPH_NOTRACE,
  FXT_FN_MAX_GRAPH_DEPTH,
  FXT_FN_TRACING_THRESH,
  FXT_FN_FUNCTION_PROFILE_ENABLED,
  FXT_FN_GRAPH_TIME, /* options/graph-time: the profiler's (functions_prof.c, "Self time") */
};
void fxt_fn_file_read(enum fxt_fn_file file, struct fxt_tbuf *b);
int fxt_fn_file_write(enum fxt_fn_file file, const char *v);
/* A truncating open of a filter file clears it (as the kernel's O_TRUNC). */
void fxt_fn_file_truncate(enum fxt_fn_file file);

/* trace_stat/function<cpu>: the function profiler's table of that CPU, as the kernel's
 * (functions_prof.c). */
void fxt_fn_prof_stat(uint32_t cpu, struct fxt_tbuf *b);

/* fork (session.c's handlers; the lock is taken last, released first: no other lock is
 * taken under it): fxt_fn_lock is not held by another thread at the fork, so a child never
 * inherits it locked nor code patched halfway (int3s at sites, pages writable). */
void fxt_fn_atfork_prepare(void);
void fxt_fn_atfork_parent(void);
void fxt_fn_atfork_child(void);

/* The session's trace clock rate, for tracing_thresh (session.c, at each start). */
void fxt_fn_set_rate(uint64_t ticks_per_second);
/* Applies FXTRACE's function keys (tracer, ftrace_filter, ftrace_notrace, graph_function,
 * graph_notrace, max_graph_depth, tracing_thresh, function_profile, graph_time), each as a
 * write to its file; prints what failed on stderr. */
void fxt_fn_apply_config(const char *text);

#endif
