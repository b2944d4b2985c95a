/* server.c - the live-control server (server.h): one thread, one poll loop, every client
 * non-blocking.
 *
 * Why one thread and a poll loop: the tree is reached only through non-blocking calls
 * (trace_pipe is opened FXT_FS_NONBLOCK), so no request can hold the loop, and a trace_pipe
 * streamed to a slow client is read only when that client's previous chunk is gone: a stalled
 * reader consumes nothing and blocks no one. While some stream waits for lines the loop wakes
 * every PIPE_TICK_MS to look (the live view signals a condition variable, not a descriptor).
 *
 * No client can hold a slot or memory for long (server.h "Deadlines"): a request half-way, a
 * reply nobody takes, or a connection quiet for the idle time is closed; when the table is
 * full a new client takes the slot of the connection quiet the longest; and READs of `trace`
 * are refused while the text held for replies not yet sent passes HELD_MAX. `trace` is
 * formatted a chunk at a time as its reader takes it (live.h live_iter), except a flight
 * recorder's, made whole at open (64 clients that never read would hold 64 of those).
 *
 * Locks: `life` serializes start, stop and fork; `work` is held by the server thread while it
 * is inside the tree (everything but poll), so fork (fxt_server_fork_prepare) can wait until
 * no tracefs lock is held by this thread. Order: life -> work -> the tree's own locks. The
 * server thread never takes `life` (a tree write may start a session, which starts the
 * server: that call sees on_server_thread and returns at once).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fxtrace/errors.h>
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../base/grow.h"
#include "../base/tbuf.h"
#include "outfile.h"
#include "server.h"

#define MAX_CLIENTS FXT_CTL_MAX_CLIENTS
#define PIPE_TICK_MS 20
#define LOST_CHECK_MS 1000 /* the longest poll (lost) */
#define ACCEPT_BACKOFF_MS 100 /* out of descriptors: leave pending connections for a while */
#define IN_START 256
#define IDLE_FACTOR 6         /* quiet connections close after this many stall times */
#define HELD_MAX (32u << 20) /* text of open READ files: past it, `trace` is refused */
#define GRACE_MAX_MS 1000    /* a new connection is not taken over before this (or stall_ms) */
#define TRIM_MIN (1u << 20)  /* releasing this much text returns the heap's free pages */

struct outbuf {
  unsigned char *data;
  size_t len, off, cap;
};

struct client {
  int fd;
  unsigned char *in; /* request bytes so far */
  size_t in_len, in_cap;
  struct outbuf out; /* reply bytes not yet sent */
  struct fxt_fs_file *file; /* READ or PIPE in progress */
  bool stream;              /* PIPE: trace_pipe waits for lines instead of ending */
  unsigned char *carry;     /* PIPE: the start of a line, sent with the next frame */
  size_t carry_len;
  bool closing;             /* an error frame went out: close once it is sent */
  size_t held;              /* file's text counted in S.held */
  /* Times in ms (CLOCK_MONOTONIC), 0 = none. */
  uint64_t deadline;        /* a request half-way, or an error frame not taken: drop at */
  uint64_t out_deadline;    /* reply bytes queued: drop unless some are taken by then */
  uint64_t quiet_since;     /* nothing asked nor open (or a stream not taken) since */
  uint64_t quiet_order;     /* S.quiet_count when it became quiet: who was first */
};

static struct {
  pthread_mutex_t life, work;
  bool running;
  pthread_t thread;
  int listen_fd, wake_fd;
  struct fxt_fd_id listen_id, wake_id; /* what the two were opened on (outfile.h) */
  _Atomic bool stop;
  char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
  dev_t dev;
  ino_t ino;
  struct client clients[MAX_CLIENTS];
  int nclients;
  uint64_t accept_pause_until;
  uint64_t stall_ms, idle_ms; /* deadlines (server.h), set at start */
  size_t held;                /* sum of the clients' held */
  uint64_t quiet_count;       /* clients that became quiet so far */
  /* The program closed our descriptors (a daemon closing them all): stop serving, and close
   * or write none of them again (the numbers may be the program's files by now). Seen by
   * poll when it was not waiting yet, else at its next return (LOST_CHECK_MS at most: closing
   * a descriptor does not wake a poll of it) by their identities. */
  _Atomic bool lost;
} S = {.life = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_MUTEX_INITIALIZER,
       .listen_fd = -1, .wake_fd = -1};

static _Thread_local bool on_server_thread;

static uint64_t now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- replies ------------------------------------------------------------------------------ */

static bool out_reserve(struct outbuf *o, size_t more)
{
  if (o->off == o->len)
    o->off = o->len = 0;
  return fxt_grow((void **)&o->data, &o->cap, o->len + more, 1, 4096);
}

/* Queues one frame; false when out of memory (the client is then dropped). */
static bool frame(struct client *c, int32_t status, const void *data, size_t len)
{
  if (!out_reserve(&c->out, FXT_CTL_REPLY_HEADER + len))
    return false;
  fxt_ctl_reply_header(c->out.data + c->out.len, status, (uint32_t)len);
  if (len)
    memcpy(c->out.data + c->out.len + FXT_CTL_REPLY_HEADER, data, len);
  c->out.len += FXT_CTL_REPLY_HEADER + len;
  return true;
}

/* A whole successful reply: MORE frames of FXT_CTL_MAX_CHUNK, then the last one. */
static bool reply(struct client *c, const char *data, size_t len)
{
  while (len > FXT_CTL_MAX_CHUNK) {
    if (!frame(c, FXT_CTL_MORE, data, FXT_CTL_MAX_CHUNK))
      return false;
    data += FXT_CTL_MAX_CHUNK;
    len -= FXT_CTL_MAX_CHUNK;
  }
  return frame(c, 0, data, len);
}

static bool reply_error(struct client *c, int err, const char *msg)
{
  return frame(c, err < 0 ? err : FXT_EINVAL, msg, msg ? strlen(msg) : 0);
}

/* Serves one parsed request; false when the client must be dropped (out of memory). */
static bool handle(struct client *c, const struct fxt_ctl_request *req)
{
  char path[FXT_CTL_MAX_PATH + 1];
  memcpy(path, req->path, req->path_len);
  path[req->path_len] = 0;
  if (req->op == FXT_CTL_READ || req->op == FXT_CTL_PIPE) {
    /* `trace` is the live view, formatted as it is read, or whole at open for a flight
     * recorder (the other files are small): while replies not yet taken hold HELD_MAX, no
     * more of it (one is made whatever its size). */
    if (S.held >= HELD_MAX && fxt_fs_is_view(path)) {
      char msg[200];
      snprintf(msg, sizeof(msg), "%zu MiB of earlier replies are not yet taken by their "
               "readers (at most %u MiB): try again", S.held >> 20, HELD_MAX >> 20);
      return reply_error(c, FXT_EBUSY, msg);
    }
    /* Non-blocking always: the loop must never wait inside the tree. */
    int rc = fxt_fs_open(path, FXT_FS_READ | FXT_FS_NONBLOCK, &c->file);
    if (rc != 0) {
      c->file = NULL;
      return reply_error(c, rc, NULL);
    }
    c->held = fxt_fs_held_bytes(c->file);
    S.held += c->held;
    c->stream = req->op == FXT_CTL_PIPE;
    return true;
  }
  struct fxt_tbuf t;
  fxt_tbuf_init(&t);
  int rc = fxt_srv_answer(req, path, &t);
  /* A failed op may say why in t (server_ops.c): that is the error frame's message. */
  bool ok = !t.oom && (rc < 0 ? frame(c, rc, t.data, t.len)
                              : reply(c, t.data ? t.data : "", t.len));
  fxt_tbuf_free(&t);
  return ok;
}

/* ---- clients ------------------------------------------------------------------------------ */

/* Closes c's file and gives back what its text counted in S.held (and, after a large one,
 * the heap's free pages to the system: glibc keeps them otherwise). */
static void close_file(struct client *c)
{
  fxt_fs_close(c->file);
  c->file = NULL;
  S.held -= c->held;
#ifdef __GLIBC__
  if (c->held >= TRIM_MIN)
    malloc_trim(0);
#endif
  c->held = 0;
}

static void drop(struct client *c)
{
  if (c->fd >= 0)
    close(c->fd);
  close_file(c);
  free(c->carry);
  free(c->in);
  free(c->out.data);
  memset(c, 0, sizeof(*c));
  c->fd = -1;
}

/* Sends what is queued. False when the connection is gone. */
static bool flush(struct client *c)
{
  while (c->out.off < c->out.len) {
    ssize_t n = send(c->fd, c->out.data + c->out.off, c->out.len - c->out.off,
                     MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errno == EAGAIN || errno == EWOULDBLOCK;
    c->out.off += (size_t)n;
    c->out_deadline = c->quiet_since = 0; /* taken: the clocks start again (settle) */
  }
  c->out.off = c->out.len = 0;
  return true;
}

/* Receives request bytes. False when the connection is gone. */
static bool receive(struct client *c)
{
  if (c->file && c->stream) { /* streaming: the client only closes; what it sends is ignored */
    char sink[512];
    ssize_t n = recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT);
    return n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR));
  }
  if (c->in_len == c->in_cap) {
    size_t cap = c->in_cap ? c->in_cap : IN_START;
    struct fxt_ctl_request req;
    size_t need = 0;
    if (fxt_ctl_parse(c->in, c->in_len, &req, &need, NULL, 0) == 0 && need > cap)
      cap = need; /* a size word within the limit: room for exactly that frame */
    if (cap == c->in_cap)
      return true; /* a whole request is in: serve it before reading more */
    unsigned char *in = realloc(c->in, cap);
    if (!in)
      return false;
    c->in = in;
    c->in_cap = cap;
  }
  ssize_t n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
    return false;
  if (n > 0) {
    if (c->in_len == 0)
      c->deadline = now_ms() + S.stall_ms;
    c->in_len += (size_t)n;
  }
  return true;
}

/* The next chunk of c's file as a MORE frame, read straight into the frame (header first,
 * its size once the read says it). A stream's frames end at the end of a line, as the
 * kernel's trace_pipe reads do, so a reader stopped between two frames never holds half a
 * line: what the tree returned past the last newline waits in carry for the next frame (the
 * rest of that line is in the tree already, so the next read does not wait). Returns the
 * bytes queued, or the read's 0 (end), FXT_EAGAIN or error; FXT_ENOMEM. */
static ssize_t read_chunk(struct client *c)
{
  if (!out_reserve(&c->out, FXT_CTL_REPLY_HEADER + FXT_CTL_MAX_CHUNK))
    return FXT_ENOMEM;
  unsigned char *h = c->out.data + c->out.len, *d = h + FXT_CTL_REPLY_HEADER;
  size_t have = c->carry_len; /* < FXT_CTL_MAX_CHUNK: the read below asks for >= 1 byte */
  if (have)
    memcpy(d, c->carry, have);
  ssize_t n = fxt_fs_read(c->file, d + have, FXT_CTL_MAX_CHUNK - have);
  if (n < 0 || (n == 0 && have == 0))
    return n; /* (carry unchanged) */
  size_t total = have + (size_t)n, send = total;
  const unsigned char *nl = c->stream && n > 0 ? memrchr(d, '\n', total) : NULL;
  if (nl)
    send = (size_t)(nl + 1 - d);
  if (total > send && !c->carry && !(c->carry = malloc(FXT_CTL_MAX_CHUNK)))
    return FXT_ENOMEM;
  c->carry_len = total - send;
  if (c->carry_len)
    memcpy(c->carry, d + send, c->carry_len);
  fxt_ctl_reply_header(h, FXT_CTL_MORE, (uint32_t)send);
  c->out.len += FXT_CTL_REPLY_HEADER + send;
  return (ssize_t)send;
}

/* Moves a client on while nothing of it is waiting to be sent: the next chunk of a READ or
 * PIPE, or the next buffered request. False when it must be dropped. */
static bool advance(struct client *c)
{
  while (c->out.off == c->out.len && !c->closing) {
    if (c->file) {
      ssize_t n = read_chunk(c);
      if (n > 0)
        continue;
      if (n == FXT_ENOMEM)
        return false;
      if (n == FXT_EAGAIN && c->stream)
        return true; /* trace_pipe is empty: the tick looks again */
      close_file(c);
      c->carry_len = 0;
      if (!(n < 0 && n != FXT_EAGAIN ? reply_error(c, (int)n, NULL) : reply(c, "", 0)))
        return false;
      continue;
    }
    struct fxt_ctl_request req;
    size_t used = 0;
    char err[160];
    int rc = fxt_ctl_parse(c->in, c->in_len, &req, &used, err, sizeof(err));
    if (rc == 0)
      return true;
    if (rc < 0) { /* a malformed frame cannot be skipped: say why, then hang up */
      c->closing = true;
      c->deadline = now_ms() + S.stall_ms;
      return reply_error(c, rc, err);
    }
    bool ok = handle(c, &req);
    memmove(c->in, c->in + used, c->in_len - used);
    c->in_len -= used;
    c->deadline = c->in_len ? now_ms() + S.stall_ms : 0;
    if (!ok)
      return false;
  }
  return true;
}

/* Whether advance() has something to do for c right now (then the loop does not wait): a
 * stream with lines to give goes on at once, as a READ does (waiting for the tick after each
 * chunk held trace_pipe, and `trace` read as a stream, to 64 KiB per 20 ms: ~30,000 lines a
 * second, 1.4 s for `fxtrace cat PID trace` of the default view). */
static bool ready(const struct client *c)
{
  struct fxt_ctl_request req;
  size_t used;
  if (c->file)
    return !c->stream || fxt_fs_poll(c->file, 0) == FXT_FS_POLLIN;
  return !c->closing && fxt_ctl_parse(c->in, c->in_len, &req, &used, NULL, 0) != 0;
}

/* After c was served: starts or stops its clocks. A reply is queued: the client must take
 * some of it within stall_ms (a stream's reader may pause longer: it is quiet instead, and
 * holds one chunk). Quiet: connected with nothing asked, nothing open, nothing to send; or a
 * stream whose reader does not take its lines. */
static void settle(struct client *c, uint64_t now)
{
  bool pending = c->out.off < c->out.len, stream = c->file && c->stream;
  if (!pending || stream)
    c->out_deadline = 0;
  else if (!c->out_deadline)
    c->out_deadline = now + S.stall_ms;
  bool quiet = (!c->file && !c->closing && c->in_len == 0 && !pending) ||
               (stream && pending);
  if (!quiet) {
    c->quiet_since = 0;
  } else if (!c->quiet_since) {
    c->quiet_since = now;
    c->quiet_order = ++S.quiet_count;
  }
}

/* When c is to be dropped (the earliest of its clocks), 0 for never. */
static uint64_t due(const struct client *c)
{
  uint64_t idle = c->quiet_since ? c->quiet_since + S.idle_ms : 0;
  uint64_t t[3] = {c->deadline, c->out_deadline, idle};
  uint64_t d = 0;
  for (int i = 0; i < 3; i++)
    if (t[i] && (!d || t[i] < d))
      d = t[i];
  return d;
}

/* Before c is dropped: when it stalled half-way through a request (nothing else queued,
 * no error already said), one last frame says so, best effort. Quiet connections and replies
 * not taken get none (a reply would be read as the answer to the next request). */
static void stalled_request(struct client *c)
{
  if (c->closing || c->in_len == 0 || c->out.off < c->out.len || now_ms() < c->deadline)
    return;
  char msg[96];
  snprintf(msg, sizeof(msg), "request incomplete for %llu ms: connection closed",
           (unsigned long long)S.stall_ms);
  if (reply_error(c, -ETIMEDOUT, msg))
    (void)flush(c);
}

static uint64_t grace_ms(void)
{
  return S.stall_ms < GRACE_MAX_MS ? S.stall_ms : GRACE_MAX_MS;
}

/* The client quiet the longest, or NULL: a new client takes its place when the table is full,
 * so quiet connections never keep a new one out for long. Not one quiet for less than the
 * grace (min(stall_ms, GRACE_MAX_MS)): a client just accepted that did not send its request
 * yet, or whose request is in its socket, not yet read (a burst of connections). */
static struct client *quietest(void)
{
  struct client *q = NULL;
  uint64_t now = now_ms(), grace = grace_ms();
  for (int i = 0; i < S.nclients; i++) {
    struct client *c = &S.clients[i];
    char b;
    if (c->fd >= 0 && c->quiet_since && now >= c->quiet_since + grace &&
        (!q || c->quiet_order < q->quiet_order) &&
        !(recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0))
      q = c;
  }
  return q;
}

static void accept_clients(void)
{
  for (;;) {
    int fd = accept4(S.listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        S.accept_pause_until = now_ms() + ACCEPT_BACKOFF_MS;
      else if (errno == EBADF || errno == ENOTSOCK || errno == EINVAL)
        S.lost = true;
      return;
    }
    struct ucred cr;
    socklen_t len = sizeof(cr);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 ||
        (cr.uid != geteuid() && cr.uid != 0)) {
      close(fd); /* not our user: no reply at all */
      continue;
    }
    /* (Entries past nclients are stale copies left by compaction: overwritten, not freed.) */
    struct client *c = NULL;
    if (S.nclients < MAX_CLIENTS)
      c = &S.clients[S.nclients++];
    else if ((c = quietest()) != NULL)
      drop(c); /* quiet the longest: it hangs up; a client that asks again reconnects */
    if (!c) {
      unsigned char h[FXT_CTL_REPLY_HEADER + 200];
      int n = snprintf((char *)h + FXT_CTL_REPLY_HEADER, sizeof(h) - FXT_CTL_REPLY_HEADER,
                       "too many clients: all %d connections have a request, a reply or a "
                       "trace_pipe stream in progress, or are new (quiet for less than %llu "
                       "ms)", MAX_CLIENTS, (unsigned long long)grace_ms());
      fxt_ctl_reply_header(h, FXT_EBUSY, (uint32_t)n);
      ssize_t sent = send(fd, h, FXT_CTL_REPLY_HEADER + (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
      (void)sent; /* best effort */
      close(fd);
      continue;
    }
    memset(c, 0, sizeof(*c));
    c->fd = fd;
    settle(c, now_ms());
  }
}

static void *server_main(void *arg)
{
  (void)arg;
  on_server_thread = true;
  prctl(PR_SET_NAME, "fxtrace-control"); /* signals: blocked from birth (fxt_server_start) */
  struct pollfd pfd[2 + MAX_CLIENTS];
  while (!atomic_load_explicit(&S.stop, memory_order_acquire)) {
    uint64_t now = now_ms();
    int timeout = -1, n = 0;
    pfd[n++] = (struct pollfd){S.wake_fd, POLLIN, 0};
    pfd[n++] = (struct pollfd){S.listen_fd, now >= S.accept_pause_until ? POLLIN : 0, 0};
    if (now < S.accept_pause_until)
      timeout = (int)(S.accept_pause_until - now);
    for (int i = 0; i < S.nclients; i++) {
      struct client *c = &S.clients[i];
      short ev = POLLIN; /* requests, or (streaming) the hang-up */
      if (c->out.off < c->out.len)
        ev = POLLOUT;
      else if (ready(c))
        timeout = 0; /* a READ to go on with, or requests that came in together */
      else if (c->file && (timeout < 0 || timeout > PIPE_TICK_MS))
        timeout = PIPE_TICK_MS;
      uint64_t d = due(c);
      if (d) {
        int left = d > now ? (int)(d - now) : 0;
        if (timeout < 0 || left < timeout)
          timeout = left;
      }
      pfd[n++] = (struct pollfd){c->fd, ev, 0};
    }
    if (poll(pfd, (nfds_t)n, timeout < 0 ? LOST_CHECK_MS : timeout) < 0 && errno != EINTR) {
      /* Only ENOMEM is possible with these arguments: breathe, then try again. */
      struct timespec pause = {0, 10000000};
      nanosleep(&pause, NULL);
      continue;
    }
    /* Our eventfd is written only after stop is set; an invalid or otherwise readable one,
     * or an invalid listening socket, means the program closed (and maybe reused) them. */
    if ((pfd[0].revents && !atomic_load_explicit(&S.stop, memory_order_acquire)) ||
        (pfd[1].revents & POLLNVAL) || !fxt_fd_is(S.listen_fd, S.listen_id) ||
        !fxt_fd_is(S.wake_fd, S.wake_id))
      S.lost = true;
    pthread_mutex_lock(&S.work);
    int before = S.nclients;
    now = now_ms();
    for (int i = 0; i < before && !S.lost; i++) {
      struct client *c = &S.clients[i];
      short re = pfd[2 + i].revents;
      bool ok = !(re & (POLLERR | POLLNVAL));
      if (re & POLLNVAL)
        c->fd = -1; /* closed by the program: not ours to close again */
      if (ok && (re & POLLOUT))
        ok = flush(c);
      if (ok && (re & (POLLIN | POLLHUP)))
        ok = receive(c);
      if (ok)
        ok = advance(c) && flush(c);
      if (ok && c->closing && c->out.off == c->out.len)
        ok = false;
      if (ok)
        settle(c, now);
      if (ok && due(c) && now >= due(c)) {
        ok = false; /* a request or a reply stalled, or quiet for idle_ms */
        stalled_request(c);
      }
      if (!ok)
        drop(c);
    }
    /* Compact (dropped clients have fd -1), then take new ones (appended, or in the place of
     * the quietest when full). */
    int k = 0;
    for (int i = 0; i < S.nclients; i++)
      if (S.clients[i].fd >= 0)
        S.clients[k++] = S.clients[i];
    S.nclients = k;
    if ((pfd[1].revents & POLLIN) && !S.lost)
      accept_clients();
    pthread_mutex_unlock(&S.work);
    if (S.lost)
      break; /* the socket stays until fxt_server_stop removes it */
  }
  pthread_mutex_lock(&S.work);
  for (int i = 0; i < S.nclients; i++) {
    if (S.lost)
      S.clients[i].fd = -1;
    drop(&S.clients[i]);
  }
  S.nclients = 0;
  pthread_mutex_unlock(&S.work);
  return NULL;
}

/* ---- lifecycle ---------------------------------------------------------------------------- */

static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void stop_at_exit(void)
{
  fxt_server_stop(); /* the socket file must not outlive the process */
}

static void register_exit(void)
{
  atexit(stop_at_exit);
}

/* FXT_CTL_STALL_MS, or $FXTRACE_CTL_TIMEOUT_MS (1..3600000; tests make it short). */
static uint64_t ctl_timeout_ms(void)
{
  const char *v = getenv("FXTRACE_CTL_TIMEOUT_MS");
  char *end;
  unsigned long ms = v && *v ? strtoul(v, &end, 10) : 0;
  return ms >= 1 && ms <= 3600000 && !*end ? ms : FXT_CTL_STALL_MS;
}

static int refuse(const char *what, const char *why, int rc)
{
  fprintf(stderr, "fxtrace: live control off: %s: %s\n", what, why);
  return rc;
}

/* Binds and listens under a temporary name, then renames into place (server.h). */
static int open_socket(const char *dir, char *path, size_t size)
{
  char tmp[sizeof(S.path)], err[160];
  int rc = fxt_ctl_socket_path(dir, (long)getpid(), path, size);
  if (rc == 0 && (size_t)snprintf(tmp, sizeof(tmp), "%s/.%ld.tmp", dir, (long)getpid()) >=
                     sizeof(tmp))
    rc = FXT_E2BIG;
  if (rc != 0)
    return refuse(dir, "path too long for a Unix socket", rc);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return refuse(dir, strerror(errno), -errno);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  memcpy(sa.sun_path, tmp, strlen(tmp) + 1);
  unlink(tmp); /* a leftover of an earlier process with our pid */
  const char *step = "bind";
  if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
      (step = "chmod", chmod(tmp, 0600) != 0) || (step = "listen", listen(fd, 16) != 0) ||
      (step = "rename", rename(tmp, path) != 0)) {
    rc = -errno;
    snprintf(err, sizeof(err), "%s: %s", step, strerror(errno));
    unlink(tmp);
    close(fd);
    return refuse(path, err, rc);
  }
  return fd;
}

int fxt_server_start(void)
{
  if (on_server_thread)
    return 0; /* a tree write started a session: this server already serves it */
  pthread_mutex_lock(&S.life);
  if (S.running) {
    pthread_mutex_unlock(&S.life);
    return 0;
  }
  char dir[sizeof(S.path)], err[200], path[sizeof(S.path)];
  int rc = fxt_ctl_dir(dir, sizeof(dir));
  if (rc != 0)
    rc = refuse("runtime directory", "path too long for a Unix socket", rc);
  else if ((rc = fxt_ctl_dir_check(dir, true, err, sizeof(err))) != 0)
    refuse(dir, err, rc);
  int fd = rc == 0 ? open_socket(dir, path, sizeof(path)) : rc;
  struct stat st = {0};
  if (fd >= 0 && lstat(path, &st) != 0)
    memset(&st, 0, sizeof(st));
  int wake = fd >= 0 ? eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) : -1;
  if (fd >= 0 && wake >= 0) {
    S.listen_fd = fd;
    S.wake_fd = wake;
    S.listen_id = fxt_fd_id(fd);
    S.wake_id = fxt_fd_id(wake);
    S.dev = st.st_dev;
    S.ino = st.st_ino;
    memcpy(S.path, path, sizeof(path));
    S.nclients = 0;
    S.held = 0;
    S.accept_pause_until = 0;
    S.stall_ms = ctl_timeout_ms();
    S.idle_ms = S.stall_ms * IDLE_FACTOR;
    S.lost = false;
    atomic_store_explicit(&S.stop, false, memory_order_relaxed);
    /* Born with every signal blocked (as the consumer): process-directed signals belong to
     * the program's threads. */
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    rc = -pthread_create(&S.thread, NULL, server_main, NULL);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
  } else if (fd >= 0) {
    rc = refuse(path, strerror(errno), -errno);
  } else {
    rc = fd;
  }
  if (rc == 0) {
    S.running = true;
    pthread_once(&exit_once, register_exit);
  } else if (fd >= 0) {
    unlink(path);
    close(fd);
    if (wake >= 0)
      close(wake);
    S.listen_fd = S.wake_fd = -1;
  }
  pthread_mutex_unlock(&S.life);
  return rc;
}

/* Removes the socket file if it is still the one we made (a later process may own the name). */
static void unlink_ours(void)
{
  struct stat st;
  if (lstat(S.path, &st) == 0 && st.st_dev == S.dev && st.st_ino == S.ino)
    unlink(S.path);
}

void fxt_server_stop(void)
{
  if (on_server_thread)
    return; /* cannot join itself; nothing in the tree stops a session anyway */
  pthread_mutex_lock(&S.life);
  if (S.running) {
    unlink_ours(); /* first: nobody new connects to a server about to go */
    /* Release pairs with the server loop's acquire loads of stop. */
    atomic_store_explicit(&S.stop, true, memory_order_release);
    uint64_t one = 1;
    /* (The eventfd's identity is the one all eventfds share: a program's own eventfd in its
     * place could take this 1, not another kind of file.) */
    bool ours = !S.lost && fxt_fd_is(S.wake_fd, S.wake_id);
    ssize_t n = ours ? write(S.wake_fd, &one, sizeof(one)) : 0;
    (void)n; /* an eventfd write of 1 cannot fail short of overflow */
    pthread_join(S.thread, NULL);
    fxt_fd_close(&S.listen_fd, S.listen_id);
    fxt_fd_close(&S.wake_fd, S.wake_id);
    S.running = false;
  }
  pthread_mutex_unlock(&S.life);
}

int fxt_server_running(char *path, size_t size)
{
  pthread_mutex_lock(&S.life);
  int r = S.running;
  if (r && path && size)
    snprintf(path, size, "%s", S.path);
  pthread_mutex_unlock(&S.life);
  return r;
}

void fxt_server_fork_prepare(void)
{
  pthread_mutex_lock(&S.life);
  pthread_mutex_lock(&S.work);
}

void fxt_server_fork_parent(void)
{
  pthread_mutex_unlock(&S.work);
  pthread_mutex_unlock(&S.life);
}

void fxt_server_after_fork(void)
{
  /* The child's only thread is the one that forked: whatever prepare locked is re-made, as
   * session.c does with its own lock. */
  pthread_mutex_init(&S.life, NULL);
  pthread_mutex_init(&S.work, NULL);
  bool was = S.running;
  if (was) {
    /* Copies of the parent's descriptors: closing them here leaves the parent's socket and
     * connections alone (no shutdown, no unlink). */
    for (int i = 0; i < S.nclients; i++) {
      if (S.lost)
        S.clients[i].fd = -1;
      drop(&S.clients[i]);
    }
    S.nclients = 0;
    fxt_fd_close(&S.listen_fd, S.listen_id);
    fxt_fd_close(&S.wake_fd, S.wake_id);
    S.running = false;
    fxt_server_start();
  }
}
