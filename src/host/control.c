/* control.c - the session side of the tracefs tree: ensure a session, tracing_on, pid lists,
 * per-thread statistics. Nothing here is on the emit path. */
#define _GNU_SOURCE
#include "control.h"

#include <fxtrace/session.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/grow.h"
#include "live.h"
#include "session_int.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool paused;
static struct pid_list {
  pid_t *pids;
  size_t n, cap;
} lists[2]; /* [0] set_event_pid, [1] set_event_notrace_pid; under lock */

void fxt_control_atfork_prepare(void)
{
  pthread_mutex_lock(&lock);
}

void fxt_control_atfork_parent(void)
{
  pthread_mutex_unlock(&lock);
}

void fxt_control_atfork_child(void)
{
  pthread_mutex_init(&lock, NULL);
}

int fxt_control_ensure_session(void)
{
  if (fxt_session_running())
    return 0;
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "", .output = ""};
  int rc = fxt_session_start(&cfg);
  return rc == FXT_EBUSY ? 0 : rc; /* someone else started one meanwhile: fine */
}

void fxt_control_set_recording(bool on)
{
  pthread_mutex_lock(&lock);
  paused = !on;
  pthread_mutex_unlock(&lock);
  fxt_session_pause(!on);
  live_set_on(on);
}

bool fxt_control_recording(void)
{
  pthread_mutex_lock(&lock);
  bool on = !paused;
  pthread_mutex_unlock(&lock);
  /* traceoff and traceon event triggers turn recording off and on from the emit path
   * (evtrig_fire.c), in the session's active word alone: while a session runs, that word
   * says. */
  if (fxt_session_running())
    on = atomic_load_explicit(&fxt_session_active, memory_order_relaxed) != 0;
  return on;
}

static bool in_list(const struct pid_list *l, pid_t tid)
{
  for (size_t i = 0; i < l->n; i++)
    if (l->pids[i] == tid)
      return true;
  return false;
}

/* Under lock. */
static bool muted_locked(pid_t tid)
{
  return (lists[0].n && !in_list(&lists[0], tid)) || in_list(&lists[1], tid);
}

bool fxt_pid_muted(pid_t tid)
{
  pthread_mutex_lock(&lock);
  bool m = muted_locked(tid);
  pthread_mutex_unlock(&lock);
  return m;
}

/* Re-marks every live slot after a list changed. */
static void apply_to_slots(void)
{
  struct session *s = &fxt_session;
  if (!fxt_session_running() || !s->pool)
    return;
  pthread_mutex_lock(&s->pool_lock);
  for (uint32_t i = 0; i < s->nslots; i++) {
    if (atomic_load_explicit(&s->info[i].state, memory_order_acquire) != SLOT_LIVE)
      continue;
    struct fxt_tslot *t = session_slot(s, i);
    bool m = fxt_pid_muted(s->info[i].tid);
    atomic_store_explicit(&t->gen, m ? s->gen | FXT_GEN_MUTED : s->gen, memory_order_relaxed);
  }
  pthread_mutex_unlock(&s->pool_lock);
}

int fxt_control_set_pids(bool notrace, const char *text, bool add)
{
  /* Parse first: a bad value changes nothing (kernel: EINVAL). */
  size_t n = 0, cap = 16;
  pid_t *pids = malloc(cap * sizeof(*pids));
  if (!pids)
    return FXT_ENOMEM;
  for (const char *p = text; *p;) {
    while (*p == ' ' || *p == '\t' || *p == '\n')
      p++;
    if (!*p)
      break;
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p || v < 0 || v > 0x3fffffff || (*end && *end != ' ' && *end != '\t' &&
                                                 *end != '\n')) {
      free(pids);
      return FXT_EINVAL;
    }
    if (!fxt_grow((void **)&pids, &cap, n + 1, sizeof(*pids), 16)) {
      free(pids);
      return FXT_ENOMEM;
    }
    pids[n++] = (pid_t)v;
    p = end;
  }
  pthread_mutex_lock(&lock);
  struct pid_list *l = &lists[notrace];
  if (!add)
    l->n = 0;
  for (size_t i = 0; i < n; i++) {
    if (in_list(l, pids[i]))
      continue;
    if (!fxt_grow((void **)&l->pids, &l->cap, l->n + 1, sizeof(*l->pids), 16))
      break;
    l->pids[l->n++] = pids[i];
  }
  pthread_mutex_unlock(&lock);
  free(pids);
  apply_to_slots();
  return 0;
}

void fxt_control_pids(bool notrace, char *buf, size_t size)
{
  size_t len = 0;
  buf[0] = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < lists[notrace].n && len + 16 < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%d\n", (int)lists[notrace].pids[i]);
  pthread_mutex_unlock(&lock);
}

int fxt_control_threads(pid_t *out, int max)
{
  struct session *s = &fxt_session;
  int n = 0;
  if (!s->pool)
    return 0;
  for (uint32_t i = 0; i < s->nslots && n < max; i++)
    if (atomic_load_explicit(&s->info[i].state, memory_order_acquire) != SLOT_FREE)
      out[n++] = s->info[i].tid;
  return n;
}

int fxt_control_thread_stats(pid_t tid, struct fxt_thread_stats *st)
{
  struct session *s = &fxt_session;
  memset(st, 0, sizeof(*st));
  for (uint32_t i = 0; s->pool && i < s->nslots; i++) {
    if (atomic_load_explicit(&s->info[i].state, memory_order_acquire) == SLOT_FREE ||
        s->info[i].tid != tid)
      continue;
    struct fxt_tslot *t = session_slot(s, i);
    struct fxt_ring_stats rs;
    fxt_ring_stats(&t->w.ring, &rs);
    st->bytes = rs.used;
    st->overrun = rs.overrun_records;
    /* Entries: walk the unread records without consuming them (safe beside both sides). */
    struct fxt_ring_iter it;
    uint64_t word;
    uint32_t len;
    int rc;
    fxt_ring_iter_begin(&t->w.ring, &it);
    while ((rc = fxt_ring_iter_next(&it, &word, sizeof(word), &len)) == 1 || rc == FXT_ENOBUFS) {
      if (rc == FXT_ENOBUFS) { /* longer than a word: skip it whole */
        it.pos += len;
      }
      st->entries++;
    }
    st->dropped = atomic_load_explicit(&s->info[i].dropped_pub, memory_order_relaxed);
    st->read = atomic_load_explicit(&s->info[i].events_read_pub, memory_order_relaxed);
    st->lost = atomic_load_explicit(&t->lost, memory_order_relaxed);
    return 0;
  }
  return FXT_ENOENT;
}
