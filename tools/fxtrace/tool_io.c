/* tools/fxtrace/tool_io.c - whole-file input mappings and fd output for the commands that
 * read traces (tool_io.h). */
#define _POSIX_C_SOURCE 200809L
#include "tool_io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "record_merge.h"

int tool_map(const char *cmd, const char *path, const unsigned char **data, size_t *len) {
  *data = NULL;
  *len = 0;
  struct stat st;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &st) != 0) {
    cli_file_error(cmd, path, strerror(errno));
    if (fd >= 0)
      close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    cli_file_error(cmd, path, "not a regular file");
    close(fd);
    return -1;
  }
  if (st.st_size > 0) {
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      cli_file_error(cmd, path, strerror(errno));
      close(fd);
      return -1;
    }
    *data = m;
    *len = (size_t)st.st_size;
  }
  close(fd);
  return 0;
}

void tool_unmap(const unsigned char *data, size_t len) {
  if (data != NULL)
    munmap((void *)data, len);
}

int tool_write_fd(void *ctx, const void *data, size_t n) {
  errno = 0;
  if (fxt_part_write(*(int *)ctx, data, n))
    return 0;
  if (errno == 0)
    errno = EIO;
  return FXT_ENOSPC;
}
