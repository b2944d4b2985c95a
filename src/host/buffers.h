/* buffers.h - a session's memory (buffers*.c, buffers_int.h): the slot pool and the session
 * file mapped, their directory and files, the tables of the session file, the sessions of
 * children harvested. */
#ifndef FXTRACE_HOST_BUFFERS_H
#define FXTRACE_HOST_BUFFERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct session;

int fxt_buffers_setup(struct session *s, uint32_t nslots); /* maps pool and session file */
void fxt_buffers_publish(struct session *s); /* string/tracepoint tables on; state RUNNING */
void fxt_buffers_stop(struct session *s, bool clean); /* clean: files removed */
int fxt_buffers_reserve_slot(struct session *s, uint32_t i); /* allocate before first touch */
/* posix_fallocate of the pool (pool) or the session file of a file-backed session, opened by
 * its path for the call (no descriptor is kept: session_int.h): 0, or the error number (EBADF:
 * the file is gone). */
int fxt_buffers_fallocate(struct session *s, bool pool, uint64_t off, uint64_t len);
void fxt_buffers_maintain(struct session *s); /* consumer, each pass */
int fxt_buffers_after_fork(struct session *s, uint32_t keep, bool have_keep);
int fxt_buffers_default_dir(char *out, size_t size);
/* The sessions of this process's children that ended without stopping them: harvested into
 * their output files (harvest.h). The consumer thread after each pass; final (at the stop,
 * after the consumer ended): the markers of children still running go to the parent's
 * directory, or are dropped. */
void fxt_buffers_harvest_children(struct session *s, bool final);

#endif
