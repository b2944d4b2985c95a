/* src/host/outfile.c - the session's output file (outfile.h). */
#define _GNU_SOURCE
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../export/tracedat.h"

bool fxt_outfile_is_dat(const char *path) {
  size_t n = strlen(path);
  return n > 4 && strcmp(path + n - 4, ".dat") == 0;
}

/* "<path>.fxt" in buf; false when it does not fit. */
static bool fxt_part(const char *path, char *buf, size_t size) {
  int n = snprintf(buf, size, "%s.fxt", path);
  return n > 0 && (size_t)n < size;
}

int fxt_outfile_open(const char *path) {
  char part[PATH_MAX];
  bool dat = fxt_outfile_is_dat(path);
  if (dat && !fxt_part(path, part, sizeof part)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  return open(dat ? part : path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

int fxt_outfile_open_append(const char *path, uint64_t *size) {
  char part[PATH_MAX];
  bool dat = fxt_outfile_is_dat(path);
  if (dat && !fxt_part(path, part, sizeof part)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  int fd = open(dat ? part : path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  off_t end = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
  if (fd >= 0 && end < 0) {
    int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  *size = fd >= 0 ? (uint64_t)end : 0;
  return fd;
}

bool fxt_outfile_close(int fd, const char *path, bool complete) {
  bool ok = close(fd) == 0;
  if (!ok)
    fprintf(stderr, "fxtrace: %s: %s\n", path, strerror(errno));
  char part[PATH_MAX];
  if (!ok || !complete || !fxt_outfile_is_dat(path) || !fxt_part(path, part, sizeof part))
    return ok;
  char err[512] = "";
  int rc = fxt_tracedat_file(part, path, NULL, err, sizeof err);
  if (rc != 0) {
    fprintf(stderr, "fxtrace: %s: not written (%s: %s); the trace is in %s\n", path,
            fxt_strerror(rc), err, part);
    return false;
  }
  unlink(part);
  return true;
}
