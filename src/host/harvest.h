/* harvest.h - the end of a session its process could not end: the session directory's lock,
 * and the harvest that writes a dead session's trace into its output file and removes its
 * files (docs/recovery.md, "Processes that end without stopping").
 *
 * The lock. Every session holds an exclusive flock(2) on its directory DIR/<pid>.<n> for its
 * whole life (buffers.c), through a descriptor opened O_CLOEXEC: the kernel releases it when
 * the process ends in any way (exit, _exit, a signal, SIGKILL) and when it execs. Whoever acts
 * on another session's directory (a harvest, a new session's clean-up of the buffers
 * directory, `fxtrace recover --remove`) first takes that lock without waiting and holds it
 * while it acts: a live session is never touched, whatever pid namespace it runs in (a pid
 * says nothing across namespaces; a lock is on the file), and two harvesters never act on one
 * directory. A forked child inherits the descriptor (flock locks belong to the open file
 * description): the child closes its copy when it takes files of its own (buffers.c), which
 * leaves the parent's lock in place.
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
 * Where the code is. Finding dead sessions, the locks and the removal of what is left are
 * here (harvest.c), in every traced process. The harvest itself and what the clean-up asks of
 * a dead session (recovery: src/formats/recover*.c) are in the formats library: a program that
 * links it hands them over (fxt_harvest_set_recover: the `fxtrace` command); any other loads
 * the module fxtrace-recover.so (module.h) the first time a dead session is to be harvested,
 * and keeps it. Where it cannot (a program linked with libfxtrace.a, the module not installed),
 * it says so once on stderr and the dead sessions' buffers stay where they are, for `fxtrace
 * recover`.
 */
#ifndef FXT_HOST_HARVEST_H
#define FXT_HOST_HARVEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/recover.h"

/* Marker a child of fork leaves in its parent's session directory: "child.<pid>.<n>", the
 * name of the child's own directory after the prefix (both are in the same buffers
 * directory). */
#define FXT_CHILD_MARK "child."

/* A file a harvester that outlives the sessions it will harvest (`fxtrace record`) keeps
 * locked (flock, exclusive, O_CLOEXEC: released however it ends) in the directory their
 * outputs are in, for its whole life: fxt_harvest_dead leaves those sessions to it. */
#define FXT_HARVESTER_FILE ".harvester"

/* Takes the lock of session directory dir: returns the descriptor that holds it (closing it
 * releases the lock), -EWOULDBLOCK when another process holds it (a live session, or another
 * process that looks at it or harvests it), or another negative errno (-ENOENT: no such
 * directory). wait_ms: 0 tries once; > 0 tries again every millisecond for that long (a
 * harvester whose session's process is gone: a holder now is only taking a look, which must
 * not make it miss the harvest); -1 blocks (the directory's owner, for a look at its new,
 * empty directory). */
int fxt_sdir_lock(const char *dir, int wait_ms);

/* What a session directory's header says, read only after the header was checked (magic,
 * version, checksum, geometry). */
struct fxt_sdir_info {
  uint32_t pid;
  uint64_t proc_start;
  uint32_t state;        /* FXT_SH_RUNNING, FXT_SH_STOPPED */
  char output[4097];     /* absolute path of its output file, "" none, "-" stdout */
  uint64_t out_dev, out_ino; /* the identity of the file it opened there, 0 0 for none */
};

/* Reads dir's session header into *info. 0; FXT_ENOENT (no session file: a session being
 * set up, or not a session); FXT_EBADMSG (a damaged header: nothing of it is used; why says
 * what is wrong with it). */
int fxt_sdir_read(const char *dir, struct fxt_sdir_info *info, char *why, size_t why_size);

/* Whether the process pid that started at proc_start (/proc/PID/stat field 22) still runs: a
 * zombie (ended, not yet waited for) does not. */
bool fxt_proc_running(uint32_t pid, uint64_t proc_start);

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

/* Harvests every dead session of this user in the buffers directory base that nothing else
 * will: a session directory whose process is gone, whose lock no one holds (a live session,
 * or another harvester: taken without waiting, so two racing harvesters never both act),
 * that no running session holds a child's marker for (its parent's session harvests it, and
 * adopts its own children), and whose output's directory holds no FXT_HARVESTER_FILE a live
 * process keeps locked (`fxtrace record` harvests its own). Sessions with nothing left to
 * write (a clean stop, everything delivered) are removed; each harvest is said on stderr,
 * prefixed with who (fxt_harvest's line: pid, file, records). Directories not owned by this
 * user are not touched. Returns the number harvested. */
int fxt_harvest_dead(const char *base, const char *who);

/* Removes a session directory's files (session, buffers, children's markers) and, unless
 * keep_dir, the directory. */
void fxt_sdir_remove(const char *dir, bool keep_dir);

/* Moves the children's markers of dir into to (or removes them when to is NULL or the move
 * fails). */
void fxt_sdir_adopt_children(const char *dir, const char *to);

/* A whole regular file, mapped read-only; NULL and *err set when it cannot be (*err 0: an
 * empty file). fxt_sdir_unmap takes what it returned (NULL too). */
const unsigned char *fxt_sdir_map(const char *path, uint64_t *size, int *err);
void fxt_sdir_unmap(const unsigned char *p, uint64_t size);

/* A fxt_rec_report_fn that keeps the first damage line recovery reports (the reason a header
 * is refused, what a harvest could not recover) in ctx, a struct fxt_sdir_why. */
struct fxt_sdir_why {
  char *msg;
  size_t size;
};
void fxt_sdir_first_damage(void *ctx, int damage, const char *line);

/* For the clean-up of a buffers directory (buffers_dir.c), what dir holds: the recovery's
 * answer (fxt_recover_ops.dead_state), FXT_REC_KEEP when there is no recovery to ask. */
enum fxt_rec_dead fxt_recover_dead_state(const char *dir);

/* The recovery to call instead of the module's; set once, before any session. */
void fxt_harvest_set_recover(const struct fxt_recover_ops *ops);

/* true while a child of fork sets up its session (session.c, its atfork handler): it loads no
 * module then (module.h), and leaves the dead sessions it finds to whoever looks next. */
void fxt_harvest_in_fork_child(bool in);

#endif
