/* src/formats/fgraph.h - `fxtrace report`'s function_graph layout: a file's function_graph
 * slices (docs/functions.md: complete events of category "function", one per call, written at
 * its exit) printed as the kernel's function_graph tracer prints its `trace` file
 * (kernel/trace/trace_functions_graph.c, default options funcgraph-cpu, -overhead, -duration):
 *
 *   # tracer: function_graph
 *   #
 *   # CPU  DURATION                  FUNCTION CALLS
 *   # |     |   |                     |   |   |   |
 *    1)               |  parent() {
 *    1)   0.123 us    |    leaf();
 *    1)   1.234 us    |  }
 *
 * The nesting is rebuilt per thread from the slices' intervals and recorded depths (their
 * argument "depth", when they have it): a slice that starts before the innermost open slice of
 * its thread ends (is deeper than it) is inside it; slices of one time print outer first. A call with a recorded call inside
 * prints "f() {" at its start and "}" with its duration at its end; one without prints "f();"
 * with its duration. What filters or tracing_thresh left out is not there: the depth is that
 * of the recorded calls. Lines are in time order across threads (an end at the time of its
 * start), each with its thread's CPU (an unknown CPU: 0; the width of the highest CPU met). A
 * CPU whose lines change thread prints the kernel's context-switch block (comm cut to 7 bytes,
 * "comm-pid" centred in 14 columns). Durations print as the kernel's: microseconds with the
 * nanoseconds truncated to 7 digits in all, the marks '+' (> 10 us), '!' (> 100 us), '#'
 * (> 1 ms), '*' (> 10 ms), '@' (> 100 ms), '$' (> 1 s) before them.
 *
 * Every other event prints as the kernel prints an event in this mode: a comment
 * "/<star> name: text <star>/" (report's text of it without the prefix; a `function` tracer
 * call's "func <-parent") in the function column, indented as the kernel indents it (by
 * (depth + 1) * 2 when the innermost open call's depth is over 0). Losses print as report
 * prints them ("CPU:N [LOST n EVENTS]") before the next event.
 */
#ifndef FXTRACE_FORMATS_FGRAPH_H
#define FXTRACE_FORMATS_FGRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/tbuf.h"
#include "fxtfile.h"
#include "select.h"

/* Whether e is a function_graph slice. */
bool fxt_fgraph_is_slice(const struct fxtf_event *e);

/* The header (4 lines, "# tracer: function_graph" first). */
void fxt_fgraph_header(struct fxt_tbuf *b);

/* Prints f in the layout into b, calling flush(ctx, b) whenever b holds more than
 * flush_bytes (flush empties b; false stops). Events are those sel keeps (NULL: all; bound by
 * the caller). opts: the kernel's funcgraph-* options (FXT_FGRAPH_* of base/fgraph_text.h; 0:
 * its defaults), as the live `trace` file's options/ print them: a line's time (abstime) is its
 * call's start, a "}"'s its return. Returns 0; FXT_ENOMEM; FXT_EBADMSG with the reader's
 * message in err (an event that does not read); FXT_ENOSPC when flush returned false.
 * *any_slice: whether some event kept is a slice (when not, nothing was printed: the caller
 * prints the plain layout). */
int fxt_fgraph_print(const struct fxtf_file *f, struct fxt_sel *sel, uint32_t opts,
                     struct fxt_tbuf *b, size_t flush_bytes,
                     bool (*flush)(void *ctx, struct fxt_tbuf *b), void *ctx, bool *any_slice,
                     char *err, size_t err_size);

#endif /* FXTRACE_FORMATS_FGRAPH_H */
