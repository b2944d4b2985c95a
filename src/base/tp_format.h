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

/* The most fields fxt_tracepoint_fields gives: an ad-hoc event's head and its arguments. */
#define FXT_TP_FIELDS_MAX (FXT_MAX_FIELDS + 1)

/* 1 when tp's events have a head field before their arguments (an ad-hoc duration's dur_ns;
 * a counter's, an async's or a flow's id), else 0. */
uint32_t fxt_tracepoint_head(const struct fxt_tracepoint *tp);

/* The ftrace fields of tp's events, as its `format` file and its filter see them, into
 * out[FXT_TP_FIELDS_MAX]; returns how many. A typed tracepoint's own; an ad-hoc site's head
 * (fxt_tracepoint_head: a duration's - scopes, FXT_COMPLETE, FXT_BEGIN/END - `u64 dur_ns`, 0
 * for a begin or an end, which have no length yet; a counter's, an async's or a flow's `u64
 * id`), then its arguments by the names and types its macro wrote in its static table
 * (fxtrace.h, FXT_SITE_ARGS_; FXT_ARG's type from the value's C type; a string's bound the
 * FXT_STR_MAX_BOUND bytes emission copies). Laid out as the trace.dat export lays out those
 * events (src/formats/tracedat_write_event.h), whose stored width of a 64-bit argument that
 * fits in 32 bits is 32 bits. */
uint32_t fxt_tracepoint_fields(const struct fxt_tracepoint *tp, struct fxt_field *out);

/* Appends to out[0..n) (at most FXT_TP_FIELDS_MAX) each field of fxt_tracepoint_fields(tp)
 * whose name is not there yet; returns the new count. An ad-hoc event's fields are those of
 * all its sites merged so, in the order the sites come (the live tree: registry.c, in
 * registration order; `fxtrace list -v`: in the file's). */
uint32_t fxt_tracepoint_fields_merge(const struct fxt_tracepoint *tp, struct fxt_field *out,
                                     uint32_t n);

/* Appends tp's `format` file with the given ID line (the live tree: tp->id) to b: the
 * kernel's layout (spec ftrace-text.md 3), common fields, the fields of
 * fxt_tracepoint_fields, then the print format with its arguments. */
void fxt_tp_format(struct fxt_tbuf *b, const struct fxt_tracepoint *tp, uint32_t id);
/* The same with the fields tf[0..nf) (the live tree: those of every site of an ad-hoc event,
 * src/host/registry.h), its head first as fxt_tracepoint_fields gives it. */
void fxt_tp_format_fields(struct fxt_tbuf *b, const struct fxt_tracepoint *tp, uint32_t id,
                          const struct fxt_field *tf, uint32_t nf);

#endif /* FXTRACE_BASE_TP_FORMAT_H */
