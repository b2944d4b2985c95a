/* fxtrace/meta.h - the interned strings of fxtrace's own bookkeeping records.
 *
 * Every writer of an FXT file emits a string record for each of these, with exactly these
 * indices, before any other record that refers to them (so records produced in a buffer by
 * fxt_writer_reserve(), which refer to them by index, resolve in every file). Indices
 * 1..FXT_META_STRING_LAST are reserved for this table; other interned strings start at
 * FXT_META_STRING_LAST + 1. Indices are fixed forever; new entries only take unused ones.
 *
 * Embedder API (docs/architecture.md, "Public headers").
 */
#ifndef FXTRACE_META_H
#define FXTRACE_META_H

#include "common.h"

/* X(NAME, index, text) */
#define FXT_META_STRINGS(X)                                                               \
  X(KERNEL_META, 1, "kernel:meta")                                                        \
  X(DROP_STATS, 2, "drop_stats")                                                          \
  X(NUM_RECORDS, 3, "num_records")                                                        \
  X(NUM_BYTES, 4, "num_bytes")                                                            \
  X(CPU, 5, "cpu")                                                                        \
  X(OVERRUN, 6, "overrun")                                                                \
  X(LOST, 7, "lost")                                                                      \
  X(CLOCK_SYNC, 8, "clock_sync")                                                          \
  X(TICKS, 9, "ticks")                                                                    \
  X(MONOTONIC_NS, 10, "monotonic_ns")                                                     \
  X(REALTIME_NS, 11, "realtime_ns")                                                       \
  X(TRACEPOINT, 12, "fxtrace:tracepoint")                                                 \
  X(PROCESS, 13, "process")                                                               \
  X(DROPPED, 14, "dropped")                                                               \
  X(RECORDS, 15, "records")                                                               \
  X(CLOCK, 16, "clock")                                                                   \
  X(SOURCE, 17, "source")                                                                 \
  X(REASON, 18, "reason")

enum fxt_meta_string {
#define FXT_META_STRING_ENUM(name, index, text) FXT_STR_##name = (index),
  FXT_META_STRINGS(FXT_META_STRING_ENUM)
#undef FXT_META_STRING_ENUM
  /* Highest index reserved for fxtrace's bookkeeping strings. */
  FXT_META_STRING_LAST = 31
};

/* The text of fixed string index i ("kernel:meta" for FXT_STR_KERNEL_META); NULL when no entry
 * has that index. */
static inline const char *fxt_meta_string(uint32_t i) {
  switch (i) {
#define FXT_META_STRING_CASE(name, index, text)                                               \
  case index:                                                                                 \
    return text;
    FXT_META_STRINGS(FXT_META_STRING_CASE)
#undef FXT_META_STRING_CASE
  default:
    return FXT_NULL;
  }
}

#endif /* FXTRACE_META_H */
