/* src/formats/fileio.h - the files around a conversion (json.h, tracedat_write.h and
 * tracedat_import.h take memory and a write callback; fxtfile.h reads memory): the input mapped
  * whole and read-only,
 * its pages dropped as a converter says it is done with them, so memory stays bounded; the
 * output created at its first byte, so a bad input leaves no file behind (and an existing one
 * untouched), and removed when the conversion fails after that.
 *
 * Errors: 0 or a negative FXT_E* code (but fxt_fio_write_all, which stands in for write(2)).
 * fxt_fio_map puts the reason in err without the file's name (the system's words, or "not a
 * regular file"): callers name the file as they print it. The output keeps the errno of its
 * failure in saved_errno for the same purpose.
 */
#ifndef FXTRACE_FORMATS_FILEIO_H
#define FXTRACE_FORMATS_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <fxtrace/errors.h>

/* Room for any reason fxt_fio_map gives. */
#define FXT_FIO_ERR_SIZE 128

/* A file mapped whole, read-only, advised for reading front to back. */
struct fxt_fio_in {
  const unsigned char *data; /* NULL when the file is empty */
  size_t len;
  dev_t dev; /* which file it is: a caller may refuse to write over it */
  ino_t ino;
};

/* Maps the file path (fxt_fio_map_fd for an open one, which stays the caller's; the mapping
 * outlives it); path "-" is standard input. A regular file is mapped as it is; a stream (a
 * pipe, a FIFO, a character device) is read to its end into an unlinked temporary file
 * (fxt_fio_tmpfile), which is mapped. On an error in is empty and err says why:
 *   FXT_ENOENT  it cannot be opened, is a directory, or the stream cannot be copied
 *   FXT_ENOMEM  it cannot be mapped */
int fxt_fio_map(struct fxt_fio_in *in, const char *path, char *err, size_t err_size);
int fxt_fio_map_fd(struct fxt_fio_in *in, int fd, char *err, size_t err_size);
/* An unlinked temporary file, read-write, in dir (NULL or "": $TMPDIR, else /tmp): O_TMPFILE,
 * else a file named PREFIX-XXXXXX removed at once. 0 with *fd set, or -1 with errno. */
int fxt_fio_tmpfile(const char *dir, const char *prefix, int *fd);
/* The converters' release callback, ctx the struct fxt_fio_in: drops the whole pages inside
 * [from, to) (read again from the file if touched again). */
void fxt_fio_release(void *ctx, uint64_t from, uint64_t to);
/* Unmaps; in is empty after (and may be unmapped again). */
void fxt_fio_unmap(struct fxt_fio_in *in);

/* An output file, created (or truncated) at its first byte; path "-" is standard output. */
struct fxt_fio_out {
  const char *path;
  mode_t mode;     /* of a file it creates, before the umask */
  int fd;          /* -1 until the first byte */
  bool regular;    /* a regular file: removed when incomplete (never a device or a FIFO) */
  int saved_errno; /* of the failed open, write or close; 0 while none failed */
};
#define FXT_FIO_OUT(path, mode) ((struct fxt_fio_out){(path), (mode), -1, false, 0})

/* The converters' write callback, ctx the struct fxt_fio_out: all n bytes, after creating the
 * file at the first call. 0; FXT_ENOENT when the file cannot be created, FXT_ENOSPC when it
 * cannot be written (saved_errno says why). */
int fxt_fio_write(void *ctx, const void *data, size_t n);
/* Ends the output of a conversion that returned rc: closes it (never standard output), and
 * removes a regular file when the result is not 0. Returns rc, or FXT_ENOSPC when rc is 0 and
 * closing fails (saved_errno). */
int fxt_fio_close(struct fxt_fio_out *out, int rc);

/* write(2) of all n bytes to fd, EINTR and short writes retried; false on an error, errno
 * saying which (EIO when write(2) wrote nothing). */
bool fxt_fio_write_all(int fd, const void *data, size_t n);

#endif /* FXTRACE_FORMATS_FILEIO_H */
