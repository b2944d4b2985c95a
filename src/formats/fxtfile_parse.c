/* src/formats/fxtfile_parse.c - the parsers of fxtrace's own records in an FXT file, shared by
 * the reader (fxtfile.c) and `fxtrace check`: bookkeeping records (`kernel:meta`) and
 * tracepoint descriptions (fxtfile.h).
 */
#include "fxtfile_int.h"

#include <stdio.h>
#include <string.h>

#include <fxtrace/meta.h>

/* ---- small text helpers ------------------------------------------------------------------ */

bool fxtf_text_is(struct fxtf_text t, const char *s) {
  size_t n = strlen(s);
  return t.len == n && (n == 0 || memcmp(t.data, s, n) == 0);
}

bool fxtf_str_is(const struct fxt_str_ref *r, const char *s) {
  return fxtf_text_is(fxtf_text_of(r), s);
}

/* ---- bookkeeping records ----------------------------------------------------------------- */

/* The unsigned integer argument called name, or false. */
static bool arg_uint(const struct fxt_event *ev, const char *name, uint64_t *v) {
  for (uint32_t i = 0; i < ev->num_args; i++) {
    const struct fxt_arg *a = &ev->args[i];
    if (!fxtf_str_is(&a->name, name))
      continue;
    if (a->type == FXT_ARG_UINT32)
      *v = a->value.u32;
    else if (a->type == FXT_ARG_UINT64)
      *v = a->value.u64;
    else
      return false;
    return true;
  }
  return false;
}

/* True when the event has a bool argument called name, true. */
static bool arg_true(const struct fxt_event *ev, const char *name) {
  for (uint32_t i = 0; i < ev->num_args; i++)
    if (fxtf_str_is(&ev->args[i].name, name))
      return ev->args[i].type == FXT_ARG_BOOL && ev->args[i].value.b;
  return false;
}

struct meta_name {
  const char *name;
  enum fxtf_meta_kind kind;
  int want_type; /* FXT event type the conventions give it */
};

static const struct meta_name k_meta[] = {
    {"drop_stats", FXTF_META_DROP_STATS, FXT_EVENT_DURATION_COMPLETE},
    {"overrun", FXTF_META_OVERRUN, FXT_EVENT_INSTANT},
    {"lost", FXTF_META_LOST, FXT_EVENT_INSTANT},
    {"cpu", FXTF_META_CPU, FXT_EVENT_COUNTER},
    {"clock_sync", FXTF_META_CLOCK_SYNC, FXT_EVENT_INSTANT},
    {"dropped", FXTF_META_DROPPED, FXT_EVENT_COUNTER},
};

static int missing_arg(const struct fxt_record *rec, const char *what, char *err, size_t n) {
  return fxt_fail_at(err, n, FXT_EBADMSG, rec->offset,
                     "kernel:meta %.*s record without an unsigned integer argument '%s'",
                     (int)rec->u.event.name.len, fxtf_text_of(&rec->u.event.name).data, what);
}

int fxtf_parse_meta(const struct fxt_record *rec, struct fxtf_meta *out, char *err,
                    size_t err_size) {
  memset(out, 0, sizeof *out);
  out->want_type = -1;
  if (rec->kind != FXT_KIND_EVENT || !fxtf_str_is(&rec->u.event.category, "kernel:meta"))
    return 0;
  const struct fxt_event *ev = &rec->u.event;
  out->kind = FXTF_META_OTHER;
  for (size_t i = 0; i < sizeof k_meta / sizeof k_meta[0]; i++)
    if (fxtf_str_is(&ev->name, k_meta[i].name)) {
      out->kind = k_meta[i].kind;
      out->want_type = k_meta[i].want_type;
    }
  uint64_t v = 0;
  switch (out->kind) {
  case FXTF_META_DROP_STATS:
  case FXTF_META_OVERRUN:
  case FXTF_META_LOST:
    if (!arg_uint(ev, "num_records", &out->records))
      return missing_arg(rec, "num_records", err, err_size);
    out->count_unknown = arg_true(ev, "count_unknown");
    out->has_cpu = arg_uint(ev, "cpu", &v);
    break;
  case FXTF_META_CPU:
    if (!arg_uint(ev, "cpu", &v))
      return missing_arg(rec, "cpu", err, err_size);
    break;
  case FXTF_META_CLOCK_SYNC:
    out->sync.offset = rec->offset;
    if (!arg_uint(ev, "ticks", &out->sync.ticks))
      return missing_arg(rec, "ticks", err, err_size);
    if (!arg_uint(ev, "monotonic_ns", &out->sync.monotonic_ns))
      return missing_arg(rec, "monotonic_ns", err, err_size);
    if (!arg_uint(ev, "realtime_ns", &out->sync.realtime_ns))
      return missing_arg(rec, "realtime_ns", err, err_size);
    return 0;
  default:
    return 0;
  }
  out->cpu = v > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)v; /* FXTF_CPU_UNKNOWN: none */
  return 0;
}

/* ---- tracepoint descriptions ------------------------------------------------------------- */

#define DESC_HEAD 16u  /* u32 id, u16 system, name, kind, nfields, fmt_len, reserved */
#define DESC_FIELD 8u  /* u16 name_ref, u8 type, u8 reserved, u32 bound */

bool fxtf_is_desc(const struct fxt_record *rec) {
  return rec->kind == FXT_KIND_BLOB && rec->u.blob.blob_type == FXT_BLOB_DATA &&
         fxtf_str_is(&rec->u.blob.name, "fxtrace:tracepoint");
}

static uint16_t get16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A string ref of the payload, resolved in the decoder's current table. */
static int desc_ref(const struct fxt_decoder *d, uint16_t ref, uint64_t at, const char *what,
                    struct fxtf_text *t, char *err, size_t err_size) {
  const char *data;
  size_t len;
  if (ref > FXT_MAX_STRING_INDEX || fxt_decoder_string(d, ref, &data, &len) != 0)
    return fxt_fail_at(err, err_size, FXT_EBADMSG, at,
                       "tracepoint description: %s refers to undefined string %u", what, ref);
  t->data = data;
  t->len = (uint32_t)len;
  return 0;
}

static int desc_fields(const struct fxt_decoder *d, const unsigned char *p, uint64_t at,
                       struct fxtf_desc *out, char *err, size_t err_size) {
  for (uint32_t i = 0; i < out->nfields; i++, p += DESC_FIELD, at += DESC_FIELD) {
    struct fxtf_field *fl = &out->fields[i];
    int rc = desc_ref(d, get16(p), at, "a field name", &fl->name, err, err_size);
    if (rc)
      return rc;
    fl->type = p[2];
    fl->bound = get32(p + 4);
    if (fl->type < FXT_TYPE_U8 || fl->type > FXT_TYPE_BYTES)
      return fxt_fail_at(err, err_size, FXT_EBADMSG, at + 2,
                         "tracepoint description: field %u has unknown type %u", i, fl->type);
    if (p[3] != 0)
      return fxt_fail_at(err, err_size, FXT_EBADMSG, at + 3,
                         "tracepoint description: field %u reserved byte is %u", i, p[3]);
  }
  return 0;
}

int fxtf_parse_desc(const struct fxt_decoder *d, const struct fxt_record *rec,
                    struct fxtf_desc *out, char *err, size_t err_size) {
  const struct fxt_blob *b = &rec->u.blob;
  const unsigned char *p = b->data;
  uint64_t at = rec->offset + FXT_WORD_BYTES; /* the payload follows the header word */
  memset(out, 0, sizeof *out);
  out->offset = rec->offset;
  if (b->size < DESC_HEAD)
    return fxt_fail_at(err, err_size, FXT_EBADMSG, at,
                       "tracepoint description of %u bytes (the fixed part is %u)", b->size,
                       DESC_HEAD);
  out->id = get32(p);
  out->system_ref = get16(p + 4);
  out->name_ref = get16(p + 6);
  out->kind = get16(p + 8);
  out->nfields = get16(p + 10);
  uint16_t fmt_len = get16(p + 12);
  if (out->kind > FXT_TP_PRINTK)
    return fxt_fail_at(err, err_size, FXT_EBADMSG, at + 8,
                       "tracepoint description: unknown kind %u", out->kind);
  if (out->nfields > FXT_MAX_FIELDS)
    return fxt_fail_at(err, err_size, FXT_EBADMSG, at + 10,
                       "tracepoint description: %u fields (at most %u)", out->nfields,
                       FXT_MAX_FIELDS);
  if (get16(p + 14) != 0)
    return fxt_fail_at(err, err_size, FXT_EBADMSG, at + 14,
                       "tracepoint description: reserved field is %u", get16(p + 14));
  uint32_t want = DESC_HEAD + fmt_len + out->nfields * DESC_FIELD;
  if (b->size != want)
    return fxt_fail_at(err, err_size, FXT_EBADMSG, at,
                       "tracepoint description of %u bytes, its fields say %u", b->size, want);
  int rc = desc_ref(d, out->system_ref, at + 4, "the system", &out->system, err, err_size);
  if (rc == 0)
    rc = desc_ref(d, out->name_ref, at + 6, "the event name", &out->name, err, err_size);
  if (rc)
    return rc;
  out->fmt.data = (const char *)p + DESC_HEAD;
  out->fmt.len = fmt_len;
  return desc_fields(d, p + DESC_HEAD + fmt_len, at + DESC_HEAD + fmt_len, out, err, err_size);
}
