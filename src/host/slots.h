/* slots.h - the per-thread buffers as the rest of the tracer uses them (slots*.c,
 * slots_int.h): the pool set up, the stop handshake and its form for filter programs, a slot
 * freed, the reset after fork, overwrite mode's pass, the pages of buffers warmed. */
#ifndef FXTRACE_HOST_SLOTS_H
#define FXTRACE_HOST_SLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct fxt_tslot;
struct session;

int fxt_slots_setup(struct session *s);
size_t fxt_companion_storage_off(void); /* from the slot start */
void fxt_pass_oldest(struct session *s, struct fxt_tslot *t, uint32_t need); /* overwrite mode */
void fxt_slots_reset_after_fork(struct session *s, struct fxt_tslot *keep, pid_t pid,
                                pid_t tid);
void fxt_slot_free(struct session *s, uint32_t i);
bool fxt_slots_quiesce(struct session *s); /* stop handshake; see session.c */
void fxt_slots_sync(struct session *s);    /* no emission older than the call reads a filter */

/* Writes a byte of each page of [p, p + n) (pages from p on) once from this process: on a VM
 * with shadow paging a page's first write from a process costs ~10 us even when the kernel has
 * populated it (slots_warm.c fxt_slot_warm). For memory whose bytes nobody reads yet. */
static inline void fxt_write_pages(void *p, size_t n)
{
  for (size_t off = 0; off < n; off += 4096)
    ((volatile unsigned char *)p)[off] = 0;
}

/* Has the kernel read a few bytes of each page of [p, p + n) (pages from p on) once in this
 * process (a system call that reads them: slots_warm.c): on a VM with shadow paging, the
 * kernel's first access to a user page (the consumer's write() of a ring's records) costs
 * ~8-11 us a page even when the process wrote it already: a ring's first lap went to the file
 * at 2.7 ms a MiB, later laps at 0.2. False when it could not (refused by a seccomp filter).
 * Holds no descriptor (a program may close every one it did not open itself). */
bool fxt_kernel_touch(const void *p, size_t n);

/* The pages a new owner writes itself before its first event (slots_int.h SYNC_WARM_BYTES). */
void fxt_slot_warm(struct session *s, uint32_t i);
void fxt_slots_prewarm(struct session *s); /* the consumer, between passes */
/* The consumer, between passes: has the kernel read the next pages of live buffers
 * (fxt_kernel_touch), a step at a time; true while pages are left. */
bool fxt_slots_kernel_warm(struct session *s);
/* Whether the kernel has read every page of slot i's ring bytes [from, from + len) (ring
 * positions) once: the consumer writes records from pages it has not through a staging copy. */
bool fxt_slot_kernel_warm(const struct session *s, uint32_t i, uint32_t from, uint32_t len);

#endif
