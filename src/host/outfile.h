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

#endif /* FXTRACE_HOST_OUTFILE_H */
