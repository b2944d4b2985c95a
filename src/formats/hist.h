/* src/formats/hist.h - the kernel's event histograms (Documentation/trace/histogram.rst, a
 * `hist:` trigger's `hist` file) over a file's events, for `fxtrace hist`.
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

#include "../base/tbuf.h"
#include "fxtfile.h"

#define FXT_HIST_MAX_KEYS 3  /* the kernel's TRACING_MAP_KEYS_MAX */
#define FXT_HIST_MAX_VALS 15 /* with hitcount, the kernel's TRACING_MAP_VALS_MAX (16) */
#define FXT_HIST_MAX_SORT 2  /* TRACING_MAP_SORT_KEYS_MAX */

enum fxt_hist_mod { FXT_HIST_PLAIN, FXT_HIST_HEX, FXT_HIST_LOG2, FXT_HIST_BUCKETS };

struct fxt_hist_field {
  char name[64];
  enum fxt_hist_mod mod;
  uint64_t buckets; /* FXT_HIST_BUCKETS */
};

struct fxt_hist_spec {
  struct fxt_hist_field keys[FXT_HIST_MAX_KEYS], vals[FXT_HIST_MAX_VALS];
  uint32_t nkeys, nvals;
  struct {
    int field; /* -1 hitcount; 0.. keys; FXT_HIST_MAX_KEYS.. values */
    bool descending;
  } sort[FXT_HIST_MAX_SORT];
  uint32_t nsort;
  uint32_t size; /* a power of two */
};

/* Parses -k KEYS, -v VALS (may be NULL), -s SORT (may be NULL) and --size N (may be NULL). */
int fxt_hist_parse(struct fxt_hist_spec *spec, const char *keys, const char *vals,
                   const char *sort, const char *size, char *err, size_t err_size);

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
