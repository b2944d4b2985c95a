/* tracefs_int.h - what the files of the tracefs tree share (tracefs.c: paths, nodes, the open
 * files and the API of fxtrace/tracefs.h; tracefs_nodes.c: what each node reads and what a
 * write to it does). */
#ifndef FXTRACE_HOST_TRACEFS_INT_H
#define FXTRACE_HOST_TRACEFS_INT_H

#include <fxtrace/tracepoint.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../base/tbuf.h"

enum node {
  N_DIR,
  N_EVENTS_ENABLE, /* events/enable */
  N_SYS_ENABLE,    /* events/<sys>/enable */
  N_EV_ENABLE,     /* events/<sys>/<ev>/enable */
  N_EV_ID,
  N_EV_FORMAT,
  N_EV_FILTER,     /* events/<sys>/<ev>/filter */
  N_SYS_FILTER,    /* events/<sys>/filter */
  N_EV_TRIGGER,    /* events/<sys>/<ev>/trigger (evtrig.h) */
  N_EV_HIST,       /* events/<sys>/<ev>/hist (evtrig.h) */
  N_ERROR_LOG,
  N_SET_EVENT,
  N_AVAILABLE_EVENTS,
  N_SET_EVENT_PID,
  N_SET_EVENT_NOTRACE_PID,
  N_TRACE,
  N_TRACE_PIPE,
  N_TRACE_MARKER,
  N_SAVED_CMDLINES,
  N_SAVED_CMDLINES_SIZE,
  N_TRACING_ON,
  N_BUFFER_SIZE_KB,
  N_BUFFER_TOTAL_SIZE_KB,
  N_TRACE_CLOCK,
  N_CPU_STATS,
  N_THREAD_STATS,
  N_FUNCTIONS,     /* a file of the function tracer: fn_file says which (functions.h) */
  N_FN_STAT,       /* trace_stat/function<cpu>: the function profiler's table (functions.h) */
  N_OPTION,        /* options/<name>: an option of the function_graph layout (option says which) */
};

struct fxt_fs_file {
  enum node node;
  uint32_t flags;
  char sys[128], ev[512];
  uint32_t cpu;
  pid_t tid;
  struct fxt_tbuf text; /* read content (snapshot) or trace_pipe's carry-over */
  size_t pos;           /* read position in text */
  bool filled;
  bool pipe_reader;     /* trace_pipe open for reading (fxt_control_pipe_open) */
  struct live_iter *iter; /* `trace`: where the reads are in the view (live.h) */
  int fn_file;          /* N_FUNCTIONS: enum fxt_fn_file */
  int option;           /* N_OPTION: its index among fxt_tfs_option_name's */
};

/* options/'s files (tracefs_nodes.c): the name of option i, NULL past the last. */
const char *fxt_tfs_option_name(int i);

/* The tracepoints of the registry that match sys and ev. */
struct fxt_tfs_find {
  const char *sys, *ev; /* ev NULL: any event of sys; sys NULL: any */
  struct fxt_tracepoint *tp; /* the first one matched */
  int on, off; /* enabled and disabled tracepoints matched */
};
struct fxt_tfs_find fxt_tfs_find(const char *sys, const char *ev);

/* Unique "sys:ev" (or "sys" when only_systems) names, in registration order, into b: a
 * fxt_tracepoint_foreach callback. */
struct fxt_tfs_names {
  struct fxt_tbuf *b;
  const char *sys;  /* only events of this system (events of a system directory) */
  bool systems;     /* list systems, not events */
  bool enabled;     /* only enabled events (set_event) */
  bool lines;       /* "name\n" (else "name\0" for directory listings) */
};
int fxt_tfs_names_fn(void *ctx, struct fxt_tracepoint *tp);

/* The enabled patterns changed for glob (fxt_registry_set_glob), with the events in soft mode
 * (evtrig.h) switched the kernel's way instead. Returns what fxt_registry_set_glob does. */
int fxt_tfs_set_glob(const char *glob, bool on);

/* A decimal number up to max, the whole of s (a path's component: per_cpu/cpuN). */
bool fxt_tfs_parse_uint(const char *s, uint64_t max, uint64_t *out);
/* A written number as the kernel's kstrtoul_from_user in base 10 reads it (tracing_on,
 * buffer_size_kb, saved_cmdlines_size, options/, function_profile_enabled): an optional '+',
 * digits, nothing else (the tree took off the one newline the kernel's accepts). 0 and *out
 * set, FXT_EINVAL, or FXT_ERANGE past ULONG_MAX (fuzz/fuzz_fnprof.c). */
int fxt_tfs_kstrtoul(const char *v, unsigned long *out);
/* 0 or 1 read so (the enable files, the options: the kernel's event_enable_write and
 * trace_options_core_write), any other number FXT_EINVAL: 0 and *on set, or the error. */
int fxt_tfs_kstrto01(const char *v, bool *on);

/* Makes the content of a read file (not trace_pipe). */
void fxt_tfs_fill(struct fxt_fs_file *f);
/* Applies the value v of a write to f: 0, or the kernel's negative errno (nothing changed). */
int fxt_tfs_apply(struct fxt_fs_file *f, const char *v);

#endif
