/* src/export/tracedat_file.c - an FXT file written as a trace.dat file (tracedat.h): the file
 * plumbing around fxt_tracedat_convert for the session's `output=X.dat` and `fxtrace record
 * -o X.dat`. */
#define _GNU_SOURCE
#include "tracedat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct input {
  unsigned char *map;
  size_t len;
};

struct output {
  const char *path;
  int fd;          /* -1 until the first byte */
  int saved_errno; /* of the failed open or write */
};

static void in_release(void *ctx, uint64_t from, uint64_t to) {
  struct input *in = ctx;
  uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
  from = (from + page - 1) / page * page; /* whole pages inside [from, to) only */
  to = to / page * page;
  if (to > from && to <= in->len)
    madvise(in->map + from, (size_t)(to - from), MADV_DONTNEED);
}

static int out_write(void *ctx, const void *data, size_t n) {
  struct output *o = ctx;
  if (o->fd < 0 && (o->fd = open(o->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
    o->saved_errno = errno;
    return FXT_ENOENT;
  }
  for (const char *p = data; n > 0;) {
    ssize_t w = write(o->fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      o->saved_errno = w < 0 ? errno : EIO;
      return FXT_ENOSPC;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

int fxt_tracedat_file(const char *in_path, const char *out_path, struct fxt_tracedat_stats *st,
                      char *err, size_t err_size) {
  struct input in = {NULL, 0};
  struct stat sb;
  int fd = open(in_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &sb) != 0) {
    snprintf(err, err_size, "%s: %s", in_path, strerror(errno));
    if (fd >= 0)
      close(fd);
    return FXT_ENOENT;
  }
  in.len = (size_t)sb.st_size;
  if (in.len > 0) {
    void *m = mmap(NULL, in.len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      snprintf(err, err_size, "%s: %s", in_path, strerror(errno));
      close(fd);
      return FXT_ENOMEM;
    }
    in.map = m;
    madvise(m, in.len, MADV_SEQUENTIAL);
  }
  close(fd);
  struct output out = {out_path, -1, 0};
  struct fxt_tracedat_options opt = {.write = out_write, .write_ctx = &out,
                                     .release = in_release, .release_ctx = &in};
  int rc = fxt_tracedat_convert(in.map, in.len, &opt, st, err, err_size);
  if (out.fd >= 0 && close(out.fd) != 0 && rc == 0) {
    out.saved_errno = errno;
    rc = FXT_ENOSPC;
  }
  if (out.saved_errno != 0)
    snprintf(err, err_size, "%s: %s", out_path, strerror(out.saved_errno));
  if (rc != 0 && out.fd >= 0)
    unlink(out_path);
  if (in.map != NULL)
    munmap(in.map, in.len);
  return rc;
}
