/* live.h - the live view: the recent events that `trace` shows and `trace_pipe` consumes.
 *
 * The session's consumer feeds it while it drains the threads' buffers (the same records it
 * writes to the file): each event goes into the bounded ring of the CPU it was emitted on,
 * with the thread's id and name at that moment. Like the kernel's ring buffer in its default
 * overwrite mode, a full CPU ring drops its oldest entries and counts them (overrun); losses
 * in the threads' own buffers (drop_stats, overrun, lost records) are counted against the CPU
 * the thread was on and shown as "CPU:N [LOST n EVENTS]" at the gap.
 *
 * A flight recorder (mode=overwrite, no output file) leaves its live threads' buffers alone,
 * so the view gets nothing from them until someone reads. For `trace` (and per_cpu stats) the
 * consumer fills a second set of per-CPU rings, the copies, with what the buffers hold
 * (live_copy_*: copied, not consumed; consumer.c fxt_consumer_view_hold), merged by time so
 * that a full CPU ring keeps the newest; readers show both sets, trace_pipe consumes only the
 * first, and the copies are emptied once the reader is done. While a trace_pipe is open
 * (live_pipe_open) the consumer drains the buffers into the first set as in the other modes.
 *
 * While current_tracer is function_graph, readers print the kernel's function_graph layout,
 * whose lines they make from the records the consumer pushed, as they read (live_fgraph.c).
 *
 * All state is under one mutex: the consumer appends, readers (trace snapshots, trace_pipe)
 * read; none of it is on the emit path.
 */
#ifndef FXT_HOST_LIVE_H
#define FXT_HOST_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fxt_tbuf;

/* Per-CPU statistics (per_cpu/cpuN/stats). */
struct live_cpu_stats {
  uint64_t entries, overrun, bytes, dropped, read;
  uint64_t oldest_ns; /* 0 when empty */
};

/* Sets up the view for this process (idempotent). Returns 0 or FXT_ENOMEM. */
int live_init(void);

/* Per-CPU buffer size in KiB as the kernel rounds it (pages of 4080 data bytes, at least 2):
 * returns the size read back; FXT_EINVAL for 0; FXT_ENOMEM. Empties the view, as the kernel
 * does when resizing. */
int live_set_buffer_kb(uint64_t kb);
uint32_t live_buffer_kb(void);
uint32_t live_ncpus(void);

/* tracing_on: off, the view takes no new entries (the threads' buffers and the file go on). */
void live_set_on(bool on);
bool live_on(void);

/* Consumer side: one drained chunk of slot records from thread tid (named comm), starting on
 * CPU *cpu (updated from the chunk's cpu records); adds the chunk's events to *events and the
 * drops its drop_stats records report to *dropped. *last_cpu: the CPU the chunk's last cpu
 * record names as cpunote.h's fxt_cpu_of_record reads it, FXT_CPU_NOTE_NONE if it has none
 * (so that the consumer needs no walk of its own for fxt_cpu_after). */
void live_feed(const unsigned char *records, uint32_t len, uint32_t tid, const char *comm,
               uint32_t *cpu, uint64_t *events, uint64_t *dropped, uint32_t *last_cpu);
/* Consumer side: records of thread tid lost (counted) while it was on cpu. */
void live_lost(uint32_t cpu, uint64_t records, bool overrun);

/* Empties every CPU's ring; records emitted before this moment that are still on their way
 * (in the threads' buffers) are discarded when they arrive (`echo > trace`). */
void live_clear(void);

/* Consumer side, a flight recorder's copies (see the top): live_copy_begin empties them (and
 * sets them up the first time: FXT_ENOMEM); live_copy_feed takes a chunk as live_feed does,
 * but also while tracing is off (the buffers hold what they hold) and counting nothing into
 * the threads' counters; live_copy_lost counts records lost in a buffer and not reported yet
 * (attributed to cpu). Readers: live_copy_clear empties them when done. */
int live_copy_begin(void);
void live_copy_feed(const unsigned char *records, uint32_t len, uint32_t tid, const char *comm,
                    uint32_t *cpu);
void live_copy_lost(uint32_t cpu, uint64_t records, bool overrun);
void live_copy_clear(void);

/* The function_graph layout's funcgraph-* options (options/funcgraph-*, fgraph_text.h's
 * FXT_FGRAPH_* bits, 0 for the kernel's defaults): `trace` takes them when it is opened,
 * trace_pipe at each read. live_set_fg_option: bit on or off. */
uint32_t live_fg_options(void);
void live_set_fg_option(uint32_t bit, bool on);

/* trace_pipe files open for reading (tracefs.c counts them): while there is one, a flight
 * recorder's consumer drains the live threads' buffers into the view. */
void live_pipe_open(void);
void live_pipe_close(void);
bool live_pipe_readers(void);

/* `trace`, a read at a time (live.c, struct live_iter): live_iter_open formats the header
 * into b and notes what the view holds (copies included); live_iter_next formats its next
 * entries, merged by time, into b while b holds less than want bytes (each line whole), and
 * returns false once nothing is left; the lock is held only inside each call. NULL: no
 * memory. */
struct live_iter;
struct live_iter *live_iter_open(struct fxt_tbuf *b);
bool live_iter_next(struct live_iter *it, struct fxt_tbuf *b, size_t want);
void live_iter_close(struct live_iter *it);

/* trace_pipe: formats and consumes the oldest entries (merged by time) into b while the next
 * line fits whole in want bytes, as the kernel's trace_pipe read does (a reader killed between
 * reads never ends on half a line); the first line is taken even if it does not fit (the
 * caller hands it on over several reads). Returns the entries consumed. */
size_t live_consume(struct fxt_tbuf *b, size_t want);
/* Waits until an entry is available, tracing is off, or timeout_ms passes (-1: forever);
 * true when an entry is available. */
bool live_wait(int timeout_ms);
/* Whether a reader is waiting in live_wait: the consumer then looks at the threads' buffers
 * every 10 ms instead of every 100 ms. */
bool live_has_waiters(void);

void live_cpu_stats(uint32_t cpu, struct live_cpu_stats *st);

/* saved_cmdlines: "pid comm\n" lines; its size (1..32768; a new size empties the cache). */
void live_cmdlines(struct fxt_tbuf *b);
int live_set_cmdlines_size(uint64_t n);
uint32_t live_cmdlines_size(void);

/* CLOCK_MONOTONIC now, in ns. */
uint64_t live_now_ns(void);

/* fork handlers (the session's): hold the view's lock across fork; the child's view is empty. */
void live_atfork_prepare(void);
void live_atfork_parent(void);
void live_atfork_child(void);

/* Ticks of the trace clock to CLOCK_MONOTONIC ns (the session's calibration). */
uint64_t live_ticks_to_ns(uint64_t ticks);
/* Set by the session when it starts: the clock mapping. */
void live_set_clock(uint64_t ticks, uint64_t mono_ns, uint64_t ticks_per_second);
/* The consumer, between passes: writes up to budget bytes of the pages of the empty per-CPU
 * rings not written yet, so that their first lap does not pay for first writes inside the
 * consumer's passes (~10 us a page on a VM with shadow paging: ~5 ms for one CPU's 1.4 MiB).
 * Returns true while pages are left to write. */
bool live_warm(size_t budget);

#endif
