/* live_read.c - the live view read (live.h): events formatted as ftrace text, `trace` a
 * chunk at a time from places held by sequence numbers (live_iter), `trace_pipe` consuming,
 * waiting for events, and the per-CPU stats. Everything under fxt_live.lock (live_int.h). */
#define _GNU_SOURCE
#include "live_int.h"
#include "../base/grow.h"

/* ---- formatting --------------------------------------------------------------------------- */

static struct fxt_str_ref ref_text(uint16_t ref, const unsigned char *p, uint32_t *at,
                                   uint32_t end)
{
  struct fxt_str_ref r = {"", 0, ref};
  if (ref & 0x8000) { /* inline */
    uint32_t n = ref & 0x7fff;
    if (*at + n <= end) {
      r.data = (const char *)p + *at;
      r.len = (uint16_t)n;
    }
    *at += (n + 7) & ~7u;
    return r;
  }
  const char *s;
  uint32_t n;
  if (ref && fxt_intern_lookup(ref, &s, &n)) {
    r.data = s;
    r.len = (uint16_t)n;
  }
  return r;
}

/* Parses one of our own event records (as emitted in this process) into *ev; strings resolve
 * through the intern table. Returns false when it is not a well-formed event. */
static bool parse_event(const unsigned char *p, uint32_t len, struct fxt_event *ev)
{
  uint64_t h, w;
  if (len < 16)
    return false;
  memcpy(&h, p, 8);
  memset(ev, 0, sizeof(*ev));
  ev->type = (uint32_t)(h >> 16 & 0xf);
  ev->num_args = (uint32_t)(h >> 20 & 0xf);
  ev->thread.index = (uint8_t)(h >> 24);
  memcpy(&ev->timestamp, p + 8, 8);
  uint32_t at = 16;
  if (ev->thread.index == 0)
    at += 16;
  ev->category = ref_text((uint16_t)(h >> 32), p, &at, len);
  ev->name = ref_text((uint16_t)(h >> 48), p, &at, len);
  for (uint32_t i = 0; i < ev->num_args; i++) {
    if (at + 8 > len)
      return false;
    memcpy(&w, p + at, 8);
    uint32_t words = (uint32_t)(w >> 4 & 0xfff), start = at;
    struct fxt_arg *a = &ev->args[i];
    a->type = (uint32_t)(w & 0xf);
    at += 8;
    a->name = ref_text((uint16_t)(w >> 16), p, &at, len);
    switch (a->type) {
    case FXT_ARG_INT32:
      a->value.i32 = (int32_t)(uint32_t)(w >> 32);
      break;
    case FXT_ARG_UINT32:
      a->value.u32 = (uint32_t)(w >> 32);
      break;
    case FXT_ARG_BOOL:
      a->value.b = (w >> 32) & 1;
      break;
    case FXT_ARG_STRING:
      a->value.str = ref_text((uint16_t)(w >> 32), p, &at, len);
      break;
    default: /* int64, uint64, double, pointer, koid: one word */
      if (at + 8 <= len)
        memcpy(&a->value.u64, p + at, 8);
      break;
    }
    at = start + words * 8;
    if (words == 0 || at > len)
      return false;
  }
  if (ev->type == FXT_EVENT_COUNTER || ev->type >= FXT_EVENT_DURATION_COMPLETE) {
    if (at + 8 > len)
      return false;
    memcpy(&ev->trailer, p + at, 8);
  }
  return true;
}

/* The description of system/name from the registry (cached; strings copied, so a library
 * unloaded later leaves nothing dangling). Under lock. NULL when unknown. */
static const struct fxtf_desc *desc_of(const struct fxt_event *ev)
{
  uint16_t sys = ev->category.index, nm = ev->name.index;
  for (uint32_t i = 0; i < fxt_live.ndescs; i++)
    if (fxt_live.descs[i].system_ref == sys && fxt_live.descs[i].name_ref == nm)
      return &fxt_live.descs[i].desc;
  char system[256], name[4096];
  snprintf(system, sizeof(system), "%.*s", ev->category.len, ev->category.data);
  snprintf(name, sizeof(name), "%.*s", ev->name.len, ev->name.data);
  struct fxt_tracepoint *tp = fxt_tracepoint_by_name(system, name);
  if (!tp || tp->kind != FXT_TP_TYPED)
    return NULL;
  if (!fxt_grow((void **)&fxt_live.descs, &fxt_live.descs_cap, (size_t)fxt_live.ndescs + 1,
                sizeof(*fxt_live.descs), 64))
    return NULL;
  struct desc_cache *d = &fxt_live.descs[fxt_live.ndescs];
  memset(d, 0, sizeof(*d));
  const char *fmt = tp->print_fmt ? tp->print_fmt : "";
  size_t need = strlen(fmt) + strlen(system) + strlen(name) + 3;
  for (uint32_t i = 0; i < tp->nfields; i++)
    need += strlen(tp->fields[i].name) + 1;
  char *s = d->storage = malloc(need);
  if (!s)
    return NULL;
#define KEEP(dst, src)                                                                       \
  do {                                                                                       \
    size_t n_ = strlen(src);                                                                 \
    memcpy(s, src, n_ + 1);                                                                  \
    (dst).data = s;                                                                          \
    (dst).len = (uint32_t)n_;                                                                \
    s += n_ + 1;                                                                             \
  } while (0)
  KEEP(d->desc.system, system);
  KEEP(d->desc.name, name);
  KEEP(d->desc.fmt, fmt);
  d->desc.kind = tp->kind;
  d->desc.id = tp->id;
  d->desc.nfields = tp->nfields;
  for (uint32_t i = 0; i < tp->nfields && i < FXT_MAX_FIELDS; i++) {
    KEEP(d->desc.fields[i].name, tp->fields[i].name);
    d->desc.fields[i].type = (uint8_t)tp->fields[i].type;
    d->desc.fields[i].bound = tp->fields[i].bound;
  }
#undef KEEP
  d->system_ref = sys;
  d->name_ref = nm;
  fxt_live.ndescs++;
  return &d->desc;
}

/* Formats the record at offset off (its index idx) of entry e into b, with lost_before events lost in front
 * of it shown as a LOST line: in the function_graph layout when fg (the reader's verif_pid
 * state), else as an event (a function_graph RETURN or MARK line: nothing). Under lock. */
static void format_record(struct fxt_tbuf *b, const struct entry *e, uint32_t off, uint32_t idx,
                          uint32_t cpu, uint64_t lost_before, struct fxt_fgraph_cpus *fg)
{
  static struct fxtf_event fe;
  static struct fxtf_thread th;
  uint32_t word = run_line(e, idx), kind = word & 0xf;
  if (!fg && (kind == LIVE_LINE_RETURN || kind == LIVE_LINE_MARK)) {
    if (lost_before)
      fxt_text_lost(b, cpu, lost_before, false);
    return;
  }
  memset(&fe, 0, sizeof(fe));
  memset(&th, 0, sizeof(th));
  if (!parse_event(run_at(e, off), rec_bytes(run_at(e, off)), &fe.ev))
    return;
  th.tid = th.pid = e->tid;
  th.comm.data = e->comm;
  th.comm.len = (uint32_t)strnlen(e->comm, 16);
  th.named = th.comm.len != 0;
  fe.thread = &th;
  fe.provider = &fxt_live_clock;
  fe.desc = desc_of(&fe.ev);
  fe.ns = live_ticks_to_ns(fe.ev.timestamp);
  fe.cpu = cpu;
  if (fg) {
    if (lost_before)
      fxt_text_lost(b, cpu, lost_before, false);
    fxt_live_fg_line(fg, b, e, word, &fe, cpu);
    return;
  }
  fe.lost_before = lost_before;
  fxt_text_event(b, &fe);
}

/* ---- reading ------------------------------------------------------------------------------ */

/* The CPU whose oldest unconsumed record is the oldest of all, or -1. Under lock. */
static int oldest_cpu(void)
{
  int best = -1;
  uint64_t best_ticks = 0;
  for (uint32_t i = 0; i < fxt_live.ncpus; i++) {
    struct entry *e = fxt_live_ring_oldest(&fxt_live.cpu[i]);
    if (!e)
      continue;
    uint64_t t = rec_ticks(run_at(e, e->taken));
    if (best < 0 || t < best_ticks) {
      best = (int)i;
      best_ticks = t;
    }
  }
  return best;
}

static const char trace_legend[] =
    "#\n"
    "#                                _-----=> irqs-off/BH-disabled\n"
    "#                               / _----=> need-resched\n"
    "#                              | / _---=> hardirq/softirq\n"
    "#                              || / _--=> preempt-depth\n"
    "#                              ||| / _-=> migrate-disable\n"
    "#                              |||| /     delay\n"
    "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
    "#              | |         |   |||||     |         |\n";

/* Under lock: ring k of the view, k < nrings(): the CPU rings, then the copies' (CPU k - ncpus),
 * when they are set up. */
static uint32_t nrings(void)
{
  return fxt_live.copy ? 2 * fxt_live.ncpus : fxt_live.ncpus;
}

static struct cpu_ring *ring_k(uint32_t k)
{
  return k < fxt_live.ncpus ? &fxt_live.cpu[k] : &fxt_live.copy[k - fxt_live.ncpus];
}

/* A reader of `trace` between two reads: a place per ring (its rings as they were at open),
 * kept by sequence numbers, not pointers, so that the lock is held only while a read formats
 * its lines: the consumer feeds the view in between (a snapshot formatted whole at open held
 * the lock for all of it while the consumer waited to feed the view and the threads' buffers
 * filled: a 16 MiB-per-CPU view read while a program fired 5 M events a second cost it
 * 0.73-2.06 M dropped events, 150-190 k after, docs/performance.md). Entries that
 * arrived after the open are not shown (the kernel pauses recording while `trace` is open
 * instead); entries that left before the reader reached them (evicted by newer ones) are
 * skipped, their records shown as a LOST line, those trace_pipe consumed are not. */
struct live_iter {
  uint64_t gen; /* fxt_live.gen at open: when it moves, what is left is gone */
  uint32_t nr;  /* rings at open: the CPUs', then the copies' */
  bool done;
  bool fgraph;                /* the function_graph layout (the tracer at open) */
  struct fxt_fgraph_cpus fg;  /* its verif_pid state */
  struct place {
    uint64_t seq;   /* entry: its number among those the ring ever held (popped + index) */
    size_t pos;     /* its offset in the ring's storage, while seq is still held */
    uint32_t off;   /* the next record in its run */
    uint64_t rec;   /* that record's number among those the ring ever held */
    uint64_t end;   /* entries numbered below this were there at open */
    uint64_t end_rec; /* and records numbered below this */
    uint64_t read;  /* the ring's trace_pipe count when the place was last moved */
    uint64_t lost;  /* records that left before the place reached them, not shown yet */
  } p[];
};

/* Under lock: the entry of place c, the next still held at or after it (the place moved
 * there, what it passed counted in c->lost), or NULL when the ring has nothing left for it. */
static struct entry *place_entry(struct cpu_ring *r, struct place *c)
{
  if (c->seq >= c->end || r->count == 0 || c->seq >= r->popped + r->count)
    return NULL;
  if (c->seq < r->popped) { /* its entry left the ring: go on from the oldest */
    struct entry *e = fxt_live_ring_oldest(r);
    uint64_t at = e->first_rec + fxt_live_count_taken(e);
    uint64_t upto = at < c->end_rec ? at : c->end_rec; /* (later ones are not shown) */
    uint64_t skipped = upto > c->rec ? upto - c->rec : 0, piped = r->read - c->read;
    c->lost += skipped > piped ? skipped - piped : 0;
    c->seq = r->popped;
    c->pos = (size_t)((unsigned char *)e - r->buf);
    c->off = e->taken;
    c->rec = at;
    c->read = r->read;
    return c->seq < c->end ? e : NULL;
  }
  struct entry *e = (struct entry *)(void *)(r->buf + c->pos);
  if (c->seq == r->popped && c->off < e->taken) { /* trace_pipe took the front of it */
    uint64_t n = 0;
    for (uint32_t o = c->off; o < e->taken; o += rec_bytes(run_at(e, o)))
      n++;
    c->off = e->taken;
    c->rec += n;
  }
  return e;
}

struct live_iter *live_iter_open(struct fxt_tbuf *b)
{
  live_init();
  pthread_mutex_lock(&fxt_live.lock);
  uint32_t nr = nrings();
  struct live_iter *it = calloc(1, sizeof(*it) + nr * sizeof(struct place));
  if (!it) {
    pthread_mutex_unlock(&fxt_live.lock);
    return NULL;
  }
  it->fgraph = fxt_live_fg_layout();
  if (it->fgraph) { /* the layout made of what the consumer pushed since the last read */
    fxt_live_fg_arrange(fxt_live.cpu);
    if (fxt_live.copy)
      fxt_live_fg_arrange(fxt_live.copy);
  } else {
    fxt_live.plain_iters++; /* (until live_iter_close) */
  }
  if (fxt_live.copy) /* the copies just filled: what their threads hold is shown too */
    fxt_live_fg_flush_all(fxt_live.copy);
  it->gen = fxt_live.gen;
  it->nr = nr;
  uint64_t entries = 0, overrun = 0;
  for (uint32_t k = 0; k < nr; k++) {
    struct cpu_ring *r = ring_k(k);
    struct entry *e = fxt_live_ring_oldest(r);
    struct place *c = &it->p[k];
    entries += r->events;
    overrun += r->overrun;
    c->seq = r->popped;
    c->end = r->popped + r->count;
    c->end_rec = r->pushed_records;
    c->pos = e ? (size_t)((unsigned char *)e - r->buf) : 0;
    c->off = e ? e->taken : 0;
    c->rec = e ? e->first_rec + fxt_live_count_taken(e) : r->pushed_records;
    c->read = r->read;
  }
  if (it->fgraph) { /* the kernel's function_graph `trace`: its own header only */
    it->fg.opts = live_fg_options();
    fxt_fgraph_header_opts(b, it->fg.opts);
    pthread_mutex_unlock(&fxt_live.lock);
    return it;
  }
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  char head[160];
  int n = snprintf(head, sizeof(head),
                   "# tracer: nop\n#\n# entries-in-buffer/entries-written: %llu/%llu   #P:%ld\n",
                   (unsigned long long)entries, (unsigned long long)(entries + overrun),
                   online > 0 ? online : 1);
  fxt_tbuf_put(b, head, (size_t)n);
  fxt_tbuf_puts(b, trace_legend);
  pthread_mutex_unlock(&fxt_live.lock);
  return it;
}

bool live_iter_next(struct live_iter *it, struct fxt_tbuf *b, size_t want)
{
  if (it->done)
    return false;
  pthread_mutex_lock(&fxt_live.lock);
  if (fxt_live.gen != it->gen)
    it->done = true; /* emptied or replaced since the open */
  while (!it->done && b->len < want) {
    /* The oldest record among the places (merged by time; nothing is consumed). */
    int best = -1;
    uint64_t best_ticks = 0;
    struct entry *best_e = NULL;
    for (uint32_t k = 0; k < it->nr; k++) {
      struct entry *e = place_entry(ring_k(k), &it->p[k]);
      if (!e && it->p[k].lost) { /* the ring's last records left before the reader came */
        fxt_text_lost(b, k % fxt_live.ncpus, it->p[k].lost, false);
        it->p[k].lost = 0;
      }
      if (!e)
        continue;
      uint64_t t = rec_ticks(run_at(e, it->p[k].off));
      if (best < 0 || t < best_ticks) {
        best = (int)k;
        best_ticks = t;
        best_e = e;
      }
    }
    if (best < 0) {
      it->done = true;
      break;
    }
    struct cpu_ring *r = ring_k((uint32_t)best);
    struct place *c = &it->p[best];
    /* The header counts the buffers' losses; a LOST line here is what left this ring while
     * the reader was on its way to it. */
    format_record(b, best_e, c->off, (uint32_t)(c->rec - best_e->first_rec),
                  (uint32_t)best % fxt_live.ncpus, c->lost, it->fgraph ? &it->fg : NULL);
    c->lost = 0;
    c->off += rec_bytes(run_at(best_e, c->off));
    c->rec++;
    c->read = r->read;
    if (c->off >= run_len(best_e)) { /* the next entry of this ring */
      c->seq++;
      c->pos = fxt_live_entry_at(r, c->pos + best_e->size);
      c->off = 0;
    }
  }
  pthread_mutex_unlock(&fxt_live.lock);
  return !it->done || b->len > 0;
}

void live_iter_close(struct live_iter *it)
{
  if (!it)
    return;
  if (!it->fgraph) {
    pthread_mutex_lock(&fxt_live.lock);
    fxt_live.plain_iters--;
    pthread_mutex_unlock(&fxt_live.lock);
  }
  fxt_fgraph_cpus_free(&it->fg);
  free(it);
}

size_t live_consume(struct fxt_tbuf *b, size_t want)
{
  live_init();
  size_t taken = 0, start = b->len;
  pthread_mutex_lock(&fxt_live.lock);
  struct fxt_fgraph_cpus *fg = fxt_live_fg_layout() ? &fxt_live.pipe_fg : NULL;
  if (fg) { /* the layout made of what the consumer pushed since the last read */
    fxt_live_fg_arrange(fxt_live.cpu);
    fg->opts = live_fg_options();
  }
  while (b->len < want) {
    int c = oldest_cpu();
    if (c < 0)
      break;
    struct cpu_ring *r = &fxt_live.cpu[c];
    struct entry *e = fxt_live_ring_oldest(r);
    uint64_t lost = e->taken == 0 ? e->lost_before : 0;
    lost += r->pipe_lost; /* runs evicted before this reader got them */
    size_t before = b->len;
    /* the line's CPU as verif_pid saw it before: the line may not be taken */
    uint32_t lcpu = e->lines_at ? run_line(e, e->taken_recs) >> 16 : (uint32_t)c;
    struct fxt_fgraph_cpu seen = {0};
    if (fg && lcpu < fg->cap)
      seen = fg->cpu[lcpu];
    format_record(b, e, e->taken, e->taken_recs, (uint32_t)c, lost, fg);
    if (b->len > want && taken > 0) { /* not whole: it waits for the next read, untaken */
      b->len = before;
      if (fg && lcpu < fg->cap)
        fg->cpu[lcpu] = seen;
      break;
    }
    r->pipe_lost = 0;
    e->taken += rec_bytes(run_at(e, e->taken));
    e->taken_recs++;
    r->events--;
    r->read++;
    taken++;
    if (e->taken >= run_len(e))
      fxt_live_ring_pop(r);
  }
  pthread_mutex_unlock(&fxt_live.lock);
  return b->len > start ? taken : 0; /* (lines the layout does not print: nothing to read) */
}

/* oldest_cpu() after the consumer's new entries were arranged when the layout is
 * function_graph's. Under lock. */
static int arranged_oldest(void)
{
  if (fxt_live_fg_layout())
    fxt_live_fg_arrange(fxt_live.cpu);
  return oldest_cpu();
}

bool live_wait(int timeout_ms)
{
  live_init();
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  if (timeout_ms > 0) {
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000;
    }
  }
  /* A reader that starts waiting wakes the consumer, which then polls every 10 ms while
   * it waits: the next events reach it within about that. */
  if (atomic_fetch_add_explicit(&fxt_live_waiters, 1, memory_order_relaxed) == 0 && timeout_ms != 0)
    fxt_consumer_wake(&fxt_session);
  pthread_mutex_lock(&fxt_live.lock);
  bool ready;
  /* In the function_graph layout, records that only open a tree are nothing to read yet */
  while (!(ready = arranged_oldest() >= 0) && fxt_live.on && timeout_ms != 0) {
    if (timeout_ms < 0)
      pthread_cond_wait(&fxt_live.cond, &fxt_live.lock);
    else if (pthread_cond_timedwait(&fxt_live.cond, &fxt_live.lock, &until) != 0)
      break;
  }
  ready = arranged_oldest() >= 0;
  pthread_mutex_unlock(&fxt_live.lock);
  atomic_fetch_sub_explicit(&fxt_live_waiters, 1, memory_order_relaxed);
  return ready;
}

bool live_has_waiters(void)
{
  return atomic_load_explicit(&fxt_live_waiters, memory_order_relaxed) != 0;
}

void live_cpu_stats(uint32_t cpu, struct live_cpu_stats *st)
{
  live_init();
  memset(st, 0, sizeof(*st));
  pthread_mutex_lock(&fxt_live.lock);
  uint64_t oldest = 0;
  /* its ring, its copy */
  for (uint32_t k = cpu; cpu < fxt_live.ncpus && k < nrings(); k += fxt_live.ncpus) {
    struct cpu_ring *r = ring_k(k);
    st->entries += r->events;
    st->overrun += r->overrun;
    st->bytes += r->payload;
    st->dropped += r->dropped;
    st->read += r->read;
    struct entry *e = fxt_live_ring_oldest(r);
    uint64_t t = e ? rec_ticks(run_at(e, e->taken)) : 0;
    if (e && (oldest == 0 || t < oldest))
      oldest = t;
  }
  st->oldest_ns = oldest ? live_ticks_to_ns(oldest) : 0;
  pthread_mutex_unlock(&fxt_live.lock);
}

uint64_t live_now_ns(void)
{
  return fxt_live_mono_now();
}
