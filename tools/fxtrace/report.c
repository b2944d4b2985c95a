/* tools/fxtrace/report.c - `fxtrace report FILE`: every event as one ftrace text line
 * (../shared/spec/ftrace-text.md §1), in time order across threads and processes, without the
 * `trace` file's header. Losses print as "CPU:N [LOST n EVENTS]" before the next event of the
 * thread that lost them, or for a CPU's losses (a kernel trace's, converted from trace.dat:
 * `lost` records with a `cpu` argument) before the next event on that CPU, as the kernel's
 * `trace` file prints them; "CPU:N [LOST EVENTS]" when their count is unknown. Losses after a
 * thread's (a CPU's) last event print at the end.
 */
#define _GNU_SOURCE /* F_SETPIPE_SZ */
#include "cli.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/text.h"

static const char k_usage[] =
    "usage: fxtrace report [--help] [--strict] FILE\n"
    "\n"
    "Prints the events of FILE (an fxtrace FXT file) as ftrace text, one line per event, in\n"
    "time order (CLOCK_MONOTONIC seconds):\n"
    "            comm-tid     [cpu] ..... seconds.micros: event: text\n"
    "Lines \"CPU:N [LOST n EVENTS]\" stand where a thread, or a kernel CPU buffer, lost\n"
    "records (\"CPU:N [LOST EVENTS]\" where a trace.dat page did not say how many).\n"
    "A file that ends inside a record (a write cut short) is read up to it, with a warning;\n"
    "--strict makes that an error.\n";

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

static int report(const char *path, struct fxtf_file *f) {
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
  for (size_t i = 0; i < n && rc == CLI_EXIT_OK; i++) {
    if (fxtf_event_at(f, i, ev, err, sizeof err) != 0) {
      cli_file_error("report", path, err);
      rc = CLI_EXIT_FAIL;
      break;
    }
    fxt_text_event(&b, ev);
    if (b.len >= FLUSH_BYTES && !flush(&b))
      rc = CLI_EXIT_FAIL;
  }
  if (rc == CLI_EXIT_OK) {
    trailing_losses(f, &b);
    if (!flush(&b) || fflush(stdout) != 0)
      rc = CLI_EXIT_FAIL;
  }
  fxt_tbuf_free(&b);
  free(ev);
  return rc;
}

static int report_file(const char *path, bool strict) {
  struct fxtf_file *f = cli_open("report", path, strict);
  if (f == NULL)
    return CLI_EXIT_FAIL;
  int rc = report(path, f);
  fxtf_close(f);
  return rc;
}

int cmd_report(int argc, char **argv) {
  return cli_file_cmd("report", k_usage, argc, argv, report_file);
}
