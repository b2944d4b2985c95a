/* slots_emit.c - the general emit path's rare cases (include/fxtrace/emit.h has the inline
 * fast path): a reservation the fast path declined (a CPU change, drops to report, a full
 * ring in overwrite or block mode), the wake of the consumer at a buffer's mark, and a
 * signal handler's records moved from the companion writer to the ingress ring. Everything
 * here runs on the emitting thread, inside its emission (and fxt_pass_oldest on the
 * consumer too, for a thread that is gone).
 */
#define _GNU_SOURCE
#include <fxtrace/detail/emit.h>
#include <fxtrace/fxt.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "../base/cpunote.h"
#include "slots_int.h"

/* Leaving an emission on a companion (signal context): its records go to the ingress ring,
 * tagged with the thread's slot; what the ring does not take is counted as the thread's. */
static int copy_nothing(void *ctx, uint32_t off, const void *src, uint32_t len)
{
  (void)ctx, (void)off, (void)src, (void)len;
  return 0;
}

void fxt_emit_nested_done(struct fxt_tslot *n)
{
  struct session *s = &fxt_session;
  struct fxt_tslot *t = session_slot(s, n->slot_index);
  _Alignas(8) unsigned char buf[NESTED_BYTES];
  /* Each record leaves the companion only once it is in the ingress ring (or counted), so a
   * death in between leaves it in both, never in neither: `fxtrace recover` keeps one copy
   * (docs/recovery.md). The companion has no other reader: its tail is ours here. */
  struct fxt_ring_iter it;
  fxt_ring_iter_begin(&n->w.ring, &it);
  uint32_t len;
  while (fxt_ring_iter_next(&it, buf, sizeof(buf), &len) == 1) {
    uint64_t h;
    memcpy(&h, buf, 8);
    int pushed = fxt_ingress_push(s->ingress, buf, len, s->gen, n->slot_index);
    (void)fxt_ring_read(&n->w.ring, copy_nothing, NULL, len); /* consume exactly it */
    if (pushed != 0) {
      uint64_t records = 1;
      if ((h & 0xf) == FXT_RECORD_EVENT && (h >> 48) == FXT_STR_DROP_STATS && len >= 40)
        records = (uint32_t)(*(const uint64_t *)(const void *)(buf + 32) >> 32);
      atomic_fetch_add_explicit(&t->lost, records, memory_order_relaxed);
    }
  }
  /* A record too big for the companion was counted by its writer: the thread's loss too. */
  if (n->w.drop_records) {
    atomic_fetch_add_explicit(&t->lost, n->w.drop_records, memory_order_relaxed);
    n->w.drop_records = n->w.drop_bytes = n->w.drop_first = n->w.drop_last = 0;
  }
  fxt_consumer_wake(s);
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&n->depth, 0, memory_order_relaxed);
}

void fxt_emit_wake(struct fxt_tslot *t)
{
  if (fxt_ring_producer_used(&t->w.ring) <= t->wake_mark ||
      atomic_load_explicit(&t->wake_sent, memory_order_relaxed))
    return;
  atomic_store_explicit(&t->wake_sent, 1, memory_order_relaxed);
  fxt_consumer_wake(&fxt_session);
}

/* Overwrite mode: the move of the tail in a pass of fxt_pass_oldest, stated in the slot's entry
 * of the session file (pass_*) before the ring makes it, and the CPU in effect at each new
 * tail. */
struct pass_ctx {
  struct fxt_sh_slot *e;
  uint32_t cpu; /* the CPU in effect at the position the walk has reached */
};

/* The CPU in effect at the tail, as a note says (cpunote.h: the tail was loaded with acquire,
 * or by our own move, so the note for it is among these (N1); a note loaded here after a later
 * move of the consumer can only be for a tail our compare-and-swap then does not find). Then
 * the `cpu` records passed over update it (pass_cpu_record). */
static void pass_begin(void *ctx, uint32_t tail)
{
  struct pass_ctx *c = ctx;
  uint64_t notes[4];
  fxt_cpu_notes_load(c->e, notes);
  c->cpu = fxt_cpu_note_match(notes, tail);
}

/* A kernel:meta `cpu` counter passed over: its uint32 argument is the second last word. */
static void pass_cpu_record(void *ctx, const struct fxt_ring *r, uint32_t pos, uint64_t header,
                            uint32_t bytes)
{
  struct pass_ctx *c = ctx;
  (void)header;
  if (bytes < 32)
    return;
  uint64_t arg = fxt_ring_word(r, pos + bytes - 16);
  c->cpu = (arg & 0xf) == FXT_ARG_UINT32 ? (uint32_t)(arg >> 32) : c->cpu;
}

static void pass_moving(void *ctx, const struct fxt_ring_pass *p)
{
  struct pass_ctx *c = ctx;
  struct fxt_sh_slot *e = c->e;
  atomic_store_explicit(&e->pass_from, p->from, memory_order_relaxed);
  atomic_store_explicit(&e->pass_to, p->to, memory_order_relaxed);
  atomic_store_explicit(&e->pass_records, p->records, memory_order_relaxed);
  atomic_store_explicit(&e->pass_ovr_before, p->overrun_records, memory_order_relaxed);
  atomic_store_explicit(&e->pass_ovb_before, p->overrun_bytes, memory_order_relaxed);
  /* The CPU at the new tail, before the tail moves there: the release store of the note
   * and the compare-and-swap's release pair with a copier's acquire of the tail (N1). A
   * pass whose compare-and-swap fails leaves a note that is true all the same. */
  fxt_cpu_note_put(e->cpu_note, p->from, p->to, c->cpu);
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&e->pass_state, 1, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
}

static void pass_moved(void *ctx, const struct fxt_ring_pass *p)
{
  struct pass_ctx *c = ctx;
  (void)p;
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&c->e->pass_state, 0, memory_order_relaxed);
}

/* Overwrite mode: makes room for `need` bytes by moving the tail past the oldest records, as
 * the ring's own reservation would - and then the ring finds the room and moves nothing - but
 * states the move in the slot's entry of the session file first (fxt_ring_pass_oldest, which
 * says the orders): the ring moves the tail with a compare-and-swap and updates the overrun
 * counters after it, and a death between the two would leave records overwritten and counted
 * nowhere, so that `fxtrace recover` could not tell how many (docs/recovery.md). Producer side
 * only (the owner thread, or the consumer once it is gone). A full ring (a flight recorder:
 * nobody drains it) passes a sixteenth of it at a time, so that the next events find room on
 * the fast path instead of each paying for a pass of its own; the window kept is a sixteenth
 * shorter at worst. Before each move it notes the CPU in effect at the new tail, so that a
 * copy starting there can say which CPU its first events ran on. */
void fxt_pass_oldest(struct session *s, struct fxt_tslot *t, uint32_t need)
{
  /* The room is there (the usual case, on every general-path reservation): the pass would
   * move nothing, so it is not called (no hooks filled, no call through the PLT). */
  if (need <= fxt_ring_room(&t->w.ring))
    return;
  if (!s->sh || t->slot_index >= s->nslots || t->flush_on_leave)
    return;
  struct pass_ctx c = {sh_slot(s, t->slot_index), FXT_CPU_NOTE_NONE};
  const struct fxt_ring_pass_hooks hooks = {
      &c,
      FXT_META_HEADER_MASK | (uint64_t)0xffff << 48,
      FXT_META_HEADER_MATCH | (uint64_t)FXT_STR_CPU << 48,
      pass_begin,
      pass_cpu_record,
      pass_moving,
      pass_moved,
  };
  /* (A corrupt ring: the ring's own reservation reports it.) */
  (void)fxt_ring_pass_oldest(&t->w.ring, need, 4, &hooks);
}

/* Block mode: waits (yielding) until the consumer made room, the timeout passed, or the
 * session stopped; only then is the record counted as dropped. */
static int reserve_blocking(struct fxt_tslot *t, uint64_t header, uint32_t prefix,
                            struct fxt_reservation *res)
{
  int rc = fxt_writer_try_reserve(&t->w, header, prefix, res);
  if (rc != FXT_ENOSPC)
    return rc;
  struct timespec now, end;
  clock_gettime(CLOCK_MONOTONIC, &end);
  end.tv_sec += t->block_ms / 1000;
  end.tv_nsec += (long)(t->block_ms % 1000) * 1000000;
  if (end.tv_nsec >= 1000000000) {
    end.tv_sec++;
    end.tv_nsec -= 1000000000;
  }
  atomic_store_explicit(&t->wake_sent, 1, memory_order_relaxed);
  fxt_consumer_wake(&fxt_session);
  /* Parked (session_int.h slot_info.parked): filter writes need not wait for this wait.
   * Only the outermost emission: a nested one (signal context) never gets here, as it
   * writes into its companion. Release pairs with the acquire in fxt_slots_sync. */
  struct session *s = &fxt_session;
  _Atomic uint32_t *parked = NULL;
  if (atomic_load_explicit(&t->depth, memory_order_relaxed) == 1) {
    parked = &s->info[((unsigned char *)t - s->pool) / s->stride].parked;
    atomic_store_explicit(parked, 1, memory_order_release);
  }
  for (;;) {
    sched_yield();
    rc = fxt_writer_try_reserve(&t->w, header, prefix, res);
    if (rc != FXT_ENOSPC)
      break;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (atomic_load_explicit(&fxt_session_active, memory_order_relaxed) !=
            atomic_load_explicit(&t->gen, memory_order_relaxed) ||
        now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec)) {
      rc = fxt_writer_reserve_prefixed(&t->w, header, prefix, res); /* counts the drop */
      break;
    }
  }
  /* Cleared before the emission leaves (its release store of depth orders it). */
  if (parked)
    atomic_store_explicit(parked, 0, memory_order_relaxed);
  return rc;
}

struct fxt_cursor fxt_emit_reserve_slow(struct fxt_tslot *t, uint32_t cpu, uint64_t ts,
                                        uint64_t header)
{
  struct fxt_cursor cur = {NULL, 0, 0}, *c = &cur;
  /* kernel:meta counter "cpu" (docs/fxt-conventions.md): hdr, ts, [koids], arg, counter id;
   * in front of the event, in the same reservation, when the thread moved. */
  uint32_t words = cpu != t->cpu ? 4 + fxt_emit_thread_words(t) : 0;
  struct fxt_reservation res;
  if (t->w.ring.flags & FXT_RING_OVERWRITE)
    fxt_pass_oldest(&fxt_session, t,
                    fxt_ring_record_bytes(header) + words * 8 +
                        (t->w.drop_records | t->w.drop_bytes ? FXT_DROP_STATS_BYTES : 0));
  int rc = t->block_ms ? reserve_blocking(t, header, words * 8, &res)
                       : fxt_writer_reserve_prefixed(&t->w, header, words * 8, &res);
  if (rc != 0) {
    t->cpu_fast = FXT_CPU_SLOW; /* the next record that fits reports the drop run first */
    if (!atomic_load_explicit(&t->wake_sent, memory_order_relaxed)) {
      /* Full without a wake pending (the mark was passed while the last one was in
       * flight): the consumer must come now. */
      atomic_store_explicit(&t->wake_sent, 1, memory_order_relaxed);
      fxt_consumer_wake(&fxt_session);
    }
    return cur;
  }
  *c = fxt_cursor_of(&res); /* after the drop_stats record, if one was pending */
  if (words) {
    fxt_put(c, fxt_w_event(FXT_EVENT_COUNTER, 1) | fxt_w_size(words) | t->thread_bits |
                   fxt_w_event_strings(FXT_STR_KERNEL_META, FXT_STR_CPU));
    fxt_put_event_head(c, t, ts);
    fxt_put(c, fxt_w_arg_u32(FXT_STR_CPU, cpu));
    fxt_put(c, 0); /* counter id */
    t->cpu = cpu;
  }
  /* Fast again unless drops are still pending (a drop_stats record carries at most
   * UINT32_MAX: the excess goes into the next reservation's). */
  t->cpu_fast = t->w.drop_records | t->w.drop_bytes || t->thread_bits == 0 ? FXT_CPU_SLOW : cpu;
  return cur;
}

void fxt_put_hex(struct fxt_cursor *c, const void *bytes, uint32_t n)
{
  static const char digits[] = "0123456789abcdef";
  const unsigned char *b = bytes;
  char word[8];
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; i++) {
    word[k++] = digits[b[i] >> 4];
    word[k++] = digits[b[i] & 15];
    if (k == 8) {
      fxt_put_bytes(c, word, 8);
      k = 0;
    }
  }
  if (k)
    fxt_put_bytes(c, word, k);
}
