/* tools/fxtrace/stats.c - `fxtrace stats FILE`: exact event counts per system:event and per
 * thread, with each thread's losses by kind. Bookkeeping records (kernel:meta) are not
 * events; their num_records are the losses.
 */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>

static const char k_usage[] =
    "usage: fxtrace stats [--help] [--strict] FILE\n"
    "\n"
    "Counts the events of FILE (an fxtrace FXT file):\n"
    "  per system:event, most frequent first;\n"
    "  per thread: pid, tid, comm, events delivered, records dropped (full buffer, discard\n"
    "  mode), overrun (overwritten before being read, overwrite mode) and lost otherwise;\n"
    "  a total line; and each process's trace clock, with why it was chosen.\n"
    "A file that ends inside a record (a write cut short) is counted up to it, with a\n"
    "warning; --strict makes that an error.\n";

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

static int stats_file(const char *path, bool strict) {
  struct fxtf_file *f = cli_open("stats", path, strict);
  if (f == NULL)
    return CLI_EXIT_FAIL;
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
  return cli_file_cmd("stats", k_usage, argc, argv, stats_file);
}
