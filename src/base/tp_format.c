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

uint32_t fxt_tracepoint_head(const struct fxt_tracepoint *tp)
{
  switch (tp->kind) {
  case FXT_TP_DURATION:
  case FXT_TP_COUNTER:
  case FXT_TP_ASYNC:
  case FXT_TP_FLOW:
    return 1;
  default:
    return 0;
  }
}

uint32_t fxt_tracepoint_fields(const struct fxt_tracepoint *tp, struct fxt_field *out)
{
  uint32_t n = 0, head = fxt_tracepoint_head(tp);
  if (head)
    out[n++] = (struct fxt_field){tp->kind == FXT_TP_DURATION ? "dur_ns" : "id", FXT_TYPE_U64, 0};
  for (uint32_t i = 0; tp->fields && i < tp->nfields && i < FXT_MAX_FIELDS; i++) {
    out[n] = tp->fields[i];
    if (tp->kind != FXT_TP_TYPED && out[n].type == FXT_TYPE_STR) /* copied up to the limit */
      out[n].bound = FXT_STR_MAX_BOUND;
    n++;
  }
  return n;
}

uint32_t fxt_tracepoint_fields_merge(const struct fxt_tracepoint *tp, struct fxt_field *out,
                                     uint32_t n)
{
  struct fxt_field f[FXT_TP_FIELDS_MAX];
  uint32_t nf = fxt_tracepoint_fields(tp, f);
  for (uint32_t i = 0; i < nf && n < FXT_TP_FIELDS_MAX; i++) {
    uint32_t j = 0;
    while (j < n && strcmp(out[j].name, f[i].name) != 0)
      j++;
    if (j == n)
      out[n++] = f[i];
  }
  return n;
}

/* An ad-hoc event's print format: what fxtrace's text and the trace.dat export print for its
 * head (a duration's length, a counter's id), then its arguments as name=value. */
static void adhoc_print_fmt(struct fxt_tbuf *b, const struct fxt_tracepoint *tp,
                            const struct fxt_field *f, uint32_t nf)
{
  char line[1024];
  uint32_t head = fxt_tracepoint_head(tp);
  fxt_tbuf_puts(b, "\"");
  if (tp->kind == FXT_TP_DURATION)
    fxt_tbuf_puts(b, "dur=%llu.%03lluus");
  else if (head)
    fxt_tbuf_puts(b, "id=%llu");
  for (uint32_t i = head; i < nf; i++) {
    int n = snprintf(line, sizeof(line), "%s%s=%s", i ? " " : "", f[i].name,
                     default_conv(f[i].type));
    fxt_tbuf_put(b, line, (size_t)n);
  }
  fxt_tbuf_puts(b, "\"");
  if (tp->kind == FXT_TP_DURATION)
    fxt_tbuf_puts(b, ", REC->dur_ns / 1000, REC->dur_ns % 1000");
  else if (head)
    fxt_tbuf_puts(b, ", REC->id");
}

/* The kernel's format file (spec ftrace-text.md 3): common fields, then the event's fields
 * laid out as a C struct after them (src/base/ftrace_format.h), then the print format with
 * its arguments. */
void fxt_tp_format(struct fxt_tbuf *b, const struct fxt_tracepoint *tp, uint32_t id)
{
  struct fxt_field tf[FXT_TP_FIELDS_MAX];
  fxt_tp_format_fields(b, tp, id, tf, fxt_tracepoint_fields(tp, tf));
}

void fxt_tp_format_fields(struct fxt_tbuf *b, const struct fxt_tracepoint *tp, uint32_t id,
                          const struct fxt_field *tf, uint32_t nf)
{
  char line[1024];
  int n;
  struct fxt_ff_field fields[FXT_TP_FIELDS_MAX];
  for (uint32_t i = 0; i < nf; i++)
    fields[i] = (struct fxt_ff_field){tf[i].name, strlen(tf[i].name), (uint8_t)tf[i].type,
                                      tf[i].bound};
  fxt_ff_head(b, tp->name, strlen(tp->name), id, fields, nf);
  char fmt[2048];
  if (tp->kind != FXT_TP_TYPED) {
    adhoc_print_fmt(b, tp, tf, nf);
  } else {
    fxt_tbuf_puts(b, "\"");
    fxt_tbuf_puts(b, fxt_tracepoint_print_fmt(tp, fmt, sizeof(fmt)));
    fxt_tbuf_puts(b, "\"");
  }
  for (uint32_t i = fxt_tracepoint_head(tp); i < nf; i++) {
    const struct fxt_field *f = &tf[i];
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

