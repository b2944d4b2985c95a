/* src/formats/tracedat_import_meta.c - the trace.dat import's records of bookkeeping
 * (tracedat_import.h, tracedat_import_int.h): the head of the file (magic, provider,
 * initialization, fxtrace's fixed strings, the process name, the clock), a task's name
 * (kernel-object record) and CPU (`cpu` counter), losses (`lost` instants) and `clock_sync`
 * instants. The conversion (tracedat_import.c) writes each just before the record that needs it.
 */
#include "tracedat_import_int.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <fxtrace/fxt.h>
#include <fxtrace/meta.h>

#define PROVIDER_ID 0u
#define PROVIDER_NAME "fxtrace/1"
#define MAX_LOST_RECORDS 4u /* lost records for one count: 4 x UINT32_MAX events */
#define NS_PER_S UINT64_C(1000000000)

static struct fxt_arg arg_u32(uint16_t name_index, uint32_t v) {
  struct fxt_arg a;
  memset(&a, 0, sizeof a);
  a.type = FXT_ARG_UINT32;
  a.name = fxt_str_index(name_index);
  a.value.u32 = v;
  return a;
}

static struct fxt_event *meta_event(struct conv *c, uint32_t type, uint16_t name, uint64_t ts,
                                    int32_t tid) {
  struct fxt_event *e = &c->rec.u.event;
  memset(e, 0, sizeof *e);
  e->type = type;
  e->timestamp = ts;
  e->thread = task(tid);
  e->category = fxt_str_index(FXT_STR_KERNEL_META);
  e->name = fxt_str_index(name);
  return e;
}

/* A kernel-object record naming task tid (again when its name changed). comm: the name a
 * record carries for it, or NULL to name it once from what is known (saved cmdlines). */
int fxt_td_imp_name_thread(struct conv *c, int32_t tid, const unsigned char *comm, uint32_t n) {
  struct thr *t = fxt_td_imp_thread_slot(c, tid);
  if (t == NULL)
    return nomem(c);
  if (comm != NULL) {
    n = n > COMM_MAX ? COMM_MAX : n;
    if (t->emitted && t->name_len == n && memcmp(t->name, comm, n) == 0)
      return 0;
    memcpy(t->name, comm, n);
    t->name_len = (uint8_t)n;
  } else if (t->emitted) {
    return 0;
  }
  if (!t->emitted)
    c->st->threads++;
  t->emitted = true;
  struct fxt_kernel_object *k = &c->rec.u.kernel_object;
  memset(k, 0, sizeof *k);
  k->koid = (uint32_t)tid;
  k->obj_type = FXT_KOBJ_THREAD;
  k->name = t->name_len ? fxt_str_inline(t->name, t->name_len) : fxt_str_empty();
  k->num_args = 1;
  k->args[0].type = FXT_ARG_KOID;
  k->args[0].name = fxt_str_index(FXT_STR_PROCESS);
  k->args[0].value.koid = (uint32_t)tid;
  return PUT(c, fxt_encode_kernel_object, k);
}

/* A `cpu` counter before a task's record on another CPU than its last. */
int fxt_td_imp_task_cpu(struct conv *c, int32_t tid, uint32_t cpu, uint64_t ts) {
  struct thr *t = fxt_td_imp_thread_slot(c, tid);
  if (t == NULL)
    return nomem(c);
  if (t->cpu == cpu)
    return 0;
  t->cpu = cpu;
  struct fxt_event *e = meta_event(c, FXT_EVENT_COUNTER, FXT_STR_CPU, ts, tid);
  e->num_args = 1;
  e->args[0] = arg_u32(FXT_STR_CPU, cpu);
  return PUT(c, fxt_encode_event, e);
}

/* A `lost` instant of thread 0/0 on cpu: n events (count_unknown: the page did not say). A
 * count over UINT32_MAX continues in further records, MAX_LOST_RECORDS at most: a larger
 * count (a hostile page) is cut there. */
int fxt_td_imp_lost(struct conv *c, uint32_t cpu, uint64_t ts, uint64_t n, bool count_unknown) {
  int rc = fxt_td_imp_task_cpu(c, 0, cpu, ts);
  if (n > MAX_LOST_RECORDS * (uint64_t)UINT32_MAX)
    n = MAX_LOST_RECORDS * (uint64_t)UINT32_MAX;
  do {
    uint32_t part = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
    struct fxt_event *e = meta_event(c, FXT_EVENT_INSTANT, FXT_STR_LOST, ts, 0);
    e->args[0] = arg_u32(FXT_STR_NUM_RECORDS, part);
    e->args[1] = arg_u32(FXT_STR_NUM_BYTES, 0);
    e->args[2] = arg_u32(FXT_STR_CPU, cpu);
    e->num_args = 3;
    if (count_unknown) {
      e->args[3].type = FXT_ARG_BOOL;
      e->args[3].name = c->s_unknown;
      e->args[3].value.b = true;
      e->num_args = 4;
    }
    if (rc == 0)
      rc = PUT(c, fxt_encode_event, e);
    n -= part;
  } while (rc == 0 && n > 0);
  return rc;
}

int fxt_td_imp_clock_sync(struct conv *c, uint64_t ts) {
  struct fxt_event *e = meta_event(c, FXT_EVENT_INSTANT, FXT_STR_CLOCK_SYNC, ts, 0);
  e->thread = fxt_thread_inline(PROVIDER_ID, 0);
  uint16_t names[3] = {FXT_STR_TICKS, FXT_STR_MONOTONIC_NS, FXT_STR_REALTIME_NS};
  uint64_t rt = c->f->has_date ? ts + (uint64_t)c->f->date_offset_ns : 0;
  uint64_t values[3] = {ts, ts, rt};
  for (int i = 0; i < 3; i++) {
    e->args[i].type = FXT_ARG_UINT64;
    e->args[i].name = fxt_str_index(names[i]);
    e->args[i].value.u64 = values[i];
  }
  e->num_args = 3;
  return PUT(c, fxt_encode_event, e);
}

static uint64_t ticks_per_second(const struct fxt_td_file *f) {
  if (text_is(f->clock, "uptime")) /* jiffies as clock_t: USER_HZ */
    return 100;
  if (text_is(f->clock, "x86-tsc") && f->has_tsc2nsec) {
    long double tps = 1e9L * (long double)(UINT64_C(1) << f->tsc_shift) / f->tsc_mult;
    return tps >= 1.0L && tps < 1e18L ? (uint64_t)(tps + 0.5L) : NS_PER_S;
  }
  return NS_PER_S;
}

/* Magic, provider, initialization, fxtrace's fixed strings, the process name, the clock. */
int fxt_td_imp_head(struct conv *c, uint64_t first_ts) {
  int rc = put(c, fxt_encode_magic(room(&c->o), FXT_MAX_RECORD_BYTES));
  struct fxt_provider_info pi = {PROVIDER_ID, (uint8_t)strlen(PROVIDER_NAME), PROVIDER_NAME};
  struct fxt_init init = {ticks_per_second(c->f)};
  if (rc == 0)
    rc = PUT(c, fxt_encode_provider_info, &pi);
  if (rc == 0)
    rc = PUT(c, fxt_encode_init, &init);
  for (uint16_t i = 1; rc == 0 && i <= FXT_META_STRING_LAST; i++) {
    const char *text = fxt_meta_string(i);
    struct fxt_str_ref ref;
    c->next_index = i; /* the fixed indices, in order */
    if (text != NULL)
      rc = intern_z(c, text, &ref);
  }
  c->next_index = FXT_META_STRING_LAST + 1;
  const char *names[] = {"outgoing_weight", "incoming_weight", "weight",
                         "trace_clock",     "clock",           "date_offset_ns",
                         "ts_offset_ns",    "count_unknown",   "kernel"};
  struct fxt_str_ref *refs[] = {&c->s_outw,        &c->s_inw,     &c->s_weight,
                                &c->s_trace_clock, &c->s_clock,   &c->s_date,
                                &c->s_tsoff,       &c->s_unknown, &c->s_kernel};
  for (size_t i = 0; rc == 0 && i < sizeof names / sizeof names[0]; i++)
    rc = intern_z(c, names[i], refs[i]);
  if (rc)
    return rc;
  struct fxt_kernel_object *k = &c->rec.u.kernel_object;
  memset(k, 0, sizeof *k);
  k->koid = PROVIDER_ID;
  k->obj_type = FXT_KOBJ_PROCESS;
  k->name = c->s_kernel;
  if ((rc = PUT(c, fxt_encode_kernel_object, k)) != 0)
    return rc;
  struct fxt_event *e = meta_event(c, FXT_EVENT_INSTANT, 0, first_ts, 0);
  e->name = c->s_trace_clock;
  e->args[0].type = FXT_ARG_STRING;
  e->args[0].name = c->s_clock;
  e->args[0].value.str =
      fxt_str_inline(c->f->clock.data, (uint16_t)(c->f->clock.len > 64 ? 64 : c->f->clock.len));
  e->num_args = 1;
  if (c->f->has_date) {
    e->args[e->num_args].type = FXT_ARG_INT64;
    e->args[e->num_args].name = c->s_date;
    e->args[e->num_args++].value.i64 = c->f->date_offset_ns;
  }
  if (c->f->has_offset) {
    e->args[e->num_args].type = FXT_ARG_INT64;
    e->args[e->num_args].name = c->s_tsoff;
    e->args[e->num_args++].value.i64 = c->f->ts_offset_ns;
  }
  rc = PUT(c, fxt_encode_event, e);
  if (rc == 0 && text_is(c->f->clock, "mono"))
    rc = fxt_td_imp_clock_sync(c, first_ts);
  return rc;
}
