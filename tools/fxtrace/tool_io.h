/* tools/fxtrace/tool_io.h - whole-file input mappings and fd output for the commands that read
 * traces (convert, merge), over src/formats/fileio.h. */
#ifndef FXTRACE_TOOLS_TOOL_IO_H
#define FXTRACE_TOOLS_TOOL_IO_H

#include <stddef.h>

#include "formats/fileio.h"

/* fxt_fio_map of a whole file: 0, or -1 after printing "fxtrace CMD: PATH: reason".
 * fxt_fio_unmap undoes it. */
int tool_map(const char *cmd, const char *path, struct fxt_fio_in *in);

/* The write function of fxt_td_to_fxt and fxt_json_convert over a file descriptor: ctx is an
 * int * (the fd). 0, or FXT_ENOSPC on a write error (errno tells which). */
int tool_write_fd(void *ctx, const void *data, size_t n);

#endif /* FXTRACE_TOOLS_TOOL_IO_H */
