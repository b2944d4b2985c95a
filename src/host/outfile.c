/* src/host/outfile.c - the session's output file (outfile.h). */
#define _GNU_SOURCE
#include "outfile.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fxtrace/errors.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "module.h"

struct fxt_tracedat_stats; /* src/formats/tracedat_write.h */

/* The trace.dat writer module (CMakeLists.txt) and the one function it exports, with
 * fxt_tracedat_file's contract (src/formats/tracedat_write.h). */
#define DAT_MODULE "fxtrace-tracedat.so"
#define DAT_ENTRY "fxt_tracedat_module_file"

int fxt_outfile_to_dat(const char *fxt, const char *dat, char *err, size_t err_size) {
  char why[512] = "";
  void *h;
  void *sym = fxt_module_load(DAT_MODULE, DAT_ENTRY, &h, why, sizeof why);
  if (sym == NULL) {
    snprintf(err, err_size, "the trace.dat writer %s could not be loaded: %s", DAT_MODULE, why);
    return FXT_ENOSYS;
  }
  int (*fn)(const char *, const char *, struct fxt_tracedat_stats *, char *, size_t);
  memcpy(&fn, &sym, sizeof fn); /* a function pointer from dlsym (POSIX) */
  int rc = fn(fxt, dat, NULL, err, err_size);
  dlclose(h);
  return rc;
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
  int rc = fxt_outfile_to_dat(part, path, err, sizeof err);
  if (rc != 0) {
    fprintf(stderr, "fxtrace: %s: not written (%s: %s); the trace is in %s\n", path,
            fxt_strerror(rc), err, part);
    return false;
  }
  unlink(part);
  return true;
}

struct fxt_fd_id fxt_fd_id(int fd)
{
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0)
    return (struct fxt_fd_id){0, 0};
  return (struct fxt_fd_id){(uint64_t)st.st_dev, (uint64_t)st.st_ino};
}

bool fxt_fd_is(int fd, struct fxt_fd_id id)
{
  struct fxt_fd_id now = fxt_fd_id(fd);
  return now.ino != 0 && now.dev == id.dev && now.ino == id.ino;
}

void fxt_fd_close(int *fd, struct fxt_fd_id id)
{
  if (fxt_fd_is(*fd, id))
    close(*fd);
  *fd = -1;
}
