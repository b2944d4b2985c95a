/* ctlproto.c - the live-control protocol and runtime directory (ctlproto.h): pure parsing
 * and encoding, shared by the server thread (src/host/server.c) and the fxtrace tool, and
 * fuzzed on its own (fuzz/fuzz_control.c). Nothing here touches the tracefs tree.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fxtrace/errors.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctlproto.h"

/* Request layout after the size word (ctlproto.h): version, op, flags, path_len. */
#define REQ_FIXED 6u

static const char *const op_names[] = {"?",     "INFO", "LIST", "STAT",
                                       "READ",  "WRITE", "PIPE", "SNAPSHOT"};

static int fail(int rc, char *err, size_t err_size, const char *fmt, ...)
{
  if (err && err_size) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
  }
  return rc;
}

int fxt_ctl_parse(const void *buf, size_t len, struct fxt_ctl_request *req, size_t *used,
                  char *err, size_t err_size)
{
  const unsigned char *p = buf;
  uint32_t size;
  if (err && err_size)
    err[0] = 0;
  if (len < 4) {
    *used = FXT_CTL_REQ_HEADER;
    return 0;
  }
  memcpy(&size, p, 4);
  /* Checked before anything else is read: the size decides how much the server buffers. */
  if (size < REQ_FIXED || size > FXT_CTL_MAX_REQUEST)
    return fail(FXT_EMSGSIZE, err, err_size, "request size %u out of range (%u..%u)", size,
                REQ_FIXED, FXT_CTL_MAX_REQUEST);
  *used = 4 + (size_t)size;
  if (len < *used)
    return 0;
  uint8_t version = p[4], op = p[5];
  uint16_t flags, path_len;
  memcpy(&flags, p + 6, 2);
  memcpy(&path_len, p + 8, 2);
  if (version != FXT_CTL_VERSION)
    return fail(FXT_EBADMSG, err, err_size, "protocol version %u (this is %u)", version,
                FXT_CTL_VERSION);
  if (op < FXT_CTL_INFO || op > FXT_CTL_SNAPSHOT)
    return fail(FXT_EBADMSG, err, err_size, "unknown op %u", op);
  uint16_t allowed = op == FXT_CTL_WRITE ? FXT_CTL_F_TRUNC : 0;
  if (flags & ~allowed)
    return fail(FXT_EBADMSG, err, err_size, "flags 0x%x not allowed for %s", flags,
                op_names[op]);
  if (path_len > FXT_CTL_MAX_PATH)
    return fail(FXT_EBADMSG, err, err_size, "path of %u bytes (at most %u)", path_len,
                FXT_CTL_MAX_PATH);
  if (path_len > size - REQ_FIXED)
    return fail(FXT_EBADMSG, err, err_size, "path of %u bytes overruns a request of %u",
                path_len, size);
  const char *path = (const char *)p + FXT_CTL_REQ_HEADER;
  if (memchr(path, 0, path_len))
    return fail(FXT_EBADMSG, err, err_size, "NUL byte in the path");
  size_t value_len = size - REQ_FIXED - path_len;
  if (op == FXT_CTL_INFO && path_len)
    return fail(FXT_EBADMSG, err, err_size, "INFO takes no path");
  if (op == FXT_CTL_SNAPSHOT && (path_len == 0 || path[0] != '/'))
    return fail(FXT_EBADMSG, err, err_size, "SNAPSHOT takes an absolute path");
  if (op != FXT_CTL_WRITE && value_len)
    return fail(FXT_EBADMSG, err, err_size, "%s takes no value (%zu bytes after the path)",
                op_names[op], value_len);
  req->op = op;
  req->flags = flags;
  req->path = path;
  req->path_len = path_len;
  req->value = p + FXT_CTL_REQ_HEADER + path_len;
  req->value_len = value_len;
  return 1;
}

long fxt_ctl_encode_request(void *out, size_t cap, uint8_t op, uint16_t flags,
                            const char *path, const void *value, size_t value_len)
{
  size_t path_len = path ? strlen(path) : 0;
  if (path_len > FXT_CTL_MAX_PATH || value_len > FXT_CTL_MAX_REQUEST - REQ_FIXED - path_len)
    return FXT_EINVAL;
  uint32_t size = (uint32_t)(REQ_FIXED + path_len + value_len);
  if (cap < 4 + (size_t)size)
    return FXT_ENOBUFS;
  unsigned char *p = out;
  uint16_t pl = (uint16_t)path_len;
  memcpy(p, &size, 4);
  p[4] = FXT_CTL_VERSION;
  p[5] = op;
  memcpy(p + 6, &flags, 2);
  memcpy(p + 8, &pl, 2);
  if (path_len)
    memcpy(p + FXT_CTL_REQ_HEADER, path, path_len);
  if (value_len)
    memcpy(p + FXT_CTL_REQ_HEADER + path_len, value, value_len);
  return (long)(4 + size);
}

void fxt_ctl_reply_header(unsigned char out[FXT_CTL_REPLY_HEADER], int32_t status,
                          uint32_t data_len)
{
  uint32_t size = 4 + data_len;
  memcpy(out, &size, 4);
  memcpy(out + 4, &status, 4);
}

int fxt_ctl_parse_reply(const void *buf, size_t len, int32_t *status, uint32_t *data_len)
{
  uint32_t size;
  int32_t st;
  if (len < FXT_CTL_REPLY_HEADER)
    return 0;
  memcpy(&size, buf, 4);
  memcpy(&st, (const unsigned char *)buf + 4, 4);
  if (size < 4 || size > 4 + FXT_CTL_MAX_CHUNK)
    return FXT_EBADMSG;
  if (st != FXT_CTL_MORE && st != 0 && (st > 0 || st < -4095))
    return FXT_EBADMSG;
  *status = st;
  *data_len = size - 4;
  return 1;
}

/* ---- the runtime directory ---------------------------------------------------------------- */

int fxt_ctl_dir(char *out, size_t size)
{
  const char *d = getenv("FXTRACE_DIR"), *x = getenv("XDG_RUNTIME_DIR");
  struct stat st;
  int n;
  if (d && d[0])
    n = snprintf(out, size, "%s", d);
  else if (x && x[0] == '/' && stat(x, &st) == 0 && S_ISDIR(st.st_mode))
    n = snprintf(out, size, "%s/fxtrace", x);
  else
    n = snprintf(out, size, "/tmp/fxtrace-%u", (unsigned)geteuid());
  return n < 0 || (size_t)n >= size ? FXT_E2BIG : 0;
}

int fxt_ctl_dir_check(const char *dir, bool create, char *err, size_t err_size)
{
  struct stat st;
  /* mkdir's mode is only reduced by the umask, never widened: a new directory is at most
   * 0700, and the checks below apply to it like to any other. */
  if (create && mkdir(dir, 0700) != 0 && errno != EEXIST)
    return fail(errno == EACCES || errno == EPERM ? FXT_EPERM : FXT_ENOENT, err, err_size,
                "cannot create it: %s", strerror(errno));
  if (lstat(dir, &st) != 0)
    return fail(FXT_ENOENT, err, err_size, "%s", strerror(errno));
  if (S_ISLNK(st.st_mode))
    return fail(FXT_EPERM, err, err_size, "a symbolic link (want a directory)");
  if (!S_ISDIR(st.st_mode))
    return fail(FXT_EPERM, err, err_size, "not a directory");
  if (st.st_uid != geteuid())
    return fail(FXT_EPERM, err, err_size, "owned by uid %u, not by uid %u",
                (unsigned)st.st_uid, (unsigned)geteuid());
  if (st.st_mode & 077)
    return fail(FXT_EPERM, err, err_size, "mode %04o lets group or others in (want 0700)",
                (unsigned)(st.st_mode & 07777));
  return 0;
}

int fxt_ctl_socket_path(const char *dir, long pid, char *out, size_t size)
{
  struct sockaddr_un sa;
  int n = snprintf(out, size, "%s/%ld.sock", dir, pid);
  return n < 0 || (size_t)n >= size || (size_t)n >= sizeof(sa.sun_path) ? FXT_E2BIG : 0;
}
