/* tests/unit/server_test.h - the fixture of the live control tests (test_server.c,
 * test_server_limits.c): a minimal client of the control socket, and a session with its
 * server in a runtime directory of this run's own (FXTRACE_DIR). The includer defines
 * _GNU_SOURCE first.
 */
#ifndef FXTRACE_TEST_SERVER_H
#define FXTRACE_TEST_SERVER_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../fxtcount.h"
#include "../sanitizers.h"
#include "host/control.h"
#include "host/server.h"

FXT_TRACEPOINT(tsrv, seq, "seq=%llu", (u64, seq));

extern char **environ;

static char g_dir[128];      /* this run's runtime directory */
static char g_out[256];      /* the session's file */
static char g_sock[128];

/* ---- a minimal client --------------------------------------------------------------------- */

static inline int connect_to(const char *path)
{
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof(sa.sun_path))
    return -ENAMETOOLONG;
  memcpy(sa.sun_path, path, strlen(path) + 1);
  if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
    int e = errno;
    if (fd >= 0)
      close(fd);
    return -e;
  }
  return fd;
}

static inline void send_all(int fd, const void *p, size_t n)
{
  const char *c = p;
  while (n) {
    ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
    if (k <= 0)
      return; /* the server may hang up on garbage before it is all sent */
    c += k;
    n -= (size_t)k;
  }
}

static inline void send_request(int fd, uint8_t op, uint16_t flags, const char *path,
                                const char *value)
{
  static unsigned char req[4 + FXT_CTL_MAX_REQUEST];
  long n = fxt_ctl_encode_request(req, sizeof(req), op, flags, path, value,
                                  value ? strlen(value) : 0);
  assert_true(n > 0);
  send_all(fd, req, (size_t)n);
}

/* Reads exactly n bytes, waiting at most 10 s in all. Returns 1, 0 at EOF/reset, -1 on
 * timeout (a hang is a failure). */
static inline int recv_exact(int fd, void *buf, size_t n)
{
  char *p = buf;
  while (n) {
    struct pollfd pf = {fd, POLLIN, 0};
    if (poll(&pf, 1, 10000) != 1)
      return -1;
    ssize_t k = recv(fd, p, n, 0);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return 0;
    p += k;
    n -= (size_t)k;
  }
  return 1;
}

/* One frame: 1 with status and data (NUL-terminated, truncated to cap - 1), 0 at EOF. */
static inline int read_frame(int fd, int32_t *status, char *data, size_t cap, uint32_t *len)
{
  unsigned char h[FXT_CTL_REPLY_HEADER];
  int rc = recv_exact(fd, h, sizeof(h));
  assert_int_not_equal(rc, -1);
  if (rc == 0)
    return 0;
  uint32_t dl;
  assert_int_equal(fxt_ctl_parse_reply(h, sizeof(h), status, &dl), 1);
  static char frame[FXT_CTL_MAX_CHUNK];
  assert_int_equal(recv_exact(fd, frame, dl), 1);
  size_t keep = dl < cap - 1 ? dl : cap - 1;
  memcpy(data, frame, keep);
  data[keep] = 0;
  if (len)
    *len = dl;
  return 1;
}

/* A whole reply (MORE frames joined) into out; returns its status. */
static inline int32_t call(int fd, uint8_t op, uint16_t flags, const char *path,
                           const char *value, char *out, size_t cap)
{
  send_request(fd, op, flags, path, value);
  size_t len = 0;
  out[0] = 0;
  for (;;) {
    int32_t st;
    uint32_t dl;
    assert_int_equal(read_frame(fd, &st, out + len, cap - len, &dl), 1);
    len += strlen(out + len);
    if (st != FXT_CTL_MORE)
      return st;
  }
}

/* ---- setup -------------------------------------------------------------------------------- */

/* The FXT file at path counted (fxtcount.h: seq events), or the test fails; free() it. */
static inline struct fxtcount *count_file(const char *path)
{
  struct fxtcount *c = malloc(sizeof(*c));
  assert_non_null(c);
  if (fxtcount_file(path, "seq", c) != 0)
    fail_msg("decoding %s: %s", path, c->err);
  return c;
}

/* A session into g_out (mode discard, 64 KiB buffers), or a flight recorder (no output). */
static inline void start_session_mode(const char *events, uint32_t mode, uint32_t buffer_kb)
{
  snprintf(g_out, sizeof(g_out), "/dev/shm/fxtrace-test-server-%d.fxt", (int)getpid());
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = events,
                                   .output = mode == FXT_MODE_OVERWRITE ? "" : g_out,
                                   .buffer_kb = buffer_kb, .mode = mode};
  assert_int_equal(fxt_session_start(&cfg), 0);
  assert_int_equal(fxt_server_start(), 0);
  assert_true(fxt_server_running(g_sock, sizeof(g_sock)));
}

static inline void start_session(const char *events)
{
  start_session_mode(events, FXT_MODE_DISCARD, 64);
}

static inline int setup(void **state)
{
  (void)state;
  snprintf(g_dir, sizeof(g_dir), "/tmp/fxtrace-test-server-%d", (int)getpid());
  setenv("FXTRACE_DIR", g_dir, 1);
  return 0;
}

static inline int teardown(void **state)
{
  (void)state;
  unsetenv("FXTRACE_CTL_TIMEOUT_MS");
  fxt_server_stop();
  fxt_session_stop();
  unlink(g_out);
  char path[256];
  snprintf(path, sizeof(path), "%s/%d.sock", g_dir, (int)getpid());
  unlink(path);
  rmdir(g_dir);
  setenv("FXTRACE_DIR", g_dir, 1);
  return 0;
}

#endif
