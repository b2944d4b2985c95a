/* cpunote.h - which CPU a copy of a ring's records starts on.
 *
 * A thread's stream names its CPU only when it changes: the emit path writes a kernel:meta
 * `cpu` record before the first event on a new CPU (docs/fxt-conventions.md). A copy of a
 * ring that starts after records the producer passed (overwrite mode: fxt_pass_oldest) or the
 * consumer took has lost the `cpu` record its first events ran under. So whoever moves a
 * ring's tail first notes the CPU in effect at the new tail - the value of the last `cpu`
 * record before it - and whoever copies the ring from a position puts a `cpu` record of that
 * value in front of the copy when it does not begin with one: the consumer's staging
 * (consumer.c drain_slot_to, into the output or the live view), snapshots and a flight
 * recorder's `trace` (consumer.c, through fxt_cpu_iter below), and `fxtrace recover`
 * (src/formats/recover_model.c, from the session file).
 *
 * A note is (cpu << 32) | position, one u64 (a single atomic: never torn), in the slot's entry
 * of the session file (shfile.h), so recovery reads the same notes:
 *
 *   cpu_note[2]       written by the producer only (the owner thread; the consumer once it
 *                     is gone, as for pass_*), in fxt_pass_oldest, for the position `to` it
 *                     moves the tail to, before it moves it
 *   cons_cpu_note[2]  written by the consumer thread only, for the end of the records it
 *                     stages (drain_slot_to), before its claim moves the tail there
 *
 * A note states a fact that stays true: the CPU in effect at a position is fixed once the
 * records before it are committed (until positions wrap, 2^32 bytes later: two notes that
 * match a position and disagree give FXT_CPU_NOTE_NONE). Each writer writes the one of its two
 * notes that does not describe the position the tail is at as it last saw it, so the note for
 * the tail's current position survives until the tail moves on. Orders:
 *
 *  (N1) A note is stored with release before the tail move it describes (the producer's
 *       compare-and-swap is acq_rel; the consumer's claim in deliver.c is a release). A reader
 *       that loads the tail there (the iterator's acquire load, or its relaxed load followed
 *       by the acquire fence of its next copy) and then loads the notes with acquire sees that
 *       note or a later store to the same note.
 *  (N2) A later store to that note comes after the writer saw the tail past the position (its
 *       own successful move, or a load). A reader whose acquire load of the notes read it, and
 *       that loads the tail after it, sees the tail past the position. So a reader that loads
 *       the notes after the tail load that gave it position P, then loads the tail again and
 *       finds it not past P, has read the note for P whenever one exists (fxt_cpu_iter_next).
 *
 * Nothing here runs on the emit fast path: the producer writes notes only inside a pass, a
 * sixteenth of the ring at a time.
 */
#ifndef FXT_BASE_CPUNOTE_H
#define FXT_BASE_CPUNOTE_H

#include <fxtrace/fxt.h>
#include <fxtrace/meta.h>
#include <fxtrace/ring.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "shfile.h"

#define FXT_CPU_NOTE_NONE 0xffffffffu /* no CPU known at the position */

static inline uint64_t fxt_cpu_note(uint32_t pos, uint32_t cpu)
{
  return (uint64_t)cpu << 32 | pos;
}

/* The CPU named by a record when it is a kernel:meta `cpu` counter (hdr, ts, [koids], arg,
 * counter id), else FXT_CPU_NOTE_NONE. rec holds the record's len bytes. */
static inline uint32_t fxt_cpu_of_record(const unsigned char *rec, uint32_t len)
{
  uint64_t h, arg;
  if (len < 32)
    return FXT_CPU_NOTE_NONE;
  memcpy(&h, rec, 8);
  if ((h & 0xf) != FXT_RECORD_EVENT || (h >> 16 & 0xf) != FXT_EVENT_COUNTER ||
      (h >> 32 & 0xffff) != FXT_STR_KERNEL_META || (h >> 48) != FXT_STR_CPU ||
      fxt_ring_record_bytes(h) != len)
    return FXT_CPU_NOTE_NONE;
  memcpy(&arg, rec + len - 16, 8);
  return (arg & 0xf) == FXT_ARG_UINT32 ? (uint32_t)(arg >> 32) : FXT_CPU_NOTE_NONE;
}

/* The CPU in effect after len bytes of whole records, given the one in effect before them. */
static inline uint32_t fxt_cpu_after(const unsigned char *p, uint32_t len, uint32_t cpu)
{
  for (uint32_t off = 0; off + 8 <= len;) {
    uint64_t h;
    memcpy(&h, p + off, 8);
    uint32_t n = fxt_ring_record_bytes(h);
    if (n == 0 || n > len - off)
      break;
    uint32_t c = fxt_cpu_of_record(p + off, n);
    cpu = c != FXT_CPU_NOTE_NONE ? c : cpu;
    off += n;
  }
  return cpu;
}

/* The CPU at ring position pos as the four notes v[] say (producer's, then consumer's). */
static inline uint32_t fxt_cpu_note_match(const uint64_t v[4], uint32_t pos)
{
  uint32_t cpu = FXT_CPU_NOTE_NONE;
  bool found = false;
  for (int k = 0; k < 4; k++) {
    if ((uint32_t)v[k] != pos)
      continue;
    if (found && (uint32_t)(v[k] >> 32) != cpu)
      return FXT_CPU_NOTE_NONE; /* a stale note 2^32 bytes back disagrees: say nothing */
    cpu = (uint32_t)(v[k] >> 32);
    found = true;
  }
  return cpu;
}

/* The notes of slot entry e, each loaded with acquire (N1, N2). */
static inline void fxt_cpu_notes_load(struct fxt_sh_slot *e, uint64_t v[4])
{
  for (int k = 0; k < 2; k++) {
    v[k] = atomic_load_explicit(&e->cpu_note[k], memory_order_acquire);
    v[2 + k] = atomic_load_explicit(&e->cons_cpu_note[k], memory_order_acquire);
  }
}

/* A writer's note for position pos: into the one of its two notes that does not describe
 * `keep`, the tail's position as the writer last saw it. Release: (N1). */
static inline void fxt_cpu_note_put(_Atomic uint64_t note[2], uint32_t keep, uint32_t pos,
                                    uint32_t cpu)
{
  int k = (uint32_t)atomic_load_explicit(&note[0], memory_order_relaxed) == keep;
  atomic_store_explicit(&note[k], fxt_cpu_note(pos, cpu), memory_order_release);
}

/* A ring's records through its non-consuming iterator (fxt_ring_iter_*), each run of them that
 * follows a gap (the start, or records the producer passed under the copy) with the CPU in
 * effect at its first record. Any reader of the ring (the consumer thread here), with the
 * producer and the consumer running. */
struct fxt_cpu_iter {
  struct fxt_ring_iter it;
  struct fxt_sh_slot *e;
  uint64_t skipped;
  bool started;
};

static inline void fxt_cpu_iter_begin(struct fxt_cpu_iter *ci, const struct fxt_ring *r,
                                      struct fxt_sh_slot *e)
{
  fxt_ring_iter_begin(r, &ci->it);
  ci->e = e;
  ci->skipped = 0;
  ci->started = false;
}

/* As fxt_ring_iter_next; when the record returned is the first of a run (the first one, or
 * the first after records that were passed under the copy), *run_cpu is the CPU in effect at
 * it (FXT_CPU_NOTE_NONE when nothing is known), else it is left alone; *gap says that records
 * were dropped before it (the caller drops what it copied before, or marks the gap). */
static inline int fxt_cpu_iter_next(struct fxt_cpu_iter *ci, void *buf, uint32_t buf_size,
                                    uint32_t *len, uint32_t *run_cpu, bool *gap)
{
  *gap = false;
  for (;;) {
    int rc = fxt_ring_iter_next(&ci->it, buf, buf_size, len);
    if (ci->it.skipped_bytes != ci->skipped) {
      ci->skipped = ci->it.skipped_bytes;
      ci->started = false;
      *gap = true;
    }
    if (rc != 1 || ci->started)
      return rc;
    /* The first record of a run, at pos, which the iterator took from a load of the tail:
     * its acquire load at the start, or a relaxed one followed by the acquire fence of the
     * copy after it (N1). The notes now, then the tail again (N2): not past pos, then the
     * note for pos, if there is one, was among those read. When the tail passed pos
     * meanwhile, the record is dropped as passed and the next one starts a run. */
    uint32_t pos = ci->it.pos - *len;
    uint64_t v[4];
    fxt_cpu_notes_load(ci->e, v);
    uint32_t tail = atomic_load_explicit(&((struct fxt_ring *)ci->it.ring)->tail,
                                         memory_order_relaxed);
    if (pos - tail <= ci->it.ring->size) {
      *run_cpu = fxt_cpu_note_match(v, pos);
      ci->started = true;
      return 1;
    }
    *gap = true;
  }
}

#endif
