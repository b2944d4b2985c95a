/* src/formats/hist.h - the kernel's event histograms (Documentation/trace/histogram.rst, a
 * `hist:` trigger's `hist` file) over a file's events, for `fxtrace hist`. The description,
 * the table and the text are the base's (src/base/hist.h), shared with the tracer's live
 * `hist` triggers.
 *
 * A histogram has keys (up to FXT_HIST_MAX_KEYS fields; an entry per distinct combination),
 * values summed per entry (hitcount, always, and up to FXT_HIST_MAX_VALS numeric fields), sort
 * keys (hitcount, a key or a value, ascending unless `.descending`; default hitcount) and a
 * size: at most that many entries (rounded up to a power of two, 128..131072, default 2048 as
 * the kernel's); an event whose new entry does not fit is dropped, counted in `Dropped`.
 *
 * Fields are the events' ftrace fields (select.h: typed fields, dur_ns, id, arguments) and
 * common_pid, common_cpu (or cpu), comm (or common_comm) and common_type. An event counts when
 * its kind has every key and value field; kinds of the same field names share entries.
 * Modifiers, as the kernel's: `.hex` (printed in hex), `.log2` (the key is the power of two the
 * value rounds up to: ~ 2^N), `.buckets=N` (the value rounded down to a multiple of N:
 * ~ lo-hi). Numbers are read as the kernel does, into 64 bits, signed ones sign-extended (and
 * printed unsigned, as %llu); strings (and char arrays) as keys are cut at 255 bytes.
 *
 * The text is the kernel's: "# event histogram" with the trigger's description, one
 * "{ key: value, ... } hitcount: N  val: N" line per entry in sort order (ties: by key), and
 * the "Totals:" with Hits (events counted), Entries and Dropped.
 *
 * Errors: 0, FXT_EINVAL (err: what is wrong), FXT_ENOMEM.
 */
#ifndef FXTRACE_FORMATS_HIST_H
#define FXTRACE_FORMATS_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/hist.h"
#include "../base/tbuf.h"
#include "fxtfile.h"

struct fxt_hist;
struct fxt_hist *fxt_hist_new(const struct fxt_hist_spec *spec);
void fxt_hist_free(struct fxt_hist *h);
/* Counts e. 0 or FXT_ENOMEM. */
int fxt_hist_add(struct fxt_hist *h, const struct fxtf_event *e);
/* Appends the histogram's text; filter: the filter's text (the trigger's " if ..."), or NULL.
 * 0 or FXT_ENOMEM. */
int fxt_hist_print(struct fxt_hist *h, const char *filter, struct fxt_tbuf *out);
/* Whether some event had every field (false: nothing matched, a name may be wrong). */
bool fxt_hist_any_kind(const struct fxt_hist *h);

#endif /* FXTRACE_FORMATS_HIST_H */
