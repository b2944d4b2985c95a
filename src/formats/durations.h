/* src/formats/durations.h - the durations of a file's scopes and duration events, per
 * system:event (and per thread): count, total, min, mean, max and exact percentiles, as
 * uftrace's `report` and Tracy's zone statistics give them (`fxtrace stats --durations`).
 *
 * A duration is a complete event's (FXT_SCOPE, FXT_COMPLETE: its end minus its start, as
 * report prints dur=), or a begin event's to the end event that closes it: per thread, an end
 * closes the latest begin still open (FXT's nesting; the end's own name is not compared), and
 * the duration is named by the begin. Ends with nothing open and begins never closed are
 * counted, not measured.
 *
 * Percentiles are exact, by nearest rank over the sorted durations: pN is the value at rank
 * ceil(N/100 * count). Memory: 16 bytes per duration (its group and value, sorted once) plus
 * the open begins, so it grows with the number of durations, not with the other events.
 *
 * Errors: 0, FXT_ENOMEM, or the reader's error for an event that no longer reads (err).
 */
#ifndef FXTRACE_FORMATS_DURATIONS_H
#define FXTRACE_FORMATS_DURATIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fxtfile.h"

struct fxt_dur_row {
  char *name;                       /* "system:event" (malloc'ed) */
  const struct fxtf_thread *thread; /* with by_thread; else NULL */
  uint64_t count, total;            /* total saturates at UINT64_MAX */
  uint64_t min, mean, p50, p90, p99, max; /* ns; mean rounded to the nearest */
};

struct fxt_dur_table {
  struct fxt_dur_row *rows; /* by total, largest first; ties by name, then thread */
  size_t n;
  uint64_t open_begins;   /* begins no end closed */
  uint64_t lonely_ends;   /* ends with no begin open on their thread */
};

int fxt_dur_compute(const struct fxtf_file *f, bool by_thread, struct fxt_dur_table *out,
                    char *err, size_t err_size);
void fxt_dur_free(struct fxt_dur_table *t);

#endif /* FXTRACE_FORMATS_DURATIONS_H */
