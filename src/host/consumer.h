/* consumer.h - the consumer thread as the rest of the tracer uses it (consumer*.c; what its own
 * files share is consumer_int.h): started, stopped, woken, flushed, asked for a snapshot or
 * for a flight recorder's view. */
#ifndef FXTRACE_HOST_CONSUMER_H
#define FXTRACE_HOST_CONSUMER_H

#include <stdint.h>

struct session;

int fxt_consumer_start(struct session *s);
void fxt_consumer_stop(struct session *s);
void fxt_consumer_wake(struct session *s);
int fxt_consumer_flush(struct session *s);
/* Has the consumer thread write a snapshot into fd (consumer.c; fxt_snapshot): returns its
 * result, FXT_EBUSY (one is under way: fd stays the caller's) or FXT_EAGAIN (not done within
 * timeout_ms). Otherwise fd is closed for the caller. Async-signal-safe. */
int fxt_consumer_snapshot(struct session *s, int fd, uint32_t timeout_ms);
/* On the consumer thread only (between passes): writes a snapshot into fd now (fd stays the
 * caller's). Returns 0 or a negative error. An event trigger's (evtrig.h). */
int fxt_cons_snap_fd(struct session *s, int fd);
/* A flight recorder's `trace` and per_cpu stats: has the consumer fill the live view's copies
 * with what every ring holds now (live.h), and from then on keep every ring's records out of
 * the view until fxt_consumer_view_release (so the reader sees each record once). Returns 0
 * (the caller reads the view, then releases), FXT_EBUSY or FXT_EAGAIN (not done within
 * timeout_ms: nothing to release). One caller at a time (session.c holds its lifecycle lock
 * throughout). */
int fxt_consumer_view_hold(struct session *s, uint32_t timeout_ms);
void fxt_consumer_view_release(void);

#endif
