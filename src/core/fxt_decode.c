/* src/core/fxt_decode.c - strict streaming FXT decoder: record framing, one function per
 * record layout, string/thread table binding, and the public fxt_decoder_* API.
 *
 * Strictness is the Rust reader's plus what no reader checks (spec/fxt.md §10): a record's
 * declared size must be used exactly, every argument's too; reserved bits and padding must be
 * zero; refs must resolve. The first problem stops the decoder with "offset N: reason".
 */
#include "fxt_decode_int.h"

#include "fmt.h"
#include "mem.h"

_Static_assert(FXT_STRING_TABLE_SIZE >= 2 && FXT_STRING_TABLE_SIZE <= FXT_MAX_STRING_INDEX + 1,
               "FXT_STRING_TABLE_SIZE: 2 to 0x8000 entries");

#define HDR_USED (FXT_FMASK(FXT_HDR_TYPE) | FXT_FMASK(FXT_HDR_SIZE))
#define META_USED (HDR_USED | FXT_FMASK(FXT_METADATA_TYPE))
#define SCHED_USED (HDR_USED | FXT_FMASK(FXT_SCHED_TYPE))
#define LARGE_USED                                                                        \
  (FXT_FMASK(FXT_HDR_TYPE) | FXT_FMASK(FXT_LARGE_SIZE) | FXT_FMASK(FXT_LARGE_TYPE) |      \
   FXT_FMASK(FXT_LARGE_BLOB_FORMAT))

static uint64_t load_word(const unsigned char *p) {
  uint64_t w;
  memcpy(&w, p, sizeof w);
  return w;
}

/* A record type or subtype this decoder does not know: skipped whole (its size is all a
 * reader needs, §1) with FXT_DECODE_SKIP_UNKNOWN, an error otherwise. */
static int unknown(struct fxt_cur *c, const char *what, uint64_t value) {
  if (c->d->options & FXT_DECODE_SKIP_UNKNOWN) {
    c->rec->kind = FXT_KIND_UNKNOWN;
    c->rec->u.unknown.data = c->base;
    c->pos = c->end;
    return 0;
  }
  return fxt_dec_fail(c->d, FXT_ENOSYS, c->off, "unknown %s %u", what, NULL, value, 0, 0);
}

/* ---- metadata (§4.1-§4.4) ---------------------------------------------------------------- */

static int dec_provider_info(struct fxt_cur *c, uint64_t h) {
  struct fxt_provider_info *p = &c->rec->u.provider_info;
  uint64_t used = META_USED | FXT_FMASK(FXT_PROVIDER_INFO_ID) |
                  FXT_FMASK(FXT_PROVIDER_INFO_NAME_LEN);
  int rc = fxt_dec_reserved(c, h, used, c->off, "provider info header");
  if (rc)
    return rc;
  p->id = (uint32_t)FXT_GET(h, FXT_PROVIDER_INFO_ID);
  p->name_len = (uint8_t)FXT_GET(h, FXT_PROVIDER_INFO_NAME_LEN);
  c->rec->kind = FXT_KIND_PROVIDER_INFO;
  return fxt_dec_stream(c, p->name_len, "provider name", &p->name);
}

static int dec_provider_section(struct fxt_cur *c, uint64_t h) {
  c->rec->kind = FXT_KIND_PROVIDER_SECTION;
  c->rec->u.provider_section.id = (uint32_t)FXT_GET(h, FXT_PROVIDER_SECTION_ID);
  return fxt_dec_reserved(c, h, META_USED | FXT_FMASK(FXT_PROVIDER_SECTION_ID), c->off,
                          "provider section header");
}

static int dec_provider_event(struct fxt_cur *c, uint64_t h) {
  uint64_t used = META_USED | FXT_FMASK(FXT_PROVIDER_EVENT_PROVIDER_ID) |
                  FXT_FMASK(FXT_PROVIDER_EVENT_EVENT_ID);
  c->rec->kind = FXT_KIND_PROVIDER_EVENT;
  c->rec->u.provider_event.id = (uint32_t)FXT_GET(h, FXT_PROVIDER_EVENT_PROVIDER_ID);
  c->rec->u.provider_event.event_id = (uint8_t)FXT_GET(h, FXT_PROVIDER_EVENT_EVENT_ID);
  return fxt_dec_reserved(c, h, used, c->off, "provider event header");
}

/* The magic record is one fixed word (§4.4): it is deliberately not extensible. */
static int dec_trace_info(struct fxt_cur *c, uint64_t h) {
  uint64_t type = FXT_GET(h, FXT_TRACE_INFO_TYPE);
  if (type != FXT_TRACE_INFO_MAGIC)
    return unknown(c, "trace info type", type);
  uint64_t used = META_USED | FXT_FMASK(FXT_TRACE_INFO_TYPE) | FXT_FMASK(FXT_MAGIC);
  int rc = fxt_dec_reserved(c, h, used, c->off, "magic record");
  if (rc)
    return rc;
  if (FXT_GET(h, FXT_MAGIC) != FXT_MAGIC_VALUE32)
    return fxt_dec_fail(c->d, FXT_EBADMSG, c->off, "bad magic value %x (expected %x)", NULL,
                        NULL, FXT_GET(h, FXT_MAGIC), FXT_MAGIC_VALUE32, 0);
  if (c->end != 1)
    return fxt_dec_fail(c->d, FXT_EBADMSG, c->off, "magic record of %u words (must be 1)", NULL,
                        NULL, c->end, 0, 0);
  c->rec->kind = FXT_KIND_MAGIC;
  return 0;
}

static int dec_metadata(struct fxt_cur *c, uint64_t h) {
  uint64_t type = FXT_GET(h, FXT_METADATA_TYPE);
  switch (type) {
  case FXT_METADATA_PROVIDER_INFO:
    return dec_provider_info(c, h);
  case FXT_METADATA_PROVIDER_SECTION:
    return dec_provider_section(c, h);
  case FXT_METADATA_PROVIDER_EVENT:
    return dec_provider_event(c, h);
  case FXT_METADATA_TRACE_INFO:
    return dec_trace_info(c, h);
  default:
    return unknown(c, "metadata type", type);
  }
}

/* ---- initialization, string, thread (§4.5-§4.7) -------------------------------------------- */

static int dec_init(struct fxt_cur *c, uint64_t h) {
  c->rec->kind = FXT_KIND_INIT;
  int rc = fxt_dec_reserved(c, h, HDR_USED, c->off, "initialization record header");
  return rc ? rc : fxt_dec_word(c, "ticks per second", &c->rec->u.init.ticks_per_second);
}

static int dec_string(struct fxt_cur *c, uint64_t h) {
  struct fxt_string *s = &c->rec->u.string;
  uint64_t used = HDR_USED | FXT_FMASK(FXT_STRING_INDEX) | FXT_FMASK(FXT_STRING_LEN);
  int rc = fxt_dec_reserved(c, h, used, c->off, "string record header");
  if (rc)
    return rc;
  s->index = (uint16_t)FXT_GET(h, FXT_STRING_INDEX);
  s->len = (uint16_t)FXT_GET(h, FXT_STRING_LEN);
  c->rec->kind = FXT_KIND_STRING;
  /* Index 0 is the empty string's slot: readers ignore the record (§4.6); flagged, and
   * commit() does not bind it. */
  if (s->index == 0)
    c->rec->flags |= FXT_RECORD_WARN_STRING_INDEX0;
  if (FXT_STRING_TABLE_SIZE <= FXT_MAX_STRING_INDEX && s->index >= FXT_STRING_TABLE_SIZE)
    return fxt_dec_fail(c->d, FXT_ENOSPC, c->off,
                        "string index %u past this build's table of %u (FXT_STRING_TABLE_SIZE)",
                        NULL, NULL, s->index, FXT_STRING_TABLE_SIZE, 0);
  return fxt_dec_stream(c, s->len, "string text", &s->data);
}

static int dec_thread(struct fxt_cur *c, uint64_t h) {
  struct fxt_thread *t = &c->rec->u.thread;
  int rc = fxt_dec_reserved(c, h, HDR_USED | FXT_FMASK(FXT_THREAD_INDEX), c->off,
                            "thread record header");
  if (rc)
    return rc;
  t->index = (uint8_t)FXT_GET(h, FXT_THREAD_INDEX);
  /* [DOC] says ignore it; Fuchsia's Rust reader rejects it (InvalidRef). We reject. */
  if (t->index == 0)
    return fxt_dec_fail(c->d, FXT_EBADMSG, c->off, "thread record with index 0", NULL, NULL, 0,
                        0, 0);
  c->rec->kind = FXT_KIND_THREAD;
  rc = fxt_dec_word(c, "process koid", &t->process_koid);
  return rc ? rc : fxt_dec_word(c, "thread koid", &t->thread_koid);
}

/* ---- event (§8) ------------------------------------------------------------------------------ */

static int dec_event(struct fxt_cur *c, uint64_t h) {
  struct fxt_event *ev = &c->rec->u.event;
  uint64_t type = FXT_GET(h, FXT_EVENT_TYPE);
  if (type > FXT_EVENT_TYPE_LAST) /* its trailer is unknown, so its body cannot be read */
    return unknown(c, "event type", type);
  c->rec->kind = FXT_KIND_EVENT;
  ev->type = (uint32_t)type;
  ev->num_args = (uint32_t)FXT_GET(h, FXT_EVENT_ARGS);
  int rc = fxt_dec_thread_ref(c, FXT_GET(h, FXT_EVENT_THREAD), c->off, &ev->thread);
  if (rc == 0)
    rc = fxt_dec_ref(c, FXT_GET(h, FXT_EVENT_CATEGORY), c->off, &ev->category);
  if (rc == 0)
    rc = fxt_dec_ref(c, FXT_GET(h, FXT_EVENT_NAME), c->off, &ev->name);
  /* §8.2 body order: timestamp, koids, category, name, arguments, trailer. */
  if (rc == 0)
    rc = fxt_dec_word(c, "timestamp", &ev->timestamp);
  if (rc == 0)
    rc = fxt_dec_thread_koids(c, &ev->thread);
  if (rc == 0)
    rc = fxt_dec_ref_stream(c, &ev->category, "category");
  if (rc == 0)
    rc = fxt_dec_ref_stream(c, &ev->name, "event name");
  if (rc == 0)
    rc = fxt_dec_args(c, ev->num_args, ev->args);
  if (rc == 0 && fxt_event_has_trailer(type))
    rc = fxt_dec_word(c, "event trailer", &ev->trailer);
  return rc;
}

/* ---- blob, objects (§4.8-§4.10) ------------------------------------------------------------ */

static int dec_blob(struct fxt_cur *c, uint64_t h) {
  struct fxt_blob *b = &c->rec->u.blob;
  uint64_t used = HDR_USED | FXT_FMASK(FXT_BLOB_NAME) | FXT_FMASK(FXT_BLOB_SIZE) |
                  FXT_FMASK(FXT_BLOB_TYPE);
  int rc = fxt_dec_reserved(c, h, used, c->off, "blob record header");
  if (rc == 0)
    rc = fxt_dec_ref(c, FXT_GET(h, FXT_BLOB_NAME), c->off, &b->name);
  if (rc)
    return rc;
  c->rec->kind = FXT_KIND_BLOB;
  b->blob_type = (uint8_t)FXT_GET(h, FXT_BLOB_TYPE);
  b->size = (uint16_t)FXT_GET(h, FXT_BLOB_SIZE);
  const char *data = "";
  rc = fxt_dec_ref_stream(c, &b->name, "blob name");
  if (rc == 0)
    rc = fxt_dec_stream(c, b->size, "blob payload", &data);
  b->data = data;
  return rc;
}

static int dec_userspace_object(struct fxt_cur *c, uint64_t h) {
  struct fxt_userspace_object *o = &c->rec->u.userspace_object;
  uint64_t used = HDR_USED | FXT_FMASK(FXT_UOBJ_THREAD) | FXT_FMASK(FXT_UOBJ_NAME) |
                  FXT_FMASK(FXT_UOBJ_ARGS);
  int rc = fxt_dec_reserved(c, h, used, c->off, "userspace object header");
  if (rc == 0)
    rc = fxt_dec_thread_ref(c, FXT_GET(h, FXT_UOBJ_THREAD), c->off, &o->process);
  if (rc == 0)
    rc = fxt_dec_ref(c, FXT_GET(h, FXT_UOBJ_NAME), c->off, &o->name);
  if (rc)
    return rc;
  c->rec->kind = FXT_KIND_USERSPACE_OBJECT;
  o->num_args = (uint32_t)FXT_GET(h, FXT_UOBJ_ARGS);
  rc = fxt_dec_word(c, "pointer", &o->pointer);
  if (rc == 0 && o->process.index == 0) /* a single koid word (§4.9) */
    rc = fxt_dec_word(c, "process koid", &o->process.process_koid);
  if (rc == 0)
    rc = fxt_dec_ref_stream(c, &o->name, "object name");
  return rc ? rc : fxt_dec_args(c, o->num_args, o->args);
}

static int dec_kernel_object(struct fxt_cur *c, uint64_t h) {
  struct fxt_kernel_object *o = &c->rec->u.kernel_object;
  uint64_t used = HDR_USED | FXT_FMASK(FXT_KOBJ_TYPE) | FXT_FMASK(FXT_KOBJ_NAME) |
                  FXT_FMASK(FXT_KOBJ_ARGS);
  int rc = fxt_dec_reserved(c, h, used, c->off, "kernel object header");
  if (rc == 0)
    rc = fxt_dec_ref(c, FXT_GET(h, FXT_KOBJ_NAME), c->off, &o->name);
  if (rc)
    return rc;
  c->rec->kind = FXT_KIND_KERNEL_OBJECT;
  o->obj_type = (uint8_t)FXT_GET(h, FXT_KOBJ_TYPE);
  o->num_args = (uint32_t)FXT_GET(h, FXT_KOBJ_ARGS);
  rc = fxt_dec_word(c, "koid", &o->koid);
  if (rc == 0)
    rc = fxt_dec_ref_stream(c, &o->name, "object name");
  return rc ? rc : fxt_dec_args(c, o->num_args, o->args);
}

/* ---- scheduling (§7) ---------------------------------------------------------------------- */

static int dec_context_switch(struct fxt_cur *c, uint64_t h) {
  struct fxt_context_switch *s = &c->rec->u.context_switch;
  uint64_t used = SCHED_USED | FXT_FMASK(FXT_CSWITCH_ARGS) | FXT_FMASK(FXT_CSWITCH_CPU) |
                  FXT_FMASK(FXT_CSWITCH_OUT_STATE);
  int rc = fxt_dec_reserved(c, h, used, c->off, "context switch header");
  if (rc)
    return rc;
  c->rec->kind = FXT_KIND_CONTEXT_SWITCH;
  s->num_args = (uint32_t)FXT_GET(h, FXT_CSWITCH_ARGS);
  s->cpu = (uint16_t)FXT_GET(h, FXT_CSWITCH_CPU);
  s->outgoing_state = (uint8_t)FXT_GET(h, FXT_CSWITCH_OUT_STATE);
  rc = fxt_dec_word(c, "timestamp", &s->timestamp);
  if (rc == 0)
    rc = fxt_dec_word(c, "outgoing thread koid", &s->outgoing_tid);
  if (rc == 0)
    rc = fxt_dec_word(c, "incoming thread koid", &s->incoming_tid);
  return rc ? rc : fxt_dec_args(c, s->num_args, s->args);
}

static int dec_wakeup(struct fxt_cur *c, uint64_t h) {
  struct fxt_wakeup *s = &c->rec->u.wakeup;
  uint64_t used = SCHED_USED | FXT_FMASK(FXT_WAKEUP_ARGS) | FXT_FMASK(FXT_WAKEUP_CPU);
  int rc = fxt_dec_reserved(c, h, used, c->off, "thread wakeup header");
  if (rc)
    return rc;
  c->rec->kind = FXT_KIND_WAKEUP;
  s->num_args = (uint32_t)FXT_GET(h, FXT_WAKEUP_ARGS);
  s->cpu = (uint16_t)FXT_GET(h, FXT_WAKEUP_CPU);
  rc = fxt_dec_word(c, "timestamp", &s->timestamp);
  if (rc == 0)
    rc = fxt_dec_word(c, "waking thread koid", &s->waking_tid);
  return rc ? rc : fxt_dec_args(c, s->num_args, s->args);
}

/* Every bit of the legacy header is a field, so there is nothing reserved to check. */
static int dec_legacy_context_switch(struct fxt_cur *c, uint64_t h) {
  struct fxt_legacy_context_switch *s = &c->rec->u.legacy_context_switch;
  int rc = fxt_dec_thread_ref(c, FXT_GET(h, FXT_LEGACY_OUT_THREAD), c->off, &s->outgoing);
  if (rc == 0)
    rc = fxt_dec_thread_ref(c, FXT_GET(h, FXT_LEGACY_IN_THREAD), c->off, &s->incoming);
  if (rc)
    return rc;
  c->rec->kind = FXT_KIND_LEGACY_CONTEXT_SWITCH;
  s->cpu = (uint8_t)FXT_GET(h, FXT_LEGACY_CPU);
  s->outgoing_state = (uint8_t)FXT_GET(h, FXT_LEGACY_OUT_STATE);
  s->outgoing_priority = (uint8_t)FXT_GET(h, FXT_LEGACY_OUT_PRIO);
  s->incoming_priority = (uint8_t)FXT_GET(h, FXT_LEGACY_IN_PRIO);
  rc = fxt_dec_word(c, "timestamp", &s->timestamp);
  if (rc == 0)
    rc = fxt_dec_thread_koids(c, &s->outgoing);
  return rc ? rc : fxt_dec_thread_koids(c, &s->incoming);
}

static int dec_scheduling(struct fxt_cur *c, uint64_t h) {
  uint64_t type = FXT_GET(h, FXT_SCHED_TYPE);
  switch (type) {
  case FXT_SCHED_LEGACY_CONTEXT_SWITCH:
    return dec_legacy_context_switch(c, h);
  case FXT_SCHED_CONTEXT_SWITCH:
    return dec_context_switch(c, h);
  case FXT_SCHED_WAKEUP:
    return dec_wakeup(c, h);
  default:
    return unknown(c, "scheduling record type", type);
  }
}

/* ---- log (§4.12) -------------------------------------------------------------------------- */

static int dec_log(struct fxt_cur *c, uint64_t h) {
  struct fxt_log *l = &c->rec->u.log;
  uint64_t used = HDR_USED | FXT_FMASK(FXT_LOG_MSG_LEN) | FXT_FMASK(FXT_LOG_THREAD);
  int rc = fxt_dec_reserved(c, h, used, c->off, "log record header");
  if (rc == 0)
    rc = fxt_dec_thread_ref(c, FXT_GET(h, FXT_LOG_THREAD), c->off, &l->thread);
  if (rc)
    return rc;
  c->rec->kind = FXT_KIND_LOG;
  l->len = (uint16_t)FXT_GET(h, FXT_LOG_MSG_LEN);
  rc = fxt_dec_word(c, "timestamp", &l->timestamp);
  if (rc == 0)
    rc = fxt_dec_thread_koids(c, &l->thread);
  return rc ? rc : fxt_dec_stream(c, l->len, "log message", &l->message);
}

/* ---- large blob (§4.11) ------------------------------------------------------------------- */

/* Payload: size word, then the stream. The size is 64-bit and untrusted; fxt_dec_stream
 * compares its word count with what is left without forming size + 7. */
static int dec_lblob_payload(struct fxt_cur *c, uint64_t *size, const void **data) {
  const char *p = "";
  int rc = fxt_dec_word(c, "blob size", size);
  if (rc == 0)
    rc = fxt_dec_stream(c, *size, "blob payload", &p);
  *data = p;
  return rc;
}

static int dec_lblob_event(struct fxt_cur *c) {
  struct fxt_large_blob_event *b = &c->rec->u.large_blob_event;
  uint64_t at = fxt_cur_at(c, c->pos);
  uint64_t f;
  int rc = fxt_dec_word(c, "large blob format header", &f);
  uint64_t used = FXT_FMASK(FXT_LBLOB_CATEGORY) | FXT_FMASK(FXT_LBLOB_NAME) |
                  FXT_FMASK(FXT_LBLOB_ARGS) | FXT_FMASK(FXT_LBLOB_THREAD);
  if (rc == 0)
    rc = fxt_dec_reserved(c, f, used, at, "large blob format header");
  if (rc == 0)
    rc = fxt_dec_ref(c, FXT_GET(f, FXT_LBLOB_CATEGORY), at, &b->category);
  if (rc == 0)
    rc = fxt_dec_ref(c, FXT_GET(f, FXT_LBLOB_NAME), at, &b->name);
  if (rc == 0)
    rc = fxt_dec_thread_ref(c, FXT_GET(f, FXT_LBLOB_THREAD), at, &b->thread);
  if (rc)
    return rc;
  c->rec->kind = FXT_KIND_LARGE_BLOB_EVENT;
  b->num_args = (uint32_t)FXT_GET(f, FXT_LBLOB_ARGS);
  rc = fxt_dec_ref_stream(c, &b->category, "category");
  if (rc == 0)
    rc = fxt_dec_ref_stream(c, &b->name, "blob name");
  if (rc == 0)
    rc = fxt_dec_word(c, "timestamp", &b->timestamp);
  if (rc == 0)
    rc = fxt_dec_thread_koids(c, &b->thread);
  if (rc == 0)
    rc = fxt_dec_args(c, b->num_args, b->args);
  return rc ? rc : dec_lblob_payload(c, &b->size, &b->data);
}

static int dec_lblob_attachment(struct fxt_cur *c) {
  struct fxt_large_blob_attachment *b = &c->rec->u.large_blob_attachment;
  uint64_t at = fxt_cur_at(c, c->pos);
  uint64_t f;
  int rc = fxt_dec_word(c, "large blob format header", &f);
  uint64_t used = FXT_FMASK(FXT_LBLOB_CATEGORY) | FXT_FMASK(FXT_LBLOB_NAME);
  if (rc == 0)
    rc = fxt_dec_reserved(c, f, used, at, "large blob format header");
  if (rc == 0)
    rc = fxt_dec_ref(c, FXT_GET(f, FXT_LBLOB_CATEGORY), at, &b->category);
  if (rc == 0)
    rc = fxt_dec_ref(c, FXT_GET(f, FXT_LBLOB_NAME), at, &b->name);
  if (rc)
    return rc;
  c->rec->kind = FXT_KIND_LARGE_BLOB_ATTACHMENT;
  rc = fxt_dec_ref_stream(c, &b->category, "category");
  if (rc == 0)
    rc = fxt_dec_ref_stream(c, &b->name, "blob name");
  return rc ? rc : dec_lblob_payload(c, &b->size, &b->data);
}

static int dec_large(struct fxt_cur *c, uint64_t h) {
  uint64_t type = FXT_GET(h, FXT_LARGE_TYPE);
  if (type != FXT_LARGE_BLOB)
    return unknown(c, "large record type", type);
  uint64_t format = FXT_GET(h, FXT_LARGE_BLOB_FORMAT);
  if (format != FXT_LBLOB_FORMAT_EVENT && format != FXT_LBLOB_FORMAT_ATTACHMENT)
    return unknown(c, "large blob format", format);
  int rc = fxt_dec_reserved(c, h, LARGE_USED, c->off, "large blob header");
  if (rc)
    return rc;
  /* Perfetto and Fuchsia's Rust reader take the size from [4..15] only (§4.11). */
  if (c->end > FXT_MAX_RECORD_WORDS)
    c->rec->flags |= FXT_RECORD_WARN_OVERSIZE;
  return format == FXT_LBLOB_FORMAT_EVENT ? dec_lblob_event(c) : dec_lblob_attachment(c);
}

/* ---- framing ------------------------------------------------------------------------------- */

static int dec_body(struct fxt_cur *c, unsigned type, uint64_t h) {
  switch (type) {
  case FXT_RECORD_METADATA:
    return dec_metadata(c, h);
  case FXT_RECORD_INIT:
    return dec_init(c, h);
  case FXT_RECORD_STRING:
    return dec_string(c, h);
  case FXT_RECORD_THREAD:
    return dec_thread(c, h);
  case FXT_RECORD_EVENT:
    return dec_event(c, h);
  case FXT_RECORD_BLOB:
    return dec_blob(c, h);
  case FXT_RECORD_USERSPACE_OBJECT:
    return dec_userspace_object(c, h);
  case FXT_RECORD_KERNEL_OBJECT:
    return dec_kernel_object(c, h);
  case FXT_RECORD_SCHEDULING:
    return dec_scheduling(c, h);
  case FXT_RECORD_LOG:
    return dec_log(c, h);
  case FXT_RECORD_LARGE:
    return dec_large(c, h);
  default: /* 10..14 */
    return unknown(c, "record type", type);
  }
}

/* ---- providers' tables (§4.3) ------------------------------------------------------------- */

/* Makes provs[i] current. */
static void use_provider(struct fxt_decoder *d, uint32_t i) {
  struct fxt_decoder_provider *p = &d->provs[i];
  p->last_used = ++d->switches;
  d->cur = i;
  d->strings = p->strings;
  d->threads = p->threads;
  d->gen = p->gen;
  d->provider_id = p->id;
}

/* Empties provs[i]'s tables, in O(1): slots are bound only while their generation equals the
 * provider's. On the (theoretical) wrap every slot is cleared for real. */
static void new_tables(struct fxt_decoder *d, uint32_t i) {
  struct fxt_decoder_provider *p = &d->provs[i];
  if (++p->gen == 0) {
    memset(p->strings, 0, FXT_STRING_TABLE_SIZE * sizeof p->strings[0]);
    memset(p->threads, 0, (FXT_MAX_THREAD_INDEX + 1) * sizeof p->threads[0]);
    p->gen = 1;
  }
}

static int32_t find_provider(const struct fxt_decoder *d, uint32_t id) {
  for (uint32_t i = 0; i < d->nprovs; i++)
    if (d->provs[i].id == id)
      return (int32_t)i;
  return -1;
}

/* An entry for provider id with empty tables: the implicit provider's while nothing was
 * bound in it, else new storage (fxt_decoder_add_tables), else the one made current the
 * longest ago. */
static uint32_t fresh_provider(struct fxt_decoder *d, uint32_t id) {
  uint32_t i = 0;
  struct fxt_provider_tables *t = NULL;
  if (!d->named && d->strings_bound == 0 && d->threads_bound == 0) {
    i = d->cur;
  } else if (d->nprovs < FXT_DECODER_MAX_PROVIDERS && d->get_tables != NULL &&
             (t = d->get_tables(d->tables_ctx)) != NULL) {
    i = d->nprovs++; /* all zero: nothing bound, generation 0 */
    d->provs[i].strings = t->strings;
    d->provs[i].threads = t->threads;
  } else {
    for (uint32_t k = 1; k < d->nprovs; k++)
      if (d->provs[k].last_used < d->provs[i].last_used)
        i = k;
  }
  new_tables(d, i);
  d->provs[i].id = id;
  return i;
}

/* Effects of a fully validated record on the decoder's tables. */
static void commit(struct fxt_decoder *d, const struct fxt_record *rec) {
  if (rec->kind == FXT_KIND_STRING && rec->u.string.index != 0) {
    struct fxt_str_slot *s = &d->strings[rec->u.string.index];
    s->data = rec->u.string.data;
    s->len = rec->u.string.len;
    s->gen = d->gen;
    d->strings_bound++;
  } else if (rec->kind == FXT_KIND_THREAD) {
    struct fxt_thread_slot *t = &d->threads[rec->u.thread.index];
    t->process_koid = rec->u.thread.process_koid;
    t->thread_koid = rec->u.thread.thread_koid;
    t->gen = d->gen;
    d->threads_bound++;
  } else if (rec->kind == FXT_KIND_PROVIDER_INFO) {
    /* A provider info record registers the provider afresh (as Perfetto does). */
    int32_t i = find_provider(d, rec->u.provider_info.id);
    if (i >= 0)
      new_tables(d, (uint32_t)i);
    use_provider(d, i >= 0 ? (uint32_t)i : fresh_provider(d, rec->u.provider_info.id));
    d->named = 1;
  } else if (rec->kind == FXT_KIND_PROVIDER_SECTION) {
    /* Switches to the provider's tables as they were (Perfetto keeps them per provider). */
    int32_t i = find_provider(d, rec->u.provider_section.id);
    use_provider(d, i >= 0 ? (uint32_t)i : fresh_provider(d, rec->u.provider_section.id));
    d->named = 1;
  }
}

static int check_magic_first(struct fxt_decoder *d) {
  uint64_t left = d->len - d->pos;
  if (d->pos != 0 || (d->options & FXT_DECODE_NO_MAGIC))
    return 0;
  if (left < FXT_WORD_BYTES)
    return fxt_dec_fail(d, FXT_EBADMSG, 0, "missing magic record: input is %u bytes", NULL, NULL,
                        left, 0, 0);
  uint64_t w = load_word(d->buf);
  if (w != FXT_MAGIC_WORD)
    return fxt_dec_fail(d, FXT_EBADMSG, 0, "missing magic record: first word is %x", NULL, NULL,
                        w, 0, 0);
  return 0;
}

static int next_record(struct fxt_decoder *d, struct fxt_record *rec) {
  int rc = check_magic_first(d);
  if (rc)
    return rc;
  uint64_t left = d->len - d->pos;
  if (left == 0)
    return 0;
  if (left < FXT_WORD_BYTES)
    return fxt_dec_fail(d, FXT_EBADMSG, d->pos, "truncated record header: %u bytes left", NULL,
                        NULL, left, 0, 0);
  uint64_t h = load_word(d->buf + d->pos);
  unsigned type = (unsigned)FXT_GET(h, FXT_HDR_TYPE);
  uint64_t words = fxt_w_record_words(h);
  if (words == 0)
    return fxt_dec_fail(d, FXT_EBADMSG, d->pos, "record size 0 (type %u)", NULL, NULL, type, 0, 0);
  if (words > (left >> 3))
    return fxt_dec_fail(d, FXT_EBADMSG, d->pos,
                        "truncated record: size %u words (%u bytes), %u bytes left", NULL, NULL,
                        words, words << 3, left);
  struct fxt_cur c = {d, rec, d->buf + d->pos, d->pos, 1, words, 0, "record"};
  rc = dec_body(&c, type, h);
  if (rc)
    return rc;
  if (c.pos != c.end)
    return fxt_dec_fail(d, FXT_EBADMSG, d->pos,
                        "record declares %u words but its fields end after %u", NULL, NULL, words,
                        c.pos, 0);
  rec->offset = d->pos;
  rec->size = words << 3;
  commit(d, rec);
  d->pos += words << 3;
  d->records++;
  if (rec->flags)
    d->warnings++;
  return 1;
}

/* ---- public API ---------------------------------------------------------------------------- */

int fxt_decoder_init(struct fxt_decoder *d, const void *buf, size_t len,
                     struct fxt_str_slot *string_table) {
  if (d == NULL || string_table == NULL || (buf == NULL && len > 0))
    return FXT_EINVAL;
  memset(d, 0, sizeof *d);
  memset(string_table, 0, FXT_STRING_TABLE_SIZE * sizeof string_table[0]);
  d->buf = (const unsigned char *)buf;
  d->len = len;
  d->nprovs = 1; /* the implicit provider 0, until a provider record (as Perfetto has) */
  d->provs[0].strings = string_table;
  d->provs[0].threads = d->first_threads;
  d->provs[0].gen = 1; /* slots start at generation 0: unbound */
  use_provider(d, 0);
  return 0;
}

int fxt_decoder_add_tables(struct fxt_decoder *d, fxt_decoder_tables_fn get, void *ctx) {
  if (d == NULL || get == NULL || d->pos != 0 || d->error != 0)
    return FXT_EINVAL;
  d->get_tables = get;
  d->tables_ctx = ctx;
  return 0;
}

int fxt_decoder_set_options(struct fxt_decoder *d, uint32_t options) {
  if (d == NULL || (options & ~(FXT_DECODE_NO_MAGIC | FXT_DECODE_SKIP_UNKNOWN)) != 0)
    return FXT_EINVAL;
  if (d->pos != 0 || d->error != 0) /* options govern the whole input */
    return FXT_EINVAL;
  d->options = options;
  return 0;
}

int fxt_decoder_next(struct fxt_decoder *d, struct fxt_record *rec, char *err, size_t err_size) {
  struct fxt_fmt f;
  fxt_fmt_init(&f, err, err_size);
  if (d == NULL || rec == NULL) {
    fxt_fmt_str(&f, "invalid argument");
    return FXT_EINVAL;
  }
  memset(rec, 0, sizeof *rec);
  if (d->error == 0) {
    int rc = next_record(d, rec);
    if (rc >= 0)
      return rc;
  }
  fxt_fmt_str(&f, d->msg);
  return d->error;
}

int fxt_decoder_string(const struct fxt_decoder *d, uint32_t index, const char **data,
                       size_t *len) {
  if (d == NULL || data == NULL || len == NULL || index > FXT_MAX_STRING_INDEX)
    return FXT_EINVAL;
  if (index == 0) {
    *data = "";
    *len = 0;
    return 0;
  }
  if (FXT_STRING_TABLE_SIZE <= FXT_MAX_STRING_INDEX && index >= FXT_STRING_TABLE_SIZE)
    return FXT_ENOENT; /* never bound in a build with a smaller table */
  const struct fxt_str_slot *s = &d->strings[index];
  if (s->gen != d->gen)
    return FXT_ENOENT;
  *data = s->data;
  *len = s->len;
  return 0;
}

int fxt_decoder_thread(const struct fxt_decoder *d, uint32_t index, uint64_t *process_koid,
                       uint64_t *thread_koid) {
  if (d == NULL || process_koid == NULL || thread_koid == NULL || index == 0 ||
      index > FXT_MAX_THREAD_INDEX)
    return FXT_EINVAL;
  const struct fxt_thread_slot *t = &d->threads[index];
  if (t->gen != d->gen)
    return FXT_ENOENT;
  *process_koid = t->process_koid;
  *thread_koid = t->thread_koid;
  return 0;
}

void fxt_decoder_stats(const struct fxt_decoder *d, struct fxt_decoder_stats *st) {
  st->records = d->records;
  st->bytes = d->pos;
  st->warnings = d->warnings;
  st->strings_bound = d->strings_bound;
  st->threads_bound = d->threads_bound;
}
