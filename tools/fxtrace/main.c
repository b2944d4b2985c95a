/* tools/fxtrace/main.c - `fxtrace SUBCOMMAND ...`: dispatch and the helpers of cli.h. */
#include "cli.h"
#include "control_cmds.h"

#include <errno.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include <fxtrace/errors.h>
#include <fxtrace/fxt.h>
#include <fxtrace/version.h>

#include "base/sdir.h"
#include "formats/fileio.h"
#include "formats/tracedat_write.h"

struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
};

static const struct command k_commands[] = {
    {"record", cmd_record, "run a command with tracing on and merge its traces into one file"},
    {"report", cmd_report, "print a trace as ftrace text, one line per event, in time order"},
    {"stats", cmd_stats, "count events per event name and per thread, with losses"},
    {"hist", cmd_hist, "the kernel's event histogram (hist trigger) over a trace's events"},
    {"list", cmd_list, "list the events compiled into executables and shared objects"},
    {"check", cmd_check, "validate a trace against fxtrace's FXT conventions"},
    {"ps", cmd_ps, "list the traced processes that serve live control"},
    {"ls", cmd_ls, "list a directory of a traced process's tracefs tree"},
    {"cat", cmd_cat, "print a file of a traced process's tracefs tree (trace_pipe streams)"},
    {"write", cmd_write, "write a value to a file of a traced process's tracefs tree"},
    {"snapshot", cmd_snapshot, "write what a traced process's buffers hold now to a file"},
    {"mount", cmd_mount, "mount a traced process's tracefs tree with FUSE"},
    {"convert", cmd_convert, "write a trace in another format (JSON, trace.dat; trace.dat to FXT)"},
    {"merge", cmd_merge, "align kernel (trace.dat) and fxtrace traces on CLOCK_MONOTONIC"},
    {"recover", cmd_recover, "write the complete trace of a session whose process died"},
};
#define NCOMMANDS (sizeof k_commands / sizeof k_commands[0])

static void usage(FILE *out) {
  fprintf(out, "usage: fxtrace COMMAND [ARGS...]\n       fxtrace --version\n\ncommands:\n");
  for (size_t i = 0; i < NCOMMANDS; i++)
    fprintf(out, "  %-8s %s\n", k_commands[i].name, k_commands[i].summary);
  fprintf(out, "  %-8s %s\n  %-8s %s\n", "help", "the commands, or 'help COMMAND': COMMAND --help",
          "version", "the version of fxtrace (also --version)");
  fprintf(out, "\n'fxtrace COMMAND --help' describes each one. Exit status: 0 success, 1\n"
               "failure, 2 usage error (record: also CMD's own, see 'fxtrace record --help').\n");
}

static bool g_out_reported; /* cli_write said the output failed */

/* A command's exit code, after standard output is flushed: a write that failed (a full disk,
 * /dev/full, a closed pipe) is said and is a failure, whatever the command returned. */
static int out_checked(const char *cmd, int rc) {
  int before = errno; /* of the command's own failed flush, when there was one */
  int err = fflush(stdout) != 0 ? errno : ferror(stdout) ? (before ? before : EIO) : 0;
  if (err == 0 || g_out_reported)
    return err == 0 ? rc : CLI_EXIT_FAIL;
  fprintf(stderr, "fxtrace%s%s: writing standard output: %s\n", cmd ? " " : "", cmd ? cmd : "",
          strerror(err));
  return CLI_EXIT_FAIL;
}

static const struct command *find_command(const char *name) {
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (strcmp(name, k_commands[i].name) == 0)
      return &k_commands[i];
  return NULL;
}

/* Edit distance (insertions, deletions, substitutions, swaps of two neighbours) of a and b,
 * capped at 9: names are short. */
static unsigned distance(const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b);
  if (n > 16 || m > 16)
    return 9;
  unsigned d[17][17];
  for (size_t i = 0; i <= n; i++)
    for (size_t j = 0; j <= m; j++) {
      if (i == 0 || j == 0) {
        d[i][j] = (unsigned)(i + j);
        continue;
      }
      unsigned best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      best = d[i - 1][j] + 1 < best ? d[i - 1][j] + 1 : best;
      best = d[i][j - 1] + 1 < best ? d[i][j - 1] + 1 : best;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[n][m] < 9 ? d[n][m] : 9;
}

/* "unknown command", with the closest name when one is near (as git says it). */
static int unknown_command(const char *name) {
  char shown[256];
  fprintf(stderr, "fxtrace: unknown command '%s'",
          cli_printable(name, strlen(name), shown, sizeof shown));
  const char *best = NULL;
  unsigned best_d = 3; /* at most 2 edits, or a prefix of the name */
  for (size_t i = 0; i < NCOMMANDS; i++) {
    unsigned d = distance(name, k_commands[i].name);
    if (name[0] && strncmp(k_commands[i].name, name, strlen(name)) == 0)
      d = 1;
    if (d < best_d && d < strlen(name)) { /* (not every name is 2 edits from "xx") */
      best_d = d;
      best = k_commands[i].name;
    }
  }
  if (best != NULL)
    fprintf(stderr, "; did you mean '%s'?", best);
  fprintf(stderr, "\n'fxtrace --help' lists the commands.\n");
  return CLI_EXIT_USAGE;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return CLI_EXIT_USAGE;
  }
  const char *a = argv[1];
  if (strcmp(a, "--version") == 0 || strcmp(a, "version") == 0) {
    printf("fxtrace %s\n", fxt_version_string());
    return out_checked(NULL, CLI_EXIT_OK);
  }
  if (strcmp(a, "help") == 0 && argc > 2) { /* help CMD: CMD --help */
    const struct command *c = find_command(argv[2]);
    if (c == NULL)
      return unknown_command(argv[2]);
    char *help_argv[] = {argv[2], "--help", NULL};
    return out_checked(argv[2], c->run(2, help_argv));
  }
  if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0 || strcmp(a, "help") == 0) {
    usage(stdout);
    return out_checked(NULL, CLI_EXIT_OK);
  }
  const struct command *c = find_command(a);
  if (c != NULL)
    return out_checked(a, c->run(argc - 1, argv + 1));
  return unknown_command(a);
}

/* ---- helpers (cli.h) --------------------------------------------------------------------- */

/* The command's harvests recover with the recovery linked here (fxt_recover_direct), not the
 * module a traced process loads, and convert an output X.dat with the writer linked here, not
 * its module (src/base/recover.h, fxt_rec_dat_fn). */
static int linked_to_dat(const char *fxt, const char *dat, char *err, size_t err_size) {
  return fxt_tracedat_file(fxt, dat, NULL, err, err_size);
}

static const struct fxt_recover_ops *linked_recovery(const char *dir) {
  (void)dir;
  return &fxt_recover_direct;
}

int cli_harvest(const char *dir, char *msg, size_t msg_size) {
  return fxt_recover_direct.harvest(dir, false, false, NULL, NULL, msg, msg_size, linked_to_dat);
}

int cli_harvest_dead(const char *base, const char *who) {
  static const struct fxt_sdir_recovery linked = {linked_recovery, linked_to_dat};
  return fxt_sdir_harvest_dead(base, who, &linked);
}

void cli_file_error(const char *cmd, const char *file, const char *msg) {
  char f[1024], m[2048]; /* a file's bytes (names in it, the name itself) never go out raw */
  fprintf(stderr, "fxtrace %s: %s: %s\n", cmd, cli_printable(file, strlen(file), f, sizeof f),
          cli_printable(msg, strlen(msg), m, sizeof m));
}

int cli_usage_error(const char *cmd, const char *usage_text, const char *msg) {
  fprintf(stderr, "fxtrace %s: %s\n%s", cmd, msg, usage_text);
  return CLI_EXIT_USAGE;
}

int cli_one_file(const char *cmd, const char *usage_text, int argc, char **argv,
                 const char **file) {
  return cli_one_file_strict(cmd, usage_text, argc, argv, file, NULL);
}

int cli_one_file_strict(const char *cmd, const char *usage_text, int argc, char **argv,
                        const char **file, bool *strict) {
  *file = NULL;
  if (strict != NULL)
    *strict = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(usage_text, stdout);
      return CLI_EXIT_OK;
    }
    if (strict != NULL && strcmp(argv[i], "--strict") == 0) {
      *strict = true;
      continue;
    }
    if (strcmp(argv[i], "--") == 0 && i + 1 < argc && *file == NULL) {
      *file = argv[++i];
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1] != '\0') {
      char msg[300];
      snprintf(msg, sizeof msg, "unknown option '%s'", argv[i]);
      return cli_usage_error(cmd, usage_text, msg);
    }
    if (*file != NULL)
      return cli_usage_error(cmd, usage_text, "more than one FILE");
    *file = argv[i];
  }
  if (*file == NULL)
    return cli_usage_error(cmd, usage_text, "missing FILE");
  return -1;
}

int cli_file_cmd(const char *cmd, const char *usage, int argc, char **argv,
                 int (*run)(const char *file, bool strict)) {
  const char *path;
  bool strict;
  int rc = cli_one_file_strict(cmd, usage, argc, argv, &path, &strict);
  if (rc >= 0)
    return rc;
  rc = run(path, strict);
  if (fflush(stdout) != 0)
    rc = CLI_EXIT_FAIL;
  return rc;
}

struct fxtf_file *cli_open(const char *cmd, const char *path, bool strict) {
  char err[FXTF_ERR_SIZE];
  struct fxtf_file *f = NULL;
  if (fxtf_open(path, &f, err, sizeof err) != 0) {
    cli_file_error(cmd, path, err);
    return NULL;
  }
  uint64_t torn = fxtf_torn(f);
  size_t len;
  fxtf_data(f, &len);
  struct stat st;
  uint64_t size = strcmp(path, "-") != 0 && stat(path, &st) == 0 ? (uint64_t)st.st_size : len;
  if (torn != UINT64_MAX && !cli_torn(cmd, path, torn, size, strict)) {
    fxtf_close(f);
    return NULL;
  }
  return f;
}

bool cli_torn(const char *cmd, const char *path, uint64_t torn, uint64_t len, bool strict) {
  fprintf(stderr,
          "fxtrace %s: %s: offset %" PRIu64 ": %sthe file ends inside a record (%" PRIu64
          " bytes of it; a write cut short: a full disk, a crash)%s\n",
          cmd, path, torn, strict ? "" : "warning: ", len > torn ? len - torn : 0,
          strict ? " (--strict)" : "; read the records before it");
  return !strict;
}

const char *cli_printable(const char *s, size_t n, char *buf, size_t size) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *p = (const unsigned char *)s;
  size_t o = 0;
  for (size_t i = 0; i < n && o + 5 <= size;) {
    unsigned char ch = p[i];
    size_t k = ch >= 0xf0 ? 4 : ch >= 0xe0 ? 3 : ch >= 0xc0 ? 2 : 1;
    bool text = ch >= 0x20 && ch < 0x7f;
    if (k > 1) /* a well-formed character, but the C1 controls (U+0080..U+009F) */
      text = k <= n - i && fxt_utf8_valid(s + i, k) == k && !(ch == 0xc2 && p[i + 1] < 0xa0) &&
             o + k + 1 <= size;
    if (text) {
      memcpy(buf + o, s + i, k);
      o += k;
      i += k;
    } else {
      buf[o++] = '\\';
      buf[o++] = 'x';
      buf[o++] = hex[ch >> 4];
      buf[o++] = hex[ch & 15];
      i++;
    }
  }
  if (size > 0)
    buf[o < size ? o : size - 1] = '\0';
  return buf;
}

bool cli_write(const char *cmd, const void *data, size_t n) {
  if (n == 0 || fwrite(data, 1, n, stdout) == n)
    return true;
  fprintf(stderr, "fxtrace %s: writing standard output: %s\n", cmd, strerror(errno));
  g_out_reported = true;
  return false;
}

bool cli_refuse_tty(const char *cmd) {
  if (!isatty(STDOUT_FILENO))
    return false;
  fprintf(stderr,
          "fxtrace %s: binary trace data not written to a terminal (redirect stdout to a file "
          "or a pipe, or give -o FILE)\n",
          cmd);
  return true;
}

bool cli_copy_to_stdout(const char *cmd, const char *path) {
  struct fxt_fio_in in;
  char why[FXT_FIO_ERR_SIZE];
  if (fxt_fio_map(&in, path, why, sizeof why) != 0) {
    cli_file_error(cmd, path, why);
    return false;
  }
  bool ok = cli_write(cmd, in.data, in.len) && fflush(stdout) == 0;
  fxt_fio_unmap(&in);
  return ok;
}
