/* filters.h - event filters of the tracefs tree (filters.c), and the hook an event with a
 * filter or triggers has. */
#ifndef FXT_HOST_FILTERS_H
#define FXT_HOST_FILTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/tp_format.h" /* FXT_TP_FIELDS_MAX */

struct fxt_tbuf;
struct fxt_evtrig;
struct fxt_filter_error;

/* What tracepoint.reg.filter points to (NULL: nothing, the fast path): the event's filter and
 * triggers. Built and published by filters.c (release store; the emit path's acquire load in
 * fxt_filter_pass pairs with it), immutable, freed after fxt_slots_sync once replaced. */
struct fxt_evhook {
  const void *prog; /* the filter's program (fxtrace/filter.h), or NULL: everything passes */
  uint32_t id;      /* the event's id */
  bool soft;        /* soft mode: fxt_evtrig_soft_off[id] says whether the event records */
  bool cond;        /* a trigger has a filter or is a stacktrace (the kernel's TRIGGER_COND) */
  /* An ad-hoc event's fields its filter was compiled against (nfields 0: a typed event's),
   * the first `head` of them its head (dur_ns or id); names in this hook's allocation, after
   * trig[]. */
  uint32_t nfields, head;
  struct fxt_field fields[FXT_TP_FIELDS_MAX];
  uint32_t ntrig;
  struct fxt_evtrig *trig[]; /* newest first */
};

/* Whether an ad-hoc event of tp (head: its dur_ns or id, as fxt_tracepoint_fields; av[0..n)
 * its arguments) passes tp's filter and triggers: the values laid out by the fields the filter
 * was compiled against, each taken from the argument of that name (at the same place or
 * elsewhere: sites of one event may differ), 0 or "" when this site has none. */
struct fxt_argv;
struct fxt_tslot;
struct fxt_tracepoint;
bool fxt_filter_pass_adhoc(struct fxt_tracepoint *tp, const struct fxt_tslot *t, uint64_t head,
                           const struct fxt_argv *av, uint32_t n, uint32_t cpu);
/* fxt_filter_off (fxtrace/detail/emit.h) for an ad-hoc event whose emission was refused:
 * while recording is off, its triggers run on its values laid out as fxt_filter_pass_adhoc
 * does (a hist trigger counts it, a traceon turns recording on). Returns true when the event
 * is to be recorded: a traceon without a filter turned recording on before it, and it
 * passes its own filter (the kernel's order); the caller writes it (its record is its fire
 * site's), without running its triggers again. */
struct fxt_adhoc_off {
  uint64_t head;
  const struct fxt_argv *av;
  uint32_t n;
};
bool fxt_filter_off_adhoc(struct fxt_tracepoint *tp, const struct fxt_adhoc_off *a);

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
/* An error_log entry for a failed filter compile of text[0..len) (a trigger's `if`). */
void fxt_filters_log_error(const char *text, size_t len, const struct fxt_filter_error *err);
/* An error_log entry already rendered (a hist trigger's error). */
void fxt_filters_log_line(const char *line);
/* The hook installed for event id (for tracepoints registered later), or NULL. */
const struct fxt_evhook *fxt_filters_hook_for(uint32_t id);
/* Sets the triggers (n of them, newest first) and soft mode of event id and installs its hook;
 * returns once no emission uses the previous hook (the caller may then free triggers it no
 * longer passes). 0 or FXT_ENOMEM (nothing changed). */
int fxt_filters_set_triggers(uint32_t id, struct fxt_evtrig *const *trig, uint32_t n, bool soft,
                             bool cond);

#endif
