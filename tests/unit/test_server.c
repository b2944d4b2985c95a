/* test_server - live control (src/host/server.h) against the real server thread: every op;
 * requests that come together; another uid is refused (by the socket's mode, and by
 * SO_PEERCRED when the mode would let it in); 10,000 garbage requests while a thread emits
 * sequence-numbered events leave tracing on and every event accounted for; a runtime
 * directory that is not private (mode 0777, another owner, a symlink) gets no socket, a clear
 * message, and tracing goes on; a forked child serves its own socket. Clients that hang back
 * (issue 13): test_server_limits.c.
 *
 * The server is started with fxt_server_start() after the session (idempotent once the
 * session starts it itself). Each run uses a runtime directory of its own (FXTRACE_DIR;
 * server_test.h). Waits are on events (a hang-up, a reply), never on time.
 */
#define _GNU_SOURCE
#include "server_test.h"
#include "../test_main.h"

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
  FXT_RUN_TESTS(
      FXT_TEST_ST(every_op), FXT_TEST_ST(another_uid_is_refused),
      FXT_TEST_ST(garbage_leaves_tracing_exact), FXT_TEST_ST(runtime_dir_must_be_private),
      FXT_TEST_ST(fork_child_serves_its_own_socket));
}
