/* src/formats/tracedat_write_page.h - one page of the Linux ring buffer, as trace-cmd's trace.dat
 * holds them per CPU (spec tracedat.md §4, kernel/trace/ring_buffer.c): 64-bit kernel layout
 * (a `long` is 8 bytes), little-endian, 4096-byte pages.
 *
 *   offset 0   u64 timestamp   time of the page's first event (its delta is 0)
 *   offset 8   u64 commit      data bytes that follow | RB_MISSED_EVENTS (bit 31: events were
 *                              lost before this page) | RB_MISSED_STORED (bit 30: their count
 *                              is the u64 right after the data)
 *   offset 16  records, back to back, each a multiple of 4 bytes; zeros to the end of the page
 *
 * A record starts with a u32 header: type_len (bits 0..4) and time_delta (bits 5..31, ns since
 * the previous record). Data records (the kernel's rb_calculate_event_length/rb_update_event):
 * a payload of n bytes (n = 0 counts as 1) takes 4 + n rounded up to 4 bytes with type_len =
 * that rounded payload / 4 when n <= 112; beyond, type_len 0 and array[0] (the next u32) =
 * payload rounded up to 4, plus 4; a record that would be 12 bytes is made 16 (so a TIME_EXTEND
 * could replace it), its last 4 bytes zero. A gap >= 2^27 ns takes a TIME_EXTEND record first
 * (type_len 30, time_delta = the gap's low 27 bits, array[0] = the rest; 8 bytes) and the data
 * record then has delta 0. A gap of 2^59 ns or more, which no TIME_EXTEND carries, starts a
 * new page.
 *
 * Too big: the kernel refuses (drops, counting nothing) an event whose payload exceeds
 * BUF_MAX_DATA_SIZE = 4080 - 8 bytes, the most a page holds with the 8-byte header. Here it
 * is FXT_E2BIG; the trace.dat writer counts it as a missed event of the next page.
 *
 * Missed events: an event that follows lost ones starts a page (only the first record of a
 * page can carry them), the page gets RB_MISSED_EVENTS and, when the 8 bytes fit after the
 * data, the count with RB_MISSED_STORED; later events on that page keep those 8 bytes free,
 * so the count is stored unless the first event fills the whole page (the kernel's rule:
 * stored only when there is room; `trace-cmd report` then says [EVENTS DROPPED]) or the
 * count is not known (FXT_TD_WPAGE_MISSED_UNKNOWN: a trace.dat page read without one).
 *
 * Pure computation on caller memory: no allocation, no I/O.
 */
#ifndef FXTRACE_FORMATS_TRACEDAT_WRITE_PAGE_H
#define FXTRACE_FORMATS_TRACEDAT_WRITE_PAGE_H

#include <stdbool.h>
#include <stdint.h>

#include <fxtrace/errors.h>

#include "tracedat_page.h" /* FXT_TD_MISSED_*: the commit word flags */

#define FXT_TD_WPAGE_BYTES 4096u
#define FXT_TD_WPAGE_HEADER_BYTES 16u /* u64 timestamp, u64 commit */
#define FXT_TD_WPAGE_DATA_BYTES (FXT_TD_WPAGE_BYTES - FXT_TD_WPAGE_HEADER_BYTES) /* 4080 */
#define FXT_TD_WPAGE_MAX_PAYLOAD (FXT_TD_WPAGE_DATA_BYTES - 8u)                  /* 4072 */

/* `missed` of fxt_td_page_add: events were lost, how many is not known (RB_MISSED_EVENTS
 * without a count; `trace-cmd report` says [EVENTS DROPPED]). */
#define FXT_TD_WPAGE_MISSED_UNKNOWN UINT64_MAX

/* The record header word. */
#define FXT_TD_WPAGE_TYPE_LEN_BITS 5u
#define FXT_TD_WPAGE_DELTA_BITS 27u
#define FXT_TD_WPAGE_MAX_SMALL_LEN 28u /* type_len of the longest 4-byte-header record */
#define FXT_TD_WPAGE_PADDING 29u
#define FXT_TD_WPAGE_TIME_EXTEND 30u
#define FXT_TD_WPAGE_TIME_STAMP 31u

struct fxt_td_wpage {
  unsigned char *buf; /* FXT_TD_WPAGE_BYTES, or NULL: only sizes are computed */
  uint32_t len;       /* data bytes used */
  uint32_t events;    /* data records */
  uint32_t extends;   /* TIME_EXTEND records */
  uint64_t ts;        /* timestamp of the page (its first event) */
  uint64_t last;      /* time of the latest record */
  uint64_t missed;    /* events lost before this page (0: none; FXT_TD_WPAGE_MISSED_UNKNOWN) */
};

/* An empty page over buf (NULL: count only). */
void fxt_td_page_init(struct fxt_td_wpage *p, unsigned char *buf);

/* Bytes a data record with an n-byte payload takes (no TIME_EXTEND), or 0 when n is more
 * than FXT_TD_WPAGE_MAX_PAYLOAD. */
uint32_t fxt_td_page_record_bytes(uint32_t n);

/* Appends one event at ts (not before the page's latest) with n payload bytes (copied when
 * the page has a buffer; payload may be NULL without one), `missed` events having been lost
 * just before it (FXT_TD_WPAGE_MISSED_UNKNOWN: some, how many unknown). Returns
 *   0            added;
 *   FXT_ENOSPC   it belongs on a new page (no room, or lost events to mark on a page that
 *                already has events, or a gap beyond a TIME_EXTEND): finish this page, start
 *                another and add it there, where it always fits;
 *   FXT_E2BIG    n > FXT_TD_WPAGE_MAX_PAYLOAD: no page takes it (nothing changed);
 *   FXT_EINVAL   ts is before the page's latest record. */
int fxt_td_page_add(struct fxt_td_wpage *p, uint64_t ts, uint64_t missed, const void *payload,
                    uint32_t n);

/* Writes the page header (and the missed count when it fits and is known) and zeros after
 * the data; the page is then ready to be written out (when it has a buffer). Returns the
 * commit word. */
uint64_t fxt_td_page_finish(struct fxt_td_wpage *p);

#endif /* FXTRACE_FORMATS_TRACEDAT_WRITE_PAGE_H */
