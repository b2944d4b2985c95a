/* sdir.h - a session directory DIR/<pid>.<n> seen from outside its session: its lock, what
 * its header says, whether its process still runs, its removal, and the scan of a buffers
 * directory for the dead sessions nobody else will harvest (docs/recovery.md, "Processes that
 * end without stopping"; the files' layout: shfile.h). Shared by the tracer (finding dead
 * sessions, its buffers directory's clean-up: src/host/harvest.h), the recovery that harvests
 * them (src/formats/recover*.c) and the `fxtrace` command, hence in src/base. It holds no
 * state: whoever calls it says which recovery to use (struct fxt_sdir_recovery).
 *
 * The lock. Every session holds an exclusive flock(2) on its directory for its whole life
 * (src/host/buffers.c), through a descriptor opened O_CLOEXEC: the kernel releases it when the
 * process ends in any way (exit, _exit, a signal, SIGKILL) and when it execs. Whoever acts on
 * another session's directory (a harvest, a new session's clean-up of the buffers directory,
 * `fxtrace recover --remove`) first takes that lock without waiting and holds it while it
 * acts: a live session is never touched, whatever pid namespace it runs in (a pid says nothing
 * across namespaces; a lock is on the file), and two harvesters never act on one directory. A
 * forked child inherits the descriptor (flock locks belong to the open file description): the
 * child closes its copy when it takes files of its own (buffers.c), which leaves the parent's
 * lock in place.
 */
#ifndef FXT_BASE_SDIR_H
#define FXT_BASE_SDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recover.h"

/* Marker a child of fork leaves in its parent's session directory: "child.<pid>.<n>", the
 * name of the child's own directory after the prefix (both are in the same buffers
 * directory). */
#define FXT_CHILD_MARK "child."

/* A file a harvester that outlives the sessions it will harvest (`fxtrace record`) keeps
 * locked (flock, exclusive, O_CLOEXEC: released however it ends) in the directory their
 * outputs are in, for its whole life: fxt_sdir_harvest_dead leaves those sessions to it. */
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

/* Whether an output path asks for a trace.dat (ends in ".dat"): its session wrote its FXT to
 * "<path>.fxt" (src/host/outfile.h). A test of the name only. */
bool fxt_outfile_is_dat(const char *path);
/* The descriptor an output names instead of a file: "fd:N" (N decimal, a descriptor the
 * process inherited: FXTRACE's output=fd:N), "-" (standard output: a session started from
 * code), else -1 (a path, or "" for none). A session's header says "-" for both: to a
 * harvest, a stream whose trace goes in the session directory's place. */
int fxt_outfile_fd(const char *output);

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

/* The recovery a scan of a buffers directory harvests with, as its caller has it: recovery
 * gives the table for a session directory about to be acted on (it may load a module then),
 * or NULL when there is none (the directory is kept as it is); to_dat is what its harvests
 * convert an output X.dat with (struct fxt_recover_ops, harvest). */
struct fxt_sdir_recovery {
  const struct fxt_recover_ops *(*recovery)(const char *dir);
  fxt_rec_dat_fn to_dat;
};

/* Harvests every dead session of this user in the buffers directory base that nothing else
 * will: a session directory whose process is gone, whose lock no one holds (a live session,
 * or another harvester: taken without waiting, so two racing harvesters never both act),
 * that no running session holds a child's marker for (its parent's session harvests it, and
 * adopts its own children), and whose output's directory holds no FXT_HARVESTER_FILE a live
 * process keeps locked (`fxtrace record` harvests its own). Sessions with nothing left to
 * write (a clean stop, everything delivered: the recovery's dead_state) are removed; each
 * harvest is said on stderr, prefixed with who (the harvest's line: pid, file, records).
 * Directories not owned by this user are not touched; nor is this process's own. Returns the
 * number harvested. */
int fxt_sdir_harvest_dead(const char *base, const char *who, const struct fxt_sdir_recovery *rec);

#endif
