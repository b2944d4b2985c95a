/* metarec.h - the kernel:meta bookkeeping records (docs/fxt-conventions.md) as the consumer
 * writes them into a session's file and recovery writes them into a recovered one: built in
 * one place so that both say the same. The caller sets the thread and encodes the event.
 */
#ifndef FXT_BASE_METAREC_H
#define FXT_BASE_METAREC_H

#include <fxtrace/fxt.h>
#include <fxtrace/meta.h>
#include <stdbool.h>
#include <stdint.h>

/* Bookkeeping records are FXT events of category kernel:meta. A thread's ring is told to
 * overwrite them without counting them in overrun_records (slots_int.h fxt_slot_ring_policy:
 * that counter is about events), and the consumer and the live view tell them from events the
 * same way. The pattern of their header word (type and category): */
#define FXT_META_HEADER_MASK ((uint64_t)0xf | (uint64_t)0xffff << 32)
#define FXT_META_HEADER_MATCH ((uint64_t)FXT_RECORD_EVENT | (uint64_t)FXT_STR_KERNEL_META << 32)

static inline bool fxt_meta_is_bookkeeping(uint64_t header)
{
  return (header & FXT_META_HEADER_MASK) == FXT_META_HEADER_MATCH;
}

/* A reference to string table index `index`. */
static inline struct fxt_str_ref fxt_meta_ref(uint16_t index)
{
  struct fxt_str_ref r = {0, 0, index};
  return r;
}

/* The part every bookkeeping record shares: an event of kernel:meta named `name` (a
 * fxtrace/meta.h index) at ts, of type `type`, with n arguments, each set by fxt_meta_arg. */
static inline void fxt_meta_event(struct fxt_event *e, uint32_t type, uint16_t name, uint64_t ts,
                                  uint32_t n)
{
  e->type = type;
  e->timestamp = ts;
  e->category = fxt_meta_ref(FXT_STR_KERNEL_META);
  e->name = fxt_meta_ref(name);
  e->num_args = n;
}

/* Argument i's type and name (a fxtrace/meta.h index); the caller sets its value. */
static inline union fxt_arg_value *fxt_meta_arg(struct fxt_event *e, uint32_t i, uint32_t type,
                                                uint16_t name)
{
  e->args[i].type = type;
  e->args[i].name = fxt_meta_ref(name);
  return &e->args[i].value;
}

/* An instant `name` (FXT_STR_OVERRUN, FXT_STR_LOST) with num_records and num_bytes; a
 * drop_stats record is the same event as a duration-complete (fxt_meta_drop_stats). */
static inline void fxt_meta_loss(struct fxt_event *e, uint16_t name, uint32_t records,
                                 uint32_t bytes, uint64_t ts)
{
  fxt_meta_event(e, FXT_EVENT_INSTANT, name, ts, 2);
  fxt_meta_arg(e, 0, FXT_ARG_UINT32, FXT_STR_NUM_RECORDS)->u32 = records;
  fxt_meta_arg(e, 1, FXT_ARG_UINT32, FXT_STR_NUM_BYTES)->u32 = bytes;
}

/* A drop run from first to last (ticks), as the writer reports it (fxtrace/writer.h). */
static inline void fxt_meta_drop_stats(struct fxt_event *e, uint32_t records, uint32_t bytes,
                                       uint64_t first, uint64_t last)
{
  fxt_meta_loss(e, FXT_STR_DROP_STATS, records, bytes, first);
  e->type = FXT_EVENT_DURATION_COMPLETE;
  e->trailer = last >= first ? last : first;
}

/* The `cpu` counter (counter id 0): from ts on, the thread runs on cpu. */
static inline void fxt_meta_cpu(struct fxt_event *e, uint32_t cpu, uint64_t ts)
{
  fxt_meta_event(e, FXT_EVENT_COUNTER, FXT_STR_CPU, ts, 1);
  e->trailer = 0;
  fxt_meta_arg(e, 0, FXT_ARG_UINT32, FXT_STR_CPU)->u32 = cpu;
}

/* The clock sync instant: ticks, CLOCK_MONOTONIC and CLOCK_REALTIME read together. */
static inline void fxt_meta_clock_sync(struct fxt_event *e, uint64_t ticks, uint64_t mono_ns,
                                       uint64_t real_ns)
{
  static const uint16_t names[3] = {FXT_STR_TICKS, FXT_STR_MONOTONIC_NS, FXT_STR_REALTIME_NS};
  const uint64_t values[3] = {ticks, mono_ns, real_ns};
  fxt_meta_event(e, FXT_EVENT_INSTANT, FXT_STR_CLOCK_SYNC, ticks, 3);
  for (uint32_t k = 0; k < 3; k++)
    fxt_meta_arg(e, k, FXT_ARG_UINT64, names[k])->u64 = values[k];
}

/* The `clock` instant: the trace clock ("tsc", "cntvct", "monotonic") and why it was chosen, in
 * words (src/host/clock.c); both strings inline, source and reason at most 0x7fff bytes. */
static inline void fxt_meta_clock(struct fxt_event *e, uint64_t ts, const char *source,
                                  uint16_t source_len, const char *reason, uint16_t reason_len)
{
  fxt_meta_event(e, FXT_EVENT_INSTANT, FXT_STR_CLOCK, ts, 2);
  fxt_meta_arg(e, 0, FXT_ARG_STRING, FXT_STR_SOURCE)->str = fxt_str_inline(source, source_len);
  fxt_meta_arg(e, 1, FXT_ARG_STRING, FXT_STR_REASON)->str = fxt_str_inline(reason, reason_len);
}

#endif
