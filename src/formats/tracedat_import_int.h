/* src/formats/tracedat_import_int.h - shared by the files of the trace.dat import
 * (tracedat_import.h): tracedat_import.c (the string and thread tables, event formats, one
 * record, the conversion) and tracedat_import_meta.c (the records of bookkeeping: the head,
 * thread names, `cpu` counters, losses, clock syncs). The conversion's state, its output
 * buffer, and the helpers both sides encode through. The functions that return int return 0
 * or a negative FXT_E* code with c->err filled ("offset N: reason", fxt_fail_at).
 */
#ifndef FXTRACE_FORMATS_TRACEDAT_IMPORT_INT_H
#define FXTRACE_FORMATS_TRACEDAT_IMPORT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <fxtrace/fxt.h>
#include <fxtrace/tracepoint.h>

#include "tracedat_import.h"
#include "tracedat_read_int.h" /* fxt_fail_at, the reader's file and items */

#define OUT_CAP (256u * 1024u)
#define MAX_HEX_BYTES (FXT_STR_MAX_BOUND / 2u) /* bytes of an array shown as hex */
#define COMM_MAX 31u

/* ---- output buffer --------------------------------------------------------------------------- */

struct out {
  unsigned char *buf;
  size_t len;
  fxt_td_write_fn write;
  void *ctx;
  uint64_t total;
  int error;
};

static inline int out_flush(struct out *o) {
  if (o->error == 0 && o->len > 0) {
    int rc = o->write(o->ctx, o->buf, o->len);
    if (rc < 0)
      o->error = rc;
    o->total += o->len;
  }
  o->len = 0;
  return o->error;
}

/* Room for one record of any size; NULL after an output error. */
static inline unsigned char *room(struct out *o) {
  if (OUT_CAP - o->len < FXT_MAX_RECORD_BYTES && out_flush(o) != 0)
    return NULL;
  return o->error ? NULL : o->buf + o->len;
}

/* ---- the conversion's state ------------------------------------------------------------------ */

struct str_slot {
  const char *p;
  uint16_t len, index;
};

struct thr {
  uint64_t key; /* tid + 1; 0: free slot */
  uint32_t cpu; /* UINT32_MAX: none recorded */
  bool emitted; /* a kernel-object record names it */
  uint8_t name_len;
  char name[COMM_MAX + 1];
};

struct evstate; /* per event format: tracedat_import.c */

struct conv {
  const struct fxt_td_file *f;
  struct out o;
  struct fxt_td_fxt_stats *st;
  char *err;
  size_t err_size;
  struct str_slot *strs;
  uint32_t str_mask, nstrs;
  uint16_t next_index;
  struct thr *thr;
  uint32_t thr_mask, nthr;
  struct evstate *ev;
  uint64_t *page_lost; /* per CPU number (top buffer): events the pages counted */
  uint32_t npage_lost;
  uint64_t last_ts;
  struct fxt_str_ref s_outw, s_inw, s_weight, s_trace_clock, s_clock, s_date, s_tsoff, s_unknown,
      s_kernel;
  char hex[FXT_MAX_ARGS][2 * MAX_HEX_BYTES];
  struct fxt_record rec; /* scratch, large: kept off the stack */
};

/* Takes the n bytes an encoder wrote at room(&c->o) into the buffer; n < 0: the encoder's
 * error. */
static inline int put(struct conv *c, int64_t n) {
  if (c->o.error)
    return c->o.error;
  if (n < 0)
    return fxt_fail_at(c->err, c->err_size, (int)n, 0, "encoding a record: %s",
                       fxt_strerror((int)n));
  c->o.len += (size_t)n;
  return 0;
}
#define PUT(c, encoder, r) put((c), encoder(room(&(c)->o), FXT_MAX_RECORD_BYTES, (r)))

/* FXT_ENOMEM, with c->err filled. */
static inline int nomem(struct conv *c) {
  return fxt_fail_at(c->err, c->err_size, FXT_ENOMEM, 0, "out of memory");
}

/* Whether a trace.dat text is s. */
static inline bool text_is(struct fxt_td_text t, const char *s) {
  return t.len == strlen(s) && memcmp(t.data, s, t.len) == 0;
}

/* Task tid as an inline thread (process tid, thread tid): trace.dat has no thread groups. */
static inline struct fxt_thread_ref task(int32_t tid) {
  return fxt_thread_inline((uint32_t)tid, (uint32_t)tid);
}

/* tracedat_import.c: the tables */

/* The ref of a string: its table index (a string record is written the first time), or the
 * text inline once the table is full. */
int fxt_td_imp_intern(struct conv *c, const char *p, size_t n, struct fxt_str_ref *ref);

static inline int intern_z(struct conv *c, const char *s, struct fxt_str_ref *ref) {
  return fxt_td_imp_intern(c, s, strlen(s), ref);
}

/* The entry of task tid in the thread table (new: no CPU recorded, not named yet; the table
 * doubles when half full); NULL when out of memory. */
struct thr *fxt_td_imp_thread_slot(struct conv *c, int32_t tid);

/* tracedat_import_meta.c: the records of bookkeeping */

/* Magic, provider, initialization, fxtrace's fixed strings, the process name, the clock. */
int fxt_td_imp_head(struct conv *c, uint64_t first_ts);
/* A kernel-object record naming task tid, the first time or when its name changed. */
int fxt_td_imp_name_thread(struct conv *c, int32_t tid, const unsigned char *comm, uint32_t n);
/* A `cpu` counter before a task's record on another CPU than its last. */
int fxt_td_imp_task_cpu(struct conv *c, int32_t tid, uint32_t cpu, uint64_t ts);
/* `lost` instants of thread 0/0 on cpu: n events (count_unknown: the page did not say). */
int fxt_td_imp_lost(struct conv *c, uint32_t cpu, uint64_t ts, uint64_t n, bool count_unknown);
/* A `clock_sync` instant at ts (the clock is `mono`: ticks = monotonic_ns). */
int fxt_td_imp_clock_sync(struct conv *c, uint64_t ts);

#endif /* FXTRACE_FORMATS_TRACEDAT_IMPORT_INT_H */
