/* src/formats/tracedat_read_page.c - one ring-buffer page of trace.dat CPU data (tracedat_read.h).
 *
 * Time follows the kernel's own reader (kernel/trace/ring_buffer.c, rb_update_read_stamp),
 * which is the authority on its format: a data record adds its time_delta; TIME_EXTEND adds
 * (array[0] << 27) + time_delta; TIME_STAMP replaces the running time (its top 5 bits come
 * from the running time, as rb_fix_abs_ts does); padding never moves time. libtraceevent's
 * kbuffer differs on the last point (it adds a discarded event's delta), spec tracedat.md §4.1.
 * A padding record with time_delta 0 is the kernel's filler for the unusable tail of a page:
 * its length is undefined, so the page's data ends there.
 */
#include <stdio.h>
#include <string.h>

#include "tracedat_read_int.h"
#include "tracedat_read.h"

#define TS_SHIFT 27u
#define TS_MSB (UINT64_C(0x1f) << 59)

int fxt_td_page_open(struct fxt_td_page *p, const void *page, size_t avail, uint64_t file_offset,
                     const struct fxt_td_layout *lay, char *err, size_t err_size) {
  memset(p, 0, sizeof *p);
  p->page = page;
  p->avail = avail > UINT32_MAX ? UINT32_MAX : (uint32_t)avail;
  p->file_offset = file_offset;
  p->lay = *lay;
  if (p->avail < lay->data_offset)
    return fxt_fail_at(err, err_size, FXT_EBADMSG, file_offset,
                       "page of %u bytes, shorter than its %u-byte header", p->avail,
                       lay->data_offset);
  p->timestamp = fxt_td_rd(p->page + lay->ts_offset, 8, lay->big_endian);
  uint64_t commit = fxt_td_rd(p->page + lay->commit_offset, lay->long_size, lay->big_endian);
  p->data_len = (uint32_t)(commit & FXT_TD_COMMIT_MASK);
  p->missed = (commit & FXT_TD_MISSED_EVENTS) != 0;
  if (p->data_len > p->avail - lay->data_offset)
    return fxt_fail_at(err, err_size, FXT_EBADMSG, file_offset + lay->commit_offset,
                       "page commit says %u data bytes, the page holds %u after its header",
                       p->data_len, p->avail - lay->data_offset);
  if (p->missed && (commit & FXT_TD_MISSED_STORED) &&
      (uint64_t)lay->data_offset + p->data_len + lay->long_size <= p->avail) {
    p->missed_known = true;
    p->missed_count =
        fxt_td_rd(p->page + lay->data_offset + p->data_len, lay->long_size, lay->big_endian);
  }
  p->time = p->timestamp;
  return 0;
}

int fxt_td_page_next(struct fxt_td_page *p, struct fxt_td_rec *rec, char *err, size_t err_size) {
  const unsigned char *data = p->page + p->lay.data_offset;
  bool big = p->lay.big_endian;
  for (;;) {
    uint64_t at = p->file_offset + p->lay.data_offset + p->pos;
    uint32_t left = p->data_len - p->pos;
    if (left == 0)
      return 0;
    if (left < 4)
      return fxt_fail_at(err, err_size, FXT_EBADMSG, at,
                         "%u bytes at the end of the page data, less than a "
                         "record header",
                         left);
    uint32_t word = (uint32_t)fxt_td_rd(data + p->pos, 4, big);
    uint32_t type_len = big ? word >> 27 : word & 0x1fu;
    uint32_t delta = big ? word & 0x7ffffffu : word >> 5;
    uint32_t array0 = left >= 8 ? (uint32_t)fxt_td_rd(data + p->pos + 4, 4, big) : 0;
    if ((type_len == 0 || type_len > FXT_TD_TYPE_DATA_MAX) && left < 8 &&
        !(type_len == FXT_TD_TYPE_PADDING && delta == 0))
      return fxt_fail_at(err, err_size, FXT_EBADMSG, at,
                         "record of type %u needs 8 bytes, the page data has %u", type_len, left);
    uint64_t size, payload = 0, skip = 4;
    switch (type_len) {
    case FXT_TD_TYPE_PADDING:
      if (delta == 0) { /* tail filler: nothing after it on this page */
        p->pos = p->data_len;
        return 0;
      }
      if (array0 < 4)
        return fxt_fail_at(err, err_size, FXT_EBADMSG, at,
                           "padding record of %u bytes (at least 4)", array0);
      size = 4 + (((uint64_t)array0 + 3) & ~UINT64_C(3));
      if (size > left)
        return fxt_fail_at(err, err_size, FXT_EBADMSG, at,
                           "padding of %llu bytes runs past the page data "
                           "(%u bytes left)",
                           (unsigned long long)size, left);
      p->pos += (uint32_t)size;
      continue;
    case FXT_TD_TYPE_TIME_EXTEND:
      p->time += ((uint64_t)array0 << TS_SHIFT) + delta;
      p->pos += 8;
      continue;
    case FXT_TD_TYPE_TIME_STAMP: {
      uint64_t ts = ((uint64_t)array0 << TS_SHIFT) + delta;
      if (p->time & TS_MSB) {
        ts |= p->time & TS_MSB;
        if (ts < p->time)
          ts += UINT64_C(1) << 59;
      }
      p->time = ts;
      p->pos += 8;
      continue;
    }
    case 0: /* long form: array[0] = payload length + 4 */
      if (array0 <= 4)
        return fxt_fail_at(err, err_size, FXT_EBADMSG, at,
                           "data record with length word %u (payload %s)", array0,
                           array0 < 4 ? "negative" : "empty");
      payload = ((uint64_t)array0 - 4 + 3) & ~UINT64_C(3);
      skip = 8;
      break;
    default:
      payload = (uint64_t)type_len * 4;
      break;
    }
    size = skip + payload;
    if (size > left)
      return fxt_fail_at(err, err_size, FXT_EBADMSG, at,
                         "data record of %llu bytes runs past the page data "
                         "(%u bytes left)",
                         (unsigned long long)size, left);
    p->time += delta;
    rec->ts = p->time;
    rec->data = data + p->pos + skip;
    rec->len = (uint32_t)payload;
    rec->offset = at;
    p->pos += (uint32_t)size;
    return 1;
  }
}
