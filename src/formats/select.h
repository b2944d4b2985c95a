/* src/formats/select.h - which events of an FXT file a command keeps (`fxtrace report`'s and
 * `fxtrace hist`'s selection options), and the ftrace fields each event has, so that a filter
 * in the kernel's grammar (fxtrace/filter.h, the engine the live tree uses) runs on a file's
 * events as on live ones.
 *
 * Criteria (each option one; all must hold, so a repeated option narrows):
 *   events   comma-separated globs on system:event, as `record -e` and FXTRACE's events=
 *            match tracepoints: blanks trimmed, a glob without ':' gets ":*", "!glob"
 *            excludes, the last glob that matches decides (fnmatch, no flags)
 *   pid/tid  lists "1,3-5" of the emitting thread's process and thread ids
 *   cpu      a list of the recording CPUs (an event of unknown CPU matches none)
 *   comm     a glob on the thread's name (fnmatch, no flags; "<...>" when unnamed, as report
 *            prints it)
 *   from/to  seconds (CLOCK_MONOTONIC), both inclusive: with up to 6 decimals compared with
 *            the time report prints (rounded to the microsecond), so that an event printed
 *            at T is kept by --from T and by --to T; with 7 to 9, with the nanosecond; "+S"
 *            is S after the file's first event, to the nanosecond
 *   filter   a filter expression on the event's fields (fxt_sel_fields)
 *
 * Fields of an event (the trace.dat export's names and types: tracedat_write_event.h):
 *   typed tracepoint  its declared fields, each of its declared type when the recorded
 *                     argument is what that type records, else of the argument's own type
 *   duration complete (scopes, FXT_COMPLETE) `u64 dur_ns`, then its arguments
 *   counter           `u64 id`, then its values (arguments); async and flow: `u64 id` too
 *   anything else     its arguments: int32 s32, uint32 u32, int64 s64, uint64 and koid u64,
 *                     double, pointer void *, bool, string char[] (null and blob: none)
 *   and every event the common fields of filter.h: common_pid (the thread id, as the kernel
 *   names a task), common_type (the tracepoint id where the file has a description, else 0),
 *   cpu/common_cpu, comm. Begin and end events have their arguments only.
 *
 * Errors: FXT_EINVAL with "reason at offset N" (lists, times) or the kernel's filter error;
 * FXT_ENOMEM. Not thread-safe: one selection per thread.
 */
#ifndef FXTRACE_FORMATS_SELECT_H
#define FXTRACE_FORMATS_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fxtrace/filter.h>

#include "fxtfile.h"

enum fxt_sel_kind {
  FXT_SEL_EVENTS,
  FXT_SEL_PID,
  FXT_SEL_TID,
  FXT_SEL_COMM,
  FXT_SEL_CPU,
  FXT_SEL_FROM,
  FXT_SEL_TO,
  FXT_SEL_FILTER,
};

/* A list "1,3-5": ranges [lo, hi]. */
struct fxt_sel_range {
  uint64_t lo, hi;
};

/* A time option's value. */
struct fxt_sel_time {
  uint64_t ns;   /* from the epoch of report's seconds, or from the first event (relative) */
  bool printed;  /* compared with the printed microsecond (absolute, up to 6 decimals) */
  bool relative; /* "+S" */
};

/* The fields of one kind of event, as a filter is compiled against them. */
#define FXT_SEL_MAX_FIELDS (FXT_MAX_ARGS + 1)
struct fxt_sel_fields {
  struct fxt_field f[FXT_SEL_MAX_FIELDS];
  char names[FXT_SEL_MAX_FIELDS][64]; /* f[i].name points here */
  uint32_t n;
  int8_t arg[FXT_SEL_MAX_FIELDS]; /* the event argument field i is read from; -1: the head */
};

/* The values of an event's fields (fxt_filter_match's arrays) and its common fields. */
struct fxt_sel_values {
  union fxt_value v[FXT_SEL_MAX_FIELDS];
  uint32_t lens[FXT_SEL_MAX_FIELDS];
  struct fxt_filter_common common;
  char comm[17];
};

struct fxt_sel;

/* Parses "1,3-5" (decimal, ranges lo-hi with lo <= hi, no blanks) into a malloc'ed array of
 * *n ranges. 0, FXT_EINVAL (err: "reason at offset N") or FXT_ENOMEM. */
int fxt_sel_parse_list(const char *s, struct fxt_sel_range **out, size_t *n, char *err,
                       size_t err_size);
/* Parses seconds "S[.fraction]" (up to 9 decimals) or "+S[.fraction]". 0 or FXT_EINVAL. */
int fxt_sel_parse_time(const char *s, struct fxt_sel_time *out, char *err, size_t err_size);

struct fxt_sel *fxt_sel_new(void);
void fxt_sel_free(struct fxt_sel *s);
/* Adds one criterion. A filter is checked here for what does not depend on an event's fields
 * (its syntax): an error sets *ferr (may be NULL) and returns its code. */
int fxt_sel_add(struct fxt_sel *s, enum fxt_sel_kind kind, const char *arg, char *err,
                size_t err_size, struct fxt_filter_error *ferr);
/* Whether any criterion was added. */
bool fxt_sel_any(const struct fxt_sel *s);
/* Binds the selection to the file its events come from (relative times, thread tables). Call
 * before fxt_sel_match. 0 or FXT_ENOMEM. */
int fxt_sel_bind(struct fxt_sel *s, const struct fxtf_file *f);
/* Whether e passes every criterion. An event whose fields lack one a filter names fails it
 * (trace-cmd report -F's rule); *oom set on an allocation failure (the event then fails). */
bool fxt_sel_match(struct fxt_sel *s, const struct fxtf_event *e, bool *oom);
/* Events left out because a filter could not be compiled for their kind for a reason other
 * than a missing field (a field of another type: "Expecting numeric field"...), and the
 * first such error (code FXT_FILTER_ERR_NONE when none). An event without a field the filter
 * names is left out silently, as trace-cmd report -F does. */
uint64_t fxt_sel_unfiltered(const struct fxt_sel *s, struct fxt_filter_error *first);
/* A filter that compiled for none of the kinds met (the text, NULL when none), with its error:
 * one other than a missing field when a kind gave one. */
const char *fxt_sel_filter_failed(const struct fxt_sel *s, struct fxt_filter_error *err);

/* The fields of e's kind (see above). */
void fxt_sel_fields_of(const struct fxtf_event *e, struct fxt_sel_fields *out);
/* The values of e's fields, laid out by fields (fxt_sel_fields_of of e's kind); bytes arrays
 * are decoded into scratch (FXT_SEL_MAX_FIELDS * FXT_STR_MAX_BOUND bytes). */
void fxt_sel_values_of(const struct fxtf_event *e, const struct fxt_sel_fields *fields,
                       struct fxt_sel_values *out, unsigned char *scratch);
/* The kinds of events met so far, each with its fields: events of one kind have the same
 * system:event, event type, description and argument names and types, so what depends on
 * those only (the glob's verdict, a compiled filter, a histogram's key fields) is worked out
 * once per kind. */
struct fxt_sel_kinds;
struct fxt_sel_kinds *fxt_sel_kinds_new(void);
void fxt_sel_kinds_free(struct fxt_sel_kinds *k);
/* The index (0, 1, ... in order of first meeting) of e's kind, *is_new when e is the first
 * of it; -1 on an allocation failure. */
int64_t fxt_sel_kind(struct fxt_sel_kinds *k, const struct fxtf_event *e, bool *is_new);
/* The fields of kind i. */
const struct fxt_sel_fields *fxt_sel_kind_fields(const struct fxt_sel_kinds *k, size_t i);

#endif /* FXTRACE_FORMATS_SELECT_H */
