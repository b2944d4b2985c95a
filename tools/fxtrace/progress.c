/* tools/fxtrace/progress.c - the progress line of the long jobs (progress.h). */
#define _POSIX_C_SOURCE 200809L
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define PERIOD_NS 250000000 /* at most 4 updates a second */

void progress_init(struct progress *p, const char *cmd, uint64_t total) {
  *p = (struct progress){.cmd = cmd, .total = total, .on = isatty(STDERR_FILENO) == 1,
                         .period_ns = PERIOD_NS};
  const char *ms = getenv("FXTRACE_PROGRESS_MS");
  if (ms != NULL && ms[0] >= '0' && ms[0] <= '9')
    p->period_ns = strtoll(ms, NULL, 10) * 1000000;
  clock_gettime(CLOCK_MONOTONIC, &p->last);
}

/* bytes in MiB, with one decimal */
static double mib(uint64_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

void progress_update(struct progress *p) {
  if (!p->on)
    return;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  int64_t ns =
      (int64_t)(now.tv_sec - p->last.tv_sec) * 1000000000 + (now.tv_nsec - p->last.tv_nsec);
  if (ns < p->period_ns)
    return;
  p->last = now;
  /* "\r" back to the line's start, ESC [ K erases what a longer line left (a terminal). */
  if (p->total > 0 && p->done <= p->total)
    fprintf(stderr, "\rfxtrace %s: %3u%% of %.1f MiB read, %.1f MiB written\033[K", p->cmd,
            (unsigned)(p->done * 100 / p->total), mib(p->total), mib(p->written));
  else
    fprintf(stderr, "\rfxtrace %s: %.1f MiB written\033[K", p->cmd, mib(p->written));
  p->shown = true;
}

void progress_end(struct progress *p) {
  if (p->shown)
    fputs("\r\033[K", stderr);
  p->shown = false;
}
