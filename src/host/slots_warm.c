/* slots_warm.c - a buffer's pages made cheap to write before its thread needs them. On a VM
 * whose hypervisor maps a guest page for a process only at its first access from it (shadow
 * paging), a page's first write costs ~10 us and the kernel's first read of it ~8-11 us even
 * when it is populated (docs/performance.md): a new owner writes the first pages of its buffer
 * at attach, and the consumer, between passes, keeps a free slot warm for the next thread,
 * touches the rest of large live buffers ahead of their producers, and has the kernel read
 * their pages once before it writes from them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "slots_int.h"

#define PREWARM_PAGES 64u              /* pages the consumer writes or touches at a time */
#define PREWARM_MAX_BYTES (16u << 20) /* the largest buffer kept warm as a spare */

/* Makes slot i's buffer cheap to write: once per slot and session (a recycled slot keeps its
 * pages). The kernel's populate allocates the pages; then every page is also written once from
 * this address space. On a VM whose hypervisor maps a guest page for a process only at its
 * first access from it (shadow paging), a populated page still costs ~10 us at its first
 * write: a ring streamed once ran at 170-700 MB/s, rewritten at 10-28 GB/s
 * (docs/performance.md). Writing zeros is harmless: nothing reads a ring beyond what its
 * producer committed.
 * Who writes info->warm_pages: the consumer while the slot is FREE, a chunk at a time under
 * pool_lock (fxt_slots_prewarm), and when it frees the slot; the slot's owner thread once it
 * took the slot (LIVE, after take_slot read warm_pages under pool_lock). The FREE -> LIVE ->
 * EXITED -> FREE transitions hand it over (pool_lock; EXITED's release, the consumer's
 * acquire). */
static void warm_pages(struct session *s, uint32_t i, uint32_t upto)
{
  struct slot_info *info = &s->info[i];
  unsigned char *storage = (unsigned char *)session_slot(s, i) + (s->stride - s->buffer_bytes);
  uint32_t from = info->warm_pages;
  if (from >= upto)
    return;
#ifdef MADV_POPULATE_WRITE
  (void)madvise(storage + (size_t)from * 4096, (size_t)(upto - from) * 4096, MADV_POPULATE_WRITE);
#endif
  fxt_write_pages(storage + (size_t)from * 4096, (size_t)(upto - from) * 4096);
  info->warm_pages = upto;
}

void fxt_slot_warm(struct session *s, uint32_t i)
{
  warm_pages(s, i, fxt_slots_sync_pages(s));
}

/* Reads a byte of the page at p, for the hypervisor's mapping only: an asm load, so that it
 * races with nothing in the C memory model while the producer writes the page (the value is
 * dropped). Where this is not available the producer's own first lap pays. */
static bool touch_page(const unsigned char *p)
{
#if defined(__GNUC__) && defined(__x86_64__)
  __asm__ __volatile__("movb (%0), %%al" ::"r"(p) : "rax", "memory");
  return true;
#elif defined(__GNUC__) && defined(__aarch64__)
  __asm__ __volatile__("ldrb w9, [%0]" ::"r"(p) : "x9", "memory");
  return true;
#else
  (void)p;
  return false;
#endif
}

/* The consumer, for a LIVE slot's pages past sync_pages: read once from the process, a chunk at
 * a time, up to sync_pages ahead of its producer; a read maps a populated page for this address
 * space as a write would (the page's first write then costs 0.03 us, not ~10). Returns true
 * when pages are left to touch now. info->cons_warm is the consumer's while the slot is LIVE
 * or EXITED (take_slot sets it before the release store of LIVE). */
static bool touch_live(struct session *s, uint32_t i, uint32_t pages)
{
  struct slot_info *info = &s->info[i];
  if (info->cons_warm >= pages)
    return false;
  /* Only ahead of the producer by what the owner wrote at attach: pages of a large buffer
   * that is never filled are not touched. Once the ring went round, its producer wrote
   * every page. (head: the producer's; relaxed, a position only.) */
  uint32_t head = atomic_load_explicit(&session_slot(s, i)->w.ring.head, memory_order_relaxed);
  if (head >= s->buffer_bytes) {
    info->cons_warm = pages;
    return false;
  }
  uint32_t want = head / 4096 + fxt_slots_sync_pages(s);
  want = want < pages ? want : pages;
  if (info->cons_warm >= want)
    return false;
  unsigned char *storage = (unsigned char *)session_slot(s, i) + (s->stride - s->buffer_bytes);
  uint32_t upto = info->cons_warm + PREWARM_PAGES < want ? info->cons_warm + PREWARM_PAGES
                                                         : want;
#ifdef MADV_POPULATE_WRITE
  if (!s->file_backed) /* anonymous: a read of a page never written would map the zero page */
    (void)madvise(storage + (size_t)info->cons_warm * 4096,
                  (size_t)(upto - info->cons_warm) * 4096, MADV_POPULATE_WRITE);
#endif
  for (uint32_t p = info->cons_warm; p < upto; p++)
    if (!touch_page(storage + (size_t)p * 4096))
      return false;
  info->cons_warm = upto;
  return upto < want;
}

/* The kernel reads 8 bytes of each page through this address space, as a write() of the page
 * would: rt_sigprocmask copies the new set from the caller before it looks at `how`, and an
 * invalid `how` then changes nothing (EINVAL). No descriptor: this was a pwritev to a memfd of
 * our own, whose number a program that closes what it inherited (a daemon's close_range, a
 * child of fork) could close and give to a file of its own - the consumer then wrote 8 bytes of
 * each page over the start of that file (tests/unit/test_closefds.c). One call a page: ~1 us more
 * than one pwritev of 64, on pages that cost ~5 us each to touch (shadow paging). The raw call:
 * a sanitizer's interceptor would read the bytes as the program, racing with a producer. */
bool fxt_kernel_touch(const void *p, size_t n)
{
  const unsigned char *b = p;
  for (size_t off = 0; off < n; off += 4096)
    if (syscall(SYS_rt_sigprocmask, -1, b + off, NULL, 8) != -1 || errno != EINVAL)
      return false; /* refused (a seccomp filter): the caller's pages stay cold */
  return true;
}

/* Has the kernel read slot i's next PREWARM_PAGES pages below `limit` (~0.6 ms): false when
 * there were none, or it could not. The consumer only. */
static bool kernel_warm_step(struct session *s, uint32_t i, uint32_t limit)
{
  struct slot_info *info = &s->info[i];
  uint32_t from = atomic_load_explicit(&info->kern_warm, memory_order_relaxed);
  if (from >= limit)
    return false;
  uint32_t upto = from + PREWARM_PAGES < limit ? from + PREWARM_PAGES : limit;
  unsigned char *storage = (unsigned char *)session_slot(s, i) + (s->stride - s->buffer_bytes);
  if (!fxt_kernel_touch(storage + (size_t)from * 4096, (size_t)(upto - from) * 4096))
    return false;
  atomic_store_explicit(&info->kern_warm, upto, memory_order_relaxed);
  return true;
}

/* The consumer stops warming when a producer woke it (wake moved: its buffer wants draining
 * first) or a thread is on its way to a slot (session_int.h attaching_threads). */
static bool warm_yields(struct session *s, uint32_t wake)
{
  return atomic_load_explicit(&s->wake, memory_order_relaxed) != wake ||
         atomic_load_explicit(&s->attaching_threads, memory_order_relaxed) != 0;
}

/* The consumer, between passes: keeps one FREE slot warm ahead of the next thread that asks
 * for one (attach takes the lowest free slot, so that one), so that a new thread's first event
 * does not pay for the pages (up to ~20 ms for 4 MiB on such a VM), and touches the pages of
 * live buffers larger than what their owners wrote at attach (touch_live). PREWARM_PAGES at a
 * time, under pool_lock for a FREE slot: an attach waits at most that long, then finishes the
 * slot itself. Stops early when a producer wakes the consumer or a thread attaches
 * (warm_yields); the next call goes on. The spare slot only for buffers up to PREWARM_MAX_BYTES (a
 * spare warm buffer is memory the process holds). */
void fxt_slots_prewarm(struct session *s)
{
  uint32_t pages = s->buffer_bytes / 4096;
  uint32_t wake = atomic_load_explicit(&s->wake, memory_order_relaxed);
  for (bool more = s->buffer_bytes <= PREWARM_MAX_BYTES; more;) {
    more = false;
    if (warm_yields(s, wake))
      return;
    pthread_mutex_lock(&s->pool_lock);
    for (uint32_t i = 0; i < s->nslots; i++) {
      if (atomic_load_explicit(&s->info[i].state, memory_order_relaxed) != SLOT_FREE)
        continue;
      struct slot_info *info = &s->info[i];
      if (info->warm_pages < pages && !info->reserved && fxt_buffers_reserve_slot(s, i) == 0)
        info->reserved = true;
      if (info->warm_pages < pages && info->reserved) {
        uint32_t upto = info->warm_pages + PREWARM_PAGES;
        warm_pages(s, i, upto < pages ? upto : pages);
        more = true;
      } else if (kernel_warm_step(s, i, info->warm_pages)) { /* then read by the kernel */
        more = true;
      }
      break; /* the lowest free slot only */
    }
    pthread_mutex_unlock(&s->pool_lock);
  }
  if (warm_yields(s, wake))
    return;
  if (pages <= fxt_slots_sync_pages(s))
    return;
  for (uint32_t i = 0; i < s->nslots; i++) {
    /* Acquire pairs with take_slot's release of LIVE: cons_warm was set before it. */
    if (atomic_load_explicit(&s->info[i].state, memory_order_acquire) != SLOT_LIVE)
      continue;
    while (touch_live(s, i, pages))
      if (warm_yields(s, wake))
        return;
  }
}

bool fxt_slots_kernel_warm(struct session *s)
{
  for (uint32_t i = 0; i < s->nslots; i++)
    /* Acquire pairs with take_slot's release of LIVE (the pool's pages are reserved). */
    if (atomic_load_explicit(&s->info[i].state, memory_order_acquire) == SLOT_LIVE &&
        kernel_warm_step(s, i, s->buffer_bytes / 4096))
      return true;
  return false;
}

bool fxt_slot_kernel_warm(const struct session *s, uint32_t i, uint32_t from, uint32_t len)
{
  uint32_t off = from & (s->buffer_bytes - 1);
  uint32_t pages = atomic_load_explicit(&s->info[i].kern_warm, memory_order_relaxed);
  return len == 0 || (uint64_t)off + len <= (uint64_t)pages * 4096;
}
