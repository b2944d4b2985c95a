/* tools/fxtrace/record.c - `fxtrace record [options] -- CMD [ARGS...]`: runs CMD with tracing
 * on through the FXTRACE environment variable (include/fxtrace/session.h), so every process
 * of its tree that loads libfxtrace writes its own file into a private directory; then merges
 * those files into one (docs/fxt-conventions.md: the single-process files concatenated, only
 * the first keeping its magic record) and says on stderr what was recorded (stdout is CMD's,
 * or the trace's with `-o -`).
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "formats/tracedat_write.h"
#include "base/sdir.h"
#include "record_events.h"
#include "record_merge.h"

/* record's own failures, apart from CMD's exit status (as env(1) and timeout(1) do). */
#define RECORD_EXIT_NOTHING 125 /* no trace, or an -e glob that matched no event */
#define RECORD_EXIT_CANNOT_RUN 126
#define RECORD_EXIT_NOT_FOUND 127

static const char k_usage[] =
    "usage: fxtrace record [--help] [-e EVENTS] [-p TRACER [-l GLOB]... [-n GLOB]... [-g GLOB]...]\n"
    "                      [-b KB] [-m MODE] [-o FILE] [--] CMD [ARGS...]\n"
    "\n"
    "Runs CMD with tracing on (every process of its tree linked with libfxtrace traces\n"
    "itself), waits for it, and merges the traces into FILE.\n"
    "  -e, --events EVENTS   tracepoints to enable: globs on system:event, comma-separated\n"
    "                        (default: all)\n"
    "  -p, --plugin TRACER   function or function_graph: the function tracer, for code built\n"
    "                        with pkg-config fxtrace-functions' flags (docs/functions.md)\n"
    "  -l GLOB               trace only these functions (set_ftrace_filter; repeatable)\n"
    "  -n GLOB               do not trace these functions (set_ftrace_notrace; repeatable)\n"
    "  -g GLOB               function_graph: only what runs under these functions\n"
    "                        (set_graph_function; repeatable)\n"
    "  -b, --buffer-kb KB    per-thread buffer size in KiB (default 4096)\n"
    "  -m, --mode MODE       discard (default), overwrite, block or block:MS\n"
    "  -o, --output FILE     the merged trace (default fxtrace.fxt); FILE.dat: as trace-cmd's\n"
    "                        trace.dat (for trace-cmd report and KernelShark); \"-\": FXT on\n"
    "                        stdout (not a terminal), e.g. | fxtrace report -\n"
    "Says \"fxtrace: recorded N events from P processes (T threads) to FILE; D dropped,\n"
    "O overrun, L lost\" on stderr.\n"
    "Exit status: CMD's (128 + N when signal N killed it), except\n"
    "  125  CMD ran but wrote no trace (no process it ran is linked with libfxtrace), or an\n"
    "       -e glob matched none of the events its processes registered (they are listed)\n"
    "  126  CMD could not be run;  127  CMD was not found\n"
    "    2  usage error;  1  FILE could not be written (when CMD itself succeeded)\n";

struct options {
  const char *events, *mode, *output, *buffer_kb, *tracer;
  char *filter, *notrace, *graph; /* -l, -n, -g: globs joined by ',' (malloc'd) */
  char **cmd;
};

/* ---- options ----------------------------------------------------------------------------- */

/* "-e V", "-eV", "--events V", "--events=V"; advances *i past what it used. */
static bool option_value(int argc, char **argv, int *i, const char *s, const char *l,
                         const char **out, bool *missing) {
  const char *a = argv[*i];
  size_t ll = strlen(l);
  const char *v = NULL;
  if (strcmp(a, s) == 0 || strcmp(a, l) == 0)
    v = *i + 1 < argc ? argv[++*i] : NULL;
  else if (strncmp(a, s, 2) == 0 && a[2] != '\0' && a[1] != '-')
    v = a + 2;
  else if (strncmp(a, l, ll) == 0 && a[ll] == '=')
    v = a + ll + 1;
  else
    return false;
  *missing = v == NULL;
  *out = v;
  return true;
}

/* Adds glob to the ','-joined list *list (a repeatable option); false when out of memory. */
static bool add_glob(char **list, const char *glob) {
  size_t old = *list ? strlen(*list) : 0;
  char *n = realloc(*list, old + strlen(glob) + 2);
  if (n == NULL)
    return false;
  if (old)
    n[old++] = ',';
  strcpy(n + old, glob);
  *list = n;
  return true;
}

static int usage_error(const char *fmt, const char *arg) {
  char msg[300];
  snprintf(msg, sizeof msg, fmt, arg);
  return cli_usage_error("record", k_usage, msg);
}

static bool valid_mode(const char *m) {
  if (strcmp(m, "discard") == 0 || strcmp(m, "overwrite") == 0 || strcmp(m, "block") == 0)
    return true;
  if (strncmp(m, "block:", 6) != 0 || m[6] == '\0')
    return false;
  char *end;
  errno = 0;
  unsigned long ms = strtoul(m + 6, &end, 10);
  return *end == '\0' && errno == 0 && m[6] != '-' && ms >= 1 && ms <= 3600000;
}

static int check_options(const struct options *o) {
  if (o->events && (o->events[0] == '\0' || strchr(o->events, ';')))
    return usage_error("bad --events '%s' (a comma-separated list of globs, no ';')", o->events);
  if (o->mode && !valid_mode(o->mode))
    return usage_error("bad --mode '%s' (discard, overwrite, block or block:MS)", o->mode);
  if (o->buffer_kb) {
    char *end;
    errno = 0;
    unsigned long kb = strtoul(o->buffer_kb, &end, 10);
    if (o->buffer_kb[0] < '0' || o->buffer_kb[0] > '9' || *end || errno || kb == 0 ||
        kb > (1ul << 22))
      return usage_error("bad --buffer-kb '%s' (1 to 4194304)", o->buffer_kb);
  }
  if (o->output[0] == '\0')
    return usage_error("%sempty --output", "");
  if (o->tracer && strcmp(o->tracer, "function") != 0 && strcmp(o->tracer, "function_graph") != 0 &&
      strcmp(o->tracer, "nop") != 0)
    return usage_error("bad --plugin '%s' (function, function_graph or nop)", o->tracer);
  const char *lists[] = {o->filter, o->notrace, o->graph};
  for (int i = 0; i < 3; i++)
    if (lists[i] && strpbrk(lists[i], ";= \t"))
      return usage_error("bad function glob in '%s' (no ';', '=' or blank)", lists[i]);
  if ((o->filter || o->notrace || o->graph) && !o->tracer)
    return usage_error("%s-l, -n and -g need -p function or -p function_graph", "");
  return -1;
}

/* Returns -1 when *o is complete, else the exit code. */
static int parse(int argc, char **argv, struct options *o) {
  memset(o, 0, sizeof *o);
  o->output = "fxtrace.fxt";
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    bool missing = false;
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(k_usage, stdout);
      return CLI_EXIT_OK;
    }
    if (a[0] != '-' || a[1] == '\0')
      break; /* CMD */
    const char *glob = NULL;
    char **list = NULL;
    if (option_value(argc, argv, &i, "-l", "--filter", &glob, &missing))
      list = &o->filter;
    else if (option_value(argc, argv, &i, "-n", "--notrace", &glob, &missing))
      list = &o->notrace;
    else if (option_value(argc, argv, &i, "-g", "--graph", &glob, &missing))
      list = &o->graph;
    if (list != NULL && !missing && !add_glob(list, glob))
      return usage_error("%sout of memory", "");
    if (list == NULL &&
        !option_value(argc, argv, &i, "-e", "--events", &o->events, &missing) &&
        !option_value(argc, argv, &i, "-p", "--plugin", &o->tracer, &missing) &&
        !option_value(argc, argv, &i, "-b", "--buffer-kb", &o->buffer_kb, &missing) &&
        !option_value(argc, argv, &i, "-m", "--mode", &o->mode, &missing) &&
        !option_value(argc, argv, &i, "-o", "--output", &o->output, &missing))
      return usage_error("unknown option '%s'", a);
    if (missing)
      return usage_error("option '%s' needs a value", a);
  }
  if (i >= argc)
    return usage_error("%smissing CMD", "");
  o->cmd = argv + i;
  return check_options(o);
}

/* ---- the FXTRACE value ---------------------------------------------------------------------- */

static size_t len_of(const char *s) {
  return s ? strlen(s) : 0;
}

/* "events=..;buffer_kb=..;mode=..;tracer=..;ftrace_filter=..;...;output=DIR/fxtrace-%p.fxt"
 * with only the options given. A '%' in DIR is written "%%" (FXTRACE's output escapes it);
 * NULL when it does not fit. */
static char *fxtrace_value(const struct options *o, const char *dir) {
  size_t cap = strlen(dir) * 2 + 160 + len_of(o->events) + len_of(o->mode) +
               len_of(o->buffer_kb) + len_of(o->tracer) + len_of(o->filter) +
               len_of(o->notrace) + len_of(o->graph);
  char *v = malloc(cap), *p = v;
  if (v == NULL)
    return NULL;
  const struct {
    const char *key, *value;
  } given[] = {{"ftrace_filter", o->filter}, {"ftrace_notrace", o->notrace},
               {"graph_function", o->graph}, {"tracer", o->tracer},
               {"events", o->events},        {"buffer_kb", o->buffer_kb},
               {"mode", o->mode}};
  for (size_t i = 0; i < sizeof given / sizeof given[0]; i++)
    if (given[i].value)
      p += sprintf(p, "%s=%s;", given[i].key, given[i].value);
  p += sprintf(p, "output=");
  for (const char *d = dir; *d; d++) {
    if (*d == '%')
      *p++ = '%';
    *p++ = *d;
  }
  strcpy(p, "/fxtrace-%p.fxt");
  return v;
}

/* A private directory for the traces: $TMPDIR unless it would break the FXTRACE syntax. */
static char *make_dir(void) {
  const char *base = getenv("TMPDIR");
  if (base == NULL || base[0] != '/' || strchr(base, ';') || strlen(base) > 3000)
    base = "/tmp";
  size_t n = strlen(base) + 32;
  char *dir = malloc(n);
  if (dir == NULL)
    return NULL;
  snprintf(dir, n, "%s/fxtrace-record.XXXXXX", base);
  if (mkdtemp(dir) == NULL) {
    fprintf(stderr, "fxtrace record: cannot create a directory in %s: %s\n", base,
            strerror(errno));
    free(dir);
    return NULL;
  }
  return dir;
}

/* ---- running CMD ----------------------------------------------------------------------------- */

static volatile sig_atomic_t g_child;

/* SIGINT/SIGTERM while CMD runs: a signal sent to fxtrace (kill) is passed on; one the
 * terminal sent reached CMD's process group already, so fxtrace only survives it to merge. */
static void forward(int sig, siginfo_t *info, void *uctx) {
  (void)uctx;
  if (g_child > 0 && info != NULL && info->si_code <= 0) /* SI_USER, SI_QUEUE, ... */
    kill((pid_t)g_child, sig);
}

static int run(char **cmd, const char *value) {
  struct sigaction sa, old_int, old_term;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = forward;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "fxtrace record: fork: %s\n", strerror(errno));
    return CLI_EXIT_FAIL;
  }
  if (pid == 0) {
    if (setenv("FXTRACE", value, 1) == 0)
      execvp(cmd[0], cmd);
    int e = errno;
    fprintf(stderr, "fxtrace record: %s: %s\n", cmd[0], strerror(e));
    _exit(e == ENOENT ? RECORD_EXIT_NOT_FOUND : RECORD_EXIT_CANNOT_RUN);
  }
  g_child = pid;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  g_child = 0;
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : CLI_EXIT_FAIL;
}

/* ---- after CMD --------------------------------------------------------------------------- */

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d != NULL) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
        continue;
      char path[4200];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
    closedir(d);
  }
  if (rmdir(dir) != 0)
    fprintf(stderr, "fxtrace record: cannot remove %s: %s\n", dir, strerror(errno));
}

/* The sessions of CMD's tree that ended without stopping them (_exit, exec, a signal, a
 * crash) and that no traced parent harvested: their traces are written into their files in
 * dir from their buffers (src/host/harvest.h), each said on stderr, and their buffers go.
 * A session whose process still runs (an exec'd image that does not trace) is named and left;
 * a live session (its lock held) is not touched. */
static void harvest_sessions(const char *dir) {
  char base[64];
  snprintf(base, sizeof base, "/dev/shm/fxtrace-%u", (unsigned)geteuid());
  DIR *d = opendir(base);
  if (d == NULL)
    return;
  size_t dlen = strlen(dir);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char sdir[4400], msg[1024];
    if (e->d_name[0] == '.' || (size_t)snprintf(sdir, sizeof sdir, "%s/%s", base, e->d_name) >=
                                   sizeof sdir)
      continue;
    /* Only ours are locked (the header is read without the lock): another program's
     * harvester must not find its sessions held by this look. */
    struct fxt_sdir_info info;
    if (fxt_sdir_read(sdir, &info, msg, sizeof msg) != 0 ||
        strncmp(info.output, dir, dlen) != 0 || info.output[dlen] != '/')
      continue;
    if (fxt_proc_running(info.pid, info.proc_start)) {
      fprintf(stderr,
              "fxtrace record: pid %u still runs (a process CMD left behind, or one that "
              "exec'd an image that does not trace): its buffers stay in %s (`fxtrace "
              "recover`)\n",
              info.pid, sdir);
      continue;
    }
    /* Its process is gone: a holder of its lock only takes a look. */
    int lock = fxt_sdir_lock(sdir, 2000);
    if (lock == -ENOENT)
      continue; /* removed meanwhile: nothing was left in it (a clean-up) */
    if (lock < 0) {
      fprintf(stderr, "fxtrace record: %s: not harvested: %s\n", sdir, strerror(-lock));
      continue;
    }
    if (cli_harvest(sdir, msg, sizeof msg) != FXT_ENOENT ||
        access(sdir, F_OK) == 0) /* (not: another harvested it meanwhile) */
      fprintf(stderr, "fxtrace record: %s\n", msg);
    close(lock);
  }
  closedir(d);
  rmdir(base); /* once no session is left in it, as a session's clean stop does */
}

/* The summary line of the FXT file fxt, recorded for output. */
static void summary(const char *fxt, const char *output) {
  struct fxtf_file *f = cli_open("record", fxt, false);
  if (f == NULL)
    return;
  struct fxtf_totals t;
  fxtf_totals(f, &t);
  fprintf(stderr, "fxtrace: recorded %" PRIu64 " events from %" PRIu32 " process%s (%" PRIu32
         " thread%s) to %s; %" PRIu64 " dropped, %" PRIu64 " overrun, %" PRIu64 " lost\n",
         t.events, t.providers, t.providers == 1 ? "" : "es", t.threads,
         t.threads == 1 ? "" : "s", strcmp(output, "-") ? output : "standard output", t.dropped,
         t.overrun, t.lost);
  fxtf_close(f);
}

/* Whether the output can be written, asked before CMD runs rather than found out after: a
 * directory that is not there, or not writable, or an output that is a directory. */
static bool output_writable(const char *output) {
  if (strcmp(output, "-") == 0)
    return true;
  struct stat st;
  if (stat(output, &st) == 0 && S_ISDIR(st.st_mode)) {
    fprintf(stderr, "fxtrace record: -o %s: is a directory\n", output);
    return false;
  }
  size_t n = strlen(output);
  char *dir = malloc(n + 2);
  if (dir == NULL)
    return true; /* found out at the end, as before */
  memcpy(dir, output, n + 1);
  char *slash = strrchr(dir, '/');
  if (slash == NULL)
    strcpy(dir, ".");
  else
    slash[slash == dir] = 0; /* "/x" -> "/" */
  const char *why = NULL;
  if (stat(dir, &st) != 0)
    why = strerror(errno);
  else if (!S_ISDIR(st.st_mode))
    why = strerror(ENOTDIR);
  else if (access(dir, W_OK | X_OK) != 0)
    why = strerror(errno);
  bool ok = why == NULL;
  if (!ok)
    fprintf(stderr, "fxtrace record: -o %s: cannot create a file in %s: %s\n", output, dir, why);
  free(dir);
  return ok;
}

int cmd_record(int argc, char **argv) {
  struct options o;
  int rc = parse(argc, argv, &o);
  if (rc < 0 && strcmp(o.output, "-") == 0 && cli_refuse_tty("record"))
    rc = CLI_EXIT_USAGE;
  else if (rc < 0 && !output_writable(o.output))
    rc = CLI_EXIT_FAIL;
  char *dir = rc < 0 ? make_dir() : NULL;
  char *value = dir ? fxtrace_value(&o, dir) : NULL;
  free(o.filter); /* in value now */
  free(o.notrace);
  free(o.graph);
  if (rc >= 0)
    return rc;
  if (value == NULL) {
    if (dir)
      remove_dir(dir);
    free(dir);
    return CLI_EXIT_FAIL;
  }
  /* CMD's sessions are this process's to harvest (harvest_sessions): a lock on a file in dir
   * that it holds until it ends says so to every other harvester (src/base/sdir.h). */
  char hpath[4200];
  snprintf(hpath, sizeof hpath, "%s/%s", dir, FXT_HARVESTER_FILE);
  int hfd = open(hpath, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (hfd >= 0 && flock(hfd, LOCK_EX | LOCK_NB) != 0) {
    close(hfd);
    hfd = -1;
  }
  /* Before CMD runs: the traces of this user's processes that died without stopping their
   * sessions and that nothing else will harvest are completed (src/base/sdir.h), each said. */
  char shm[64];
  snprintf(shm, sizeof shm, "/dev/shm/fxtrace-%u", (unsigned)geteuid());
  cli_harvest_dead(shm, "fxtrace record");
  rc = run(o.cmd, value);
  harvest_sessions(dir);
  /* -o X.dat: the merged FXT goes to X.dat.fxt, then is converted and removed (kept, with
   * the reason, when the conversion fails). -o -: merged in dir (not as a "*.fxt", which the
   * merge would take), then copied to stdout, after the summary read it back. */
  bool to_stdout = strcmp(o.output, "-") == 0;
  size_t n = strlen(to_stdout ? dir : o.output);
  bool dat = fxt_outfile_is_dat(o.output);
  char *fxt = malloc(n + 16);
  if (fxt == NULL) {
    fprintf(stderr, "fxtrace record: out of memory\n");
    return CLI_EXIT_FAIL;
  }
  sprintf(fxt, to_stdout ? "%s/merged.out" : dat ? "%s.fxt" : "%s", to_stdout ? dir : o.output);
  size_t found = 0;
  int merged = record_merge(dir, fxt, &found);
  if (merged > 0)
    summary(fxt, o.output);
  if (merged > 0 && !record_events_check(fxt, o.events))
    rc = RECORD_EXIT_NOTHING;
  if (merged > 0 && to_stdout && !cli_copy_to_stdout("record", fxt) && rc == 0)
    rc = CLI_EXIT_FAIL;
  if (merged > 0 && dat) {
    char err[512] = "";
    int crc = fxt_tracedat_file(fxt, o.output, NULL, err, sizeof err);
    if (crc == 0)
      unlink(fxt);
    else
      fprintf(stderr, "fxtrace record: %s: not written (%s: %s); the trace is in %s\n",
              o.output, fxt_strerror(crc), err, fxt);
    if (crc != 0 && rc == 0)
      rc = CLI_EXIT_FAIL;
  } else if (merged == 0) {
    char what[4200];
    snprintf(what, sizeof what, to_stdout ? "nothing was written to %s" : "%s was not written",
             to_stdout ? "standard output" : o.output);
    if (found == 0)
      fprintf(stderr,
              "fxtrace record: %s wrote no trace: no process it ran is linked with libfxtrace "
              "(or none could start tracing); %s\n",
              o.cmd[0], what);
    else
      fprintf(stderr, "fxtrace record: the %zu trace file%s of %s held no records; %s\n", found,
              found == 1 ? "" : "s", o.cmd[0], what);
    if (rc != RECORD_EXIT_NOT_FOUND && rc != RECORD_EXIT_CANNOT_RUN)
      rc = RECORD_EXIT_NOTHING; /* (CMD that could not run was said already) */
  }
  if (merged < 0) {
    /* The output could not be written: the processes' traces stay where they are. */
    fprintf(stderr, "fxtrace record: the recorded traces are kept in %s (`fxtrace merge`)\n",
            dir);
    if (rc == 0)
      rc = CLI_EXIT_FAIL;
  } else {
    remove_dir(dir);
  }
  if (hfd >= 0)
    close(hfd);
  free(fxt);
  free(value);
  free(dir);
  return rc;
}
