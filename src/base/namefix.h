/* namefix.h - a thread or process name made well-formed UTF-8 (FXT strings must be): the
 * tracer fixes the names it records (slots_attach.c, consumer_out.c, buffers.c), recovery the
 * ones it reads from a session file of an older version (src/formats/recover*.c); and the
 * names, and other one-line files, read from /proc and /sys.
 */
#ifndef FXT_BASE_NAMEFIX_H
#define FXT_BASE_NAMEFIX_H

#include <stdbool.h>
#include <stddef.h>

/* Makes the NUL-terminated name in s[0..size) (a thread or process name as the kernel gives
 * it: cut at 15 bytes, maybe inside a character) well-formed UTF-8 in place: a character cut
 * at its end is dropped, other stray bytes become U+FFFD (as many as fit in size - 1 bytes,
 * whole characters only). size <= 256. Async-signal-safe. */
void fxt_name_fix(char *s, size_t size);

/* A small one-line file (a /proc or /sys one) in out[0..size), NUL-padded, the newline at
 * its end taken off: false when it cannot be read or is empty. */
bool fxt_read_line(const char *path, char *out, size_t size);

/* The name of the calling process (tid 0: /proc/self/comm) or of its thread tid
 * (/proc/self/task/TID/comm) in name[0..size), NUL-terminated: the kernel's comm as
 * PR_GET_NAME gives it (the newline /proc puts after it taken off, one inside the name
 * kept), made well-formed by fxt_name_fix. Empty, and false, when it cannot be read. */
bool fxt_read_comm(int tid, char *name, size_t size);

#endif
