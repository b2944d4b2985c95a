/* src/formats/json.h - fxtrace FXT files as Chrome trace-event JSON (the format chrome://tracing,
 * the Perfetto UI and Chromium's DevTools Performance panel open), in bounded memory.
 *
 * The input is read twice with the strict decoder, in file order: a first pass validates the
 * whole file and collects each provider's clock syncs (its last one ends the provider), so a
 * bad file is rejected before a byte is written; the second pass makes one JSON event per
 * FXT event (a begin/end pair: one) and hands it to an external sort (json_order.c, over the
 * trace.dat writer's tracedat_write_sort.c: runs of 4 MiB spilled to an unlinked temporary file in
 * $TMPDIR), so the output is in time order: DevTools reads events in file order, pairing "B"
 * and "E" across threads and binding flows as it goes. Metadata ("M") comes first. State
 * kept: the decoder's tables (about 520 KiB), each provider's clock mapping, per thread its
 * loss total and its open duration begins, the printk descriptions, the sort's runs (4 MiB,
 * and 1 MiB for flows and slices) and read buffers (32 KiB per spilled run), one output
 * buffer of about 256 KiB.
 *
 * Mapping, per FXT record (docs/fxt-conventions.md):
 *
 *   FXT record                        JSON event
 *   instant (typed, ad-hoc)           "ph":"i","s":"t"
 *   instant of system printk          "ph":"i","s":"t", name = the rendered message
 *   counter, id 0 / id N              "ph":"C", name "name" / "name (N)"; numeric args only
 *   duration begin + its end          "ph":"X" at the begin, "dur", the args of both, "fxt_be":1
 *   begin without end, end without    "ph":"B" / "ph":"E" (records were lost; unmatched_*)
 *     begin
 *   duration complete                 "ph":"X", "dur"
 *   async begin / instant / end       "ph":"b" / "n" / "e", "id2":{"local":"0x.."}
 *   flow begin / step / end           "ph":"s" / "t" / "f", "id":"0x..", "bp":"e" on f; "ts"
 *                                       the start of the innermost slice ("X", "B") of its
 *                                       thread that encloses it (DevTools binds a flow only
 *                                       to a slice that starts at its "ts"), else its own
 *   kernel object: process / thread   "ph":"M", process_name / thread_name
 *   log record                        "ph":"i","s":"t", cat "log", name = the message
 *   kernel:meta drop_stats, overrun,  "ph":"C", cat "kernel:meta",
 *     lost                              name "fxtrace lost (tid T)", args {"records":total}
 *   kernel:meta cpu                   "ph":"C", cat "kernel:meta", name "cpu (tid T)",
 *                                       args {"cpu":N} (FXT_JSON_NO_CPU leaves them out)
 *   clock_sync, dropped, other kernel:meta, blobs, scheduling, objects: nothing
 *
 * Every event has "cat" (the system), "name", "pid", "tid" (the koids) and "ts": CLOCK_MONOTONIC
 * microseconds with three decimals (through the provider's clock syncs, as fxtrace report).
 * "args": integers as numbers (64-bit values beyond +-2^53 as decimal strings), doubles as
 * numbers (NaN and infinities as strings), pointers as "0x.." strings, bools, strings escaped
 * per RFC 8259 with invalid UTF-8 replaced by U+FFFD; a repeated argument name gets " #2"...
 * The top level is {"displayTimeUnit":"ns","traceEvents":[...],"otherData":{counts}}.
 *
 * An input that ends inside a record (a torn tail, fxtfile.h) is converted up to that record,
 * which st->torn names (FXT_JSON_STRICT: FXT_EBADMSG instead).
 *
 * Errors: 0 or a negative FXT_E* code, with "offset N: reason" (or a plain reason) in err.
 *   FXT_EBADMSG, FXT_ENOSYS  the input does not decode (nothing was written then)
 *   FXT_ENOMEM               out of memory
 *   FXT_EINVAL               NULL arguments
 *   any negative value the write callback returned: writing stopped there.
 * Not thread-safe per call; calls on different inputs may run in parallel.
 */
#ifndef FXTRACE_FORMATS_JSON_H
#define FXTRACE_FORMATS_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <fxtrace/fxt.h>

/* fxt_json_options.flags */
#define FXT_JSON_NO_CPU 0x1u /* no "cpu (tid T)" counters */
#define FXT_JSON_STRICT 0x2u /* a torn tail (fxtfile.h) is an error, not the end of input */

/* Receives the output in order; returns 0, or a negative value that ends the conversion. */
typedef int (*fxt_json_write_fn)(void *ctx, const void *data, size_t n);
/* Told that the converter will not read input bytes [from, to) again before it reads them in
 * order (the pass moved on): a caller that mapped the file may drop those pages (madvise
 * MADV_DONTNEED), so a file of gigabytes is converted in bounded resident memory. */
typedef void (*fxt_json_release_fn)(void *ctx, uint64_t from, uint64_t to);

struct fxt_json_options {
  uint32_t flags; /* FXT_JSON_* */
  fxt_json_write_fn write;
  void *write_ctx;
  fxt_json_release_fn release; /* NULL: none */
  void *release_ctx;
  const char *tmpdir; /* the sort's temporary file; NULL: $TMPDIR, else /tmp */
  size_t run_bytes;   /* memory of the sort's runs; 0: 4 MiB (and a quarter of it more for
                         flows and slices) */
};

/* What a conversion wrote (also in the output's "otherData"). */
struct fxt_json_stats {
  uint64_t records;       /* FXT records decoded (one pass) */
  uint64_t events;        /* FXT events converted: the count `fxtrace stats` gives */
  uint64_t lost_counters; /* "fxtrace lost" counter events added (one per loss record) */
  uint64_t lost_records;  /* records those say were lost */
  uint64_t cpu_counters;  /* "cpu" counter events */
  uint64_t unmatched_begin, unmatched_end; /* duration begins never ended, ends never begun,
                                              per thread (records were lost): "B" and "E" */
  uint64_t paired;        /* begin/end pairs written as one complete event ("X") */
  uint64_t flows_bound;   /* flow events moved to the start of the slice enclosing them */
  uint64_t sort_runs;     /* sorted runs spilled to the temporary file */
  uint64_t logs;          /* log records converted to instants */
  uint64_t metadata;      /* "M" events */
  uint64_t skipped;       /* records with nothing to show (clock syncs, blobs, ...) */
  uint64_t bytes;         /* JSON bytes written */
  uint32_t providers;
  uint64_t torn;          /* offset of the input's torn tail (the records before it were
                             converted); 0: none (fxtfile.h: never at 0) */
};

/* Converts buf[0..len) (an fxtrace FXT file, or any FXT stream the strict decoder accepts).
 * st may be NULL. */
int fxt_json_convert(const void *buf, size_t len, const struct fxt_json_options *opt,
                     struct fxt_json_stats *st, char *err, size_t err_size);

#endif /* FXTRACE_FORMATS_JSON_H */
