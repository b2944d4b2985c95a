/* recover.h - reading a session's files after its process died (or, read-only, while it runs)
 * and writing the complete FXT trace they hold: `fxtrace recover`, and the buffers directory's
 * clean-up of sessions with nothing left (docs/recovery.md; the files' layout: shfile.h).
 * Implemented in the formats library (src/formats/recover*.c); the tracer reaches it only
 * through struct fxt_recover_ops (below; its side: src/host/harvest.h; the session
 * directories both act on: sdir.h), hence in src/base.
 *
 * The reader trusts nothing: every offset, size and position is checked against the bytes it
 * has, and every record taken from a buffer is decoded strictly before it is written. Damage
 * is reported as "FILE: offset N: reason" and recovery goes on with everything else.
 */
#ifndef FXT_BASE_RECOVER_H
#define FXT_BASE_RECOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A file's bytes (mapped or in memory) and the name used in messages. size 0: missing. */
struct fxt_rec_file {
  const char *name;
  const unsigned char *data;
  uint64_t size;
};

/* Whether the consumer's last write, when it died inside it (intent WRITING) writing to a
 * stdout that is a regular file, is in that file, as a harvester whose own stdout is the same
 * file found it (fxt_recover_check_stdout). The file's length cannot say: others (the parent,
 * other children) write to it too, and a recovery never cuts it. */
enum fxt_rec_landed {
  FXT_REC_LANDED_UNKNOWN = 0, /* not looked at, or not known: stdout was not a regular file,
                                 the harvester's stdout is another file, no position stored */
  FXT_REC_LANDED_NO,          /* its first 8 bytes are not where it was going: not written */
  FXT_REC_LANDED_TORN,        /* its first 8 bytes are there, its last ones not (the file
                                 ends before, or others are there): cut by the death */
  FXT_REC_LANDED_YES,         /* its first and last 8 bytes are there: whole */
};

struct fxt_rec_input {
  struct fxt_rec_file session; /* DIR/session */
  struct fxt_rec_file pool;    /* DIR/buffers */
  struct fxt_rec_file output;  /* the session's partial output file (size 0: none) */
  bool live;                   /* the process still runs: positions may move (best effort) */
  int output_errno;            /* why output could not be read (0: it could, or none) */
  bool output_gone;            /* the file the session wrote is no longer at its path (removed
                                  or replaced; harvest.h): output is empty, and the bytes the
                                  consumer wrote there are not this recovery's to count */
  /* Output `-` (stdout: output is empty), the consumer dead inside a write: */
  enum fxt_rec_landed stdout_write; /* whether the write is in the stdout file */
  struct fxt_rec_file stdout_bytes; /* FXT_REC_LANDED_YES: the write as read back from it (its
                                       intent's length; for overwrite mode's credit count) */
};

/* What a recovery found and wrote. */
struct fxt_rec_stats {
  uint64_t prefix_bytes;     /* of the partial output file, kept as they were */
  uint64_t cut_bytes;        /* of it, dropped: past the committed length, or damaged */
  uint64_t records;          /* records taken from buffers, the ingress ring, held records */
  uint64_t events;           /* of them, events (not kernel:meta) */
  uint64_t dropped, overrun, lost; /* losses reported by the records recovery wrote */
  uint64_t bad_records;      /* records taken from buffers that did not decode: skipped */
  uint32_t threads;          /* buffers with something recovered */
  uint32_t uncommitted;      /* threads that died inside an emission */
  uint32_t damage;           /* damage reports */
  uint64_t maybe_twice;      /* bytes of the consumer's last write to a stdout that may be in
                                it and are recovered all the same (FXT_REC_LANDED_UNKNOWN,
                                TORN): what its records hold may be counted twice */
};

/* Output sink: returns 0, or a negative errno (recovery stops). */
typedef int (*fxt_rec_write_fn)(void *ctx, const void *p, size_t n);
/* One line of report (no newline): severity 0 information, 1 damage. */
typedef void (*fxt_rec_report_fn)(void *ctx, int severity, const char *line);

/* Writes the recovered trace through out. Returns 0 when everything was recovered, 1 when it
 * was written but damage was reported (the stats and report say what), or FXT_EBADMSG when
 * the session header itself is unusable (nothing written), or the sink's error. */
int fxt_recover_run(const struct fxt_rec_input *in, fxt_rec_write_fn out, void *out_ctx,
                    fxt_rec_report_fn report, void *report_ctx, struct fxt_rec_stats *stats);

/* For in->session (a session file's bytes, checked here as far as this needs): when its output
 * was stdout on a regular file and its consumer died inside a write (intent WRITING), looks
 * whether that write is in the file fd names (this process's stdout: 1), when that is the
 * same file (device and inode in the header), by reading back the first and last 8 bytes
 * where it was going (shfile.h, intent_out_pos); sets in->stdout_write, and when it is whole
 * in->stdout_bytes (allocated: fxt_recover_stdout_free). Leaves UNKNOWN when it cannot tell. */
void fxt_recover_check_stdout(struct fxt_rec_input *in, int fd);
void fxt_recover_stdout_free(struct fxt_rec_input *in);

/* True when process pid runs and is the one that started at proc_start (shfile.h); a zombie
 * (ended, not yet waited for) does not run. */
bool fxt_recover_alive(uint32_t pid, uint64_t proc_start);

/* What a buffers directory's dir holds, for its clean-up (buffers_dir.c; in the tracer:
 * FXT_REC_KEEP when it has no recovery, harvest.h: fxt_recover_dead_state): */
enum fxt_rec_dead {
  FXT_REC_KEEP,    /* a live process's session, or not a session fxtrace can read */
  FXT_REC_STALE,   /* a dead process's session with nothing missing from its output file (a
                      clean stop, or everything delivered) */
  FXT_REC_CRASHED, /* a dead process's session with records to recover */
};

/* Writes the FXT file fxt as the trace.dat dat (as fxt_tracedat_file does): 0, or a negative
 * errno with err saying why (FXT_ENOSYS: no writer to be had). The caller of a harvest has it:
 * the tracer loads the writer's module (src/host/outfile.h, fxt_outfile_to_dat), the
 * `fxtrace` command links the writer; the recovery, below neither, is handed it. */
typedef int (*fxt_rec_dat_fn)(const char *fxt, const char *dat, char *err, size_t err_size);

/* The recovery harvests call (fxt_harvest, fxt_recover_dead_state, sdir.h): the formats
 * library's fxt_recover_direct, which the module returns from its one entry,
 * FXT_RECOVER_ENTRY. struct_size first: a module of another version is refused. A member's
 * signature that changes changes the entry's name (its number), so that a module built for
 * another table is not found at all rather than called wrongly: the table's size cannot tell
 * (to_dat, added in version 2, left it as it was). harvest is fxt_harvest's contract
 * (src/host/harvest.h), with to_dat converting an output X.dat. */
#define FXT_RECOVER_ENTRY "fxt_recover_module_ops_2"
struct fxt_recover_ops {
  uint32_t struct_size; /* sizeof(struct fxt_recover_ops) */
  int (*harvest)(const char *dir, bool keep_dir, bool keep_fxt, const char *adopt_dir,
                 struct fxt_rec_stats *st, char *msg, size_t msg_size, fxt_rec_dat_fn to_dat);
  enum fxt_rec_dead (*dead_state)(const char *dir);
};
extern const struct fxt_recover_ops fxt_recover_direct; /* src/formats/recover_harvest.c */

#endif
