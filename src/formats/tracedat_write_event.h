/* src/formats/tracedat_write_event.h - fxtrace events as ftrace events for trace.dat: the `format`
 * of each kind of event (spec ftrace-text.md §3) and the record bytes of each event, such that
 * libtraceevent (trace-cmd report, KernelShark) prints what `fxtrace report` prints.
 *
 * A kind of event ("variant") is one format with its own ID (= common_type):
 *   typed      a typed tracepoint (instant with a description): its fields, laid out as the
 *              live tracefs format does (ftrace_format.h), and its print format. One variant
 *              per description content and per how its arguments could be stored: a field
 *              whose value does not fit the declared type (a u8 of 300, a byte array that is
 *              not lowercase hex) is stored as the FXT argument is (u32, string) instead.
 *   printk     system printk: name "printk", fields a0.. from the arguments, print format =
 *              the event name (its format string) without a final newline.
 *   ad hoc     anything else (instants, counters, durations, async, flows): fields from the
 *              arguments by FXT type (int32 s32, uint32 u32, int64 s64, uint64 and koid u64,
 *              double double, pointer void *, bool bool, string __data_loc char[]), led by
 *              `u64 id` (counter, async, flow: the trailer) or `u64 dur_ns` (duration
 *              complete); the print format writes what fxtrace's text does: "id=%llu ",
 *              "B ", "E ", "dur=%llu.%03lluus ", "async_begin id=0x%llx "..., then
 *              "name=value" pairs. One variant per system, name, event type and argument
 *              names and types.
 *
 * Print formats are translated so that libtraceevent renders exactly fxtrace's text:
 * integer conversions keep their flags, width and precision, with the length modifier of the
 * width fxtrace prints (hh, h, none, ll), and signed fields narrower than that are
 * sign-extended in the argument (`REC->x | -(REC->x & 0x80)`, the one form libtraceevent's
 * expression parser evaluates right); %p becomes 0x%llx; %s of a string field takes
 * __get_str(); %s of a byte array __print_hex_str(). What libtraceevent cannot print the same
 * (floating point, %c, the '+' and ' ' flags, '*', mismatched arguments, literal bytes other
 * than printable ASCII) is rendered by fxtrace (text.h) when the record is made and stored in
 * a generated `__data_loc char[]` field (<field>_str for one conversion, else text), printed
 * with %s: the binary fields are still there, field for field.
 *
 * Names become identifiers (bytes other than [A-Za-z0-9_] turn into '_', a leading digit gets
 * a '_' before it), as libtraceevent reads only those in `name:` lines and field names;
 * duplicates of a field name (or of a common field's) get _2, _3... IDs: a typed
 * variant takes its tracepoint's id when free, the others the highest free ID.
 */
#ifndef FXTRACE_FORMATS_TRACEDAT_WRITE_EVENT_H
#define FXTRACE_FORMATS_TRACEDAT_WRITE_EVENT_H

#include <stdbool.h>
#include <stdint.h>

#include "fxtfile.h"
#include "json_int.h" /* struct fxt_jmap */
#include "../base/text.h"

#define FXT_TD_EV_NAME_MAX 48 /* a field name, NUL included */
#define FXT_TD_EV_MAX_VARIANTS 65535u

enum fxt_td_ev_kind { FXT_TD_EV_TYPED, FXT_TD_EV_PRINTK, FXT_TD_EV_ADHOC };

/* Where a field's bytes come from. */
enum fxt_td_ev_src {
  FXT_TD_EV_SRC_ARG,     /* the event's argument `arg`, stored as the field's type */
  FXT_TD_EV_SRC_HEX,     /* argument `arg`, lowercase hex text, stored as its bytes */
  FXT_TD_EV_SRC_TRAILER, /* the event's trailer: counter, async or flow id */
  FXT_TD_EV_SRC_DUR,     /* duration complete: end - start in ns */
  FXT_TD_EV_SRC_TEXT,    /* fxtrace's rendering of the print format's bytes [from, to) with the
                        values from slot `arg` on */
  FXT_TD_EV_SRC_VALUE    /* fxtrace's rendering of argument `arg` alone (a blob) */
};

struct fxt_td_ev_field {
  char name[FXT_TD_EV_NAME_MAX];
  uint8_t type; /* enum fxt_type */
  uint8_t src;  /* enum fxt_td_ev_src */
  uint8_t arg;
  uint32_t from, to;
  uint32_t bound;
  uint32_t offset;
};

/* A value the print format consumes, in order: an argument or a part of the head. */
enum fxt_td_ev_slot_kind {
  FXT_TD_EV_SLOT_ARG,
  FXT_TD_EV_SLOT_TRAILER,
  FXT_TD_EV_SLOT_DUR_US,
  FXT_TD_EV_SLOT_DUR_FRAC
};

struct fxt_td_ev_slot {
  uint8_t kind;     /* enum fxt_td_ev_slot_kind */
  uint8_t arg;      /* FXT_TD_EV_SLOT_ARG: the argument */
  uint8_t arg_type; /* enum fxt_arg_type it is rendered as */
  int8_t field;     /* the field holding it; -1: none (null, blob) */
};

struct fxt_td_ev_variant {
  uint64_t hash;
  uint32_t next; /* next variant of the same hash + 1; 0: none */
  uint16_t id;
  uint8_t kind; /* enum fxt_td_ev_kind */
  uint8_t ev_type;
  uint32_t cls;               /* typed: the description class */
  struct fxtf_text system;    /* as in the file */
  struct fxtf_text name;      /* the event name as in the file */
  char *sys_name, *ev_name;   /* identifiers for the trace.dat */
  char *fmt;                  /* the print format in fxtrace's terms (owned) */
  uint32_t fmt_len;
  uint8_t nargs;
  uint8_t types[FXT_MAX_ARGS]; /* the key: field types (typed) or FXT argument types */
  struct fxtf_text arg_names[FXT_MAX_ARGS]; /* ad hoc, printk: the key's names */
  uint8_t nslots, nfields;
  struct fxt_td_ev_slot slots[FXT_MAX_ARGS + 2];
  struct fxt_td_ev_field *fields;
  uint32_t fixed;  /* bytes of the record before its strings */
  bool has_text;   /* some field is rendered (TEXT, VALUE) */
  char *print;     /* after "print fmt: ": "...", args */
  uint64_t events; /* records made */
};

/* What makes an event's variant (fxt_td_ev_key_of fills it). */
struct fxt_td_ev_key {
  uint8_t kind, ev_type, nargs;
  uint8_t types[FXT_MAX_ARGS];
  uint32_t cls;
  const struct fxtf_desc *desc; /* typed */
  struct fxtf_text system, name;
  const struct fxt_arg *args;
  uint64_t hash;
};

struct fxt_td_ev_table {
  struct fxt_td_ev_variant **v;
  uint32_t n;
  size_t cap;
  struct fxt_jmap map; /* hash -> first variant + 1 */
  uint8_t used[65536 / 8];
  uint32_t top; /* IDs from here down are tried for variants without an id of their own */
};

void fxt_td_ev_table_init(struct fxt_td_ev_table *t);
void fxt_td_ev_table_free(struct fxt_td_ev_table *t);

/* The key of an event: desc is its description (NULL: none), cls the class of equal
 * descriptions it belongs to. */
void fxt_td_ev_key_of(struct fxt_td_ev_key *k, const struct fxt_event *ev,
                      const struct fxtf_desc *desc, uint32_t cls);

/* The variant of key k, made when new. Returns it, or NULL with *rc = FXT_ENOMEM or
 * FXT_E2BIG (more than FXT_TD_EV_MAX_VARIANTS). */
struct fxt_td_ev_variant *fxt_td_ev_get(struct fxt_td_ev_table *t, const struct fxt_td_ev_key *k,
                                        int *rc);

/* The record of an event of variant v into out (replaced): common fields (type = v->id,
 * flags and preempt count 0, pid), fields, strings. dur_ns: duration complete events' length.
 * scratch: for rendered fields. Returns 0, or FXT_E2BIG when a string would end past the
 * 64 KiB a __data_loc can address, or FXT_ENOMEM. */
int fxt_td_ev_record(const struct fxt_td_ev_variant *v, const struct fxt_event *ev, int32_t pid,
                     uint64_t dur_ns, struct fxt_tbuf *out, struct fxt_tbuf *scratch);

/* Takes ID want for a format when free (0: none wanted), else the highest free one.
 * 0 or FXT_E2BIG (none free). */
int fxt_td_ev_take_id(struct fxt_td_ev_table *t, uint32_t want, uint16_t *id);

/* The variant's format file text. */
void fxt_td_ev_format(struct fxt_tbuf *b, const struct fxt_td_ev_variant *v);

#endif /* FXTRACE_FORMATS_TRACEDAT_WRITE_EVENT_H */
