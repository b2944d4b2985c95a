/* src/formats/tracedat_write_print.c - the print format of a trace.dat event variant
 * (tracedat_write_event.h): fxtrace's own for ad hoc events, and its translation into one
 * libtraceevent prints the same, with the fields it cannot print rendered by fxtrace.
 */
#include "tracedat_write_event_int.h"

#include <stdio.h>
#include <string.h>

#include "../base/ftrace_format.h"

/* ---- the print format in fxtrace's terms (ad hoc events) ---------------------------------- */

static void put_pct_escaped(struct fxt_tbuf *b, struct fxtf_text t) {
  for (uint32_t i = 0; i < t.len; i++) {
    if (t.data[i] == '%')
      fxt_tbuf_put(b, "%", 1);
    fxt_tbuf_put(b, &t.data[i], 1);
  }
}

static const char *const k_async_flow[] = {
    "async_begin", "async_instant", "async_end", "flow_begin", "flow_step", "flow_end",
};

/* What text.c prints for an ad hoc event (adhoc_head, fxt_text_pairs) as a printf format over
 * slots: the head's values, then one conversion per argument. */
void fxt_td_ev_adhoc_format(struct build *b, const struct fxt_td_ev_key *k, struct fxt_tbuf *fmt) {
  bool head = true;
  switch (k->ev_type) {
  case FXT_EVENT_COUNTER:
    fxt_td_ev_add_field(b, FXT_TYPE_U64, FXT_TD_EV_SRC_TRAILER, 0, "id", 2, "");
    fxt_td_ev_add_slot(b, FXT_TD_EV_SLOT_TRAILER, 0, FXT_ARG_UINT64, (int)b->nf - 1);
    fxt_tbuf_puts(fmt, "id=%llu");
    break;
  case FXT_EVENT_DURATION_BEGIN: fxt_tbuf_puts(fmt, "B"); break;
  case FXT_EVENT_DURATION_END: fxt_tbuf_puts(fmt, "E"); break;
  case FXT_EVENT_DURATION_COMPLETE:
    fxt_td_ev_add_field(b, FXT_TYPE_U64, FXT_TD_EV_SRC_DUR, 0, "dur_ns", 6, "");
    fxt_td_ev_add_slot(b, FXT_TD_EV_SLOT_DUR_US, 0, FXT_ARG_UINT64, (int)b->nf - 1);
    fxt_td_ev_add_slot(b, FXT_TD_EV_SLOT_DUR_FRAC, 0, FXT_ARG_UINT64, (int)b->nf - 1);
    fxt_tbuf_puts(fmt, "dur=%llu.%03lluus");
    break;
  case FXT_EVENT_INSTANT: head = false; break;
  default: /* async, flow */
    fxt_td_ev_add_field(b, FXT_TYPE_U64, FXT_TD_EV_SRC_TRAILER, 0, "id", 2, "");
    fxt_td_ev_add_slot(b, FXT_TD_EV_SLOT_TRAILER, 0, FXT_ARG_POINTER, (int)b->nf - 1);
    fxt_tbuf_puts(fmt, k_async_flow[k->ev_type - FXT_EVENT_ASYNC_BEGIN]);
    fxt_tbuf_puts(fmt, " id=%p");
    break;
  }
  if (head && k->nargs)
    fxt_tbuf_put(fmt, " ", 1);
  for (uint32_t i = 0; i < k->nargs; i++) {
    static const char *const conv[] = {
        [FXT_ARG_NULL] = "",    [FXT_ARG_INT32] = "%d", [FXT_ARG_UINT32] = "%u",
        [FXT_ARG_INT64] = "%lld", [FXT_ARG_UINT64] = "%llu", [FXT_ARG_DOUBLE] = "%g",
        [FXT_ARG_STRING] = "%s", [FXT_ARG_POINTER] = "%p", [FXT_ARG_KOID] = "%llu",
        [FXT_ARG_BOOL] = "%d",  [FXT_ARG_BLOB] = "%s",
    };
    if (i)
      fxt_tbuf_put(fmt, " ", 1);
    put_pct_escaped(fmt, fxtf_text_of(&k->args[i].name));
    fxt_tbuf_put(fmt, "=", 1);
    fxt_tbuf_puts(fmt, k->args[i].type <= FXT_ARG_BLOB ? conv[k->args[i].type] : "");
  }
}

/* ---- translating a print format for libtraceevent ----------------------------------------- */

/* One piece of a printf format: a conversion as text.c reads it (text.h), or plain text. */
struct conv {
  const char *p, *end; /* the piece */
  char flags[8];
  uint32_t nflags;
  const char *width, *prec; /* digits; prec NULL: none */
  uint32_t width_len, prec_len;
  uint32_t stars; /* '*' widths and precisions: each takes an argument */
  uint32_t bits;  /* 8, 16, 32 or 64 from the length modifier */
  char c;         /* the conversion; 0: malformed (printed as written) */
};

/* A width or a precision at p: '*' (counted in c->stars: it takes an argument), or digits (none
 * or more) that start at *at, *len of them. Returns where it ends. */
static const char *width_at(const char *p, const char *end, struct conv *c, const char **at,
                            uint32_t *len) {
  if (p < end && *p == '*') {
    c->stars++;
    return p + 1;
  }
  const char *s = p;
  while (p < end && *p >= '0' && *p <= '9')
    p++;
  *at = s;
  *len = (uint32_t)(p - s);
  return p;
}

/* Reads the conversion at p ('%', not "%%") the way text.c does. */
static void read_conv(const char *p, const char *end, struct conv *c) {
  memset(c, 0, sizeof *c);
  c->p = p++;
  while (p < end && strchr("-+ #0", *p) != NULL && *p != '\0') {
    if (c->nflags < sizeof c->flags)
      c->flags[c->nflags++] = *p;
    p++;
  }
  p = width_at(p, end, c, &c->width, &c->width_len);
  if (p < end && *p == '.')
    p = width_at(p + 1, end, c, &c->prec, &c->prec_len);
  c->bits = 32;
  if (p < end && *p == 'h') {
    bool hh = p + 1 < end && p[1] == 'h';
    c->bits = hh ? 8 : 16;
    p += hh ? 2 : 1;
  } else if (p < end && *p == 'l') {
    c->bits = 64;
    p += p + 1 < end && p[1] == 'l' ? 2 : 1;
  } else if (p < end && strchr("zjtL", *p) != NULL && *p != '\0') {
    c->bits = 64;
    p++;
  }
  if (p < end && *p != '\0' && strchr("diuxXocspeEfFgGaA", *p) != NULL)
    c->c = *p;
  c->end = p < end ? p + 1 : end;
}

static bool printable(const char *p, const char *end) {
  for (; p < end; p++)
    if (!((*p >= 0x20 && *p < 0x7f) || *p == '\n' || *p == '\t' || *p == '\r'))
      return false;
  return true;
}

/* Literal text inside the print format's quotes: C escapes, '%' doubled. */
static void put_quoted(struct fxt_tbuf *b, const char *p, const char *end) {
  for (; p < end; p++) {
    switch (*p) {
    case '"': fxt_tbuf_put(b, "\\\"", 2); break;
    case '\\': fxt_tbuf_put(b, "\\\\", 2); break;
    case '\n': fxt_tbuf_put(b, "\\n", 2); break;
    case '\t': fxt_tbuf_put(b, "\\t", 2); break;
    case '\r': fxt_tbuf_put(b, "\\r", 2); break;
    case '%': fxt_tbuf_put(b, "%%", 2); break;
    default: fxt_tbuf_put(b, p, 1); break;
    }
  }
}

static bool flags_in(const struct conv *c, const char *allowed) {
  for (uint32_t i = 0; i < c->nflags; i++)
    if (strchr(allowed, c->flags[i]) == NULL)
      return false;
  return true;
}

/* The argument expression of slot s for a conversion of `bits`. */
static void put_expr(struct build *b, const struct fxt_td_ev_slot *s, uint32_t bits) {
  const struct fxt_td_ev_field *f = &b->f[s->field];
  char e[3 * FXT_TD_EV_NAME_MAX + 64];
  uint32_t size;
  int sg;
  fxt_ff_type(f->type, &size, &sg);
  if (s->kind == FXT_TD_EV_SLOT_DUR_US)
    snprintf(e, sizeof e, ", REC->%s / 1000", f->name);
  else if (s->kind == FXT_TD_EV_SLOT_DUR_FRAC)
    snprintf(e, sizeof e, ", REC->%s %% 1000", f->name);
  else if (f->type == FXT_TYPE_STR)
    snprintf(e, sizeof e, ", __get_str(%s)", f->name);
  else if (f->type == FXT_TYPE_BYTES)
    snprintf(e, sizeof e, ", __print_hex_str(REC->%s, %u)", f->name, f->bound);
  else if (sg && size * 8 < bits) /* libtraceevent reads fields zero-extended */
    snprintf(e, sizeof e, ", REC->%s | -(REC->%s & 0x%llx)", f->name, f->name,
             1ULL << (size * 8 - 1));
  else
    snprintf(e, sizeof e, ", REC->%s", f->name);
  fxt_tbuf_puts(&b->args, e);
}

/* Whether libtraceevent prints conversion c of the next slot exactly as text.c does. */
static bool native_ok(const struct build *b, const struct conv *c) {
  /* (widths and precisions over 3 digits: text.c caps them at FXT_TEXT_MAX_WIDTH) */
  if (c->c == 0 || c->stars || b->slot >= b->v->nslots || c->width_len > 3 || c->prec_len > 3)
    return false;
  const struct fxt_td_ev_slot *s = &b->v->slots[b->slot];
  if (s->field < 0)
    return false;
  uint8_t type = b->f[s->field].type;
  if (c->c == 's' && type == FXT_TYPE_BYTES) /* __print_hex_str takes no width */
    return c->nflags == 0 && c->width_len == 0 && c->prec == NULL;
  if (c->c == 's')
    return type == FXT_TYPE_STR && flags_in(c, "-");
  if (c->c == 'p') /* text.c: 0x and every hex digit, for null too (glibc says "(nil)") */
    return integer_type(type) && c->nflags == 0 && c->width_len == 0 && c->prec == NULL &&
           c->bits == 32;
  return strchr("diuxXo", c->c) != NULL && integer_type(type) && flags_in(c, "-0#");
}

/* Writes conversion c (native_ok) and its argument. The length modifier says the width text.c
 * cuts the value to; %s takes none. */
static void put_native(struct build *b, const struct conv *c) {
  const struct fxt_td_ev_slot *s = &b->v->slots[b->slot++];
  struct fxt_tbuf *p = &b->print;
  if (c->c == 'p') {
    fxt_tbuf_puts(p, "0x%llx");
    put_expr(b, s, 64);
    return;
  }
  fxt_tbuf_put(p, "%", 1);
  fxt_tbuf_put(p, c->flags, c->nflags);
  fxt_tbuf_put(p, c->width, c->width_len);
  if (c->prec != NULL) {
    fxt_tbuf_put(p, ".", 1);
    fxt_tbuf_put(p, c->prec, c->prec_len);
  }
  if (c->c != 's')
    fxt_tbuf_puts(p, c->bits == 8 ? "hh" : c->bits == 16 ? "h" : c->bits == 64 ? "ll" : "");
  fxt_tbuf_put(p, &c->c, 1);
  put_expr(b, s, c->bits);
}

static void put_str_arg(struct build *b, const char *field) {
  fxt_tbuf_puts(&b->print, "%s");
  fxt_tbuf_puts(&b->args, ", __get_str(");
  fxt_tbuf_puts(&b->args, field);
  fxt_tbuf_puts(&b->args, ")");
}

/* Ends the pending rendered pieces [gfrom, to) at a field of their own, printed with %s. */
void fxt_td_ev_flush_group(struct build *b, uint32_t to) {
  if (!b->group)
    return;
  b->group = false;
  const struct fxt_td_ev_slot *s = b->gvalue < b->v->nslots ? &b->v->slots[b->gvalue] : NULL;
  bool one = b->gconvs == 1 && !b->glit && s != NULL && s->field >= 0;
  const char *base = one ? b->f[s->field].name : "text";
  struct fxt_td_ev_field *f =
      fxt_td_ev_add_field(b, FXT_TYPE_STR, FXT_TD_EV_SRC_TEXT, b->gslot, base, strlen(base),
                          one ? "_str" : "");
  f->from = b->gfrom;
  f->to = to;
  b->v->has_text = true;
  put_str_arg(b, f->name);
}

/* A piece text.c renders (taking `slots` values): joins the pending group, opened here. */
void fxt_td_ev_render(struct build *b, uint32_t from, uint32_t slots, bool literal) {
  if (!b->group) {
    b->group = true;
    b->gfrom = from;
    b->gslot = b->slot;
    b->gconvs = 0;
    b->glit = false;
    b->gvalue = UINT32_MAX;
  }
  if (literal)
    b->glit = true;
  else if (b->gconvs++ == 0)
    b->gvalue = b->slot + slots - 1;
  b->slot = b->slot + slots < b->v->nslots ? b->slot + slots : b->v->nslots;
}

/* Translates v->fmt into b->print and b->args, adding rendered fields. */
void fxt_td_ev_translate(struct build *b, const struct fxt_td_ev_key *k) {
  const char *fmt = b->v->fmt ? b->v->fmt : "", *p = fmt, *end = fmt + b->v->fmt_len;
  while (p < end) {
    uint32_t at = (uint32_t)(p - fmt);
    const char *q = memchr(p, '%', (size_t)(end - p));
    if (q != p) { /* plain text up to the next conversion */
      q = q ? q : end;
      if (printable(p, q)) {
        fxt_td_ev_flush_group(b, at);
        put_quoted(&b->print, p, q);
      } else {
        fxt_td_ev_render(b, at, 0, true);
      }
      p = q;
      continue;
    }
    if (p + 1 < end && p[1] == '%') {
      fxt_td_ev_flush_group(b, at);
      fxt_tbuf_put(&b->print, "%%", 2);
      p += 2;
      continue;
    }
    struct conv c;
    read_conv(p, end, &c);
    p = c.end;
    const struct fxt_td_ev_slot *s = b->slot < b->v->nslots ? &b->v->slots[b->slot] : NULL;
    if (c.c == 0 && c.stars == 0 && printable(c.p, c.end)) {
      fxt_td_ev_flush_group(b, at); /* malformed: text.c prints it as written */
      put_quoted(&b->print, c.p, c.end);
    } else if (c.c == 0) {
      fxt_td_ev_render(b, at, c.stars, true); /* ... after taking the arguments of its '*'s */
    } else if (k->kind == FXT_TD_EV_ADHOC && c.stars == 0 && s != NULL &&
               s->arg_type == FXT_ARG_BLOB) {
      fxt_td_ev_flush_group(b, at); /* a blob: text.c's value text in a field of its own */
      struct fxt_td_ev_field *f =
          fxt_td_ev_add_field(b, FXT_TYPE_STR, FXT_TD_EV_SRC_VALUE, s->arg,
                              k->args[s->arg].name.data, k->args[s->arg].name.len, "");
      b->v->has_text = true;
      b->slot++;
      put_str_arg(b, f->name);
    } else if (native_ok(b, &c)) {
      fxt_td_ev_flush_group(b, at);
      put_native(b, &c);
    } else {
      fxt_td_ev_render(b, at, c.stars + 1, false);
    }
  }
  fxt_td_ev_flush_group(b, (uint32_t)(end - fmt));
}
