/* src/base/hist.h - the kernel's event histograms (Documentation/trace/histogram.rst), the part
 * both the tracer's live `hist` triggers (src/host/evtrig_hist.c) and `fxtrace hist` over a
 * file (src/formats/hist.c) use: the description (keys, values, sort keys, size) parsed, the
 * table of entries (the kernel's tracing_map: a fixed number of entries claimed without a
 * lock, a full table counting `Dropped`) and its text, as the kernel's `hist` file prints it
 * (kernel/trace/trace_events_hist.c: hist_trigger_show, hist_trigger_entry_print,
 * event_hist_trigger_print).
 *
 * A histogram has keys (up to FXT_HIST_MAX_KEYS fields; an entry per distinct combination),
 * values summed per entry (hitcount, always, and up to FXT_HIST_MAX_VALS numeric fields), sort
 * keys (hitcount, a key or a value, ascending unless `.descending`; default hitcount) and a
 * size: at most that many entries (rounded up to a power of two, 128..131072, default 2048 as
 * the kernel's). Modifiers: `.hex` (printed in hex), `.log2` (~ 2^N), `.buckets=N` (~ lo-hi),
 * `.execname` (a pid key printed with the name its thread had when its entry was made).
 *
 * A key is bytes the caller builds with fxt_hist_key_num / fxt_hist_key_str, one component per
 * key field in the spec's order: a number (tag 0, 8 bytes) or a string (tag 1, a length byte,
 * the field's `width` bytes zero-padded); every key of a table has its key_size.
 *
 * Errors: 0, FXT_EINVAL (err: what is wrong), FXT_ENOMEM.
 */
#ifndef FXTRACE_BASE_HIST_H
#define FXTRACE_BASE_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tbuf.h"

#define FXT_HIST_MAX_KEYS 3  /* the kernel's TRACING_MAP_KEYS_MAX */
#define FXT_HIST_MAX_VALS 15 /* with hitcount, the kernel's TRACING_MAP_VALS_MAX (16) */
#define FXT_HIST_MAX_SORT 2  /* TRACING_MAP_SORT_KEYS_MAX */
#define FXT_HIST_STR_MAX 255 /* a string key's bytes at most */
#define FXT_HIST_COMM 16     /* an execname's bytes (the kernel's TASK_COMM_LEN) */

enum fxt_hist_mod {
  FXT_HIST_PLAIN,
  FXT_HIST_HEX,
  FXT_HIST_LOG2,
  FXT_HIST_BUCKETS,
  FXT_HIST_EXECNAME,
};

struct fxt_hist_field {
  char name[64];
  enum fxt_hist_mod mod;
  uint64_t buckets; /* FXT_HIST_BUCKETS */
  uint32_t width;   /* a string key's bytes (set by the user of the spec); 0: a number */
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
/* The size a `size=N` asks for: the power of two N rounds up to, 0 when out of range. */
uint32_t fxt_hist_size_of(unsigned long long n);

/* ---- keys ---- */

/* Bytes of the key of spec (its string keys' widths set). */
size_t fxt_hist_key_size(const struct fxt_hist_spec *spec);
/* Writes the component of number v for key field f at key + at (log2 and buckets applied);
 * returns the offset after it. */
size_t fxt_hist_key_num(unsigned char *key, size_t at, const struct fxt_hist_field *f,
                        uint64_t v);
/* The same for a string s[0..n) (cut at the field's width). */
size_t fxt_hist_key_str(unsigned char *key, size_t at, const struct fxt_hist_field *f,
                        const char *s, size_t n);

/* ---- the table ----
 * Concurrency: fxt_hmap_add may run on any number of threads at once (the tracer's emitting
 * threads), without a lock or an allocation; fxt_hmap_print alongside them (it sees each
 * entry once its key is complete); fxt_hmap_clear and fxt_hmap_free only when no add runs
 * (the tracer waits for emissions first). */
struct fxt_hmap;
struct fxt_hmap *fxt_hmap_new(const struct fxt_hist_spec *spec);
void fxt_hmap_free(struct fxt_hmap *m);
/* Counts one event of key (fxt_hist_key_size bytes) with its values (spec's nvals); comm: the
 * thread's name, kept by a new entry for an `.execname` key (may be NULL). False when it was
 * dropped: the table is full (or an entry being claimed by another thread stayed unfinished
 * for as long as the kernel waits), counted in Dropped. */
bool fxt_hmap_add(struct fxt_hmap *m, const unsigned char *key, const uint64_t *vals,
                  const char *comm);
void fxt_hmap_clear(struct fxt_hmap *m);
/* Appends the `hist` file's text: the header (event_hist_trigger_print's line: filter the
 * trigger's, or NULL; name, paused), the entries in sort order (ties: by key), the totals. 0
 * or FXT_ENOMEM. */
int fxt_hmap_print(const struct fxt_hmap *m, const char *name, const char *filter, bool paused,
                   struct fxt_tbuf *out);

/* The trigger's line (a `trigger` file's): "hist:[name:]keys=...:vals=hitcount,...:sort=...:
 * size=N[ if FILTER] [active|paused]\n". */
void fxt_hist_describe(const struct fxt_hist_spec *spec, const char *name, const char *filter,
                       bool paused, struct fxt_tbuf *out);

#endif /* FXTRACE_BASE_HIST_H */
