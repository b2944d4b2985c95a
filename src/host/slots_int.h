/* slots_int.h - what the files of the per-thread buffers share (slots.c: the pool set up, a
 * slot's entry and companion, a slot freed, the stop handshake, the reset in a child of fork;
 * slots_attach.c: a thread's slot taken on its first event and given back at its exit;
 * slots_warm.c: a buffer's pages made cheap to write before its thread needs them;
 * slots_emit.c: the general emit path's rare cases). Slot states and their ordering are in
 * session_int.h. */
#ifndef FXTRACE_HOST_SLOTS_INT_H
#define FXTRACE_HOST_SLOTS_INT_H

#include <fxtrace/detail/emit.h>
#include <fxtrace/fxt.h>
#include <fxtrace/meta.h>
#include <stdint.h>
#include <sys/types.h>

#include "buffers.h"
#include "consumer.h"
#include "../base/metarec.h"
#include "session_int.h"
#include "slots.h"
#include "trigger.h"

/* What a new owner writes itself before its first event: the whole of a buffer up to 4 MiB (the
 * default), the first 4 MiB of a larger one (the consumer touches the rest, fxt_slots_prewarm:
 * a 64 MiB buffer written at attach held a thread's first event ~0.3 s on such a VM). */
#define SYNC_WARM_BYTES (4u << 20)
static inline uint32_t fxt_slots_sync_pages(const struct session *s)
{
  return (s->buffer_bytes < SYNC_WARM_BYTES ? s->buffer_bytes : SYNC_WARM_BYTES) / 4096;
}

/* A thread ring's bookkeeping records (kernel:meta, docs/fxt-conventions.md) are overwritten
 * like any other but not counted in its overrun_records: that counter is about events
 * (metarec.h). */
static inline void fxt_slot_ring_policy(struct fxt_ring *r)
{
  fxt_ring_set_uncounted(r, FXT_META_HEADER_MASK, FXT_META_HEADER_MATCH);
}

/* slots.c */
/* The companion writer of slot i (signal context): in the slot's header page, after it. */
void fxt_slot_companion_setup(struct session *s, struct fxt_tslot *t, uint32_t i, pid_t tid);
/* Slot i's entry in the session file's slot table for its new owner (the slot is FREE: the
 * consumer does not touch the entry; under pool_lock). Its consumer fields start again with
 * the owner's ring. */
void fxt_slot_sh_own(struct session *s, uint32_t i, const struct fxt_tslot *t);
/* The calling thread, which no longer points at t (a slot of an earlier session), lets others
 * take it: clears its slot's `held` (session_int.h). Takes pool_lock; any thread. */
void fxt_slot_drop_hold(struct session *s, const struct fxt_tslot *t);

/* slots_attach.c: the key whose destructor gives an exiting thread's slot back (once per
 * process; fxt_slots_setup). */
void fxt_slots_exit_key_init(void);

#endif
