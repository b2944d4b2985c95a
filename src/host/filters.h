/* filters.h - event filters of the tracefs tree (filters.c). */
#ifndef FXT_HOST_FILTERS_H
#define FXT_HOST_FILTERS_H

#include <stddef.h>
#include <stdint.h>

struct fxt_tbuf;

/* A write to events/<sys>/<ev>/filter: returns 0 or the kernel's errno for the write; the
 * event's filter changes as the kernel's would (a parse error drops the previous filter). */
int fxt_filters_write_event(const char *sys, const char *ev, const char *text, size_t len);
/* A write to events/<sys>/filter: every event of the system. */
int fxt_filters_write_system(const char *sys, const char *text, size_t len);
/* What reading events/<sys>/<ev>/filter shows. */
void fxt_filters_read_event(const char *sys, const char *ev, struct fxt_tbuf *b);
/* error_log: the last parse errors; cleared by a truncating open. */
void fxt_filters_error_log(struct fxt_tbuf *b);
void fxt_filters_clear_error_log(void);
/* The program installed for event id (for tracepoints registered later), or NULL. */
const void *fxt_filters_program_for(uint32_t id);

#endif
