/* src/formats/tracedat_write_event_int.h - shared by the files that build a trace.dat event
 * variant: tracedat_write_event.c (keys, the table, fields and slots, layouts, records) and
 * tracedat_write_print.c (the print format: fxtrace's for ad hoc events, and its translation
 * for libtraceevent).
 */
#ifndef FXTRACE_FORMATS_TRACEDAT_WRITE_EVENT_INT_H
#define FXTRACE_FORMATS_TRACEDAT_WRITE_EVENT_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <fxtrace/tracepoint.h>

#include "tracedat_write_event.h"

#define FXT_TD_EV_MAX_FIELDS 64u

/* A variant being built: its fields and slots, then its print format. */
struct build {
  struct fxt_td_ev_variant *v;
  struct fxt_td_ev_field f[FXT_TD_EV_MAX_FIELDS + 1]; /* the last: where fields past the limit go */
  uint32_t nf;
  bool overflow; /* more fields were wanted than FXT_TD_EV_MAX_FIELDS */
  struct fxt_tbuf print, args; /* the print format's string and its arguments */
  uint32_t slot;               /* translation: next slot */
  bool group;                  /* translation: rendered pieces pending */
  uint32_t gfrom, gslot, gconvs, gvalue;
  bool glit;
};

static inline bool integer_type(uint8_t t) {
  return (t >= FXT_TYPE_U8 && t <= FXT_TYPE_BOOL) || t == FXT_TYPE_PTR;
}

/* Adds a field named name + suffix (made an identifier, made unique); past
 * FXT_TD_EV_MAX_FIELDS it goes to the spare last entry and b->overflow is set. */
struct fxt_td_ev_field *fxt_td_ev_add_field(struct build *b, uint8_t type, uint8_t src,
                                            uint32_t arg, const char *name, size_t name_len,
                                            const char *suffix);
/* Adds a slot: a value the print format takes (an argument, or a head value of its kind). */
void fxt_td_ev_add_slot(struct build *b, uint8_t kind, uint32_t arg, uint32_t arg_type, int field);

/* tracedat_write_print.c */

/* What text.c prints for an ad hoc event (adhoc_head, fxt_text_pairs) as a printf format over
 * slots: the head's values, then one conversion per argument. */
void fxt_td_ev_adhoc_format(struct build *b, const struct fxt_td_ev_key *k, struct fxt_tbuf *fmt);
/* A piece text.c renders (taking `slots` values): joins the pending group, opened here. */
void fxt_td_ev_render(struct build *b, uint32_t from, uint32_t slots, bool literal);
/* Ends the pending rendered pieces [gfrom, to) at a field of their own, printed with %s. */
void fxt_td_ev_flush_group(struct build *b, uint32_t to);
/* Translates v->fmt into b->print and b->args, adding rendered fields. */
void fxt_td_ev_translate(struct build *b, const struct fxt_td_ev_key *k);

#endif /* FXTRACE_FORMATS_TRACEDAT_WRITE_EVENT_INT_H */
