/* tools/fxtrace/convert.c - `fxtrace convert FILE --to FORMAT -o OUT`: an fxtrace FXT file in
 * another format, or a trace-cmd trace.dat as FXT. Each format is one entry of k_targets: a
 * function that reads the mapped
 * input and hands its output to the job's write callback (a new format is one entry and one
 * function). The input is mapped once; a target may tell which parts it is done with
 * (job.release), and those pages are dropped, so files far larger than memory convert in
 * bounded resident memory. The output file is created at the first byte written, so a bad
 * input leaves no file behind (and an existing OUT untouched); a failure after that removes it
 * (formats/fileio.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/json.h"
#include "formats/tracedat_import.h"
#include "formats/tracedat_write.h"
#include "progress.h"
#include "tool_io.h"

static const char k_usage[] =
    "usage: fxtrace convert [--help] FILE [--to FORMAT] -o OUT [--no-cpu] [--strict] [-q]\n"
    "\n"
    "Writes FILE (an fxtrace FXT file) as OUT in FORMAT (default: from OUT's extension):\n"
    "  json      Chrome trace-event JSON, for chrome://tracing and ui.perfetto.dev (.json)\n"
    "  tracedat  trace-cmd's trace.dat (version 6), for trace-cmd report and KernelShark\n"
    "            (.dat)\n"
    "or FILE, a trace-cmd trace.dat (versions 6 and 7, uncompressed; from `trace-cmd record`\n"
    "or fxtrace), as FXT:\n"
    "  fxt       every event as an instant with its fields as arguments; sched_switch and\n"
    "            sched_waking/wakeup also as scheduling records (Perfetto's CPU tracks) (.fxt)\n"
    "FILE \"-\" is stdin (a pipe too: read whole into a temporary file first); OUT \"-\" is\n"
    "stdout (a binary format not to a terminal). Memory does not grow with the file.\n"
    "json: events in time order (sorted through a temporary file in $TMPDIR, else /tmp),\n"
    "begin/end pairs as complete events, flows at the start of their slice (as Chromium's\n"
    "DevTools needs them); bookkeeping shows as counters: \"fxtrace lost (tid T)\" (running\n"
    "total of the thread's lost records) and \"cpu (tid T)\" (--no-cpu: none).\n"
    "tracedat: events on the CPU their thread ran on, sorted through a temporary file in\n"
    "$TMPDIR (else /tmp) when they do not fit in 8 MiB; lost records show as the pages'\n"
    "dropped events (\"CPU:N [n EVENTS DROPPED]\" in trace-cmd report).\n"
    "An FXT FILE that ends inside a record (a write cut short: a full disk, a crash) is\n"
    "converted up to that record, with a warning naming its offset; --strict refuses it.\n"
    "A summary goes to stderr unless -q.\n";

/* What a target gets: the input, where the output goes, and the options. */
struct job {
  const char *in_path;
  const void *data;
  size_t len;
  fxt_json_write_fn write; /* (same signature for every target) */
  void *write_ctx;
  fxt_json_release_fn release;
  void *release_ctx;
  bool no_cpu, strict;
  uint64_t torn;           /* what run says: the input's torn tail, 0 none */
  char err[FXTF_ERR_SIZE]; /* why run failed */
  char summary[512];       /* what run wrote, for the line on stderr */
};

struct target {
  const char *name;
  const char *ext; /* OUT's extension that selects it when --to is not given */
  int (*run)(struct job *j); /* 0, or a negative FXT_E* code with j->err set */
  bool from_tracedat;
  bool binary; /* not for a terminal (`-o -`: cli_refuse_tty) */
};

static int to_json(struct job *j) {
  struct fxt_json_options o = {(j->no_cpu ? FXT_JSON_NO_CPU : 0) |
                                   (j->strict ? FXT_JSON_STRICT : 0),
                               j->write, j->write_ctx, j->release, j->release_ctx, NULL, 0};
  struct fxt_json_stats st;
  int rc = fxt_json_convert(j->data, j->len, &o, &st, j->err, sizeof j->err);
  j->torn = st.torn;
  snprintf(j->summary, sizeof j->summary,
           "%" PRIu64 " events, %" PRIu64 " lost counters (%" PRIu64 " records lost), %" PRIu64
           " cpu counters, %" PRIu64 " names, %" PRIu32 " processes; %" PRIu64 " bytes%s",
           st.events, st.lost_counters, st.lost_records, st.cpu_counters, st.metadata,
           st.providers, st.bytes,
           st.unmatched_begin + st.unmatched_end ? " (durations cut by losses: " : "");
  if (st.unmatched_begin + st.unmatched_end) {
    size_t n = strlen(j->summary);
    snprintf(j->summary + n, sizeof j->summary - n,
             "%" PRIu64 " begins without end, %" PRIu64 " ends without begin)",
             st.unmatched_begin, st.unmatched_end);
  }
  if (st.paired + st.flows_bound) {
    size_t n = strlen(j->summary);
    snprintf(j->summary + n, sizeof j->summary - n,
             "; %" PRIu64 " begin/end pairs as complete events, %" PRIu64
             " flow events at their slice's start",
             st.paired, st.flows_bound);
  }
  return rc;
}

static int to_tracedat(struct job *j) {
  struct fxt_tracedat_options o = {.write = j->write, .write_ctx = j->write_ctx,
                                   .release = j->release, .release_ctx = j->release_ctx,
                                   .strict = j->strict};
  struct fxt_tracedat_stats st;
  int rc = fxt_tracedat_convert(j->data, j->len, &o, &st, j->err, sizeof j->err);
  j->torn = st.torn;
  snprintf(j->summary, sizeof j->summary,
           "%" PRIu64 " events on %" PRIu32 " CPUs, %" PRIu64 " formats, %" PRIu32
           " task names, %" PRIu64 " lost records shown as dropped (%" PRIu64
           " after the last event of their thread or CPU, %" PRIu64
           " events too big for a page, %" PRIu64 " pages without a count); %" PRIu64
           " pages, %" PRIu64 " bytes",
           st.events, st.cpus, st.formats, st.cmdlines, st.missed, st.lost_trailing, st.too_big,
           st.missed_unknown, st.pages, st.bytes);
  return rc;
}

static int to_fxt(struct job *j) {
  struct fxt_td_fxt_stats st;
  int rc = fxt_td_to_fxt(j->data, j->len, j->write, j->write_ctx, &st, j->err, sizeof j->err);
  snprintf(j->summary, sizeof j->summary,
           "trace.dat v%" PRIu32 ", %" PRIu32 " CPUs, clock %s: %" PRIu64 " events (%" PRIu64
           " context switches, %" PRIu64 " wakeups), %" PRIu64 " tasks, %" PRIu64
           " records of unknown events skipped; lost: %" PRIu64 " events in %" PRIu64
           " pages (%" PRIu64 " pages without a count) + %" PRIu64 " from CPU stats; %" PRIu64
           " bytes%s",
           st.version, st.cpus, st.clock, st.events, st.switches, st.wakeups, st.threads,
           st.unknown, st.lost_known, st.lost_pages, st.lost_unknown, st.lost_cpustat,
           st.bytes_out,
           st.cut_fields ? " (events with more than 15 fields keep their first 15)" : "");
  return rc;
}

/* from_tracedat: the target reads a trace.dat (every other one reads FXT). */
static const struct target k_targets[] = {
    {"json", ".json", to_json, false, false},
    {"tracedat", ".dat", to_tracedat, false, true},
    {"fxt", ".fxt", to_fxt, true, true},
};
#define NTARGETS (sizeof k_targets / sizeof k_targets[0])

/* The output and the input's release as the targets call them, with the progress line. */
struct watched {
  struct fxt_fio_out *out;
  struct fxt_fio_in *in;
  struct progress prog;
};

static int watched_write(void *ctx, const void *data, size_t n) {
  struct watched *w = ctx;
  w->prog.written += n;
  progress_update(&w->prog);
  return fxt_fio_write(w->out, data, n);
}

/* A target releases input as its pass moves on: where the pass is (a second pass starts at 0
 * again). */
static void watched_release(void *ctx, uint64_t from, uint64_t to) {
  struct watched *w = ctx;
  w->prog.done = to;
  progress_update(&w->prog);
  fxt_fio_release(w->in, from, to);
}

/* ---- arguments ------------------------------------------------------------------------------ */

struct args {
  const char *in, *out, *to;
  bool no_cpu, quiet, strict;
};

/* The value of option `name` (given as "NAME VALUE" or "NAME=VALUE", or for a one-letter
 * option "-oVALUE"), advancing *i; NULL when argv[*i] is not that option. *missing is set when
 * the option has no value. */
static const char *opt_value(int argc, char **argv, int *i, const char *name, bool *missing) {
  const char *a = argv[*i];
  size_t n = strlen(name);
  if (strncmp(a, name, n) != 0)
    return NULL;
  if (a[n] == '=' && name[1] == '-')
    return a + n + 1;
  if (a[n] != '\0')
    return name[1] != '-' ? a + n : NULL;
  if (*i + 1 >= argc) {
    *missing = true;
    return NULL;
  }
  return argv[++*i];
}

static int parse_args(int argc, char **argv, struct args *a) {
  char msg[300];
  memset(a, 0, sizeof *a);
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i], *v;
    bool missing = false;
    if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) {
      fputs(k_usage, stdout);
      return CLI_EXIT_OK;
    }
    if ((v = opt_value(argc, argv, &i, "--to", &missing)) != NULL)
      a->to = v;
    else if ((v = opt_value(argc, argv, &i, "-o", &missing)) != NULL ||
             (v = opt_value(argc, argv, &i, "--output", &missing)) != NULL)
      a->out = v;
    else if (missing) {
      snprintf(msg, sizeof msg, "option '%s' needs a value", s);
      return cli_usage_error("convert", k_usage, msg);
    } else if (strcmp(s, "--no-cpu") == 0)
      a->no_cpu = true;
    else if (strcmp(s, "--strict") == 0)
      a->strict = true;
    else if (strcmp(s, "-q") == 0 || strcmp(s, "--quiet") == 0)
      a->quiet = true;
    else if (strcmp(s, "--") == 0 && i + 1 < argc && a->in == NULL)
      a->in = argv[++i];
    else if (s[0] == '-' && s[1] != '\0') {
      snprintf(msg, sizeof msg, "unknown option '%s'", s);
      return cli_usage_error("convert", k_usage, msg);
    } else if (a->in != NULL)
      return cli_usage_error("convert", k_usage, "more than one FILE");
    else
      a->in = s;
  }
  if (a->in == NULL)
    return cli_usage_error("convert", k_usage, "missing FILE");
  if (a->out == NULL || a->out[0] == '\0')
    return cli_usage_error("convert", k_usage, "missing -o OUT");
  return -1;
}

static void supported(char *buf, size_t size) {
  size_t n = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < NTARGETS && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", k_targets[i].name);
}

static const struct target *find_target(const struct args *a, int *rc) {
  char names[200], msg[400];
  supported(names, sizeof names);
  if (a->to != NULL) {
    for (size_t i = 0; i < NTARGETS; i++)
      if (strcmp(a->to, k_targets[i].name) == 0)
        return &k_targets[i];
    snprintf(msg, sizeof msg, "unknown format '%s' (supported: %s)", a->to, names);
  } else {
    size_t n = strlen(a->out);
    for (size_t i = 0; i < NTARGETS; i++) {
      size_t e = strlen(k_targets[i].ext);
      if (n > e && strcmp(a->out + n - e, k_targets[i].ext) == 0)
        return &k_targets[i];
    }
    snprintf(msg, sizeof msg, "OUT's extension does not say the format: say --to FORMAT "
                              "(supported: %s)", names);
  }
  *rc = cli_usage_error("convert", k_usage, msg);
  return NULL;
}

int cmd_convert(int argc, char **argv) {
  struct args a;
  int rc = parse_args(argc, argv, &a);
  if (rc >= 0)
    return rc;
  const struct target *t = find_target(&a, &rc);
  if (t == NULL)
    return rc;
  if (t->binary && strcmp(a.out, "-") == 0 && cli_refuse_tty("convert"))
    return CLI_EXIT_USAGE;
  struct fxt_fio_in in;
  if (tool_map("convert", a.in, &in) != 0)
    return CLI_EXIT_FAIL;
  struct stat out_st;
  if (strcmp(a.out, "-") != 0 && stat(a.out, &out_st) == 0 && out_st.st_dev == in.dev &&
      out_st.st_ino == in.ino) { /* truncating the mapped input would crash the reader */
    fxt_fio_unmap(&in);
    return cli_usage_error("convert", k_usage, "OUT is FILE itself");
  }
  if (fxt_td_is_tracedat(in.data, in.len) != t->from_tracedat) {
    fxt_fio_unmap(&in);
    cli_file_error("convert", a.in, t->from_tracedat
                                        ? "not a trace.dat file: only a trace.dat converts to fxt"
                                        : "a trace.dat file converts to fxt only (--to fxt)");
    return CLI_EXIT_USAGE;
  }
  struct fxt_fio_out out = FXT_FIO_OUT(a.out, 0666);
  struct watched w = {&out, &in, {0}};
  progress_init(&w.prog, "convert", in.len);
  struct job *j = calloc(1, sizeof *j);
  if (j == NULL) {
    fprintf(stderr, "fxtrace convert: out of memory\n");
    rc = CLI_EXIT_FAIL;
  } else {
    *j = (struct job){.in_path = a.in, .data = in.data, .len = in.len, .write = watched_write,
                      .write_ctx = &w, .release = watched_release, .release_ctx = &w,
                      .no_cpu = a.no_cpu, .strict = a.strict};
    int err = fxt_fio_close(&out, t->run(j));
    progress_end(&w.prog);
    rc = CLI_EXIT_OK;
    if (j->torn != 0 && err == 0 && out.saved_errno == 0)
      cli_torn("convert", a.in, j->torn, in.len, false);
    if (out.saved_errno != 0) { /* the output failed: say why in the system's words */
      cli_file_error("convert", a.out, strerror(out.saved_errno));
      rc = CLI_EXIT_FAIL;
    } else if (err != 0) {
      cli_file_error("convert", a.in, j->err[0] ? j->err : fxt_strerror(err));
      rc = CLI_EXIT_FAIL;
    } else if (!a.quiet) {
      char shown[1536]; /* the summary names things of the file (a clock): never raw */
      fprintf(stderr, "fxtrace convert: %s -> %s (%s): %s\n", a.in, a.out, t->name,
              cli_printable(j->summary, strlen(j->summary), shown, sizeof shown));
    }
    free(j);
  }
  fxt_fio_unmap(&in);
  return rc;
}
