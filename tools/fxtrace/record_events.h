/* tools/fxtrace/record_events.h - whether `fxtrace record -e GLOBS` named events the recorded
 * program has: the tracepoints it registered are described in its trace (one
 * fxtrace:tracepoint blob each, written for every registered tracepoint, enabled or not:
 * docs/fxt-conventions.md), so the merged file tells which globs matched none. */
#ifndef FXTRACE_TOOLS_RECORD_EVENTS_H
#define FXTRACE_TOOLS_RECORD_EVENTS_H

#include <stdbool.h>

/* Checks each glob of events (FXTRACE's events= list: comma-separated, a glob without ':'
 * meaning GLOB:*, "!GLOB" a disabling one, not checked) against the system:event names
 * described in the FXT file fxt. True when every glob matched one; else says on stderr which
 * did not and lists the events the file describes, and returns false. */
bool record_events_check(const char *fxt, const char *events);

#endif /* FXTRACE_TOOLS_RECORD_EVENTS_H */
