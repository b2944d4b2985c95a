/* src/base/globs.h - the event glob lists of FXTRACE's events=, `record -e` and `report
 * --events`: "sys:ev,sys:*,!sys:noisy,net" (a glob without ':' is "glob:*"), the last glob that
 * matches an event's "system:event" deciding; one grammar for the tracer (registry.c) and the
 * readers (src/formats/select.c). */
#ifndef FXTRACE_BASE_GLOBS_H
#define FXTRACE_BASE_GLOBS_H

#include <stdbool.h>

/* The list made canonical: blanks around each glob and empty entries dropped, ":*" appended
 * to a glob without ':', joined by ','. Returns a malloc'd string ("" for an empty list), or
 * NULL when a glob has a blank inside it or malloc fails (the caller tells them apart by
 * whether it had memory to spare; a malformed list is the common case). */
char *fxt_globs_normalize(const char *list);

/* Whether the normalized list norm turns name ("system:event") on: the last glob that matches
 * it decides, on for a glob, off for "!glob"; no match is off. */
bool fxt_globs_match(const char *norm, const char *name);

#endif /* FXTRACE_BASE_GLOBS_H */
