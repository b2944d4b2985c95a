/* src/host/outfile.h - the session's output file. A path ending in ".dat" asks for trace-cmd's
 * trace.dat: the consumer writes its FXT to "<path>.fxt" as for any output (what a crash
 * leaves behind; `fxtrace convert` turns it into the .dat later), and the end of the session
 * converts that file to <path> and removes it.
 *
 * The writer (src/formats/tracedat_write.h) is not in the tracer: it is loaded for each
 * conversion from the module fxtrace-tracedat.so, beside libfxtrace.so (or the program linked
 * with libfxtrace.a), else in the directory it was installed in (module.h). The harvest of a
 * dead session whose output was X.dat converts with it too (harvest.c hands it to the
 * recovery); the `fxtrace` command, which links the writer, converts with its own. Whether a
 * path asks for a trace.dat, a test of its name: fxt_outfile_is_dat (src/base/sdir.h). */
#ifndef FXTRACE_HOST_OUTFILE_H
#define FXTRACE_HOST_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/sdir.h"

/* The FXT file fxt written as the trace.dat dat, as fxt_tracedat_file does (a fxt_rec_dat_fn,
 * src/base/recover.h); FXT_ENOSYS (err saying why) when the writer cannot be loaded. */
int fxt_outfile_to_dat(const char *fxt, const char *dat, char *err, size_t err_size);

/* Opens the file the consumer writes to (truncated): path itself, or "<path>.fxt" for a .dat.
 * The fd, or -1 with errno set (ENAMETOOLONG when "<path>.fxt" does not fit PATH_MAX). */
int fxt_outfile_open(const char *path);

/* Opens the same file as fxt_outfile_open without truncating it, positioned at its end; *size
 * gets the bytes it holds. The fd, or -1 with errno set. */
int fxt_outfile_open_append(const char *path, uint64_t *size);

/* Closes fd. For a .dat path and complete true (the session ended normally), converts
 * "<path>.fxt" to path and removes it; a conversion that fails says why on stderr and leaves
 * the FXT file. false when the close or the conversion failed. */
bool fxt_outfile_close(int fd, const char *path, bool complete);

/* Descriptors fxtrace holds while the program runs (the output, the buffers directory's lock,
 * the control server's socket and eventfd) which the program may close - a daemon's
 * close_range(3, ~0U), a child of fork closing what it inherited - and whose numbers its next
 * open() then gives to a file of its own. Each is known by the file it named when opened
 * (fxt_fd_id: device and inode, 0s for fd < 0 or a failed fstat) and is written, grown or
 * closed only while it still names that file (fxt_fd_is). Sockets, pipes and files have inodes
 * of their own; eventfds share one. */
struct fxt_fd_id {
  uint64_t dev, ino;
};
struct fxt_fd_id fxt_fd_id(int fd);
bool fxt_fd_is(int fd, struct fxt_fd_id id);
/* Closes fd when it is still the file id names; -1 into *fd either way. */
void fxt_fd_close(int *fd, struct fxt_fd_id id);

#endif /* FXTRACE_HOST_OUTFILE_H */
