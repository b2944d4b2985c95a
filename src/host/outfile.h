/* src/host/outfile.h - the session's output file. A path ending in ".dat" asks for trace-cmd's
 * trace.dat: the consumer writes its FXT to "<path>.fxt" as for any output (what a crash
 * leaves behind; `fxtrace convert` turns it into the .dat later), and the end of the session
 * converts that file to <path> and removes it.
 *
 * The writer (src/formats/tracedat_write.h) is not in the tracer: a program that links it (the
 * `fxtrace` command) hands it over (fxt_outfile_set_dat_writer); any other loads it for each
 * conversion from the module fxtrace-tracedat.so, beside libfxtrace.so (or the program linked
 * with libfxtrace.a), else in the directory it was installed in (module.h). */
#ifndef FXTRACE_HOST_OUTFILE_H
#define FXTRACE_HOST_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fxt_tracedat_stats;
/* fxt_tracedat_file (src/formats/tracedat_write.h). */
typedef int (*fxt_outfile_dat_fn)(const char *in_path, const char *out_path,
                                  struct fxt_tracedat_stats *st, char *err, size_t err_size);

/* The writer conversions call instead of the module; set once, before any session. */
void fxt_outfile_set_dat_writer(fxt_outfile_dat_fn fn);

/* The FXT file fxt written as the trace.dat dat, as fxt_tracedat_file does; FXT_ENOSYS (err
 * saying why) when the writer cannot be loaded. */
int fxt_outfile_to_dat(const char *fxt, const char *dat, char *err, size_t err_size);

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
