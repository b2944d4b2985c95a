/* src/formats/tracedat_write_page.c - ring-buffer pages of trace.dat (see tracedat_write_page.h).
 * */
#include "tracedat_write_page.h"

#include <string.h>

#define DELTA_MAX ((UINT64_C(1) << FXT_TD_WPAGE_DELTA_BITS) - 1)
/* A TIME_EXTEND carries 27 + 32 bits of delta. */
#define EXTEND_MAX ((UINT64_C(1) << (FXT_TD_WPAGE_DELTA_BITS + 32)) - 1)
#define SMALL_DATA (FXT_TD_WPAGE_MAX_SMALL_LEN * 4u) /* RB_MAX_SMALL_DATA: 112 */

_Static_assert(FXT_TD_WPAGE_TYPE_LEN_BITS + FXT_TD_WPAGE_DELTA_BITS == 32,
"a record header is a u32");
_Static_assert(FXT_TD_WPAGE_MAX_PAYLOAD + 8u == FXT_TD_WPAGE_DATA_BYTES,
"the biggest record fills a page");

static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t header_word(uint32_t type_len, uint64_t delta) {
  return type_len | (uint32_t)(delta & DELTA_MAX) << FXT_TD_WPAGE_TYPE_LEN_BITS;
}

void fxt_td_page_init(struct fxt_td_wpage *p, unsigned char *buf) {
  memset(p, 0, sizeof *p);
  p->buf = buf;
}

uint32_t fxt_td_page_record_bytes(uint32_t n) {
  if (n > FXT_TD_WPAGE_MAX_PAYLOAD)
    return 0;
  uint32_t len = n ? n : 1;
  if (len > SMALL_DATA)
    len += 4; /* array[0] holds the length */
  len = (len + 4 + 3) & ~3u;
  return len == 12 ? 16 : len;
}

int fxt_td_page_add(struct fxt_td_wpage *p, uint64_t ts, uint64_t missed, const void *payload,
                    uint32_t n) {
  uint32_t rec = fxt_td_page_record_bytes(n);
  if (rec == 0)
    return FXT_E2BIG;
  uint64_t delta = 0;
  uint32_t extend = 0;
  if (p->events != 0) {
    if (ts < p->last)
      return FXT_EINVAL;
    delta = ts - p->last;
    if (missed != 0 || delta > EXTEND_MAX)
      return FXT_ENOSPC;
    extend = delta > DELTA_MAX ? 8 : 0;
    uint32_t keep = p->missed ? 8 : 0; /* room for the missed count */
    if (p->len + extend + rec + keep > FXT_TD_WPAGE_DATA_BYTES)
      return FXT_ENOSPC;
  } else {
    p->ts = ts;
    p->missed = missed;
  }
  if (p->buf != NULL) {
    unsigned char *at = p->buf + FXT_TD_WPAGE_HEADER_BYTES + p->len;
    if (extend) {
      put32(at, header_word(FXT_TD_WPAGE_TIME_EXTEND, delta));
      put32(at + 4, (uint32_t)(delta >> FXT_TD_WPAGE_DELTA_BITS));
      at += 8;
      delta = 0;
    }
    uint32_t body = rec - 4; /* the payload rounded up, or array[0] and it */
    if (n > SMALL_DATA) {
      put32(at, header_word(0, delta));
      put32(at + 4, body);
      at += 8;
      body -= 4;
    } else {
      put32(at, header_word(body / 4, delta));
      at += 4;
    }
    if (n)
      memcpy(at, payload, n);
    memset(at + n, 0, body - n);
  }
  p->len += extend + rec;
  p->extends += extend ? 1 : 0;
  p->events++;
  p->last = ts;
  return 0;
}

uint64_t fxt_td_page_finish(struct fxt_td_wpage *p) {
  uint64_t commit = p->len;
  bool stored = p->missed && p->missed != FXT_TD_WPAGE_MISSED_UNKNOWN &&
                FXT_TD_WPAGE_DATA_BYTES - p->len >= 8;
  if (p->missed)
    commit |= FXT_TD_MISSED_EVENTS | (stored ? FXT_TD_MISSED_STORED : 0);
  if (p->buf != NULL) {
    unsigned char *data = p->buf + FXT_TD_WPAGE_HEADER_BYTES;
    put64(p->buf, p->ts);
    put64(p->buf + 8, commit);
    memset(data + p->len, 0, FXT_TD_WPAGE_DATA_BYTES - p->len);
    if (stored)
      put64(data + p->len, p->missed);
  }
  return commit;
}
