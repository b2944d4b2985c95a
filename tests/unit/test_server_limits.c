/* test_server_limits - live control (src/host/server.h) against the real server thread, with
 * clients that hang back (issue 13): quiet connections give their place to new ones and time
 * out, stalled requests and replies are dropped, the client cap holds only against busy
 * connections, `trace` replies not read are capped, snapshots go to regular files only, a
 * filter write does not wait for producers blocked on a full buffer.
 *
 * The fixture (server_test.h) is test_server.c's: a session and its server in a runtime
 * directory of this run's own; deadlines are made short with FXTRACE_CTL_TIMEOUT_MS (read when
 * the server starts). Waits are on events (a hang-up, a reply), never on time.
 */
#define _GNU_SOURCE
#include "server_test.h"
#include "../test_main.h"

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
      uint32_t dl = 0;
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

FXT_TEST_MAIN(
    FXT_TEST_ST(quiet_clients_never_lock_out), FXT_TEST_ST(readers_that_never_read_are_bounded),
    FXT_TEST_ST(flight_recorder_readers_are_capped), FXT_TEST_ST(snapshot_only_to_a_regular_file),
    FXT_TEST_ST(filter_write_does_not_wait_for_blocked_producers))
