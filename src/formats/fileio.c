/* src/formats/fileio.c - the files around a conversion (fileio.h). */
#define _GNU_SOURCE
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(int code, const char *why, char *err, size_t err_size) {
  if (err != NULL && err_size > 0)
    snprintf(err, err_size, "%s", why);
  return code;
}

int fxt_fio_map_fd(struct fxt_fio_in *in, int fd, char *err, size_t err_size) {
  *in = (struct fxt_fio_in){0};
  struct stat st;
  if (fstat(fd, &st) != 0)
    return fail(FXT_ENOENT, strerror(errno), err, err_size);
  if (!S_ISREG(st.st_mode))
    return fail(FXT_ENOENT, "not a regular file", err, err_size);
  if (st.st_size > 0) {
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED)
      return fail(FXT_ENOMEM, strerror(errno), err, err_size);
    madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
    in->data = m;
    in->len = (size_t)st.st_size;
  }
  in->dev = st.st_dev;
  in->ino = st.st_ino;
  return 0;
}

int fxt_fio_map(struct fxt_fio_in *in, const char *path, char *err, size_t err_size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *in = (struct fxt_fio_in){0};
    return fail(FXT_ENOENT, strerror(errno), err, err_size);
  }
  int rc = fxt_fio_map_fd(in, fd, err, err_size);
  close(fd);
  return rc;
}

void fxt_fio_release(void *ctx, uint64_t from, uint64_t to) {
  struct fxt_fio_in *in = ctx;
  uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
  from = (from + page - 1) / page * page; /* whole pages inside [from, to) only */
  to = to / page * page;
  if (in->data != NULL && to > from && to <= in->len)
    madvise((void *)(in->data + from), (size_t)(to - from), MADV_DONTNEED);
}

void fxt_fio_unmap(struct fxt_fio_in *in) {
  if (in->data != NULL)
    munmap((void *)in->data, in->len);
  in->data = NULL;
  in->len = 0;
}

bool fxt_fio_write_all(int fd, const void *data, size_t n) {
  for (const char *p = data; n > 0;) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w == 0)
      errno = EIO;
    if (w <= 0)
      return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

static bool is_stdout(const struct fxt_fio_out *o) { return strcmp(o->path, "-") == 0; }

int fxt_fio_write(void *ctx, const void *data, size_t n) {
  struct fxt_fio_out *o = ctx;
  if (o->fd < 0) {
    o->fd = is_stdout(o) ? STDOUT_FILENO
                         : open(o->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, o->mode);
    struct stat st;
    if (o->fd < 0 || fstat(o->fd, &st) != 0) {
      o->saved_errno = errno;
      return FXT_ENOENT;
    }
    o->regular = !is_stdout(o) && S_ISREG(st.st_mode);
  }
  if (fxt_fio_write_all(o->fd, data, n))
    return 0;
  o->saved_errno = errno;
  return FXT_ENOSPC;
}

int fxt_fio_close(struct fxt_fio_out *o, int rc) {
  if (o->fd >= 0 && !is_stdout(o) && close(o->fd) != 0 && rc == 0) {
    o->saved_errno = errno;
    rc = FXT_ENOSPC;
  }
  if (rc != 0 && o->regular)
    unlink(o->path);
  return rc;
}
