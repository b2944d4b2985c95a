/* consumer_held.c - signal-context records: popped from the session's ingress ring into the
 * held area of the session file, and merged back into their threads' streams by time. */
#define _GNU_SOURCE
#include "consumer_int.h"

/* ---- signal-context records (ingress) ------------------------------------------------ *
 * Records popped from the ingress ring wait in the held area of the session file until they
 * are merged into their thread's stream: entries of FXT_SH_HELD_HEADER bytes (u32 slot, u32
 * len, u32 the ingress position they were popped from, u32 consumed_by) and the record. The
 * area has two halves; the current one is sh->held_active, its length sh->held_len[active].
 * An entry a write takes is marked with that write's intent seq before the write; after the
 * commit the entries taken are dropped by copying the others into the other half and switching
 * halves (one store), so a crash at any point leaves one consistent half (docs/recovery.md). */

static unsigned char *held_half(uint32_t half)
{
  return fxt_cons.s->held + (size_t)half * fxt_cons.s->sh->held_half_bytes;
}

static void hold_fn(void *ctx, const void *rec, uint32_t len, uint32_t epoch, uint32_t tag)
{
  struct session *s = ctx;
  struct fxt_sh *h = s->sh;
  uint32_t half = atomic_load_explicit(&h->held_active, memory_order_relaxed);
  uint64_t used = atomic_load_explicit(&h->held_len[half], memory_order_relaxed);
  if (epoch != s->gen || tag >= s->nslots || (len & 7) != 0 ||
      used + FXT_SH_HELD_HEADER + len > h->held_half_bytes)
    return; /* from an earlier session (pop_ingress leaves room for the largest record) */
  unsigned char *e = held_half(half) + used;
  /* ready_head is the position being popped: pop_batch stores it after this call. A crash
   * between this entry and that store leaves the record both here and in the ring: the
   * position tells a recovery which one to take. */
  uint32_t qpos = atomic_load_explicit(&s->ingress->ready_head, memory_order_relaxed);
  uint32_t zero = 0;
  memcpy(e, &tag, 4);
  memcpy(e + 4, &len, 4);
  memcpy(e + 8, &qpos, 4);
  memcpy(e + 12, &zero, 4);
  memcpy(e + FXT_SH_HELD_HEADER, rec, len);
  atomic_signal_fence(memory_order_seq_cst); /* the entry is whole before the length says so */
  atomic_store_explicit(&h->held_len[half], used + FXT_SH_HELD_HEADER + len,
                        memory_order_relaxed);
}

void fxt_cons_pop_ingress(struct session *s)
{
  struct fxt_sh *h = s->sh;
  for (;;) {
    uint32_t half = atomic_load_explicit(&h->held_active, memory_order_relaxed);
    uint64_t room = h->held_half_bytes - atomic_load_explicit(&h->held_len[half],
                                                              memory_order_relaxed);
    uint32_t max = (uint32_t)(room / (FXT_SH_HELD_HEADER + INGRESS_PAYLOAD));
    if (max == 0 || fxt_ingress_pop_batch(s->ingress, hold_fn, s, max < 128 ? max : 128) == 0)
      break;
  }
}

/* After a commit that took held records: the current half without them becomes the other. */
void fxt_cons_held_compact(struct session *s)
{
  struct fxt_sh *h = s->sh;
  uint32_t half = atomic_load_explicit(&h->held_active, memory_order_relaxed);
  uint64_t used = atomic_load_explicit(&h->held_len[half], memory_order_relaxed), keep = 0;
  const unsigned char *from = held_half(half);
  unsigned char *to = held_half(half ^ 1);
  for (uint64_t at = 0; at + FXT_SH_HELD_HEADER <= used;) {
    uint32_t len, taken;
    memcpy(&len, from + at + 4, 4);
    memcpy(&taken, from + at + 12, 4);
    if (!taken) {
      memcpy(to + keep, from + at, FXT_SH_HELD_HEADER + len);
      keep += FXT_SH_HELD_HEADER + len;
    }
    at += FXT_SH_HELD_HEADER + len;
  }
  atomic_store_explicit(&h->held_len[half ^ 1], keep, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&h->held_active, half ^ 1, memory_order_relaxed); /* the switch */
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&h->held_len[half], 0, memory_order_relaxed);
}

/* A record's place in its thread's time order: an event's timestamp, or for a
 * duration-complete event (a scope, drop_stats: written when it ends) its end, as readers
 * order them (docs/fxt-conventions.md; fxtrace check). */
uint64_t fxt_cons_ts_of(const unsigned char *rec, uint32_t len)
{
  uint64_t h, ts = 0;
  memcpy(&h, rec, 8);
  if ((h & 0xf) == FXT_RECORD_EVENT && len >= 16) {
    if ((h >> 16 & 0xf) == FXT_EVENT_DURATION_COMPLETE && len >= 24)
      memcpy(&ts, rec + len - 8, 8);
    else
      memcpy(&ts, rec + 8, 8);
  }
  return ts;
}

/* Merges slot i's held records into the staged chunk by time (stable: the chunk's records
 * first on ties); returns the merged length and marks what it took with the next commit's
 * seq. Which records: those no later than the chunk's last record (that record's emission
 * began after the handler's, so the emission the handler interrupted, earlier, is staged
 * already); or, when `all` (the ring is empty), those held before safe_end: popped before
 * the thread was seen outside any emission, so the emission they interrupted has committed
 * and been delivered. A record popped later waits: the emission it interrupted may still
 * commit a record with an earlier timestamp. At most FXT_SH_HELD_MAX held records go into
 * one chunk (the intent lists them); past that the chunk ends before the ring records that
 * would follow, which stay in the ring for the next one: *ring_used says how many bytes of
 * the staged ring records the chunk holds. */
uint32_t fxt_cons_merge_held(uint32_t i, const unsigned char *stage, uint32_t len, bool all,
                           uint64_t safe_end, unsigned char **out, uint32_t *ring_used)
{
  struct fxt_sh *h = fxt_cons.s->sh;
  uint32_t half = atomic_load_explicit(&h->held_active, memory_order_relaxed);
  uint64_t used = atomic_load_explicit(&h->held_len[half], memory_order_relaxed);
  unsigned char *held = held_half(half);
  size_t need = 0;
  for (uint64_t at = 0; at + FXT_SH_HELD_HEADER <= used;) {
    uint32_t tag, n, taken;
    memcpy(&tag, held + at, 4);
    memcpy(&n, held + at + 4, 4);
    memcpy(&taken, held + at + 12, 4);
    need += tag == i && !taken ? n : 0;
    at += FXT_SH_HELD_HEADER + n;
  }
  fxt_cons.held_n = 0;
  *ring_used = len;
  if (need == 0) {
    *out = (unsigned char *)stage;
    return len;
  }
  uint64_t limit = UINT64_MAX;
  if (!all && len >= 16) { /* the chunk's last record's time: later ones wait for more */
    uint32_t off = 0, last = 0;
    while (off + 8 <= len) {
      uint64_t hd;
      memcpy(&hd, stage + off, 8);
      uint32_t b = fxt_ring_record_bytes(hd);
      if (b == 0 || b > len - off)
        break;
      last = off;
      off += b;
    }
    limit = fxt_cons_ts_of(stage + last, len - last);
  }
  unsigned char *m = fxt_cons.merged;
  uint32_t mlen = 0, so = 0;
  bool capped = false;
  fxt_cons.held_n = 0;
  for (uint64_t at = 0; at + FXT_SH_HELD_HEADER <= used;) {
    uint32_t tag, n, taken;
    memcpy(&tag, held + at, 4);
    memcpy(&n, held + at + 4, 4);
    memcpy(&taken, held + at + 12, 4);
    const unsigned char *rec = held + at + FXT_SH_HELD_HEADER;
    if (tag == i && !taken && (all ? at < safe_end : fxt_cons_ts_of(rec, n) <= limit) &&
        mlen + n + (len - so) <= STAGE_BYTES * 2) {
      if (fxt_cons.held_n == FXT_SH_HELD_MAX) {
        capped = true; /* this one, and the ring records from so on, go in the next chunk */
        break;
      }
      uint64_t t = fxt_cons_ts_of(rec, n);
      while (so + 8 <= len) { /* chunk records up to this time go first */
        uint64_t hd;
        memcpy(&hd, stage + so, 8);
        uint32_t b = fxt_ring_record_bytes(hd);
        if (b == 0 || b > len - so || fxt_cons_ts_of(stage + so, b) > t)
          break;
        memcpy(m + mlen, stage + so, b);
        mlen += b;
        so += b;
      }
      fxt_cons.held_off[fxt_cons.held_n++] = mlen;
      memcpy(m + mlen, rec, n);
      mlen += n;
      memcpy(held + at + 12, &fxt_cons.seq, 4); /* taken by the next commit */
      fxt_cons.held_taken = true;
      atomic_fetch_add_explicit(&fxt_cons.nested_records, 1, memory_order_relaxed);
    }
    at += FXT_SH_HELD_HEADER + n;
  }
  if (capped) {
    *ring_used = so;
  } else {
    memcpy(m + mlen, stage + so, len - so);
    mlen += len - so;
  }
  *out = m;
  return mlen;
}

