/* src/formats/tracedat_read_iter.c - every CPU's records of a trace.dat in time order
 * (tracedat_read.h): one stream per CPU of each buffer instance, each walking its pages with the
  * page decoder,
 * merged through a binary heap keyed by (timestamp, stream). A page's missed-events notice is
 * an item of its own, at the page's timestamp, before the page's first record.
 */
#include <stdlib.h>
#include <string.h>

#include "../base/grow.h"
#include "heap.h"
#include "tracedat_read_int.h"
#include "tracedat_read.h"

/* One CPU of one buffer: its pages in order, and its next item. */
struct stream {
  uint32_t buffer, cpu;
  uint64_t offset, end; /* of the next page, and of the CPU's data */
  struct fxt_td_page page;
  bool in_page;
  bool pending_missed; /* the open page's missed notice is still to be returned */
  struct fxt_td_item next;
  bool has_next;
};

struct fxt_td_iter {
  const struct fxt_td_file *f;
  struct stream *s;
  uint32_t n;
  uint32_t *heap; /* stream indices with has_next, smallest (ts, index) first */
  uint32_t nheap;
};

static bool before(const void *ctx, uint32_t a, uint32_t b) {
  const struct fxt_td_iter *it = ctx;
  uint64_t ta = it->s[a].next.rec.ts, tb = it->s[b].next.rec.ts;
  return ta < tb || (ta == tb && a < b);
}

static void sift_down(struct fxt_td_iter *it, uint32_t i) {
  fxtf_heap_sift_down(it->heap, it->nheap, i, before, it);
}

static void sift_up(struct fxt_td_iter *it, uint32_t i) {
  fxtf_heap_sift_up(it->heap, i, before, it);
}

/* Advances a stream to its next item (record or missed notice); has_next false at its end. */
static int advance(const struct fxt_td_file *f, struct stream *s, char *err, size_t err_size) {
  s->has_next = false;
  for (;;) {
    if (!s->in_page) {
      if (s->offset >= s->end)
        return 0;
      uint64_t avail = s->end - s->offset;
      if (avail > f->page_size)
        avail = f->page_size;
      int rc = fxt_td_page_open(&s->page, f->buf + s->offset, (size_t)avail, s->offset, &f->lay,
                                err, err_size);
      if (rc)
        return rc;
      s->offset += avail;
      s->in_page = true;
      s->pending_missed = s->page.missed;
    }
    struct fxt_td_item *it = &s->next;
    memset(it, 0, sizeof *it);
    it->cpu = s->cpu;
    it->buffer = s->buffer;
    if (s->pending_missed) {
      s->pending_missed = false;
      it->kind = FXT_TD_ITEM_MISSED;
      it->rec.ts = s->page.timestamp;
      it->rec.offset = s->page.file_offset;
      it->missed_known = s->page.missed_known;
      it->missed_count = s->page.missed_count;
      s->has_next = true;
      return 0;
    }
    int rc = fxt_td_page_next(&s->page, &it->rec, err, err_size);
    if (rc < 0)
      return rc;
    if (rc == 0) {
      s->in_page = false;
      continue;
    }
    it->kind = FXT_TD_ITEM_RECORD;
    if (it->rec.len < 2)
      return fxt_fail_at(err, err_size, FXT_EBADMSG, it->rec.offset,
                         "record of %u bytes has no common_type", it->rec.len);
    it->type = (uint32_t)fxt_td_rd(it->rec.data, 2, f->lay.big_endian);
    it->event = fxt_td_event_by_id(f, it->type);
    it->pid =
        it->rec.len >= 8 ? (int32_t)(uint32_t)fxt_td_rd(it->rec.data + 4, 4, f->lay.big_endian) : 0;
    s->has_next = true;
    return 0;
  }
}

int fxt_td_iter_new(const struct fxt_td_file *f, struct fxt_td_iter **out, char *err,
                    size_t err_size) {
  *out = NULL;
  uint64_t n = 0;
  for (uint32_t b = 0; b < f->nbuffers; b++)
    for (uint32_t i = 0; i < f->buffers[b].ncpus; i++)
      n += f->buffers[b].cpus[i].size != 0;
  struct fxt_td_iter *it = calloc(1, sizeof *it);
  if (it == NULL || (n > 0 && ((it->s = calloc(n, sizeof *it->s)) == NULL ||
                               (it->heap = calloc(n, sizeof *it->heap)) == NULL))) {
    fxt_td_iter_free(it);
    return fxt_fail_at(err, err_size, FXT_ENOMEM, 0, "out of memory");
  }
  it->f = f;
  for (uint32_t b = 0; b < f->nbuffers; b++)
    for (uint32_t i = 0; i < f->buffers[b].ncpus; i++) {
      const struct fxt_td_cpu_data *d = &f->buffers[b].cpus[i];
      if (d->size == 0)
        continue;
      struct stream *s = &it->s[it->n++];
      s->buffer = b;
      s->cpu = d->cpu;
      s->offset = d->offset;
      s->end = d->offset + d->size;
      int rc = advance(f, s, err, err_size);
      if (rc) {
        fxt_td_iter_free(it);
        return rc;
      }
      if (s->has_next) {
        it->heap[it->nheap++] = it->n - 1;
        sift_up(it, it->nheap - 1);
      }
    }
  *out = it;
  return 0;
}

int fxt_td_iter_next(struct fxt_td_iter *it, struct fxt_td_item *item, char *err, size_t err_size) {
  if (it->nheap == 0)
    return 0;
  uint32_t top = it->heap[0];
  struct stream *s = &it->s[top];
  *item = s->next;
  int rc = advance(it->f, s, err, err_size);
  if (rc)
    return rc;
  if (!s->has_next)
    it->heap[0] = it->heap[--it->nheap];
  if (it->nheap > 0)
    sift_down(it, 0);
  return 1;
}

bool fxt_td_iter_peek_ts(const struct fxt_td_iter *it, uint64_t *ts) {
  if (it->nheap == 0)
    return false;
  *ts = it->s[it->heap[0]].next.rec.ts;
  return true;
}

void fxt_td_iter_free(struct fxt_td_iter *it) {
  if (it == NULL)
    return;
  FXT_FREE_ALL(it->s, it->heap, it);
}
