/* src/core/fxt_decode_int.h - internals shared by fxt_decode.c (records, public API) and
 * fxt_decode_fields.c (cursor, errors, refs, streams, arguments). Its first inline functions
 * (an event's trailer, an argument's value) are also those of the formats library's readers
 * (src/formats/fxtfile.c, fxtfile_index.c): every reader decodes them one way, as it reads a
 * record's size with fxt_w_record_words (fxtrace/detail/fxt_words.h, the ring's reading too).
 */
#ifndef FXTRACE_CORE_FXT_DECODE_INT_H
#define FXTRACE_CORE_FXT_DECODE_INT_H

#include <fxtrace/detail/fxt_words.h> /* a record's size: fxt_w_record_words */
#include <fxtrace/fxt.h>

#include "mem.h"

/* Words are read by copying into a uint64_t: native order must be the file's (§1). */
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the FXT decoder reads words in native order: little-endian targets only"
#endif
#endif

/* Whether an event of a known type (at most FXT_EVENT_TYPE_LAST) ends with a trailer word
 * (§8.2): all but instants and durations' begins and ends. */
static inline bool fxt_event_has_trailer(uint64_t type) {
  return type != FXT_EVENT_INSTANT && type != FXT_EVENT_DURATION_BEGIN &&
         type != FXT_EVENT_DURATION_END;
}

/* An argument's value that its header word h holds (§6): null (none), int32, uint32, bool;
 * false for the types whose value follows the name (a word, a string, a blob), arg->value
 * untouched. An int32 in two's complement without implementation-defined conversion. */
static inline bool fxt_arg_header_value(uint64_t h, struct fxt_arg *arg) {
  uint32_t v = (uint32_t)FXT_GET(h, FXT_ARG_VALUE32);
  switch (arg->type) {
  case FXT_ARG_NULL:
    return true;
  case FXT_ARG_INT32:
    arg->value.i32 = v <= INT32_MAX ? (int32_t)v : -(int32_t)(~v) - 1;
    return true;
  case FXT_ARG_UINT32:
    arg->value.u32 = v;
    return true;
  case FXT_ARG_BOOL:
    arg->value.b = FXT_GET(h, FXT_ARG_BOOL_VALUE) != 0;
    return true;
  default:
    return false;
  }
}

/* An argument's value that is the word w after its name (§6: int64, uint64, double, pointer,
 * koid): every 64-bit member of the value, the double included, is these bits. */
static inline void fxt_arg_word_value(uint64_t w, struct fxt_arg *arg) {
  memcpy(&arg->value, &w, sizeof w);
}

/* A window of whole words inside the record being decoded: the record itself, or one of its
 * arguments. Every read is checked against end, and end was checked against the input
 * length before the window was made, so no read can leave the input. Positions are word
 * indices from the start of the record, kept in 64 bits (a large record has up to 2^32 - 1
 * words). */
struct fxt_cur {
  struct fxt_decoder *d;
  struct fxt_record *rec;
  const unsigned char *base; /* first byte of the record */
  uint64_t off;              /* input offset of the record */
  uint64_t pos;              /* next word to read */
  uint64_t end;              /* first word past the window */
  uint64_t start;            /* word holding the size field that set end (record or arg header) */
  const char *scope;         /* "record" or "argument", for messages */
};

/* Input offset of word index w of the record. */
static inline uint64_t fxt_cur_at(const struct fxt_cur *c, uint64_t w) {
  return c->off + (w << 3);
}

/* Fails the decoder: formats "offset AT: " + spec (with %s from s0, s1 and %u/%x from n0..n2)
 * into the decoder's message, makes the error sticky and returns code. */
int fxt_dec_fail(struct fxt_decoder *d, int code, uint64_t at, const char *spec, const char *s0,
                 const char *s1, uint64_t n0, uint64_t n1, uint64_t n2);

/* Fails with "<what> runs past the declared <scope> size". */
int fxt_dec_overrun(struct fxt_cur *c, const char *what);

/* Reads one word; what names it in the overrun message. Inline, as the refs below: a record
 * reads several, and the calls were a tenth of a file's loading. */
static inline int fxt_dec_word(struct fxt_cur *c, const char *what, uint64_t *w) {
  if (c->pos >= c->end) {
    *w = 0; /* never read after an error, but compilers cannot tell */
    return fxt_dec_overrun(c, what);
  }
  memcpy(w, c->base + (c->pos << 3), sizeof *w);
  c->pos++;
  return 0;
}

/* Reads a stream of len bytes (zero-padded to words; padding checked). *data is "" when len
 * is 0. */
int fxt_dec_stream(struct fxt_cur *c, uint64_t len, const char *what, const char **data);

/* Fails with "reserved bits ... set in <what>" when word has bits outside used. at is the
 * word's input offset. */
int fxt_dec_reserved(struct fxt_cur *c, uint64_t word, uint64_t used, uint64_t at,
                     const char *what);

/* A string ref field (16 bits) read from the word at input offset at: resolves a table index
 * now (error if undefined), records the length of an inline ref (its text is read later by
 * fxt_dec_ref_stream, in the order the layout gives). */
int fxt_dec_ref_undefined(struct fxt_cur *c, uint64_t field, uint64_t at);
static inline int fxt_dec_ref(struct fxt_cur *c, uint64_t field, uint64_t at,
                              struct fxt_str_ref *r) {
  r->index = (uint16_t)field;
  r->len = 0;
  r->data = "";
  if (field & FXT_STR_REF_INLINE) {
    r->index = FXT_STR_REF_INLINE;
    r->len = (uint16_t)(field & FXT_MAX_STRING_LEN);
    /* 0x8000 (inline, empty) and inline strings over 32000 bytes are readable but never
     * written by Fuchsia or fxtrace (§5.1). */
    if (r->len == 0 || r->len > FXT_MAX_INLINE_STRING)
      c->rec->flags |= FXT_RECORD_WARN_NONCANONICAL;
    return 0;
  }
  if (field == 0)
    return 0;
  /* A build with a smaller table binds no index past it (dec_string). */
  if (FXT_STRING_TABLE_SIZE <= FXT_MAX_STRING_INDEX && field >= FXT_STRING_TABLE_SIZE)
    return fxt_dec_ref_undefined(c, field, at);
  const struct fxt_str_slot *s = &c->d->strings[field];
  if (s->gen != c->d->gen)
    return fxt_dec_ref_undefined(c, field, at);
  r->data = s->data;
  r->len = s->len;
  return 0;
}
static inline int fxt_dec_ref_stream(struct fxt_cur *c, struct fxt_str_ref *r, const char *what) {
  if (r->index != FXT_STR_REF_INLINE || r->len == 0)
    return 0;
  return fxt_dec_stream(c, r->len, what, &r->data);
}

/* A thread ref field from the word at offset at: resolves a table index now; index 0 leaves
 * the koids to fxt_dec_thread_koids. */
int fxt_dec_thread_ref(struct fxt_cur *c, uint64_t field, uint64_t at, struct fxt_thread_ref *t);
int fxt_dec_thread_koids(struct fxt_cur *c, struct fxt_thread_ref *t);

/* n arguments starting at the cursor (§6). */
int fxt_dec_args(struct fxt_cur *c, uint32_t n, struct fxt_arg *args);

#endif /* FXTRACE_CORE_FXT_DECODE_INT_H */
