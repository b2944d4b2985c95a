/* deliver.c - the consumer's two-step read of a ring: stage records without consuming them,
 * write them to the output, and only then move the ring's tail past them (consumer.c), so a
 * record is always in the output file or still in its buffer (docs/recovery.md).
 *
 * Staging in discard mode (stage_discard) takes [tail, head) where it lies: nothing but this
 * consumer moves tail, so those bytes stay as they are until it does, and the consumer writes
 * them to the file straight from the ring; only a run that wraps past the end of storage is
 * copied into the staging buffer. In overwrite mode staging copies through the ring's
 * non-consuming iterator (fxt_ring_iter_*), which returns only whole, untorn records while the
 * producer moves the tail. Consuming:
 *
 *  - discard mode: the staged records are still the oldest and were checked whole when staged,
 *    so the consumer stores tail = their end with a release store (ring.c (2): it pairs with
 *    the producer's acquire load of tail before it reuses the space, so the write() that read
 *    the records happens before the producer overwrites them).
 *  - overwrite mode: the producer moves tail too, overwriting the oldest records and counting
 *    them in overrun_records. It may have passed some of the staged records after they were
 *    copied (they are in the output all the same); the consumer moves tail from where it is to
 *    the end of the staged records with a release compare-and-swap (ring.c (2): it pairs with
 *    the producer's acquire load of tail in make_room, so the copy happens before the space is
 *    reused), and credits the staged records the producer had passed: they are delivered, so
 *    they must not be reported as overrun.
 * These are the only places outside ring.c that write a ring's tail; they do so under the
 * protocol of ring.c's comment.
 */
#include <fxtrace/errors.h>
#include <fxtrace/meta.h>
#include <string.h>

#include "../base/cpunote.h"
#include "deliver.h"
#include "../base/metarec.h"

/* Whole records from p (their bytes up to n; avail: bytes committed from p on, so a record
 * cut by n is told from a damaged header). *rc: FXT_EBADMSG when not even the first record
 * is whole and valid. */
static uint32_t whole_records(const unsigned char *p, uint32_t n, uint32_t avail, int *rc)
{
  uint32_t len = 0;
  *rc = 0;
  while (len + 8 <= n) {
    uint64_t h;
    memcpy(&h, p + len, 8);
    uint32_t b = fxt_ring_record_bytes(h);
    if (b == 0 || b > avail - len || b > n - len) {
      /* Damage (a header past the committed end), or a record larger than cap or cut at the
       * end of storage: what precedes goes now, the next call reports or copies it. */
      *rc = len ? 0 : FXT_EBADMSG;
      break;
    }
    len += b;
  }
  return len;
}

/* Discard mode: only this consumer moves tail, so [tail, head) holds whole committed records
 * that stay where they are until it does (the acquire load of head pairs with the producer's
 * release in commit, ring.h). The records up to the end of storage are staged in place; a
 * first record that wraps is staged by copying the committed bytes, both pieces, into buf.
 * Then one walk for the record boundaries: no atomic per record. */
static int stage_discard(struct fxt_ring *r, unsigned char *buf, uint32_t cap,
                         struct fxt_staged *st)
{
  uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed); /* ours */
  uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);
  uint32_t avail = head - tail, n = avail < cap ? avail : cap;
  const unsigned char *base = (const unsigned char *)r + r->storage_off;
  uint32_t off = tail & (r->size - 1), first = r->size - off < n ? r->size - off : n;
  int rc = 0;
  uint32_t len = whole_records(base + off, first, avail, &rc);
  st->data = base + off;
  if (len == 0 && first < n) { /* the oldest record wraps: copy */
    memcpy(buf, base + off, first);
    memcpy(buf + first, base, n - first);
    len = whole_records(buf, n, avail, &rc);
    st->data = buf;
  }
  st->from = tail;
  st->to = tail + len;
  st->len = len;
  return rc;
}

int fxt_deliver_stage(struct fxt_ring *r, struct fxt_sh_slot *e, unsigned char *buf,
                      uint32_t cap, struct fxt_staged *st)
{
  if (!(r->flags & FXT_RING_OVERWRITE)) {
    int rc = stage_discard(r, buf, cap, st);
    uint64_t v[4];
    fxt_cpu_notes_load(e, v); /* only this consumer moves tail: its own notes */
    st->cpu = fxt_cpu_note_match(v, st->from);
    return rc;
  }
  struct fxt_cpu_iter it;
  fxt_cpu_iter_begin(&it, r, e);
  uint32_t from = it.it.pos, len = 0, cpu = FXT_CPU_NOTE_NONE;
  int rc = 0;
  for (;;) {
    uint32_t n = 0;
    bool gap;
    rc = fxt_cpu_iter_next(&it, buf + len, cap - len, &n, &cpu, &gap);
    if (gap) {
      /* Overwrite mode: the producer passed what was staged and counted it as overrun; start
       * again from where the iterator resumed (a record it just returned is at buf + len). */
      if (rc == 1) {
        memmove(buf, buf + len, n);
        from = it.it.pos - n;
        len = 0;
      } else {
        from = it.it.pos;
        len = 0;
      }
    }
    if (rc != 1)
      break;
    len += n;
  }
  st->cpu = len ? cpu : FXT_CPU_NOTE_NONE;
  st->data = buf;
  st->from = from;
  st->to = from + len;
  st->len = len;
  if (rc == FXT_EBADMSG || (rc == FXT_ENOBUFS && len == 0))
    return len ? 0 : FXT_EBADMSG; /* damage past what was staged: the next call reports it */
  return 0;
}

/* Non-bookkeeping records (metarec.h: kernel:meta events are not counted in a thread ring's
 * overrun_records) among the first `bytes` of the staged copy. */
static uint32_t event_records(const unsigned char *buf, uint32_t bytes)
{
  uint32_t records = 0;
  for (uint32_t off = 0; off + 8 <= bytes;) {
    uint64_t h;
    memcpy(&h, buf + off, 8);
    uint32_t n = fxt_ring_record_bytes(h);
    if (n == 0)
      break;
    records += !fxt_meta_is_bookkeeping(h);
    off += n;
  }
  return records;
}

uint32_t fxt_deliver_advance(struct fxt_ring *r, const struct fxt_staged *st,
                             uint32_t *credit_records, uint32_t *credit_bytes)
{
  const unsigned char *buf = st->data;
  *credit_records = *credit_bytes = 0;
  if (st->len == 0)
    return 0;
  if (!(r->flags & FXT_RING_OVERWRITE)) {
    uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed); /* ours */
    atomic_store_explicit(&r->tail, st->to, memory_order_release); /* (2) */
    return st->to - tail;
  }
  uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
  for (;;) {
    if (tail - st->from > st->len) {
      /* The producer is past everything staged: all of it was counted as overrun. */
      *credit_records = event_records(buf, st->len);
      *credit_bytes = st->len;
      return 0;
    }
    /* Release pairs with the producer's acquire load of tail (ring.c (2)). On failure the
     * producer moved tail (overwriting and counting); look again from where it is. */
    if (atomic_compare_exchange_weak_explicit(&r->tail, &tail, st->to, memory_order_release,
                                              memory_order_relaxed)) {
      *credit_records = event_records(buf, tail - st->from);
      *credit_bytes = tail - st->from;
      return st->to - tail;
    }
  }
}
