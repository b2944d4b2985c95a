/* tools/fxtrace/control_client.c - connecting to a live-control socket and exchanging frames
 * (control_client.h). The client checks the other end as the server checks it: the runtime
 * directory must be ours and private, and the process behind the socket (SO_PEERCRED) must be
 * our user (or root) and the pid we asked for, so nobody can pose as a traced process.
 */
#define _GNU_SOURCE
#include "control_client.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int ctl_dir(char *dir, size_t size, char *err, size_t err_size)
{
  char why[200];
  if (fxt_ctl_dir(dir, size) != 0) {
    snprintf(err, err_size, "the runtime directory's path is too long");
    return -ENAMETOOLONG;
  }
  int rc = fxt_ctl_dir_check(dir, false, why, sizeof(why));
  struct stat st;
  /* Root may look into another user's directory (FXTRACE_DIR=/run/user/1000/fxtrace): it
   * must still be private, so only its owner (or root) can have put a socket there. */
  if (rc != 0 && geteuid() == 0 && lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
      !(st.st_mode & 077))
    rc = 0;
  if (rc != 0)
    snprintf(err, err_size, "%s: %s", dir, why);
  return rc;
}

int ctl_connect(const char *dir, long pid, struct ctl_conn *c, char *err, size_t err_size)
{
  memset(c, 0, sizeof(*c));
  c->fd = -1;
  c->pid = pid;
  c->timeout_ms = CTL_TIMEOUT_MS;
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (fxt_ctl_socket_path(dir, pid, sa.sun_path, sizeof(sa.sun_path)) != 0) {
    snprintf(err, err_size, "%s: path too long for a Unix socket", dir);
    return -ENAMETOOLONG;
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    snprintf(err, err_size, "socket: %s", strerror(errno));
    return -errno;
  }
  if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
    int e = errno;
    close(fd);
    if (e == ENOENT)
      snprintf(err, err_size, "process %ld: no live-control socket in %s (not traced, or not "
               "your process)", pid, dir);
    else if (e == ECONNREFUSED)
      snprintf(err, err_size, "process %ld: stale socket %s (the process is gone)", pid,
               sa.sun_path);
    else
      snprintf(err, err_size, "%s: %s", sa.sun_path, strerror(e));
    return -e;
  }
  struct ucred cr;
  socklen_t len = sizeof(cr);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 ||
      (geteuid() != 0 && cr.uid != geteuid() && cr.uid != 0) || (long)cr.pid != pid) {
    close(fd);
    snprintf(err, err_size, "%s: the process behind it is not process %ld of your user",
             sa.sun_path, pid);
    return -EPERM;
  }
  /* Room for a whole frame from the start: the parsers never see a NULL buffer. */
  c->cap = FXT_CTL_REPLY_HEADER + FXT_CTL_MAX_CHUNK;
  if (!(c->buf = malloc(c->cap))) {
    close(fd);
    snprintf(err, err_size, "out of memory");
    return -ENOMEM;
  }
  c->fd = fd;
  return 0;
}

void ctl_close(struct ctl_conn *c)
{
  if (c->fd >= 0)
    close(c->fd);
  free(c->buf);
  memset(c, 0, sizeof(*c));
  c->fd = -1;
}

int ctl_send(struct ctl_conn *c, uint8_t op, uint16_t flags, const char *path,
             const void *value, size_t value_len)
{
  unsigned char *req = malloc(4 + FXT_CTL_MAX_REQUEST);
  if (!req)
    return -ENOMEM;
  long n = fxt_ctl_encode_request(req, 4 + FXT_CTL_MAX_REQUEST, op, flags, path, value,
                                  value_len);
  int rc = n < 0 ? -E2BIG : 0;
  for (long off = 0; rc == 0 && off < n;) {
    ssize_t k = send(c->fd, req + off, (size_t)(n - off), MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0)
      rc = -errno;
    else
      off += k;
  }
  free(req);
  /* EPIPE with bytes to read: the server refused the connection and said why in an error
   * frame before it hung up ("too many clients ..."): the reply is that frame. */
  struct pollfd p = {c->fd, POLLIN, 0};
  if (rc == -EPIPE && poll(&p, 1, 0) == 1 && (p.revents & POLLIN))
    rc = 0;
  return rc;
}

static uint64_t now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

bool ctl_pending(const struct ctl_conn *c)
{
  int32_t st;
  uint32_t dl;
  if (fxt_ctl_parse_reply(c->buf + c->off, c->len - c->off, &st, &dl) == 1 &&
      c->len - c->off >= FXT_CTL_REPLY_HEADER + dl)
    return true;
  struct pollfd p = {c->fd, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

int ctl_frame(struct ctl_conn *c, int32_t *status, const unsigned char **data, uint32_t *len,
              int timeout_ms)
{
  uint64_t until = timeout_ms >= 0 ? now_ms() + (uint64_t)timeout_ms : 0;
  for (;;) {
    int32_t st;
    uint32_t dl;
    int rc = fxt_ctl_parse_reply(c->buf + c->off, c->len - c->off, &st, &dl);
    if (rc < 0)
      return -EBADMSG;
    if (rc == 1 && c->len - c->off >= FXT_CTL_REPLY_HEADER + dl) {
      *status = st;
      *data = c->buf + c->off + FXT_CTL_REPLY_HEADER;
      *len = dl;
      c->off += FXT_CTL_REPLY_HEADER + dl;
      return 1;
    }
    /* Keep the unparsed tail at the start, with room for a whole frame after it. */
    if (c->off) {
      memmove(c->buf, c->buf + c->off, c->len - c->off);
      c->len -= c->off;
      c->off = 0;
    }
    size_t want = FXT_CTL_REPLY_HEADER + FXT_CTL_MAX_CHUNK;
    if (c->cap < want) {
      unsigned char *b = realloc(c->buf, want);
      if (!b)
        return -ENOMEM;
      c->buf = b;
      c->cap = want;
    }
    if (timeout_ms >= 0) {
      uint64_t now = now_ms();
      struct pollfd p = {c->fd, POLLIN, 0};
      int r = now >= until ? 0 : poll(&p, 1, (int)(until - now));
      if (r < 0)
        return -errno;
      if (r == 0)
        return -ETIMEDOUT;
    }
    ssize_t n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
    if (n < 0)
      return errno == ECONNRESET ? 0 : -errno;
    if (n == 0)
      return 0;
    c->len += (size_t)n;
  }
}

void ctl_note_error(struct ctl_conn *c, const unsigned char *data, uint32_t len)
{
  size_t n = len < sizeof(c->msg) - 1 ? len : sizeof(c->msg) - 1;
  memcpy(c->msg, data, n);
  c->msg[n] = 0;
}

int ctl_call(struct ctl_conn *c, uint8_t op, uint16_t flags, const char *path,
             const void *value, size_t value_len, char **out, size_t *out_len)
{
  if (out)
    *out = NULL;
  if (out_len)
    *out_len = 0;
  c->msg[0] = 0;
  int rc = ctl_send(c, op, flags, path, value, value_len);
  if (rc != 0)
    return rc;
  char *text = NULL;
  size_t len = 0;
  for (;;) {
    int32_t st = 0;
    const unsigned char *data = NULL;
    uint32_t dl = 0;
    rc = ctl_frame(c, &st, &data, &dl, c->timeout_ms);
    if (rc <= 0) {
      free(text);
      return rc == 0 || rc == -ECONNRESET ? -EPIPE : rc;
    }
    char *t = realloc(text, len + dl + 1);
    if (!t) {
      free(text);
      return -ENOMEM;
    }
    text = t;
    memcpy(text + len, data, dl);
    len += dl;
    text[len] = 0;
    if (st != FXT_CTL_MORE) {
      if (st < 0)
        ctl_note_error(c, (const unsigned char *)text, (uint32_t)len);
      if (out)
        *out = text;
      else
        free(text);
      if (out_len)
        *out_len = len;
      return st;
    }
  }
}

bool ctl_parse_pid(const char *s, long *pid)
{
  char *end;
  if (*s < '0' || *s > '9')
    return false;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (*end || errno || v <= 0 || v > 0x3fffffff)
    return false;
  *pid = v;
  return true;
}
