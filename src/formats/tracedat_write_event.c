/* src/formats/tracedat_write_event.c - formats and records of fxtrace events in trace.dat (see
 * tracedat_write_event.h).
 */
#include "tracedat_write_event_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fxtrace/tracepoint.h>

#include "../base/ftrace_format.h"
#include "../base/grow.h"

/* ---- small helpers ---------------------------------------------------------------------- */

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * UINT64_C(0x100000001b3);
  return h;
}

static uint64_t fnv_text(uint64_t h, struct fxtf_text t) {
  h = fnv(h, &t.len, sizeof t.len); /* so that "ab"+"c" differs from "a"+"bc" */
  return fnv(h, t.data, t.len);
}

static bool text_eq(struct fxtf_text a, struct fxtf_text b) {
  return a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0);
}

static void put_le(unsigned char *p, uint64_t v, uint32_t bytes) {
  for (uint32_t i = 0; i < bytes; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

/* ---- types ---------------------------------------------------------------------------------- */

static bool is_hex_of(const struct fxt_str_ref *s, uint32_t bytes) {
  if (s->len != 2u * bytes)
    return false;
  for (uint32_t i = 0; i < s->len; i++)
    if (!((s->data[i] >= '0' && s->data[i] <= '9') || (s->data[i] >= 'a' && s->data[i] <= 'f')))
      return false;
  return true;
}

/* The type a typed field's value is stored as: the declared one when the argument is what the
 * declaration records and its value fits, else the argument's own. */
static uint8_t resolve(const struct fxtf_field *f, const struct fxt_arg *a) {
  if (!fxt_ff_arg_fits(f->type, a->type))
    return fxt_ff_type_of_arg(a->type);
  switch (f->type) {
  case FXT_TYPE_U8: return a->value.u32 <= 0xff ? f->type : FXT_TYPE_U32;
  case FXT_TYPE_U16: return a->value.u32 <= 0xffff ? f->type : FXT_TYPE_U32;
  case FXT_TYPE_S8: return a->value.i32 >= -128 && a->value.i32 <= 127 ? f->type : FXT_TYPE_S32;
  case FXT_TYPE_S16:
    return a->value.i32 >= -32768 && a->value.i32 <= 32767 ? f->type : FXT_TYPE_S32;
  case FXT_TYPE_BYTES: return is_hex_of(&a->value.str, f->bound) ? f->type : FXT_TYPE_STR;
  default: return f->type;
  }
}

/* ---- keys and the table ------------------------------------------------------------------ */

static bool is_printk(const struct fxt_event *ev, const struct fxtf_desc *desc) {
  return (desc != NULL && desc->kind == FXT_TP_PRINTK) || fxtf_str_is(&ev->category, "printk");
}

void fxt_td_ev_key_of(struct fxt_td_ev_key *k, const struct fxt_event *ev,
                      const struct fxtf_desc *desc, uint32_t cls) {
  memset(k, 0, sizeof *k);
  k->ev_type = (uint8_t)ev->type;
  k->nargs = (uint8_t)ev->num_args;
  k->args = ev->args;
  k->system = fxtf_text_of(&ev->category);
  k->name = fxtf_text_of(&ev->name);
  if (is_printk(ev, desc))
    k->kind = FXT_TD_EV_PRINTK;
  else if (desc != NULL && desc->kind == FXT_TP_TYPED && ev->type == FXT_EVENT_INSTANT)
    k->kind = FXT_TD_EV_TYPED;
  else
    k->kind = FXT_TD_EV_ADHOC;
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  h = fnv(h, &k->kind, 1);
  h = fnv(h, &k->ev_type, 1);
  h = fnv(h, &k->nargs, 1);
  if (k->kind == FXT_TD_EV_TYPED) {
    k->desc = desc;
    k->cls = cls;
    for (uint32_t i = 0; i < k->nargs; i++)
      k->types[i] = i < desc->nfields ? resolve(&desc->fields[i], &ev->args[i])
                                      : fxt_ff_type_of_arg(ev->args[i].type);
    h = fnv(h, &cls, sizeof cls);
  } else {
    for (uint32_t i = 0; i < k->nargs; i++) {
      k->types[i] = (uint8_t)ev->args[i].type;
      h = fnv_text(h, fxtf_text_of(&ev->args[i].name));
    }
    h = fnv_text(fnv_text(h, k->system), k->name);
  }
  k->hash = fnv(h, k->types, k->nargs);
}

static bool key_eq(const struct fxt_td_ev_variant *v, const struct fxt_td_ev_key *k) {
  if (v->hash != k->hash || v->kind != k->kind || v->ev_type != k->ev_type ||
      v->nargs != k->nargs || memcmp(v->types, k->types, k->nargs) != 0)
    return false;
  if (k->kind == FXT_TD_EV_TYPED)
    return v->cls == k->cls;
  for (uint32_t i = 0; i < k->nargs; i++)
    if (!text_eq(v->arg_names[i], fxtf_text_of(&k->args[i].name)))
      return false;
  return text_eq(v->system, k->system) && text_eq(v->name, k->name);
}

/* The highest event ID written: KernelShark keeps an event's ID in an int16_t (kshark_entry's
 * event_id) and takes negative IDs for its own entries, so an ID above 32767 shows there as a
 * row with no event name and no info (trace-cmd itself reads all 16 bits). */
#define TDEV_ID_MAX 32767u

void fxt_td_ev_table_init(struct fxt_td_ev_table *t) {
  memset(t, 0, sizeof *t);
  t->top = TDEV_ID_MAX;
}

static void variant_free(struct fxt_td_ev_variant *v) {
  if (v != NULL)
    FXT_FREE_ALL(v->sys_name, v->ev_name, v->fmt, v->fields, v->print, v);
}

void fxt_td_ev_table_free(struct fxt_td_ev_table *t) {
  for (uint32_t i = 0; i < t->n; i++)
    variant_free(t->v[i]);
  free(t->v);
  fxt_jmap_free(&t->map);
  memset(t, 0, sizeof *t);
}

/* ---- names ---------------------------------------------------------------------------------- */

/* An identifier from text: [A-Za-z0-9_] kept, other bytes '_', '_' first for a digit first;
 * at most cap - 1 bytes (cap >= 3). */
static void ident(char *dst, size_t cap, const char *src, size_t n) {
  size_t k = 0;
  if (n > 0 && src[0] >= '0' && src[0] <= '9')
    dst[k++] = '_';
  for (size_t i = 0; i < n && k + 1 < cap; i++) {
    char c = src[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    dst[k++] = ok ? c : '_';
  }
  if (k == 0)
    dst[k++] = '_';
  dst[k] = '\0';
}

static char *ident_dup(struct fxtf_text t) {
  char *s = malloc((size_t)t.len + 3);
  if (s != NULL)
    ident(s, (size_t)t.len + 3, t.data, t.len);
  return s;
}

static bool name_taken(const struct fxt_td_ev_field *f, uint32_t n, const char *name) {
  static const char *const common[] = {"common_type", "common_flags", "common_preempt_count",
                                       "common_pid"};
  for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
    if (strcmp(name, common[i]) == 0)
      return true;
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(f[i].name, name) == 0)
      return true;
  return false;
}

/* Names field n from text (made an identifier, then _2, _3... while taken). */
static void name_field(struct fxt_td_ev_field *f, uint32_t n, const char *text, size_t len,
                       const char *suffix) {
  char base[FXT_TD_EV_NAME_MAX];
  size_t sl = strlen(suffix);
  ident(base, sizeof base - sl - 12, text, len); /* room for the suffix and "_NNN" */
  memcpy(base + strlen(base), suffix, sl + 1);
  memcpy(f[n].name, base, strlen(base) + 1);
  for (unsigned i = 2; name_taken(f, n, f[n].name); i++) {
    char num[12];
    int k = snprintf(num, sizeof num, "_%u", i);
    size_t bl = strlen(base);
    memcpy(f[n].name, base, bl);
    memcpy(f[n].name + bl, num, (size_t)k + 1);
  }
}

/* ---- building a variant: fields and slots ------------------------------------------------ */

struct fxt_td_ev_field *fxt_td_ev_add_field(struct build *b, uint8_t type, uint8_t src,
                                            uint32_t arg, const char *name, size_t name_len,
                                            const char *suffix) {
  uint32_t n = b->nf < FXT_TD_EV_MAX_FIELDS ? b->nf : FXT_TD_EV_MAX_FIELDS;
  struct fxt_td_ev_field *f = &b->f[n];
  memset(f, 0, sizeof *f);
  f->type = type;
  f->src = src;
  f->arg = (uint8_t)arg;
  name_field(b->f, n, name, name_len, suffix);
  if (b->nf < FXT_TD_EV_MAX_FIELDS)
    b->nf++;
  else
    b->overflow = true;
  return f;
}

void fxt_td_ev_add_slot(struct build *b, uint8_t kind, uint32_t arg, uint32_t arg_type, int field) {
  struct fxt_td_ev_slot *s = &b->v->slots[b->v->nslots++];
  s->kind = kind;
  s->arg = (uint8_t)arg;
  s->arg_type = (uint8_t)arg_type;
  s->field = (int8_t)field;
}

/* Fields and slots of the arguments: typed ones named by their description, others by
 * themselves. Typed and printk formats are rendered over the arguments as they are, so each
 * argument is a slot; an ad hoc format has no conversion for a null argument. */
static void arg_fields(struct build *b, const struct fxt_td_ev_key *k) {
  for (uint32_t i = 0; i < k->nargs; i++) {
    const struct fxt_arg *a = &k->args[i];
    uint8_t type = k->kind == FXT_TD_EV_TYPED ? k->types[i] : fxt_ff_type_of_arg(a->type);
    if (type == 0) { /* null, blob: nothing to store (a blob's text is rendered) */
      if (a->type == FXT_ARG_BLOB || k->kind != FXT_TD_EV_ADHOC)
        fxt_td_ev_add_slot(b, FXT_TD_EV_SLOT_ARG, i, a->type, -1);
      continue;
    }
    struct fxtf_text name = fxtf_text_of(&a->name);
    char argn[16];
    if (k->kind == FXT_TD_EV_TYPED && i < k->desc->nfields) {
      name = k->desc->fields[i].name;
    } else if (k->kind == FXT_TD_EV_TYPED) {
      snprintf(argn, sizeof argn, "arg%u", i);
      name = (struct fxtf_text){argn, (uint32_t)strlen(argn)};
    }
    uint8_t src = type == FXT_TYPE_BYTES ? FXT_TD_EV_SRC_HEX : FXT_TD_EV_SRC_ARG;
    struct fxt_td_ev_field *f = fxt_td_ev_add_field(b, type, src, i, name.data, name.len, "");
    if (type == FXT_TYPE_BYTES)
      f->bound = k->desc->fields[i].bound;
    fxt_td_ev_add_slot(b, FXT_TD_EV_SLOT_ARG, i, a->type, (int)b->nf - 1);
  }
}

/* ---- variants ------------------------------------------------------------------------------ */

/* v->fmt: the format text.c renders the event with. */
static void variant_fmt(struct build *b, const struct fxt_td_ev_key *k, struct fxt_tbuf *fmt) {
  if (k->kind == FXT_TD_EV_TYPED) {
    fxt_tbuf_put(fmt, k->desc->fmt.data, k->desc->fmt.len);
  } else if (k->kind == FXT_TD_EV_PRINTK) { /* the line's own newline ends it (text.c) */
    uint32_t n = k->name.len;
    fxt_tbuf_put(fmt, k->name.data, n && k->name.data[n - 1] == '\n' ? n - 1 : n);
  } else {
    fxt_td_ev_adhoc_format(b, k, fmt);
    return;
  }
}

/* Fields, slots, print format and layout of a new variant. */
static int build_variant(struct build *b, const struct fxt_td_ev_key *k) {
  struct fxt_td_ev_variant *v = b->v;
  struct fxt_tbuf fmt;
  fxt_tbuf_init(&fmt);
  fxt_tbuf_init(&b->print);
  fxt_tbuf_init(&b->args);
  variant_fmt(b, k, &fmt);
  arg_fields(b, k);
  v->fmt = fmt.data;
  v->fmt_len = (uint32_t)fmt.len;
  uint32_t nstored = b->nf;
  fxt_tbuf_put(&b->print, "\"", 1);
  fxt_td_ev_translate(b, k);
  if (b->overflow) { /* pathological formats: all of it rendered, in one field */
    b->nf = nstored;
    b->overflow = false;
    b->print.len = 1;
    b->args.len = 0;
    b->slot = 0;
    fxt_td_ev_render(b, 0, v->nslots, true);
    fxt_td_ev_flush_group(b, v->fmt_len);
  }
  fxt_tbuf_put(&b->print, "\"", 1);
  fxt_tbuf_put(&b->print, b->args.data, b->args.len);
  fxt_tbuf_put(&b->print, "", 0);
  const char *print = fxt_tbuf_str(&b->print);
  bool oom = fmt.oom || b->print.oom || b->args.oom;
  fxt_tbuf_free(&b->args);
  v->print = oom ? NULL : (char *)print;
  if (oom)
    fxt_tbuf_free(&b->print);
  v->fields = malloc((b->nf ? b->nf : 1) * sizeof *v->fields);
  if (oom || v->fields == NULL)
    return FXT_ENOMEM;
  struct fxt_ff_field ff[FXT_TD_EV_MAX_FIELDS];
  uint32_t off[FXT_TD_EV_MAX_FIELDS];
  for (uint32_t i = 0; i < b->nf; i++)
    ff[i] = (struct fxt_ff_field){b->f[i].name, strlen(b->f[i].name), b->f[i].type, b->f[i].bound};
  v->fixed = fxt_ff_layout(ff, b->nf, off);
  for (uint32_t i = 0; i < b->nf; i++) {
    b->f[i].offset = off[i];
    v->fields[i] = b->f[i];
  }
  v->nfields = (uint8_t)b->nf;
  return 0;
}

int fxt_td_ev_take_id(struct fxt_td_ev_table *t, uint32_t want, uint16_t *id) {
  if (want == 0 || want > TDEV_ID_MAX || (t->used[want / 8] & (1u << (want % 8)))) {
    while (t->top > 0 && (t->used[t->top / 8] & (1u << (t->top % 8))))
      t->top--;
    if (t->top == 0)
      return FXT_E2BIG;
    want = t->top;
  }
  t->used[want / 8] |= (uint8_t)(1u << (want % 8));
  *id = (uint16_t)want;
  return 0;
}

/* The ID of a new variant: its tracepoint's when free, else the highest free one. */
static int take_id(struct fxt_td_ev_table *t, const struct fxt_td_ev_key *k, uint16_t *id) {
  return fxt_td_ev_take_id(t, k->kind == FXT_TD_EV_TYPED ? k->desc->id : 0, id);
}

static struct fxt_td_ev_variant *new_variant(struct fxt_td_ev_table *t,
                                             const struct fxt_td_ev_key *k, int *rc) {
  struct fxt_td_ev_variant *v = calloc(1, sizeof *v);
  struct build *b = calloc(1, sizeof *b);
  *rc = v && b ? 0 : FXT_ENOMEM;
  if (*rc == 0) {
    v->hash = k->hash;
    v->kind = k->kind;
    v->ev_type = k->ev_type;
    v->cls = k->cls;
    v->system = k->kind == FXT_TD_EV_TYPED ? k->desc->system : k->system;
    v->name = k->kind == FXT_TD_EV_TYPED ? k->desc->name : k->name;
    v->nargs = k->nargs;
    memcpy(v->types, k->types, k->nargs);
    for (uint32_t i = 0; i < k->nargs; i++)
      v->arg_names[i] = fxtf_text_of(&k->args[i].name);
    v->sys_name = ident_dup(v->system);
    v->ev_name = k->kind == FXT_TD_EV_PRINTK ? ident_dup((struct fxtf_text){"printk", 6})
                                            : ident_dup(v->name);
    b->v = v;
    *rc = v->sys_name && v->ev_name ? build_variant(b, k) : FXT_ENOMEM;
  }
  if (*rc == 0)
    *rc = take_id(t, k, &v->id);
  free(b);
  if (*rc != 0) {
    variant_free(v);
    return NULL;
  }
  return v;
}

struct fxt_td_ev_variant *fxt_td_ev_get(struct fxt_td_ev_table *t, const struct fxt_td_ev_key *k,
                                        int *rc) {
  uint64_t *head = fxt_jmap_get(&t->map, k->hash, 0);
  *rc = FXT_ENOMEM;
  if (head == NULL)
    return NULL;
  for (uint64_t i = head[0]; i != 0; i = t->v[i - 1]->next)
    if (key_eq(t->v[i - 1], k))
      return t->v[i - 1];
  if (t->n >= FXT_TD_EV_MAX_VARIANTS) {
    *rc = FXT_E2BIG;
    return NULL;
  }
  if (!fxt_grow((void **)&t->v, &t->cap, (size_t)t->n + 1, sizeof *t->v, 64))
    return NULL;
  struct fxt_td_ev_variant *v = new_variant(t, k, rc);
  if (v == NULL)
    return NULL;
  v->next = (uint32_t)head[0];
  head[0] = t->n + 1;
  t->v[t->n++] = v;
  return v;
}

/* ---- records --------------------------------------------------------------------------------- */

/* The bits an integer-like argument holds (signed ones sign-extended), a double's bits. */
static uint64_t arg_bits(const struct fxt_arg *a) {
  switch (a->type) {
  case FXT_ARG_INT32: return (uint64_t)(int64_t)a->value.i32;
  case FXT_ARG_UINT32: return a->value.u32;
  case FXT_ARG_BOOL: return a->value.b ? 1 : 0;
  case FXT_ARG_DOUBLE: {
    uint64_t bits;
    memcpy(&bits, &a->value.f64, sizeof bits);
    return bits;
  }
  default: return a->value.u64; /* int64, uint64, pointer, koid */
  }
}

static int hexval(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

/* Appends n bytes and a NUL as the string of the __data_loc field at `at`. */
static int put_string(struct fxt_tbuf *out, uint32_t at, const char *s, size_t n) {
  size_t off = out->len;
  if (off + n + 1 > 0xffff)
    return FXT_E2BIG;
  put_le((unsigned char *)out->data + at, (uint64_t)(n + 1) << 16 | off, 4);
  fxt_tbuf_put(out, s, n);
  fxt_tbuf_put(out, "", 1);
  return 0;
}

/* The values of v's slots for this event, as text.c's renderer takes them. */
static void slot_values(const struct fxt_td_ev_variant *v, const struct fxt_event *ev,
                        uint64_t dur_ns, struct fxt_arg *out) {
  for (uint32_t i = 0; i < v->nslots; i++) {
    const struct fxt_td_ev_slot *s = &v->slots[i];
    memset(&out[i], 0, sizeof out[i]);
    out[i].type = s->arg_type;
    switch (s->kind) {
    case FXT_TD_EV_SLOT_ARG: out[i] = ev->args[s->arg]; break;
    case FXT_TD_EV_SLOT_TRAILER: out[i].value.u64 = ev->trailer; break;
    case FXT_TD_EV_SLOT_DUR_US: out[i].value.u64 = dur_ns / 1000; break;
    default: out[i].value.u64 = dur_ns % 1000; break;
    }
  }
}

int fxt_td_ev_record(const struct fxt_td_ev_variant *v, const struct fxt_event *ev, int32_t pid,
                     uint64_t dur_ns, struct fxt_tbuf *out, struct fxt_tbuf *scratch) {
  out->len = 0;
  if (!fxt_tbuf_reserve(out, v->fixed))
    return FXT_ENOMEM;
  unsigned char *r = (unsigned char *)out->data;
  memset(r, 0, v->fixed);
  put_le(r, v->id, 2); /* common_flags, common_preempt_count: 0 (user space) */
  put_le(r + 4, (uint32_t)pid, 4);
  out->len = v->fixed;
  struct fxt_arg sv[FXT_MAX_ARGS + 2];
  if (v->has_text)
    slot_values(v, ev, dur_ns, sv);
  int rc = 0;
  for (uint32_t i = 0; i < v->nfields && rc == 0; i++) {
    const struct fxt_td_ev_field *f = &v->fields[i];
    /* the argument of the fields that take one (ARG, HEX, VALUE) */
    const struct fxt_arg *a = f->arg < ev->num_args ? &ev->args[f->arg] : NULL;
    uint32_t size;
    int sg;
    fxt_ff_type(f->type, &size, &sg);
    r = (unsigned char *)out->data; /* strings may have moved the buffer */
    switch (f->src) {
    case FXT_TD_EV_SRC_ARG:
      if (f->type == FXT_TYPE_STR)
        rc = put_string(out, f->offset, a->value.str.data, a->value.str.len);
      else
        put_le(r + f->offset, arg_bits(a), size);
      break;
    case FXT_TD_EV_SRC_HEX: {
      const char *hex = a->value.str.data;
      for (uint32_t j = 0; j < f->bound; j++)
        r[f->offset + j] = (unsigned char)(hexval(hex[2 * j]) << 4 | hexval(hex[2 * j + 1]));
      break;
    }
    case FXT_TD_EV_SRC_TRAILER: put_le(r + f->offset, ev->trailer, 8); break;
    case FXT_TD_EV_SRC_DUR: put_le(r + f->offset, dur_ns, 8); break;
    default: /* TEXT, VALUE */
      scratch->len = 0;
      if (f->src == FXT_TD_EV_SRC_VALUE)
        fxt_text_value(scratch, a);
      else
        fxt_text_printf(scratch, v->fmt + f->from, f->to - f->from, sv + f->arg,
                        v->nslots - f->arg);
      rc = scratch->oom ? FXT_ENOMEM : put_string(out, f->offset, scratch->data, scratch->len);
      break;
    }
  }
  return rc ? rc : out->oom ? FXT_ENOMEM : 0;
}

void fxt_td_ev_format(struct fxt_tbuf *b, const struct fxt_td_ev_variant *v) {
  struct fxt_ff_field ff[FXT_TD_EV_MAX_FIELDS];
  for (uint32_t i = 0; i < v->nfields; i++)
    ff[i] = (struct fxt_ff_field){v->fields[i].name, strlen(v->fields[i].name),
                                  v->fields[i].type, v->fields[i].bound};
  fxt_ff_head(b, v->ev_name, strlen(v->ev_name), v->id, ff, v->nfields);
  fxt_tbuf_puts(b, v->print);
  fxt_tbuf_put(b, "\n", 1);
}
