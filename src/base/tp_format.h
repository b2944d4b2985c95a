/* src/base/tp_format.h - what a tracepoint looks like to ftrace, from its static definition
 * alone (struct fxt_tracepoint's constant part): its fields, its print format and its
 * `format` file. One text for the live tree (src/host/tracefs_nodes.c, the filters) and for
 * `fxtrace list -v`, which reads the tracepoints out of an ELF file (src/formats/elf_events.h).
 */
#ifndef FXTRACE_BASE_TP_FORMAT_H
#define FXTRACE_BASE_TP_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include <fxtrace/tracepoint.h>

#include "tbuf.h"

/* The tracepoint's print format: its own, or "f1=%u f2=%s..." made from its fields in buf. */
const char *fxt_tracepoint_print_fmt(const struct fxt_tracepoint *tp, char *buf, size_t size);

/* The ftrace fields of tp's events, as its `format` file and its filter see them: a typed
 * tracepoint's own; a duration's (scopes, FXT_COMPLETE, FXT_BEGIN/END) `u64 dur_ns` (0 for a
 * begin or an end: no length yet); a counter's `u64 id`. Laid out as the trace.dat export
 * lays out those events (src/formats/tracedat_write_event.h), whose arguments follow; ad-hoc
 * arguments are known only at emission, so they are not fields here. Others: none. */
const struct fxt_field *fxt_tracepoint_fields(const struct fxt_tracepoint *tp, uint32_t *n);

/* Appends tp's `format` file with the given ID line (the live tree: tp->id) to b: the
 * kernel's layout (spec ftrace-text.md 3), common fields, the fields of
 * fxt_tracepoint_fields, then the print format with its arguments. */
void fxt_tp_format(struct fxt_tbuf *b, const struct fxt_tracepoint *tp, uint32_t id);

#endif /* FXTRACE_BASE_TP_FORMAT_H */
