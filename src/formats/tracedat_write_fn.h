/* src/formats/tracedat_write_fn.h - the function tracers' records in trace.dat as the kernel's
 * own (docs/functions.md): a `function` call (an instant of category "function" with a string
 * argument "parent") becomes ftrace:function (ip, parent_ip); a `function_graph` slice (a
 * complete event of category "function") ftrace:funcgraph_entry at its start and
 * ftrace:funcgraph_exit at its end (calltime, rettime: its start and end, CLOCK_MONOTONIC ns
 * as the timestamps; overrun 0). The three formats are the kernel's text (Linux 6.18's
 * events/ftrace/<event>/format, byte for byte but the ID), written in the file's ftrace
 * formats section, so trace-cmd report prints them with its function and function_graph
 * handlers (trace-cmd's "func();" / "func() {" ... "}" lines).
 *
 * The file has names, not addresses: each name gets an address, in order of first use
 * (0xffffffff81000000 + 16 * (n + 1)), stable for a given input, and the kallsyms section
 * lists them ("<addr> t <name>"), so trace-cmd prints names.
 *
 * Depth: the kernel's is the call's on its thread's return stack, as the slice's argument
 * "depth" records it (docs/functions.md), which both records take. A slice without one (a file
 * written before the argument): the records of a CPU are written in time order, an entry and
 * its exit on the CPU of the slice (its exit's), and the depth of each is the number of its
 * thread's calls open on that CPU's records before it (fxt_td_fn_patch, when the pages are
 * made): the recorded nesting, as long as a thread's nested calls ended on one CPU.
 */
#ifndef FXTRACE_FORMATS_TRACEDAT_WRITE_FN_H
#define FXTRACE_FORMATS_TRACEDAT_WRITE_FN_H

#include <stdbool.h>
#include <stdint.h>

#include "json_int.h"
#include "tracedat_write_event.h"

enum fxt_td_fn_kind { FXT_TD_FN_NONE, FXT_TD_FN_CALL, FXT_TD_FN_GRAPH };

/* Bytes of the kernel's records: function, funcgraph_entry, funcgraph_exit. */
#define FXT_TD_FN_CALL_BYTES 24u
#define FXT_TD_FN_ENTRY_BYTES 24u
#define FXT_TD_FN_EXIT_BYTES 40u

struct fxt_td_fn_sym {
  char *name; /* owned, NUL-terminated */
  uint32_t len;
  uint32_t next; /* next symbol of the same hash + 1 */
};

struct fxt_td_fn {
  bool on;                          /* IDs reserved: the input has function events */
  uint16_t id_call, id_entry, id_exit;
  uint64_t calls, entries, exits;   /* records made */
  struct fxt_td_fn_sym *syms;
  uint32_t nsyms;
  size_t cap_syms;
  struct fxt_jmap map;  /* (name hash, 0) -> first symbol + 1 */
  struct fxt_jmap open; /* while pages are made: (pid, 0) -> calls open on the CPU */
};

/* What ev is to the function tracers. */
enum fxt_td_fn_kind fxt_td_fn_kind_of(const struct fxt_event *ev);

/* Reserves the three events' IDs in t (the kernel's 1, 11, 10 when free, else the highest
 * free), before any variant is made. FXT_E2BIG when none is free. */
int fxt_td_fn_reserve(struct fxt_td_fn *f, struct fxt_td_ev_table *t);

/* The record of a call (FXT_TD_FN_CALL) into out (replaced). 0 or FXT_ENOMEM. */
int fxt_td_fn_call(struct fxt_td_fn *f, const struct fxt_event *ev, int32_t pid,
                   struct fxt_tbuf *out);
/* The entry (exit false) or exit record of a slice from start to end ns; its depth the
 * recorded one, else UINT32_MAX (set by fxt_td_fn_patch). 0 or FXT_ENOMEM. */
int fxt_td_fn_graph(struct fxt_td_fn *f, const struct fxt_event *ev, int32_t pid, bool exit,
                    uint64_t start, uint64_t end, struct fxt_tbuf *out);

/* Pages: a new pass over the sorted records (cpu_change false) or a new CPU's records. */
void fxt_td_fn_restart(struct fxt_td_fn *f);
/* The record as written: payload itself, or, for an entry or exit without a recorded depth,
 * a copy in buf (room for FXT_TD_FN_EXIT_BYTES) with its depth set. NULL when memory ran
 * out. */
const void *fxt_td_fn_patch(struct fxt_td_fn *f, const void *payload, uint32_t size,
                            unsigned char *buf);

/* Item 9 of the file (u32 count, then each format's u64 size and text), and item 11
 * (u32 size, the kallsyms text). */
void fxt_td_fn_formats(const struct fxt_td_fn *f, struct fxt_tbuf *b);
void fxt_td_fn_kallsyms(const struct fxt_td_fn *f, struct fxt_tbuf *b);

void fxt_td_fn_free(struct fxt_td_fn *f);

#endif /* FXTRACE_FORMATS_TRACEDAT_WRITE_FN_H */
