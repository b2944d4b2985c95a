/* src/base/ftrace_format.h - the layout of an ftrace event record and the head of its
 * `format` file (spec ftrace-text.md §3), for fxtrace's field types: one place that says how a
 * field list becomes kernel-style record bytes, shared by the live tracefs tree
 * (src/host/tracefs.c, events/<sys>/<ev>/format) and the trace.dat writer (tracedat_write.c).
 *
 * A record is `struct { struct trace_entry ent; <fields> }`: the 8 bytes of common fields
 * (common_type u16, common_flags u8, common_preempt_count u8, common_pid s32), then each field
 * at the next offset aligned to its size (byte arrays: to 1), as a C compiler places them.
 *
 *   fxtrace type   format type          size  signed   record bytes
 *   u8..u64        u8..u64              1..8  0        the value, little-endian
 *   s8..s64        s8..s64              1..8  1        two's complement
 *   bool           bool                 1     0        0 or 1
 *   double         double               8     1        IEEE 754 bits
 *   ptr            void *               8     0        the address
 *   str            __data_loc char[]    4     0        (length << 16) | offset of the bytes + NUL,
 *                                                      offset from the record start
 *   bytes          u8 name[bound]       bound 0        the bytes
 *   (other)        as u64
 */
#ifndef FXTRACE_BASE_FTRACE_FORMAT_H
#define FXTRACE_BASE_FTRACE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tbuf.h"

/* Bytes of the common fields; event fields start here. */
#define FXT_FF_COMMON_BYTES 8u

/* A field after the common ones. name need not be NUL-terminated. */
struct fxt_ff_field {
  const char *name;
  size_t name_len;
  uint8_t type;   /* enum fxt_type */
  uint32_t bound; /* FXT_TYPE_BYTES: the array's bytes */
};

/* The format type text of a field type, with its size (bytes arrays: per element) and
 * signedness. */
const char *fxt_ff_type(uint8_t type, uint32_t *size, int *is_signed);

/* The FXT argument type a typed tracepoint records a field of this type as (enum
 * fxt_arg_type; docs/fxt-conventions.md). */
uint32_t fxt_ff_arg_type(uint8_t type);

/* The field type an FXT argument is taken as where no declaration says better (ad-hoc
 * events' arguments, a typed argument that does not fit its field): int32 s32, uint32 u32,
 * int64 s64, uint64 and koid u64, double, pointer ptr, bool, string str; 0 for none (null,
 * blob). */
uint8_t fxt_ff_type_of_arg(uint32_t arg_type);

/* Whether an FXT argument of type arg holds a field of this type: its fxt_ff_arg_type, or a
 * u64 / s64 value that fitted in 32 bits, written as uint32 / int32 (emit.h fxt_field_wide). */
bool fxt_ff_arg_fits(uint8_t type, uint32_t arg);

/* Places n fields after the common ones; offsets (may be NULL) receives each field's offset.
 * Returns sizeof the record struct: the end of the last field rounded up to the struct's
 * alignment (its largest field size, at least 4 for common_pid). */
uint32_t fxt_ff_layout(const struct fxt_ff_field *f, uint32_t n, uint32_t *offsets);

/* Appends the format text up to and including "print fmt: ": the name, ID and format lines,
 * the common fields, a blank line, one line per field, a blank line. */
void fxt_ff_head(struct fxt_tbuf *b, const char *name, size_t name_len, uint32_t id,
                 const struct fxt_ff_field *f, uint32_t n);

#endif /* FXTRACE_BASE_FTRACE_FORMAT_H */
