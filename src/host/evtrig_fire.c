/* evtrig_fire.c - event triggers on the emit path (evtrig.h): an event whose hook has triggers
 * (filters.h, struct fxt_evhook) comes here from fxt_filter_pass, on the emitting thread,
 * inside its emission, before anything of the event is reserved; or, while recording is off
 * (tracing_on 0), from fxt_filter_off, inside an emission of its own that records nothing
 * unless a traceon trigger turns recording on at the event (the kernel still runs an
 * event's triggers when its buffer is off: traceon's way back). The kernel's order
 * (trace_events_trigger.c, include/linux/trace_events.h): every trigger whose own filter
 * matches fires, whatever the event's filter and soft-disabled state say; without a trigger
 * filter or a stacktrace (not TRIGGER_COND) they fire before the event is recorded, so a
 * traceoff keeps the event that fired it out; a stacktrace comes after the event.
 *
 * Concurrency: the hook and its triggers are immutable while published (filters.c frees them
 * only after fxt_slots_sync, which waits for the emissions that may hold them: the release
 * store of the emission's depth at its end pairs with that wait's acquire load). A trigger's
 * count is claimed with a compare-and-swap while positive, so N firings happen exactly N
 * times across threads; an action that then finds nothing to do (recording already off, the
 * target already in the state) gives its count back, as the kernel counts only firings that
 * change something.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fxtrace/detail/emit.h>
#include <fxtrace/fxt.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "consumer.h"
#include "evtrig.h"
#include "filters.h"
#include "intern.h"
#include "session_int.h"

_Atomic uint8_t fxt_evtrig_soft_off[65536];

/* A `snapshot` trigger fired: set by any emitting thread, taken (exchange) by the consumer in
 * fxt_evtrig_serve. The setter's release pairs with the consumer's acquire exchange: what the
 * thread committed before (the event of a trigger with a filter, which the kernel records
 * before its post triggers run) is in the snapshot. */
static _Atomic int snap_pending;

/* The stack record's strings ("ftrace", "kernel_stack", argument "caller"), interned by
 * fxt_evtrig_stack_prepare before the first hook with a stacktrace trigger is published
 * (whose release store orders them before any emission's read). */
static uint64_t stack_strings;
static uint32_t caller_ref;

int fxt_evtrig_stack_prepare(void)
{
  int cat = fxt_intern_cstr("ftrace"), name = fxt_intern_cstr("kernel_stack"),
      arg = fxt_intern_cstr("caller");
  if (cat <= 0 || name <= 0 || arg <= 0)
    return FXT_ENOSPC;
  stack_strings = fxt_w_event_strings((uint32_t)cat, (uint32_t)name);
  caller_ref = (uint32_t)arg;
  return 0;
}

/* Takes one firing of t: false when its count is used up. */
static bool claim(struct fxt_evtrig *t)
{
  uint64_t n = atomic_load_explicit(&t->count, memory_order_relaxed);
  while (n != 0) {
    if (n == FXT_EVTRIG_UNLIMITED)
      return true;
    if (atomic_compare_exchange_weak_explicit(&t->count, &n, n - 1, memory_order_relaxed,
                                              memory_order_relaxed))
      return true;
  }
  return false;
}

static void give_back(struct fxt_evtrig *t)
{
  if (atomic_load_explicit(&t->count, memory_order_relaxed) != FXT_EVTRIG_UNLIMITED)
    atomic_fetch_add_explicit(&t->count, 1, memory_order_relaxed);
}

/* The top of the calling thread's stack, for a frame at fp: glibc puts a thread's descriptor
 * (pthread_self) at the top of its stack, the main thread's stack ends at __libc_stack_end.
 * 0 when fp is in neither (an alternate signal stack): no frame past the first is read. */
extern void *__libc_stack_end;
static uintptr_t stack_top(uintptr_t fp)
{
  uintptr_t self = (uintptr_t)pthread_self(), main_end = (uintptr_t)__libc_stack_end;
  if (fp < self && self - fp < (256u << 20))
    return self;
  if (fp < main_end && main_end - fp < (256u << 20))
    return main_end;
  return 0;
}

/* The return addresses of the calling frames, by their frame pointers (code built with
 * -fno-omit-frame-pointer; a frame without one ends the walk where its word does not point
 * further up the stack), the first skip ones left out. Reads only within the thread's stack. */
static __attribute__((noinline)) uint32_t walk(uintptr_t *pcs, uint32_t max, uint32_t skip)
{
  uintptr_t fp = (uintptr_t)__builtin_frame_address(0), hi = stack_top(fp);
  uint32_t n = 0;
  for (uint32_t depth = 0; n < max; depth++) {
    const uintptr_t *f = (const uintptr_t *)fp;
    uintptr_t next = f[0], ret = f[1];
    if (ret == 0)
      break;
    if (depth >= skip)
      pcs[n++] = ret;
    if (next <= fp || (next & 7) != 0 || next + 16 > hi)
      break;
    fp = next;
  }
  return n;
}

/* Reserves an instant event of the thread (strings: its category and name refs, nargs
 * arguments in arg_words words) and writes its header and timestamp; false when it does not
 * fit (counted as dropped). The caller writes the arguments, then end(). */
static bool begin(struct fxt_tslot *t, uint32_t cpu, uint64_t strings, uint32_t nargs,
                  uint32_t arg_words, struct fxt_cursor *c)
{
  uint64_t ts = fxt_ticks();
  uint64_t hdr = strings | t->thread_bits | fxt_w_event(FXT_EVENT_INSTANT, nargs) |
                 fxt_w_size(2 + fxt_emit_thread_words(t) + arg_words);
  if (!fxt_emit_reserve(t, cpu, ts, hdr, c))
    return false;
  fxt_put(c, hdr);
  fxt_put_event_head(c, t, ts);
  return true;
}

static void end(struct fxt_tslot *t, struct fxt_cursor *c)
{
  fxt_emit_commit(t, c);
  fxt_fast_refresh(t);
}

/* The stack record: an instant event ftrace:kernel_stack of the thread with one pointer
 * argument `caller` per frame, innermost first (docs/fxt-conventions.md). */
static __attribute__((noinline)) void put_stack(struct fxt_tslot *t, uint32_t cpu)
{
  uintptr_t pcs[FXT_EVTRIG_STACK_DEPTH];
  /* Return addresses left out: into put_stack, fxt_evtrig_fire and fxt_filter_pass (the
   * trigger's machinery, as the kernel's STACK_SKIP; this file and filters.c are built with
   * frame pointers and no sibling calls, CMakeLists.txt, so those three frames are always
   * there); the first shown is in the tracepoint's general path (its fxt_fire_slow_*). */
  uint32_t n = walk(pcs, FXT_EVTRIG_STACK_DEPTH, 3);
  struct fxt_cursor c;
  if (!begin(t, cpu, stack_strings, n, 2 * n, &c))
    return;
  uint64_t ah = fxt_arg_header(FXT_TYPE_PTR, caller_ref);
  for (uint32_t i = 0; i < n; i++) {
    fxt_put(&c, ah);
    fxt_put(&c, pcs[i]);
  }
  end(t, &c);
}

/* A typed event written here, as the general path of its fire site would (fxtrace.h), so
 * that its stack can follow it: values and lens as fxt_filter_pass got them. */
static void put_event(struct fxt_tracepoint *tp, struct fxt_tslot *t, uint32_t cpu,
                      const union fxt_value *v, const uint32_t *len)
{
  uint32_t n = tp->nfields < FXT_MAX_FIELDS ? tp->nfields : FXT_MAX_FIELDS;
  uint64_t wide = 0;
  for (uint32_t i = 0; i < n; i++)
    wide |= fxt_field_wide(tp->fields[i].type, v[i]);
  uint32_t words = 0;
  for (uint32_t i = 0; i < n; i++)
    words += fxt_field_words_n(tp->fields[i].type, len[i], wide == 0);
  struct fxt_cursor c;
  if (!begin(t, cpu, tp->reg.header, n, words, &c))
    return;
  for (uint32_t i = 0; i < n; i++)
    fxt_put_field(&c, tp->reg.arg_header[i], tp->fields[i].type, v[i], len[i], wide == 0);
  end(t, &c);
}

/* traceoff (on false) and traceon (on true), once their count is claimed.
 *
 * traceoff: recording off for the session the thread records in (its gen): the same word
 * tracing_on's writes set (fxt_session_pause), so that the next event of every thread is
 * refused at its fire site. A compare-and-swap from the thread's gen: a session being
 * stopped (0 already) or paused is left as it is. Then the session is marked off
 * (fxt_session_off_gen), for a traceon trigger to find.
 *
 * traceon: recording on again for the session the thread's slot is of, when it is off (its
 * off_gen is the slot's gen: a stopping session has cleared it). The compare-and-swap of
 * off_gen makes one firing the one that turns it on; the store of the active word after it
 * is what fire sites read (relaxed: nothing is published with it; a thread's next emission
 * enters on it as after a tracing_on write).
 *
 * False, the count given back, when recording was that way already. */
static bool trace_switch(struct fxt_evtrig *g, const struct fxt_tslot *t, bool on)
{
  if (!claim(g))
    return false;
  _Atomic uint32_t *from = on ? &fxt_session_off_gen : &fxt_session_active;
  _Atomic uint32_t *to = on ? &fxt_session_active : &fxt_session_off_gen;
  uint32_t gen = atomic_load_explicit(&t->gen, memory_order_relaxed), want = gen;
  if (!atomic_compare_exchange_strong_explicit(from, &want, 0, memory_order_relaxed,
                                               memory_order_relaxed)) {
    give_back(g);
    return false;
  }
  atomic_store_explicit(to, gen, memory_order_relaxed);
  return true;
}

/* enable_event / disable_event: the target's soft-disabled flag to !on; false when it was. */
static bool soft_switch(uint32_t target, bool on)
{
  uint8_t from = on ? 1 : 0;
  return atomic_compare_exchange_strong_explicit(&fxt_evtrig_soft_off[target & 0xffff], &from,
                                                 on ? 0 : 1, memory_order_relaxed,
                                                 memory_order_relaxed);
}

/* enable_hist / disable_hist: the target's hist triggers continued or paused. Its hook is
 * the one published for its id (the acquire pairs with its release in filters.c); this
 * emission keeps it allocated (fxt_slots_sync waits for it before a replaced hook is freed). */
static void hist_switch(uint32_t target, bool on)
{
  const struct fxt_evhook *th = fxt_filters_hook_for(target);
  for (uint32_t i = 0; th && i < th->ntrig; i++)
    if (th->trig[i]->cmd == FXT_EVTRIG_HIST)
      fxt_evtrig_hist_pause(th->trig[i]->hist, !on);
}

bool fxt_evtrig_fire(const struct fxt_evhook *h, struct fxt_tracepoint *tp, struct fxt_tslot *t,
                     const union fxt_value *values, const uint32_t *lens,
                     const struct fxt_filter_common *c, bool pass, bool paused)
{
  /* Soft-disabled as the event arrived (the kernel reads the file's flags once, first). */
  if (h->soft && atomic_load_explicit(&fxt_evtrig_soft_off[h->id & 0xffff], memory_order_relaxed))
    pass = false;
  bool off = false, on = false, stack = false, snap = false;
  for (uint32_t i = 0; i < h->ntrig; i++) {
    struct fxt_evtrig *g = h->trig[i];
    if (g->prog && !fxt_filter_match(g->prog, values, lens, c))
      continue;
    switch (g->cmd) {
    case FXT_EVTRIG_TRACEOFF:
      off |= trace_switch(g, t, false);
      break;
    case FXT_EVTRIG_SNAPSHOT:
      snap |= claim(g);
      break;
    case FXT_EVTRIG_STACKTRACE:
      stack |= claim(g);
      break;
    case FXT_EVTRIG_ENABLE_EVENT:
    case FXT_EVTRIG_DISABLE_EVENT:
      if (claim(g) && !soft_switch(g->target, g->cmd == FXT_EVTRIG_ENABLE_EVENT))
        give_back(g);
      break;
    case FXT_EVTRIG_ENABLE_HIST:
    case FXT_EVTRIG_DISABLE_HIST: /* every firing uses its count, as the kernel's */
      if (claim(g))
        hist_switch(g->target, g->cmd == FXT_EVTRIG_ENABLE_HIST);
      break;
    case FXT_EVTRIG_HIST: /* no count: every matching event, paused or not (its own flag) */
      fxt_evtrig_hist_count(g->hist, values, lens, c);
      break;
    case FXT_EVTRIG_TRACEON: /* changes something only while recording is off */
      on |= trace_switch(g, t, true);
      break;
    default:
      break;
    }
  }
  if (off && !h->cond)
    pass = false; /* fired before the reservation: the event is not recorded */
  if (paused) {
    /* Recording was off at the event: it is recorded only when a traceon fired before its
     * reservation (no trigger filter or stacktrace; with one, the kernel evaluates the event
     * in a scratch buffer that is never recorded), and so is its stack. A typed event is
     * written here (fxt_filter_off's caller records nothing); an ad-hoc one by its caller on
     * this return (fxt_emit_adhoc), its stack before it as when recording is on. */
    pass = pass && on && !h->cond;
    stack = stack && pass;
  }
  /* A stack follows its event, and a snapshot asked by a trigger with a filter holds it (the
   * kernel's post triggers): the event is written here first. An ad-hoc event cannot be (its
   * record is its fire site's): its stack comes before it, its snapshot may miss it. */
  if ((stack || (snap && h->cond) || paused) && pass && values && tp->kind == FXT_TP_TYPED) {
    put_event(tp, t, c->cpu, values, lens);
    pass = false; /* recorded: the caller must not record it again */
  }
  if (stack)
    put_stack(t, c->cpu);
  if (snap) {
    atomic_store_explicit(&snap_pending, 1, memory_order_release);
    fxt_consumer_wake(&fxt_session);
  }
  return pass;
}

/* The snapshot's file: the session's `trigger` option file when it has one (the crash
 * snapshot's), else fxtrace-snapshot.<pid>.fxt in the working directory. A regular file
 * only, as fxt_snapshot opens it (session.c). */
void fxt_evtrig_serve(struct session *s)
{
  if (!atomic_exchange_explicit(&snap_pending, 0, memory_order_acquire))
    return;
  char path[4200];
  if (s->trigger[0])
    snprintf(path, sizeof(path), "%s", s->trigger);
  else
    snprintf(path, sizeof(path), "fxtrace-snapshot.%d.fxt", (int)getpid());
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0644);
  if (fd < 0)
    return;
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(fd, 0) == 0 &&
      fcntl(fd, F_SETFL, 0) == 0)
    (void)fxt_cons_snap_fd(s, fd);
  close(fd);
}
