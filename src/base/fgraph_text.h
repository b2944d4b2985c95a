/* src/base/fgraph_text.h - the lines of the kernel's function_graph layout
 * (kernel/trace/trace_functions_graph.c, default options funcgraph-cpu, -overhead, -duration),
 * shared by `fxtrace report` (src/formats/fgraph.c, a file's calls) and the live tree's `trace`
 * and `trace_pipe` (src/host/live_fgraph.c): the header, each line's prologue (verif_pid's
 * context-switch block, the CPU column), a call's line ("f() {" or "f();" with its duration),
 * a return's ("}" with its duration), a comment's start, and the depth argument of a
 * function_graph record (docs/functions.md, "Records").
 *
 *   # tracer: function_graph
 *   #
 *   # CPU  DURATION                  FUNCTION CALLS
 *   # |     |   |                     |   |   |   |
 *    1)               |  parent() {
 *    1)   0.123 us    |    leaf();
 *    1)   1.234 us    |  }
 *
 * Durations print as the kernel's: microseconds with the nanoseconds truncated to 7 digits in
 * all, the marks '+' (> 10 us), '!' (> 100 us), '#' (> 1 ms), '*' (> 10 ms), '@' (> 100 ms),
 * '$' (> 1 s) before them. The context-switch block (a CPU whose lines change thread) has each
 * comm cut to 7 bytes, "comm-pid" centred in 14 columns.
 */
#ifndef FXTRACE_BASE_FGRAPH_TEXT_H
#define FXTRACE_BASE_FGRAPH_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fxtrace/fxt.h>

#include "tbuf.h"

/* Whether ev is a function_graph slice: a complete event of category "function". */
bool fxt_fgraph_is_slice_ev(const struct fxt_event *ev);

/* The slice's recorded depth (its uint32 argument "depth"): false when it has none (files
 * written before the argument). */
bool fxt_fgraph_depth(const struct fxt_event *ev, uint32_t *depth);

/* The header (4 lines, "# tracer: function_graph" first). */
void fxt_fgraph_header(struct fxt_tbuf *b);

/* What verif_pid keeps per CPU: the thread its last line was of. The caller zeroes it
 * (nothing seen), sets cpu_width (the digits of the highest CPU), frees it with
 * fxt_fgraph_cpus_free. */
struct fxt_fgraph_cpu {
  bool seen, named;
  uint8_t comm_len;
  uint64_t key; /* the caller's name for the thread (fgraph.c: its index; live: its tid) */
  uint64_t tid;
  char comm[16];
};
struct fxt_fgraph_cpus {
  struct fxt_fgraph_cpu *cpu;
  size_t cap;
  unsigned cpu_width;
};
void fxt_fgraph_cpus_free(struct fxt_fgraph_cpus *s);

/* The digits of max_cpu: the CPU column's width. */
unsigned fxt_fgraph_cpu_width(uint32_t max_cpu);

/* A thread as the prologue names it (comm NULL: unknown, "<...>"). */
struct fxt_fgraph_thread {
  uint64_t key, tid;
  const char *comm;
  size_t comm_len;
};

/* Each line starts here: the context-switch block when cpu's lines change thread, then the
 * CPU column " %*d) ". b->oom on no memory. */
void fxt_fgraph_prologue(struct fxt_fgraph_cpus *s, struct fxt_tbuf *b, uint32_t cpu,
                         const struct fxt_fgraph_thread *t);

/* A call at depth: "f() {" (nested) or the duration and "f();", after the prologue. */
void fxt_fgraph_call(struct fxt_tbuf *b, uint32_t depth, const char *name, size_t len,
                     bool nested, uint64_t dur_ns);
/* A nested call's return at depth: the duration and "}". */
void fxt_fgraph_return(struct fxt_tbuf *b, uint32_t depth, uint64_t dur_ns);
/* print_graph_comment's start, "/<star> " indented by the kernel's per-CPU depth (the
 * innermost open call's, -1 for none; indented only when over 0): the caller writes the text
 * and " <star>/\n". */
void fxt_fgraph_comment_start(struct fxt_tbuf *b, int64_t depth);

#endif /* FXTRACE_BASE_FGRAPH_TEXT_H */
