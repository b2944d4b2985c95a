/* src/formats/tracedat_write.h - fxtrace FXT files as trace-cmd's trace.dat, version 6 (spec
 * ../shared/spec/tracedat.md), for `trace-cmd report` and KernelShark.
 *
 * The file, in one pass of output:
 *   initial part (magic, "6", little-endian, long size 8, page size 4096), header_page and
 *   header_event (the kernel's x86_64 text); the ftrace formats of the function tracers'
 *   events when the input has some (tracedat_write_fn.h: the kernel's function,
 *   funcgraph_entry, funcgraph_exit); one event system per fxtrace system with one `format`
 *   per kind of event (tracedat_write_event.h: kernel layout, common_type = its ID); kallsyms
 *   with the function tracers' names at made-up addresses (else empty); empty printk
 *   formats; saved cmdlines "<tid> <comm>" for every named
 *   thread (comm cut to 15 bytes, as `fxtrace report`); the CPU count; options TRACECLOCK
 *   ("[mono]": timestamps are CLOCK_MONOTONIC ns, so report prints seconds.micros), UNAME,
 *   VERSION, CPUCOUNT, one CPUSTAT per CPU (per_cpu/cpuN/stats text as trace-cmd records it
 *   once it has read the buffers out: entries and bytes 0, read events = events written,
 *   overrun = records overwritten, dropped events = records dropped or lost otherwise and
 *   events too big for a page); "flyrecord", the CPU table, the trace clock; then, page-aligned,
 *   each CPU's ring-buffer pages (tracedat_write_page.h).
 *
 * Events go to the CPU their thread was on (its latest `cpu` record; none yet: CPU 0, as
 * `fxtrace report` prints them), in time order (ties: file order), at CLOCK_MONOTONIC ns
 * through the provider's clock syncs, exactly as `fxtrace report` places them; pid = the tid.
 * Bookkeeping records are not events. Records lost before an event of a thread (drop_stats,
 * overrun, lost), or a CPU's (loss records with a `cpu` argument: a kernel trace read from
 * trace.dat) before the provider's next event on that CPU, become the missed-events count of
 * the page that event starts, so report shows "CPU:N [n EVENTS DROPPED]" where `fxtrace
 * report` shows "CPU:N [LOST n EVENTS]" (a loss marked `count_unknown`: the page gets no count,
 * "[EVENTS DROPPED]" where fxtrace says "[LOST EVENTS]"); losses after a thread's (a CPU's)
 * last event, and events whose record exceeds a page (the kernel refuses those), are counted
 * in the CPU's stats (an event too big also in the next page's count).
 *
 * Memory stays bounded whatever the number of events: the input is read twice in file order
 * (validate it and collect names, clocks and descriptions; then build each event's record into
 * an external sort by CPU and time, spilling runs of run_bytes to an unlinked temporary file),
 * then the sorted records twice (to size each CPU's data, then to write it). Nothing is written
 * before the input has been read and checked whole.
 *
 * Errors: 0 or a negative FXT_E* code, with "offset N: reason" (or a plain reason) in err.
 *   FXT_EBADMSG, FXT_ENOSYS  the input does not decode (nothing was written then)
 *   FXT_E2BIG                more than 65535 kinds of event, or a CPU number over 65534
 *   FXT_ENOSPC               the temporary file could not be written or read
 *   FXT_ENOMEM               out of memory
 *   FXT_EINVAL               NULL arguments
 *   any negative value the write callback returned: writing stopped there.
 */
#ifndef FXTRACE_FORMATS_TRACEDAT_WRITE_H
#define FXTRACE_FORMATS_TRACEDAT_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include <fxtrace/fxt.h>

/* Receives the output in order; returns 0, or a negative value that ends the conversion. */
typedef int (*fxt_tracedat_write_fn)(void *ctx, const void *data, size_t n);
/* Told that input bytes [from, to) will not be read again before a new pass starts over (see
 * json.h: a caller that mapped the file may drop those pages). */
typedef void (*fxt_tracedat_release_fn)(void *ctx, uint64_t from, uint64_t to);

struct fxt_tracedat_options {
  fxt_tracedat_write_fn write;
  void *write_ctx;
  fxt_tracedat_release_fn release; /* NULL: none */
  void *release_ctx;
  const char *uname;  /* UNAME option; NULL: this machine's uname (sysname nodename release
                         machine) */
  const char *tmpdir; /* for the sort's temporary file; NULL: $TMPDIR, else /tmp */
  size_t run_bytes;   /* memory for the sort's runs; 0: 8 MiB */
  bool strict;        /* a torn tail (fxtfile.h) is an error, not the end of the input */
};

struct fxt_tracedat_stats {
  uint64_t records;      /* FXT records decoded (one pass) */
  uint64_t events;       /* events written: the count `fxtrace stats` gives, less too_big */
  uint64_t too_big;      /* events whose record exceeds a page: not written, counted missed */
  uint64_t missed;       /* lost records shown as pages' missed-events counts */
  uint64_t missed_unknown; /* pages marking losses without a count (some were of an unknown
                              count: a trace.dat page read without one) */
  uint64_t lost_trailing; /* lost records with no later event to show them before (after
                             their thread's last event, a CPU's own losses after its
                             provider's last event on it, or too big events and their losses
                             after their CPU's last event): in CPUSTAT only */
  uint64_t formats;      /* event formats (kinds of event) */
  uint32_t cpus;         /* CPU table entries */
  uint32_t cmdlines;     /* saved cmdlines */
  uint64_t pages;
  uint64_t time_extends;
  uint64_t sort_runs;    /* runs spilled to the temporary file */
  uint64_t bytes;        /* bytes written */
  uint64_t torn;         /* offset of the input's torn tail (fxtfile.h: the file ends inside
                            that record; those before it were converted); 0: none */
};

/* Converts buf[0..len) (an fxtrace FXT file; one that ends inside a record, a torn tail
 * (fxtfile.h), up to that record, st->torn saying where, unless opt->strict). st may be NULL. */
int fxt_tracedat_convert(const void *buf, size_t len, const struct fxt_tracedat_options *opt,
                         struct fxt_tracedat_stats *st, char *err, size_t err_size);

/* The FXT file in_path written as the trace.dat out_path (created at its first byte; removed
 * when the conversion fails after that, so a bad input leaves no file and an existing one
 * untouched). The input is mapped, and its pages dropped as the conversion is done with
 * them: memory stays bounded. Errors as fxt_tracedat_convert; FXT_ENOENT when a file cannot
 * be opened, err then naming it and the system's reason. For a session's `output=X.dat` and
 * `fxtrace record -o X.dat`. */
int fxt_tracedat_file(const char *in_path, const char *out_path, struct fxt_tracedat_stats *st,
                      char *err, size_t err_size);

#endif /* FXTRACE_FORMATS_TRACEDAT_WRITE_H */
