/* buffers_int.h - what the files of a session's memory share (buffers.c: the pool and the
 * session file mapped, their header, setup, stop and fork; buffers_dir.c: the buffers directory
 * and the session's own in it, stale sessions collected; buffers_children.c: the markers between
 * a parent's session and its children's, dead children harvested; buffers_tables.c: the string
 * and tracepoint tables of the session file, the consumer's maintenance). */
#ifndef FXTRACE_HOST_BUFFERS_INT_H
#define FXTRACE_HOST_BUFFERS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "buffers.h"
#include "clock.h"
#include "harvest.h"
#include "session_int.h"
#include "slots.h"

#define FXT_BUF_GROW_STEP (64u << 10) /* growing tables are allocated this much ahead */

static inline void fxt_buf_remove_dir(const char *dir)
{
  fxt_sdir_remove(dir, false);
}

/* buffers.c */
/* The start time of process pid (/proc/PID/stat field 22), 0 when unknown. */
uint64_t fxt_buf_proc_start(pid_t pid);
/* The output's absolute path as the header keeps it ("" when it does not fit). */
void fxt_buf_absolute_output(const struct session *s, char *out, size_t size);

/* buffers_dir.c: creates DIR/<pid>.<n> (n = the first number free), or takes over the one the
 * process's previous image left, and takes its lock. 0, or a negative errno value (FXT_EPERM:
 * a directory refused), said on stderr. */
int fxt_buf_make_dir(struct session *s, const char *base, pid_t pid);

/* buffers_children.c */
/* A marker for the session directory child_dir in the session directory parent_dir:
 * parent_dir's session harvests child_dir's if it ends without stopping (harvest.h). False
 * when it could not be made. */
bool fxt_buf_mark_child(const char *parent_dir, const char *child_dir);
/* A session in a process that a traced process started otherwise than by fork: its marker in
 * the parent's session directory (s->parent_dir set when there is one). */
void fxt_buf_mark_in_parent(struct session *s);

#endif
