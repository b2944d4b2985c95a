/* fxtrace/functions.h - the function tracer: ftrace's `function` and `function_graph` for the
 * functions of a program built with the tracer's flags (docs/functions.md): pkg-config
 * fxtrace-functions (on x86-64 the patchable-entry engine's -fpatchable-function-entry=11,9,
 * whose entries are patched live; elsewhere -finstrument-functions) or
 * fxtrace-functions-instrument (-finstrument-functions everywhere), linked with the tracer's
 * shim, libfxtrace-functions (the compiler's hooks, the interposers), and libfxtrace.
 * The tracer is then switched on and off in the running process with ftrace's files (no code):
 *
 *   fxtrace write PID current_tracer function_graph
 *   fxtrace write PID set_ftrace_filter 'parse_* main'
 *   FXTRACE='tracer=function_graph;ftrace_filter=parse_*' ./app
 *   fxtrace record -p function_graph -l 'parse_*' -- ./app
 *
 * or from code through fxtrace/tracefs.h: fxt_fs_echo("current_tracer", "function").
 * Files: available_tracers, current_tracer, available_filter_functions, set_ftrace_filter,
 * set_ftrace_notrace, set_graph_function, set_graph_notrace, max_graph_depth, tracing_thresh
 * (as the kernel's: Documentation/trace/ftrace.rst). Off, a call costs 2 bytes of NOP with the
 * patchable entry, the compiler's two calls (one relaxed load and branch in each) with
 * -finstrument-functions. Writing current_tracer fails with FXT_EPERM when the code's pages
 * cannot be made writable (a W^X policy), FXT_ENOSYS without membarrier: nothing changes.
 *
 * User API (docs/architecture.md, "Public headers").
 */
#ifndef FXTRACE_FUNCTIONS_H
#define FXTRACE_FUNCTIONS_H

#include "common.h"
#include "errors.h"

#include <stdint.h>

/* Frames the function tracer could not close, since the process started. */
struct fxt_functions_counts {
  uint32_t struct_size; /* set by the caller: sizeof(struct fxt_functions_counts) */
  uint32_t reserved;
  uint64_t cut;      /* activations whose exit was never seen: left by longjmp, a C++
                        exception, a thread's exit, or open when the tracer was switched (a
                        redirected return still returns: only its slice is lost) */
  uint64_t overflow; /* calls deeper than a thread's shadow stack (64 frames): not traced */
};

FXT_EXTERN_C_BEGIN

/* Fills *c (up to c->struct_size). Returns 0, or FXT_EINVAL for a bad struct_size. */
FXT_API int fxt_functions_counts(struct fxt_functions_counts *c);

FXT_EXTERN_C_END

#endif /* FXTRACE_FUNCTIONS_H */
