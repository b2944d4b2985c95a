/* tools/fxtrace/select_opts.c - the selection options `report` and `hist` share (--events,
 * --pid, --tid, --comm, --cpu, --from, --to, --filter; src/formats/select.h), read from the
 * command line into a selection, with their errors said as usage errors (exit 2).
 */
#include "select_opts.h"

#include <string.h>

static const struct {
  const char *name;
  enum fxt_sel_kind kind;
} k_opts[] = {
    {"--events", FXT_SEL_EVENTS}, {"--pid", FXT_SEL_PID},   {"--tid", FXT_SEL_TID},
    {"--comm", FXT_SEL_COMM},     {"--cpu", FXT_SEL_CPU},   {"--from", FXT_SEL_FROM},
    {"--to", FXT_SEL_TO},         {"--filter", FXT_SEL_FILTER},
};

/* The kernel's rendering of a filter that does not parse (its `filter` file's), on stderr. */
static void filter_error(const char *cmd, const char *text, const struct fxt_filter_error *e) {
  char buf[FXT_FILTER_SEQ_SIZE];
  fxt_filter_render(buf, sizeof buf, text, strlen(text), e->result, e);
  fprintf(stderr, "fxtrace %s: --filter: %s at offset %u:\n%s", cmd, e->msg, e->pos, buf);
}

int cli_sel_option(const char *cmd, const char *usage, struct fxt_sel *s, int argc, char **argv,
                   int *i) {
  const char *a = argv[*i];
  for (size_t k = 0; k < sizeof k_opts / sizeof k_opts[0]; k++) {
    size_t n = strlen(k_opts[k].name);
    const char *val;
    if (strncmp(a, k_opts[k].name, n) != 0 || (a[n] != 0 && a[n] != '='))
      continue;
    if (a[n] == '=') {
      val = a + n + 1;
    } else if (*i + 1 < argc) {
      val = argv[++*i];
    } else {
      char msg[64];
      snprintf(msg, sizeof msg, "%s needs a value", k_opts[k].name);
      return cli_usage_error(cmd, usage, msg);
    }
    char err[300];
    struct fxt_filter_error fe = {0};
    int rc = fxt_sel_add(s, k_opts[k].kind, val, err, sizeof err, &fe);
    if (rc == FXT_ENOMEM) {
      fprintf(stderr, "fxtrace %s: out of memory\n", cmd);
      return CLI_EXIT_FAIL;
    }
    if (rc != 0 && k_opts[k].kind == FXT_SEL_FILTER) {
      filter_error(cmd, val, &fe);
      return CLI_EXIT_USAGE;
    }
    if (rc != 0) {
      char shown[200], msg[600];
      snprintf(msg, sizeof msg, "%s '%s': %s", k_opts[k].name,
               cli_printable(val, strlen(val), shown, sizeof shown), err);
      return cli_usage_error(cmd, usage, msg);
    }
    return -1;
  }
  return -2;
}

int cli_sel_done(const char *cmd, const struct fxt_sel *s) {
  struct fxt_filter_error e;
  const char *text = fxt_sel_filter_failed(s, &e);
  if (text != NULL) {
    filter_error(cmd, text, &e);
    return CLI_EXIT_USAGE;
  }
  uint64_t n = fxt_sel_unfiltered(s, &e);
  if (n > 0)
    fprintf(stderr,
            "fxtrace %s: --filter: %llu events left out: their fields do not fit it (first: %s "
            "at offset %u)\n",
            cmd, (unsigned long long)n, e.msg, e.pos);
  return CLI_EXIT_OK;
}
