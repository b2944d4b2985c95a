/* tools/fxtrace/mount.c - `fxtrace mount PID DIR`: process PID's tracefs tree as a FUSE file
 * system (libfuse3, high-level API), so that plain cat, echo and tail -f work on it as on
 * /sys/kernel/tracing. Every file operation becomes a request on PID's live-control socket
 * (src/base/ctlproto.h):
 *
 *   getattr  STAT: the mode from the file's read/write ability, size 0 as on tracefs
 *            (trace_pipe: see below)
 *   readdir  LIST
 *   open     write access: WRITE with an empty value (TRUNC with O_TRUNC), which clears trace
 *            or set_event and checks that the file is writable; read access: READ, kept as
 *            the open file's snapshot; trace_pipe: a connection of its own, on which the
 *            first read or poll asks for the stream (PIPE), so an open consumes nothing
 *   read     from the snapshot, or the next whole lines of the stream (waits unless
 *            O_NONBLOCK; an interrupted reader gets EINTR)
 *   write    WRITE of what was written, without TRUNC (each write() like the kernel's)
 *   truncate WRITE with TRUNC and an empty value
 *   poll     trace_pipe: readable when a frame is waiting on its connection
 *
 * Every file is direct_io (sizes are not known in advance). Attributes are never cached: the
 * tree changes under us. Requests that are not streams share one connection.
 *
 * trace_pipe is dressed for GNU `tail -f`, which on the kernel's tracefs never prints: its
 * first step reads a size-0 file to the end, which trace_pipe never reaches; then, on a
 * network or FUSE file system, it polls once a second and reads only as many bytes as the
 * size grew. So here trace_pipe is seekable (offsets are ignored) and its size is 1 + what
 * its readers were given + what has arrived for them and waits (a reader that has read
 * nothing counts 0): tail first reads one byte, which returns as soon as a line is there,
 * then each poll sees the size grow by what waits and takes it. No byte is lost or repeated:
 * the stream keeps what a read did not take, and a read at an offset already read (tail
 * seeks back to print its first byte) is served again from the last HISTORY bytes.
 */
#define _GNU_SOURCE
#include "control_cmds.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char k_usage[] =
    "usage: fxtrace mount [--help] [-f|--foreground] [-d|--daemon] [-o OPTIONS] PID DIR\n"
    "\n"
    "Mounts process PID's tracefs tree on DIR (FUSE), so that cat, echo and tail -f work\n"
    "there as on /sys/kernel/tracing:\n"
    "  echo 1 > DIR/events/demo/enable; cat DIR/trace; tail -f DIR/trace_pipe\n"
    "Stays in the foreground (the default, -f) until SIGINT or SIGTERM, or until PID exits,\n"
    "then unmounts; -d detaches once mounted (unmount with fusermount3 -u DIR). -o passes\n"
    "mount options to FUSE (e.g. allow_other).\n";

#if FXT_HAVE_FUSE

#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control_client.h"

#define SLICE_MS 100 /* a waiting trace_pipe read looks at interrupts this often */
#define HISTORY 8192 /* stream bytes kept for reads that seek back */

/* An open file. */
struct handle {
  char *data; /* read snapshot */
  size_t len;
  bool pipe;            /* trace_pipe stream on conn */
  bool started;         /* the PIPE request went out (under lock) */
  pthread_mutex_t lock; /* conn and the rest of the current frame */
  struct ctl_conn conn;
  const unsigned char *rest; /* unread data of the current frame (inside conn's buffer) */
  uint32_t rest_len;
  bool ended;                /* the stream's last frame came */
  _Atomic uint64_t delivered; /* stream bytes returned by reads */
  _Atomic uint64_t buffered;  /* stream bytes received but not yet returned */
  char history[HISTORY];      /* the last hist_len bytes returned (under lock) */
  size_t hist_len;
  struct fuse_pollhandle *ph; /* a poll waiting for data (under M.plock) */
  struct handle *next;        /* streams, for the poller (under M.plock) */
};

static struct {
  char dir[256];
  long pid;
  time_t mounted;
  pthread_mutex_t lock; /* the shared connection */
  struct ctl_conn conn;
  pthread_mutex_t plock;
  struct handle *streams;
  struct fuse *fuse;
  _Atomic bool quit;
} M = {.lock = PTHREAD_MUTEX_INITIALIZER, .plock = PTHREAD_MUTEX_INITIALIZER};

static const char *rel(const char *path)
{
  while (*path == '/')
    path++;
  return path;
}

static bool is_trace_pipe(const char *path)
{
  return strcmp(rel(path), "trace_pipe") == 0;
}

/* libfuse cancels its workers when the loop ends; a handler must not die holding a lock, and
 * none runs longer than SLICE_MS past the end, so cancellation waits until it returns. */
#define NO_CANCEL_BEGIN                                                                      \
  int cancel_state_;                                                                         \
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state_)
#define NO_CANCEL_END pthread_setcancelstate(cancel_state_, NULL)

/* The process is gone: leave the loop (the main thread waits in a semaphore that a signal
 * interrupts; on_signal ends the loop). */
static void process_gone(void)
{
  if (!M.quit) {
    M.quit = true;
    kill(getpid(), SIGTERM);
  }
}

/* One request on the shared connection, retried once on a fresh connection when the old one
 * was closed (the server closes connections when it stops, e.g. with a session that
 * restarted, and quiet ones after a while: server.h "Deadlines"; the request was not
 * served). Returns as ctl_call; -ENOTCONN when the process
 * is gone, -EIO when it does not answer. */
static int call(uint8_t op, uint16_t flags, const char *path, const void *value, size_t len,
                char **out, size_t *out_len)
{
  char err[512];
  int rc = -ENOTCONN;
  pthread_mutex_lock(&M.lock);
  for (int attempt = 0; attempt < 2; attempt++) {
    if (M.conn.fd < 0 && ctl_connect(M.dir, M.pid, &M.conn, err, sizeof(err)) != 0) {
      rc = -ENOTCONN;
      break;
    }
    rc = ctl_call(&M.conn, op, flags, path, value, len, out, out_len);
    if (rc != -EPIPE && rc != -ECONNRESET && rc != -ETIMEDOUT && rc != -EBADMSG)
      break;
    ctl_close(&M.conn);
    if (rc == -ETIMEDOUT)
      break;
  }
  pthread_mutex_unlock(&M.lock);
  if (rc == -ENOTCONN)
    process_gone();
  return rc == -ETIMEDOUT ? -EIO : rc;
}

/* ---- operations --------------------------------------------------------------------------- */

static void *op_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
  /* A write is one request; the kernel splits larger ones (a value must fit a request). */
  conn->max_write = 32768;
  cfg->attr_timeout = 0;
  cfg->entry_timeout = 1;
  cfg->negative_timeout = 0;
  cfg->use_ino = 0;
  return NULL;
}

/* trace_pipe's size for tail -f (see the top of the file). */
static off_t pipe_size(void)
{
  uint64_t size = 1;
  pthread_mutex_lock(&M.plock);
  for (struct handle *h = M.streams; h; h = h->next) {
    uint64_t d = h->delivered;
    int waiting = 0;
    if (d && ioctl(h->conn.fd, FIONREAD, &waiting) == 0) /* frame headers count too: */
      size += d + h->buffered + (uint64_t)waiting;       /* tail reads to EAGAIN anyway */
  }
  pthread_mutex_unlock(&M.plock);
  return (off_t)size;
}

static int op_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
  (void)fi;
  NO_CANCEL_BEGIN;
  char *reply = NULL;
  int rc = call(FXT_CTL_STAT, 0, rel(path), NULL, 0, &reply, NULL);
  memset(st, 0, sizeof(*st));
  if (rc == 0) {
    st->st_uid = getuid();
    st->st_gid = getgid();
    st->st_atime = st->st_mtime = st->st_ctime = M.mounted;
    if (reply[0] == 'd') {
      st->st_mode = S_IFDIR | 0755;
      st->st_nlink = 2;
    } else {
      bool r = strchr(reply + 1, 'r') != NULL, w = strchr(reply + 1, 'w') != NULL;
      st->st_mode = S_IFREG | (r ? 0444 : 0) | (w ? 0200 : 0);
      st->st_nlink = 1;
      if (is_trace_pipe(path)) {
        /* For tail -f (see the top of the file). */
        st->st_size = pipe_size();
        st->st_mtime = time(NULL);
      }
    }
  }
  free(reply);
  NO_CANCEL_END;
  return rc;
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
  (void)off, (void)fi, (void)flags;
  NO_CANCEL_BEGIN;
  char *list = NULL;
  int rc = call(FXT_CTL_LIST, 0, rel(path), NULL, 0, &list, NULL);
  if (rc == 0) {
    fill(buf, ".", NULL, 0, 0);
    fill(buf, "..", NULL, 0, 0);
    for (char *p = list, *nl; *p && (nl = strchr(p, '\n')); p = nl + 1) {
      *nl = 0;
      struct stat st = {.st_mode = p[0] == 'd' ? S_IFDIR : S_IFREG};
      /* A name with '/' (printk events are named by their format, "%llu/%llu ...") cannot
       * be a file name: the kernel would fail the whole listing. It is left out. */
      if (strlen(p) >= 3 && !strchr(p + 2, '/'))
        fill(buf, p + 2, &st, 0, 0);
    }
  }
  free(list);
  NO_CANCEL_END;
  return rc;
}

static void handle_free(struct handle *h)
{
  if (!h)
    return;
  if (h->pipe) {
    pthread_mutex_lock(&M.plock);
    for (struct handle **p = &M.streams; *p; p = &(*p)->next)
      if (*p == h) {
        *p = h->next;
        break;
      }
    if (h->ph)
      fuse_pollhandle_destroy(h->ph);
    pthread_mutex_unlock(&M.plock);
    ctl_close(&h->conn);
  }
  pthread_mutex_destroy(&h->lock);
  free(h->data);
  free(h);
}

static int op_open(const char *path, struct fuse_file_info *fi)
{
  NO_CANCEL_BEGIN;
  int acc = fi->flags & O_ACCMODE, rc = 0;
  if (acc != O_RDONLY) /* writable? and O_TRUNC's effect, as the kernel's open has it */
    rc = call(FXT_CTL_WRITE, fi->flags & O_TRUNC ? FXT_CTL_F_TRUNC : 0, rel(path), NULL, 0,
              NULL, NULL);
  struct handle *h = rc == 0 ? calloc(1, sizeof(*h)) : NULL;
  if (rc == 0 && !h)
    rc = -ENOMEM;
  if (h) {
    pthread_mutex_init(&h->lock, NULL);
    h->conn.fd = -1;
  }
  if (h && acc != O_WRONLY && is_trace_pipe(path)) {
    char err[512];
    h->pipe = true;
    /* Connected now (a dead process fails the open), asked for lines on the first read or
     * poll: like the kernel's, an open that never reads consumes nothing. */
    if (ctl_connect(M.dir, M.pid, &h->conn, err, sizeof(err)) != 0)
      rc = -ENOTCONN;
    pthread_mutex_lock(&M.plock);
    h->next = M.streams;
    M.streams = h;
    pthread_mutex_unlock(&M.plock);
  } else if (h && acc != O_WRONLY) {
    rc = call(FXT_CTL_READ, 0, rel(path), NULL, 0, &h->data, &h->len);
  }
  if (rc != 0) {
    handle_free(h);
  } else {
    fi->fh = (uint64_t)(uintptr_t)h;
    fi->direct_io = 1;
  }
  NO_CANCEL_END;
  return rc;
}

static int op_release(const char *path, struct fuse_file_info *fi)
{
  (void)path;
  handle_free((struct handle *)(uintptr_t)fi->fh);
  return 0;
}

/* Sends the PIPE request once; on a fresh connection when the server closed the one made at
 * open (quiet connections are closed after a while, or give their place to new ones:
 * server.h "Deadlines"). Under h->lock. */
static bool start_stream(struct handle *h)
{
  if (h->started)
    return true;
  if (ctl_send(&h->conn, FXT_CTL_PIPE, 0, "trace_pipe", NULL, 0) == 0) {
    h->started = true;
  } else {
    char err[512];
    ctl_close(&h->conn);
    h->started = ctl_connect(M.dir, M.pid, &h->conn, err, sizeof(err)) == 0 &&
                 ctl_send(&h->conn, FXT_CTL_PIPE, 0, "trace_pipe", NULL, 0) == 0;
  }
  return h->started;
}

/* The next stream bytes into buf: waits for the first (unless nonblock), then takes what
 * else is already there. Whole lines, as the kernel's trace_pipe reads return them (so a
 * reader stopped between reads never holds half a line): when buf is full in the middle of a
 * line, that line's start goes back to the frame (frames begin at a line's start) unless it
 * is the only line in buf. Under h->lock. */
static int read_stream(struct handle *h, char *buf, size_t size, bool nonblock)
{
  size_t got = 0, from_frame = 0; /* from_frame: bytes of this call from the current frame */
  if (!start_stream(h))
    return -EIO;
  while (got < size) {
    if (h->rest_len) {
      size_t n = h->rest_len < size - got ? h->rest_len : size - got;
      memcpy(buf + got, h->rest, n);
      h->rest += n;
      h->rest_len -= (uint32_t)n;
      got += n;
      from_frame += n;
      continue;
    }
    if (h->ended || (got && !ctl_pending(&h->conn)))
      break;
    if (nonblock && !ctl_pending(&h->conn))
      return got ? (int)got : -EAGAIN;
    int32_t st;
    const unsigned char *data;
    uint32_t len;
    int rc = ctl_frame(&h->conn, &st, &data, &len, SLICE_MS);
    if (rc == -ETIMEDOUT) {
      if (fuse_interrupted() || M.quit)
        return got ? (int)got : -EINTR;
      continue;
    }
    if (rc <= 0 || st < 0) {
      h->ended = true;
      if (got)
        break;
      return rc < 0 ? -EIO : rc == 0 ? 0 : st; /* the process went away: end of file */
    }
    h->rest = data;
    h->rest_len = len;
    h->ended = st == 0;
    from_frame = 0;
  }
  if (got && buf[got - 1] != '\n' && h->rest_len) {
    const char *nl = memrchr(buf, '\n', got);
    size_t part = nl ? (size_t)(buf + got - (nl + 1)) : got;
    if (nl && part <= from_frame) {
      h->rest -= part;
      h->rest_len += (uint32_t)part;
      got -= part;
    }
  }
  return (int)got;
}

/* Appends what a read returned to the history and counts it delivered. Under h->lock. */
static void remember(struct handle *h, const char *p, size_t n)
{
  h->delivered += n;
  if (n >= HISTORY) {
    memcpy(h->history, p + n - HISTORY, HISTORY);
    h->hist_len = HISTORY;
    return;
  }
  size_t keep = h->hist_len + n <= HISTORY ? h->hist_len : HISTORY - n;
  memmove(h->history, h->history + h->hist_len - keep, keep);
  memcpy(h->history + keep, p, n);
  h->hist_len = keep + n;
}

static int op_read(const char *path, char *buf, size_t size, off_t off,
                   struct fuse_file_info *fi)
{
  (void)path;
  struct handle *h = (struct handle *)(uintptr_t)fi->fh;
  if (h->pipe) {
    NO_CANCEL_BEGIN;
    pthread_mutex_lock(&h->lock);
    uint64_t done = h->delivered;
    int rc;
    if (off >= 0 && (uint64_t)off < done && done - (uint64_t)off <= h->hist_len) {
      size_t back = (size_t)(done - (uint64_t)off), n = back < size ? back : size;
      memcpy(buf, h->history + h->hist_len - back, n); /* read again, as a file would */
      rc = (int)n;
    } else {
      rc = read_stream(h, buf, size, fi->flags & O_NONBLOCK);
      if (rc > 0)
        remember(h, buf, (size_t)rc);
    }
    h->buffered = h->rest_len + (h->conn.len - h->conn.off);
    pthread_mutex_unlock(&h->lock);
    NO_CANCEL_END;
    return rc;
  }
  if (off < 0 || (size_t)off >= h->len)
    return 0;
  size_t n = h->len - (size_t)off < size ? h->len - (size_t)off : size;
  memcpy(buf, h->data + off, n);
  return (int)n;
}

static int op_write(const char *path, const char *buf, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
  (void)off, (void)fi;
  NO_CANCEL_BEGIN;
  int rc = call(FXT_CTL_WRITE, 0, rel(path), buf, size, NULL, NULL);
  NO_CANCEL_END;
  return rc < 0 ? rc : (int)size;
}

static int op_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
  (void)size, (void)fi;
  NO_CANCEL_BEGIN;
  int rc = call(FXT_CTL_WRITE, FXT_CTL_F_TRUNC, rel(path), NULL, 0, NULL, NULL);
  NO_CANCEL_END;
  return rc;
}

static int op_poll(const char *path, struct fuse_file_info *fi, struct fuse_pollhandle *ph,
                   unsigned *revents)
{
  (void)path;
  struct handle *h = (struct handle *)(uintptr_t)fi->fh;
  if (!h->pipe) {
    *revents = POLLIN | POLLOUT;
    if (ph)
      fuse_pollhandle_destroy(ph);
    return 0;
  }
  pthread_mutex_lock(&h->lock);
  bool ready = !start_stream(h) || h->rest_len || h->ended || ctl_pending(&h->conn);
  pthread_mutex_unlock(&h->lock);
  pthread_mutex_lock(&M.plock);
  if (h->ph)
    fuse_pollhandle_destroy(h->ph);
  h->ph = NULL;
  if (ready) {
    *revents = POLLIN;
    if (ph)
      fuse_pollhandle_destroy(ph);
  } else {
    *revents = 0;
    h->ph = ph; /* the poller notifies when a frame arrives */
  }
  pthread_mutex_unlock(&M.plock);
  return 0;
}

static const struct fuse_operations k_ops = {
    .init = op_init,
    .getattr = op_getattr,
    .readdir = op_readdir,
    .open = op_open,
    .release = op_release,
    .read = op_read,
    .write = op_write,
    .truncate = op_truncate,
    .poll = op_poll,
};

/* Notifies waiting polls, and ends the mount when the process exits. */
static void *poller(void *arg)
{
  (void)arg;
  while (!M.quit) {
    struct timespec t = {0, SLICE_MS * 1000000L};
    nanosleep(&t, NULL);
    pthread_mutex_lock(&M.plock);
    for (struct handle *h = M.streams; h; h = h->next) {
      /* A reader holding the lock is reading: it takes the data itself. */
      if (!h->ph || pthread_mutex_trylock(&h->lock) != 0)
        continue;
      bool ready = h->rest_len || h->ended || ctl_pending(&h->conn);
      pthread_mutex_unlock(&h->lock);
      if (ready) {
        fuse_notify_poll(h->ph);
        fuse_pollhandle_destroy(h->ph);
        h->ph = NULL;
      }
    }
    pthread_mutex_unlock(&M.plock);
    if (kill((pid_t)M.pid, 0) != 0 && errno == ESRCH)
      process_gone();
  }
  return NULL;
}

static void on_signal(int sig)
{
  (void)sig;
  fuse_exit(M.fuse); /* sets the session's flag: what libfuse's own handler does */
}

/* SIGINT, SIGTERM, SIGHUP end the loop; unlike fuse_set_signal_handlers, also when the shell
 * started us with SIGINT ignored (a background job of a script), so `kill -INT` unmounts. */
static bool set_signals(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  bool ok = sigaction(SIGINT, &sa, NULL) == 0 && sigaction(SIGTERM, &sa, NULL) == 0 &&
            sigaction(SIGHUP, &sa, NULL) == 0;
  sa.sa_handler = SIG_IGN;
  return ok && sigaction(SIGPIPE, &sa, NULL) == 0;
}

/* The poller is born with every signal blocked, like libfuse's workers: SIGINT and SIGTERM
 * must reach the main thread, whose wait for the loop's end they interrupt. */
static bool start_poller(pthread_t *t)
{
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  bool ok = pthread_create(t, NULL, poller, NULL) == 0;
  pthread_sigmask(SIG_SETMASK, &saved, NULL);
  return ok;
}

int cmd_mount(int argc, char **argv)
{
  bool daemon = false;
  const char *opts = NULL, *pos[2] = {NULL, NULL};
  int npos = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(k_usage, stdout);
      return CLI_EXIT_OK;
    } else if (strcmp(a, "-f") == 0 || strcmp(a, "--foreground") == 0) {
      daemon = false;
    } else if (strcmp(a, "-d") == 0 || strcmp(a, "--daemon") == 0) {
      daemon = true;
    } else if (strcmp(a, "-o") == 0) {
      if (i + 1 == argc)
        return cli_usage_error("mount", k_usage, "option '-o' needs a value");
      opts = argv[++i];
    } else if (a[0] == '-' && a[1]) {
      char msg[300];
      snprintf(msg, sizeof(msg), "unknown option '%s'", a);
      return cli_usage_error("mount", k_usage, msg);
    } else if (npos == 2) {
      return cli_usage_error("mount", k_usage, "too many arguments");
    } else {
      pos[npos++] = a;
    }
  }
  if (npos < 2)
    return cli_usage_error("mount", k_usage, "missing PID or DIR");
  char err[512];
  if (!ctl_parse_pid(pos[0], &M.pid)) {
    snprintf(err, sizeof(err), "bad PID '%.200s'", pos[0]);
    return cli_usage_error("mount", k_usage, err);
  }
  /* Reach the process first: a mount that cannot serve anything is an error now. */
  M.conn.fd = -1;
  if (ctl_dir(M.dir, sizeof(M.dir), err, sizeof(err)) != 0 ||
      ctl_connect(M.dir, M.pid, &M.conn, err, sizeof(err)) != 0) {
    fprintf(stderr, "fxtrace mount: %s\n", err);
    return CLI_EXIT_FAIL;
  }
  M.mounted = time(NULL);
  char base[128];
  snprintf(base, sizeof(base), "default_permissions,fsname=fxtrace:%ld,subtype=fxtrace",
           M.pid);
  struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
  if (fuse_opt_add_arg(&args, "fxtrace") != 0 || fuse_opt_add_arg(&args, "-o") != 0 ||
      fuse_opt_add_arg(&args, base) != 0 ||
      (opts && (fuse_opt_add_arg(&args, "-o") != 0 || fuse_opt_add_arg(&args, opts) != 0))) {
    fprintf(stderr, "fxtrace mount: out of memory\n");
    return CLI_EXIT_FAIL;
  }
  int rc = CLI_EXIT_FAIL;
  M.fuse = fuse_new(&args, &k_ops, sizeof(k_ops), NULL);
  if (!M.fuse) {
    fprintf(stderr, "fxtrace mount: bad FUSE options '%s'\n", opts ? opts : "");
  } else if (fuse_mount(M.fuse, pos[1]) != 0) {
    fprintf(stderr, "fxtrace mount: %s: cannot mount (needs /dev/fuse and fusermount3)\n",
            pos[1]);
  } else {
    pthread_t poll_thread;
    /* Threads do not survive the daemon's fork: the poller starts after it. */
    if (!set_signals() || fuse_daemonize(!daemon) != 0) {
      fprintf(stderr, "fxtrace mount: cannot set up signals or detach\n");
    } else if (!start_poller(&poll_thread)) {
      fprintf(stderr, "fxtrace mount: cannot start a thread\n");
    } else {
      /* A signal ends the loop with its number: a normal end. */
      rc = fuse_loop_mt(M.fuse, 0) >= 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
      M.quit = true;
      pthread_join(poll_thread, NULL);
    }
    fuse_unmount(M.fuse);
  }
  if (M.fuse)
    fuse_destroy(M.fuse);
  fuse_opt_free_args(&args);
  ctl_close(&M.conn);
  return rc;
}

#else /* !FXT_HAVE_FUSE */

int cmd_mount(int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(k_usage, stdout);
      return CLI_EXIT_OK;
    }
  fprintf(stderr, "fxtrace mount: this fxtrace was built without libfuse3\n");
  return CLI_EXIT_FAIL;
}

#endif
