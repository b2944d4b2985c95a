/* src/base/fgraph_text.h - the lines of the kernel's function_graph layout
 * (kernel/trace/trace_functions_graph.c: its default options funcgraph-cpu, -overhead, -duration;
 * the *_opts forms and struct fxt_fgraph_cpus' opts the others, for the live tree's options/),
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

/* The kernel's funcgraph-* options that change the lines (Documentation/trace/ftrace.rst,
 * trace_functions_graph.c's TRACE_GRAPH_PRINT_*), as the bits that differ from its defaults:
 * 0 is funcgraph-cpu, -overhead and -duration on, -proc, -abstime and -tail off. */
enum {
  FXT_FGRAPH_NO_CPU = 1,      /* funcgraph-cpu off: no " N) " column */
  FXT_FGRAPH_NO_OVERHEAD = 2, /* funcgraph-overhead off: no mark before a duration */
  FXT_FGRAPH_NO_DURATION = 4, /* funcgraph-duration off: no duration column */
  FXT_FGRAPH_PROC = 8,        /* funcgraph-proc: "comm-pid | " after the CPU */
  FXT_FGRAPH_ABSTIME = 16,    /* funcgraph-abstime: "%5lu.%06lu |  " first (the line's time) */
  FXT_FGRAPH_TAIL = 32,       /* funcgraph-tail: "} /<star> f <star>/" */
};
/* The options by the kernel's names (options/funcgraph-*), in its order: each one's bit and
 * whether the bit set means the option on. */
struct fxt_fgraph_option {
  const char *name;
  uint32_t bit;
  bool set_is_on;
};
/* The i-th option; NULL past the last. */
const struct fxt_fgraph_option *fxt_fgraph_option(size_t i);
/* A word as the kernel's trace_options file takes it: "funcgraph-X" turns option X on in
 * *opts, "nofuncgraph-X" off. Returns false (*opts untouched) for a word naming no option. */
bool fxt_fgraph_option_word(const char *word, size_t len, uint32_t *opts);

/* The header (4 lines, "# tracer: function_graph" first); with opts, its columns'. */
void fxt_fgraph_header(struct fxt_tbuf *b);
void fxt_fgraph_header_opts(struct fxt_tbuf *b, uint32_t opts);

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
  uint32_t opts; /* FXT_FGRAPH_*: the lines' options (0: the defaults) */
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
/* The same with s->opts' columns: the line's time ts_ns (funcgraph-abstime), the CPU unless
 * funcgraph-cpu is off, the thread (funcgraph-proc). */
void fxt_fgraph_prologue_at(struct fxt_fgraph_cpus *s, struct fxt_tbuf *b, uint32_t cpu,
                            const struct fxt_fgraph_thread *t, uint64_t ts_ns);

/* A call at depth: "f() {" (nested) or the duration and "f();", after the prologue. */
void fxt_fgraph_call(struct fxt_tbuf *b, uint32_t depth, const char *name, size_t len,
                     bool nested, uint64_t dur_ns);
/* A nested call's return at depth: the duration and "}". */
void fxt_fgraph_return(struct fxt_tbuf *b, uint32_t depth, uint64_t dur_ns);
/* The three with opts (FXT_FGRAPH_*): the duration column's, and a return's name (tail). */
void fxt_fgraph_call_opts(struct fxt_tbuf *b, uint32_t opts, uint32_t depth, const char *name,
                          size_t len, bool nested, uint64_t dur_ns);
void fxt_fgraph_return_opts(struct fxt_tbuf *b, uint32_t opts, uint32_t depth,
                            const char *name, size_t len, uint64_t dur_ns);
void fxt_fgraph_comment_start_opts(struct fxt_tbuf *b, uint32_t opts, int64_t depth);
/* print_graph_comment's start, "/<star> " indented by the kernel's per-CPU depth (the
 * innermost open call's, -1 for none; indented only when over 0): the caller writes the text
 * and " <star>/\n". */
void fxt_fgraph_comment_start(struct fxt_tbuf *b, int64_t depth);

#endif /* FXTRACE_BASE_FGRAPH_TEXT_H */
