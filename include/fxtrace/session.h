/* fxtrace/session.h - a tracing session of this process: which events are on, the per-thread
 * buffers, the consumer thread and the output file.
 *
 * Start one in code with fxt_session_start(), or with no code change through the FXTRACE
 * environment variable, read when the library loads and stopped (flushed) at exit:
 *
 *   FXTRACE='events=demo:*,net:*;buffer_kb=512;mode=overwrite;output=run-%p.fxt'
 *
 * Keys (all optional; separated by ';', whitespace around keys and values ignored):
 *   events=GLOB[,GLOB...]   tracepoints to enable, globs on "system:event" ('*', '?', '[...]';
 *                           a bare "demo" means "demo:*"); default "*:*" (everything)
 *   buffer_kb=N             bytes per thread buffer, in KiB, N >= 1; rounded up to a power of
 *                           two (the real size is what fxtrace reports); default 4096: ~8 ms
 *                           of a thread writing 10 M events/s, what it takes to ride out the
 *                           consumer being descheduled for milliseconds on a busy machine (as
 *                           LTTng-UST's 4 x 512 KiB per CPU). A thread's buffer is faulted in
 *                           on its first event: that much resident memory per tracing thread
 *   total_kb=N              cap on all buffers together, in KiB (address space, reserved
 *                           without backing: only attached threads' buffers are resident);
 *                           default 1048576, room for 255 threads at the default buffer_kb;
 *                           under an RLIMIT_AS, a quarter of it at most (said on stderr)
 *   mode=discard|overwrite|block[:MS]   what a full buffer does: drop and count (default),
 *                           overwrite the oldest records (flight recorder), or wait up to MS
 *                           milliseconds (default 10) for the consumer, then drop and count
 *   output=PATH             file to write; "%p" becomes the pid, "%%" a '%'; "fd:N" is the
 *                           descriptor N the program inherited (FXTRACE=output=fd:3 ./app
 *                           3>trace.fxt; "-", stdout, is refused: the program's own output
 *                           would mix with the trace; from code, "-" is stdout);
 *                           default "fxtrace-%p.fxt"; "" writes no file; PATH ending in
 *                           ".dat": trace-cmd's trace.dat, converted at the end from the FXT
 *                           written to "PATH.fxt" (which a process that dies leaves behind)
 *   max_file_kb=N           stop writing events to the file past N KiB (counted in the file
 *                           as each thread's lost events);
 *                           default 0 = no limit
 *   clock=auto|tsc|monotonic   trace clock; auto = the CPU's counter (the TSC on x86,
 *                           CNTVCT_EL0 on aarch64) where it is invariant and found in order
 *                           across the CPUs at the first session start, whatever the
 *                           kernel's clocksource; else CLOCK_MONOTONIC. The file says which
 *                           and why (`fxtrace stats`)
 *   buffers=DIR             where the buffers live: in files under DIR/<pid>.<n>/, mapped
 *                           shared, so that when the process dies by any signal the kernel
 *                           keeps every record not yet in the output and `fxtrace recover
 *                           DIR/<pid>.<n> -o FILE` writes the complete trace
 *                           (docs/recovery.md); removed at a normal stop. Default
 *                           /dev/shm/fxtrace-<euid> (tmpfs: nothing is written back to a disk;
 *                           when it cannot be used, anonymous memory and a message on stderr);
 *                           "buffers=" (empty): anonymous memory, nothing survives a crash.
 *                           An explicit DIR (symbolic links followed) must be the user's and
 *                           writable by no one else, or sticky (/tmp, /dev/shm): else refused
 *   trigger=FILE            on a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT,
 *                           SIGTRAP, SIGSYS) write a snapshot (fxt_snapshot) to FILE (%p =
 *                           pid), then chain to the program's handler or die of the signal
 *
 * Flight recorder: mode=overwrite with output= (no file). The consumer then leaves the live
 * threads' buffers alone: each keeps its thread's newest records, and fxt_snapshot, `fxtrace
 * snapshot PID -o FILE` or the trigger writes them; the live view (trace, trace_pipe) gets
 * nothing from them. (With an output file the consumer drains the buffers into it, and a
 * snapshot holds what it has not taken yet.)
 *
 * User API (docs/architecture.md, "Public headers").
 */
#ifndef FXTRACE_SESSION_H
#define FXTRACE_SESSION_H

#include "common.h"
#include "errors.h"

enum fxt_session_mode {
  FXT_MODE_DISCARD = 0,
  FXT_MODE_OVERWRITE = 1,
  FXT_MODE_BLOCK = 2,
};

enum fxt_clock {
  FXT_CLOCK_AUTO = 0,
  FXT_CLOCK_TSC = 1,
  FXT_CLOCK_MONOTONIC = 2,
};

/* Session configuration. Zero-initialize, set struct_size = sizeof(struct
 * fxt_session_config), then set what you need: zero fields take the defaults above. The
 * struct only ever grows at the end. Strings are copied by fxt_session_start. */
struct fxt_session_config {
  uint32_t struct_size;
  uint32_t mode;             /* enum fxt_session_mode */
  uint32_t block_timeout_ms; /* FXT_MODE_BLOCK: 0 = default (10) */
  uint32_t clock;            /* enum fxt_clock */
  uint32_t buffer_kb;        /* 0 = default */
  uint32_t total_kb;         /* 0 = default */
  uint64_t max_file_kb;      /* 0 = no limit */
  const char *events;        /* NULL = default "*:*" */
  const char *output;        /* NULL = default "fxtrace-%p.fxt"; "" = no file */
  const char *buffers;       /* NULL = default directory (see buffers= above); "" = anonymous
                                memory */
  const char *trigger;       /* NULL or "" = none; else a snapshot to this file (%p = pid) on a
                                fatal signal (see trigger= above) */
};

/* Counters of the running (or last) session, for tools and tests. */
struct fxt_session_counters {
  uint32_t struct_size;     /* set by the caller: sizeof(struct fxt_session_counters) */
  uint32_t reserved;
  uint64_t nested_records;  /* records of emissions nested in a thread's own emission
                               (signal handlers) that went through the ingress ring and were
                               merged back into their thread's stream (then written, or, past
                               max_file_kb, counted as lost) */
  uint64_t no_buffer_lost;  /* events of threads that never got a buffer (total_kb) */
};

FXT_EXTERN_C_BEGIN

/* Fills *c (up to c->struct_size). Returns 0, or FXT_EINVAL for a bad struct_size. */
FXT_API int fxt_session_counters(struct fxt_session_counters *c);

/* Starts the process's session (cfg NULL = all defaults). Returns 0; FXT_EBUSY when one runs;
 * FXT_EINVAL for a bad configuration or an output file that cannot be created (the reason is
 * printed on stderr); FXT_ENOMEM. Enabled patterns apply to every tracepoint, including those
 * of libraries loaded later. */
FXT_API int fxt_session_start(const struct fxt_session_config *cfg);

/* Stops the session: disables every tracepoint, waits until no thread is inside an emission
 * (a handshake), writes pending drop statistics, drains every buffer and closes the file.
 * Returns 0, or FXT_ENOENT when no session runs. */
FXT_API int fxt_session_stop(void);

/* Makes the consumer take everything committed so far (when threads do not outrun it) into
 * the file and the live view, and waits for it (at most 10 s). Returns 0, FXT_ENOENT (no
 * session) or FXT_EAGAIN (timed out). */
FXT_API int fxt_session_flush(void);

/* 1 while a session runs. */
FXT_API int fxt_session_running(void);

/* The running (or last) session's output path, %p expanded ("" for none, "-" for stdout). */
FXT_API const char *fxt_session_output(void);

/* The running session's buffers directory (DIR/<pid>.<n>, what `fxtrace recover` reads), or
 * "" when its buffers are in anonymous memory or no session runs. */
FXT_API const char *fxt_session_buffers(void);

/* Writes a snapshot of the running session to path (created or truncated): a complete FXT
 * file with every thread's records now in its buffer (a contiguous run of its newest records
 * each, never a torn one), while tracing goes on. The consumer thread writes it; this waits
 * for it (at most 10 s). Only a regular file is written (the open never waits: a FIFO, a
 * socket or a device could block the writer). Returns 0, FXT_EINVAL (no path, or path is not
 * a regular file), FXT_ENOENT (no session), FXT_EBUSY
 * (another snapshot is being written), FXT_EAGAIN (timed out: the file may still be written),
 * or a negative errno of open or write. */
FXT_API int fxt_snapshot(const char *path);

/* Parses an FXTRACE string into *cfg (which it first resets to all defaults, struct_size set).
 * The events and output strings are copied into strbuf (strbuf_size bytes; cfg points into
 * it). Returns 0, FXT_EINVAL with a message in err ("FXTRACE: at 17: unknown key 'bufer_kb'
 * (keys: events, buffer_kb, ...)") for malformed input, or FXT_ENOBUFS when strbuf is too
 * small. err may be NULL. */
FXT_API int fxt_config_parse(const char *text, struct fxt_session_config *cfg, char *strbuf,
                             size_t strbuf_size, char *err, size_t err_size);

FXT_EXTERN_C_END

#endif /* FXTRACE_SESSION_H */
