/* src/core/filter_render.c - what the kernel shows for a filter: the `filter` file after a
 * write (trace_events_filter.c: append_filter_err, print_event_filter) and the error_log entry
 * (trace.c: tracing_log_err, tracing_err_log_seq_show); the error texts. */
#include "filter_int.h"

#include "fmt.h"

/* The texts of enum fxt_filter_errcode's FXT_FILTER_ERR_NONE .. FXT_FILTER_ERR_NO_FILTER, in
 * order, as one string (fxt_str_nth). */
static const char err_text[] =
    "No error" "\0"
    "Invalid operator" "\0"
    "Too many '('" "\0"
    "Too few '('" "\0"
    "Missing matching quote" "\0"
    "Missing '{'" "\0"
    "Missing '}'" "\0"
    "Operand too long" "\0"
    "Expecting string field" "\0"
    "Expecting numeric field" "\0"
    "Illegal operation for field type" "\0"
    "Field not found" "\0"
    "Illegal integer value" "\0"
    "Couldn't find or set field in one of a subsystem's events" "\0"
    "Too many terms in predicate expression" "\0"
    "Meaningless filter expression" "\0"
    "Invalid cpulist" "\0"
    "Only 'ip' field is supported for function trace" "\0"
    "Invalid value (did you forget quotes)?" "\0"
    "Function not found" "\0"
    "Error" "\0"
    "No filter found";

const char *fxt_filter_strerror(int code)
{
  if (code >= FXT_FILTER_ERR_NONE && code <= FXT_FILTER_ERR_NO_FILTER)
    return fxt_str_nth(err_text, (size_t)code);
  switch (code) {
  case FXT_FILTER_ERR_WRITE_TOO_LONG:
    return "Write too long";
  case FXT_FILTER_ERR_NO_SPACE:
    return "Program buffer too small";
  case FXT_FILTER_ERR_ARGUMENT:
    return "Invalid argument";
  default:
    return "Unknown error";
  }
}

size_t fxt_filter_text_len(const char *text, size_t len)
{
  if (!text)
    return 0;
  size_t n = fxt_filter_strnlen(text, len);
  while (n > 0 && fxt_filter_isspace((unsigned char)text[n - 1]))
    n--;
  return n;
}

/* snprintf-style output: counts everything, stores what fits. */
struct out {
  char *buf;
  size_t size, len;
};

static void out_mem(struct out *o, const char *s, size_t n)
{
  for (size_t k = 0; k < n; k++, o->len++)
    if (o->len + 1 < o->size)
      o->buf[o->len] = s[k];
}

static void out_str(struct out *o, const char *s)
{
  out_mem(o, s, fxt_filter_strnlen(s, (size_t)-1));
}

static void out_spaces(struct out *o, size_t n)
{
  for (; n > 0; n--)
    out_mem(o, " ", 1);
}

static size_t out_end(struct out *o)
{
  if (o->size)
    o->buf[o->len < o->size ? o->len : o->size - 1] = '\0';
  return o->len;
}

/* Whether err describes a failed parse that the kernel shows and logs. */
static bool shown(int result, const struct fxt_filter_error *err)
{
  return result < 0 && err && err->code > FXT_FILTER_ERR_NONE &&
         err->code < FXT_FILTER_ERR_WRITE_TOO_LONG;
}

size_t fxt_filter_render(char *buf, size_t size, const char *text, size_t len, int result,
                         const struct fxt_filter_error *err)
{
  struct out o = {buf, buf ? size : 0, 0};
  const size_t n = fxt_filter_text_len(text, len);
  if (result > 0) {
    out_mem(&o, text, n);
    out_mem(&o, "\n", 1);
  } else if (result == 0) {
    out_str(&o, "none\n");
  } else if (shown(result, err)) {
    /* append_filter_err builds the stored string in a trace_seq: each piece is written whole
     * or not at all, and nothing after the first that does not fit. */
    const char *msg = fxt_filter_strerror(err->code);
    const size_t p = err->pos < n ? err->pos : n;
    size_t seq = n;
    int parts = 0; /* 1: caret line, 2: and the message line; 3: "Error: (0)" */
    if (err->code == FXT_FILTER_ERR_ERRNO) {
      if (seq + 12 < FXT_FILTER_SEQ_SIZE) {
        seq += 12;
        parts = 3;
      }
    } else if (seq + 2 + p < FXT_FILTER_SEQ_SIZE) {
      seq += 2 + p;
      parts = 1;
      const size_t mlen = 15 + fxt_filter_strnlen(msg, 128);
      if (seq + mlen < FXT_FILTER_SEQ_SIZE) {
        seq += mlen;
        parts = 2;
      }
    }
    /* print_event_filter: "%s\n" into a trace_seq of the same size, or nothing. */
    if (seq + 1 < FXT_FILTER_SEQ_SIZE) {
      out_mem(&o, text, n);
      if (parts == 3)
        out_str(&o, "\nError: (0)\n");
      if (parts == 1 || parts == 2) {
        out_mem(&o, "\n", 1);
        out_spaces(&o, p);
        out_mem(&o, "^", 1);
      }
      if (parts == 2) {
        out_str(&o, "\nparse_error: ");
        out_str(&o, msg);
        out_mem(&o, "\n", 1);
      }
      out_mem(&o, "\n", 1);
    }
  }
  return out_end(&o);
}

size_t fxt_filter_render_error_log(char *buf, size_t size, const char *text, size_t len,
                                   const struct fxt_filter_error *err, uint64_t ts_ns)
{
  struct out o = {buf, buf ? size : 0, 0};
  char digits[24];
  struct fxt_fmt f;
  if (!err || !shown(err->result, err))
    return out_end(&o);
  const bool messageless = err->code == FXT_FILTER_ERR_ERRNO;
  const uint32_t pos = messageless ? 0 : (err->pos & 0xffffu); /* the kernel logs a u16 */

  /* "[%5llu.%06u]": seconds and microseconds (truncated) of ts_ns, from its decimal digits. */
  fxt_fmt_init(&f, digits, sizeof digits);
  fxt_fmt_dec(&f, ts_ns);
  const size_t nd = f.len, sec_digits = nd > 9 ? nd - 9 : 0;
  out_mem(&o, "[", 1);
  out_spaces(&o, sec_digits < 5 ? 5 - (sec_digits ? sec_digits : 1) : 0);
  if (sec_digits)
    out_mem(&o, digits, sec_digits);
  else
    out_mem(&o, "0", 1);
  out_mem(&o, ".", 1);
  for (size_t k = 0; k < 6; k++) { /* digit k of the 9 nanosecond digits */
    const size_t from_end = 9 - k;
    out_mem(&o, from_end <= nd ? &digits[nd - from_end] : "0", 1);
  }
  out_str(&o, "] event filter parse error: error: ");
  out_str(&o, fxt_filter_strerror(err->code));
  out_str(&o, "\n  Command: ");
  out_mem(&o, text, fxt_filter_text_len(text, len));
  out_mem(&o, "\n", 1);
  out_spaces(&o, 11 + (size_t)pos);
  out_str(&o, "^\n");
  return out_end(&o);
}
