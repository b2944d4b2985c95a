/* src/base/fxtf_event.h - fxtrace events as the readers of FXT see them: a provider (one
 * process of a file), its threads, its tracepoint descriptions and clock syncs, and one event
 * with what it refers to. The formats library's FXT reader (src/formats/fxtfile.h) fills these;
 * the event text (text.h) prints them, for the `fxtrace` command and for the tracer's live
 * `trace` files alike, which is why they sit below both.
 */
#ifndef FXTRACE_BASE_FXTF_EVENT_H
#define FXTRACE_BASE_FXTF_EVENT_H

#include <stdbool.h>
#include <stdint.h>

#include <fxtrace/fxt.h>
#include <fxtrace/tracepoint.h>

/* A thread whose CPU no `cpu` record has told yet. */
#define FXTF_CPU_UNKNOWN UINT32_MAX

/* Text inside the mapped file (not NUL-terminated). */
struct fxtf_text {
  const char *data;
  uint32_t len;
};

/* The text of a decoded string ref ("" for an empty one). */
static inline struct fxtf_text fxtf_text_of(const struct fxt_str_ref *r) {
  struct fxtf_text t = {r->data ? r->data : "", r->len};
  return t;
}

struct fxtf_field {
  struct fxtf_text name;
  uint8_t type;   /* enum fxt_type */
  uint32_t bound; /* string: max bytes; byte array: size */
};

/* A tracepoint description (blob `fxtrace:tracepoint`). */
struct fxtf_desc {
  uint64_t offset; /* of the blob record */
  uint32_t provider;
  uint32_t id;
  uint16_t kind; /* enum fxt_tp_kind */
  uint16_t nfields;
  uint16_t system_ref, name_ref;
  struct fxtf_text system, name, fmt;
  struct fxtf_field fields[FXT_MAX_FIELDS];
};

struct fxtf_sync {
  uint64_t offset;
  uint64_t ticks, monotonic_ns, realtime_ns;
};

/* One provider segment: the records from a provider info record to the next one. */
struct fxtf_provider {
  uint32_t id; /* the process id */
  struct fxtf_text name;         /* "fxtrace/1" */
  struct fxtf_text process_name; /* kernel object type 1 of koid id; len 0 when none */
  uint64_t offset, end;          /* [offset, end) of the file: its first record, the end of its
                                    last run (other providers' runs may lie between:
                                    fxtf_provider_at) */
  uint64_t ticks_per_second;     /* 0: no initialization record */
  uint32_t nsyncs;
  struct fxtf_sync first_sync, last_sync;
  const struct fxtf_sync *syncs; /* all nsyncs of them in file order, or NULL (readers that
                                    keep only the first and last) */
  uint64_t events;
  /* The trace clock and why it was chosen (its kernel:meta `clock` record; "" without one:
   * files of older versions, converted kernel traces). Cut at the array sizes. */
  char clock_source[16];
  char clock_reason[256];
};

struct fxtf_thread {
  uint32_t provider; /* index of its provider */
  uint64_t pid, tid;
  struct fxtf_text comm; /* the latest kernel object name; len 0 and named false when none */
  bool named;
  uint32_t cpu; /* at the end of the file; FXTF_CPU_UNKNOWN */
  uint64_t events;
  uint64_t dropped, overrun, lost; /* records lost, by kind (drop_stats, overrun, lost) */
  uint64_t trailing_lost;          /* records lost after its last event (not its CPU losses) */
  bool trailing_unknown;           /* and some more of an unknown count */
  uint64_t first_offset; /* of its first event or bookkeeping record; UINT64_MAX: none */
};

/* One event, as fxtf_event_at() returns it. */
struct fxtf_event {
  const struct fxtf_provider *provider;
  const struct fxtf_thread *thread;
  const struct fxtf_desc *desc; /* NULL when the file has no description for it */
  uint64_t offset;
  uint64_t ns;          /* CLOCK_MONOTONIC */
  uint32_t cpu;         /* FXTF_CPU_UNKNOWN when no cpu record preceded it */
  uint64_t lost_before; /* records of its thread, or of its CPU, lost just before it */
  bool lost_unknown;    /* and some more, of an unknown count (`count_unknown`) */
  struct fxt_event ev;  /* timestamp in ticks; thread koids = thread->pid/tid */
};

#endif /* FXTRACE_BASE_FXTF_EVENT_H */
