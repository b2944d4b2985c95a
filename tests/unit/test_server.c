/* test_server - live control (src/host/server.h) against the real server thread: every op;
 * requests that come together; clients that hang back (issue 13: quiet connections give their
 * place to new ones and time out, stalled requests and replies are dropped, the client cap
 * holds only against busy connections, `trace` replies not read are capped, snapshots go to
 * regular files only, a filter write does not wait for producers blocked on a full buffer);
 * another uid is refused (by the socket's mode, and by SO_PEERCRED when the mode would let it
 * in); 10,000 garbage requests while a thread emits sequence-numbered events leave tracing on
 * and every event accounted for; a runtime directory that is not private (mode 0777, another
 * owner, a symlink) gets no socket, a clear message, and tracing goes on.
 *
 * The server is started with fxt_server_start() after the session (idempotent once the
 * session starts it itself). Each run uses a runtime directory of its own (FXTRACE_DIR);
 * deadlines are made short with FXTRACE_CTL_TIMEOUT_MS (read when the server starts). Waits
 * are on events (a hang-up, a reply), never on time.
 */
#define _GNU_SOURCE
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

static int connect_to(const char *path)
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

static void send_all(int fd, const void *p, size_t n)
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

static void send_request(int fd, uint8_t op, uint16_t flags, const char *path, const char *value)
{
  static unsigned char req[4 + FXT_CTL_MAX_REQUEST];
  long n = fxt_ctl_encode_request(req, sizeof(req), op, flags, path, value,
                                  value ? strlen(value) : 0);
  assert_true(n > 0);
  send_all(fd, req, (size_t)n);
}

/* Reads exactly n bytes, waiting at most 10 s in all. Returns 1, 0 at EOF/reset, -1 on
 * timeout (a hang is a failure). */
static int recv_exact(int fd, void *buf, size_t n)
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
static int read_frame(int fd, int32_t *status, char *data, size_t cap, uint32_t *len)
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
static int32_t call(int fd, uint8_t op, uint16_t flags, const char *path, const char *value,
                    char *out, size_t cap)
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

/* A session into g_out (mode discard, 64 KiB buffers), or a flight recorder (no output). */
/* The FXT file at path counted (fxtcount.h: seq events), or the test fails; free() it. */
static struct fxtcount *count_file(const char *path)
{
  struct fxtcount *c = malloc(sizeof(*c));
  assert_non_null(c);
  if (fxtcount_file(path, "seq", c) != 0)
    fail_msg("decoding %s: %s", path, c->err);
  return c;
}

static void start_session_mode(const char *events, uint32_t mode, uint32_t buffer_kb)
{
  snprintf(g_out, sizeof(g_out), "/dev/shm/fxtrace-test-server-%d.fxt", (int)getpid());
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = events,
                                   .output = mode == FXT_MODE_OVERWRITE ? "" : g_out,
                                   .buffer_kb = buffer_kb, .mode = mode};
  assert_int_equal(fxt_session_start(&cfg), 0);
  assert_int_equal(fxt_server_start(), 0);
  assert_true(fxt_server_running(g_sock, sizeof(g_sock)));
}

static void start_session(const char *events)
{
  start_session_mode(events, FXT_MODE_DISCARD, 64);
}

static int setup(void **state)
{
  (void)state;
  snprintf(g_dir, sizeof(g_dir), "/tmp/fxtrace-test-server-%d", (int)getpid());
  setenv("FXTRACE_DIR", g_dir, 1);
  return 0;
}

static int teardown(void **state)
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

/* ---- every op ----------------------------------------------------------------------------- */

static void every_op(void **state)
{
  (void)state;
  start_session("");
  char want[300], buf[1 << 16];
  snprintf(want, sizeof(want), "%s/%d.sock", g_dir, (int)getpid());
  assert_string_equal(g_sock, want);
  struct stat sb;
  assert_int_equal(lstat(g_sock, &sb), 0);
  assert_true(S_ISSOCK(sb.st_mode));
  assert_int_equal(sb.st_mode & 0777, 0600);
  assert_int_equal(lstat(g_dir, &sb), 0);
  assert_int_equal(sb.st_mode & 0777, 0700);

  int fd = connect_to(g_sock);
  assert_true(fd >= 0);
  assert_int_equal(call(fd, FXT_CTL_INFO, 0, "", NULL, buf, sizeof(buf)), 0);
  snprintf(want, sizeof(want), "pid=%d\n", (int)getpid());
  assert_non_null(strstr(buf, want));
  assert_non_null(strstr(buf, "session=running\n"));
  assert_non_null(strstr(buf, "events=0\n"));
  snprintf(want, sizeof(want), "output=%s\n", g_out);
  assert_non_null(strstr(buf, want));

  assert_int_equal(call(fd, FXT_CTL_LIST, 0, "", NULL, buf, sizeof(buf)), 0);
  assert_non_null(strstr(buf, "d events\n"));
  assert_non_null(strstr(buf, "f trace_pipe\n"));
  assert_int_equal(call(fd, FXT_CTL_LIST, 0, "events/tsrv", NULL, buf, sizeof(buf)), 0);
  assert_non_null(strstr(buf, "f enable\n"));
  assert_non_null(strstr(buf, "d seq\n"));
  assert_int_equal(call(fd, FXT_CTL_LIST, 0, "nosuch", NULL, buf, sizeof(buf)), FXT_ENOENT);

  assert_int_equal(call(fd, FXT_CTL_STAT, 0, "events", NULL, buf, sizeof(buf)), 0);
  assert_string_equal(buf, "d\n");
  assert_int_equal(call(fd, FXT_CTL_STAT, 0, "trace_marker", NULL, buf, sizeof(buf)), 0);
  assert_string_equal(buf, "f w\n");
  assert_int_equal(call(fd, FXT_CTL_STAT, 0, "events/tsrv/seq/id", NULL, buf, sizeof(buf)), 0);
  assert_string_equal(buf, "f r\n");
  assert_int_equal(call(fd, FXT_CTL_STAT, 0, "set_event", NULL, buf, sizeof(buf)), 0);
  assert_string_equal(buf, "f rw\n");

  /* WRITE: the kernel's errors, nothing changed; then on, and set_event says so. */
  assert_int_equal(call(fd, FXT_CTL_WRITE, FXT_CTL_F_TRUNC, "events/tsrv/seq/enable", "2\n",
                        buf, sizeof(buf)),
                   FXT_EINVAL);
  assert_int_equal(call(fd, FXT_CTL_WRITE, FXT_CTL_F_TRUNC, "events/tsrv/seq/id", "1", buf,
                        sizeof(buf)),
                   FXT_EINVAL);
  assert_int_equal(call(fd, FXT_CTL_READ, 0, "set_event", NULL, buf, sizeof(buf)), 0);
  assert_string_equal(buf, "");
  assert_int_equal(call(fd, FXT_CTL_WRITE, FXT_CTL_F_TRUNC, "events/tsrv/seq/enable", "1\n",
                        buf, sizeof(buf)),
                   0);
  assert_int_equal(call(fd, FXT_CTL_READ, 0, "set_event", NULL, buf, sizeof(buf)), 0);
  assert_string_equal(buf, "tsrv:seq\n");

  /* PIPE on a connection of its own streams lines as they come; READ of trace_pipe on the
   * other connection meanwhile answers at once (the stream blocks nobody). */
  int pipe_fd = connect_to(g_sock);
  assert_true(pipe_fd >= 0);
  send_request(pipe_fd, FXT_CTL_PIPE, 0, "trace_pipe", NULL);
  assert_int_equal(call(fd, FXT_CTL_READ, 0, "tracing_on", NULL, buf, sizeof(buf)), 0);
  assert_string_equal(buf, "1\n");
  for (uint64_t i = 0; i < 100; i++)
    FXT_TRACE(tsrv, seq, i);
  size_t got = 0;
  char *lines = calloc(1, 1 << 20);
  assert_non_null(lines);
  while (!strstr(lines, "seq=99\n")) {
    int32_t st;
    uint32_t dl;
    assert_int_equal(read_frame(pipe_fd, &st, lines + got, (1 << 20) - got, &dl), 1);
    assert_int_equal(st, FXT_CTL_MORE);
    got += dl;
  }
  assert_non_null(strstr(lines, "seq: seq=0\n"));
  free(lines);
  close(pipe_fd);

  /* Two requests in one send: two replies, in order. */
  unsigned char two[256];
  long a = fxt_ctl_encode_request(two, sizeof(two), FXT_CTL_STAT, 0, "trace", NULL, 0);
  long b = fxt_ctl_encode_request(two + a, sizeof(two) - (size_t)a, FXT_CTL_READ, 0,
                                  "events/tsrv/seq/enable", NULL, 0);
  send_all(fd, two, (size_t)(a + b));
  int32_t st;
  assert_int_equal(read_frame(fd, &st, buf, sizeof(buf), NULL), 1);
  assert_int_equal(st, 0);
  assert_string_equal(buf, "f rw\n");
  assert_int_equal(read_frame(fd, &st, buf, sizeof(buf), NULL), 1);
  if (st == FXT_CTL_MORE) /* the READ came in a chunk and an empty last frame */
    assert_int_equal(read_frame(fd, &st, buf + strlen(buf), sizeof(buf) - strlen(buf), NULL),
                     1);
  assert_int_equal(st, 0);
  assert_string_equal(buf, "1\n");

  /* A marker written through the socket shows up in trace. */
  assert_int_equal(call(fd, FXT_CTL_WRITE, FXT_CTL_F_TRUNC, "trace_marker", "hello-server\n",
                        buf, sizeof(buf)),
                   0);
  for (int i = 0; i < 500; i++) { /* the consumer drains every 10 ms: poll, do not sleep */
    assert_int_equal(call(fd, FXT_CTL_READ, 0, "trace", NULL, buf, sizeof(buf)), 0);
    if (strstr(buf, "tracing_mark_write: hello-server\n"))
      break;
    usleep(10000);
  }
  assert_non_null(strstr(buf, "tracing_mark_write: hello-server\n"));

  close(fd);
}

/* ---- clients that hang back ------------------------------------------------------------- */

#define SHORT_MS 300 /* FXTRACE_CTL_TIMEOUT_MS of these tests: idle after 6 x, grace 300 ms */

static uint64_t mono_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Waits (at most 10 s) until the server hangs up on fd, reading nothing: 1 when it did. */
static int hung_up(int fd)
{
  struct pollfd pf = {fd, POLLRDHUP, 0};
  return poll(&pf, 1, 10000) == 1 && (pf.revents & (POLLHUP | POLLRDHUP)) != 0;
}

/* Issue 13 (4): 64 connections that send nothing never lock the owner out. A connection
 * quiet for the grace gives its place to a new one (the quietest first), one that sends half
 * a request is dropped after the timeout, and an idle one after 6 timeouts; only when every
 * connection is busy (trace_pipe streams) does a new one get EBUSY, with the reason. */
static void quiet_clients_never_lock_out(void **state)
{
  (void)state;
  char v[16], buf[4096];
  snprintf(v, sizeof(v), "%d", SHORT_MS);
  setenv("FXTRACE_CTL_TIMEOUT_MS", v, 1);
  start_session("");
  int q[FXT_CTL_MAX_CLIENTS];
  for (int i = 0; i < FXT_CTL_MAX_CLIENTS - 1; i++) { /* served, then quiet, in this order */
    q[i] = connect_to(g_sock);
    assert_true(q[i] >= 0);
    assert_int_equal(call(q[i], FXT_CTL_STAT, 0, "trace", NULL, buf, sizeof(buf)), 0);
  }
  /* The 64th sends half a request: dropped after the timeout (and so the others have been
   * quiet for longer than the grace: they were before it began). */
  uint64_t t0 = mono_ms();
  int half = connect_to(g_sock);
  assert_true(half >= 0);
  unsigned char part[6] = {40, 0, 0, 0, FXT_CTL_VERSION, FXT_CTL_STAT};
  send_all(half, part, sizeof(part));
  int32_t st;
  assert_int_equal(read_frame(half, &st, buf, sizeof(buf), NULL), 1); /* the reason, */
  assert_int_equal(st, -ETIMEDOUT);
  if (!strstr(buf, "request incomplete"))
    fail_msg("no reason: '%s'", buf);
  assert_true(mono_ms() - t0 >= SHORT_MS);
  assert_int_equal(read_frame(half, &st, buf, sizeof(buf), NULL), 0); /* then EOF */
  close(half);
  unsigned char h[FXT_CTL_REPLY_HEADER];
  q[FXT_CTL_MAX_CLIENTS - 1] = connect_to(g_sock); /* full again */
  assert_true(q[FXT_CTL_MAX_CLIENTS - 1] >= 0);
  assert_int_equal(call(q[FXT_CTL_MAX_CLIENTS - 1], FXT_CTL_READ, 0, "tracing_on", NULL, buf,
                        sizeof(buf)),
                   0);
  /* A new client is served at once, in the place of the quietest (the first). */
  int fd = connect_to(g_sock);
  assert_true(fd >= 0);
  assert_int_equal(call(fd, FXT_CTL_READ, 0, "tracing_on", NULL, buf, sizeof(buf)), 0);
  assert_string_equal(buf, "1\n");
  assert_int_equal(hung_up(q[0]), 1);
  assert_int_equal(recv_exact(q[0], h, sizeof(h)), 0);
  close(q[0]);
  q[0] = fd;
  /* Idle connections are closed after 6 timeouts: one connected now, sending nothing. */
  t0 = mono_ms();
  int idle = connect_to(g_sock); /* takes the place of q[1] */
  assert_true(idle >= 0);
  assert_int_equal(hung_up(q[1]), 1);
  assert_int_equal(hung_up(idle), 1);
  assert_true(mono_ms() - t0 >= 6 * SHORT_MS);
  close(idle);
  for (int i = 0; i < FXT_CTL_MAX_CLIENTS; i++)
    close(q[i]);

  /* Every connection streams trace_pipe (nothing to send: busy, not quiet): a new client is
   * refused with the reason, and the streams go on. */
  int streams[FXT_CTL_MAX_CLIENTS];
  for (int i = 0; i < FXT_CTL_MAX_CLIENTS; i++) {
    streams[i] = -1;
    for (int attempt = 0; streams[i] < 0 && attempt < 1000; attempt++) {
      /* (the closes above are seen by the server in its own time: until then, busy) */
      int c = connect_to(g_sock);
      assert_true(c >= 0);
      send_request(c, FXT_CTL_READ, 0, "tracing_on", NULL);
      int32_t st;
      /* Refused, or (slow machines) taken over before its request was read: again. */
      if (read_frame(c, &st, buf, sizeof(buf), NULL) == 0 || st == FXT_EBUSY) {
        close(c);
        continue;
      }
      while (st == FXT_CTL_MORE)
        assert_int_equal(read_frame(c, &st, buf, sizeof(buf), NULL), 1);
      assert_int_equal(st, 0);
      send_request(c, FXT_CTL_PIPE, 0, "trace_pipe", NULL);
      streams[i] = c;
    }
    assert_true(streams[i] >= 0);
  }
  int extra = connect_to(g_sock);
  assert_true(extra >= 0);
  send_request(extra, FXT_CTL_INFO, 0, "", NULL);
  assert_int_equal(read_frame(extra, &st, buf, sizeof(buf), NULL), 1);
  assert_int_equal(st, FXT_EBUSY);
  if (!strstr(buf, "too many clients"))
    fail_msg("EBUSY without the reason: '%s'", buf);
  close(extra);
  for (int i = 0; i < FXT_CTL_MAX_CLIENTS; i++)
    close(streams[i]);
}

/* Issue 13 (6): 62 clients ask for `trace` (megabytes: the live view, formatted) and never
 * read. `trace` is formatted a read at a time (live.h live_iter): all of them are served, the
 * process's memory grows by a chunk or two each, not by the text (62 x the view's megabytes),
 * and the server answers others meanwhile. A flight recorder's `trace` is made whole at open
 * (its copies are the consumer's again after it): only as many as fit in the server's 32 MiB
 * are, the others get EBUSY with the reason at once. Then, with a short timeout, a reader
 * that takes nothing is hung up on. */
#define READERS 62

static int ask_trace_small(void)
{
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int small = 4096;
  assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  memcpy(sa.sun_path, g_sock, strlen(g_sock) + 1);
  assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  send_request(fd, FXT_CTL_READ, 0, "trace", NULL);
  return fd;
}

/* Reads `trace` whole on fd (retrying while it is refused as busy); returns its size. */
static size_t read_trace(int fd)
{
  static char big[1 << 16];
  for (int attempt = 0; attempt < 10000; attempt++) {
    size_t size = 0;
    int32_t st = FXT_CTL_MORE;
    send_request(fd, FXT_CTL_READ, 0, "trace", NULL);
    while (st == FXT_CTL_MORE) {
      uint32_t dl;
      assert_int_equal(read_frame(fd, &st, big, sizeof(big), &dl), 1);
      size += dl;
    }
    if (st == 0)
      return size;
    assert_int_equal(st, FXT_EBUSY); /* (hang-ups not yet seen by the server) */
  }
  fail_msg("trace refused 10000 times");
  return 0;
}

/* Resident bytes of this process. */
static uint64_t rss_bytes(void)
{
  FILE *f = fopen("/proc/self/statm", "r");
  assert_non_null(f);
  unsigned long size = 0, resident = 0;
  assert_int_equal(fscanf(f, "%lu %lu", &size, &resident), 2);
  fclose(f);
  return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* READERS clients ask for `trace` and read only the first frame's header: into r[], with
 * how many were served and refused (checking the reason). */
static void ask_and_never_read(int *r, int *admitted, int *refused)
{
  static char msg[1 << 16];
  *admitted = *refused = 0;
  for (int i = 0; i < READERS; i++) {
    r[i] = ask_trace_small();
    unsigned char h[FXT_CTL_REPLY_HEADER]; /* the first frame's header, no more */
    assert_int_equal(recv_exact(r[i], h, sizeof(h)), 1);
    int32_t st;
    uint32_t dl;
    assert_int_equal(fxt_ctl_parse_reply(h, sizeof(h), &st, &dl), 1);
    if (st == FXT_CTL_MORE) {
      (*admitted)++;
      continue;
    }
    assert_int_equal(st, FXT_EBUSY);
    assert_int_equal(recv_exact(r[i], msg, dl), 1);
    msg[dl] = 0;
    if (!strstr(msg, "not yet taken"))
      fail_msg("EBUSY without the reason: '%s'", msg);
    (*refused)++;
  }
}

/* 400,000 events paced by the consumer (20,000, then a drain): the view gets them all,
 * however fast the producer (a burst of 400,000 into a 4 MiB buffer drops most of them, and
 * how many the view then holds depends on when the consumer ran). */
static void fill_view(void)
{
  for (uint64_t i = 0; i < 400000; i++) {
    FXT_TRACE(tsrv, seq, i);
    if (i % 20000 == 19999)
      assert_int_equal(fxt_session_flush(), 0);
  }
  assert_int_equal(fxt_session_flush(), 0);
}

static void readers_that_never_read_are_bounded(void **state)
{
  (void)state;
  setenv("FXTRACE_CTL_TIMEOUT_MS", "3600000", 1); /* nobody is dropped while we count */
  start_session("tsrv:seq");
  fill_view();
  int fd = connect_to(g_sock);
  assert_true(fd >= 0);
  size_t size = read_trace(fd);
  assert_true(size > (1u << 20)); /* the view holds megabytes of lines */

  int r[READERS], admitted, refused;
  uint64_t rss0 = rss_bytes();
  ask_and_never_read(r, &admitted, &refused);
  uint64_t grown = rss_bytes() - rss0;
  print_message("trace of %zu bytes: %d readers served, %d refused; memory +%llu KiB\n", size,
                admitted, refused, (unsigned long long)(grown >> 10));
  assert_int_equal(admitted, READERS);
  /* A chunk of text and a frame each (2 x 64 KiB; more with a sanitizer's shadow memory),
   * not the view's text: that was READERS x size. */
  assert_true(grown < (uint64_t)READERS * size / 4);
  /* Answered meanwhile. */
  char buf[256];
  assert_int_equal(call(fd, FXT_CTL_READ, 0, "tracing_on", NULL, buf, sizeof(buf)), 0);
  assert_string_equal(buf, "1\n");
  for (int i = 0; i < READERS; i++)
    close(r[i]);
  assert_int_equal(read_trace(fd), size); /* the same view, read whole again */
  close(fd);

  /* A short timeout: a reader that takes nothing of its reply is hung up on. */
  fxt_server_stop();
  char v[16];
  snprintf(v, sizeof(v), "%d", SHORT_MS);
  setenv("FXTRACE_CTL_TIMEOUT_MS", v, 1);
  assert_int_equal(fxt_server_start(), 0);
  uint64_t t0 = mono_ms();
  int slow = ask_trace_small();
  assert_int_equal(hung_up(slow), 1);
  assert_true(mono_ms() - t0 >= SHORT_MS);
  close(slow);
}

static void flight_recorder_readers_are_capped(void **state)
{
  (void)state;
  setenv("FXTRACE_CTL_TIMEOUT_MS", "3600000", 1);
  start_session_mode("tsrv:seq", FXT_MODE_OVERWRITE, 16384);
  for (uint64_t i = 0; i < 400000; i++)
    FXT_TRACE(tsrv, seq, i); /* all kept: 16 MiB holds them */
  int fd = connect_to(g_sock);
  assert_true(fd >= 0);
  size_t size = read_trace(fd);
  assert_true(size > (1u << 20)); /* the view's copies: megabytes of lines */
  int r[READERS], admitted, refused;
  ask_and_never_read(r, &admitted, &refused);
  print_message("flight recorder's trace of %zu bytes: %d readers admitted, %d refused\n",
                size, admitted, refused);
  /* Each admitted one holds its text (>= size bytes) until it is gone. */
  assert_true(admitted >= 1);
  assert_true(refused >= 1);
  assert_true((uint64_t)(admitted - 1) * size < (32u << 20));
  assert_int_equal(admitted + refused, READERS);
  char buf[256];
  assert_int_equal(call(fd, FXT_CTL_READ, 0, "tracing_on", NULL, buf, sizeof(buf)), 0);
  assert_string_equal(buf, "1\n");
  for (int i = 0; i < READERS; i++)
    close(r[i]);
  assert_true(read_trace(fd) > (1u << 20)); /* what they held is free again */
  close(fd);
}

/* Issue 13 (5): a snapshot to a FIFO (with or without a reader), a socket or a directory is
 * refused at once with the reason; the server and the session go on, and a snapshot to a
 * regular file is written. */
static void snapshot_only_to_a_regular_file(void **state)
{
  (void)state;
  /* A flight recorder: its buffers keep what a snapshot writes. */
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "tsrv:seq",
                                   .output = "", .buffer_kb = 64, .mode = FXT_MODE_OVERWRITE};
  assert_int_equal(fxt_session_start(&cfg), 0);
  assert_int_equal(fxt_server_start(), 0);
  assert_true(fxt_server_running(g_sock, sizeof(g_sock)));
  char fifo[160], file[160], buf[512];
  snprintf(fifo, sizeof(fifo), "/tmp/fxtrace-test-server-%d.fifo", (int)getpid());
  snprintf(file, sizeof(file), "/dev/shm/fxtrace-test-server-%d.snap.fxt", (int)getpid());
  unlink(fifo);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  int fd = connect_to(g_sock);
  assert_true(fd >= 0);
  assert_int_equal(call(fd, FXT_CTL_SNAPSHOT, 0, fifo, NULL, buf, sizeof(buf)), FXT_EINVAL);
  if (!strstr(buf, "not a regular file (a FIFO)"))
    fail_msg("no reason: '%s'", buf);
  int rd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a reader that never reads */
  assert_true(rd >= 0);
  assert_int_equal(call(fd, FXT_CTL_SNAPSHOT, 0, fifo, NULL, buf, sizeof(buf)), FXT_EINVAL);
  assert_non_null(strstr(buf, "not a regular file (a FIFO)"));
  char nothing[1];
  assert_int_equal(read(rd, nothing, 1), 0); /* nothing was written to it */
  close(rd);
  assert_int_equal(call(fd, FXT_CTL_SNAPSHOT, 0, g_dir, NULL, buf, sizeof(buf)) < 0, 1);
  assert_int_equal(call(fd, FXT_CTL_SNAPSHOT, 0, g_sock, NULL, buf, sizeof(buf)), FXT_EINVAL);
  assert_non_null(strstr(buf, "not a regular file (a socket)"));
  assert_int_equal(fxt_snapshot(fifo), FXT_EINVAL); /* the API as the server */
  unlink(fifo);
  for (uint64_t i = 0; i < 100; i++)
    FXT_TRACE(tsrv, seq, i);
  assert_int_equal(call(fd, FXT_CTL_SNAPSHOT, 0, file, NULL, buf, sizeof(buf)), 0);
  char want[200];
  snprintf(want, sizeof(want), "snapshot %s\n", file);
  assert_string_equal(buf, want);
  struct fxtcount *c = count_file(file);
  assert_int_equal(c->nthreads, 1);
  assert_int_equal(c->t[0].events, 100);
  free(c);
  unlink(file);
  assert_int_equal(call(fd, FXT_CTL_READ, 0, "tracing_on", NULL, buf, sizeof(buf)), 0);
  close(fd);
}

/* Issue 13 (7): in block mode, with every producer waiting for room (the consumer blocked
 * writing into a FIFO nobody reads), replacing a filter does not wait for them. */
static _Atomic bool block_stop;
static _Atomic pid_t block_tid;

static void *block_emitter(void *arg)
{
  (void)arg;
  atomic_store(&block_tid, gettid());
  for (uint64_t i = 0; !atomic_load(&block_stop); i++)
    FXT_TRACE(tsrv, seq, i);
  return NULL;
}

static void *drain_fifo(void *arg)
{
  int fd = *(int *)arg;
  char b[65536];
  struct pollfd pf = {fd, POLLIN, 0};
  while (poll(&pf, 1, -1) == 1) { /* until the writer closes it */
    ssize_t n = read(fd, b, sizeof(b));
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
      break;
  }
  return NULL;
}

static void filter_write_does_not_wait_for_blocked_producers(void **state)
{
  (void)state;
  snprintf(g_out, sizeof(g_out), "/tmp/fxtrace-test-server-%d.out", (int)getpid());
  unlink(g_out);
  assert_int_equal(mkfifo(g_out, 0600), 0);
  int rd = open(g_out, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* read only at the end */
  assert_true(rd >= 0);
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "tsrv:seq",
                                   .output = g_out, .buffer_kb = 64,
                                   .mode = FXT_MODE_BLOCK, .block_timeout_ms = 600000};
  assert_int_equal(fxt_session_start(&cfg), 0);
  assert_int_equal(fxt_server_start(), 0);
  assert_true(fxt_server_running(g_sock, sizeof(g_sock)));
  atomic_store(&block_stop, false);
  atomic_store(&block_tid, 0);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, block_emitter, NULL), 0);
  /* Until its buffer is full (the pipe filled first): it waits in the reserve. */
  struct fxt_thread_stats ts;
  for (;;) {
    pid_t tid = atomic_load(&block_tid);
    if (tid && fxt_control_thread_stats(tid, &ts) == 0 && ts.bytes + 256 > 64 * 1024)
      break;
    sched_yield();
  }
  /* Before the fix the server thread waited in the sync for as long as the producer is
   * blocked (here 600 s): a failed reply wait then hangs in the teardown's join. */
  alarm(120);
  int fd = connect_to(g_sock);
  assert_true(fd >= 0);
  char buf[512];
  uint64_t t0 = mono_ms();
  assert_int_equal(call(fd, FXT_CTL_WRITE, FXT_CTL_F_TRUNC, "events/tsrv/seq/filter",
                        "seq > 0", buf, sizeof(buf)),
                   0);
  assert_int_equal(call(fd, FXT_CTL_WRITE, FXT_CTL_F_TRUNC, "events/tsrv/seq/filter",
                        "seq > 1", buf, sizeof(buf)),
                   0); /* replaces the first: the old program is freed after a sync */
  assert_int_equal(call(fd, FXT_CTL_WRITE, FXT_CTL_F_TRUNC, "events/tsrv/seq/filter", "0",
                        buf, sizeof(buf)),
                   0);
  print_message("3 filter writes with the producer blocked: %llu ms\n",
                (unsigned long long)(mono_ms() - t0));
  assert_int_equal(call(fd, FXT_CTL_READ, 0, "events/tsrv/seq/filter", NULL, buf,
                        sizeof(buf)),
                   0);
  assert_string_equal(buf, "none\n");
  close(fd);
  /* The end: the pipe is read, the producer gets room and stops, the session stops. */
  atomic_store(&block_stop, true);
  pthread_t d;
  assert_int_equal(pthread_create(&d, NULL, drain_fifo, &rd), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  fxt_server_stop();
  assert_int_equal(fxt_session_stop(), 0);
  assert_int_equal(pthread_join(d, NULL), 0);
  close(rd);
  alarm(0);
}

/* ---- another uid ---------------------------------------------------------------------------- */

/* The child (a fresh process, spawned): as uid/gid 65534, connect and ask INFO. Exit 10:
 * connect refused by the file system; 20: connected but hung up on without a reply; 30: got
 * a reply (a failure); 40: setup failed. */
static int child_connect(const char *path)
{
  if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
    return 40;
  int fd = connect_to(path);
  if (fd == -EACCES)
    return 10;
  if (fd < 0)
    return 40;
  unsigned char req[64];
  long n = fxt_ctl_encode_request(req, sizeof(req), FXT_CTL_INFO, 0, "", NULL, 0);
  send_all(fd, req, (size_t)n);
  unsigned char h[FXT_CTL_REPLY_HEADER];
  int rc = recv_exact(fd, h, sizeof(h));
  return rc == 0 ? 20 : rc == 1 ? 30 : 40;
}

static int spawn_child(void)
{
  char self[64] = "/proc/self/exe";
  char *argv[] = {self, (char *)"--child-connect", g_sock, NULL};
  pid_t pid;
  assert_int_equal(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ), 0);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  return WEXITSTATUS(status);
}

static void another_uid_is_refused(void **state)
{
  (void)state;
  if (geteuid() != 0)
    skip(); /* only root can be another user */
  start_session("");
  /* The socket's mode and the directory's keep another user out... */
  assert_int_equal(spawn_child(), 10);
  /* ...and if they did not, SO_PEERCRED would. */
  assert_int_equal(chmod(g_dir, 0711), 0);
  assert_int_equal(chmod(g_sock, 0666), 0);
  int code = spawn_child();
  chmod(g_sock, 0600);
  chmod(g_dir, 0700);
  assert_int_equal(code, 20);
  /* The owner still gets in. */
  int fd = connect_to(g_sock);
  char buf[512];
  assert_true(fd >= 0);
  assert_int_equal(call(fd, FXT_CTL_INFO, 0, "", NULL, buf, sizeof(buf)), 0);
  close(fd);
}

/* ---- garbage while tracing ------------------------------------------------------------------ */

#define GARBAGE 10000
#define MIN_EVENTS 1000000u

static _Atomic bool garbage_done;
static uint64_t emitted;

static void *emitter(void *arg)
{
  (void)arg;
  uint64_t i = 0;
  /* Until the garbage is over and at least MIN_EVENTS: a count, not a time. */
  while (!atomic_load(&garbage_done) || i < MIN_EVENTS) {
    FXT_TRACE(tsrv, seq, i); /* (arguments are evaluated only when enabled) */
    i++;
  }
  emitted = i;
  return NULL;
}

static uint64_t rng = 88172645463325252u;
static uint64_t next_rand(void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* One garbage request on a fresh connection; checks the reply it must get. */
static void garbage(int kind)
{
  unsigned char b[512];
  size_t n = 0;
  int32_t want = 1; /* 1: any error frame or none; else this status, then EOF */
  uint32_t size;
  uint16_t u16;
  switch (kind) {
  case 0: /* random bytes */
    n = next_rand() % 300;
    for (size_t i = 0; i < n; i++)
      b[i] = (unsigned char)next_rand();
    break;
  case 1: /* a size past the limit */
    size = FXT_CTL_MAX_REQUEST + 1 + (uint32_t)(next_rand() % (UINT32_MAX - FXT_CTL_MAX_REQUEST));
    memcpy(b, &size, 4);
    n = 4 + next_rand() % 64;
    want = FXT_EMSGSIZE;
    break;
  case 2: /* a size below the header */
    size = (uint32_t)(next_rand() % 6);
    memcpy(b, &size, 4);
    n = 4 + size;
    want = FXT_EMSGSIZE;
    break;
  case 3:   /* wrong version */
  case 4:   /* unknown op */
  case 5: { /* path longer than the request, or a NUL in it, or flags not allowed */
    n = (size_t)fxt_ctl_encode_request(b, sizeof(b), FXT_CTL_STAT, 0, "xtrace", NULL, 0);
    uint64_t r = next_rand();
    if (kind == 3) {
      b[4] = (unsigned char)(2 + r % 250);
    } else if (kind == 4) {
      b[5] = (unsigned char)(r % 2 ? 0 : FXT_CTL_SNAPSHOT + 1 + r % (255 - FXT_CTL_SNAPSHOT));
    } else if (r % 3 == 0) { /* path_len past the request (and maybe past 4095) */
      u16 = (uint16_t)(7 + r % 60000);
      memcpy(b + 8, &u16, 2);
    } else if (r % 3 == 1) {
      b[12] = 0;
    } else { /* TRUNC on a STAT */
      u16 = FXT_CTL_F_TRUNC;
      memcpy(b + 6, &u16, 2);
    }
    want = FXT_EBADMSG;
    break;
  }
  case 6: /* a frame cut short, then the connection closes */
    size = 100;
    memcpy(b, &size, 4);
    n = 4 + next_rand() % 90;
    for (size_t i = 4; i < n; i++)
      b[i] = (unsigned char)next_rand();
    want = 0;
    break;
  default: { /* well formed, on paths that do not exist (never a real file to change) */
    char path[64] = "x";
    for (int i = 1; i < 40; i++)
      path[i] = (char)(33 + next_rand() % 94);
    path[40] = 0;
    uint8_t op = (uint8_t)(FXT_CTL_LIST + next_rand() % 5);
    n = (size_t)fxt_ctl_encode_request(b, sizeof(b), op, op == FXT_CTL_WRITE ? 1 : 0, path,
                                       op == FXT_CTL_WRITE ? "1" : NULL, op == FXT_CTL_WRITE);
    want = FXT_ENOENT;
    break;
  }
  }
  int fd = connect_to(g_sock);
  assert_true(fd >= 0);
  send_all(fd, b, n);
  shutdown(fd, SHUT_WR); /* the server sees the end: a cut frame is dropped, not waited for */
  int32_t st;
  char data[256];
  int r = read_frame(fd, &st, data, sizeof(data), NULL);
  if (want == 0)
    assert_int_equal(r, 0);
  else if (want != 1) {
    assert_int_equal(r, 1);
    if (st != want)
      fail_msg("kind %d: status %d, want %d (%s)", kind, st, want, data);
  }
  if (want < 0 && want != FXT_ENOENT) /* a malformed request: hung up on after the error */
    assert_int_equal(read_frame(fd, &st, data, sizeof(data), NULL), 0);
  close(fd);
}

static void garbage_leaves_tracing_exact(void **state)
{
  (void)state;
  start_session("tsrv:seq");
  atomic_store(&garbage_done, false);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, emitter, NULL), 0);
  for (int i = 0; i < GARBAGE; i++)
    garbage(i % 8);
  atomic_store(&garbage_done, true);
  assert_int_equal(pthread_join(t, NULL), 0);

  /* The server still answers, and nothing it was sent changed tracing. */
  char buf[4096];
  int fd = connect_to(g_sock);
  assert_true(fd >= 0);
  assert_int_equal(call(fd, FXT_CTL_READ, 0, "tracing_on", NULL, buf, sizeof(buf)), 0);
  assert_string_equal(buf, "1\n");
  assert_int_equal(call(fd, FXT_CTL_READ, 0, "set_event", NULL, buf, sizeof(buf)), 0);
  assert_string_equal(buf, "tsrv:seq\n");
  close(fd);

  fxt_server_stop();
  assert_int_equal(fxt_session_stop(), 0);
  struct fxtcount *c = count_file(g_out);
  uint64_t events = 0, lost = 0;
  for (int i = 0; i < c->nthreads; i++) {
    struct fxtcount_thread *th = &c->t[i];
    uint64_t l = th->dropped + th->overrun + th->lost;
    assert_false(th->backwards);
    if (th->events) /* the emitter: what it lost are the holes, and the end it lost */
      assert_int_equal(th->gaps + (emitted - th->next_seq), l);
    events += th->events;
    lost += l;
  }
  print_message("%llu emitted: %llu recorded + %llu dropped\n", (unsigned long long)emitted,
                (unsigned long long)events, (unsigned long long)lost);
  assert_int_equal(events + lost, emitted);
  free(c);
}

/* ---- the runtime directory ------------------------------------------------------------------ */

/* Runs fxt_server_start with stderr captured into msg. */
static int start_captured(char *msg, size_t size)
{
  char path[128];
  snprintf(path, sizeof(path), "/tmp/fxtrace-test-server-%d.err", (int)getpid());
  fflush(stderr);
  int saved = dup(2), f = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  assert_true(saved >= 0 && f >= 0);
  dup2(f, 2);
  int rc = fxt_server_start();
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  ssize_t n = pread(f, msg, size - 1, 0);
  msg[n > 0 ? n : 0] = 0;
  close(f);
  unlink(path);
  return rc;
}

/* The server refuses dir; no socket appears; tracing records every event all the same. */
static void refused(const char *dir, const char *reason)
{
  char msg[512], sock[256];
  setenv("FXTRACE_DIR", dir, 1);
  fxt_server_stop();
  assert_int_equal(start_captured(msg, sizeof(msg)), FXT_EPERM);
  if (!strstr(msg, "live control off") || !strstr(msg, reason))
    fail_msg("message '%s' does not say '%s'", msg, reason);
  assert_false(fxt_server_running(NULL, 0));
  snprintf(sock, sizeof(sock), "%s/%d.sock", dir, (int)getpid());
  assert_int_equal(access(sock, F_OK), -1);
  assert_int_equal(fxt_session_running(), 1);
}

static void runtime_dir_must_be_private(void **state)
{
  (void)state;
  /* Created 0700 when missing (setup: FXTRACE_DIR does not exist yet). */
  start_session("tsrv:seq");
  struct stat st;
  assert_int_equal(lstat(g_dir, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0700);

  assert_int_equal(chmod(g_dir, 0777), 0);
  refused(g_dir, "mode 0777 lets group or others in");
  assert_int_equal(chmod(g_dir, 0700), 0);

  char link[160];
  snprintf(link, sizeof(link), "%s.link", g_dir);
  unlink(link);
  assert_int_equal(symlink(g_dir, link), 0);
  refused(link, "symbolic link");
  unlink(link);

  if (geteuid() == 0) {
    assert_int_equal(chown(g_dir, 65534, 65534), 0);
    refused(g_dir, "owned by uid 65534");
    assert_int_equal(chown(g_dir, 0, 0), 0);
  }

  for (uint64_t i = 0; i < 1000; i++)
    FXT_TRACE(tsrv, seq, i);
  assert_int_equal(fxt_session_stop(), 0);
  struct fxtcount *c = count_file(g_out);
  assert_int_equal(c->nthreads, 1);
  assert_int_equal(c->t[0].events, 1000);
  free(c);

  /* A private directory again: the socket is back. */
  setenv("FXTRACE_DIR", g_dir, 1);
  assert_int_equal(fxt_server_start(), 0);
  assert_true(fxt_server_running(NULL, 0));
}

/* ---- fork ---------------------------------------------------------------------------------- */

/* In the child: its own server answers on its own socket, and the parent's still answers.
 * Exit 0, 77 when the session did not call fxt_server_after_fork (the server's state is the
 * parent's copy), or the number of the check that failed. */
static int forked_child(pid_t parent)
{
  char path[128], want[64], buf[4096];
  if (!fxt_server_running(path, sizeof(path)))
    return 1;
  snprintf(want, sizeof(want), "/%d.sock", (int)parent);
  if (strstr(path, want))
    return 77;
  snprintf(want, sizeof(want), "/%d.sock", (int)getpid());
  if (!strstr(path, want))
    return 2;
  int fd = connect_to(path);
  if (fd < 0)
    return 3;
  send_request(fd, FXT_CTL_INFO, 0, "", NULL);
  int32_t st;
  if (read_frame(fd, &st, buf, sizeof(buf), NULL) != 1 || st != 0)
    return 4;
  snprintf(want, sizeof(want), "pid=%d\n", (int)getpid());
  if (!strstr(buf, want))
    return 5;
  close(fd);
  if ((fd = connect_to(g_sock)) < 0) /* the parent's socket */
    return 6;
  send_request(fd, FXT_CTL_INFO, 0, "", NULL);
  if (read_frame(fd, &st, buf, sizeof(buf), NULL) != 1 || st != 0)
    return 7;
  snprintf(want, sizeof(want), "pid=%d\n", (int)parent);
  close(fd);
  if (!strstr(buf, want))
    return 8;
  fxt_server_stop(); /* (exit would too, through its atexit handler) */
  fxt_session_stop();
  char out[300]; /* the child's own trace file: the parent's name and its pid */
  snprintf(out, sizeof(out), "%s.%d", g_out, (int)getpid());
  unlink(out);
  return access(path, F_OK) == 0 ? 9 : 0;
}

static void fork_child_serves_its_own_socket(void **state)
{
  (void)state;
#if FXT_TEST_TSAN
  skip(); /* the child starts threads: ThreadSanitizer forbids it after a threaded fork */
#endif
  start_session("tsrv:seq");
  /* The consumer idle before the fork (two passes done, then it waits): a child of a fork
   * taken while another thread held clang 14 ASan's allocator lock hangs at its first malloc
   * (that allocator takes no lock around fork, glibc's malloc does). */
  assert_int_equal(fxt_session_flush(), 0);
  pid_t parent = getpid(), pid = fork();
  assert_true(pid >= 0);
  if (pid == 0)
    _exit(forked_child(parent));
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  /* The parent's socket is untouched by the child's start and stop. */
  char buf[4096];
  int fd = connect_to(g_sock);
  assert_true(fd >= 0);
  assert_int_equal(call(fd, FXT_CTL_INFO, 0, "", NULL, buf, sizeof(buf)), 0);
  close(fd);
}

int main(int argc, char **argv)
{
  if (argc == 3 && strcmp(argv[1], "--child-connect") == 0)
    return child_connect(argv[2]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(every_op, setup, teardown),
      cmocka_unit_test_setup_teardown(quiet_clients_never_lock_out, setup, teardown),
      cmocka_unit_test_setup_teardown(readers_that_never_read_are_bounded, setup, teardown),
      cmocka_unit_test_setup_teardown(flight_recorder_readers_are_capped, setup, teardown),
      cmocka_unit_test_setup_teardown(snapshot_only_to_a_regular_file, setup, teardown),
      cmocka_unit_test_setup_teardown(filter_write_does_not_wait_for_blocked_producers, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(another_uid_is_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(garbage_leaves_tracing_exact, setup, teardown),
      cmocka_unit_test_setup_teardown(runtime_dir_must_be_private, setup, teardown),
      cmocka_unit_test_setup_teardown(fork_child_serves_its_own_socket, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
