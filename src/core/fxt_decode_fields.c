/* src/core/fxt_decode_fields.c - the pieces every FXT record is made of: words, padded
 * streams, reserved bits, string and thread refs, arguments (spec/fxt.md §1, §5, §6).
 *
 * Error offsets: a field that runs past a size reports the header holding that size field
 * (the record's or the argument's); reserved bits, refs and padding report the word they sit
 * in.
 */
#include "fxt_decode_int.h"

#include "fmt.h"
#include "mem.h"

int fxt_dec_fail(struct fxt_decoder *d, int code, uint64_t at, const char *spec, const char *s0,
                 const char *s1, uint64_t n0, uint64_t n1, uint64_t n2) {
  const char *strs[2] = {s0, s1};
  uint64_t nums[3] = {n0, n1, n2};
  uint64_t off[1] = {at};
  struct fxt_fmt f;
  fxt_fmt_init(&f, d->msg, sizeof d->msg);
  fxt_fmt_spec(&f, "offset %u: ", NULL, 0, off, 1);
  fxt_fmt_spec(&f, spec, strs, 2, nums, 3);
  d->error = code;
  return code;
}

int fxt_dec_overrun(struct fxt_cur *c, const char *what) {
  return fxt_dec_fail(c->d, FXT_EBADMSG, fxt_cur_at(c, c->start),
                      "%s runs past the declared %s size (%u words)", what, c->scope,
                      c->end - c->start, 0, 0);
}

int fxt_dec_stream(struct fxt_cur *c, uint64_t len, const char *what, const char **data) {
  uint64_t words = fxt_stream_words(len);
  if (words > c->end - c->pos)
    return fxt_dec_overrun(c, what);
  const unsigned char *p = c->base + (c->pos << 3);
  /* Padding lives in the last word only: check its bytes after the text. */
  for (uint64_t i = len; i < (words << 3); i++) {
    if (p[i] != 0)
      return fxt_dec_fail(c->d, FXT_EBADMSG, fxt_cur_at(c, c->pos + (i >> 3)),
                          "non-zero padding byte after %s", what, NULL, 0, 0, 0);
  }
  *data = len ? (const char *)p : "";
  c->pos += words;
  return 0;
}

int fxt_dec_reserved(struct fxt_cur *c, uint64_t word, uint64_t used, uint64_t at,
                     const char *what) {
  uint64_t bad = word & ~used;
  if (bad == 0)
    return 0;
  return fxt_dec_fail(c->d, FXT_EBADMSG, at, "reserved bits %x set in %s", what, NULL, bad, 0, 0);
}

/* ---- refs (§5) ------------------------------------------------------------------------------ */

int fxt_dec_ref_undefined(struct fxt_cur *c, uint64_t field, uint64_t at) {
  return fxt_dec_fail(c->d, FXT_EBADMSG, at, "string ref %u not defined", NULL, NULL, field, 0, 0);
}

int fxt_dec_thread_ref(struct fxt_cur *c, uint64_t field, uint64_t at, struct fxt_thread_ref *t) {
  t->index = (uint8_t)field;
  t->process_koid = 0;
  t->thread_koid = 0;
  if (field == 0)
    return 0;
  const struct fxt_thread_slot *s = &c->d->threads[field];
  if (s->gen != c->d->gen)
    return fxt_dec_fail(c->d, FXT_EBADMSG, at, "thread ref %u not defined", NULL, NULL, field, 0,
                        0);
  t->process_koid = s->process_koid;
  t->thread_koid = s->thread_koid;
  return 0;
}

int fxt_dec_thread_koids(struct fxt_cur *c, struct fxt_thread_ref *t) {
  if (t->index != 0)
    return 0;
  int rc = fxt_dec_word(c, "process koid", &t->process_koid);
  return rc ? rc : fxt_dec_word(c, "thread koid", &t->thread_koid);
}

/* ---- arguments (§6) ------------------------------------------------------------------------ */

#define ARG_COMMON (FXT_FMASK(FXT_ARG_TYPE) | FXT_FMASK(FXT_ARG_SIZE) | FXT_FMASK(FXT_ARG_NAME))

/* Bits of the header an argument type may use; everything else is reserved. */
static uint64_t arg_used_bits(uint32_t type) {
  switch (type) {
  case FXT_ARG_INT32:
  case FXT_ARG_UINT32:
    return ARG_COMMON | FXT_FMASK(FXT_ARG_VALUE32);
  case FXT_ARG_STRING:
    return ARG_COMMON | FXT_FMASK(FXT_ARG_STRING_VALUE);
  case FXT_ARG_BOOL:
    return ARG_COMMON | FXT_FMASK(FXT_ARG_BOOL_VALUE);
  case FXT_ARG_BLOB:
    return ARG_COMMON | FXT_FMASK(FXT_ARG_BLOB_SIZE);
  default: /* null and the types whose value is a following word */
    return ARG_COMMON;
  }
}

/* The value of one argument, after its name stream; a is the argument's own window. */
static int arg_value(struct fxt_cur *a, uint64_t h, uint64_t at, struct fxt_arg *arg) {
  uint64_t w = 0;
  int rc = 0;
  if (fxt_arg_header_value(h, arg))
    return 0;
  switch (arg->type) {
  case FXT_ARG_STRING:
    rc = fxt_dec_ref(a, FXT_GET(h, FXT_ARG_STRING_VALUE), at, &arg->value.str);
    if (rc == 0)
      rc = fxt_dec_ref_stream(a, &arg->value.str, "string argument value");
    break;
  case FXT_ARG_BLOB: {
    const char *data = "";
    arg->value.blob.size = (uint32_t)FXT_GET(h, FXT_ARG_BLOB_SIZE);
    rc = fxt_dec_stream(a, arg->value.blob.size, "blob argument payload", &data);
    arg->value.blob.data = data;
    a->rec->flags |= FXT_RECORD_WARN_NONCANONICAL; /* fxtrace never writes type 10 (§6) */
    break;
  }
  default: /* a value word: int64, uint64, double, pointer, koid */
    rc = fxt_dec_word(a, "argument value", &w);
    fxt_arg_word_value(w, arg);
    break;
  }
  return rc;
}

/* One argument at the cursor: header, inline name, value; the declared size must be used
 * exactly (Fuchsia's reader rejects anything else; Perfetto would silently skip, §6). */
static int one_arg(struct fxt_cur *c, uint32_t i, struct fxt_arg *arg) {
  uint64_t at = fxt_cur_at(c, c->pos);
  uint64_t h;
  int rc = fxt_dec_word(c, "argument header", &h);
  if (rc)
    return rc;
  uint64_t size = FXT_GET(h, FXT_ARG_SIZE);
  arg->type = (uint32_t)FXT_GET(h, FXT_ARG_TYPE);
  if (size == 0)
    return fxt_dec_fail(c->d, FXT_EBADMSG, at, "argument %u has size 0", NULL, NULL, i, 0, 0);
  if (size - 1 > c->end - c->pos)
    return fxt_dec_fail(c->d, FXT_EBADMSG, at,
                        "argument %u (%u words) runs past the declared record size (%u words)",
                        NULL, NULL, i, size, c->end - c->start);
  if (arg->type > FXT_ARG_BLOB)
    return fxt_dec_fail(c->d, FXT_ENOSYS, at, "argument %u has unknown type %u", NULL, NULL, i,
                        arg->type, 0);
  struct fxt_cur a = *c;
  a.start = c->pos - 1;
  a.end = a.start + size;
  a.scope = "argument";
  /* A bool's value is bit 32 alone ([FIELDS], [RUST]); Perfetto would read any of [32..63]. */
  const char *what = arg->type == FXT_ARG_BOOL ? "bool argument header (value is bit 32 only)"
                                               : "argument header";
  rc = fxt_dec_reserved(&a, h, arg_used_bits(arg->type), at, what);
  if (rc == 0)
    rc = fxt_dec_ref(&a, FXT_GET(h, FXT_ARG_NAME), at, &arg->name);
  if (rc == 0)
    rc = fxt_dec_ref_stream(&a, &arg->name, "argument name");
  if (rc == 0 && arg->name.index == 0)
    c->rec->flags |= FXT_RECORD_WARN_NONCANONICAL; /* empty names are refused by Fuchsia */
  if (rc == 0)
    rc = arg_value(&a, h, at, arg);
  if (rc)
    return rc;
  if (a.pos != a.end)
    return fxt_dec_fail(c->d, FXT_EBADMSG, at,
                        "argument %u declares %u words but its fields end after %u", NULL, NULL,
                        i, size, a.pos - a.start);
  c->pos = a.end;
  return 0;
}

int fxt_dec_args(struct fxt_cur *c, uint32_t n, struct fxt_arg *args) {
  for (uint32_t i = 0; i < n; i++) {
    int rc = one_arg(c, i, &args[i]);
    if (rc)
      return rc;
  }
  return 0;
}
