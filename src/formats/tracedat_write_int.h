/* src/formats/tracedat_write_int.h - state of one trace.dat conversion, shared by tracedat_write.c
 * (the passes over the input and the CPU data) and tracedat_write_head.c (everything before the CPU
  * data).
 */
#ifndef FXTRACE_FORMATS_TRACEDAT_WRITE_INT_H
#define FXTRACE_FORMATS_TRACEDAT_WRITE_INT_H

#include "fxtfile_int.h"
#include "json_int.h"
#include "../base/text.h"
#include "tracedat_write.h"
#include "tracedat_write_event.h"
#include "tracedat_write_fn.h"
#include "tracedat_write_sort.h"

/* Per CPU: what its stats option says, and where its data goes. */
struct fxt_td_writer_cpu {
  uint64_t events;           /* written */
  uint64_t overrun, dropped; /* records lost, by kind (dropped: drop_stats, lost, too big) */
  /* pass 2: its own losses (loss records with its `cpu`) since the current provider's last
   * event on it, for the page of the next one; pend_unknown: some of an unknown count */
  uint64_t pend_lost;
  bool pend_unknown;
  uint64_t oldest_ns;        /* its first event */
  uint64_t pages;
  uint64_t offset; /* of its data in the file */
};

struct fxt_td_writer_thread {
  uint32_t prov;
  uint32_t next; /* next thread of the same (tid, pid) + 1 */
  uint64_t pid, tid;
  struct fxtf_text comm;
  bool named;
  uint32_t cpu;                                /* pass 2: its current CPU, FXTF_CPU_UNKNOWN */
  uint64_t pend_dropped, pend_overrun, pend_lost; /* pass 2: lost since its last event */
  bool pend_unknown;                              /* and some of an unknown count */
};

struct fxt_td_writer_desc {
  struct fxtf_desc d;
  uint32_t prov;
  uint32_t next;  /* next description of the same key hash + 1 */
  uint32_t cls;   /* the first description with the same content */
  uint32_t cnext; /* a class: the next class of the same content hash + 1 */
};

struct fxt_td_writer {
  const struct fxt_tracedat_options *opt;
  struct fxtf_pass in; /* the input */

  struct fxtf_segs segs; /* providers */
  struct fxt_td_writer_thread *threads;
  uint32_t nthreads, cap_threads;
  uint32_t refs[FXT_MAX_THREAD_INDEX + 1]; /* thread ref -> thread + 1 (current provider) */
  struct fxt_jmap thread_map;              /* (tid, pid) -> first thread + 1 */
  struct fxt_td_writer_desc *descs;
  uint32_t ndescs, cap_descs;
  struct fxt_jmap desc_map;  /* (provider, hash of system:name) -> latest description + 1 */
  struct fxt_jmap class_map; /* (hash of the content, 0) -> a description + 1 */

  struct fxt_td_ev_table events;
  struct fxt_td_fn fn; /* the function tracers' events (tracedat_write_fn.h) */
  bool has_fn;         /* pass 1 met one */
  struct fxt_td_sort sort;
  bool sort_ready;
  struct fxt_tbuf payload, scratch;
  struct fxt_td_writer_cpu *cpus;
  uint32_t ncpus, cap_cpus;
  uint64_t end_ns; /* the latest clock: stats' "now ts" */

  struct fxt_tracedat_stats st;
  struct fxt_str_slot table[FXT_STRING_TABLE_SIZE]; /* the decoder's */
};

/* "offset N: ..." (or a plain message when off is UINT64_MAX) into the caller's err; returns
 * code. */
int fxt_td_writer_fail(struct fxt_td_writer *c, int code, uint64_t off, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Hands bytes to the write callback; 0 or its error (the message is set). */
int fxt_td_write(struct fxt_td_writer *c, const void *data, size_t n);

/* Builds and writes everything before the CPU data, and sets each CPU's data offset (the CPU
 * table needs the sizes: cpus[].pages are known). */
int fxt_td_write_head(struct fxt_td_writer *c);

#endif /* FXTRACE_FORMATS_TRACEDAT_WRITE_INT_H */
