/* deliver.h - staging a ring's records without consuming them, and consuming them once they
 * are in the output (deliver.c). Consumer side of a ring only. */
#ifndef FXT_HOST_DELIVER_H
#define FXT_HOST_DELIVER_H

#include <fxtrace/ring.h>

/* Records [from, to) of a ring (free-running positions), staged: their bytes at data. */
struct fxt_staged {
  const unsigned char *data; /* in the ring itself (discard mode) or in the staging buffer */
  uint32_t from, to;
  uint32_t len; /* to - from */
  uint32_t cpu; /* the CPU in effect at from, as the slot's notes say (cpunote.h), or
                   FXT_CPU_NOTE_NONE */
};

struct fxt_sh_slot;

/* Stages the ring's oldest whole records, up to cap bytes, leaving them in the ring: in place
 * in discard mode (st->data points into the ring, and stays valid until fxt_deliver_advance),
 * except a record that wraps past the end of storage, which is copied into buf as in overwrite
 * mode. e: the slot's entry, whose CPU notes give st->cpu. Returns 0 (st->len 0 when there is
 * nothing), or FXT_EBADMSG when the oldest record's header is invalid (nothing staged). */
int fxt_deliver_stage(struct fxt_ring *r, struct fxt_sh_slot *e, unsigned char *buf,
                      uint32_t cap, struct fxt_staged *st);

/* Moves the ring's tail past the staged records. Returns the bytes the tail moved;
 * *credit_records / *credit_bytes: staged records that the producer overwrote and counted as
 * overrun meanwhile (overwrite mode, read from the staged copy; 0 in discard mode). */
uint32_t fxt_deliver_advance(struct fxt_ring *r, const struct fxt_staged *st,
                             uint32_t *credit_records, uint32_t *credit_bytes);

#endif
