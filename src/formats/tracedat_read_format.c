/* src/formats/tracedat_read_format.c - event format texts of a trace.dat (tracedat_read.h).
 *
 * Reads what the kernel's events/<sys>/<event>/format files hold (spec ftrace-text.md §3):
 * "name: N", "ID: N" and one line per field,
 *     "\tfield:<declaration>;\toffset:<n>;\tsize:<n>;\tsigned:<0|1>;"
 * The declaration is a C declaration: "unsigned short common_type", "char prev_comm[16]",
 * "__data_loc char[] name", "const char * ip", "unsigned long caller[8]". The last identifier
 * (after dropping trailing "[...]" groups) is the name, the rest the type. A char array is
 * text (libtraceevent also treats u8/s8 arrays as text; here they stay bytes, shown as hex).
 * The print fmt line is not needed and not parsed: fxtrace renders events from their fields.
 */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include <stdlib.h>
#include <string.h>

#include "../base/grow.h"
#include "tracedat_read_int.h"
#include "tracedat_read.h"

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }
static bool is_ident(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static struct fxt_td_text trim(const char *s, const char *e) {
  while (s < e && is_space(*s))
    s++;
  while (e > s && is_space(e[-1]))
    e--;
  return (struct fxt_td_text){s, (uint32_t)(e - s)};
}

static bool starts(struct fxt_td_text t, const char *prefix) {
  size_t n = strlen(prefix);
  return t.len >= n && memcmp(t.data, prefix, n) == 0;
}

static bool contains(struct fxt_td_text t, const char *word) {
  size_t n = strlen(word);
  for (uint32_t i = 0; i + n <= t.len; i++)
    if (memcmp(t.data + i, word, n) == 0)
      return true;
  return false;
}

/* A decimal number after "key:" inside line (up to its ';'); false when absent or bad. */
static bool keyed_number(struct fxt_td_text line, const char *key, uint64_t *v) {
  size_t n = strlen(key);
  for (uint32_t i = 0; i + n <= line.len; i++) {
    if (memcmp(line.data + i, key, n) != 0 || (i > 0 && is_ident(line.data[i - 1])))
      continue;
    uint32_t j = i + (uint32_t)n;
    while (j < line.len && is_space(line.data[j]))
      j++;
    uint64_t x = 0;
    uint32_t digits = 0;
    while (j < line.len && line.data[j] >= '0' && line.data[j] <= '9' && digits < 12) {
      x = x * 10 + (uint64_t)(line.data[j++] - '0');
      digits++;
    }
    if (digits == 0 || digits == 12)
      return false;
    *v = x;
    return true;
  }
  return false;
}

/* Splits a declaration into type and name and classifies it. */
static int parse_decl(struct fxt_td_text decl, uint64_t at, struct fxt_td_field *f, char *err,
                      size_t err_size) {
  bool dynamic = false;
  if (starts(decl, "__data_loc ") || starts(decl, "__rel_loc ")) {
    f->rel = decl.data[2] == 'r';
    uint32_t skip = f->rel ? 10 : 11;
    decl = trim(decl.data + skip, decl.data + decl.len);
    dynamic = true;
  }
  const char *s = decl.data, *e = decl.data + decl.len;
  bool array = false;
  while (e > s && e[-1] == ']') { /* drop trailing [..] groups of the name */
    const char *open = e - 1;
    while (open > s && *open != '[')
      open--;
    if (*open != '[')
      break;
    e = open;
    while (e > s && is_space(e[-1]))
      e--;
    array = true;
  }
  const char *name = e;
  while (name > s && is_ident(name[-1]))
    name--;
  if (name == e || (name[0] >= '0' && name[0] <= '9'))
    return fxt_fail_at(err, err_size, FXT_EBADMSG, at, "field declaration '%.*s' has no name",
                       (int)decl.len, decl.data);
  f->name = (struct fxt_td_text){name, (uint32_t)(e - name)};
  f->type = trim(s, name);
  if (f->type.len == 0)
    return fxt_fail_at(err, err_size, FXT_EBADMSG, at, "field '%.*s' has no type", (int)f->name.len,
                       f->name.data);
  bool text = contains(f->type, "char");
  if (f->size == 0 && (dynamic || !array))
    return fxt_fail_at(err, err_size, FXT_EBADMSG, at,
                       "field '%.*s' of size 0 (only an array "
                       "may be empty: it then holds the rest of the record)",
                       (int)f->name.len, f->name.data);
  if (dynamic) {
    if (f->size != 4)
      return fxt_fail_at(err, err_size, FXT_EBADMSG, at,
                         "dynamic field '%.*s' of size %u (its location word is 4 bytes)",
                         (int)f->name.len, f->name.data, f->size);
    f->kind = text ? FXT_TD_FIELD_DSTR : FXT_TD_FIELD_DBYTES;
  } else if (array)
    f->kind = text ? FXT_TD_FIELD_STR : FXT_TD_FIELD_BYTES;
  else if (contains(f->type, "*"))
    f->kind = f->size == 4 || f->size == 8 ? FXT_TD_FIELD_PTR : FXT_TD_FIELD_BYTES;
  else if ((starts(f->type, "double") && f->type.len == 6 && f->size == 8) ||
           (starts(f->type, "float") && f->type.len == 5 && f->size == 4))
    f->kind = FXT_TD_FIELD_FLOAT;
  else
    f->kind = f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8 ? FXT_TD_FIELD_INT
                                                                           : FXT_TD_FIELD_BYTES;
  return 0;
}

/* One "field:" line. */
static int parse_field(struct fxt_td_text line, uint64_t at, struct fxt_td_field *f, char *err,
                       size_t err_size) {
  memset(f, 0, sizeof *f);
  const char *p = line.data, *e = line.data + line.len;
  const char *colon = memchr(p, ':', (size_t)(e - p));
  const char *semi = colon ? memchr(colon, ';', (size_t)(e - colon)) : NULL;
  if (semi == NULL)
    return fxt_fail_at(err, err_size, FXT_EBADMSG, at,
                       "field line without ';' after its "
                       "declaration");
  uint64_t off, size, sign = 0;
  struct fxt_td_text rest = {semi, (uint32_t)(e - semi)};
  if (!keyed_number(rest, "offset:", &off) || !keyed_number(rest, "size:", &size))
    return fxt_fail_at(err, err_size, FXT_EBADMSG, at, "field line without offset: and size:");
  if (off > UINT16_MAX || size > UINT16_MAX)
    return fxt_fail_at(err, err_size, FXT_EBADMSG, at,
                       "field at offset %llu of size %llu (a record is at most 65535 bytes)",
                       (unsigned long long)off, (unsigned long long)size);
  keyed_number(rest, "signed:", &sign); /* absent in very old kernels */
  f->offset = (uint32_t)off;
  f->size = (uint32_t)size;
  f->is_signed = sign != 0;
  return parse_decl(trim(colon + 1, semi), at, f, err, err_size);
}

static bool is_common(const struct fxt_td_field *f) {
  return f->name.len > 7 && memcmp(f->name.data, "common_", 7) == 0;
}

int fxt_td_parse_text(const char *text, size_t len, uint64_t offset, bool need_name,
                      struct fxt_td_event *ev, char *err, size_t err_size) {
  memset(ev, 0, sizeof *ev);
  ev->offset = offset;
  bool have_id = false;
  size_t cap = 0;
  const char *p = text, *end = text + len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end;
    struct fxt_td_text line = trim(p, le);
    uint64_t at = offset + (uint64_t)(p - text);
    p = nl ? nl + 1 : end;
    if (starts(line, "name:")) {
      ev->name = trim(line.data + 5, line.data + line.len);
    } else if (starts(line, "ID:")) {
      uint64_t id;
      if (!keyed_number(line, "ID:", &id) || id > UINT16_MAX) {
        fxt_td_event_free(ev);
        return fxt_fail_at(err, err_size, FXT_EBADMSG, at, "format ID is not a number 0..65535");
      }
      ev->id = (uint32_t)id;
      have_id = true;
    } else if (starts(line, "field:") || starts(line, "field :")) {
      if (!fxt_grow((void **)&ev->fields, &cap, (size_t)ev->nfields + 1, sizeof *ev->fields,
                    16)) {
        fxt_td_event_free(ev);
        return fxt_fail_at(err, err_size, FXT_ENOMEM, at, "out of memory");
      }
      struct fxt_td_field *f = &ev->fields[ev->nfields];
      int rc = parse_field(line, at, f, err, err_size);
      if (rc) {
        fxt_td_event_free(ev);
        return rc;
      }
      if (is_common(f) && ev->ncommon != ev->nfields) {
        rc = fxt_fail_at(err, err_size, FXT_EBADMSG, at,
                         "common field '%.*s' after the event's own fields", (int)f->name.len,
                         f->name.data);
        fxt_td_event_free(ev);
        return rc;
      }
      ev->ncommon += is_common(f);
      ev->nfields++;
    } else if (starts(line, "print fmt:")) {
      break;
    }
  }
  if (need_name && (ev->name.len == 0 || !have_id)) {
    fxt_td_event_free(ev);
    return fxt_fail_at(err, err_size, FXT_EBADMSG, offset, "event format without %s",
                       ev->name.len == 0 ? "a name: line" : "an ID: line");
  }
  return 0;
}

int fxt_td_parse_format(const char *text, size_t len, uint64_t offset, struct fxt_td_text system,
                        struct fxt_td_event *ev, char *err, size_t err_size) {
  int rc = fxt_td_parse_text(text, len, offset, true, ev, err, err_size);
  ev->system = system;
  return rc;
}

void fxt_td_event_free(struct fxt_td_event *ev) {
  free(ev->fields);
  ev->fields = NULL;
  ev->nfields = ev->ncommon = 0;
}

int fxt_td_field_value(const struct fxt_td_field *f, const unsigned char *data, uint32_t len,
                       bool big_endian, uint64_t rec_offset, uint64_t *u,
                       const unsigned char **bytes, uint32_t *n, char *err, size_t err_size) {
  *u = 0;
  *bytes = NULL;
  *n = 0;
  if ((uint64_t)f->offset + f->size > len || f->offset > len)
    return fxt_fail_at(err, err_size, FXT_EBADMSG, rec_offset,
                       "record of %u bytes, field '%.*s' needs bytes %u..%u", len, (int)f->name.len,
                       f->name.data, f->offset, f->offset + (f->size ? f->size - 1 : 0));
  const unsigned char *p = data + f->offset;
  uint32_t size = f->size ? f->size : len - f->offset; /* a flexible array: the rest */
  switch (f->kind) {
  case FXT_TD_FIELD_INT:
  case FXT_TD_FIELD_PTR:
  case FXT_TD_FIELD_FLOAT:
    *u = fxt_td_rd(p, f->size, big_endian);
    if (f->kind == FXT_TD_FIELD_INT && f->is_signed && f->size < 8 &&
        (*u >> (8 * f->size - 1)) != 0)
      *u |= ~UINT64_C(0) << (8 * f->size);
    return 0;
  case FXT_TD_FIELD_STR:
    *bytes = p;
    *n = (uint32_t)strnlen((const char *)p, size);
    return 0;
  case FXT_TD_FIELD_BYTES:
    *bytes = p;
    *n = size;
    return 0;
  default: { /* dynamic: u32 location = length << 16 | offset */
    uint32_t loc = (uint32_t)fxt_td_rd(p, 4, big_endian);
    uint64_t off = loc & 0xffffu, l = loc >> 16;
    if (f->rel)
      off += (uint64_t)f->offset + f->size;
    if (off + l > len)
      return fxt_fail_at(err, err_size, FXT_EBADMSG, rec_offset,
                         "record of %u bytes, dynamic field '%.*s' points at bytes %llu..%llu", len,
                         (int)f->name.len, f->name.data, (unsigned long long)off,
                         (unsigned long long)(off + l) - (l > 0));
    *bytes = data + off;
    *n = f->kind == FXT_TD_FIELD_DSTR ? (uint32_t)strnlen((const char *)*bytes, (size_t)l)
                                   : (uint32_t)l;
    return 0;
  }
  }
}
