/* writer.c - per-producer FXT writer with in-band drop accounting (see fxtrace/writer.h). */
#include <fxtrace/detail/fxt_words.h>
#include <fxtrace/writer.h>

#include <stdbool.h>

#include "mem.h"

/* External definition of the inline fast path in fxtrace/writer.h. */
extern inline int fxt_writer_reserve(struct fxt_writer *w, uint64_t header,
                                     struct fxt_reservation *res);

/* drop_stats record layout (FXT event record, spec fxt.md §8 and §9.5): a duration complete
 * of kernel:meta drop_stats with two uint32 arguments and inline koids (thread ref 0). */
#define DROP_STATS_WORDS (FXT_DROP_STATS_BYTES / 8)

static uint64_t drop_stats_header(void)
{
  return fxt_w_event_header(DROP_STATS_WORDS, FXT_EVENT_DURATION_COMPLETE, 2, 0,
                            FXT_STR_KERNEL_META, FXT_STR_DROP_STATS);
}

/* Writes one drop_stats record for as much of the pending run as one record can carry, and
 * takes that much off the pending counts; the run ends when nothing is left. */
static void write_drop_stats(struct fxt_writer *w, struct fxt_ring_res *res)
{
  uint32_t records = w->drop_records > UINT32_MAX ? UINT32_MAX : (uint32_t)w->drop_records;
  uint32_t bytes = w->drop_bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)w->drop_bytes;
  uint64_t rec[DROP_STATS_WORDS] = {
      drop_stats_header(),
      w->drop_first,
      w->process_koid,
      w->thread_koid,
      fxt_w_arg_u32(FXT_STR_NUM_RECORDS, records),
      fxt_w_arg_u32(FXT_STR_NUM_BYTES, bytes),
      w->drop_last,
  };
  (void)fxt_ring_res_write(res, rec, sizeof(rec));
  w->drop_records -= records;
  w->drop_bytes -= bytes;
  if (w->drop_records == 0 && w->drop_bytes == 0)
    w->drop_first = w->drop_last = 0;
}

static inline bool drop_pending(const struct fxt_writer *w)
{
  return w->drop_records != 0 || w->drop_bytes != 0;
}

static void track_drop(struct fxt_writer *w, uint32_t bytes)
{
  uint64_t now = fxt_platform_ticks();
  if (!drop_pending(w))
    w->drop_first = now;
  w->drop_last = now;
  w->drop_records++;
  w->drop_bytes += bytes;
}

int fxt_writer_init_flags(struct fxt_writer *w, void *storage, uint32_t size, uint32_t flags,
                          uint64_t process_koid, uint64_t thread_koid)
{
  int rc = fxt_ring_init(&w->ring, storage, size, flags);
  if (rc < 0)
    return rc;
  w->drop_first = w->drop_last = 0;
  w->drop_records = w->drop_bytes = 0;
  w->process_koid = process_koid;
  w->thread_koid = thread_koid;
  return 0;
}

int fxt_writer_init(struct fxt_writer *w, void *storage, uint32_t size, uint64_t process_koid,
                    uint64_t thread_koid)
{
  return fxt_writer_init_flags(w, storage, size, FXT_RING_DISCARD, process_koid, thread_koid);
}

int fxt_writer_drop_slow(struct fxt_writer *w, uint32_t size)
{
  /* Count the record's own size only, never the drop_stats record's. */
  track_drop(w, size);
  return FXT_ENOSPC;
}

/* Reserves prefix + the record (+ the drop_stats record in front when a run is pending); a
 * failure is counted as a drop of the record when `count`. */
static int reserve(struct fxt_writer *w, uint32_t size, uint32_t prefix, bool count,
                   struct fxt_reservation *res)
{
  /* With a run of drops pending, reserve room for the drop_stats record in front of this
   * record, in the same reservation (the seed's anti-thrash rule). */
  bool pending = drop_pending(w);
  uint64_t total = (uint64_t)size + prefix + (pending ? FXT_DROP_STATS_BYTES : 0);
  if (total > FXT_RING_MAX_SIZE || fxt_ring_reserve(&w->ring, (uint32_t)total, &res->res) != 0)
    return count ? fxt_writer_drop_slow(w, size) : FXT_ENOSPC;
  if (pending)
    write_drop_stats(w, &res->res);
  return 0;
}

/* reserve() for the record whose header word is header: FXT_EINVAL for a header of size 0 or a
 * prefix that is not whole words. Inline: each entry point below is this with constants. */
static inline int reserve_record(struct fxt_writer *w, uint64_t header, uint32_t prefix,
                                 bool count, struct fxt_reservation *res)
{
  uint32_t size = fxt_ring_record_bytes(header);
  if (size == 0 || (prefix & 7) != 0)
    return FXT_EINVAL;
  return reserve(w, size, prefix, count, res);
}

int fxt_writer_reserve_slow(struct fxt_writer *w, uint64_t header, struct fxt_reservation *res)
{
  int rc = reserve_record(w, header, 0, true, res);
  if (rc == 0)
    (void)fxt_ring_res_write(&res->res, &header, 8);
  return rc;
}

int fxt_writer_reserve_prefixed(struct fxt_writer *w, uint64_t header, uint32_t prefix_bytes,
                                struct fxt_reservation *res)
{
  return reserve_record(w, header, prefix_bytes, true, res);
}

int fxt_writer_try_reserve(struct fxt_writer *w, uint64_t header, uint32_t prefix_bytes,
                           struct fxt_reservation *res)
{
  return reserve_record(w, header, prefix_bytes, false, res);
}

int fxt_writer_emit_drop_stats(struct fxt_writer *w)
{
  while (drop_pending(w)) {
    struct fxt_ring_res res;
    if (fxt_ring_reserve(&w->ring, FXT_DROP_STATS_BYTES, &res) != 0)
      return FXT_ENOSPC;
    write_drop_stats(w, &res);
    (void)fxt_ring_res_commit(&res);
  }
  return 0;
}

int64_t fxt_writer_read(struct fxt_writer *w, fxt_copy_fn copy_fn, void *ctx, uint32_t max_bytes)
{
  return fxt_ring_read(&w->ring, copy_fn, ctx, max_bytes);
}

int fxt_writer_drain(struct fxt_writer *w)
{
  (void)fxt_ring_drain(&w->ring);
  return 0;
}
