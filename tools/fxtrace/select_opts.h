/* tools/fxtrace/select_opts.h - the selection options of `report` and `hist` (select_opts.c). */
#ifndef FXTRACE_TOOLS_SELECT_OPTS_H
#define FXTRACE_TOOLS_SELECT_OPTS_H

#include "cli.h"
#include "formats/select.h"

/* Help text of the options, for the commands' usages. */
#define CLI_SEL_USAGE                                                                         \
  "  --events GLOBS  system:event globs, comma-separated, as record -e ('!glob' leaves out)\n" \
  "  --pid LIST      process ids, as 1,3-5        --tid LIST  thread ids\n"                    \
  "  --comm GLOB     thread names                 --cpu LIST  recording CPUs\n"                \
  "  --from T        seconds as report prints them (an event printed at T is kept),\n"       \
  "                  or +S: S after the first event     --to T  the same, inclusive\n"      \
  "  --filter EXPR   the kernel's filter grammar on the event's fields: a typed\n"            \
  "                  tracepoint's, dur_ns of durations, id and the values of counters,\n"     \
  "                  the arguments of others, common_pid/cpu/comm of every event\n"           \
  "  Options may repeat: an event must pass all of them.\n"

/* If argv[*i] is a selection option, adds it to s (moving *i past its value) and returns -1,
 * or on an error says so (a usage error, or the filter's error as the kernel shows it) and
 * returns the exit code; -2 when argv[*i] is not one. */
int cli_sel_option(const char *cmd, const char *usage, struct fxt_sel *s, int argc, char **argv,
                   int *i);
/* After the events: a filter that compiled for no event's fields is said as a filter error
 * (the kernel's text and position; returns CLI_EXIT_USAGE), else how many events a filter
 * left out because a field they have is of another type (a warning; CLI_EXIT_OK). */
int cli_sel_done(const char *cmd, const struct fxt_sel *s);

#endif /* FXTRACE_TOOLS_SELECT_OPTS_H */
