/* evtrig.h - event triggers: the events/<sys>/<ev>/trigger files of the tracefs tree (the
 * kernel's Documentation/trace/events.rst, "Event triggers"). Not the `trigger` option of
 * FXTRACE (trigger.h: a snapshot on a fatal signal).
 *
 * evtrig_parse.c parses a write and prints a trigger as the kernel does (no state: the fuzz
 * target's); evtrig.c keeps each event's triggers and the soft mode of events (control side,
 * under its lock); evtrig_fire.c runs them on the emit path, from the event's hook
 * (filters.h: struct fxt_evhook), and while recording is off from fxt_filter_off (filters.c),
 * so that traceon fires; evtrig_hist.c is the hist triggers' part (their attributes, their
 * histograms in the base's table, src/base/hist.h, and the `hist` file). */
#ifndef FXT_HOST_EVTRIG_H
#define FXT_HOST_EVTRIG_H

#include <fxtrace/filter.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fxt_tbuf;
struct fxt_tslot;
struct fxt_evhook;

/* The commands, in the kernel's order of its `# Available triggers:` line. */
enum fxt_evtrig_cmd {
  FXT_EVTRIG_TRACEON,
  FXT_EVTRIG_TRACEOFF,
  FXT_EVTRIG_SNAPSHOT,
  FXT_EVTRIG_STACKTRACE,
  FXT_EVTRIG_ENABLE_EVENT,
  FXT_EVTRIG_DISABLE_EVENT,
  FXT_EVTRIG_ENABLE_HIST,  /* the target event's hist triggers continued */
  FXT_EVTRIG_DISABLE_HIST, /* ... paused */
  FXT_EVTRIG_HIST,
};

/* Whether cmd takes a target event ("cmd:sys:ev[:count]"). */
static inline bool fxt_evtrig_has_target(int cmd)
{
  return cmd >= FXT_EVTRIG_ENABLE_EVENT && cmd <= FXT_EVTRIG_DISABLE_HIST;
}

#define FXT_EVTRIG_UNLIMITED UINT64_MAX /* a count of -1: ":unlimited" */
#define FXT_EVTRIG_MAX_WRITE 4095       /* the kernel's page: a longer write is EINVAL */
#define FXT_EVTRIG_STACK_DEPTH 15       /* frames a stacktrace records (FXT's argument limit) */

/* A parsed write: offsets into the (stripped) text it was parsed from. */
struct fxt_evtrig_spec {
  int cmd;        /* enum fxt_evtrig_cmd */
  bool remove;    /* "!cmd...": remove the trigger of this kind (and target) */
  uint64_t count; /* FXT_EVTRIG_UNLIMITED when none was given */
  size_t filter_at, filter_len; /* the text after "if" and one blank; filter_len 0: none */
  size_t sys_at, sys_len, ev_at, ev_len; /* fxt_evtrig_has_target: the target */
  size_t param_at, param_len; /* hist: its attributes, "keys=...:vals=..." */
};

/* Parses a trigger write (the kernel's trigger_process_regex and the command's parse):
 * text[0..len) is first stripped of surrounding whitespace (the kernel's strim) in place;
 * *start is where the stripped text begins, the offsets of spec are from there. Returns 0,
 * FXT_EINVAL (no such command, "hist" and "snapshot" where not built included, a malformed
 * count, anything but "if" before a filter, a missing target), FXT_ERANGE (a count beyond 64
 * bits: the kernel's kstrtoul). snapshot: accepted (fxtrace builds it in). The filter and
 * the target are not checked here. */
int fxt_evtrig_parse(char *text, size_t len, size_t *start, struct fxt_evtrig_spec *spec);

/* The kernel's name of a command ("traceon", ...). */
const char *fxt_evtrig_name(int cmd);
/* The kernel's line of one trigger: "name[:sys:ev]:unlimited|:count=N[ if FILTER]\n".
 * count is the remaining count, target "sys:ev" or NULL. */
void fxt_evtrig_print(struct fxt_tbuf *b, int cmd, const char *target, uint64_t count,
                      const char *filter);
/* What a `trigger` file with no trigger reads. */
void fxt_evtrig_print_available(struct fxt_tbuf *b);

/* One trigger of an event. Immutable once published but for `count` (emit path: atomic
 * decrement while positive); freed by evtrig.c only after a fxt_slots_sync that follows the
 * publication of a hook without it. */
struct fxt_evtrig {
  int cmd;
  _Atomic uint64_t count; /* remaining firings; FXT_EVTRIG_UNLIMITED: no limit */
  void *prog;             /* its own filter (`if`), or NULL */
  char *filter;           /* its text as written, or NULL */
  uint32_t target;        /* fxt_evtrig_has_target: the target event's id */
  char *target_name;      /* "sys:ev" */
  struct fxt_evtrig_hist *hist; /* hist: its histogram (evtrig_hist.c) */
};

/* ---- hist triggers (evtrig_hist.c) ---- */

/* The kernel's hist errors this implements (trace_events_hist.c's ERRORS, from its source:
 * this machine's kernel is built without CONFIG_HIST_TRIGGERS). */
enum {
  FXT_HIST_ERR_FIELD_NOT_FOUND = 1,
  FXT_HIST_ERR_BAD_FIELD_MODIFIER,
  FXT_HIST_ERR_TRIGGER_EEXIST,
  FXT_HIST_ERR_TRIGGER_ENOENT_CLEAR,
  FXT_HIST_ERR_INVALID_SORT_FIELD,
  FXT_HIST_ERR_TOO_MANY_SORT_FIELDS,
  FXT_HIST_ERR_INVALID_SORT_MODIFIER,
  FXT_HIST_ERR_EMPTY_SORT_FIELD,
};
struct fxt_evtrig_hist_error {
  int code;   /* FXT_HIST_ERR_*, 0: none (an errno without an error_log entry) */
  size_t pos; /* the caret's column in "hist:" + the attributes (the kernel's errpos) */
};
struct fxt_evtrig_hist_str {
  size_t at, len; /* in the attributes' text */
};
/* A hist write's attributes (the kernel's parse_hist_trigger_attrs). */
struct fxt_evtrig_hist_attrs {
  struct fxt_evtrig_hist_str keys, vals, sort, name;
  uint32_t size; /* the power of two size= asks for (default 2048) */
  bool pause, cont, clear;
};
const char *fxt_evtrig_hist_strerror(int code);
/* Parses param[0..len): 0 or FXT_EINVAL (no keys, a bad size, variables and actions: not
 * supported). No state (fuzz_evtrig). */
int fxt_evtrig_hist_attrs(const char *param, size_t len, struct fxt_evtrig_hist_attrs *a,
                          struct fxt_evtrig_hist_error *err);
struct fxt_tracepoint;
/* The histogram of a's trigger on tp's event (param NUL-terminated), its keys and values
 * among the event's fields as its filter sees them (fxt_registry_event_fields: an ad-hoc
 * event's dur_ns or id and its sites' arguments too): 0, FXT_EINVAL (err says
 * the kernel's error when it logs one), FXT_ENOMEM. */
int fxt_evtrig_hist_new(const struct fxt_tracepoint *tp, const char *param,
                        const struct fxt_evtrig_hist_attrs *a, struct fxt_evtrig_hist **out,
                        struct fxt_evtrig_hist_error *err);
void fxt_evtrig_hist_free(struct fxt_evtrig_hist *h);
/* Whether a and b are the same histogram (the kernel's hist_trigger_match, filters aside). */
bool fxt_evtrig_hist_same(const struct fxt_evtrig_hist *a, const struct fxt_evtrig_hist *b);
/* pause / cont / clear of a write applied to an existing histogram (control side, serialized
 * by evtrig.c's lock). */
void fxt_evtrig_hist_control(struct fxt_evtrig_hist *h, const struct fxt_evtrig_hist_attrs *a);
/* Emit path: an enable_hist / disable_hist trigger's switch (relaxed store). */
void fxt_evtrig_hist_pause(struct fxt_evtrig_hist *h, bool paused);
/* The `trigger` file's line, and the `hist` file's text (first: the first of the event's). */
void fxt_evtrig_hist_describe(const struct fxt_evtrig_hist *h, const char *filter,
                              struct fxt_tbuf *b);
void fxt_evtrig_hist_show(const struct fxt_evtrig_hist *h, const char *filter, bool first,
                          struct fxt_tbuf *b);
/* Emit path: counts the event, its values laid out as its hook's fields (a typed event's
 * fields; an ad-hoc event's head and arguments, fxt_filter_pass_adhoc; values NULL: only the
 * common fields, an event not counted when a key or value is another). Lock-free, no
 * allocation. */
void fxt_evtrig_hist_count(struct fxt_evtrig_hist *h, const union fxt_value *values,
                           const uint32_t *lens, const struct fxt_filter_common *c);

/* ---- control side (evtrig.c; every function takes its lock) ---- */

/* A write to events/<sys>/<ev>/trigger: 0 or the kernel's errno (EINVAL, EEXIST, ERANGE, the
 * filter's codes; a bad filter also gets its error_log entry). */
int fxt_evtrig_write(const char *sys, const char *ev, const char *text);
/* What reading events/<sys>/<ev>/trigger shows: the triggers, newest first. */
void fxt_evtrig_read(const char *sys, const char *ev, struct fxt_tbuf *b);
/* What reading events/<sys>/<ev>/hist shows: each hist trigger's histogram, newest first. */
void fxt_evtrig_hist_read(const char *sys, const char *ev, struct fxt_tbuf *b);
/* The `*` of the event's enable file in soft mode (an event with triggers, or the target of
 * an enable_event / disable_event trigger): -1 when not in soft mode, else 1 when it records
 * and 0 when soft-disabled. */
int fxt_evtrig_soft_state(const char *sys, const char *ev);
/* After the enable patterns changed for glob (an enable, set_event or events/enable write):
 * events in soft mode that it matched keep firing their triggers and are soft-enabled
 * (on) or soft-disabled (off) instead, as the kernel's enable writes do. */
void fxt_evtrig_enable_written(const char *glob, bool on);

/* ---- emit side (evtrig_fire.c) ---- */

/* Soft-disabled events, by id & 0xffff: written by evtrig.c (control) and by enable_event /
 * disable_event triggers (emit path, compare-and-swap), read by emissions. Relaxed: the flag
 * is the whole state, nothing is published with it. */
extern _Atomic uint8_t fxt_evtrig_soft_off[65536];

/* Runs the triggers of an event whose hook h has some, after its filter gave pass (false when
 * filtered out); c, values and lens as fxt_filter_match takes them. Returns whether the event
 * is still to be recorded by the caller (false also when this function recorded it itself,
 * followed by its stack). On the emitting thread, inside its emission. paused: recording was
 * off at the event (fxt_filter_off): the triggers run, and the event is written here only
 * when a traceon among them turned recording on before it (then false is returned). */
bool fxt_evtrig_fire(const struct fxt_evhook *h, struct fxt_tracepoint *tp, struct fxt_tslot *t,
                     const union fxt_value *values, const uint32_t *lens,
                     const struct fxt_filter_common *c, bool pass, bool paused);
/* Interns the stack record's strings: before a stacktrace trigger is published. 0 or
 * FXT_ENOSPC (the string table is full). */
int fxt_evtrig_stack_prepare(void);

/* The consumer, between passes: writes the snapshot a `snapshot` trigger asked for. */
struct session;
void fxt_evtrig_serve(struct session *s);

#endif
