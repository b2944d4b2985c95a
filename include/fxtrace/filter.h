/* fxtrace/filter.h - ftrace event filters: the Linux kernel's filter language, compiled into a
 * small program that decides from an event's field values whether the event is recorded.
 *
 * Grammar, semantics, error messages, error positions and write() error codes are the live
 * kernel's (kernel/trace/trace_events_filter.c since 4.17; spec/ftrace-filter.md), so a filter
 * pasted from a kernel session behaves the same here, and a wrong one fails the same way:
 *
 *   expr   := expr "||" expr | expr "&&" expr | "!" expr | "(" expr ")" | field op value
 *   op     := "~" | "!=" | "==" | "<=" | "<" | ">=" | ">" | "&"
 *   value  := [-]number (0x hex, 0 octal) | "string" | 'string' | CPUS{cpulist}
 *
 * Fields are, in this lookup order: the event's own fields (struct fxt_field, in order); the
 * generic fields CPU/cpu/common_cpu (the recording CPU), COMM/comm (the emitting thread's name)
 * and stacktrace/STACKTRACE; the common fields common_type, common_flags, common_preempt_count,
 * common_pid. The generic and common values come from struct fxt_filter_common at evaluation.
 *
 * How fxtrace's field types behave (the kernel's equivalent in brackets):
 *   U8..U64, S8..S64   integers of that size and signedness [u8 .. s64 fields]
 *   BOOL               unsigned 1-byte integer                [bool]
 *   PTR                unsigned 8-byte integer                [void *]
 *   STR                string, compared up to its length       [__data_loc char[]]
 *   BYTES              char array of `bound` bytes, compared up to its first NUL [char x[N]]
 *   DOUBLE             fxtrace extension: `== != < <= > >=` with an integer value (the number
 *                      grammar above, read as signed 64-bit) compare the double exactly with
 *                      that integer (no rounding; NaN: only != is true). `&`, `~` and CPUS{}
 *                      give "Illegal operation for field type"; a quoted value gives
 *                      "Expecting numeric field"; `1.5` is not a number token (the kernel's
 *                      "Too many terms in predicate expression").
 * Comparisons truncate the value to the field's size first, as the kernel does: on an S16
 * field `< 65535` means `< -1`, on a 4-byte field `== 4294967297` means `== 1`.
 *
 * Where fxtrace deliberately differs from the kernel (documented in spec/ftrace-filter.md):
 * - a dangling `&&` or `||` at the end ("a &&", "a || !") is rejected with EINVAL "Meaningless
 *   filter expression" at the end of the text, as newer kernel builds do (6.18.44 here);
 *   older ones (6.1, earlier 6.18 builds) accept it;
 * - BYTES and COMM: `~ "*abc"` matches strings that end in abc and `~ "*abc*"` strings that
 *   contain it, within the string (up to its NUL); the kernel compares at the end of the whole
 *   array and scans the stale bytes after the NUL;
 * - `field.function == symbol`: there are no kernel symbols, so it always fails with the
 *   kernel's error for an unknown symbol ("Function not found"); `.ustring` is accepted and
 *   changes nothing.
 *
 * Freestanding: this header and src/core/filter*.c use only <stdint.h>, <stddef.h>,
 * <stdbool.h> and memcpy/memset/memmove/memcmp. Nothing allocates; the compiled program lives
 * in a caller buffer and evaluation uses no memory but the stack (no recursion).
 *
 * Concurrency: every function is reentrant; a compiled program is read-only and may be
 * evaluated by any number of threads at once.
 *
 * Embedder API (docs/architecture.md, "Public headers").
 */
#ifndef FXTRACE_FILTER_H
#define FXTRACE_FILTER_H

#include <stdbool.h>

#include "common.h"
#include "errors.h"
#include "tracepoint.h"

/* Longest text a write may carry: the kernel rejects a write of PAGE_SIZE (4096) bytes or more
 * with EINVAL before parsing it, and keeps the previous filter. */
#define FXT_FILTER_MAX_WRITE 4095u
/* Longest quoted string (bytes between the quotes, exclusive): MAX_FILTER_STR_VAL - 1. */
#define FXT_FILTER_MAX_STR 255u
/* Most CPUs a CPUS{} list may name (struct fxt_filter_event.nr_cpus is clamped to it). */
#define FXT_FILTER_MAX_CPUS 1024u
/* Alignment the program buffer must have. */
#define FXT_FILTER_ALIGN 8u
/* A program buffer of this many bytes always suffices to compile a text of len bytes. The
 * compiled program is usually far smaller: it is the return value of fxt_filter_compile, and
 * is position-independent (copy those bytes to any FXT_FILTER_ALIGN-aligned place). */
#define FXT_FILTER_PROG_MAX(len) (256u + 20u * (size_t)(len))

/* The capacity of the kernel's trace_seq (x86-64: 2 * PAGE_SIZE - 36) that bounds what a
 * `filter` file shows after a very long erroneous write (see fxt_filter_render). */
#define FXT_FILTER_SEQ_SIZE 8156u

/* What `events/<system>/filter` reads while it holds no error (always, in practice). */
#define FXT_FILTER_SYSTEM_DEFAULT                                                           \
  "### global filter ###\n"                                                                 \
  "# Use this to set filters for multiple events.\n"                                        \
  "# Only events with the given fields will be affected.\n"                                 \
  "# If no events are modified, an error message will be displayed here\n"

/* write() error codes of the kernel that errors.h does not spell (negative, as returned). */
#define FXT_FILTER_EPERM (-1)   /* "Too many terms", "Too few '('", no field name */
#define FXT_FILTER_ESRCH (-3)   /* "Missing matching quote" */
#define FXT_FILTER_ENODEV (-19) /* a system filter written to a system with no events */

/* Error codes: 0..21 are the kernel's FILT_ERR_* values, with its texts (fxt_filter_strerror);
 * 100 and up are fxtrace's own and never reach a `filter` file or `error_log`. */
enum fxt_filter_errcode {
  FXT_FILTER_ERR_NONE = 0,            /* "No error" */
  FXT_FILTER_ERR_INVALID_OP,          /* "Invalid operator" */
  FXT_FILTER_ERR_TOO_MANY_OPEN,       /* "Too many '('" */
  FXT_FILTER_ERR_TOO_MANY_CLOSE,      /* "Too few '('" */
  FXT_FILTER_ERR_MISSING_QUOTE,       /* "Missing matching quote" */
  FXT_FILTER_ERR_MISSING_BRACE_OPEN,  /* "Missing '{'" */
  FXT_FILTER_ERR_MISSING_BRACE_CLOSE, /* "Missing '}'" */
  FXT_FILTER_ERR_OPERAND_TOO_LONG,    /* "Operand too long" */
  FXT_FILTER_ERR_EXPECT_STRING,       /* "Expecting string field" */
  FXT_FILTER_ERR_EXPECT_DIGIT,        /* "Expecting numeric field" */
  FXT_FILTER_ERR_ILLEGAL_FIELD_OP,    /* "Illegal operation for field type" */
  FXT_FILTER_ERR_FIELD_NOT_FOUND,     /* "Field not found" */
  FXT_FILTER_ERR_ILLEGAL_INTVAL,      /* "Illegal integer value" */
  FXT_FILTER_ERR_BAD_SUBSYS_FILTER,   /* "Couldn't find or set field in one of a subsystem's
                                         events" */
  FXT_FILTER_ERR_TOO_MANY_PREDS,      /* "Too many terms in predicate expression" */
  FXT_FILTER_ERR_INVALID_FILTER,      /* "Meaningless filter expression" */
  FXT_FILTER_ERR_INVALID_CPULIST,     /* "Invalid cpulist" */
  FXT_FILTER_ERR_IP_FIELD_ONLY,       /* "Only 'ip' field is supported for function trace" */
  FXT_FILTER_ERR_INVALID_VALUE,       /* "Invalid value (did you forget quotes)?" */
  FXT_FILTER_ERR_NO_FUNCTION,         /* "Function not found" */
  FXT_FILTER_ERR_ERRNO,               /* "Error": an error without a message; the filter file
                                         shows "Error: (0)", error_log "Error" at position 0 */
  FXT_FILTER_ERR_NO_FILTER,           /* "No filter found" */
  /* fxtrace's own: the write is refused before parsing and the previous filter stays. */
  FXT_FILTER_ERR_WRITE_TOO_LONG = 100, /* "Write too long": len > FXT_FILTER_MAX_WRITE */
  FXT_FILTER_ERR_NO_SPACE,             /* "Program buffer too small" */
  FXT_FILTER_ERR_ARGUMENT,             /* "Invalid argument": NULL text, misaligned buffer,
                                          bad field type, too many fields */
};

/* The result of a failed compile. */
struct fxt_filter_error {
  int result;      /* the value fxt_filter_compile returned */
  int code;        /* enum fxt_filter_errcode */
  uint32_t pos;    /* the kernel's error position (0-based; its "+1" included), unclamped */
  const char *msg; /* fxt_filter_strerror(code): static, NUL-terminated */
};

/* What a filter is compiled against: one event. */
struct fxt_filter_event {
  const struct fxt_field *fields; /* the event's own fields in order (may be NULL if none) */
  uint32_t nfields;               /* at most 4096; field i's value is values[i] at match */
  uint32_t nr_cpus;               /* CPUs of the system (the kernel's nr_cpu_ids): CPUS{} lists
                                     must name CPUs below it. 0 or more than
                                     FXT_FILTER_MAX_CPUS means FXT_FILTER_MAX_CPUS */
};

/* Values every event has, given at evaluation. */
struct fxt_filter_common {
  uint16_t type;         /* common_type: the event id */
  uint8_t flags;         /* common_flags */
  uint8_t preempt_count; /* common_preempt_count */
  int32_t pid;           /* common_pid: the emitting thread's id */
  uint32_t cpu;          /* CPU, cpu, common_cpu: the recording CPU */
  const char *comm;      /* COMM, comm: the emitting thread's name, read as char[16] (up to its
                            NUL or 16 bytes); NULL reads as "" */
};

FXT_EXTERN_C_BEGIN

/* Compiles the filter text[0..len) for ev into prog[0..prog_size), which must be aligned to
 * FXT_FILTER_ALIGN. The text ends at its first NUL byte, if any; trailing whitespace is not
 * part of it (what the kernel stores: fxt_filter_text_len).
 *
 * Returns:
 *   > 0   the program's size in bytes: the event is filtered by prog;
 *   0     the text is "0" (surrounding whitespace aside): the filter is cleared (no program;
 *         the event records everything; its `filter` file reads "none");
 *   FXT_EINVAL         a parse error (err->code 1..21), or the write is refused before parsing
 *                      (err->code FXT_FILTER_ERR_WRITE_TOO_LONG: len > FXT_FILTER_MAX_WRITE) or
 *                      bad arguments (FXT_FILTER_ERR_ARGUMENT);
 *   FXT_FILTER_EPERM   a parse error the kernel reports as EPERM: "Too many terms in predicate
 *                      expression", "Too few '('", or a term that does not start with a field
 *                      name (code FXT_FILTER_ERR_ERRNO);
 *   FXT_ENOENT         "Too many '('";
 *   FXT_FILTER_ESRCH   "Missing matching quote";
 *   FXT_ENOSPC         prog_size is too small (FXT_FILTER_ERR_NO_SPACE); never with
 *                      FXT_FILTER_PROG_MAX(len) bytes.
 * err (may be NULL) is always filled: code FXT_FILTER_ERR_NONE on success.
 *
 * The kernel's rule for a parse error (code below 100): the event's previous filter is dropped,
 * the event records everything, and its `filter` file shows the error (fxt_filter_render).
 * For codes 100 and up the previous filter stays. */
FXT_API int fxt_filter_compile(const char *text, size_t len, const struct fxt_filter_event *ev,
                               void *prog, size_t prog_size, struct fxt_filter_error *err);

/* True when the event passes the filter prog (NULL: no filter, always true).
 * values holds one entry per field of the event the program was compiled for (it may be NULL
 * for an event without fields); values[i] is field i's value in the member its type selects (fxt_value.u for unsigned and
 * BOOL, .i for signed, .d for DOUBLE, .p for PTR and BYTES, .s for STR); a NULL string reads
 * as "". str_lens[i], when str_lens is not NULL, is the length of STR field i (the bytes the
 * record holds, at most its bound); without it the length is found up to the NUL or the bound
 * (FXT_STR_MAX_BOUND at most). common may be NULL (all zero, comm ""). Runs in time bounded by
 * the program (no recursion, no copies; a glob is O(pattern x string)). */
FXT_API bool fxt_filter_match(const void *prog, const union fxt_value *values,
                              const uint32_t *str_lens, const struct fxt_filter_common *common);

/* Compiles one text for every event of a system, as a write to events/<system>/filter does.
 * Each slot names an event and its program buffer; the result lands in the slot:
 *   result > 0: compiled (the event gets the filter, with the same text);
 *   result 0:   the text is "0": the event's filter is cleared;
 *   result < 0: the event gets the kernel's error filter: it records everything and its
 *               `filter` file shows the text with err.code FXT_FILTER_ERR_BAD_SUBSYS_FILTER at
 *               position 0 (one error_log entry per such event). err.result keeps the code the
 *               event's own compile returned (FXT_ENOSPC with code FXT_FILTER_ERR_NO_SPACE is
 *               not the kernel's: the caller's buffer was too small).
 * Returns 0 when the write succeeds (even if it failed for every event; the system's file then
 * still reads FXT_FILTER_SYSTEM_DEFAULT), FXT_FILTER_ENODEV when nslots is 0, FXT_EINVAL when
 * len > FXT_FILTER_MAX_WRITE or the text is NULL with len > 0 (slots untouched: every event
 * keeps its filter). */
struct fxt_filter_slot {
  const struct fxt_filter_event *event; /* in */
  void *prog;                           /* in: FXT_FILTER_ALIGN-aligned */
  size_t prog_size;                     /* in */
  int result;                           /* out */
  struct fxt_filter_error err;          /* out */
};
FXT_API int fxt_filter_compile_system(const char *text, size_t len, struct fxt_filter_slot *slots,
                                      uint32_t nslots);

/* Length of the text the kernel stores for text[0..len): up to the first NUL, without trailing
 * whitespace (the kernel's isspace, which includes 0xa0); leading whitespace is kept. */
FXT_API size_t fxt_filter_text_len(const char *text, size_t len);

/* Renders what reading the event's `filter` file shows after the write of text[0..len) that
 * fxt_filter_compile answered with result and err:
 *   result > 0:   the stored text and "\n";
 *   result == 0:  "none\n";
 *   parse error:  "<text>\n<P spaces>^\nparse_error: <message>\n\n" with P = min(err->pos,
 *                 text length), or "<text>\nError: (0)\n\n" for FXT_FILTER_ERR_ERRNO, cut as
 *                 the kernel's trace_seq cuts it for very long texts (FXT_FILTER_SEQ_SIZE);
 *   codes >= 100: nothing (the previous filter stays: render that instead); returns 0.
 * Writes at most size - 1 bytes and a NUL (when size > 0); returns the length of the whole
 * rendering, like snprintf. Use "none\n" for an event never filtered. */
FXT_API size_t fxt_filter_render(char *buf, size_t size, const char *text, size_t len,
                                 int result, const struct fxt_filter_error *err);

/* Renders the error_log entry the kernel appends for a failed write of text[0..len):
 *   "[%5llu.%06u] event filter parse error: error: <message>\n"
 *   "  Command: <text>\n"
 *   "<11 + pos spaces>^\n"
 * with the seconds and microseconds of ts_ns (truncated). Messageless errors log "Error" at
 * position 0. Successful results and codes >= 100 log nothing: returns 0. Truncation and the
 * return value as for fxt_filter_render. */
FXT_API size_t fxt_filter_render_error_log(char *buf, size_t size, const char *text, size_t len,
                                           const struct fxt_filter_error *err, uint64_t ts_ns);

/* The text of an enum fxt_filter_errcode ("Field not found"); "Unknown error" otherwise. */
FXT_API const char *fxt_filter_strerror(int code);

FXT_EXTERN_C_END

#endif /* FXTRACE_FILTER_H */
