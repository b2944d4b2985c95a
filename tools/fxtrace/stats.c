/* tools/fxtrace/stats.c - `fxtrace stats FILE`: exact event counts per system:event and per
 * thread, with each thread's losses by kind. Bookkeeping records (kernel:meta) are not
 * events; their num_records are the losses. `--durations`: the durations' table instead
 * (src/formats/durations.h).
 */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "formats/durations.h"

static const char k_usage[] =
    "usage: fxtrace stats [--help] [--strict] [--durations [--by-thread]] FILE\n"
    "\n"
    "Counts the events of FILE (an fxtrace FXT file):\n"
    "  per system:event, most frequent first;\n"
    "  per thread: pid, tid, comm, events delivered, records dropped (full buffer, discard\n"
    "  mode), overrun (overwritten before being read, overwrite mode) and lost otherwise;\n"
    "  a total line; and each process's trace clock, with why it was chosen.\n"
    "A file that ends inside a record (a write cut short) is counted up to it, with a\n"
    "warning; --strict makes that an error.\n"
    "--durations: instead, per system:event of scopes and durations (--by-thread: and per\n"
    "thread), count, total, min, mean, p50, p90, p99 and max in ns, largest total first:\n"
    "complete events (FXT_SCOPE, FXT_COMPLETE) and begin/end pairs, an end closing its\n"
    "thread's latest open begin; ends without a begin and begins never ended are counted.\n"
    "Percentiles are exact (nearest rank); memory grows by 16 bytes per duration.\n";

static bool g_durations, g_by_thread;

static void print_text(struct fxtf_text t, int width) {
  printf("%-*.*s", width, (int)t.len, t.data);
}

static int print_names(const struct fxtf_file *f) {
  struct fxtf_name_count *c;
  size_t n;
  if (fxtf_name_counts(f, &c, &n) != 0) {
    fprintf(stderr, "fxtrace stats: out of memory\n");
    return CLI_EXIT_FAIL;
  }
  printf("events:\n%12s  %s\n", "count", "system:event");
  for (size_t i = 0; i < n; i++)
    printf("%12" PRIu64 "  %.*s:%.*s\n", c[i].count, (int)c[i].system.len, c[i].system.data,
           (int)c[i].name.len, c[i].name.data);
  free(c);
  return CLI_EXIT_OK;
}

static void print_threads(const struct fxtf_file *f) {
  uint32_t n;
  const struct fxtf_thread *t = fxtf_threads(f, &n);
  printf("\nthreads:\n%10s %10s  %-16s %12s %12s %12s %12s\n", "pid", "tid", "comm", "events",
         "dropped", "overrun", "lost");
  for (uint32_t i = 0; i < n; i++) {
    if (t[i].events + t[i].dropped + t[i].overrun + t[i].lost == 0)
      continue; /* named only: nothing happened on it */
    printf("%10" PRIu64 " %10" PRIu64 "  ", t[i].pid, t[i].tid);
    struct fxtf_text comm = t[i].named ? t[i].comm : (struct fxtf_text){"<...>", 5};
    print_text(comm, 16);
    printf(" %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n", t[i].events,
           t[i].dropped, t[i].overrun, t[i].lost);
  }
}

/* The trace clock of each process, where its file says (a kernel:meta `clock` record). */
static void print_clocks(const struct fxtf_file *f) {
  uint32_t n = fxtf_provider_count(f);
  bool header = false;
  for (uint32_t i = 0; i < n; i++) {
    const struct fxtf_provider *p = fxtf_provider(f, i);
    if (p->clock_source[0] == 0)
      continue;
    if (!header)
      printf("\nclock:\n");
    header = true;
    printf("%10" PRIu32 "  %s, %" PRIu32 " clock syncs: %s\n", p->id, p->clock_source,
           p->nsyncs, p->clock_reason);
  }
}

static void print_durations(const struct fxt_dur_table *t) {
  printf("durations (ns):\n%10s %14s %12s %12s %12s %12s %12s %12s  ", "count", "total", "min",
         "mean", "p50", "p90", "p99", "max");
  printf(g_by_thread ? "%10s %10s  %-16s %s\n" : "%s\n", g_by_thread ? "pid" : "system:event",
         "tid", "comm", "system:event");
  for (size_t i = 0; i < t->n; i++) {
    const struct fxt_dur_row *r = &t->rows[i];
    printf("%10" PRIu64 " %14" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12" PRIu64
           " %12" PRIu64 " %12" PRIu64 "  ",
           r->count, r->total, r->min, r->mean, r->p50, r->p90, r->p99, r->max);
    if (r->thread != NULL) {
      printf("%10" PRIu64 " %10" PRIu64 "  ", r->thread->pid, r->thread->tid);
      print_text(r->thread->named ? r->thread->comm : (struct fxtf_text){"<...>", 5}, 16);
      printf(" ");
    }
    printf("%s\n", r->name);
  }
  printf("\nunmatched: %" PRIu64 " begins without an end, %" PRIu64 " ends without a begin\n",
         t->open_begins, t->lonely_ends);
}

static int durations(const char *path, const struct fxtf_file *f) {
  struct fxt_dur_table t;
  char err[FXTF_ERR_SIZE];
  int rc = fxt_dur_compute(f, g_by_thread, &t, err, sizeof err);
  if (rc == FXT_ENOMEM) {
    fprintf(stderr, "fxtrace stats: out of memory\n");
    return CLI_EXIT_FAIL;
  }
  if (rc != 0) {
    cli_file_error("stats", path, err);
    return CLI_EXIT_FAIL;
  }
  print_durations(&t);
  fxt_dur_free(&t);
  return CLI_EXIT_OK;
}

static int stats_file(const char *path, bool strict) {
  struct fxtf_file *f = cli_open("stats", path, strict);
  if (f == NULL)
    return CLI_EXIT_FAIL;
  if (g_durations) {
    int rc = durations(path, f);
    fxtf_close(f);
    return rc;
  }
  int rc = print_names(f);
  if (rc == CLI_EXIT_OK) {
    print_threads(f);
    struct fxtf_totals tot;
    fxtf_totals(f, &tot);
    printf("\ntotal: %" PRIu64 " events, %" PRIu32 " threads, %" PRIu32 " processes; %" PRIu64
           " dropped, %" PRIu64 " overrun, %" PRIu64 " lost\n",
           tot.events, tot.threads, tot.providers, tot.dropped, tot.overrun, tot.lost);
    print_clocks(f);
  }
  fxtf_close(f);
  return rc;
}

int cmd_stats(int argc, char **argv) {
  char **rest = malloc((size_t)argc * sizeof *rest);
  int n = 0;
  if (rest == NULL) {
    fprintf(stderr, "fxtrace stats: out of memory\n");
    return CLI_EXIT_FAIL;
  }
  g_durations = g_by_thread = false;
  for (int i = 0; i < argc; i++) {
    if (i > 0 && strcmp(argv[i], "--durations") == 0)
      g_durations = true;
    else if (i > 0 && strcmp(argv[i], "--by-thread") == 0)
      g_by_thread = true;
    else
      rest[n++] = argv[i];
  }
  int rc = g_by_thread && !g_durations
               ? cli_usage_error("stats", k_usage, "--by-thread goes with --durations")
               : cli_file_cmd("stats", k_usage, n, rest, stats_file);
  free(rest);
  return rc;
}
