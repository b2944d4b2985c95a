/* src/formats/tracedat_import.c - a trace.dat as an fxtrace FXT file (tracedat_import.h).
 *
 * One pass: the iterator (tracedat_read.c) hands every CPU's records merged by time; each is
 * encoded with the FXT encoders (include/fxtrace/fxt.h) into a 256 KiB buffer that goes to the
 * caller's write function when full. Strings, tracepoint descriptions and thread names are
 * written just before the first record that needs them. Memory: the reader's metadata, one
 * small entry per task and per event format, and the output buffer.
 *
 * This file: the string and thread tables, the event formats (strings, descriptions, sched_*
 * roles), one record, the conversion. The records of bookkeeping (the head, thread names, `cpu`
 * counters, losses, clock syncs) are in tracedat_import_meta.c; the state both share, and the
 * output buffer, in tracedat_import_int.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "tracedat_import.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fxtrace/fxt.h>
#include <fxtrace/meta.h>
#include <fxtrace/tracepoint.h>

#include "tracedat_import_int.h"

#define MAX_TEXT FXT_STR_MAX_BOUND /* bytes of a string value */
#define MAX_INTERN 1024u           /* longest interned string */
#define MAX_FMT 4000u              /* longest print format of a description */
#define MAX_CPUS 65536u            /* CPUs whose page losses are counted against CPUSTAT */

/* ---- maps ---------------------------------------------------------------------------------- */

/* Per event format: its strings and description, and what sched_* fields it has. */
enum role { ROLE_NONE, ROLE_SWITCH, ROLE_WAKEUP };
enum {
  F_PREV_PID,
  F_PREV_PRIO,
  F_PREV_STATE,
  F_PREV_COMM,
  F_NEXT_PID,
  F_NEXT_PRIO,
  F_NEXT_COMM,
  F_PID,
  F_PRIO,
  F_TARGET_CPU,
  F_COMM,
  F_ROLES
};
static const char *const k_role_field[F_ROLES] = {
    "prev_pid",  "prev_prio", "prev_state", "prev_comm",  "next_pid", "next_prio",
    "next_comm", "pid",       "prio",       "target_cpu", "comm"};

struct evstate {
  bool ready;
  uint32_t leader;  /* first format with the same system:name (itself when unique) */
  uint32_t sharing; /* on the leader: formats with its system:name */
  bool described;   /* on the leader: the name's description is written */
  struct fxt_str_ref cat, name;
  uint32_t nargs; /* own fields written: at most FXT_MAX_ARGS */
  struct fxt_str_ref argname[FXT_MAX_ARGS];
  uint8_t role;
  int32_t rf[F_ROLES]; /* field index, -1 when absent */
};

static uint32_t hash_bytes(const char *p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)p[i]) * 16777619u;
  return h;
}

/* The ref of a string: its table index (a string record is written the first time), or the
 * text inline once the table is full. */
int fxt_td_imp_intern(struct conv *c, const char *p, size_t n, struct fxt_str_ref *ref) {
  if (n == 0) {
    *ref = fxt_str_empty();
    return 0;
  }
  if (n > MAX_INTERN)
    n = MAX_INTERN;
  uint32_t i = hash_bytes(p, n) & c->str_mask;
  for (; c->strs[i].p != NULL; i = (i + 1) & c->str_mask)
    if (c->strs[i].len == n && memcmp(c->strs[i].p, p, n) == 0) {
      *ref = fxt_str_index(c->strs[i].index);
      return 0;
    }
  if (c->next_index > FXT_MAX_STRING_INDEX) {
    *ref = fxt_str_inline(p, (uint16_t)n);
    return 0;
  }
  struct fxt_string s = {c->next_index, (uint16_t)n, p};
  int rc = PUT(c, fxt_encode_string, &s);
  if (rc)
    return rc;
  c->strs[i] = (struct str_slot){p, (uint16_t)n, c->next_index};
  c->nstrs++;
  *ref = fxt_str_index(c->next_index++);
  return 0;
}

struct thr *fxt_td_imp_thread_slot(struct conv *c, int32_t tid) {
  uint64_t key = (uint64_t)(uint32_t)tid + 1;
  if ((c->nthr + 1) * 2 > c->thr_mask + 1) { /* keep the load under one half */
    uint32_t ncap = (c->thr_mask + 1) * 2;
    struct thr *t = calloc(ncap, sizeof *t);
    if (t == NULL)
      return NULL;
    for (uint32_t i = 0; i <= c->thr_mask; i++)
      if (c->thr[i].key != 0) {
        uint32_t j = (uint32_t)(c->thr[i].key * 0x9e3779b97f4a7c15u >> 32) & (ncap - 1);
        while (t[j].key != 0)
          j = (j + 1) & (ncap - 1);
        t[j] = c->thr[i];
      }
    free(c->thr);
    c->thr = t;
    c->thr_mask = ncap - 1;
  }
  uint32_t j = (uint32_t)(key * 0x9e3779b97f4a7c15u >> 32) & c->thr_mask;
  while (c->thr[j].key != 0 && c->thr[j].key != key)
    j = (j + 1) & c->thr_mask;
  if (c->thr[j].key == 0) {
    c->thr[j].key = key;
    c->thr[j].cpu = UINT32_MAX;
    c->nthr++;
  }
  return &c->thr[j];
}

/* ---- event formats --------------------------------------------------------------------------- */

/* The fxtrace field type of a trace.dat field, and its bound. */
static uint8_t field_type(const struct fxt_td_field *f, uint32_t *bound) {
  static const uint8_t k_int[2][4] = {{FXT_TYPE_U8, FXT_TYPE_U16, FXT_TYPE_U32, FXT_TYPE_U64},
                                      {FXT_TYPE_S8, FXT_TYPE_S16, FXT_TYPE_S32, FXT_TYPE_S64}};
  *bound = 0;
  switch (f->kind) {
  case FXT_TD_FIELD_INT:
    return k_int[f->is_signed][f->size == 1 ? 0 : f->size == 2 ? 1 : f->size == 4 ? 2 : 3];
  case FXT_TD_FIELD_PTR:
    return FXT_TYPE_PTR;
  case FXT_TD_FIELD_FLOAT:
    return FXT_TYPE_DOUBLE;
  case FXT_TD_FIELD_STR:
  case FXT_TD_FIELD_DSTR:
    *bound = f->kind == FXT_TD_FIELD_STR && f->size && f->size < MAX_TEXT ? f->size : MAX_TEXT;
    return FXT_TYPE_STR;
  default:
    *bound = f->kind == FXT_TD_FIELD_BYTES && f->size && f->size < MAX_HEX_BYTES ? f->size
                                                                                 : MAX_HEX_BYTES;
    return FXT_TYPE_BYTES;
  }
}

static const char *conversion(uint8_t type) {
  switch (type) {
  case FXT_TYPE_U8:
  case FXT_TYPE_U16:
  case FXT_TYPE_U32:
    return "%u";
  case FXT_TYPE_S8:
  case FXT_TYPE_S16:
  case FXT_TYPE_S32:
    return "%d";
  case FXT_TYPE_U64:
    return "%llu";
  case FXT_TYPE_S64:
    return "%lld";
  case FXT_TYPE_PTR:
    return "%p";
  case FXT_TYPE_DOUBLE:
    return "%g";
  default:
    return "%s";
  }
}

static void put16(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}
static void put32(unsigned char *p, uint32_t v) {
  put16(p, v);
  put16(p + 2, v >> 16);
}

/* The fxtrace:tracepoint blob of an event (docs/fxt-conventions.md): only when every string
 * it names is in the table. Kind typed, with the fields; or, for a system:event that several
 * formats share (fxtrace's own trace.dat writer makes one per ad-hoc variant of a name; the
 * kernel never does), one untyped description of the name with no fields, whose events are
 * shown as name=value pairs. */
static int describe(struct conv *c, const struct fxt_td_event *ev, struct evstate *s,
                    uint16_t kind) {
  unsigned char blob[16 + MAX_FMT + FXT_MAX_ARGS * 8];
  uint32_t fmt_len = 0;
  bool indexed = s->cat.index != FXT_STR_REF_INLINE && s->name.index != FXT_STR_REF_INLINE;
  unsigned char *fields = blob + 16 + MAX_FMT; /* moved behind the format at the end */
  uint32_t nfields = kind == FXT_TP_TYPED ? s->nargs : 0;
  for (uint32_t i = 0; i < nfields; i++) {
    const struct fxt_td_field *f = &ev->fields[ev->ncommon + i];
    uint32_t bound;
    uint8_t type = field_type(f, &bound);
    const char *conv = conversion(type);
    size_t need = f->name.len + 1 + strlen(conv) + (i > 0);
    if (fmt_len + need <= MAX_FMT) {
      char *p = (char *)blob + 16 + fmt_len;
      if (i > 0)
        *p++ = ' ';
      memcpy(p, f->name.data, f->name.len);
      p[f->name.len] = '=';
      memcpy(p + f->name.len + 1, conv, strlen(conv));
      fmt_len += (uint32_t)need;
    }
    indexed = indexed && s->argname[i].index != FXT_STR_REF_INLINE && s->argname[i].index != 0;
    put16(fields + 8 * i, s->argname[i].index);
    fields[8 * i + 2] = type;
    fields[8 * i + 3] = 0;
    put32(fields + 8 * i + 4, bound);
  }
  if (!indexed)
    return 0;
  memmove(blob + 16 + fmt_len, fields, 8u * nfields);
  put32(blob, ev->id);
  put16(blob + 4, s->cat.index);
  put16(blob + 6, s->name.index);
  put16(blob + 8, kind);
  put16(blob + 10, nfields);
  put16(blob + 12, fmt_len);
  put16(blob + 14, 0);
  struct fxt_blob b = {fxt_str_index(FXT_STR_TRACEPOINT), FXT_BLOB_DATA,
                       (uint16_t)(16 + fmt_len + 8u * nfields), blob};
  return PUT(c, fxt_encode_blob, &b);
}

static int32_t field_index(const struct fxt_td_event *ev, const char *name) {
  for (uint32_t i = ev->ncommon; i < ev->nfields; i++)
    if (text_is(ev->fields[i].name, name))
      return (int32_t)i;
  return -1;
}

/* Strings, description and sched_* roles of an event, the first time it is seen. */
static int prepare(struct conv *c, const struct fxt_td_event *ev, struct evstate *s) {
  s->ready = true;
  uint32_t own = ev->nfields - ev->ncommon;
  s->nargs = own > FXT_MAX_ARGS ? FXT_MAX_ARGS : own;
  c->st->cut_fields += own > FXT_MAX_ARGS;
  int rc = fxt_td_imp_intern(c, ev->system.data, ev->system.len, &s->cat);
  if (rc == 0)
    rc = fxt_td_imp_intern(c, ev->name.data, ev->name.len, &s->name);
  for (uint32_t i = 0; rc == 0 && i < s->nargs; i++) {
    const struct fxt_td_field *f = &ev->fields[ev->ncommon + i];
    rc = fxt_td_imp_intern(c, f->name.data, f->name.len, &s->argname[i]);
  }
  struct evstate *lead = &c->ev[s->leader];
  if (rc == 0 && lead->sharing <= 1)
    rc = describe(c, ev, s, FXT_TP_TYPED);
  else if (rc == 0 && !lead->described)
    rc = describe(c, ev, s, FXT_TP_INSTANT);
  lead->described = true;
  for (int i = 0; i < F_ROLES; i++)
    s->rf[i] = field_index(ev, k_role_field[i]);
  if (text_is(ev->system, "sched")) {
    if (text_is(ev->name, "sched_switch") && s->rf[F_PREV_PID] >= 0 && s->rf[F_NEXT_PID] >= 0)
      s->role = ROLE_SWITCH;
    else if ((text_is(ev->name, "sched_wakeup") || text_is(ev->name, "sched_wakeup_new") ||
              text_is(ev->name, "sched_waking")) &&
             s->rf[F_PID] >= 0)
      s->role = ROLE_WAKEUP;
  }
  return rc;
}

/* ---- one record ------------------------------------------------------------------------------ */

static const char k_hexdigits[] = "0123456789abcdef";

static int field(struct conv *c, const struct fxt_td_field *f, const struct fxt_td_item *it,
                 uint64_t *u, const unsigned char **b, uint32_t *n) {
  return fxt_td_field_value(f, it->rec.data, it->rec.len, c->f->lay.big_endian, it->rec.offset, u,
                            b, n, c->err, c->err_size);
}

static int make_arg(struct conv *c, const struct fxt_td_field *f, const struct fxt_td_item *it,
                    uint32_t slot, struct fxt_arg *a) {
  uint64_t u;
  const unsigned char *b;
  uint32_t n;
  int rc = field(c, f, it, &u, &b, &n);
  if (rc)
    return rc;
  switch (f->kind) {
  case FXT_TD_FIELD_INT:
    if (f->size == 8)
      a->type = f->is_signed ? FXT_ARG_INT64 : FXT_ARG_UINT64;
    else
      a->type = f->is_signed ? FXT_ARG_INT32 : FXT_ARG_UINT32;
    if (f->size == 8)
      a->value.u64 = u;
    else
      a->value.u32 = (uint32_t)u;
    return 0;
  case FXT_TD_FIELD_PTR:
    a->type = FXT_ARG_POINTER;
    a->value.pointer = u;
    return 0;
  case FXT_TD_FIELD_FLOAT:
    a->type = FXT_ARG_DOUBLE;
    if (f->size == 8) {
      memcpy(&a->value.f64, &u, sizeof a->value.f64);
    } else {
      uint32_t bits = (uint32_t)u;
      float x;
      memcpy(&x, &bits, sizeof x);
      a->value.f64 = x;
    }
    return 0;
  case FXT_TD_FIELD_STR:
  case FXT_TD_FIELD_DSTR:
    a->type = FXT_ARG_STRING;
    n = n > MAX_TEXT ? MAX_TEXT : n;
    a->value.str = n ? fxt_str_inline((const char *)b, (uint16_t)n) : fxt_str_empty();
    return 0;
  default:
    a->type = FXT_ARG_STRING;
    n = n > MAX_HEX_BYTES ? MAX_HEX_BYTES : n;
    for (uint32_t i = 0; i < n; i++) {
      c->hex[slot][2 * i] = k_hexdigits[b[i] >> 4];
      c->hex[slot][2 * i + 1] = k_hexdigits[b[i] & 15];
    }
    a->value.str = n ? fxt_str_inline(c->hex[slot], (uint16_t)(2 * n)) : fxt_str_empty();
    return 0;
  }
}

/* An integer role field (0 when absent or not an integer). */
static int64_t role_int(struct conv *c, const struct fxt_td_event *ev, const struct evstate *s,
                        int role, const struct fxt_td_item *it, int *rc) {
  if (s->rf[role] < 0 || ev->fields[s->rf[role]].kind != FXT_TD_FIELD_INT || *rc)
    return 0;
  uint64_t u = 0;
  const unsigned char *b;
  uint32_t n;
  *rc = field(c, &ev->fields[s->rf[role]], it, &u, &b, &n);
  return (int64_t)u;
}

static int role_comm(struct conv *c, const struct fxt_td_event *ev, const struct evstate *s,
                     int role, const struct fxt_td_item *it, int32_t tid) {
  uint64_t u;
  const unsigned char *b = NULL;
  uint32_t n = 0;
  if (s->rf[role] < 0 || ev->fields[s->rf[role]].kind != FXT_TD_FIELD_STR)
    return fxt_td_imp_name_thread(c, tid, NULL, 0);
  int rc = field(c, &ev->fields[s->rf[role]], it, &u, &b, &n);
  return rc ? rc : fxt_td_imp_name_thread(c, tid, b, n);
}

/* Linux task state bits (TASK_REPORT, stable since 4.14: S 0x1, D 0x2, T 0x4, t 0x8, X 0x10,
 * Z 0x20, P 0x40, I 0x80; none or only a higher bit: preempted, runnable) as a Zircon state.
 * Runnable becomes "new", as Fuchsia's own ktrace importer maps a ready thread; Perfetto shows
 * new and running as R, blocked as S, suspended as T, dying as Z, dead as X. */
static uint8_t outgoing_state(uint64_t state) {
  uint64_t r = state & 0xffu;
  if (r & 0x10u)
    return FXT_THREAD_STATE_DEAD;
  if (r & 0x20u)
    return FXT_THREAD_STATE_DYING;
  if (r & 0x0cu)
    return FXT_THREAD_STATE_SUSPENDED;
  if (r & 0xc3u)
    return FXT_THREAD_STATE_BLOCKED;
  return FXT_THREAD_STATE_NEW;
}

static int32_t weight(int32_t tid, int64_t prio) { return tid == 0 ? INT32_MIN : (int32_t)prio; }

static struct fxt_arg arg_i32(struct fxt_str_ref name, int32_t v) {
  struct fxt_arg a;
  memset(&a, 0, sizeof a);
  a.type = FXT_ARG_INT32;
  a.name = name;
  a.value.i32 = v;
  return a;
}

static int sched_record(struct conv *c, const struct fxt_td_event *ev, const struct evstate *s,
                        const struct fxt_td_item *it) {
  int rc = 0;
  uint16_t cpu = it->cpu > UINT16_MAX ? UINT16_MAX : (uint16_t)it->cpu;
  if (s->role == ROLE_SWITCH) {
    int32_t prev = (int32_t)role_int(c, ev, s, F_PREV_PID, it, &rc);
    int32_t next = (int32_t)role_int(c, ev, s, F_NEXT_PID, it, &rc);
    int64_t pprio = role_int(c, ev, s, F_PREV_PRIO, it, &rc);
    int64_t nprio = role_int(c, ev, s, F_NEXT_PRIO, it, &rc);
    uint64_t state = (uint64_t)role_int(c, ev, s, F_PREV_STATE, it, &rc);
    if (rc == 0)
      rc = role_comm(c, ev, s, F_PREV_COMM, it, prev);
    if (rc == 0)
      rc = role_comm(c, ev, s, F_NEXT_COMM, it, next);
    if (rc)
      return rc;
    struct fxt_context_switch *cs = &c->rec.u.context_switch;
    memset(cs, 0, sizeof *cs);
    cs->timestamp = it->rec.ts;
    cs->cpu = cpu;
    cs->outgoing_state = outgoing_state(state);
    cs->outgoing_tid = (uint32_t)prev;
    cs->incoming_tid = (uint32_t)next;
    cs->args[0] = arg_i32(c->s_outw, weight(prev, pprio));
    cs->args[1] = arg_i32(c->s_inw, weight(next, nprio));
    cs->num_args = 2;
    c->st->switches++;
    return PUT(c, fxt_encode_context_switch, cs);
  }
  int32_t pid = (int32_t)role_int(c, ev, s, F_PID, it, &rc);
  int64_t prio = role_int(c, ev, s, F_PRIO, it, &rc);
  int64_t target =
      s->rf[F_TARGET_CPU] >= 0 ? role_int(c, ev, s, F_TARGET_CPU, it, &rc) : (int64_t)it->cpu;
  if (rc == 0)
    rc = role_comm(c, ev, s, F_COMM, it, pid);
  if (rc)
    return rc;
  struct fxt_wakeup *w = &c->rec.u.wakeup;
  memset(w, 0, sizeof *w);
  w->timestamp = it->rec.ts;
  w->cpu = target < 0 || target > UINT16_MAX ? cpu : (uint16_t)target;
  w->waking_tid = (uint32_t)pid;
  w->args[0] = arg_i32(c->s_weight, weight(pid, prio));
  w->num_args = 1;
  c->st->wakeups++;
  return PUT(c, fxt_encode_wakeup, w);
}

static int record(struct conv *c, const struct fxt_td_item *it) {
  const struct fxt_td_event *ev = it->event;
  struct evstate *s = &c->ev[ev - c->f->events];
  int rc = s->ready ? 0 : prepare(c, ev, s);
  if (rc == 0 && s->role != ROLE_NONE)
    rc = sched_record(c, ev, s, it);
  if (rc == 0)
    rc = fxt_td_imp_name_thread(c, it->pid, NULL, 0);
  if (rc == 0)
    rc = fxt_td_imp_task_cpu(c, it->pid, it->cpu, it->rec.ts);
  if (rc)
    return rc;
  struct fxt_event *e = &c->rec.u.event;
  memset(e, 0, sizeof *e);
  e->type = FXT_EVENT_INSTANT;
  e->timestamp = it->rec.ts;
  e->thread = task(it->pid);
  e->category = s->cat;
  e->name = s->name;
  e->num_args = s->nargs;
  for (uint32_t i = 0; rc == 0 && i < s->nargs; i++) {
    e->args[i].name = s->argname[i];
    rc = make_arg(c, &ev->fields[ev->ncommon + i], it, i, &e->args[i]);
  }
  c->st->events++;
  return rc ? rc : PUT(c, fxt_encode_event, e);
}

static int missed(struct conv *c, const struct fxt_td_item *it) {
  c->st->lost_pages++;
  if (it->missed_known)
    c->st->lost_known += it->missed_count;
  else
    c->st->lost_unknown++;
  if (it->buffer == 0 && it->missed_known && it->cpu < c->npage_lost)
    c->page_lost[it->cpu] += it->missed_count;
  return fxt_td_imp_lost(c, it->cpu, it->rec.ts, it->missed_known ? it->missed_count : 0,
                         !it->missed_known);
}

/* Losses the CPUSTAT options count beyond what the pages said. */
static int cpustat_losses(struct conv *c) {
  int rc = 0;
  for (uint32_t i = 0; rc == 0 && i < c->f->ncpustats; i++) {
    const struct fxt_td_cpustat *s = &c->f->cpustats[i];
    uint64_t total = 0, v[3] = {s->overrun, s->commit_overrun, s->dropped};
    for (int k = 0; k < 3; k++)
      total += v[k] == UINT64_MAX ? 0 : v[k];
    uint64_t seen = s->cpu < c->npage_lost ? c->page_lost[s->cpu] : 0;
    if (total > seen) {
      c->st->lost_cpustat += total - seen;
      rc = fxt_td_imp_lost(c, s->cpu, c->last_ts, total - seen, false);
    }
  }
  return rc;
}

/* ---- the conversion -------------------------------------------------------------------------- */

/* Groups the formats by system:name (ev[i].leader, and on leaders .sharing); 0 or
 * FXT_ENOMEM. */
static int group_names(struct conv *c) {
  uint32_t n = c->f->nevents, mask = 1;
  while (mask < 2 * n)
    mask <<= 1;
  uint32_t *slot = malloc((size_t)mask * sizeof *slot); /* format index + 1; 0 free */
  if (slot == NULL)
    return nomem(c);
  memset(slot, 0, (size_t)mask * sizeof *slot);
  mask--;
  for (uint32_t i = 0; i < n; i++) {
    const struct fxt_td_event *ev = &c->f->events[i];
    uint32_t h = (hash_bytes(ev->system.data, ev->system.len) * 31u) ^
                 hash_bytes(ev->name.data, ev->name.len);
    uint32_t j = h & mask;
    for (; slot[j] != 0; j = (j + 1) & mask) {
      const struct fxt_td_event *o = &c->f->events[slot[j] - 1];
      if (o->system.len == ev->system.len && o->name.len == ev->name.len &&
          memcmp(o->system.data, ev->system.data, ev->system.len) == 0 &&
          memcmp(o->name.data, ev->name.data, ev->name.len) == 0)
        break;
    }
    if (slot[j] == 0)
      slot[j] = i + 1;
    c->ev[i].leader = slot[j] - 1;
    c->ev[slot[j] - 1].sharing++;
  }
  free(slot);
  return 0;
}

static int run(struct conv *c, struct fxt_td_iter *it) {
  uint64_t first = 0;
  fxt_td_iter_peek_ts(it, &first);
  c->last_ts = first;
  int rc = fxt_td_imp_head(c, first);
  for (uint32_t i = 0; rc == 0 && i < c->f->ncmdlines; i++) { /* names known in advance */
    const struct fxt_td_cmdline *cl = &c->f->cmdlines[i];
    struct thr *t = fxt_td_imp_thread_slot(c, cl->pid);
    if (t == NULL)
      return nomem(c);
    t->name_len = (uint8_t)(cl->comm.len > COMM_MAX ? COMM_MAX : cl->comm.len);
    memcpy(t->name, cl->comm.data, t->name_len);
  }
  struct fxt_td_item item;
  while (rc == 0 && (rc = fxt_td_iter_next(it, &item, c->err, c->err_size)) == 1) {
    if (item.rec.ts > c->last_ts)
      c->last_ts = item.rec.ts;
    if (item.kind == FXT_TD_ITEM_MISSED) {
      rc = missed(c, &item);
      continue;
    }
    c->st->records++;
    if (item.event == NULL) {
      c->st->unknown++;
      rc = 0;
      continue;
    }
    rc = record(c, &item);
  }
  if (rc == 0)
    rc = cpustat_losses(c);
  if (rc == 0 && text_is(c->f->clock, "mono"))
    rc = fxt_td_imp_clock_sync(c, c->last_ts);
  if (rc == 0)
    rc = out_flush(&c->o);
  c->st->first_ts = first;
  c->st->last_ts = c->last_ts;
  return rc;
}

int fxt_td_to_fxt(const void *buf, size_t len, fxt_td_write_fn write, void *write_ctx,
                  struct fxt_td_fxt_stats *st, char *err, size_t err_size) {
  struct fxt_td_fxt_stats local;
  st = st ? st : &local;
  memset(st, 0, sizeof *st);
  if (write == NULL)
    return FXT_EINVAL;
  struct fxt_td_file *f = NULL;
  int rc = fxt_td_open(buf, len, &f, err, err_size);
  if (rc)
    return rc;
  st->version = f->version;
  st->cpus = f->cpus;
  snprintf(st->clock, sizeof st->clock, "%.*s", (int)f->clock.len, f->clock.data);
  for (uint32_t b = 0; b < f->nbuffers; b++)
    for (uint32_t i = 0; i < f->buffers[b].ncpus; i++)
      st->bytes_in += f->buffers[b].cpus[i].size;
  struct conv *c = calloc(1, sizeof *c);
  struct fxt_td_iter *it = NULL;
  if (c != NULL) {
    c->f = f;
    c->st = st;
    c->err = err;
    c->err_size = err_size;
    c->o = (struct out){malloc(OUT_CAP), 0, write, write_ctx, 0, 0};
    c->str_mask = 2 * (FXT_MAX_STRING_INDEX + 1) - 1; /* load <= 1/2 */
    c->strs = calloc(c->str_mask + 1, sizeof *c->strs);
    c->thr_mask = 1023;
    c->thr = calloc(c->thr_mask + 1, sizeof *c->thr);
    c->ev = calloc(f->nevents + 1, sizeof *c->ev);
    c->npage_lost = f->cpus > MAX_CPUS ? MAX_CPUS : f->cpus;
    c->page_lost = calloc(c->npage_lost + 1, sizeof *c->page_lost);
  }
  if (c == NULL || !c->o.buf || !c->strs || !c->thr || !c->ev || !c->page_lost)
    rc = fxt_fail_at(err, err_size, FXT_ENOMEM, 0, "out of memory");
  else if ((rc = group_names(c)) == 0 && (rc = fxt_td_iter_new(f, &it, err, err_size)) == 0)
    rc = run(c, it);
  if (c != NULL) {
    st->bytes_out = c->o.total;
    free(c->o.buf);
    free(c->strs);
    free(c->thr);
    free(c->ev);
    free(c->page_lost);
    free(c);
  }
  fxt_td_iter_free(it);
  fxt_td_close(f);
  return rc;
}
