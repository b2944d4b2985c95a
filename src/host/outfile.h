/* src/host/outfile.h - the session's output file. A path ending in ".dat" asks for trace-cmd's
 * trace.dat: the consumer writes its FXT to "<path>.fxt" as for any output (what a crash
 * leaves behind; `fxtrace convert` turns it into the .dat later), and the end of the session
 * converts that file to <path> and removes it. */
#ifndef FXTRACE_HOST_OUTFILE_H
#define FXTRACE_HOST_OUTFILE_H

#include <stdbool.h>
#include <stdint.h>

/* Whether path asks for a trace.dat (ends in ".dat"). */
bool fxt_outfile_is_dat(const char *path);

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
