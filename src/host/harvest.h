/* harvest.h - the end of a session its process could not end: the harvest that writes a dead
 * session's trace into its output file and removes its files, as the tracer runs it
 * (docs/recovery.md, "Processes that end without stopping").
 *
 * The session directories harvests act on, their locks and the scan for dead ones are in
 * src/base/sdir.h, shared with the recovery and the `fxtrace` command.
 *
 * Who harvests. A session whose process ended without stopping it is harvested by the first
 * of: the session of its parent (each child of fork leaves a marker `child.<pid>.<n>` in its
 * parent's session directory; the parent's consumer looks at them after every pass and at the
 * stop), the next image of the same process (a session starting after exec takes over the
 * directory the previous image left, and appends to its output when it is the same file),
 * `fxtrace record` (every session whose output is in its directory), or `fxtrace recover`.
 * A session whose process still runs (it exec'd an image that does not trace, or has not
 * started its session yet) is left to that process until it ends.
 *
 * Where the code is. Which recovery the tracer uses and the calls into it are here
 * (harvest.c), in every traced process. The harvest itself and what the clean-up asks of a
 * dead session (recovery: src/formats/recover*.c) are in the formats library: a traced
 * process loads the module fxtrace-recover.so (module.h) the first time a dead session is to
 * be harvested, and keeps it; the `fxtrace` command links the recovery and calls it directly
 * (fxt_recover_direct, with sdir.h's scan). Where the module cannot be loaded (a program
 * linked with libfxtrace.a, the module not installed), it says so once on stderr and the dead
 * sessions' buffers stay where they are, for `fxtrace recover`.
 */
#ifndef FXT_HOST_HARVEST_H
#define FXT_HOST_HARVEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/recover.h"
#include "../base/sdir.h"

/* Harvests the dead session in dir, whose lock the caller holds: writes its complete trace
 * (recover.h: the committed part of its output file, then every record still in its buffers,
 * with every loss counted) and removes the session's files and, unless keep_dir, the
 * directory. The trace goes into the session's own output file (written beside it and
 * renamed over it; for an output "X.dat", into "X.dat.fxt", converted to X.dat unless
 * keep_fxt) when its path still names the file the session opened (the identity in its
 * header: never another's file); else into a new file, never over an existing one: beside the
 * output, "<output>.<pid>.recovered.fxt", when the path names another file or none (the
 * output was removed or replaced: only what the consumer had not written is in it), or in
 * the directory's place, "<dir>.fxt", when the output was stdout or none (a flight
 * recorder), or beside it cannot be written. The children's markers in dir move to adopt_dir
 * when it is given (their parent is gone: adopt_dir's session harvests them), else they go.
 * *st (may be NULL) gets what recovery found. Returns 0 (done, in the output file); 1 (done,
 * into a new file: msg names it, and the caller says so); FXT_ENOENT (no session file);
 * FXT_EBADMSG (a damaged header: left in place); FXT_ENOSYS (no recovery to run: left in
 * place); or a negative errno of the write (left in place). msg gets one line that says what
 * happened (pid, file, records and events recovered, losses) and, for a failure, why. */
int fxt_harvest(const char *dir, bool keep_dir, bool keep_fxt, const char *adopt_dir,
                struct fxt_rec_stats *st, char *msg, size_t msg_size);

/* fxt_sdir_harvest_dead (sdir.h) of the buffers directory base, with the tracer's recovery:
 * the module's, loaded when a dead session is found; none, nothing done, when it cannot be. */
int fxt_harvest_dead(const char *base, const char *who);

/* For the clean-up of a buffers directory (buffers_dir.c), what dir holds: the recovery's
 * answer (fxt_recover_ops.dead_state), FXT_REC_KEEP when there is no recovery to ask. */
enum fxt_rec_dead fxt_recover_dead_state(const char *dir);

/* true while a child of fork sets up its session (session.c, its atfork handler): it loads no
 * module then (module.h), and leaves the dead sessions it finds to whoever looks next. */
void fxt_harvest_in_fork_child(bool in);

#endif
