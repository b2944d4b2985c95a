/* fxtrace/writer.h - per-CPU (per-producer) FXT writer with in-band dropped-record accounting.
 *
 * The behaviour of Zircon's percpu_writer::Buffer: a ring of FXT records plus statistics of
 * the records that did not fit. When a reservation fails, the record's size is counted (first
 * and last drop time, records, bytes). The next reservation that succeeds is enlarged by 56
 * bytes and a `drop_stats` record is written in front of the caller's record, in the same
 * reservation, so a run of drops is reported exactly once and never thrashes:
 *
 *   DurationComplete event, 7 words, thread ref 0 (inline process and thread koids),
 *   category FXT_STR_KERNEL_META ("kernel:meta"), name FXT_STR_DROP_STATS ("drop_stats"),
 *   start = first drop, end = last drop (fxt_platform_ticks() at the failed reservation),
 *   args num_records (uint32), num_bytes (uint32): the string indices of fxtrace/meta.h.
 *
 * Counts are kept in 64 bits; one drop_stats record carries at most UINT32_MAX of each and
 * whatever exceeds that stays pending for a further drop_stats record, so counts never wrap.
 *
 * Producer calls (reserve, res_*, emit_drop_stats) come from the writer's one producer, with
 * no reservation open; consumer calls (read, drain) from its one consumer; see ring.h.
 *
 * Embedder API (docs/architecture.md, "Public headers").
 */
#ifndef FXTRACE_WRITER_H
#define FXTRACE_WRITER_H

#include "common.h"
#include "errors.h"
#include "meta.h"
#include "ring.h"

/* Size of the drop_stats record in bytes. */
#define FXT_DROP_STATS_BYTES 56u

struct fxt_writer {
  struct fxt_ring ring;
  /* Drop statistics: read and written by the producer only (never by the consumer). */
  uint64_t drop_first;   /* ticks of the first drop of the pending run */
  uint64_t drop_last;    /* ticks of the last drop of the pending run */
  uint64_t drop_records; /* records dropped and not yet reported; 0 = no run pending */
  uint64_t drop_bytes;   /* their bytes */
  uint64_t process_koid;
  uint64_t thread_koid;
};

/* An open reservation on a writer (producer stack). */
struct fxt_reservation {
  struct fxt_ring_res res;
};

FXT_EXTERN_C_BEGIN

/* Embedder hook: the current time in trace ticks. The host library defines it in an object
 * file of its own, so a program or test may define its own instead. */
FXT_API uint64_t fxt_platform_ticks(void);

/* Sets up a discard-mode writer over storage (see fxt_ring_init). Returns 0, or FXT_EINVAL when
 * size is not a power of two in [FXT_RING_MIN_SIZE, FXT_RING_MAX_SIZE] or storage is unusable. */
FXT_API int fxt_writer_init(struct fxt_writer *w, void *storage, uint32_t size,
                            uint64_t process_koid, uint64_t thread_koid);

/* fxt_writer_init with ring flags (FXT_RING_DISCARD or FXT_RING_OVERWRITE). In overwrite mode
 * a reservation fails only when the record can never fit. */
FXT_API int fxt_writer_init_flags(struct fxt_writer *w, void *storage, uint32_t size,
                                  uint32_t flags, uint64_t process_koid, uint64_t thread_koid);

/* Reserves the record whose FXT header word is `header` (its size from the header: bits
 * [4..15], or [4..35] for a large record) and writes the header word. When a run of drops is
 * pending, reserves 56 bytes more and writes the drop_stats record first. Returns 0;
 * FXT_EINVAL for a header of 0 words (or over 2^32 - 1 bytes); FXT_ENOSPC when it does not fit,
 * in which case the record's own size (never the drop_stats record's) is counted as dropped.
 * Inline (below; ring.h says how in each language); the rare cases are out of line. */
FXT_API FXT_INLINE int fxt_writer_reserve(struct fxt_writer *w, uint64_t header,
                               struct fxt_reservation *res);
/* The rare cases of fxt_writer_reserve (not for direct use): any header with a run of drops
 * pending or a bad size, and counting a record that did not fit. */
FXT_API int fxt_writer_reserve_slow(struct fxt_writer *w, uint64_t header,
                                    struct fxt_reservation *res) FXT_NOEXCEPT;
FXT_API int fxt_writer_drop_slow(struct fxt_writer *w, uint32_t size) FXT_NOEXCEPT;

/* Like fxt_writer_reserve, with prefix_bytes (a multiple of 8) of bookkeeping records of the
 * caller's reserved in front of the record, in the same reservation: the bookkeeping goes in
 * with the record or not at all, and a failure counts the record's own size only. Writes the
 * pending drop_stats record (if any) but not the header: the caller writes the prefix, then
 * the header word, then the rest. Same return values as fxt_writer_reserve. */
FXT_API int fxt_writer_reserve_prefixed(struct fxt_writer *w, uint64_t header,
                                        uint32_t prefix_bytes, struct fxt_reservation *res);

/* fxt_writer_reserve_prefixed for callers that wait and retry (block mode): a record that does
 * not fit returns FXT_ENOSPC without being counted as dropped. */
FXT_API int fxt_writer_try_reserve(struct fxt_writer *w, uint64_t header, uint32_t prefix_bytes,
                                   struct fxt_reservation *res);

/* Writes one 64-bit word (native byte order) into the reservation. */
static inline void fxt_res_write_word(struct fxt_reservation *res, uint64_t word)
{
  (void)fxt_ring_res_write(&res->res, &word, 8);
}

/* Writes len bytes, then zeros up to the next multiple of 8. */
static inline void fxt_res_write_bytes(struct fxt_reservation *res, const void *bytes,
                                       uint32_t len)
{
  static const unsigned char zeros[8] = {0};
  (void)fxt_ring_res_write(&res->res, bytes, len);
  if (len & 7)
    (void)fxt_ring_res_write(&res->res, zeros, 8 - (len & 7));
}

/* Publishes the reservation (unwritten bytes are zero-filled). */
static inline void fxt_res_commit(struct fxt_reservation *res)
{
  (void)fxt_ring_res_commit(&res->res);
}

/* Writes the pending drop statistics as drop_stats records of their own. Returns 0 when nothing
 * is pending or all of it was written; FXT_ENOSPC when a record did not fit (what was not
 * written stays pending). */
FXT_API int fxt_writer_emit_drop_stats(struct fxt_writer *w);

/* Consumer: see fxt_ring_read. Returns bytes consumed, 0 when empty, or a negative error. */
FXT_API int64_t fxt_writer_read(struct fxt_writer *w, fxt_copy_fn copy_fn, void *ctx,
                                uint32_t max_bytes);

/* Consumer: discards every committed record. Returns 0. */
FXT_API int fxt_writer_drain(struct fxt_writer *w);

FXT_EXTERN_C_END

FXT_API inline int fxt_writer_reserve(struct fxt_writer *w, uint64_t header,
                                      struct fxt_reservation *res)
{
  uint32_t size = fxt_ring_record_bytes(header);
  if (FXT_UNLIKELY(size == 0 || (w->drop_records | w->drop_bytes) != 0))
    return fxt_writer_reserve_slow(w, header, res);
  if (FXT_UNLIKELY(fxt_ring_reserve(&w->ring, size, &res->res) != 0))
    return fxt_writer_drop_slow(w, size);
  (void)fxt_ring_res_write(&res->res, &header, 8);
  return 0;
}

#endif /* FXTRACE_WRITER_H */
