/* src/formats/fileio.c - the files around a conversion (fileio.h). */
#define _GNU_SOURCE
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(int code, const char *why, char *err, size_t err_size) {
  if (err != NULL && err_size > 0)
    snprintf(err, err_size, "%s", why);
  return code;
}

int fxt_fio_tmpfile(const char *dir, const char *prefix, int *fd) {
  if (dir == NULL || dir[0] == '\0')
    dir = getenv("TMPDIR");
  if (dir == NULL || dir[0] == '\0')
    dir = "/tmp";
  *fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
  if (*fd >= 0)
    return 0;
  char path[4096]; /* no O_TMPFILE here: a named file, unlinked at once */
  if (snprintf(path, sizeof path, "%s/%s-XXXXXX", dir, prefix) >= (int)sizeof path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  *fd = mkostemp(path, O_CLOEXEC);
  if (*fd < 0)
    return -1;
  unlink(path);
  return 0;
}

/* A stream (a pipe, a FIFO, a terminal, a character device) has no size and cannot be
 * mapped, and every reader jumps around in what it reads (the FXT reader re-reads events in
 * time order; the converters read ahead and back): it is copied whole into an unlinked
 * temporary file ($TMPDIR, else /tmp), which is mapped instead - bounded memory, as for a
 * regular file. */
static int spool(int fd, int *tmp, char *err, size_t err_size) {
  enum { CHUNK = 1 << 20 };
  char *buf = malloc(CHUNK);
  if (buf == NULL)
    return fail(FXT_ENOMEM, strerror(ENOMEM), err, err_size);
  char why[FXT_FIO_ERR_SIZE] = "";
  if (fxt_fio_tmpfile(NULL, "fxtrace-input", tmp) != 0)
    snprintf(why, sizeof why, "a temporary file for the stream: %s", strerror(errno));
  while (why[0] == '\0') {
    ssize_t r = read(fd, buf, CHUNK);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      snprintf(why, sizeof why, "%s", strerror(errno));
    else if (r == 0)
      break;
    else if (!fxt_fio_write_all(*tmp, buf, (size_t)r))
      snprintf(why, sizeof why, "copying the stream to a temporary file: %s", strerror(errno));
  }
  free(buf);
  if (why[0] == '\0')
    return 0;
  if (*tmp >= 0)
    close(*tmp);
  *tmp = -1;
  return fail(FXT_ENOENT, why, err, err_size);
}

int fxt_fio_map_fd(struct fxt_fio_in *in, int fd, char *err, size_t err_size) {
  *in = (struct fxt_fio_in){0};
  struct stat st;
  if (fstat(fd, &st) != 0)
    return fail(FXT_ENOENT, strerror(errno), err, err_size);
  if (S_ISDIR(st.st_mode))
    return fail(FXT_ENOENT, strerror(EISDIR), err, err_size);
  int tmp = -1;
  if (!S_ISREG(st.st_mode)) {
    int rc = spool(fd, &tmp, err, err_size);
    if (rc != 0)
      return rc;
    if (fstat(tmp, &st) != 0) {
      rc = fail(FXT_ENOENT, strerror(errno), err, err_size);
      close(tmp);
      return rc;
    }
    fd = tmp;
  }
  int rc = 0;
  if (st.st_size > 0) {
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      rc = fail(FXT_ENOMEM, strerror(errno), err, err_size);
    } else {
      madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
      in->data = m;
      in->len = (size_t)st.st_size;
    }
  }
  in->dev = st.st_dev;
  in->ino = st.st_ino;
  if (tmp >= 0) /* the mapping keeps the file */
    close(tmp);
  return rc;
}

int fxt_fio_map(struct fxt_fio_in *in, const char *path, char *err, size_t err_size) {
  if (strcmp(path, "-") == 0)
    return fxt_fio_map_fd(in, STDIN_FILENO, err, err_size);
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
