/* src/base/text.h - ftrace text (spec ftrace-text.md §1) for fxtrace events: the line
 * prefix, a printf-style renderer of print formats over FXT arguments, and whole lines; for
 * `fxtrace report` and the tracer's live `trace` files alike.
 *
 * Everything appends to a growable buffer (struct fxt_tbuf, tbuf.h). Rendering never fails
 * on any input: a conversion without a matching argument prints "<?>", a malformed conversion
 * prints as written.
 */
#ifndef FXTRACE_BASE_TEXT_H
#define FXTRACE_BASE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fxtrace/fxt.h>

#include "fxtf_clock.h" /* the event model (fxtf_event.h), fxtf_ticks_to_ns */
#include "tbuf.h"

/* Printed wherever an argument is missing or of a type the conversion cannot print. */
#define FXT_TEXT_BAD_ARG "<?>"
/* Widths and precisions are capped here: a format cannot make a line of gigabytes. */
#define FXT_TEXT_MAX_WIDTH 4096


/* The prefix "%16s-%-7d [%03d] ..... %5lu.%06lu: " of one line: comm cut to 15 bytes, "<...>"
 * when comm_len is 0; cpu FXTF_CPU_UNKNOWN prints as 0; the time rounded to microseconds
 * ((ns + 500) / 1000) as ftrace does. */
void fxt_text_prefix(struct fxt_tbuf *b, const char *comm, size_t comm_len, uint64_t pid,
                     uint32_t cpu, uint64_t ns);

/* Renders fmt[0..fmt_len) like printf, taking args in order: conversions d i u x X o c s p e
 * E f F g G a A with flags "-+ #0", width and precision (digits or '*', which take an
 * integer argument), length modifiers hh h l ll z j t L; "%%" prints '%'. Integer
 * conversions accept integer, bool, pointer and koid arguments (converted to the length's
 * width as C would: %d of a uint64 prints its low 32 bits as int); float conversions double
 * arguments; %s strings; %p integers and pointers, as 0x<hex>. */
void fxt_text_printf(struct fxt_tbuf *b, const char *fmt, size_t fmt_len,
                     const struct fxt_arg *args, uint32_t nargs);

/* One argument's value: uint and int decimal, double %g, pointer 0x<hex>, bool 0/1, string
 * as is, koid decimal, null nothing, blob "<blob N bytes>". */
void fxt_text_value(struct fxt_tbuf *b, const struct fxt_arg *a);
/* "name=value name=value ..." */
void fxt_text_pairs(struct fxt_tbuf *b, const struct fxt_arg *args, uint32_t nargs);

/* "CPU:N [LOST n EVENTS]\n", or the kernel's "CPU:N [LOST EVENTS]\n" when unknown: some
 * of the losses were not counted (a trace.dat page that did not store its count; trace-cmd
 * says "CPU:N [EVENTS DROPPED]"), so n is not the number lost. */
void fxt_text_lost(struct fxt_tbuf *b, uint32_t cpu, uint64_t n, bool unknown);
/* The whole text of one event: its LOST line when records were lost before it, then the
 * prefix, "<event name>: ", the body and '\n'. Typed tracepoints render their description's
 * print format; printk events (system printk) print as "printk" with their format (the event
 * name) rendered; other events print key=value pairs behind what they are (B, E,
 * dur=<us>us, id=N, async_begin id=0x.., flow_step id=0x.., ...). */
void fxt_text_event(struct fxt_tbuf *b, const struct fxtf_event *e);
/* What fxt_text_event prints after the prefix, without the LOST line and the final '\n'
 * (function_graph's comment lines: src/formats/fgraph.h); well-formed UTF-8. */
void fxt_text_event_body(struct fxt_tbuf *b, const struct fxtf_event *e);
/* b->data[at..len) made well-formed UTF-8 (each stray byte U+FFFD). */
void fxt_text_utf8_fix(struct fxt_tbuf *b, size_t at);

#endif /* FXTRACE_BASE_TEXT_H */
