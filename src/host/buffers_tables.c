/* buffers_tables.c - the session file's tables that grow while the session runs: the string
 * table (intern.c's mirror) and the tracepoint log (registry.c's), which `fxtrace recover`
 * reads to name what a dead session's records refer to, turned on when the session starts;
 * and the consumer's maintenance of the session file after each pass (the clock sync a reader
 * of a live session uses, the string text allocated ahead of its writers: buffers.c says why
 * nothing is touched before it is allocated).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <fxtrace/detail/emit.h>
#include <fxtrace/session.h>
#include <string.h>

#include "buffers_int.h"
#include "intern.h"
#include "registry.h"

static struct fxt_intern_mirror strings_mirror;

/* Appends tp's description to the tracepoint log (registry.c calls it under its lock, for
 * every tracepoint registered while the session runs, and for all of them at the start). */
static void tp_mirror_add(struct fxt_tracepoint *tp)
{
  struct session *s = &fxt_session;
  struct fxt_sh *h = s->sh;
  if (!h || !s->file_backed || tp->id == 0)
    return;
  unsigned char payload[8192];
  size_t n = fxt_tp_describe(tp, payload, sizeof(payload));
  uint64_t used = atomic_load_explicit(&h->tps_used, memory_order_relaxed);
  uint64_t need = FXT_SH_TP_HEADER + ((n + 7) & ~(size_t)7);
  if (n == 0 || used + need > h->tps_bytes)
    return;
  if (h->tps_off + used + need > s->tps_alloc) {
    uint64_t to = h->tps_off + used + need + FXT_BUF_GROW_STEP;
    if (to > h->tps_off + h->tps_bytes)
      to = h->tps_off + h->tps_bytes;
    if (fxt_buffers_fallocate(s, false, s->tps_alloc, to - s->tps_alloc) != 0)
      return;
    s->tps_alloc = to;
  }
  unsigned char *e = s->meta + h->tps_off + used;
  uint32_t len = (uint32_t)n, zero = 0;
  memcpy(e, &len, 4);
  memcpy(e + 4, &zero, 4);
  memcpy(e + FXT_SH_TP_HEADER, payload, n);
  memset(e + FXT_SH_TP_HEADER + n, 0, need - FXT_SH_TP_HEADER - n);
  /* The entry is whole before the log says it is there (for a reader of a live session). */
  atomic_store_explicit(&h->tps_used, used + need, memory_order_release);
}

void fxt_buffers_publish(struct session *s)
{
  if (!s->file_backed)
    return;
  struct fxt_sh *h = s->sh;
  struct fxt_intern_mirror *m = &strings_mirror;
  m->entries = (_Atomic uint64_t *)(void *)(s->meta + h->strings_off);
  m->text = s->meta + h->strings_off + (size_t)FXT_SH_STR_ENTRIES * 8;
  m->text_cap = h->strings_bytes - (uint64_t)FXT_SH_STR_ENTRIES * 8;
  atomic_store_explicit(&m->text_used, 0, memory_order_relaxed);
  atomic_store_explicit(&m->text_limit, FXT_BUF_GROW_STEP, memory_order_relaxed);
  atomic_store_explicit(&m->overflow, 0, memory_order_relaxed);
  /* On first, then copy what exists: a string interned meanwhile is in it either way. */
  fxt_intern_set_mirror(m);
  fxt_intern_mirror_all(m);
  fxt_registry_set_mirror(tp_mirror_add);
  atomic_store_explicit(&h->state, FXT_SH_RUNNING, memory_order_relaxed);
}

void fxt_buffers_maintain(struct session *s)
{
  struct fxt_sh *h = s->sh;
  if (!h)
    return;
  uint64_t ticks, mono, real;
  fxt_clock_sync(&ticks, &mono, &real);
  /* A seqlock for a reader of a live session; after a death the sequence says whether the
   * three values belong together. */
  uint32_t seq = atomic_load_explicit(&h->sync_seq, memory_order_relaxed);
  atomic_store_explicit(&h->sync_seq, seq + 1, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&h->latest_ticks, ticks, memory_order_relaxed);
  atomic_store_explicit(&h->latest_mono_ns, mono, memory_order_relaxed);
  atomic_store_explicit(&h->latest_real_ns, real, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&h->sync_seq, seq + 2, memory_order_relaxed);
  if (!s->file_backed)
    return;
  /* Keep the string text allocated FXT_BUF_GROW_STEP ahead of its writers (intern.c never
   * allocates: a string that finds no room sets overflow, and is copied here once there is
   * room). */
  struct fxt_intern_mirror *m = &strings_mirror;
  uint64_t used = atomic_load_explicit(&m->text_used, memory_order_relaxed);
  uint64_t limit = atomic_load_explicit(&m->text_limit, memory_order_relaxed);
  bool overflow = atomic_load_explicit(&m->overflow, memory_order_relaxed) != 0;
  if ((used + FXT_BUF_GROW_STEP / 2 > limit || overflow) && limit < m->text_cap) {
    uint64_t to = (used > limit ? used : limit) + FXT_BUF_GROW_STEP;
    to = to > m->text_cap ? m->text_cap : to;
    uint64_t base = h->strings_off + (uint64_t)FXT_SH_STR_ENTRIES * 8;
    if (fxt_buffers_fallocate(s, false, base + limit, to - limit) == 0) {
      /* Release pairs with the writers' acquire load (intern.c): allocated before used. */
      atomic_store_explicit(&m->text_limit, to, memory_order_release);
      if (overflow) {
        atomic_store_explicit(&m->overflow, 0, memory_order_relaxed);
        fxt_intern_mirror_all(m);
      }
    }
  }
}
