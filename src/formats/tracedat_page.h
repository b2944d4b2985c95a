/* src/formats/tracedat_page.h - the commit word of a Linux ring-buffer page as trace.dat holds
 * it (spec tracedat.md §4, kernel/trace/ring_buffer.c): one definition for the reader
 * (tracedat_read.h) and the writer (tracedat_write_page.h).
 */
#ifndef FXTRACE_FORMATS_TRACEDAT_PAGE_H
#define FXTRACE_FORMATS_TRACEDAT_PAGE_H

#include <stdint.h>

/* Page commit word flags (kernel ring_buffer.c RB_MISSED_EVENTS, RB_MISSED_STORED): events
 * were lost before this page; and, with STORED too, a long holding their number stands right
 * after the data. Only the low 27 bits of commit are the data length. */
#define FXT_TD_MISSED_EVENTS (UINT64_C(1) << 31)
#define FXT_TD_MISSED_STORED (UINT64_C(1) << 30)
#define FXT_TD_COMMIT_MASK ((UINT64_C(1) << 27) - 1)

#endif /* FXTRACE_FORMATS_TRACEDAT_PAGE_H */
