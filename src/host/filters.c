/* filters.c - event filters of the tracefs tree: per event (one id, several tracepoint objects
 * perhaps), the text the kernel keeps, how its compile ended, and the hook installed on the
 * event's tracepoints (struct fxt_evhook: the filter's program and the event's triggers,
 * evtrig.h); the error_log. Writes are serialized by `lock`; the emit path only reads
 * tracepoint.reg.filter, the hook (see fxtrace/detail/tp_registry.h for the ordering).
 */
#define _GNU_SOURCE
#include "filters.h"

#include <fxtrace/filter.h>
#include <fxtrace/fxtrace.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../base/grow.h"
#include "../base/tbuf.h"
#include "evtrig.h"
#include "live.h"
#include "registry.h"
#include "session_int.h"
#include "slots.h"

#define ERROR_LOG_ENTRIES 8

struct evfilter {
  uint32_t id;
  char *text; /* as the kernel stores it (fxt_filter_text_len) */
  size_t len;
  int result;
  struct fxt_filter_error err;
  void *prog; /* the filter's program (NULL: none) */
  /* The event's triggers, newest first, and its soft mode, as evtrig.c last set them. */
  struct fxt_evtrig **trig;
  uint32_t ntrig;
  bool soft, cond;
  struct fxt_evhook *hook; /* installed (NULL: none, the event takes the fast path) */
  /* An ad-hoc event's fields its filter and its triggers' conditions are compiled against
   * (fxt_registry_event_fields: all its sites'), names copied into `names`: each hook gets a
   * copy, by which an emission lays out its values (fxt_filter_pass_adhoc). nfields 0: a
   * typed event's (its values are its fields, in order). Under lock, as the whole entry. */
  struct fxt_field fields[FXT_TP_FIELDS_MAX];
  uint32_t nfields, head;
  size_t names_len;
  char *names;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct evfilter *tab;
static size_t ntab, captab;
static char *errlog[ERROR_LOG_ENTRIES];
/* The hook of each event id, for tracepoints registered later (a library loaded after the
 * filter was written). Stored before the install pass; both that pass and registration run
 * under the registry lock, so a new tracepoint gets the old hook and is then updated by
 * the pass, or gets the new one. */
static _Atomic(const void *) id_prog[65536];
static unsigned nerrlog;

/* The common fields of t's event of tp on cpu, as a filter reads them. */
static struct fxt_filter_common common_of(const struct fxt_tracepoint *tp,
                                          const struct fxt_tslot *t, uint32_t cpu)
{
  struct session *s = &fxt_session;
  struct fxt_filter_common c = {
      .type = (uint16_t)tp->id,
      .pid = (int32_t)t->w.thread_koid,
      .cpu = cpu,
      .comm = s->info && t->slot_index < s->nslots ? s->info[t->slot_index].comm : NULL,
  };
  return c;
}

/* The filter and triggers of hook h on the event's values. */
static bool pass_hook(const struct fxt_evhook *h, struct fxt_tracepoint *tp,
                      const struct fxt_tslot *t, const union fxt_value *values,
                      const uint32_t *lens, uint32_t cpu)
{
  struct fxt_filter_common c = common_of(tp, t, cpu);
  bool pass = fxt_filter_match(h->prog, values, lens, &c);
  if (FXT_UNLIKELY(h->ntrig != 0 || h->soft))
    return fxt_evtrig_fire(h, tp, (struct fxt_tslot *)t, values, lens, &c, pass, false);
  return pass;
}

bool fxt_filter_pass(struct fxt_tracepoint *tp, const struct fxt_tslot *t,
                     const union fxt_value *values, const uint32_t *lens, uint32_t cpu)
{
  /* Acquire pairs with install_fn's release: the hook's contents are visible. */
  const struct fxt_evhook *h = atomic_load_explicit(&tp->reg.filter, memory_order_acquire);
  if (!h) /* removed since the caller's load: nothing filters the event any more */
    return true;
  return pass_hook(h, tp, t, values, lens, cpu);
}

/* Argument a as a value of field type want (an event's sites may type one name differently:
 * a string is never read as a number, nor a number as a string). */
static union fxt_value convert(const struct fxt_argv *a, uint16_t want)
{
  union fxt_value v = {.u = 0};
  bool str = a->type == FXT_TYPE_STR, dbl = a->type == FXT_TYPE_DOUBLE;
  bool signed_ = a->type >= FXT_TYPE_S8 && a->type <= FXT_TYPE_S64;
  if (want == FXT_TYPE_STR || str)
    v.s = want == FXT_TYPE_STR && str ? a->v.s : NULL; /* NULL reads as "" */
  else if (want == FXT_TYPE_DOUBLE)
    v.d = dbl ? a->v.d : signed_ ? (double)a->v.i : (double)a->v.u;
  else if (dbl)
    v.i = (int64_t)a->v.d;
  else
    v = a->v;
  return v;
}

/* An ad-hoc event's values laid out by hook h's fields, into v and len (FXT_TP_FIELDS_MAX
 * each): its head first, then each field from the argument of that name. */
static void adhoc_values(const struct fxt_evhook *h, uint64_t head, const struct fxt_argv *av,
                         uint32_t n, union fxt_value *v, uint32_t *len)
{
  /* Fields the hook does not know (none kept: out of memory) read as 0 or "". */
  memset(v, 0, FXT_TP_FIELDS_MAX * sizeof(v[0]));
  memset(len, 0, FXT_TP_FIELDS_MAX * sizeof(len[0]));
  v[0].u = head; /* also the value of a hook without fields (a trigger's) */
  for (uint32_t i = h->head; i < h->nfields; i++) {
    const struct fxt_field *f = &h->fields[i];
    uint32_t k = i - h->head; /* the site's argument of that name: at the same place, usually */
    if (k >= n || strcmp(av[k].name, f->name) != 0)
      for (k = 0; k < n && strcmp(av[k].name, f->name) != 0; k++)
        ;
    if (k < n)
      v[i] = convert(&av[k], f->type);
    len[i] = f->type == FXT_TYPE_STR && v[i].s ? fxt_field_len(FXT_TYPE_STR, f->bound, v[i]) : 0;
  }
}

bool fxt_filter_pass_adhoc(struct fxt_tracepoint *tp, const struct fxt_tslot *t, uint64_t head,
                           const struct fxt_argv *av, uint32_t n, uint32_t cpu)
{
  /* Acquire pairs with install_fn's release: the hook's contents are visible. */
  const struct fxt_evhook *h = atomic_load_explicit(&tp->reg.filter, memory_order_acquire);
  if (!h)
    return true;
  union fxt_value v[FXT_TP_FIELDS_MAX];
  uint32_t len[FXT_TP_FIELDS_MAX];
  adhoc_values(h, head, av, n, v, len);
  return pass_hook(h, tp, t, v, len, cpu);
}

/* An emission of its own, as fxt_emit_enter's (depth raised before the loads it guards, the
 * stop's membarrier making the pair a Dekker handshake; the release store of depth at the end
 * pairs with fxt_slots_sync's and quiesce's acquire loads, so the hook stays allocated while
 * read), entered only by the thread's outermost emission with a slot of the session whose
 * recording is off (fxt_session_off_gen). It records nothing itself: the triggers write a
 * typed event (fxt_evtrig_fire, paused); for an ad-hoc one it returns whether the caller is
 * to write it. */
static bool filter_off(struct fxt_tracepoint *tp, const union fxt_value *values,
                       const uint32_t *lens, const struct fxt_adhoc_off *adhoc)
{
  struct fxt_tslot *t = fxt_tls_slot;
  if (!t || atomic_load_explicit(&t->depth, memory_order_relaxed) != 0)
    return false; /* no slot yet (its first event), or nested in an emission of the thread */
  bool record = false;
  atomic_store_explicit(&t->depth, 1, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
  uint32_t gen = atomic_load_explicit(&t->gen, memory_order_relaxed);
  if (gen != 0 && atomic_load_explicit(&fxt_session_off_gen, memory_order_relaxed) == gen) {
    atomic_thread_fence(memory_order_acquire); /* as fxt_emit_enter */
    /* Acquire pairs with install_fn's release: the hook's contents are visible. */
    const struct fxt_evhook *h = atomic_load_explicit(&tp->reg.filter, memory_order_acquire);
    if (h && h->ntrig != 0) {
      union fxt_value v[FXT_TP_FIELDS_MAX];
      uint32_t len[FXT_TP_FIELDS_MAX];
      if (adhoc) { /* laid out inside the window: the hook's fields stay allocated */
        adhoc_values(h, adhoc->head, adhoc->av, adhoc->n, v, len);
        values = v;
        lens = len;
      }
      struct fxt_filter_common c = common_of(tp, t, fxt_current_cpu());
      bool pass = fxt_filter_match(h->prog, values, lens, &c);
      record = fxt_evtrig_fire(h, tp, t, values, lens, &c, pass, true);
    }
  }
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&t->depth, 0, memory_order_release);
  return record;
}

void fxt_filter_off(struct fxt_tracepoint *tp, const union fxt_value *values,
                    const uint32_t *lens)
{
  (void)filter_off(tp, values, lens, NULL); /* a typed event is written by the triggers */
}

bool fxt_filter_off_adhoc(struct fxt_tracepoint *tp, const struct fxt_adhoc_off *a)
{
  return filter_off(tp, NULL, NULL, a);
}

/* Under lock. */
static struct evfilter *entry(uint32_t id, bool create)
{
  for (size_t i = 0; i < ntab; i++)
    if (tab[i].id == id)
      return &tab[i];
  if (!create)
    return NULL;
  if (!fxt_grow((void **)&tab, &captab, ntab + 1, sizeof(*tab), 32))
    return NULL;
  memset(&tab[ntab], 0, sizeof(tab[0]));
  tab[ntab].id = id;
  return &tab[ntab++];
}

struct install {
  uint32_t id;
  const struct fxt_evhook *hook;
};

static int install_fn(void *ctx, struct fxt_tracepoint *tp)
{
  struct install *in = ctx;
  if (tp->id == in->id) /* release pairs with emission's acquire load (tracepoint.h) */
    atomic_store_explicit(&tp->reg.filter, in->hook, memory_order_release);
  return 0;
}

/* Under lock: installs prog (may be NULL) for e's event, in a new hook with e's triggers (none
 * when neither: the event goes back to the fast path); the old hook, and the old program when
 * it changed, are freed once no emission can be using them. */
static void install(struct evfilter *e, void *prog)
{
  void *old_prog = e->prog != prog ? e->prog : NULL;
  struct fxt_evhook *old = e->hook, *h = NULL;
  if (prog || e->ntrig || e->soft) {
    size_t trig_end = sizeof(*h) + e->ntrig * sizeof(h->trig[0]);
    h = malloc(trig_end + e->names_len);
    if (!h) { /* keeps the old hook (out of memory) */
      if (prog != e->prog)
        free(prog);
      return;
    }
    h->prog = prog;
    h->id = e->id;
    h->soft = e->soft;
    h->cond = e->cond;
    h->ntrig = e->ntrig;
    if (e->ntrig)
      memcpy(h->trig, e->trig, e->ntrig * sizeof(h->trig[0]));
    h->nfields = e->nfields;
    h->head = e->head;
    char *names = (char *)h + trig_end;
    if (e->names_len)
      memcpy(names, e->names, e->names_len);
    for (uint32_t i = 0; i < e->nfields; i++) { /* the names at the same offsets in the copy */
      h->fields[i] = e->fields[i];
      h->fields[i].name = names + (e->fields[i].name - e->names);
    }
  }
  struct install in = {e->id, h};
  atomic_store_explicit(&id_prog[e->id & 0xffff], h, memory_order_release);
  fxt_tracepoint_foreach(install_fn, &in);
  e->prog = prog;
  e->hook = h;
  if (old || old_prog) {
    fxt_slots_sync(&fxt_session);
    free(old);
    free(old_prog);
  }
}

/* Under lock: the fields of tp's event (fxt_registry_event_fields, as its filter and its
 * triggers' conditions are compiled against), kept for the hooks of an ad-hoc event (its
 * sites may differ: fxt_filter_pass_adhoc). On no memory the event keeps no fields, and its
 * filter reads every field as 0 or "". */
static void set_fields(struct evfilter *e, const struct fxt_tracepoint *tp)
{
  free(e->names);
  e->names = NULL;
  e->names_len = 0;
  e->nfields = 0;
  if (tp->kind == FXT_TP_TYPED)
    return;
  struct fxt_field f[FXT_TP_FIELDS_MAX];
  uint32_t nf = fxt_registry_event_fields(tp, f);
  size_t len = 0;
  for (uint32_t i = 0; i < nf; i++)
    len += strlen(f[i].name) + 1;
  if (len == 0 || !(e->names = malloc(len)))
    return;
  e->names_len = len;
  e->head = fxt_tracepoint_head(tp);
  char *p = e->names;
  for (uint32_t i = 0; i < nf; i++) {
    size_t n = strlen(f[i].name) + 1;
    memcpy(p, f[i].name, n);
    e->fields[i] = f[i];
    e->fields[i].name = p;
    p += n;
  }
  e->nfields = nf;
}

int fxt_filters_set_triggers(uint32_t id, struct fxt_evtrig *const *trig, uint32_t n, bool soft,
                             bool cond)
{
  struct fxt_evtrig **copy = n ? malloc(n * sizeof(*copy)) : NULL;
  if (n && !copy)
    return FXT_ENOMEM;
  if (n)
    memcpy(copy, trig, n * sizeof(*copy));
  pthread_mutex_lock(&lock);
  struct evfilter *e = entry(id, true);
  if (!e) {
    pthread_mutex_unlock(&lock);
    free(copy);
    return FXT_ENOMEM;
  }
  free(e->trig);
  e->trig = copy;
  e->ntrig = n;
  /* An ad-hoc event's fields, for its triggers' conditions and histograms, made now against
   * fxt_registry_event_fields: again at each change, as a site registered since (a library
   * loaded) may have added some. Sites are listed in registration order, so the fields an
   * earlier filter or trigger was compiled against keep their places. */
  struct fxt_tracepoint *tp = fxt_tracepoint_by_id(id);
  if (tp)
    set_fields(e, tp);
  e->soft = soft;
  e->cond = cond;
  install(e, e->prog);
  pthread_mutex_unlock(&lock);
  return 0;
}

/* Under lock: line (allocated) appended, the oldest entry dropped when full. */
static void push_line(char *line)
{
  if (nerrlog == ERROR_LOG_ENTRIES) {
    free(errlog[0]);
    memmove(errlog, errlog + 1, (ERROR_LOG_ENTRIES - 1) * sizeof(errlog[0]));
    nerrlog--;
  }
  errlog[nerrlog++] = line;
}

/* Under lock. */
static void log_error(const char *text, size_t len, const struct fxt_filter_error *err)
{
  uint64_t now = live_now_ns();
  size_t n = fxt_filter_render_error_log(NULL, 0, text, len, err, now);
  if (n == 0)
    return;
  char *line = malloc(n + 1);
  if (!line)
    return;
  fxt_filter_render_error_log(line, n + 1, text, len, err, now);
  push_line(line);
}

/* Under lock: records the outcome of a compile for e (the kernel's rules) and installs. */
static void settle(struct evfilter *e, const char *text, size_t len, int rc,
                   const struct fxt_filter_error *err, void *prog, size_t prog_len)
{
  if (err->code >= FXT_FILTER_ERR_WRITE_TOO_LONG) { /* refused before parsing: no change */
    free(prog);
    return;
  }
  size_t stored = fxt_filter_text_len(text, len);
  char *copy = malloc(stored + 1);
  if (copy) {
    memcpy(copy, text, stored);
    copy[stored] = 0;
    free(e->text);
    e->text = copy;
    e->len = stored;
  }
  e->result = rc;
  e->err = *err;
  if (rc > 0) {
    void *small = realloc(prog, prog_len); /* the program is position-independent */
    install(e, small ? small : prog);
  } else {
    free(prog);
    install(e, NULL); /* "0" clears; a parse error drops the previous filter (kernel) */
    if (rc < 0)
      log_error(e->text, e->len, &e->err);
  }
}

/* The first typed tracepoint of sys:ev (its fields describe the event). */
struct first {
  const char *sys, *ev;
  struct fxt_tracepoint *tp;
};

static int first_fn(void *ctx, struct fxt_tracepoint *tp)
{
  struct first *f = ctx;
  if (!f->tp && strcmp(tp->system, f->sys) == 0 && (!f->ev || strcmp(tp->name, f->ev) == 0))
    f->tp = tp;
  return 0;
}

int fxt_filters_write_event(const char *sys, const char *ev, const char *text, size_t len)
{
  struct first f = {sys, ev, NULL};
  fxt_tracepoint_foreach(first_fn, &f);
  if (!f.tp)
    return FXT_ENOENT;
  struct fxt_field fields[FXT_TP_FIELDS_MAX];
  struct fxt_filter_event fe = {fields, fxt_registry_event_fields(f.tp, fields), live_ncpus()};
  size_t size = FXT_FILTER_PROG_MAX(len);
  void *prog = aligned_alloc(FXT_FILTER_ALIGN, (size + FXT_FILTER_ALIGN - 1) & ~(size_t)7);
  if (!prog)
    return FXT_ENOMEM;
  struct fxt_filter_error err;
  int rc = fxt_filter_compile(text, len, &fe, prog, size, &err);
  pthread_mutex_lock(&lock);
  struct evfilter *e = entry(f.tp->id, true);
  if (e) {
    set_fields(e, f.tp);
    settle(e, text, len, rc, &err, prog, rc > 0 ? (size_t)rc : 0);
  }
  else
    free(prog);
  pthread_mutex_unlock(&lock);
  return rc < 0 ? rc : 0;
}

/* Events of a system: one slot per distinct id. */
struct sysev {
  const char *sys;
  struct fxt_tracepoint *tps[4096];
  uint32_t n;
};

static int sysev_fn(void *ctx, struct fxt_tracepoint *tp)
{
  struct sysev *s = ctx;
  if (strcmp(tp->system, s->sys) != 0 || s->n == 4096)
    return 0;
  for (uint32_t i = 0; i < s->n; i++)
    if (s->tps[i]->id == tp->id)
      return 0;
  s->tps[s->n++] = tp;
  return 0;
}

int fxt_filters_write_system(const char *sys, const char *text, size_t len)
{
  static struct sysev se;
  pthread_mutex_lock(&lock);
  se.sys = sys;
  se.n = 0;
  fxt_tracepoint_foreach(sysev_fn, &se);
  struct fxt_filter_event *evs = calloc(se.n ? se.n : 1, sizeof(*evs));
  struct fxt_filter_slot *slots = calloc(se.n ? se.n : 1, sizeof(*slots));
  struct fxt_field(*fields)[FXT_TP_FIELDS_MAX] = calloc(se.n ? se.n : 1, sizeof(*fields));
  size_t size = FXT_FILTER_PROG_MAX(len);
  int rc = evs && slots && fields ? 0 : FXT_ENOMEM;
  for (uint32_t i = 0; rc == 0 && i < se.n; i++) {
    struct fxt_tracepoint *tp = se.tps[i];
    evs[i] = (struct fxt_filter_event){fields[i], fxt_registry_event_fields(tp, fields[i]),
                                       live_ncpus()};
    slots[i].event = &evs[i];
    slots[i].prog_size = size;
    slots[i].prog = aligned_alloc(FXT_FILTER_ALIGN, (size + 7) & ~(size_t)7);
    if (!slots[i].prog)
      rc = FXT_ENOMEM;
  }
  if (rc == 0)
    rc = fxt_filter_compile_system(text, len, slots, se.n);
  for (uint32_t i = 0; i < se.n; i++) {
    if (rc == 0 && slots[i].prog) {
      struct evfilter *e = entry(se.tps[i]->id, true);
      if (e) {
        set_fields(e, se.tps[i]);
        settle(e, text, len, slots[i].result, &slots[i].err, slots[i].prog,
               slots[i].result > 0 ? (size_t)slots[i].result : 0);
        continue;
      }
    }
    free(slots ? slots[i].prog : NULL);
  }
  free(evs);
  free(slots);
  free(fields);
  pthread_mutex_unlock(&lock);
  return rc;
}

void fxt_filters_read_event(const char *sys, const char *ev, struct fxt_tbuf *b)
{
  struct first f = {sys, ev, NULL};
  fxt_tracepoint_foreach(first_fn, &f);
  pthread_mutex_lock(&lock);
  struct evfilter *e = f.tp ? entry(f.tp->id, false) : NULL;
  if (!e || !e->text) {
    fxt_tbuf_puts(b, "none\n");
  } else {
    size_t n = fxt_filter_render(NULL, 0, e->text, e->len, e->result, &e->err);
    if (fxt_tbuf_reserve(b, n + 1)) {
      fxt_filter_render(b->data + b->len, n + 1, e->text, e->len, e->result, &e->err);
      b->len += n;
    }
  }
  pthread_mutex_unlock(&lock);
}

void fxt_filters_error_log(struct fxt_tbuf *b)
{
  pthread_mutex_lock(&lock);
  for (unsigned i = 0; i < nerrlog; i++)
    fxt_tbuf_puts(b, errlog[i]);
  pthread_mutex_unlock(&lock);
}

void fxt_filters_log_error(const char *text, size_t len, const struct fxt_filter_error *err)
{
  pthread_mutex_lock(&lock);
  log_error(text, len, err);
  pthread_mutex_unlock(&lock);
}

void fxt_filters_log_line(const char *line)
{
  char *copy = strdup(line);
  if (!copy)
    return;
  pthread_mutex_lock(&lock);
  push_line(copy);
  pthread_mutex_unlock(&lock);
}

void fxt_filters_clear_error_log(void)
{
  pthread_mutex_lock(&lock);
  for (unsigned i = 0; i < nerrlog; i++)
    free(errlog[i]);
  nerrlog = 0;
  pthread_mutex_unlock(&lock);
}

const struct fxt_evhook *fxt_filters_hook_for(uint32_t id)
{
  return atomic_load_explicit(&id_prog[id & 0xffff], memory_order_acquire);
}
