/* fxtcount.h - test helper: decodes an fxtrace FXT file with the strict decoder and tallies,
 * per thread, events (by name), losses from bookkeeping records, and the sequence numbers of a
 * chosen event's first argument. Header-only; tests include it once. */
#ifndef FXT_TESTS_FXTCOUNT_H
#define FXT_TESTS_FXTCOUNT_H

#include <fxtrace/fxt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FXTCOUNT_MAX_THREADS
#define FXTCOUNT_MAX_THREADS 64
#endif

struct fxtcount_thread {
  uint64_t pid, tid;
  uint64_t events;      /* events named `seq_event` (all non-bookkeeping events if NULL) */
  uint64_t other;       /* other non-bookkeeping events */
  uint64_t dropped, overrun, lost, cpu_records;
  uint64_t dropped_track; /* value of the last `dropped` counter (running total of losses) */
  uint64_t dropped_track_records; /* `dropped` counters seen */
  uint64_t next_seq;    /* expected next sequence number */
  uint64_t gaps;        /* sequence numbers skipped */
  bool backwards;       /* a sequence number repeated or went back */
  bool named;           /* a kernel-object record names it */
};

struct fxtcount {
  int rc;          /* decoder result: 0 clean end, < 0 error */
  char err[256];
  uint64_t records;
  struct fxtcount_thread t[FXTCOUNT_MAX_THREADS];
  int nthreads;
  int last;        /* index of the last thread looked up (records come in runs per thread) */
  bool process_named;
  uint64_t process_lost; /* `lost` records of the process (thread koid 0): events of threads
                            that never got a buffer */
};

static inline bool fxtcount_is(const struct fxt_str_ref *r, const char *s)
{
  return r->len == strlen(s) && memcmp(r->data, s, r->len) == 0;
}

static inline struct fxtcount_thread *fxtcount_thread(struct fxtcount *c, uint64_t pid, uint64_t tid)
{
  if (c->last < c->nthreads && c->t[c->last].tid == tid && c->t[c->last].pid == pid)
    return &c->t[c->last];
  for (int i = 0; i < c->nthreads; i++)
    if (c->t[i].tid == tid && c->t[i].pid == pid)
      return &c->t[c->last = i];
  if (c->nthreads == FXTCOUNT_MAX_THREADS)
    return NULL;
  c->last = c->nthreads;
  struct fxtcount_thread *t = &c->t[c->nthreads++];
  memset(t, 0, sizeof(*t));
  t->pid = pid;
  t->tid = tid;
  return t;
}

/* Reads path; counts events named seq_event (first argument = sequence number). */
/* The whole file at path, malloc'ed (*len bytes); NULL when it cannot be opened or read. */
static inline unsigned char *fxtcount_read(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
  if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
    fclose(f);
    free(buf);
    return NULL;
  }
  fclose(f);
  *len = (size_t)n;
  return buf;
}

static inline int fxtcount_file(const char *path, const char *seq_event, struct fxtcount *c)
{
  static struct fxt_str_slot table[FXT_STRING_TABLE_SIZE];
  memset(c, 0, sizeof(*c));
  size_t n;
  unsigned char *buf = fxtcount_read(path, &n);
  if (!buf) {
    snprintf(c->err, sizeof(c->err), "%.200s: cannot read", path);
    return c->rc = -1;
  }
  struct fxt_decoder d;
  fxt_decoder_init(&d, buf, (size_t)n, table);
  static struct fxt_record r;
  int rc;
  while ((rc = fxt_decoder_next(&d, &r, c->err, sizeof(c->err))) == 1) {
    c->records++;
    if (r.kind == FXT_KIND_KERNEL_OBJECT) {
      if (r.u.kernel_object.obj_type == FXT_KOBJ_PROCESS)
        c->process_named = true;
      else if (r.u.kernel_object.num_args == 1) {
        struct fxtcount_thread *t = fxtcount_thread(c, r.u.kernel_object.args[0].value.koid,
                                                    r.u.kernel_object.koid);
        if (t)
          t->named = true;
      }
      continue;
    }
    if (r.kind != FXT_KIND_EVENT)
      continue;
    const struct fxt_event *e = &r.u.event;
    if (e->thread.thread_koid == 0) { /* process-wide bookkeeping */
      if (fxtcount_is(&e->name, "lost") && e->num_args)
        c->process_lost += e->args[0].value.u32;
      continue;
    }
    struct fxtcount_thread *t = fxtcount_thread(c, e->thread.process_koid, e->thread.thread_koid);
    if (!t)
      continue;
    if (fxtcount_is(&e->category, "kernel:meta")) {
      uint64_t v = e->num_args ? e->args[0].value.u32 : 0;
      if (fxtcount_is(&e->name, "drop_stats"))
        t->dropped += v;
      else if (fxtcount_is(&e->name, "overrun"))
        t->overrun += v;
      else if (fxtcount_is(&e->name, "lost"))
        t->lost += v;
      else if (fxtcount_is(&e->name, "cpu"))
        t->cpu_records++;
      else if (fxtcount_is(&e->name, "dropped") && e->num_args == 1) {
        t->dropped_track = e->args[0].value.u64;
        t->dropped_track_records++;
      }
      continue;
    }
    if (seq_event && !fxtcount_is(&e->name, seq_event)) {
      t->other++;
      continue;
    }
    t->events++;
    if (seq_event && e->num_args > 0) {
      uint64_t seq = e->args[0].value.u64;
      if (seq < t->next_seq)
        t->backwards = true;
      else
        t->gaps += seq - t->next_seq;
      t->next_seq = seq + 1;
    }
  }
  free(buf);
  return c->rc = rc;
}

#endif
