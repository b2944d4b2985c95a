/* tools/fxtrace/report.c - `fxtrace report FILE`: every event as one ftrace text line
 * (../shared/spec/ftrace-text.md §1), in time order across threads and processes, without the
 * `trace` file's header. Losses print as "CPU:N [LOST n EVENTS]" before the next event of the
 * thread that lost them, or for a CPU's losses (a kernel trace's, converted from trace.dat:
 * `lost` records with a `cpu` argument) before the next event on that CPU, as the kernel's
 * `trace` file prints them; "CPU:N [LOST EVENTS]" when their count is unknown. Losses after a
 * thread's (a CPU's) last event print at the end. With selection options (select_opts.h) only
 * the events they keep print, with the losses before them; trailing losses print as before.
 * A file with function_graph slices prints in the kernel's function_graph layout instead
 * (formats/fgraph.h), with the same selection, losses and trailing losses, and the columns
 * `-O` sets: the kernel's options/funcgraph-* (base/fgraph_text.h), as the live `trace` file.
 */
#define _GNU_SOURCE /* F_SETPIPE_SZ */
#include "cli.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fgraph_text.h"
#include "base/text.h"
#include "formats/fgraph.h"
#include "select_opts.h"

static const char k_usage[] =
    "usage: fxtrace report [--help] [--strict] [-O OPTIONS] [SELECTION...] FILE\n"
    "\n"
    "Prints the events of FILE (an fxtrace FXT file) as ftrace text, one line per event, in\n"
    "time order (CLOCK_MONOTONIC seconds):\n"
    "            comm-tid     [cpu] ..... seconds.micros: event: text\n"
    "Lines \"CPU:N [LOST n EVENTS]\" stand where a thread, or a kernel CPU buffer, lost\n"
    "records (\"CPU:N [LOST EVENTS]\" where a trace.dat page did not say how many).\n"
    "A file with function_graph calls prints in the kernel's function_graph layout\n"
    "(\" CPU) DURATION | func() {\" ... \"}\", its header first), other events as\n"
    "\"/* event: text */\" comment lines in it.\n"
    "  -O OPTIONS  that layout's options, comma-separated, as the kernel's trace_options\n"
    "              takes them: funcgraph-NAME turns NAME on, nofuncgraph-NAME off; NAME is\n"
    "              abstime, cpu, duration, overhead, proc or tail (on by default: cpu,\n"
    "              duration, overhead). -O may repeat: the last word of an option wins.\n"
    "A file that ends inside a record (a write cut short) is read up to it, with a warning;\n"
    "--strict makes that an error.\n"
    "SELECTION:\n" CLI_SEL_USAGE;

/* Lines are collected in one buffer and written in blocks of about this size. */
#define FLUSH_BYTES (1u << 20)

static bool flush(struct fxt_tbuf *b) {
  bool ok = !b->oom && cli_write("report", b->data, b->len);
  if (b->oom)
    fprintf(stderr, "fxtrace report: out of memory\n");
  b->len = 0;
  return ok;
}

/* Losses no later event of their thread can carry, in thread order, then those of CPUs. */
static void trailing_losses(const struct fxtf_file *f, struct fxt_tbuf *b) {
  uint32_t n;
  const struct fxtf_thread *t = fxtf_threads(f, &n);
  for (uint32_t i = 0; i < n; i++)
    if (t[i].trailing_lost || t[i].trailing_unknown)
      fxt_text_lost(b, t[i].cpu, t[i].trailing_lost, t[i].trailing_unknown);
  size_t ncpu;
  const struct fxtf_cpu_loss *c = fxtf_trailing_cpu_losses(f, &ncpu);
  for (size_t i = 0; i < ncpu; i++)
    fxt_text_lost(b, c[i].cpu, c[i].records, c[i].unknown);
}

static bool flush_cb(void *ctx, struct fxt_tbuf *b) {
  (void)ctx;
  return flush(b);
}

/* A file with function_graph slices prints in the kernel's function_graph layout
 * (formats/fgraph.h); *done false when it has none. */
static int report_graph(const char *path, struct fxtf_file *f, struct fxt_sel *sel,
                        uint32_t opts, struct fxt_tbuf *b, bool *done) {
  char err[FXTF_ERR_SIZE];
  int rc = fxt_fgraph_print(f, fxt_sel_any(sel) ? sel : NULL, opts, b, FLUSH_BYTES, flush_cb,
                            NULL, done, err, sizeof err);
  if (rc == FXT_EBADMSG)
    cli_file_error("report", path, err);
  else if (rc == FXT_ENOMEM)
    fprintf(stderr, "fxtrace report: out of memory\n");
  return rc == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

static int report(const char *path, struct fxtf_file *f, struct fxt_sel *sel, uint32_t opts) {
  struct fxt_tbuf b;
  struct fxtf_event *ev = malloc(sizeof *ev);
  char err[FXTF_ERR_SIZE];
  int rc = CLI_EXIT_OK;
  fxt_tbuf_init(&b);
  if (ev == NULL || !fxt_tbuf_reserve(&b, FLUSH_BYTES + 4096)) {
    fprintf(stderr, "fxtrace report: out of memory\n");
    free(ev);
    return CLI_EXIT_FAIL;
  }
#ifdef F_SETPIPE_SZ
  /* Into a pipe, a block at a time: a pipe of 64 KiB took each block in 16 pieces, with a
   * switch to the reader and back between them. Advice: the size is capped for the user. */
  struct stat st;
  if (fstat(STDOUT_FILENO, &st) == 0 && S_ISFIFO(st.st_mode))
    (void)fcntl(STDOUT_FILENO, F_SETPIPE_SZ, (int)FLUSH_BYTES);
#endif
  size_t n = fxtf_event_count(f);
  bool any = fxt_sel_any(sel), oom = false;
  if (any && fxt_sel_bind(sel, f) != 0)
    oom = true;
  bool graph = false;
  if (!oom)
    rc = report_graph(path, f, sel, opts, &b, &graph);
  for (size_t i = 0; i < n && rc == CLI_EXIT_OK && !oom && !graph; i++) {
    if (fxtf_event_at(f, i, ev, err, sizeof err) != 0) {
      cli_file_error("report", path, err);
      rc = CLI_EXIT_FAIL;
      break;
    }
    if (any && !fxt_sel_match(sel, ev, &oom))
      continue;
    fxt_text_event(&b, ev);
    if (b.len >= FLUSH_BYTES && !flush(&b))
      rc = CLI_EXIT_FAIL;
  }
  if (oom) {
    fprintf(stderr, "fxtrace report: out of memory\n");
    rc = CLI_EXIT_FAIL;
  }
  if (any && rc == CLI_EXIT_OK)
    rc = cli_sel_done("report", sel);
  if (rc == CLI_EXIT_OK) {
    trailing_losses(f, &b);
    if (!flush(&b) || fflush(stdout) != 0)
      rc = CLI_EXIT_FAIL;
  }
  fxt_tbuf_free(&b);
  free(ev);
  return rc;
}

/* If argv[*i] is -O (its value the next argument, or joined: -OLIST), its words applied to
 * *opts (fxt_fgraph_option_word) and -1 returned, or a usage error's code; -2 when it is not. */
static int layout_option(int argc, char **argv, int *i, uint32_t *opts) {
  const char *a = argv[*i];
  if (strncmp(a, "-O", 2) != 0)
    return -2;
  const char *val = a[2] != 0 ? a + 2 : *i + 1 < argc ? argv[++*i] : NULL;
  if (val == NULL)
    return cli_usage_error("report", k_usage, "-O needs a value");
  for (const char *w = val;; w++) {
    size_t len = strcspn(w, ",");
    if (!fxt_fgraph_option_word(w, len, opts)) {
      char shown[200], msg[600];
      int n = snprintf(msg, sizeof msg, "-O: unknown option '%s'; valid: ",
                       cli_printable(w, len, shown, sizeof shown));
      const struct fxt_fgraph_option *o;
      for (size_t k = 0; (o = fxt_fgraph_option(k)) != NULL && n > 0 && (size_t)n < sizeof msg;
           k++)
        n += snprintf(msg + n, sizeof msg - (size_t)n, "%s%s", k ? ", " : "", o->name);
      if (n > 0 && (size_t)n < sizeof msg)
        snprintf(msg + n, sizeof msg - (size_t)n, " ('no' before one turns it off)");
      return cli_usage_error("report", k_usage, msg);
    }
    w += len;
    if (*w == 0)
      return -1;
  }
}

int cmd_report(int argc, char **argv) {
  struct fxt_sel *sel = fxt_sel_new();
  const char *path = NULL;
  bool strict = false;
  uint32_t opts = 0; /* -O: FXT_FGRAPH_* */
  int rc = -1;
  if (sel == NULL) {
    fprintf(stderr, "fxtrace report: out of memory\n");
    return CLI_EXIT_FAIL;
  }
  /* The selection's options here; the others (--help, --strict, FILE) as every file command. */
  char **rest = malloc((size_t)argc * sizeof *rest);
  int nrest = 0;
  if (rest == NULL)
    rc = CLI_EXIT_FAIL;
  for (int i = 0; rc == -1 && i < argc; i++) {
    int r = i == 0 ? -2 : layout_option(argc, argv, &i, &opts);
    if (r == -2 && i > 0)
      r = cli_sel_option("report", k_usage, sel, argc, argv, &i);
    if (r == -2)
      rest[nrest++] = argv[i];
    else if (r != -1)
      rc = r;
  }
  if (rc == -1)
    rc = cli_one_file_strict("report", k_usage, nrest, rest, &path, &strict);
  if (rc == -1) {
    struct fxtf_file *f = cli_open("report", path, strict);
    rc = f != NULL ? report(path, f, sel, opts) : CLI_EXIT_FAIL;
    fxtf_close(f);
    if (fflush(stdout) != 0)
      rc = CLI_EXIT_FAIL;
  }
  free(rest);
  fxt_sel_free(sel);
  return rc;
}
