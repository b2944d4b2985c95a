/* src/formats/tracedat_import.h - a trace.dat (tracedat_read.h) as an fxtrace FXT file.
 *
 * The output follows docs/fxt-conventions.md with one provider, the kernel: id 0, name
 * `fxtrace/1`, a kernel-object record naming process 0 "kernel", and:
 *  - the initialization record: ticks per second of the trace clock (1e9 for the ns clocks;
 *    x86-tsc through the file's TSC2NSEC option; uptime 100);
 *  - a `kernel:meta` `trace_clock` instant (the record the file's clock travels in, for
 *    `fxtrace merge`): args `clock` (string) and, when the file has them, `date_offset_ns`
 *    (int64: add to a timestamp to get CLOCK_REALTIME, from trace-cmd --date) and
 *    `ts_offset_ns` (int64, trace-cmd --ts-offset);
 *  - when the clock is `mono` (trace-cmd record -C mono), `clock_sync` records before the first
 *    and after the last event, with ticks = monotonic_ns (realtime_ns from the DATE offset,
 *    0 when the file has none). Other clocks get none: their ticks are not CLOCK_MONOTONIC;
 *  - per event format seen, a tracepoint description (kind typed, its first 15 own fields,
 *    print format "name=%conv ..." built from the fields) and its strings;
 *  - per task, a kernel-object thread record (koid = pid, `process` = the pid too: trace.dat
 *    does not know thread groups) named from the records' own comm fields (sched_switch,
 *    sched_wakeup) or else the saved cmdlines, again when the comm changes;
 *  - every data record as an instant event: category = system, name = event, thread inline
 *    (pid, pid), one argument per field of its own (not common_*): integers as uint32/int32 or
 *    uint64/int64, pointers as pointer, char arrays and __data_loc strings as strings (1024
 *    bytes at most), other arrays as lowercase hex strings (of 512 bytes at most);
 *  - before a task's event on another CPU than its last, a `kernel:meta` `cpu` counter;
 *  - sched:sched_switch also as a context-switch record (scheduling type 1: CPU, outgoing
 *    state, outgoing and incoming tid, int32 `outgoing_weight`/`incoming_weight` = prio, or
 *    INT32_MIN for the idle task so Perfetto leaves it out); sched_wakeup, sched_wakeup_new and
 *    sched_waking also as wakeup records (CPU = target_cpu, int32 `weight`);
 *  - events lost before a page (its missed-events flag) as a `kernel:meta` `lost` instant of
 *    thread 0/0 with args num_records, num_bytes (0: unknown), cpu, and `count_unknown` true
 *    when the page does not store the count; at the end, per CPU, a `lost` record for what the
 *    CPUSTAT option's overrun + commit overrun + dropped events count beyond the pages'. The
 *    readers (fxtfile.h, tracedat_write.h) put such a loss before the next event on its CPU, where
 *    `fxtrace report` prints "CPU:N [LOST n EVENTS]" ("[LOST EVENTS]" for count_unknown).
 * Records are written in time order (all CPUs merged), so each thread's records are ordered.
 */
#ifndef FXTRACE_FORMATS_TRACEDAT_IMPORT_H
#define FXTRACE_FORMATS_TRACEDAT_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "tracedat_read.h"

/* Receives the output bytes in order; 0, or a negative value that ends the conversion (and
 * is returned by it). */
typedef int (*fxt_td_write_fn)(void *ctx, const void *data, size_t n);

struct fxt_td_fxt_stats {
  uint32_t version, cpus;
  char clock[32];
  uint64_t records; /* data records read */
  uint64_t events;  /* written as instants */
  uint64_t unknown; /* records whose common_type has no format: skipped */
  uint64_t switches, wakeups;
  uint64_t lost_pages;   /* pages marked with missed events */
  uint64_t lost_known;   /* events the pages count as lost */
  uint64_t lost_unknown; /* pages that do not say how many */
  uint64_t lost_cpustat; /* further losses from CPUSTAT */
  uint64_t cut_fields;   /* event formats with more than 15 fields: the rest not written */
  uint64_t threads;
  uint64_t first_ts, last_ts;
  uint64_t bytes_in; /* CPU data bytes */
  uint64_t bytes_out;
};

/* Converts buf[0..len) (a whole trace.dat). Errors as tracedat_read.h, or write's own. The
 * output goes through write only; on error what was written is incomplete. st may be NULL. */
int fxt_td_to_fxt(const void *buf, size_t len, fxt_td_write_fn write, void *write_ctx,
                  struct fxt_td_fxt_stats *st, char *err, size_t err_size);

#endif /* FXTRACE_FORMATS_TRACEDAT_IMPORT_H */
