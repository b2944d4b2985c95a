/* control.h - what the tracefs tree asks of the session (control.c; the flight recorder's
 * view and trace_pipe calls are session.c's, which owns the session's lifecycle lock). Not on
 * the emit path. */
#ifndef FXT_HOST_CONTROL_H
#define FXT_HOST_CONTROL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* fork handlers (the session's): the control lock is not held across fork by another thread. */
void fxt_control_atfork_prepare(void);
void fxt_control_atfork_parent(void);
void fxt_control_atfork_child(void);

/* Starts a session with no output file when none runs (events then reach the live view
 * only). Returns 0 or a negative error. */
int fxt_control_ensure_session(void);

/* tracing_on: off, threads record nothing (not counted as lost: the user asked) and the live
 * view takes nothing; on again, recording resumes. */
void fxt_control_set_recording(bool on);
bool fxt_control_recording(void);

/* set_event_pid / set_event_notrace_pid: the pid lists (thread ids, as the kernel's pids).
 * A thread records events when (trace list empty or it is in it) and it is not in the notrace
 * list. add: append (false: replace). Returns 0, FXT_EINVAL (not a pid list: nothing
 * changes) or FXT_ENOMEM. */
int fxt_control_set_pids(bool notrace, const char *text, bool add);
/* "pid\n" lines of a list. */
void fxt_control_pids(bool notrace, char *buf, size_t size);
/* Whether events of thread tid are excluded now (called at attach). */
bool fxt_pid_muted(pid_t tid);

/* A flight recorder's `trace` and per_cpu stats (session_int.h fxt_flight_recorder): when the
 * session is one, has its consumer copy what the threads' buffers hold into the live view,
 * without consuming anything, and returns true; the caller reads the view (live.h) and then
 * calls fxt_control_view_release. False (nothing to release): no session, not a flight
 * recorder (the view is fed as the consumer drains), or the consumer did not answer. */
bool fxt_control_view_hold(void);
void fxt_control_view_release(void);

/* trace_pipe opened for reading, and closed: while one is open, a flight recorder's consumer
 * drains the threads' buffers into the live view (trace_pipe consumes them, as the kernel's
 * does); an open waits for two passes of it, so that a first read finds what they held. */
void fxt_control_pipe_open(void);
void fxt_control_pipe_close(void);

/* per_thread: the threads that have (or had, until drained) a buffer. */
int fxt_control_threads(pid_t *out, int max);
struct fxt_thread_stats {
  uint64_t entries, overrun, bytes, dropped, read, lost;
  uint64_t oldest_ticks; /* 0 when empty */
};
int fxt_control_thread_stats(pid_t tid, struct fxt_thread_stats *st);

#endif
