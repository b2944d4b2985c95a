/* tools/fxtrace/hist.c - `fxtrace hist FILE -k KEYS ...`: the kernel's event histogram
 * (a `hist:` trigger's `hist` file) over a file's events (src/formats/hist.h), with the
 * selection options of report (select_opts.h).
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "formats/hist.h"
#include "select_opts.h"

static const char k_usage[] =
    "usage: fxtrace hist [--help] [--strict] -k KEYS [-v VALS] [-s SORT[.descending]]\n"
    "                    [--size N] [SELECTION...] FILE\n"
    "\n"
    "Prints the histogram the kernel's `hist:keys=KEYS:vals=VALS:sort=SORT:size=N` trigger\n"
    "would show (Documentation/trace/histogram.rst) over the events of FILE:\n"
    "  -k, --keys KEYS   up to 3 comma-separated fields: an entry per distinct value; each\n"
    "                    may end in .hex, .log2 (~ 2^N) or .buckets=N (~ lo-hi)\n"
    "  -v, --vals VALS   up to 15 numeric fields summed per entry (.hex), with hitcount\n"
    "  -s, --sort SORT   up to 2 of hitcount, a key or a value, .descending or ascending\n"
    "                    (default hitcount)\n"
    "  --size N          most entries (rounded up to a power of two, 128..131072; default\n"
    "                    2048): events of further keys are dropped, counted\n"
    "Fields: a typed tracepoint's, dur_ns of durations, id and the values of counters, the\n"
    "arguments of others, and common_pid, common_cpu (cpu), comm, common_type of every\n"
    "event. An event counts when it has every key and value field.\n"
    "SELECTION:\n" CLI_SEL_USAGE;

struct opts {
  const char *keys, *vals, *sort, *size;
  char *filter; /* the --filter texts joined, for the trigger's " if " */
};

/* -k/-v/-s/--size with their value; -1 when taken, -2 when argv[*i] is none of them, or an
 * exit code. */
static int own_option(struct opts *o, int argc, char **argv, int *i) {
  static const char *const names[][2] = {
      {"-k", "--keys"}, {"-v", "--vals"}, {"-s", "--sort"}, {"--size", "--size"}};
  const char **slot[] = {&o->keys, &o->vals, &o->sort, &o->size};
  for (int k = 0; k < 4; k++) {
    if (strcmp(argv[*i], names[k][0]) != 0 && strcmp(argv[*i], names[k][1]) != 0)
      continue;
    if (*i + 1 >= argc) {
      char msg[64];
      snprintf(msg, sizeof msg, "%s needs a value", argv[*i]);
      return cli_usage_error("hist", k_usage, msg);
    }
    *slot[k] = argv[++*i];
    return -1;
  }
  return -2;
}

static int add_filter_text(struct opts *o, const char *text) {
  size_t had = o->filter ? strlen(o->filter) : 0, n = strlen(text);
  char *f = realloc(o->filter, had + n + 8);
  if (f == NULL)
    return CLI_EXIT_FAIL;
  if (had == 0)
    memcpy(f, text, n + 1);
  else
    snprintf(f + had, n + 8, " && (%s)", text);
  o->filter = f;
  return -1;
}

static int run(const char *path, bool strict, struct fxt_sel *sel, const struct opts *o) {
  struct fxt_hist_spec spec;
  char err[300];
  if (fxt_hist_parse(&spec, o->keys, o->vals, o->sort, o->size, err, sizeof err) != 0)
    return cli_usage_error("hist", k_usage, err);
  struct fxtf_file *f = cli_open("hist", path, strict);
  if (f == NULL)
    return CLI_EXIT_FAIL;
  struct fxt_hist *h = fxt_hist_new(&spec);
  struct fxtf_event *ev = malloc(sizeof *ev);
  bool any = fxt_sel_any(sel), oom = h == NULL || ev == NULL || fxt_sel_bind(sel, f) != 0;
  int rc = CLI_EXIT_OK;
  size_t n = fxtf_event_count(f);
  for (size_t i = 0; i < n && !oom && rc == CLI_EXIT_OK; i++) {
    if (fxtf_event_at(f, i, ev, err, sizeof err) != 0) {
      cli_file_error("hist", path, err);
      rc = CLI_EXIT_FAIL;
    } else if ((!any || fxt_sel_match(sel, ev, &oom)) && fxt_hist_add(h, ev) != 0) {
      oom = true;
    }
  }
  if (rc == CLI_EXIT_OK && !oom && any)
    rc = cli_sel_done("hist", sel);
  if (rc == CLI_EXIT_OK && !oom) {
    struct fxt_tbuf b;
    fxt_tbuf_init(&b);
    oom = fxt_hist_print(h, o->filter, &b) != 0;
    if (!oom && !cli_write("hist", b.data, b.len))
      rc = CLI_EXIT_FAIL;
    fxt_tbuf_free(&b);
    if (!fxt_hist_any_kind(h))
      fprintf(stderr, "fxtrace hist: no event has every key and value field\n");
  }
  if (oom) {
    fprintf(stderr, "fxtrace hist: out of memory\n");
    rc = CLI_EXIT_FAIL;
  }
  free(ev);
  fxt_hist_free(h);
  fxtf_close(f);
  return rc;
}

int cmd_hist(int argc, char **argv) {
  struct opts o = {0};
  struct fxt_sel *sel = fxt_sel_new();
  char **rest = malloc((size_t)argc * sizeof *rest);
  int nrest = 0, rc = sel && rest ? -1 : CLI_EXIT_FAIL;
  for (int i = 0; rc == -1 && i < argc; i++) {
    int r = i == 0 ? -2 : own_option(&o, argc, argv, &i);
    if (r == -2 && i > 0) {
      bool filter = strcmp(argv[i], "--filter") == 0 && i + 1 < argc;
      r = cli_sel_option("hist", k_usage, sel, argc, argv, &i);
      if (r == -1 && filter)
        r = add_filter_text(&o, argv[i]);
      else if (r == -1 && strncmp(argv[i], "--filter=", 9) == 0)
        r = add_filter_text(&o, argv[i] + 9);
    }
    if (r == -2)
      rest[nrest++] = argv[i];
    else if (r != -1)
      rc = r;
  }
  const char *path = NULL;
  bool strict = false;
  if (rc == -1)
    rc = cli_one_file_strict("hist", k_usage, nrest, rest, &path, &strict);
  if (rc == -1 && o.keys == NULL)
    rc = cli_usage_error("hist", k_usage, "missing -k KEYS");
  if (rc == -1)
    rc = run(path, strict, sel, &o);
  if (rc == CLI_EXIT_FAIL && (sel == NULL || rest == NULL))
    fprintf(stderr, "fxtrace hist: out of memory\n");
  if (fflush(stdout) != 0)
    rc = CLI_EXIT_FAIL;
  free(o.filter);
  free(rest);
  fxt_sel_free(sel);
  return rc;
}
