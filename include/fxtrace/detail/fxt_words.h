/* fxtrace/detail/fxt_words.h - the one builder of FXT header words: record headers, event
 * headers and argument headers, field by field from the table of fxtrace/fxt_layout.h; and the
 * one reading of a record's size from its header (fxt_w_record_words).
 *
 * NOT API: names and signatures may change in any release. It is installed only because the
 * inline emit path (fxtrace/detail/emit.h) builds its headers with it; every other writer of
 * FXT in the tree does too: the encoder (src/core/fxt_encode.c, and through it the consumer's
 * and recovery's metadata records), the writer's drop_stats (src/core/writer.c), ad-hoc events
 * (src/host/adhoc.c), the `cpu` record and thread refs (src/host/slots.c) and the tracepoints'
 * category and name bits (src/host/registry.c).
 *
 * Each function ORs its values into their fields' places, FXT_<FIELD>_SHIFT, without masking:
 * the caller passes values that fit (the encoder validates its input first; the emit path's
 * are bounded by construction: sizes up to 4095 words, up to 15 arguments, 16-bit refs). So a
 * header is the same OR of shifts as a hand-written one, and with constant fields it folds to
 * the same constant: the fast path's instructions do not change. The parts of an event header
 * come separately too, because the emit path keeps the per-tracepoint part (category and name:
 * fxt_tracepoint.reg.header) and the per-thread part (the thread ref: fxt_tslot.thread_bits)
 * precomputed and ORs them with the per-event part.
 *
 * Freestanding, C11 and C++.
 */
#ifndef FXTRACE_DETAIL_FXT_WORDS_H
#define FXTRACE_DETAIL_FXT_WORDS_H

#include <stdint.h>

#include "../fxt_layout.h"

/* ---- record header (§2.1) ---- */

/* The size field of a record header: words, including the header (1..4095). */
static inline uint64_t fxt_w_size(uint64_t words)
{
  return words << FXT_HDR_SIZE_SHIFT;
}

/* A record's size in words, header included, from its header word h: the 12-bit field of
 * every type but large records (FXT_W_SIZE_FIELD), and of any type (FXT_W_RECORD_WORDS: the
 * 32-bit field of a large record, type 15, §2.2; the 12-bit one of every other, §2.1). 0 is no
 * valid size (readers refuse it). The one reading of a record's size: the functions below, the
 * ring's (fxt_ring_record_bytes, fxtrace/ring.h) and so the decoder's (src/core) are these.
 * Macros of plain operators, as a C99 inline definition with external linkage (the ring's) may
 * not call a static function; h is evaluated more than once. */
#define FXT_W_SIZE_FIELD(h) ((h) >> FXT_HDR_SIZE_SHIFT & FXT_LOW_MASK(FXT_HDR_SIZE_BITS))
#define FXT_W_RECORD_WORDS(h)                                                                \
  (((h) >> FXT_HDR_TYPE_SHIFT & FXT_LOW_MASK(FXT_HDR_TYPE_BITS)) == FXT_RECORD_LARGE         \
       ? (h) >> FXT_LARGE_SIZE_SHIFT & FXT_LOW_MASK(FXT_LARGE_SIZE_BITS)                     \
       : FXT_W_SIZE_FIELD(h))

/* The words of the record whose header is h (not for large records, type 15). */
static inline uint32_t fxt_w_size_of(uint64_t h)
{
  return (uint32_t)FXT_W_SIZE_FIELD(h);
}

/* The words of the record whose header is h, of any type (FXT_W_RECORD_WORDS). */
static inline uint64_t fxt_w_record_words(uint64_t h)
{
  return FXT_W_RECORD_WORDS(h);
}

/* A record header of type (enum fxt_record_type, 0..14) and words; the type's own fields
 * are ORed in by the caller. */
static inline uint64_t fxt_w_record(uint32_t type, uint64_t words)
{
  return (uint64_t)type << FXT_HDR_TYPE_SHIFT | fxt_w_size(words);
}

/* ---- event record header (§8.1) ---- */

/* The per-event part without the size: record type event, event type (enum fxt_event_type)
 * and the argument count (0..15). */
static inline uint64_t fxt_w_event(uint32_t etype, uint32_t nargs)
{
  return fxt_w_record(FXT_RECORD_EVENT, 0) | (uint64_t)etype << FXT_EVENT_TYPE_SHIFT |
         (uint64_t)nargs << FXT_EVENT_ARGS_SHIFT;
}

/* The thread ref part (1..255; 0: the koids follow the timestamp). */
static inline uint64_t fxt_w_event_thread(uint32_t thread_ref)
{
  return (uint64_t)thread_ref << FXT_EVENT_THREAD_SHIFT;
}

/* The category and name part (string refs). */
static inline uint64_t fxt_w_event_strings(uint32_t category_ref, uint32_t name_ref)
{
  return (uint64_t)category_ref << FXT_EVENT_CATEGORY_SHIFT |
         (uint64_t)name_ref << FXT_EVENT_NAME_SHIFT;
}

/* A whole event header. */
static inline uint64_t fxt_w_event_header(uint64_t words, uint32_t etype, uint32_t nargs,
                                          uint32_t thread_ref, uint32_t category_ref,
                                          uint32_t name_ref)
{
  return fxt_w_size(words) | fxt_w_event(etype, nargs) | fxt_w_event_thread(thread_ref) |
         fxt_w_event_strings(category_ref, name_ref);
}

/* ---- argument header (§6) ---- */

/* The size field of an argument header: words, including the header (1..4095). */
static inline uint64_t fxt_w_arg_size(uint64_t words)
{
  return words << FXT_ARG_SIZE_SHIFT;
}

/* An argument header of type (enum fxt_arg_type), words and name ref, without the
 * type-specific part. */
static inline uint64_t fxt_w_arg(uint32_t type, uint64_t words, uint32_t name_ref)
{
  return (uint64_t)type << FXT_ARG_TYPE_SHIFT | fxt_w_arg_size(words) |
         (uint64_t)name_ref << FXT_ARG_NAME_SHIFT;
}

/* The value of an int32 (two's complement) or uint32 argument, in its header. */
static inline uint64_t fxt_w_arg_value32(uint32_t v)
{
  return (uint64_t)v << FXT_ARG_VALUE32_SHIFT;
}

/* The value of a bool argument (0 or 1), in its header. */
static inline uint64_t fxt_w_arg_bool(uint32_t b)
{
  return (uint64_t)b << FXT_ARG_BOOL_VALUE_SHIFT;
}

/* The value ref of a string argument stored inline, len bytes (0..0x7fff): an empty string
 * is ref 0, never an empty inline ref (§5.1). */
static inline uint64_t fxt_w_arg_inline_str(uint32_t len)
{
  return len ? (uint64_t)(FXT_STR_REF_INLINE | len) << FXT_ARG_STRING_VALUE_SHIFT : 0;
}

/* A whole uint32 argument of one word. */
static inline uint64_t fxt_w_arg_u32(uint32_t name_ref, uint32_t value)
{
  return fxt_w_arg(FXT_ARG_UINT32, 1, name_ref) | fxt_w_arg_value32(value);
}

#endif /* FXTRACE_DETAIL_FXT_WORDS_H */
