/* tools/fxtrace/control_cmds.c - `fxtrace ps`, `ls PID [DIR]`, `cat PID FILE`,
 * `write PID FILE [VALUE...]`: the tracefs tree of a running traced process, through its
 * live-control socket (src/host/server.h), with the kernel's errors as the shell shows them
 * ("fxtrace write: events/demo/enable: Invalid argument").
 */
#define _GNU_SOURCE
#include "control_cmds.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "control_client.h"
#include "formats/fileio.h"
#include "base/grow.h"
#include "base/sdir.h"

#define DIR_HELP                                                                             \
  "The runtime directory is $FXTRACE_DIR, else $XDG_RUNTIME_DIR/fxtrace, else\n"            \
  "/tmp/fxtrace-$UID; each traced process serves its tree on PID.sock there.\n"

static const char k_ps_usage[] =
    "usage: fxtrace ps [--help]\n"
    "\n"
    "Lists your traced processes that serve live control:\n"
    "  PID COMM SESSION EVENTS OUTPUT\n"
    "(EVENTS: tracepoints enabled; OUTPUT: the session's file, '-' for none). Sockets whose\n"
    "process is gone are removed.\n" DIR_HELP;

static const char k_ls_usage[] =
    "usage: fxtrace ls [--help] PID [DIR]\n"
    "\n"
    "Lists DIR (default: the root) of process PID's tracefs tree, one name per line,\n"
    "directories with a trailing '/'.\n" DIR_HELP;

static const char k_cat_usage[] =
    "usage: fxtrace cat [--help] [-n|--nonblock] PID FILE\n"
    "\n"
    "Prints FILE of process PID's tracefs tree, as `cat` does on /sys/kernel/tracing.\n"
    "trace_pipe streams (and consumes) events until interrupted; with --nonblock it prints\n"
    "what is there now and exits. SIGINT, SIGTERM or SIGHUP end it after the output it was\n"
    "writing, so it never ends inside a line.\n" DIR_HELP;

static const char k_write_usage[] =
    "usage: fxtrace write [--help] [-a|--append] [-n] PID FILE [VALUE...]\n"
    "\n"
    "Writes the VALUEs (joined by spaces, then a newline) to FILE of process PID's tracefs\n"
    "tree, as `echo VALUE > FILE` does: the file is opened truncating (clears trace,\n"
    "set_event, set_event_pid). -a: as `>>` (no truncation: set_event adds); -n: no newline.\n"
    "Fails with the kernel's error, e.g. \"events/demo/enable: Invalid argument\".\n" DIR_HELP;

/* Parsed arguments. Options go before FILE (after it, `write` takes everything as VALUE,
 * "-1" included); "--" ends them. */
struct opts {
  bool nonblock, append, no_newline;
  char *pos[64];
  int npos;
};

/* The options of cmd; false for anything else. */
static bool option(const char *cmd, const char *a, struct opts *o)
{
  bool cat = strcmp(cmd, "cat") == 0, wr = strcmp(cmd, "write") == 0;
  if (cat && (strcmp(a, "-n") == 0 || strcmp(a, "--nonblock") == 0))
    return o->nonblock = true;
  if (wr && (strcmp(a, "-a") == 0 || strcmp(a, "--append") == 0))
    return o->append = true;
  if (wr && strcmp(a, "-n") == 0)
    return o->no_newline = true;
  return false;
}

/* Parses cmd's arguments, min to max of them positional (fewer: the usage error missing, more:
 * extra). Returns -1 when parsed, else the exit code (help printed, or a usage error). */
static int parse(const char *cmd, const char *usage, int argc, char **argv, struct opts *o,
                 int min, int max, const char *missing, const char *extra)
{
  memset(o, 0, sizeof(*o));
  bool dash = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool is_opt = !dash && a[0] == '-' && a[1] != 0 && o->npos < 2;
    if (is_opt && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
      fputs(usage, stdout);
      return CLI_EXIT_OK;
    }
    if (is_opt && strcmp(a, "--") == 0) {
      dash = true;
    } else if (is_opt && option(cmd, a, o)) {
      continue;
    } else if (is_opt) {
      char msg[300];
      snprintf(msg, sizeof(msg), "unknown option '%s'", a);
      return cli_usage_error(cmd, usage, msg);
    } else if (o->npos == (int)(sizeof(o->pos) / sizeof(o->pos[0]))) {
      return cli_usage_error(cmd, usage, "too many arguments");
    } else {
      o->pos[o->npos++] = argv[i];
    }
  }
  if (o->npos < min)
    return cli_usage_error(cmd, usage, missing);
  if (o->npos > max)
    return cli_usage_error(cmd, usage, extra);
  return -1;
}

/* Connects to the process of pid_text, reporting errors. Returns -1 when connected, else the
 * exit code. */
static int open_process(const char *cmd, const char *usage, const char *pid_text,
                        struct ctl_conn *c)
{
  long pid;
  char dir[256], err[512];
  if (!ctl_parse_pid(pid_text, &pid)) {
    char msg[300];
    snprintf(msg, sizeof(msg), "bad PID '%.200s'", pid_text);
    return cli_usage_error(cmd, usage, msg);
  }
  if (ctl_dir(dir, sizeof(dir), err, sizeof(err)) != 0 ||
      ctl_connect(dir, pid, c, err, sizeof(err)) != 0) {
    fprintf(stderr, "fxtrace %s: %s\n", cmd, err);
    return CLI_EXIT_FAIL;
  }
  return -1;
}

/* A failed call: the file's error as the shell shows it, or what happened to the
 * connection. */
static int call_failed(const char *cmd, const char *what, const struct ctl_conn *c, int rc)
{
  if (rc == -EPIPE || rc == -ECONNRESET)
    fprintf(stderr, "fxtrace %s: process %ld closed the connection\n", cmd, c->pid);
  else if (rc == -ETIMEDOUT)
    fprintf(stderr, "fxtrace %s: process %ld: no reply within %d s (stopped?)\n", cmd, c->pid,
            c->timeout_ms / 1000);
  else if (c->msg[0]) /* the process said why */
    fprintf(stderr, "fxtrace %s: %s: %s: %s\n", cmd, what[0] ? what : "/", strerror(-rc),
            c->msg);
  else
    fprintf(stderr, "fxtrace %s: %s: %s\n", cmd, what[0] ? what : "/", strerror(-rc));
  return CLI_EXIT_FAIL;
}

/* ---- ps ----------------------------------------------------------------------------------- */

static int cmp_long(const void *a, const void *b)
{
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* The value of key in INFO's "key=value\n" lines, into out. */
static void info_value(const char *info, const char *key, char *out, size_t size)
{
  size_t k = strlen(key);
  out[0] = 0;
  for (const char *p = info; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
    if (strncmp(p, key, k) == 0 && p[k] == '=') {
      size_t n = strcspn(p + k + 1, "\n");
      snprintf(out, size, "%.*s", (int)n, p + k + 1);
      return;
    }
}

int cmd_ps(int argc, char **argv)
{
  struct opts o;
  int rc = parse("ps", k_ps_usage, argc, argv, &o, 0, 0, NULL, "no arguments expected");
  if (rc >= 0)
    return rc;
  /* The sessions of this user's processes that died without stopping them, which nothing
   * else will harvest: their traces are completed now, each said on stderr. */
  char shm[64];
  snprintf(shm, sizeof(shm), "/dev/shm/fxtrace-%u", (unsigned)geteuid());
  cli_harvest_dead(shm, "fxtrace ps");
  char dir[256], err[512];
  rc = ctl_dir(dir, sizeof(dir), err, sizeof(err));
  if (rc == -ENOENT) { /* no directory yet: nothing was traced since boot */
    printf("%7s %-16s %-8s %6s %s\n", "PID", "COMM", "SESSION", "EVENTS", "OUTPUT");
    return CLI_EXIT_OK;
  }
  if (rc != 0) {
    fprintf(stderr, "fxtrace ps: %s\n", err);
    return CLI_EXIT_FAIL;
  }
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "fxtrace ps: %s: %s\n", dir, strerror(errno));
    return CLI_EXIT_FAIL;
  }
  long *pids = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    long pid;
    char name[64];
    const char *dot = strrchr(e->d_name, '.');
    if (!dot || strcmp(dot, ".sock") != 0 || (size_t)(dot - e->d_name) >= sizeof(name))
      continue;
    snprintf(name, sizeof(name), "%.*s", (int)(dot - e->d_name), e->d_name);
    if (!ctl_parse_pid(name, &pid))
      continue;
    if (!fxt_grow((void **)&pids, &cap, n + 1, sizeof(*pids), 64))
      break;
    pids[n++] = pid;
  }
  closedir(d);
  if (n)
    qsort(pids, n, sizeof(*pids), cmp_long);
  printf("%7s %-16s %-8s %6s %s\n", "PID", "COMM", "SESSION", "EVENTS", "OUTPUT");
  for (size_t i = 0; i < n; i++) {
    struct ctl_conn c;
    rc = ctl_connect(dir, pids[i], &c, err, sizeof(err));
    if (rc == -ECONNREFUSED) { /* nobody listens: the process died or exec'd (ctlproto.h) */
      char path[256];
      if (fxt_ctl_socket_path(dir, pids[i], path, sizeof(path)) == 0)
        unlink(path);
      continue;
    }
    if (rc != 0) {
      fprintf(stderr, "fxtrace ps: %s\n", err);
      continue;
    }
    char *info = NULL, comm[64], session[16], events[16], output[4096];
    c.timeout_ms = 2000; /* a stopped process must not hold the whole list for long */
    rc = ctl_call(&c, FXT_CTL_INFO, 0, "", NULL, 0, &info, NULL);
    if (rc == 0) {
      info_value(info, "comm", comm, sizeof(comm));
      info_value(info, "session", session, sizeof(session));
      info_value(info, "events", events, sizeof(events));
      info_value(info, "output", output, sizeof(output));
      printf("%7ld %-16s %-8s %6s %s\n", pids[i], comm, session, events,
             output[0] ? output : "-");
    } else {
      fprintf(stderr, "fxtrace ps: process %ld: %s%s%s\n", pids[i],
              rc == -ETIMEDOUT ? "no reply (stopped?)" : strerror(-rc), c.msg[0] ? ": " : "",
              c.msg);
    }
    free(info);
    ctl_close(&c);
  }
  free(pids);
  return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

/* ---- ls ----------------------------------------------------------------------------------- */

int cmd_ls(int argc, char **argv)
{
  struct opts o;
  int rc = parse("ls", k_ls_usage, argc, argv, &o, 1, 2, "missing PID", "too many arguments");
  if (rc >= 0)
    return rc;
  const char *dir = o.npos == 2 ? o.pos[1] : "";
  struct ctl_conn c;
  if ((rc = open_process("ls", k_ls_usage, o.pos[0], &c)) >= 0)
    return rc;
  char *list = NULL;
  rc = ctl_call(&c, FXT_CTL_LIST, 0, dir, NULL, 0, &list, NULL);
  if (rc == -EINVAL) { /* not a directory: a file is listed as itself, as ls does */
    char *st = NULL;
    if (ctl_call(&c, FXT_CTL_STAT, 0, dir, NULL, 0, &st, NULL) == 0 && st[0] == 'f') {
      free(st);
      free(list);
      ctl_close(&c);
      printf("%s\n", dir);
      return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    }
    free(st);
  }
  if (rc != 0) {
    free(list);
    call_failed("ls", dir, &c, rc);
    ctl_close(&c);
    return CLI_EXIT_FAIL;
  }
  ctl_close(&c);
  /* "d NAME\n" / "f NAME\n" -> "NAME/" / "NAME" */
  for (char *p = list, *nl; *p && (nl = strchr(p, '\n')); p = nl + 1) {
    *nl = 0;
    if (strlen(p) >= 2)
      printf("%s%s\n", p + 2, p[0] == 'd' ? "/" : "");
  }
  free(list);
  return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

/* ---- cat ---------------------------------------------------------------------------------- */

/* The signal that asked cat to stop (0: none). A fatal signal would kill it inside a write():
 * a write to a regular file stops between pages when one is pending, leaving a line cut (seen:
 * a trace_pipe capture under `timeout` ending at "blo"). Caught instead, the frame being
 * written is written whole - the server sends whole lines in each frame (server.c's carry) -,
 * then cat dies of the same signal, so its status is what a shell expects. Written by the
 * handler, read by the loop between frames; recv/poll return EINTR (no SA_RESTART). */
static volatile sig_atomic_t cat_stop;
static volatile sig_atomic_t cat_fd = -1;

/* shutdown() wakes a recv() the signal came just before: no wait for a next frame that a quiet
 * trace_pipe may never send. */
static void cat_on_signal(int sig)
{
  cat_stop = sig;
  if (cat_fd >= 0)
    shutdown(cat_fd, SHUT_RDWR);
}

static void cat_catch(int fd)
{
  cat_fd = fd;
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = cat_on_signal;
  sigemptyset(&sa.sa_mask);
  const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
    struct sigaction old;
    /* One ignored by the shell (a background job's SIGINT) stays ignored, as with any cat. */
    if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
      sigaction(sigs[i], &sa, NULL);
  }
}

static void cat_die_as_asked(void)
{
  int sig = cat_stop;
  if (sig == 0)
    return;
  signal(sig, SIG_DFL);
  raise(sig);
}

int cmd_cat(int argc, char **argv)
{
  struct opts o;
  int rc = parse("cat", k_cat_usage, argc, argv, &o, 2, 2, "missing PID or FILE",
                 "too many arguments");
  if (rc >= 0)
    return rc;
  const char *file = o.pos[1];
  struct ctl_conn c;
  if ((rc = open_process("cat", k_cat_usage, o.pos[0], &c)) >= 0)
    return rc;
  /* PIPE: trace_pipe streams, any other file arrives whole; READ never waits. Only a stream
   * may be silent for long, so only it waits without a limit. */
  const char *base = strrchr(file, '/');
  bool stream = !o.nonblock && strcmp(base ? base + 1 : file, "trace_pipe") == 0;
  cat_catch(c.fd);
  rc = ctl_send(&c, o.nonblock ? FXT_CTL_READ : FXT_CTL_PIPE, 0, file, NULL, 0);
  int exit_code = CLI_EXIT_OK;
  while (rc == 0 && !cat_stop) {
    int32_t st;
    const unsigned char *data;
    uint32_t len;
    int r = ctl_frame(&c, &st, &data, &len, stream ? -1 : CTL_TIMEOUT_MS);
    if (r <= 0 && cat_stop)
      break; /* a frame received (r == 1) is written first: its lines are consumed */
    if (r == -EINTR)
      continue;
    if (r == 0 && stream)
      break; /* the process went away: the end of its stream */
    if (r <= 0) {
      rc = r == 0 ? -EPIPE : r;
      break;
    }
    if (st < 0) {
      ctl_note_error(&c, data, len);
      rc = st;
      break;
    }
    if (!fxt_fio_write_all(STDOUT_FILENO, data, len)) {
      fprintf(stderr, "fxtrace cat: writing the output: %s\n", strerror(errno));
      exit_code = CLI_EXIT_FAIL;
      break;
    }
    if (st == 0)
      break;
  }
  if (rc != 0)
    exit_code = call_failed("cat", file, &c, rc);
  cat_fd = -1;
  ctl_close(&c);
  cat_die_as_asked();
  return exit_code;
}

/* ---- snapshot ----------------------------------------------------------------------------- */

static const char k_snapshot_usage[] =
    "usage: fxtrace snapshot [--help] PID -o FILE\n"
    "\n"
    "Has process PID write FILE: a complete FXT file with what each of its threads' buffers\n"
    "holds now (a contiguous run of the newest records of each), while tracing goes on. In a\n"
    "flight recorder (mode=overwrite, no output file) that is each thread's recent history,\n"
    "less what trace_pipe consumed. The process writes FILE itself (it runs as the same user).\n"
    "FILE \"-\": stdout (not a terminal), through a file in a private directory of $TMPDIR\n"
    "(else /tmp) that the process writes and this command copies, then removes.\n"
    DIR_HELP;

static int snapshot_to(const char *pid_text, const char *file);

/* -o -: the process writes a regular file (it writes snapshots to nothing else), in a
 * directory only this user reaches, which is copied to stdout and removed. */
static int snapshot_to_stdout(const char *pid_text)
{
  if (cli_refuse_tty("snapshot"))
    return CLI_EXIT_USAGE;
  const char *base = getenv("TMPDIR");
  char dir[FXT_CTL_MAX_PATH / 2], file[FXT_CTL_MAX_PATH / 2 + 16];
  if (!base || base[0] != '/' || strlen(base) > sizeof(dir) - 32)
    base = "/tmp";
  snprintf(dir, sizeof(dir), "%s/fxtrace-snapshot.XXXXXX", base);
  if (!mkdtemp(dir)) {
    fprintf(stderr, "fxtrace snapshot: cannot create a directory in %s: %s\n", base,
            strerror(errno));
    return CLI_EXIT_FAIL;
  }
  snprintf(file, sizeof(file), "%s/snapshot.fxt", dir);
  int rc = snapshot_to(pid_text, file);
  if (rc == CLI_EXIT_OK && !cli_copy_to_stdout("snapshot", file))
    rc = CLI_EXIT_FAIL;
  unlink(file);
  rmdir(dir);
  return rc;
}

int cmd_snapshot(int argc, char **argv)
{
  const char *pid_text = NULL, *file = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(k_snapshot_usage, stdout);
      return CLI_EXIT_OK;
    }
    if (!strcmp(argv[i], "-o") && i + 1 < argc)
      file = argv[++i];
    else if (argv[i][0] == '-' || pid_text)
      return cli_usage_error("snapshot", k_snapshot_usage, "unexpected argument");
    else
      pid_text = argv[i];
  }
  if (!pid_text || !file)
    return cli_usage_error("snapshot", k_snapshot_usage, "missing PID or -o FILE");
  if (strcmp(file, "-") == 0)
    return snapshot_to_stdout(pid_text);
  return snapshot_to(pid_text, file);
}

/* The snapshot to the file file (absolute, or made so from the working directory). */
static int snapshot_to(const char *pid_text, const char *file)
{
  char path[FXT_CTL_MAX_PATH + 1], cwd[FXT_CTL_MAX_PATH + 1] = "";
  if (file[0] != '/' && !getcwd(cwd, sizeof(cwd) - 1))
    cwd[0] = 0;
  int n = snprintf(path, sizeof(path), "%s%s%s", cwd, cwd[0] ? "/" : "", file);
  if (n < 0 || (size_t)n >= sizeof(path) || path[0] != '/')
    return cli_usage_error("snapshot", k_snapshot_usage, "FILE: path too long");
  struct ctl_conn c;
  int rc = open_process("snapshot", k_snapshot_usage, pid_text, &c);
  if (rc >= 0)
    return rc;
  rc = ctl_call(&c, FXT_CTL_SNAPSHOT, 0, path, NULL, 0, NULL, NULL);
  int exit_code = rc == 0 ? CLI_EXIT_OK : call_failed("snapshot", path, &c, rc);
  ctl_close(&c);
  return exit_code;
}

/* ---- write -------------------------------------------------------------------------------- */

int cmd_write(int argc, char **argv)
{
  struct opts o;
  /* At most as many VALUE words as o.pos holds: parse says "too many arguments" past that. */
  int rc = parse("write", k_write_usage, argc, argv, &o, 2, INT_MAX, "missing PID or FILE", NULL);
  if (rc >= 0)
    return rc;
  /* As echo: the words joined by single spaces, then a newline unless -n. */
  size_t len = 0;
  for (int i = 2; i < o.npos; i++)
    len += strlen(o.pos[i]) + 1;
  char *value = malloc(len + 2);
  if (!value) {
    fprintf(stderr, "fxtrace write: out of memory\n");
    return CLI_EXIT_FAIL;
  }
  value[0] = 0;
  for (int i = 2; i < o.npos; i++) {
    if (i > 2)
      strcat(value, " ");
    strcat(value, o.pos[i]);
  }
  if (!o.no_newline)
    strcat(value, "\n");
  if (strlen(value) > FXT_CTL_MAX_REQUEST - 6 - strlen(o.pos[1])) {
    free(value);
    return cli_usage_error("write", k_write_usage, "VALUE too long (at most 64 KiB)");
  }
  struct ctl_conn c;
  if ((rc = open_process("write", k_write_usage, o.pos[0], &c)) >= 0) {
    free(value);
    return rc;
  }
  rc = ctl_call(&c, FXT_CTL_WRITE, o.append ? 0 : FXT_CTL_F_TRUNC, o.pos[1], value,
                strlen(value), NULL, NULL);
  free(value);
  int exit_code = rc == 0 ? CLI_EXIT_OK : call_failed("write", o.pos[1], &c, rc);
  ctl_close(&c);
  return exit_code;
}
