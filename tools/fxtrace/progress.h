/* tools/fxtrace/progress.h - a progress line on stderr for the long jobs (convert, record's
 * merge): only when stderr is a terminal (a log or a pipe gets the summary alone), at most 4
 * updates a second (FXTRACE_PROGRESS_MS=N: one every N ms at most, as the tests ask for every
 * one), rewritten in place and erased at the end. */
#ifndef FXTRACE_TOOLS_PROGRESS_H
#define FXTRACE_TOOLS_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct progress {
  const char *cmd;
  uint64_t total;       /* input bytes (0: not known) */
  uint64_t done;        /* of the input, where the job is */
  uint64_t written;     /* output bytes */
  bool on, shown;       /* stderr is a terminal; a line is on it */
  struct timespec last; /* of the last update */
  int64_t period_ns;    /* between two updates, at least */
};

/* Starts progress of cmd over an input of total bytes (0: unknown). */
void progress_init(struct progress *p, const char *cmd, uint64_t total);
/* Says where the job is (done of total read, written so far), when a quarter second passed
 * since the last update. */
void progress_update(struct progress *p);
/* Erases the line, before the summary takes its place. */
void progress_end(struct progress *p);

#endif /* FXTRACE_TOOLS_PROGRESS_H */
