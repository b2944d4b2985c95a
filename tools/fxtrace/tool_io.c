/* tools/fxtrace/tool_io.c - whole-file input mappings and fd output for the commands that
 * read traces (tool_io.h). */
#include "tool_io.h"

#include "cli.h"

int tool_map(const char *cmd, const char *path, struct fxt_fio_in *in) {
  char why[FXT_FIO_ERR_SIZE];
  if (fxt_fio_map(in, path, why, sizeof why) == 0)
    return 0;
  cli_file_error(cmd, path, why);
  return -1;
}

int tool_write_fd(void *ctx, const void *data, size_t n) {
  return fxt_fio_write_all(*(int *)ctx, data, n) ? 0 : FXT_ENOSPC;
}
