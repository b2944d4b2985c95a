/* tools/fxtrace/tool_io.h - whole-file input mappings and fd output for the commands that read
 * traces (merge). */
#ifndef FXTRACE_TOOLS_TOOL_IO_H
#define FXTRACE_TOOLS_TOOL_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A read-only mapping of a whole file: *data NULL and *len 0 for an empty one. Returns 0, or
 * -1 after printing "fxtrace CMD: PATH: reason". tool_unmap undoes it. */
int tool_map(const char *cmd, const char *path, const unsigned char **data, size_t *len);
void tool_unmap(const unsigned char *data, size_t len);

/* The write function of tdr_to_fxt and fxt_json_convert over a file descriptor: ctx is an
 * int * (the fd). 0, or a negative FXT_E* value on a write error (errno tells which). */
int tool_write_fd(void *ctx, const void *data, size_t n);

#endif /* FXTRACE_TOOLS_TOOL_IO_H */
