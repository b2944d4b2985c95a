/* evtrig.c - event triggers, control side (evtrig.h): each event's triggers (newest first, as
 * the kernel lists and runs them), the soft mode of events, and what writes and reads of the
 * `trigger` files do. Every function here takes `lock`; the emit path never does: it sees
 * an event's triggers through the hook filters.c publishes (fxt_filters_set_triggers, which
 * returns only once no emission uses the previous hook, so a trigger taken out of it may be
 * freed then). Lock order: this lock, then filters.c's, then the registry's.
 *
 * Soft mode (the kernel's SOFT_MODE): an event with triggers, or the target of an
 * enable_event / disable_event trigger, has its tracepoints enabled whatever its `enable`
 * file says, so that its triggers fire and its target can be switched with one store; whether
 * it records is fxt_evtrig_soft_off[id] (its `enable` file reads "0*" or "1*"). Entering it
 * keeps what the event was (enabled: records; disabled: soft-disabled); leaving it, an event
 * soft-disabled is disabled again and one that records stays enabled, as the kernel's
 * __ftrace_event_enable_disable does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fxtrace/tracepoint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/grow.h"
#include "../base/tbuf.h"
#include "control.h"
#include "evtrig.h"
#include "filters.h"
#include "live.h"
#include "registry.h"

/* An event with triggers or in soft mode. */
struct evt {
  uint32_t id;
  char name[700];            /* "sys:ev" */
  struct fxt_evtrig **trig;  /* newest first */
  uint32_t ntrig;
  size_t cap;
  uint32_t targeted;         /* enable_event / disable_event triggers naming it */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct evt *evts;
static size_t nevts, capevts;
static bool stack_ready;

/* Under lock. */
static struct evt *evt_of(const struct fxt_tracepoint *tp, bool create)
{
  for (size_t i = 0; i < nevts; i++)
    if (evts[i].id == tp->id)
      return &evts[i];
  if (!create || !fxt_grow((void **)&evts, &capevts, nevts + 1, sizeof(*evts), 16))
    return NULL;
  struct evt *e = &evts[nevts++];
  memset(e, 0, sizeof(*e));
  e->id = tp->id;
  snprintf(e->name, sizeof(e->name), "%s:%s", tp->system, tp->name);
  return e;
}

static bool soft(const struct evt *e)
{
  return e->ntrig != 0 || e->targeted != 0;
}

/* Under lock: publishes e's triggers and soft mode in its hook. */
static int publish(const struct evt *e)
{
  bool cond = false;
  for (uint32_t i = 0; i < e->ntrig; i++)
    cond |= e->trig[i]->prog != NULL || e->trig[i]->cmd == FXT_EVTRIG_STACKTRACE ||
            e->trig[i]->cmd == FXT_EVTRIG_HIST; /* the kernel's NEEDS_REC */
  return fxt_filters_set_triggers(e->id, e->trig, e->ntrig, soft(e), cond);
}

/* Under lock, before e gains what puts it in soft mode: entering it. The hook is published
 * first with the soft-disabled flag set as the event was, then its tracepoints are enabled:
 * an event that was off never records in between. */
static void soft_enter(struct evt *e, const struct fxt_tracepoint *tp)
{
  if (soft(e))
    return;
  bool on = atomic_load_explicit(&tp->enabled, memory_order_relaxed) != 0;
  atomic_store_explicit(&fxt_evtrig_soft_off[e->id & 0xffff], on ? 0 : 1, memory_order_relaxed);
}

/* Under lock, after e's triggers or targets changed: its hook published, then its tracepoints
 * enabled in soft mode or, leaving it soft-disabled, disabled (first, so that it never
 * records in between). */
static int settle(struct evt *e, bool was_soft)
{
  if (!soft(e) && was_soft &&
      atomic_load_explicit(&fxt_evtrig_soft_off[e->id & 0xffff], memory_order_relaxed)) {
    fxt_registry_set_glob(e->name, false);
    atomic_store_explicit(&fxt_evtrig_soft_off[e->id & 0xffff], 0, memory_order_relaxed);
  }
  int rc = publish(e);
  if (soft(e) && !was_soft)
    fxt_registry_set_glob(e->name, true);
  return rc;
}

static void trig_free(struct fxt_evtrig *g)
{
  if (!g)
    return;
  free(g->prog);
  free(g->filter);
  free(g->target_name);
  fxt_evtrig_hist_free(g->hist);
  free(g);
}

/* The kernel's trigger kinds: traceon and traceoff are one, enable_event and disable_event
 * one per target. */
static bool same_kind(const struct fxt_evtrig *g, int cmd, uint32_t target)
{
  int a = g->cmd == FXT_EVTRIG_TRACEON ? FXT_EVTRIG_TRACEOFF : g->cmd;
  int b = cmd == FXT_EVTRIG_TRACEON ? FXT_EVTRIG_TRACEOFF : cmd;
  if (a == FXT_EVTRIG_ENABLE_EVENT || a == FXT_EVTRIG_ENABLE_HIST)
    a++; /* (each disable_ right after its enable_) */
  if (b == FXT_EVTRIG_ENABLE_EVENT || b == FXT_EVTRIG_ENABLE_HIST)
    b++;
  return a == b && a != FXT_EVTRIG_HIST && (!fxt_evtrig_has_target(a) || g->target == target);
}

/* Under lock: e's hist trigger with h's histogram and filter's text, or NULL. */
static struct fxt_evtrig *hist_of(const struct evt *e, const struct fxt_evtrig_hist *h,
                                  const char *filter, size_t flen, uint32_t *at)
{
  for (uint32_t i = 0; i < e->ntrig; i++) {
    struct fxt_evtrig *g = e->trig[i];
    if (g->cmd == FXT_EVTRIG_HIST && fxt_evtrig_hist_same(g->hist, h) &&
        (g->filter ? strlen(g->filter) == flen && memcmp(g->filter, filter, flen) == 0
                   : flen == 0)) {
      *at = i;
      return g;
    }
  }
  return NULL;
}

/* A hist error's error_log entry, as the kernel's hist_err: "hist:<sys>:<ev>: error: ..."
 * with the command, "hist:" and what followed it, and the caret. */
static void hist_log(const char *sys, const char *ev, const char *cmd,
                     const struct fxt_evtrig_hist_error *err)
{
  if (err->code == 0)
    return;
  uint64_t ns = live_now_ns();
  size_t n = strlen(cmd) + strlen(sys) + strlen(ev) + err->pos + 200;
  char *line = malloc(n);
  if (!line)
    return;
  int k = snprintf(line, n, "[%5llu.%06u] hist:%s:%s: error: %s\n  Command: hist:%s\n%*s^\n",
                   (unsigned long long)(ns / 1000000000u), (unsigned)(ns % 1000000000u / 1000u),
                   sys, ev, fxt_evtrig_hist_strerror(err->code), cmd, (int)(11 + err->pos), "");
  if (k > 0)
    fxt_filters_log_line(line);
  free(line);
}

static int compile(struct fxt_evtrig *g, const struct fxt_tracepoint *tp, const char *text,
                   size_t len);

/* Under lock: a hist write (not a removal) for e: a new trigger g (its filter compiled), or
 * its pause / cont / clear applied to the same histogram already there. */
static int hist_write(struct evt *e, const struct fxt_tracepoint *tp, const char *sys,
                      const char *ev, const char *buf, const struct fxt_evtrig_spec *sp,
                      struct fxt_evtrig *g)
{
  char param[FXT_EVTRIG_MAX_WRITE + 1];
  memcpy(param, buf + sp->param_at, sp->param_len);
  param[sp->param_len] = 0;
  const char *cmd = buf + sp->param_at; /* "hist:" + this is the kernel's logged command */
  struct fxt_evtrig_hist_attrs a;
  struct fxt_evtrig_hist_error err;
  int rc = fxt_evtrig_hist_attrs(param, sp->param_len, &a, &err);
  if (rc == 0)
    rc = fxt_evtrig_hist_new(tp, param, &a, &g->hist, &err);
  if (rc < 0) {
    hist_log(sys, ev, cmd, &err);
    return rc;
  }
  uint32_t at;
  struct fxt_evtrig *old = hist_of(e, g->hist, buf + sp->filter_at, sp->filter_len, &at);
  if (old && (a.pause || a.cont || a.clear)) {
    fxt_evtrig_hist_control(old->hist, &a);
    return 1; /* done: g is not added */
  }
  err.pos = 0;
  if (old || a.cont || a.clear) {
    err.code = old ? FXT_HIST_ERR_TRIGGER_EEXIST : FXT_HIST_ERR_TRIGGER_ENOENT_CLEAR;
    hist_log(sys, ev, cmd, &err);
    return old ? -EEXIST : FXT_ENOENT;
  }
  if (sp->filter_len)
    rc = compile(g, tp, buf + sp->filter_at, sp->filter_len);
  return rc;
}

/* The trigger's `if` compiled for the event tp (its fields), as the kernel's
 * create_event_filter: a bad one is its error and an error_log entry. */
static int compile(struct fxt_evtrig *g, const struct fxt_tracepoint *tp, const char *text,
                   size_t len)
{
  struct fxt_field fields[FXT_TP_FIELDS_MAX]; /* an ad-hoc event's too (registry.h) */
  struct fxt_filter_event fe = {fields, fxt_registry_event_fields(tp, fields), live_ncpus()};
  size_t size = FXT_FILTER_PROG_MAX(len);
  g->prog = aligned_alloc(FXT_FILTER_ALIGN, (size + FXT_FILTER_ALIGN - 1) & ~(size_t)7);
  g->filter = strndup(text, len);
  if (!g->prog || !g->filter)
    return FXT_ENOMEM;
  struct fxt_filter_error err;
  int rc = fxt_filter_compile(text, len, &fe, g->prog, size, &err);
  if (rc == 0) {
    /* "0" clears an event's filter, but not in a trigger: the kernel parses it as a term
     * and finds no such field (its error position: after the operand, +1). */
    size_t at = 0;
    while (at < len && text[at] != '0')
      at++;
    err = (struct fxt_filter_error){FXT_EINVAL, FXT_FILTER_ERR_FIELD_NOT_FOUND,
                                    (uint32_t)at + 2,
                                    fxt_filter_strerror(FXT_FILTER_ERR_FIELD_NOT_FOUND)};
    rc = FXT_EINVAL;
  }
  if (rc < 0)
    fxt_filters_log_error(text, len, &err);
  return rc < 0 ? rc : 0;
}

/* Under lock: removes the trigger of e of cmd's kind (and target), if there is one. */
static int remove_trig(struct evt *e, int cmd, struct evt *target)
{
  for (uint32_t i = 0; i < e->ntrig; i++) {
    struct fxt_evtrig *g = e->trig[i];
    if (!same_kind(g, cmd, target ? target->id : 0))
      continue;
    bool was_soft = soft(e);
    memmove(&e->trig[i], &e->trig[i + 1], (e->ntrig - i - 1) * sizeof(e->trig[0]));
    e->ntrig--;
    int rc = settle(e, was_soft); /* returns once no emission uses g */
    if (rc < 0) { /* out of memory: g stays where the emit path sees it */
      memmove(&e->trig[i + 1], &e->trig[i], (e->ntrig - i) * sizeof(e->trig[0]));
      e->trig[i] = g;
      e->ntrig++;
      return rc;
    }
    if (target) {
      was_soft = soft(target);
      target->targeted--;
      (void)settle(target, was_soft);
    }
    trig_free(g);
    return 0;
  }
  return 0; /* the kernel: removing what is not there succeeds */
}

/* Under lock: adds g to e (newest first), with its target's soft mode. */
static int add_trig(struct evt *e, const struct fxt_tracepoint *tp, struct fxt_evtrig *g,
                    struct evt *target, const struct fxt_tracepoint *ttp)
{
  for (uint32_t i = 0; i < e->ntrig; i++)
    if (same_kind(e->trig[i], g->cmd, g->target))
      return -EEXIST; /* a host errno beside fxtrace/errors.h's (fxt_strerror names it) */
  if (!fxt_grow((void **)&e->trig, &e->cap, (size_t)e->ntrig + 1, sizeof(e->trig[0]), 4))
    return FXT_ENOMEM;
  if (target) { /* the target first: it is in soft mode before anything can switch it */
    bool was_soft = soft(target);
    soft_enter(target, ttp);
    target->targeted++;
    if (settle(target, was_soft) < 0) {
      target->targeted--;
      return FXT_ENOMEM;
    }
  }
  bool was_soft = soft(e);
  soft_enter(e, tp);
  memmove(&e->trig[1], &e->trig[0], e->ntrig * sizeof(e->trig[0]));
  e->trig[0] = g;
  e->ntrig++;
  int rc = settle(e, was_soft);
  if (rc < 0) {
    memmove(&e->trig[0], &e->trig[1], --e->ntrig * sizeof(e->trig[0]));
    if (target) {
      was_soft = soft(target);
      target->targeted--;
      (void)settle(target, was_soft);
    }
  }
  return rc;
}

/* Under lock: "!hist:..." removes the hist trigger of the same histogram (and filter, as the
 * kernel's hist_trigger_match), if there is one. */
static int remove_hist(struct evt *e, const char *buf, const struct fxt_evtrig_spec *sp,
                       const struct fxt_tracepoint *tp)
{
  char param[FXT_EVTRIG_MAX_WRITE + 1];
  memcpy(param, buf + sp->param_at, sp->param_len);
  param[sp->param_len] = 0;
  struct fxt_evtrig_hist_attrs a;
  struct fxt_evtrig_hist_error err;
  struct fxt_evtrig_hist *h;
  int rc = fxt_evtrig_hist_attrs(param, sp->param_len, &a, &err);
  if (rc == 0)
    rc = fxt_evtrig_hist_new(tp, param, &a, &h, &err);
  if (rc < 0)
    return rc;
  /* The filter of a removal: what follows the attributes, "if " and one blank. */
  const char *f = buf + sp->param_at + sp->param_len;
  f += strspn(f, " \t");
  size_t flen = strncmp(f, "if", 2) == 0 && (f[2] == ' ' || f[2] == '\t') ? strlen(f + 3) : 0;
  uint32_t at;
  struct fxt_evtrig *g = hist_of(e, h, flen ? f + 3 : "", flen, &at);
  fxt_evtrig_hist_free(h);
  if (!g)
    return 0; /* the kernel: removing what is not there succeeds */
  bool was_soft = soft(e);
  memmove(&e->trig[at], &e->trig[at + 1], (e->ntrig - at - 1) * sizeof(e->trig[0]));
  e->ntrig--;
  rc = settle(e, was_soft); /* returns once no emission uses g */
  if (rc < 0) {
    memmove(&e->trig[at + 1], &e->trig[at], (e->ntrig - at) * sizeof(e->trig[0]));
    e->trig[at] = g;
    e->ntrig++;
    return rc;
  }
  trig_free(g);
  return 0;
}

int fxt_evtrig_write(const char *sys, const char *ev, const char *text)
{
  size_t len = strlen(text), start;
  if (len > FXT_EVTRIG_MAX_WRITE)
    return FXT_EINVAL;
  char buf[FXT_EVTRIG_MAX_WRITE + 1];
  memcpy(buf, text, len + 1);
  struct fxt_evtrig_spec sp;
  int rc = fxt_evtrig_parse(buf, len, &start, &sp);
  if (rc < 0)
    return rc;
  struct fxt_tracepoint *tp = fxt_tracepoint_by_name(sys, ev), *ttp = NULL;
  if (!tp || tp->id == 0)
    return FXT_ENOENT;
  char tname[800] = "";
  if (fxt_evtrig_has_target(sp.cmd)) {
    /* the target must exist (the kernel: EINVAL) */
    char tsys[256], tev[512];
    if (sp.sys_len >= sizeof(tsys) || sp.ev_len >= sizeof(tev))
      return FXT_EINVAL;
    snprintf(tsys, sizeof(tsys), "%.*s", (int)sp.sys_len, buf + sp.sys_at);
    snprintf(tev, sizeof(tev), "%.*s", (int)sp.ev_len, buf + sp.ev_at);
    ttp = fxt_tracepoint_by_name(tsys, tev);
    if (!ttp || ttp->id == 0)
      return FXT_EINVAL;
    snprintf(tname, sizeof(tname), "%s:%s", tsys, tev);
  }
  if (!sp.remove && (rc = fxt_control_ensure_session()) < 0)
    return rc;
  pthread_mutex_lock(&lock);
  struct evt *e = evt_of(tp, true), *target = ttp ? evt_of(ttp, true) : NULL;
  if (!e || (ttp && !target)) {
    pthread_mutex_unlock(&lock);
    return FXT_ENOMEM;
  }
  if (target)
    e = evt_of(tp, false); /* (the table may have moved) */
  if (sp.remove && sp.cmd == FXT_EVTRIG_HIST) {
    rc = remove_hist(e, buf, &sp, tp);
    pthread_mutex_unlock(&lock);
    return rc;
  }
  if (sp.remove) {
    rc = remove_trig(e, sp.cmd, target);
    pthread_mutex_unlock(&lock);
    return rc;
  }
  struct fxt_evtrig *g = calloc(1, sizeof(*g));
  rc = g ? 0 : FXT_ENOMEM;
  if (g) {
    g->cmd = sp.cmd;
    atomic_init(&g->count, sp.count);
    g->target = ttp ? ttp->id : 0;
    if (ttp && !(g->target_name = strdup(tname)))
      rc = FXT_ENOMEM;
  }
  if (rc == 0 && sp.cmd == FXT_EVTRIG_HIST)
    rc = hist_write(e, tp, sys, ev, buf, &sp, g);
  else if (rc == 0 && sp.filter_len)
    rc = compile(g, tp, buf + sp.filter_at, sp.filter_len);
  if (rc == 1) { /* (hist: applied to the one there) */
    trig_free(g);
    pthread_mutex_unlock(&lock);
    return 0;
  }
  if (rc == 0 && sp.cmd == FXT_EVTRIG_STACKTRACE && !stack_ready)
    stack_ready = (rc = fxt_evtrig_stack_prepare()) == 0;
  if (rc == 0)
    rc = add_trig(e, tp, g, target, ttp);
  if (rc < 0)
    trig_free(g);
  pthread_mutex_unlock(&lock);
  return rc;
}

void fxt_evtrig_read(const char *sys, const char *ev, struct fxt_tbuf *b)
{
  struct fxt_tracepoint *tp = fxt_tracepoint_by_name(sys, ev);
  pthread_mutex_lock(&lock);
  struct evt *e = tp ? evt_of(tp, false) : NULL;
  if (!e || e->ntrig == 0)
    fxt_evtrig_print_available(b);
  for (uint32_t i = 0; e && i < e->ntrig; i++) {
    const struct fxt_evtrig *g = e->trig[i];
    if (g->hist)
      fxt_evtrig_hist_describe(g->hist, g->filter, b);
    else
      fxt_evtrig_print(b, g->cmd, g->target_name,
                       atomic_load_explicit(&g->count, memory_order_relaxed), g->filter);
  }
  pthread_mutex_unlock(&lock);
}

void fxt_evtrig_hist_read(const char *sys, const char *ev, struct fxt_tbuf *b)
{
  struct fxt_tracepoint *tp = fxt_tracepoint_by_name(sys, ev);
  pthread_mutex_lock(&lock);
  struct evt *e = tp ? evt_of(tp, false) : NULL;
  bool first = true;
  for (uint32_t i = 0; e && i < e->ntrig; i++)
    if (e->trig[i]->hist) {
      fxt_evtrig_hist_show(e->trig[i]->hist, e->trig[i]->filter, first, b);
      first = false;
    }
  pthread_mutex_unlock(&lock);
}

int fxt_evtrig_soft_state(const char *sys, const char *ev)
{
  struct fxt_tracepoint *tp = fxt_tracepoint_by_name(sys, ev);
  pthread_mutex_lock(&lock);
  struct evt *e = tp ? evt_of(tp, false) : NULL;
  int st = e && soft(e) ? !atomic_load_explicit(&fxt_evtrig_soft_off[e->id & 0xffff],
                                                memory_order_relaxed)
                        : -1;
  pthread_mutex_unlock(&lock);
  return st;
}

void fxt_evtrig_enable_written(const char *glob, bool on)
{
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < nevts; i++) {
    struct evt *e = &evts[i];
    if (!soft(e) || !fxt_glob_match(glob, e->name))
      continue;
    atomic_store_explicit(&fxt_evtrig_soft_off[e->id & 0xffff], on ? 0 : 1,
                          memory_order_relaxed);
    if (!on) /* the write disabled its tracepoints: in soft mode they stay on */
      fxt_registry_set_glob(e->name, true);
  }
  pthread_mutex_unlock(&lock);
}
