/* src/formats/json_order.c - the JSON exporter's events in time order, in bounded memory
 * (json_int.h, struct fxt_jorder), over the trace.dat writer's external sort.
 *
 * Two sorts. `events` holds every JSON event but flows, keyed by its time ("ts"): the output
 * in time order. `binds` holds the slices (complete events, begin/end pairs) and the flows,
 * keyed by time, slices first at equal times: read in that order with a stack of open slices
 * per thread, each flow finds the innermost slice of its thread that encloses it, and goes
 * into `events` at that slice's start (DevTools binds a flow event only to a slice that
 * starts at its "ts"; Perfetto and chrome://tracing to the enclosing slice, which this keeps).
 *
 * A record's payload is at most FXT_TD_SORT_MAX_PAYLOAD bytes: longer text goes in chunks of
 * consecutive seq (nothing sorts between them: same time, and no other record has a seq in
 * between), the first chunk's key saying the whole length (key.lost) and carrying
 * JORD_FIRST, so the text is joined again when read.
 */
#include "json_int.h"
#include "../base/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JORD_FIRST 0x100u  /* the first chunk of a record's text */
#define JORD_FLOW 0x200u   /* binds: a flow (else a slice) */
#define FLOW_SEQ (UINT64_C(1) << 63) /* binds: flows after the slices of their time */
#define JORD_RUN (4u << 20) /* default run of events; binds (slices, flows) get a quarter */

/* A slice in binds: its thread and end (its start is the key's time). */
struct jslice {
  uint64_t pid, tid, end;
};

static int sort_fail(struct fxt_jorder *o, struct fxt_td_sort *s, int rc) {
  snprintf(o->err, sizeof o->err, "%s", s->err[0] ? s->err : "sorting the events failed");
  return rc;
}

int fxt_jorder_init(struct fxt_jorder *o, const char *tmpdir, size_t run_bytes) {
  memset(o, 0, sizeof *o);
  run_bytes = run_bytes ? run_bytes : JORD_RUN;
  int rc = fxt_td_sort_init(&o->events, run_bytes, tmpdir);
  if (rc == 0) /* (the sort takes at least its minimum) */
    rc = fxt_td_sort_init(&o->binds, run_bytes / 4, tmpdir);
  fxt_tbuf_init(&o->text);
  o->ready = true;
  return rc != 0 ? sort_fail(o, &o->events, rc) : 0;
}

void fxt_jorder_free(struct fxt_jorder *o) {
  if (!o->ready)
    return;
  fxt_td_sort_free(&o->events);
  fxt_td_sort_free(&o->binds);
  fxt_tbuf_free(&o->text);
  for (size_t i = 0; i < o->nstacks; i++)
    free(o->stacks[i].v);
  free(o->stacks);
  fxt_jmap_free(&o->threads);
  o->ready = false;
}

/* head (hn bytes) then text (n bytes) as one record of s at time ns, in chunks. */
static int add(struct fxt_jorder *o, struct fxt_td_sort *s, uint16_t major, uint64_t ns,
               uint64_t seq_flag, uint16_t flags, const void *head, size_t hn, const char *text,
               size_t n) {
  unsigned char chunk[FXT_TD_SORT_MAX_PAYLOAD];
  size_t total = hn + n, done = 0;
  bool first = true;
  do {
    size_t k = 0;
    if (first && hn) { /* (head is small: always in the first chunk) */
      memcpy(chunk, head, hn);
      k = hn;
    }
    size_t take = n - done < sizeof chunk - k ? n - done : sizeof chunk - k;
    if (take)
      memcpy(chunk + k, text + done, take);
    done += take;
    k += take;
    struct fxt_td_sort_key key = {ns, seq_flag | o->seq++, first ? total : 0, major,
                            (uint16_t)(flags | (first ? JORD_FIRST : 0)), (uint32_t)k};
    int rc = fxt_td_sort_add(s, &key, chunk);
    if (rc != 0)
      return sort_fail(o, s, rc);
    first = false;
  } while (done < n);
  return 0;
}

int fxt_jorder_event(struct fxt_jorder *o, uint64_t ns, const char *text, size_t n) {
  return add(o, &o->events, 1, ns, 0, 0, NULL, 0, text, n);
}

int fxt_jorder_meta(struct fxt_jorder *o, const char *text, size_t n) {
  return add(o, &o->events, 0, 0, 0, 0, NULL, 0, text, n); /* (the sort's first key) */
}

int fxt_jorder_slice(struct fxt_jorder *o, uint64_t pid, uint64_t tid, uint64_t start,
                     uint64_t end) {
  struct jslice sl = {pid, tid, end};
  return add(o, &o->binds, 0, start, 0, 0, &sl, sizeof sl, NULL, 0);
}

int fxt_jorder_flow(struct fxt_jorder *o, uint64_t pid, uint64_t tid, uint64_t ns,
                    const char *text, size_t n) {
  struct jslice fl = {pid, tid, ns};
  return add(o, &o->binds, 0, ns, FLOW_SEQ, JORD_FLOW, &fl, sizeof fl, text, n);
}

/* The next whole record of s (its chunks joined in o->text): 1, 0 at the end, or < 0. */
static int next_record(struct fxt_jorder *o, struct fxt_td_sort *s, struct fxt_td_sort_key *key) {
  const void *p;
  int rc = fxt_td_sort_next(s, key, &p);
  if (rc <= 0)
    return rc < 0 ? sort_fail(o, s, rc) : 0;
  uint64_t total = key->lost;
  o->text.len = 0;
  fxt_tbuf_put(&o->text, p, key->size);
  while (o->text.len < total && !o->text.oom) {
    struct fxt_td_sort_key more;
    if ((rc = fxt_td_sort_next(s, &more, &p)) < 0)
      return sort_fail(o, s, rc);
    if (rc == 0) {
      snprintf(o->err, sizeof o->err, "a record's text was cut in the sort");
      return FXT_EBADMSG;
    }
    fxt_tbuf_put(&o->text, p, more.size);
  }
  if (o->text.oom) {
    snprintf(o->err, sizeof o->err, "out of memory");
    return FXT_ENOMEM;
  }
  return 1;
}

/* The open slices of a thread (innermost last). */
static struct fxt_jstack *stack_of(struct fxt_jorder *o, uint64_t pid, uint64_t tid) {
  return fxt_jmap_elem(&o->threads, pid, tid, 0, (void **)&o->stacks, &o->nstacks,
                       &o->cap_stacks, sizeof *o->stacks, NULL);
}

/* Reads binds in time order and puts each flow into events at its slice's start. */
static int bind_flows(struct fxt_jorder *o) {
  int rc = fxt_td_sort_finish(&o->binds);
  if (rc != 0)
    return sort_fail(o, &o->binds, rc);
  struct fxt_td_sort_key key;
  while ((rc = next_record(o, &o->binds, &key)) == 1) {
    struct jslice r;
    memcpy(&r, o->text.data, sizeof r);
    struct fxt_jstack *st = stack_of(o, r.pid, r.tid);
    if (st == NULL) {
      snprintf(o->err, sizeof o->err, "out of memory");
      return FXT_ENOMEM;
    }
    while (st->n > 0 && st->v[st->n - 1].end < key.ns) /* ended before this */
      st->n--;
    if (!(key.flags & JORD_FLOW)) {
      if (!fxt_grow((void **)&st->v, &st->cap, st->n + 1, sizeof *st->v, 8)) {
        snprintf(o->err, sizeof o->err, "out of memory");
        return FXT_ENOMEM;
      }
      st->v[st->n++] = (struct fxt_jspan){key.ns, r.end};
      continue;
    }
    uint64_t ts = st->n > 0 ? st->v[st->n - 1].start : key.ns;
    o->flows_bound += st->n > 0;
    struct fxt_tbuf *b = &o->text; /* the flow's text, less its time: add it and close */
    FXT_JSON_LIT(b, ",\"ts\":");
    fxt_json_us(b, ts);
    FXT_JSON_LIT(b, "}");
    if (b->oom) {
      snprintf(o->err, sizeof o->err, "out of memory");
      return FXT_ENOMEM;
    }
    if ((rc = fxt_jorder_event(o, ts, b->data + sizeof r, b->len - sizeof r)) != 0)
      return rc;
  }
  return rc;
}

int fxt_jorder_write(struct fxt_jorder *o, struct fxt_jout *out) {
  int rc = bind_flows(o);
  if (rc == 0 && (rc = fxt_td_sort_finish(&o->events)) != 0)
    rc = sort_fail(o, &o->events, rc);
  const void *p;
  struct fxt_td_sort_key key;
  while (rc == 0 && (rc = fxt_td_sort_next(&o->events, &key, &p)) == 1) {
    if (key.flags & JORD_FIRST)
      fxt_json_raw(&out->b, o->written++ ? ",\n" : "\n");
    fxt_json_put(&out->b, p, key.size);
    rc = fxt_jout_tick(out);
  }
  if (rc < 0 && out->error == 0 && o->err[0] == '\0')
    rc = sort_fail(o, &o->events, rc);
  o->runs = o->events.nruns + o->binds.nruns;
  return rc;
}
