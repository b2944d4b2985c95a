/* src/base/tp_format.c - a tracepoint's ftrace fields, print format and `format` file, from
 * its definition (src/base/tp_format.h). */
#include "tp_format.h"

#include <stdio.h>
#include <string.h>

#include "ftrace_format.h"

static const char *default_conv(uint16_t type)
{
  switch (type) {
  case FXT_TYPE_U64:
    return "%llu";
  case FXT_TYPE_S64:
    return "%lld";
  case FXT_TYPE_S8:
  case FXT_TYPE_S16:
  case FXT_TYPE_S32:
  case FXT_TYPE_BOOL:
    return "%d";
  case FXT_TYPE_DOUBLE:
    return "%g";
  case FXT_TYPE_PTR:
    return "%p";
  case FXT_TYPE_STR:
  case FXT_TYPE_BYTES:
    return "%s";
  default:
    return "%u";
  }
}

const char *fxt_tracepoint_print_fmt(const struct fxt_tracepoint *tp, char *buf, size_t size)
{
  if (tp->print_fmt)
    return tp->print_fmt;
  size_t n = 0;
  buf[0] = 0;
  for (uint32_t i = 0; i < tp->nfields && n + 1 < size; i++) {
    int k = snprintf(buf + n, size - n, "%s%s=%s", i ? " " : "", tp->fields[i].name,
                     default_conv(tp->fields[i].type));
    if (k < 0)
      break;
    n += (size_t)k;
  }
  return buf;
}

const struct fxt_field *fxt_tracepoint_fields(const struct fxt_tracepoint *tp, uint32_t *n)
{
  static const struct fxt_field dur = {"dur_ns", FXT_TYPE_U64, 0}, id = {"id", FXT_TYPE_U64, 0};
  *n = tp->kind == FXT_TP_TYPED ? tp->nfields : tp->kind == FXT_TP_DURATION || tp->kind == FXT_TP_COUNTER;
  return tp->kind == FXT_TP_TYPED ? tp->fields : tp->kind == FXT_TP_DURATION ? &dur
         : tp->kind == FXT_TP_COUNTER                                       ? &id
                                                                            : NULL;
}

/* The kernel's format file (spec ftrace-text.md 3): common fields, then the event's fields
 * laid out as a C struct after them (src/base/ftrace_format.h), then the print format with
 * its arguments. */
void fxt_tp_format(struct fxt_tbuf *b, const struct fxt_tracepoint *tp, uint32_t id)
{
  char line[1024];
  int n;
  struct fxt_ff_field fields[FXT_MAX_FIELDS];
  uint32_t nf;
  const struct fxt_field *tf = fxt_tracepoint_fields(tp, &nf);
  for (uint32_t i = 0; i < nf; i++)
    fields[i] = (struct fxt_ff_field){tf[i].name, strlen(tf[i].name), (uint8_t)tf[i].type,
                                      tf[i].bound};
  fxt_ff_head(b, tp->name, strlen(tp->name), id, fields, nf);
  char fmt[2048];
  /* A duration's and a counter's head as the trace.dat export prints it (their arguments,
   * known only at emission, are not fields here). */
  if (tp->kind == FXT_TP_DURATION) {
    fxt_tbuf_puts(b, "\"dur=%llu.%03lluus\", REC->dur_ns / 1000, REC->dur_ns % 1000");
  } else if (tp->kind == FXT_TP_COUNTER) {
    fxt_tbuf_puts(b, "\"id=%llu\", REC->id");
  } else {
    fxt_tbuf_puts(b, "\"");
    fxt_tbuf_puts(b, tp->kind == FXT_TP_TYPED ? fxt_tracepoint_print_fmt(tp, fmt, sizeof(fmt)) : "");
    fxt_tbuf_puts(b, "\"");
  }
  for (uint32_t i = 0; tp->kind == FXT_TP_TYPED && i < tp->nfields; i++) {
    const struct fxt_field *f = &tp->fields[i];
    if (f->type == FXT_TYPE_STR)
      n = snprintf(line, sizeof(line), ", __get_str(%s)", f->name);
    else if (f->type == FXT_TYPE_BYTES)
      n = snprintf(line, sizeof(line), ", __print_hex(REC->%s, %u)", f->name, f->bound);
    else
      n = snprintf(line, sizeof(line), ", REC->%s", f->name);
    fxt_tbuf_put(b, line, (size_t)n);
  }
  fxt_tbuf_puts(b, "\n");
}

