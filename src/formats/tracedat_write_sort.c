/* src/formats/tracedat_write_sort.c - external merge sort of the trace.dat writer's events (see
 * tracedat_write_sort.h).
 */
#define _GNU_SOURCE
#include "tracedat_write_sort.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fxtrace/errors.h>

#include "../base/grow.h"
#include "fileio.h"
#include "heap.h"

#define KEY_BYTES sizeof(struct fxt_td_sort_key)
#define DEFAULT_RUN (8u << 20)
#define MIN_RUN (64u << 10)
#define MAX_RUN (1u << 30) /* records are found in a run by 32-bit offsets */

_Static_assert(sizeof(struct fxt_td_sort_key) == 32, "a key is 32 bytes, a multiple of 8");
_Static_assert(FXT_TD_SORT_READ_BYTES >= KEY_BYTES + FXT_TD_SORT_MAX_PAYLOAD,
               "a read buffer holds the biggest record");

/* The sort index of a run: the key's order fields and where the record is in the arena. */
struct fxt_td_sort_ent {
  uint64_t ns, seq;
  uint32_t at;
  uint16_t cpu;
};

/* A run being read: a file run through buf, or the memory run through the sort index. */
struct fxt_td_sort_cursor {
  unsigned char *buf;   /* NULL for the memory run */
  uint64_t next, end;   /* file offsets still to read into buf */
  size_t pos, len;      /* unread bytes buf[pos..len) */
  size_t ent;           /* memory run: next index entry */
  struct fxt_td_sort_key key; /* the current record */
  const unsigned char *payload;
};

static size_t record_bytes(uint32_t size) { return KEY_BYTES + ((size + 7u) & ~(size_t)7); }

static int fail(struct fxt_td_sort *s, int code, const char *what, int sys_errno) {
  if (sys_errno)
    snprintf(s->err, sizeof s->err, "temporary file: %s: %s", what, strerror(sys_errno));
  else
    snprintf(s->err, sizeof s->err, "%s", what);
  return code;
}

/* Room for one more than the n elements (of elem bytes) of the array *p, of *cap: the array
 * doubled when full, first elements the first time. 0 or FXT_ENOMEM (said in s->err). */
static int grow(struct fxt_td_sort *s, void **p, size_t n, size_t *cap, size_t first,
                size_t elem) {
  if (!fxt_grow(p, cap, n + 1, elem, first))
    return fail(s, FXT_ENOMEM, "out of memory", 0);
  return 0;
}

int fxt_td_sort_init(struct fxt_td_sort *s, size_t run_bytes, const char *tmpdir) {
  memset(s, 0, sizeof *s);
  s->fd = -1;
  s->run_bytes = run_bytes == 0 ? DEFAULT_RUN
                 : run_bytes < MIN_RUN ? MIN_RUN
                 : run_bytes > MAX_RUN ? MAX_RUN
                                       : run_bytes;
  s->tmpdir = tmpdir;
  s->arena = malloc(s->run_bytes);
  return s->arena ? 0 : fail(s, FXT_ENOMEM, "out of memory", 0);
}

static bool ent_less(const struct fxt_td_sort_ent *a, const struct fxt_td_sort_ent *b) {
  if (a->cpu != b->cpu)
    return a->cpu < b->cpu;
  return a->ns != b->ns ? a->ns < b->ns : a->seq < b->seq;
}

static int ent_cmp(const void *pa, const void *pb) {
  const struct fxt_td_sort_ent *a = pa, *b = pb;
  return ent_less(a, b) ? -1 : ent_less(b, a) ? 1 : 0;
}

static int open_tmp(struct fxt_td_sort *s) {
  const char *dir = s->tmpdir ? s->tmpdir : getenv("TMPDIR");
  if (dir == NULL || dir[0] == '\0')
    dir = "/tmp";
  if (fxt_fio_tmpfile(dir, "fxtrace-tracedat", &s->fd) == 0)
    return 0;
  if (errno == ENAMETOOLONG)
    return fail(s, FXT_ENOSPC, "temporary file: directory name too long", 0);
  return fail(s, FXT_ENOSPC, dir, errno);
}

static int write_all(struct fxt_td_sort *s, const unsigned char *p, size_t n) {
  while (n > 0) {
    ssize_t w = pwrite(s->fd, p, n, (off_t)s->file_len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return fail(s, FXT_ENOSPC, "write", w < 0 ? errno : ENOSPC);
    p += w;
    n -= (size_t)w;
    s->file_len += (uint64_t)w;
  }
  return 0;
}

static void sort_run(struct fxt_td_sort *s) {
  size_t i = 1;
  while (i < s->nents && !ent_less(&s->ents[i], &s->ents[i - 1]))
    i++;
  if (i < s->nents) /* one thread's events alone are often in order already */
    qsort(s->ents, s->nents, sizeof *s->ents, ent_cmp);
}

/* Sorts the run in memory and appends it to the temporary file, in blocks. */
static int spill(struct fxt_td_sort *s) {
  if (s->fd < 0 && open_tmp(s) != 0)
    return FXT_ENOSPC;
  if (grow(s, (void **)&s->runs, s->nruns, &s->cap_runs, 16, sizeof *s->runs) != 0)
    return FXT_ENOMEM;
  sort_run(s);
  unsigned char block[64 * 1024];
  size_t n = 0;
  uint64_t start = s->file_len;
  for (size_t i = 0; i < s->nents; i++) {
    const unsigned char *rec = s->arena + s->ents[i].at;
    struct fxt_td_sort_key k;
    memcpy(&k, rec, KEY_BYTES);
    size_t len = record_bytes(k.size);
    if (n + len > sizeof block) {
      int rc = write_all(s, block, n);
      if (rc)
        return rc;
      n = 0;
    }
    memcpy(block + n, rec, len);
    n += len;
  }
  int rc = write_all(s, block, n);
  if (rc)
    return rc;
  s->runs[s->nruns++] = (struct fxt_td_sort_run){start, s->file_len};
  s->arena_len = 0;
  s->nents = 0;
  return 0;
}

int fxt_td_sort_add(struct fxt_td_sort *s, const struct fxt_td_sort_key *k, const void *payload) {
  if (s->finished)
    return fail(s, FXT_EINVAL, "record added after the end", 0);
  if (k->size > FXT_TD_SORT_MAX_PAYLOAD)
    return fail(s, FXT_E2BIG, "record payload too big to sort", 0);
  size_t len = record_bytes(k->size);
  if (s->arena_len + len > s->run_bytes) {
    int rc = spill(s);
    if (rc)
      return rc;
  }
  if (grow(s, (void **)&s->ents, s->nents, &s->cap_ents, 1024, sizeof *s->ents) != 0)
    return FXT_ENOMEM;
  unsigned char *rec = s->arena + s->arena_len;
  memcpy(rec, k, KEY_BYTES);
  if (k->size)
    memcpy(rec + KEY_BYTES, payload, k->size);
  memset(rec + KEY_BYTES + k->size, 0, len - KEY_BYTES - k->size);
  s->ents[s->nents++] = (struct fxt_td_sort_ent){k->ns, k->seq, (uint32_t)s->arena_len, k->cpu};
  s->arena_len += len;
  s->records++;
  return 0;
}

/* ---- reading: a heap of cursors ------------------------------------------------------------- */

static bool cur_less(const void *ctx, uint32_t a, uint32_t b) {
  const struct fxt_td_sort *s = ctx;
  const struct fxt_td_sort_key *x = &s->cur[a].key, *y = &s->cur[b].key;
  if (x->cpu != y->cpu)
    return x->cpu < y->cpu;
  return x->ns != y->ns ? x->ns < y->ns : x->seq < y->seq;
}

static void sift_down(struct fxt_td_sort *s, uint32_t i) {
  fxtf_heap_sift_down(s->heap, s->nheap, i, cur_less, s);
}

/* Loads the cursor's next record into c->key/payload: 1, 0 at the end of its run, or an
 * error. */
static int cur_load(struct fxt_td_sort *s, struct fxt_td_sort_cursor *c) {
  if (c->buf == NULL) { /* the memory run */
    if (c->ent >= s->nents)
      return 0;
    const unsigned char *rec = s->arena + s->ents[c->ent++].at;
    memcpy(&c->key, rec, KEY_BYTES);
    c->payload = rec + KEY_BYTES;
    return 1;
  }
  for (int pass = 0; pass < 2; pass++) {
    if (c->len - c->pos >= KEY_BYTES) {
      memcpy(&c->key, c->buf + c->pos, KEY_BYTES);
      size_t len = record_bytes(c->key.size);
      if (c->key.size <= FXT_TD_SORT_MAX_PAYLOAD && c->len - c->pos >= len) {
        c->payload = c->buf + c->pos + KEY_BYTES;
        c->pos += len;
        return 1;
      }
    }
    if (c->next >= c->end)
      break;
    memmove(c->buf, c->buf + c->pos, c->len - c->pos); /* keep the part of a record read */
    c->len -= c->pos;
    c->pos = 0;
    size_t want = FXT_TD_SORT_READ_BYTES - c->len;
    if (want > c->end - c->next)
      want = (size_t)(c->end - c->next);
    while (want > 0) {
      ssize_t r = pread(s->fd, c->buf + c->len, want, (off_t)c->next);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        return fail(s, FXT_ENOSPC, "read", r < 0 ? errno : EIO);
      c->len += (size_t)r;
      c->next += (uint64_t)r;
      want -= (size_t)r;
    }
  }
  if (c->len != c->pos)
    return fail(s, FXT_ENOSPC, "read: a record is cut short", EIO);
  return 0;
}

int fxt_td_sort_finish(struct fxt_td_sort *s) {
  if (s->finished)
    return 0;
  sort_run(s);
  s->finished = true;
  size_t n = s->nruns + 1;
  s->cur = calloc(n, sizeof *s->cur);
  s->heap = calloc(n, sizeof *s->heap);
  if (s->cur == NULL || s->heap == NULL)
    return fail(s, FXT_ENOMEM, "out of memory", 0);
  for (size_t i = 0; i < s->nruns; i++)
    if ((s->cur[i].buf = malloc(FXT_TD_SORT_READ_BYTES)) == NULL)
      return fail(s, FXT_ENOMEM, "out of memory", 0);
  return fxt_td_sort_rewind(s);
}

int fxt_td_sort_rewind(struct fxt_td_sort *s) {
  if (!s->finished)
    return fail(s, FXT_EINVAL, "read before the end of adding", 0);
  s->nheap = 0;
  s->pending = false;
  for (size_t i = 0; i <= s->nruns; i++) {
    struct fxt_td_sort_cursor *c = &s->cur[i];
    c->pos = c->len = c->ent = 0;
    if (i < s->nruns) {
      c->next = s->runs[i].start;
      c->end = s->runs[i].end;
    }
    int rc = cur_load(s, c);
    if (rc < 0)
      return rc;
    if (rc > 0)
      s->heap[s->nheap++] = (uint32_t)i;
  }
  for (uint32_t i = s->nheap / 2; i-- > 0;)
    sift_down(s, i);
  return 0;
}

int fxt_td_sort_next(struct fxt_td_sort *s, struct fxt_td_sort_key *k, const void **payload) {
  if (!s->finished)
    return fail(s, FXT_EINVAL, "read before the end of adding", 0);
  if (s->pending && s->nheap > 0) {
    /* The record returned last stayed valid until now: only now is its cursor moved on. */
    int rc = cur_load(s, &s->cur[s->heap[0]]);
    if (rc < 0)
      return rc;
    if (rc == 0)
      s->heap[0] = s->heap[--s->nheap];
    sift_down(s, 0);
  }
  s->pending = false;
  if (s->nheap == 0)
    return 0;
  struct fxt_td_sort_cursor *c = &s->cur[s->heap[0]];
  *k = c->key;
  *payload = c->payload;
  s->pending = true;
  return 1;
}

void fxt_td_sort_free(struct fxt_td_sort *s) {
  if (s->cur != NULL)
    for (size_t i = 0; i < s->nruns; i++)
      free(s->cur[i].buf);
  free(s->cur);
  free(s->heap);
  free(s->runs);
  free(s->ents);
  free(s->arena);
  if (s->fd >= 0)
    close(s->fd);
  memset(s, 0, sizeof *s);
  s->fd = -1;
}
