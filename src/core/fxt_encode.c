/* src/core/fxt_encode.c - FXT record encoders (spec/fxt.md §2-§8).
 *
 * Every encoder runs the same emit function twice: once with no output to count the bytes
 * (so the size field of the header is known before the header is written, and out == NULL
 * callers get the size), then once into the caller's buffer. One code path decides both the
 * size and the bytes, so they cannot disagree. Inputs are validated completely before either
 * pass, which is why the emit functions have no error paths.
 */
#include <fxtrace/detail/fxt_words.h>
#include <fxtrace/fxt.h>

#include "mem.h"

/* Words are stored by copying a uint64_t: correct only where that is little-endian, which is
 * what FXT files contain (§1) and every target we build for. */
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "fxt_encode.c writes words in native order: little-endian targets only"
#endif
#endif

/* Output cursor. out == NULL: count only. pos is 64-bit so counting never wraps on 32-bit
 * targets (inputs are bounded by validation long before that anyway). */
struct enc {
  unsigned char *out;
  uint64_t pos;
};

typedef void (*emit_fn)(struct enc *e, const void *rec, uint64_t words);

static void put_word(struct enc *e, uint64_t w) {
  if (e->out)
    memcpy(e->out + e->pos, &w, sizeof w);
  e->pos += FXT_WORD_BYTES;
}

/* A stream (§1): n bytes, zero-padded to a whole word, no terminator. */
static void put_stream(struct enc *e, const void *data, uint64_t n) {
  uint64_t padded = fxt_stream_words(n) << 3;
  if (n == 0)
    return;
  if (e->out) {
    memcpy(e->out + e->pos, data, (size_t)n);
    memset(e->out + e->pos + n, 0, (size_t)(padded - n));
  }
  e->pos += padded;
}

/* Header words come from the one builder (fxtrace/detail/fxt_words.h), which does not mask:
 * every value is validated before the writing pass. */
static uint64_t record_header(unsigned type, uint64_t words) {
  return fxt_w_record(type, words);
}

/* Counts, checks the limits, then writes. words passed to the writing pass is the record's
 * size in words; the counting pass gets 0 (its header value is never stored). */
static int64_t run(void *out, size_t out_size, emit_fn emit, const void *rec,
                   uint64_t max_bytes) {
  struct enc count = {NULL, 0};
  emit(&count, rec, 0);
  if (count.pos > max_bytes)
    return FXT_E2BIG;
  if (out == NULL)
    return (int64_t)count.pos;
  if ((uint64_t)out_size < count.pos)
    return FXT_ENOBUFS;
  struct enc e = {(unsigned char *)out, 0};
  emit(&e, rec, count.pos >> 3);
  return (int64_t)e.pos;
}

/* ---- string and thread refs -------------------------------------------------------------- */

static bool ref_is_inline(const struct fxt_str_ref *r) {
  return r->index == FXT_STR_REF_INLINE && r->len > 0;
}

static int check_ref(const struct fxt_str_ref *r) {
  if (r->index <= FXT_MAX_STRING_INDEX)
    return 0;
  if (r->index != FXT_STR_REF_INLINE)
    return FXT_EINVAL;
  if (r->len > FXT_MAX_INLINE_STRING || (r->len > 0 && r->data == NULL))
    return FXT_EINVAL;
  return 0;
}

/* The 16-bit ref field. An empty inline string is written as 0 (never 0x8000, §5.1). */
static uint64_t ref_field(const struct fxt_str_ref *r) {
  if (r->index != FXT_STR_REF_INLINE)
    return r->index;
  return r->len > 0 ? (FXT_STR_REF_INLINE | r->len) : 0;
}

static uint64_t ref_stream_words(const struct fxt_str_ref *r) {
  return ref_is_inline(r) ? fxt_stream_words(r->len) : 0;
}

static void put_ref_stream(struct enc *e, const struct fxt_str_ref *r) {
  if (ref_is_inline(r))
    put_stream(e, r->data, r->len);
}

/* Inline thread ref: process koid, then thread koid (§5.2). */
static void put_thread_koids(struct enc *e, const struct fxt_thread_ref *t) {
  if (t->index == 0) {
    put_word(e, t->process_koid);
    put_word(e, t->thread_koid);
  }
}

static int check_data(const void *data, uint64_t len) {
  return (len > 0 && data == NULL) ? FXT_EINVAL : 0;
}

/* ---- arguments (§6) ------------------------------------------------------------------------ */

static bool arg_has_value_word(uint32_t type) {
  return type == FXT_ARG_INT64 || type == FXT_ARG_UINT64 || type == FXT_ARG_DOUBLE ||
         type == FXT_ARG_POINTER || type == FXT_ARG_KOID;
}

/* Size of a valid argument in words: header, inline name, value word or inline value. */
static uint64_t arg_words(const struct fxt_arg *a) {
  uint64_t words = 1 + ref_stream_words(&a->name);
  if (arg_has_value_word(a->type))
    words += 1;
  else if (a->type == FXT_ARG_STRING)
    words += ref_stream_words(&a->value.str);
  return words;
}

static int check_arg(const struct fxt_arg *a) {
  /* Type 10 (blob) is decode-only: neither Fuchsia's C engine nor Perfetto reads it (§6). */
  if (a->type > FXT_ARG_BOOL)
    return FXT_EINVAL;
  int rc = check_ref(&a->name);
  if (rc)
    return rc;
  /* Fuchsia's serializer refuses empty argument names; Perfetto would show "" (§6). */
  if (ref_field(&a->name) == 0)
    return FXT_EINVAL;
  if (a->type == FXT_ARG_STRING && (rc = check_ref(&a->value.str)) != 0)
    return rc;
  if (arg_words(a) > FXT_MAX_ARG_WORDS)
    return FXT_E2BIG;
  return 0;
}

static int check_args(const struct fxt_arg *args, uint32_t n) {
  if (n > FXT_MAX_ARGS)
    return FXT_EINVAL;
  for (uint32_t i = 0; i < n; i++) {
    int rc = check_arg(&args[i]);
    if (rc)
      return rc;
  }
  return 0;
}

/* Header, inline name stream, then the value (§6: always in this order). */
static void put_arg(struct enc *e, const struct fxt_arg *a) {
  uint64_t h = fxt_w_arg(a->type, arg_words(a), (uint32_t)ref_field(&a->name));
  uint64_t value = 0;
  switch (a->type) {
  case FXT_ARG_INT32:
    h |= fxt_w_arg_value32((uint32_t)a->value.i32);
    break;
  case FXT_ARG_UINT32:
    h |= fxt_w_arg_value32(a->value.u32);
    break;
  case FXT_ARG_STRING:
    h = FXT_SET(h, FXT_ARG_STRING_VALUE, ref_field(&a->value.str));
    break;
  case FXT_ARG_BOOL:
    h |= fxt_w_arg_bool(a->value.b ? 1u : 0u);
    break;
  case FXT_ARG_INT64:
    value = (uint64_t)a->value.i64;
    break;
  case FXT_ARG_UINT64:
    value = a->value.u64;
    break;
  case FXT_ARG_DOUBLE:
    memcpy(&value, &a->value.f64, sizeof value); /* the IEEE-754 bit pattern */
    break;
  case FXT_ARG_POINTER:
    value = a->value.pointer;
    break;
  case FXT_ARG_KOID:
    value = a->value.koid;
    break;
  default: /* FXT_ARG_NULL */
    break;
  }
  put_word(e, h);
  put_ref_stream(e, &a->name);
  if (arg_has_value_word(a->type))
    put_word(e, value);
  else if (a->type == FXT_ARG_STRING)
    put_ref_stream(e, &a->value.str);
}

static void put_args(struct enc *e, const struct fxt_arg *args, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    put_arg(e, &args[i]);
}

/* A name, then arguments: how the records with both end (§4.9, §4.10, §8.2). */
static void put_name_args(struct enc *e, const struct fxt_str_ref *name,
                          const struct fxt_arg *args, uint32_t n) {
  put_ref_stream(e, name);
  put_args(e, args, n);
}

/* The checks of a name and its arguments: 0 or the first error. */
static int check_name_args(const struct fxt_str_ref *name, const struct fxt_arg *args,
                           uint32_t n) {
  int rc = check_ref(name);
  return rc ? rc : check_args(args, n);
}

static void emit_arg(struct enc *e, const void *p, uint64_t words) {
  (void)words; /* the argument header carries its own size */
  put_arg(e, (const struct fxt_arg *)p);
}

int64_t fxt_arg_size(const struct fxt_arg *arg) {
  if (arg == NULL)
    return FXT_EINVAL;
  int rc = check_arg(arg);
  return rc ? rc : (int64_t)(arg_words(arg) << 3);
}

int64_t fxt_encode_arg(void *out, size_t out_size, const struct fxt_arg *arg) {
  if (arg == NULL)
    return FXT_EINVAL;
  int rc = check_arg(arg);
  return rc ? rc : run(out, out_size, emit_arg, arg, (uint64_t)FXT_MAX_ARG_WORDS << 3);
}

/* ---- metadata (§4.1-§4.4) ---------------------------------------------------------------- */

static uint64_t metadata_header(unsigned metadata_type, uint64_t words) {
  return FXT_SET(record_header(FXT_RECORD_METADATA, words), FXT_METADATA_TYPE, metadata_type);
}

int64_t fxt_encode_magic(void *out, size_t out_size) {
  if (out == NULL)
    return FXT_WORD_BYTES;
  if (out_size < FXT_WORD_BYTES)
    return FXT_ENOBUFS;
  uint64_t w = FXT_MAGIC_WORD;
  memcpy(out, &w, sizeof w);
  return FXT_WORD_BYTES;
}

static void emit_provider_info(struct enc *e, const void *p, uint64_t words) {
  const struct fxt_provider_info *r = (const struct fxt_provider_info *)p;
  uint64_t h = metadata_header(FXT_METADATA_PROVIDER_INFO, words);
  h = FXT_SET(h, FXT_PROVIDER_INFO_ID, r->id);
  h = FXT_SET(h, FXT_PROVIDER_INFO_NAME_LEN, r->name_len);
  put_word(e, h);
  put_stream(e, r->name, r->name_len);
}

int64_t fxt_encode_provider_info(void *out, size_t out_size,
                                 const struct fxt_provider_info *rec) {
  if (rec == NULL || check_data(rec->name, rec->name_len))
    return FXT_EINVAL;
  return run(out, out_size, emit_provider_info, rec, FXT_MAX_RECORD_BYTES);
}

static void emit_provider_section(struct enc *e, const void *p, uint64_t words) {
  const struct fxt_provider_section *r = (const struct fxt_provider_section *)p;
  uint64_t h = metadata_header(FXT_METADATA_PROVIDER_SECTION, words);
  put_word(e, FXT_SET(h, FXT_PROVIDER_SECTION_ID, r->id));
}

int64_t fxt_encode_provider_section(void *out, size_t out_size,
                                    const struct fxt_provider_section *rec) {
  if (rec == NULL)
    return FXT_EINVAL;
  return run(out, out_size, emit_provider_section, rec, FXT_MAX_RECORD_BYTES);
}

static void emit_provider_event(struct enc *e, const void *p, uint64_t words) {
  const struct fxt_provider_event *r = (const struct fxt_provider_event *)p;
  uint64_t h = metadata_header(FXT_METADATA_PROVIDER_EVENT, words);
  h = FXT_SET(h, FXT_PROVIDER_EVENT_PROVIDER_ID, r->id);
  put_word(e, FXT_SET(h, FXT_PROVIDER_EVENT_EVENT_ID, r->event_id));
}

int64_t fxt_encode_provider_event(void *out, size_t out_size,
                                  const struct fxt_provider_event *rec) {
  if (rec == NULL || rec->event_id > FXT_LOW_MASK(FXT_PROVIDER_EVENT_EVENT_ID_BITS))
    return FXT_EINVAL;
  return run(out, out_size, emit_provider_event, rec, FXT_MAX_RECORD_BYTES);
}

/* ---- initialization, string, thread (§4.5-§4.7) -------------------------------------------- */

static void emit_init(struct enc *e, const void *p, uint64_t words) {
  const struct fxt_init *r = (const struct fxt_init *)p;
  put_word(e, record_header(FXT_RECORD_INIT, words));
  put_word(e, r->ticks_per_second);
}

int64_t fxt_encode_init(void *out, size_t out_size, const struct fxt_init *rec) {
  if (rec == NULL)
    return FXT_EINVAL;
  return run(out, out_size, emit_init, rec, FXT_MAX_RECORD_BYTES);
}

static void emit_string(struct enc *e, const void *p, uint64_t words) {
  const struct fxt_string *r = (const struct fxt_string *)p;
  uint64_t h = record_header(FXT_RECORD_STRING, words);
  h = FXT_SET(h, FXT_STRING_INDEX, r->index);
  put_word(e, FXT_SET(h, FXT_STRING_LEN, r->len));
  put_stream(e, r->data, r->len);
}

int64_t fxt_encode_string(void *out, size_t out_size, const struct fxt_string *rec) {
  /* Index 0 is the reserved empty string: readers ignore such a record (§4.6). */
  if (rec == NULL || rec->index == 0 || rec->index > FXT_MAX_STRING_INDEX ||
      rec->len > FXT_MAX_STRING_LEN || check_data(rec->data, rec->len))
    return FXT_EINVAL;
  return run(out, out_size, emit_string, rec, FXT_MAX_RECORD_BYTES);
}

static void emit_thread(struct enc *e, const void *p, uint64_t words) {
  const struct fxt_thread *r = (const struct fxt_thread *)p;
  put_word(e, FXT_SET(record_header(FXT_RECORD_THREAD, words), FXT_THREAD_INDEX, r->index));
  put_word(e, r->process_koid);
  put_word(e, r->thread_koid);
}

int64_t fxt_encode_thread(void *out, size_t out_size, const struct fxt_thread *rec) {
  if (rec == NULL || rec->index == 0) /* 0 means "inline" in refs; never bindable (§4.7) */
    return FXT_EINVAL;
  return run(out, out_size, emit_thread, rec, FXT_MAX_RECORD_BYTES);
}

/* ---- event (§8) ------------------------------------------------------------------------------ */

static bool event_has_trailer(uint32_t type) {
  return type != FXT_EVENT_INSTANT && type != FXT_EVENT_DURATION_BEGIN &&
         type != FXT_EVENT_DURATION_END;
}

static void emit_event(struct enc *e, const void *p, uint64_t words) {
  const struct fxt_event *r = (const struct fxt_event *)p;
  uint64_t h = fxt_w_event_header(words, r->type, r->num_args, r->thread.index,
                                  (uint32_t)ref_field(&r->category), (uint32_t)ref_field(&r->name));
  /* §8.2 order: timestamp, koids, category, name, arguments, trailer. */
  put_word(e, h);
  put_word(e, r->timestamp);
  put_thread_koids(e, &r->thread);
  put_ref_stream(e, &r->category);
  put_name_args(e, &r->name, r->args, r->num_args);
  if (event_has_trailer(r->type))
    put_word(e, r->trailer);
}

int64_t fxt_encode_event(void *out, size_t out_size, const struct fxt_event *rec) {
  if (rec == NULL || rec->type > FXT_EVENT_TYPE_LAST)
    return FXT_EINVAL;
  int rc = check_ref(&rec->category);
  if (rc == 0)
    rc = check_name_args(&rec->name, rec->args, rec->num_args);
  return rc ? rc : run(out, out_size, emit_event, rec, FXT_MAX_RECORD_BYTES);
}

/* ---- blob, objects (§4.8-§4.10) ------------------------------------------------------------ */

static void emit_blob(struct enc *e, const void *p, uint64_t words) {
  const struct fxt_blob *r = (const struct fxt_blob *)p;
  uint64_t h = record_header(FXT_RECORD_BLOB, words);
  h = FXT_SET(h, FXT_BLOB_NAME, ref_field(&r->name));
  h = FXT_SET(h, FXT_BLOB_SIZE, r->size);
  put_word(e, FXT_SET(h, FXT_BLOB_TYPE, r->blob_type));
  put_ref_stream(e, &r->name);
  put_stream(e, r->data, r->size);
}

int64_t fxt_encode_blob(void *out, size_t out_size, const struct fxt_blob *rec) {
  if (rec == NULL || rec->size > FXT_MAX_STRING_LEN || check_data(rec->data, rec->size))
    return FXT_EINVAL;
  int rc = check_ref(&rec->name);
  return rc ? rc : run(out, out_size, emit_blob, rec, FXT_MAX_RECORD_BYTES);
}

static void emit_userspace_object(struct enc *e, const void *p, uint64_t words) {
  const struct fxt_userspace_object *r = (const struct fxt_userspace_object *)p;
  uint64_t h = record_header(FXT_RECORD_USERSPACE_OBJECT, words);
  h = FXT_SET(h, FXT_UOBJ_THREAD, r->process.index);
  h = FXT_SET(h, FXT_UOBJ_NAME, ref_field(&r->name));
  put_word(e, FXT_SET(h, FXT_UOBJ_ARGS, r->num_args));
  put_word(e, r->pointer);
  if (r->process.index == 0) /* one word only: the process koid (§4.9) */
    put_word(e, r->process.process_koid);
  put_name_args(e, &r->name, r->args, r->num_args);
}

int64_t fxt_encode_userspace_object(void *out, size_t out_size,
                                    const struct fxt_userspace_object *rec) {
  int rc = rec ? check_name_args(&rec->name, rec->args, rec->num_args) : FXT_EINVAL;
  return rc ? rc : run(out, out_size, emit_userspace_object, rec, FXT_MAX_RECORD_BYTES);
}

static void emit_kernel_object(struct enc *e, const void *p, uint64_t words) {
  const struct fxt_kernel_object *r = (const struct fxt_kernel_object *)p;
  uint64_t h = record_header(FXT_RECORD_KERNEL_OBJECT, words);
  h = FXT_SET(h, FXT_KOBJ_TYPE, r->obj_type);
  h = FXT_SET(h, FXT_KOBJ_NAME, ref_field(&r->name));
  put_word(e, FXT_SET(h, FXT_KOBJ_ARGS, r->num_args));
  put_word(e, r->koid);
  put_name_args(e, &r->name, r->args, r->num_args);
}

int64_t fxt_encode_kernel_object(void *out, size_t out_size,
                                 const struct fxt_kernel_object *rec) {
  int rc = rec ? check_name_args(&rec->name, rec->args, rec->num_args) : FXT_EINVAL;
  return rc ? rc : run(out, out_size, emit_kernel_object, rec, FXT_MAX_RECORD_BYTES);
}

/* ---- scheduling (§7) ---------------------------------------------------------------------- */

static uint64_t sched_header(unsigned sched_type, uint64_t words) {
  return FXT_SET(record_header(FXT_RECORD_SCHEDULING, words), FXT_SCHED_TYPE, sched_type);
}

static void emit_context_switch(struct enc *e, const void *p, uint64_t words) {
  const struct fxt_context_switch *r = (const struct fxt_context_switch *)p;
  uint64_t h = sched_header(FXT_SCHED_CONTEXT_SWITCH, words);
  h = FXT_SET(h, FXT_CSWITCH_ARGS, r->num_args);
  h = FXT_SET(h, FXT_CSWITCH_CPU, r->cpu);
  put_word(e, FXT_SET(h, FXT_CSWITCH_OUT_STATE, r->outgoing_state));
  put_word(e, r->timestamp);
  put_word(e, r->outgoing_tid);
  put_word(e, r->incoming_tid);
  put_args(e, r->args, r->num_args);
}

int64_t fxt_encode_context_switch(void *out, size_t out_size,
                                  const struct fxt_context_switch *rec) {
  if (rec == NULL || rec->outgoing_state > FXT_LOW_MASK(FXT_CSWITCH_OUT_STATE_BITS))
    return FXT_EINVAL;
  int rc = check_args(rec->args, rec->num_args);
  return rc ? rc : run(out, out_size, emit_context_switch, rec, FXT_MAX_RECORD_BYTES);
}

static void emit_wakeup(struct enc *e, const void *p, uint64_t words) {
  const struct fxt_wakeup *r = (const struct fxt_wakeup *)p;
  uint64_t h = sched_header(FXT_SCHED_WAKEUP, words);
  h = FXT_SET(h, FXT_WAKEUP_ARGS, r->num_args);
  put_word(e, FXT_SET(h, FXT_WAKEUP_CPU, r->cpu));
  put_word(e, r->timestamp);
  put_word(e, r->waking_tid);
  put_args(e, r->args, r->num_args);
}

int64_t fxt_encode_wakeup(void *out, size_t out_size, const struct fxt_wakeup *rec) {
  if (rec == NULL)
    return FXT_EINVAL;
  int rc = check_args(rec->args, rec->num_args);
  return rc ? rc : run(out, out_size, emit_wakeup, rec, FXT_MAX_RECORD_BYTES);
}

static void emit_legacy_context_switch(struct enc *e, const void *p, uint64_t words) {
  const struct fxt_legacy_context_switch *r = (const struct fxt_legacy_context_switch *)p;
  uint64_t h = sched_header(FXT_SCHED_LEGACY_CONTEXT_SWITCH, words);
  h = FXT_SET(h, FXT_LEGACY_CPU, r->cpu);
  h = FXT_SET(h, FXT_LEGACY_OUT_STATE, r->outgoing_state);
  h = FXT_SET(h, FXT_LEGACY_OUT_THREAD, r->outgoing.index);
  h = FXT_SET(h, FXT_LEGACY_IN_THREAD, r->incoming.index);
  h = FXT_SET(h, FXT_LEGACY_OUT_PRIO, r->outgoing_priority);
  put_word(e, FXT_SET(h, FXT_LEGACY_IN_PRIO, r->incoming_priority));
  put_word(e, r->timestamp);
  put_thread_koids(e, &r->outgoing);
  put_thread_koids(e, &r->incoming);
}

int64_t fxt_encode_legacy_context_switch(void *out, size_t out_size,
                                         const struct fxt_legacy_context_switch *rec) {
  if (rec == NULL || rec->outgoing_state > FXT_LOW_MASK(FXT_LEGACY_OUT_STATE_BITS))
    return FXT_EINVAL;
  return run(out, out_size, emit_legacy_context_switch, rec, FXT_MAX_RECORD_BYTES);
}

/* ---- log (§4.12) -------------------------------------------------------------------------- */

static void emit_log(struct enc *e, const void *p, uint64_t words) {
  const struct fxt_log *r = (const struct fxt_log *)p;
  uint64_t h = record_header(FXT_RECORD_LOG, words);
  h = FXT_SET(h, FXT_LOG_MSG_LEN, r->len);
  put_word(e, FXT_SET(h, FXT_LOG_THREAD, r->thread.index));
  put_word(e, r->timestamp);
  put_thread_koids(e, &r->thread);
  put_stream(e, r->message, r->len);
}

int64_t fxt_encode_log(void *out, size_t out_size, const struct fxt_log *rec) {
  if (rec == NULL || rec->len > FXT_MAX_STRING_LEN || check_data(rec->message, rec->len))
    return FXT_EINVAL;
  return run(out, out_size, emit_log, rec, FXT_MAX_RECORD_BYTES);
}

/* ---- large blob (§4.11) ------------------------------------------------------------------- */

static uint64_t large_blob_header(unsigned format, uint64_t words) {
  uint64_t h = FXT_SET(0, FXT_HDR_TYPE, FXT_RECORD_LARGE);
  h = FXT_SET(h, FXT_LARGE_SIZE, words);
  h = FXT_SET(h, FXT_LARGE_TYPE, FXT_LARGE_BLOB);
  return FXT_SET(h, FXT_LARGE_BLOB_FORMAT, format);
}

static uint64_t lblob_names(const struct fxt_str_ref *category, const struct fxt_str_ref *name) {
  uint64_t w = FXT_SET(0, FXT_LBLOB_CATEGORY, ref_field(category));
  return FXT_SET(w, FXT_LBLOB_NAME, ref_field(name));
}

static void emit_large_blob_event(struct enc *e, const void *p, uint64_t words) {
  const struct fxt_large_blob_event *r = (const struct fxt_large_blob_event *)p;
  uint64_t f = lblob_names(&r->category, &r->name);
  f = FXT_SET(f, FXT_LBLOB_ARGS, r->num_args);
  f = FXT_SET(f, FXT_LBLOB_THREAD, r->thread.index);
  put_word(e, large_blob_header(FXT_LBLOB_FORMAT_EVENT, words));
  put_word(e, f);
  put_ref_stream(e, &r->category);
  put_ref_stream(e, &r->name);
  put_word(e, r->timestamp);
  put_thread_koids(e, &r->thread);
  put_args(e, r->args, r->num_args);
  put_word(e, r->size);
  put_stream(e, r->data, r->size);
}

/* The payload is checked against the record limit first so counting it cannot overflow. */
static int check_large_payload(const void *data, uint64_t size) {
  if (check_data(data, size))
    return FXT_EINVAL;
  return size > FXT_MAX_RECORD_BYTES ? FXT_E2BIG : 0;
}

int64_t fxt_encode_large_blob_event(void *out, size_t out_size,
                                    const struct fxt_large_blob_event *rec) {
  if (rec == NULL || check_data(rec->data, rec->size))
    return FXT_EINVAL;
  int rc = check_ref(&rec->category);
  if (rc == 0)
    rc = check_name_args(&rec->name, rec->args, rec->num_args);
  if (rc == 0)
    rc = check_large_payload(rec->data, rec->size);
  return rc ? rc : run(out, out_size, emit_large_blob_event, rec, FXT_MAX_RECORD_BYTES);
}

static void emit_large_blob_attachment(struct enc *e, const void *p, uint64_t words) {
  const struct fxt_large_blob_attachment *r = (const struct fxt_large_blob_attachment *)p;
  put_word(e, large_blob_header(FXT_LBLOB_FORMAT_ATTACHMENT, words));
  put_word(e, lblob_names(&r->category, &r->name));
  put_ref_stream(e, &r->category);
  put_ref_stream(e, &r->name);
  put_word(e, r->size);
  put_stream(e, r->data, r->size);
}

int64_t fxt_encode_large_blob_attachment(void *out, size_t out_size,
                                         const struct fxt_large_blob_attachment *rec) {
  if (rec == NULL || check_data(rec->data, rec->size))
    return FXT_EINVAL;
  int rc = check_ref(&rec->category);
  if (rc == 0)
    rc = check_ref(&rec->name);
  if (rc == 0)
    rc = check_large_payload(rec->data, rec->size);
  return rc ? rc : run(out, out_size, emit_large_blob_attachment, rec, FXT_MAX_RECORD_BYTES);
}

/* ---- by kind ---------------------------------------------------------------------------- */

int64_t fxt_encode_record(void *out, size_t out_size, const struct fxt_record *rec) {
  if (rec == NULL)
    return FXT_EINVAL;
  switch (rec->kind) {
  case FXT_KIND_MAGIC:
    return fxt_encode_magic(out, out_size);
  case FXT_KIND_PROVIDER_INFO:
    return fxt_encode_provider_info(out, out_size, &rec->u.provider_info);
  case FXT_KIND_PROVIDER_SECTION:
    return fxt_encode_provider_section(out, out_size, &rec->u.provider_section);
  case FXT_KIND_PROVIDER_EVENT:
    return fxt_encode_provider_event(out, out_size, &rec->u.provider_event);
  case FXT_KIND_INIT:
    return fxt_encode_init(out, out_size, &rec->u.init);
  case FXT_KIND_STRING:
    return fxt_encode_string(out, out_size, &rec->u.string);
  case FXT_KIND_THREAD:
    return fxt_encode_thread(out, out_size, &rec->u.thread);
  case FXT_KIND_EVENT:
    return fxt_encode_event(out, out_size, &rec->u.event);
  case FXT_KIND_BLOB:
    return fxt_encode_blob(out, out_size, &rec->u.blob);
  case FXT_KIND_USERSPACE_OBJECT:
    return fxt_encode_userspace_object(out, out_size, &rec->u.userspace_object);
  case FXT_KIND_KERNEL_OBJECT:
    return fxt_encode_kernel_object(out, out_size, &rec->u.kernel_object);
  case FXT_KIND_CONTEXT_SWITCH:
    return fxt_encode_context_switch(out, out_size, &rec->u.context_switch);
  case FXT_KIND_WAKEUP:
    return fxt_encode_wakeup(out, out_size, &rec->u.wakeup);
  case FXT_KIND_LEGACY_CONTEXT_SWITCH:
    return fxt_encode_legacy_context_switch(out, out_size, &rec->u.legacy_context_switch);
  case FXT_KIND_LOG:
    return fxt_encode_log(out, out_size, &rec->u.log);
  case FXT_KIND_LARGE_BLOB_EVENT:
    return fxt_encode_large_blob_event(out, out_size, &rec->u.large_blob_event);
  case FXT_KIND_LARGE_BLOB_ATTACHMENT:
    return fxt_encode_large_blob_attachment(out, out_size, &rec->u.large_blob_attachment);
  default:
    return FXT_EINVAL;
  }
}
