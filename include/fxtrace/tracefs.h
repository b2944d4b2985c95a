/* fxtrace/tracefs.h - the ftrace control surface of this process, as files.
 *
 * The tree imitates the kernel's /sys/kernel/tracing (spec: ftrace-text.md, ftrace-filter.md)
 * for the events of this process:
 *
 *   events/enable  events/<sys>/{enable,filter}
 *   events/<sys>/<event>/{enable,filter,format,id,trigger}
 *   set_event  available_events  set_event_pid  set_event_notrace_pid
 *   trace  trace_pipe  trace_marker  saved_cmdlines  saved_cmdlines_size
 *   tracing_on  buffer_size_kb  buffer_total_size_kb  trace_clock
 *   per_cpu/cpuN/stats  per_thread/<tid>/stats  error_log
 *
 * Reads and writes behave like the kernel's files: a `trace` snapshot is taken at open; a
 * `trace_pipe` reader consumes, blocks while empty (unless FXT_FS_NONBLOCK), and keeps the rest
 * of a line that did not fit for its next read; opening `trace` or `set_event` with
 * FXT_FS_TRUNC clears it; a bad write fails with the kernel's errno and changes nothing.
 *
 * Controlling events needs a running session; when none runs, the first write that enables
 * an event starts one with no output file (events then go to the live view only).
 * Thread-safe; never called on the emit path.
 *
 * User API (docs/architecture.md, "Public headers").
 */
#ifndef FXTRACE_TRACEFS_H
#define FXTRACE_TRACEFS_H

#include "common.h"
#include "errors.h"

#include <sys/types.h> /* ssize_t: this header is for Linux user space */

/* fxt_fs_open flags */
#define FXT_FS_READ 1u
#define FXT_FS_WRITE 2u
#define FXT_FS_TRUNC 4u    /* as O_TRUNC: clears trace / set_event */
#define FXT_FS_NONBLOCK 8u /* as O_NONBLOCK: trace_pipe returns FXT_EAGAIN when empty */

/* fxt_fs_poll events */
#define FXT_FS_POLLIN 1u

struct fxt_fs_file; /* an open file (per-open state) */

/* A directory entry for fxt_fs_list. */
struct fxt_fs_dirent {
  char name[128];
  int is_dir;
};

FXT_EXTERN_C_BEGIN

/* Opens path (relative to the tree's root, e.g. "events/demo/enable"). Returns 0 with *out,
 * FXT_ENOENT (no such file), FXT_EINVAL (a directory, or flags the file does not allow:
 * e.g. writing `id`), FXT_ENOMEM. */
FXT_API int fxt_fs_open(const char *path, uint32_t flags, struct fxt_fs_file **out);

/* Reads up to len bytes at the file's position. Returns the bytes read (0 at the end),
 * FXT_EAGAIN (trace_pipe, non-blocking, empty), FXT_EINVAL. trace_pipe blocks until at least
 * one line is available (or tracing is turned off and nothing is left). */
FXT_API ssize_t fxt_fs_read(struct fxt_fs_file *f, void *buf, size_t len);

/* Writes len bytes (the whole value, as `echo VALUE > FILE` does). Returns len, or the
 * kernel's error for that file: FXT_EINVAL (bad value), FXT_EPERM, FXT_ENOSPC, ... Nothing
 * changes on error. */
FXT_API ssize_t fxt_fs_write(struct fxt_fs_file *f, const void *buf, size_t len);

/* Waits up to timeout_ms (-1 = forever) until the file is readable (trace_pipe has data;
 * other files always are). Returns FXT_FS_POLLIN or 0 on timeout. */
FXT_API int fxt_fs_poll(struct fxt_fs_file *f, int timeout_ms);

FXT_API void fxt_fs_close(struct fxt_fs_file *f);

/* Lists a directory ("" = the root): up to max entries into out. Returns the number of
 * entries, FXT_ENOENT, or FXT_EINVAL (not a directory). */
FXT_API int fxt_fs_list(const char *dir, struct fxt_fs_dirent *out, int max);

/* Whether path is a directory (1), a file (0), or does not exist (FXT_ENOENT). */
FXT_API int fxt_fs_stat(const char *path);

/* One call: open, read everything into buf (NUL-terminated, truncated to size - 1), close.
 * Not for trace_pipe. Returns the length or an error. */
FXT_API ssize_t fxt_fs_cat(const char *path, char *buf, size_t size);

/* One call: open for writing (truncating where that means something) and write value. */
FXT_API ssize_t fxt_fs_echo(const char *path, const char *value);

FXT_EXTERN_C_END

#endif /* FXTRACE_TRACEFS_H */
