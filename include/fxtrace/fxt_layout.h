/* fxtrace/fxt_layout.h - the FXT (Fuchsia trace format) wire layout: constants, the field
 * table of every header word and the enumerations of wire values. Embedder API (the codec,
 * fxtrace/fxt.h, and the decoder, fxtrace/fxt_decode.h, are built on it).
 *
 * The wire format is specified bit by bit in spec/fxt.md; section numbers below (§) refer to it.
 * Every header word is described here as a table of named bit ranges, FXT_<FIELD>_SHIFT and
 * FXT_<FIELD>_BITS, checked at compile time to fit in 64 bits and not to overlap the other
 * fields of the same word. Bits not named are reserved and always zero.
 *
 * Freestanding: includes only <stdint.h>, <stddef.h>, <stdbool.h> and fxtrace headers.
 */
#ifndef FXTRACE_FXT_LAYOUT_H
#define FXTRACE_FXT_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "errors.h"

#ifdef __cplusplus
#define FXT_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define FXT_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* ------------------------------------------------------------------------------------------ */
/* Constants                                                                                   */

/* The magic number record (§4.4), as a whole word. Little-endian bytes 10 00 04 46 78 54 16 00. */
#define FXT_MAGIC_WORD UINT64_C(0x0016547846040010)
/* The 32-bit value in bits [24..55] of the magic record. */
#define FXT_MAGIC_VALUE32 UINT32_C(0x16547846)

#define FXT_WORD_BYTES 8u
/* Largest record fxtrace writes or a 12-bit size field can hold (§2.1), in words. */
#define FXT_MAX_RECORD_WORDS 4095u
#define FXT_MAX_RECORD_BYTES (FXT_MAX_RECORD_WORDS * FXT_WORD_BYTES)
/* Largest argument, in words (12-bit size field, §6). */
#define FXT_MAX_ARG_WORDS 4095u
/* Arguments per record (4-bit count). */
#define FXT_MAX_ARGS 15u
/* Highest string table index (§5.1); index 0 is the empty string. */
#define FXT_MAX_STRING_INDEX 0x7fffu
/* Entries of the decoder's string table (indices 0..0x7fff): 384 KiB on 32-bit targets,
 * 512 KiB on 64-bit ones. A build for a small target may define it smaller (2 entries at
 * least), for the core and its callers alike: its decoder then fails with FXT_ENOSPC on a
 * string record whose index does not fit. */
#ifndef FXT_STRING_TABLE_SIZE
#define FXT_STRING_TABLE_SIZE 0x8000u
#endif
/* Highest thread table index (§5.2); index 0 means inline koids. */
#define FXT_MAX_THREAD_INDEX 0xffu
/* Longest inline string the encoder accepts: Fuchsia's TRACE_ENCODED_STRING_REF_MAX_LENGTH. */
#define FXT_MAX_INLINE_STRING 32000u
/* Longest string record / log message / blob payload: a 15-bit length field. */
#define FXT_MAX_STRING_LEN 0x7fffu
/* Bit 15 of a 16-bit string ref: the ref is inline, its low 15 bits are the length (§5.1). */
#define FXT_STR_REF_INLINE 0x8000u

/* ------------------------------------------------------------------------------------------ */
/* Field access                                                                                */

/* Mask of the low `bits` bits (1..64), computed without shifting by 64. */
#define FXT_LOW_MASK(bits) ((((UINT64_C(1) << ((bits) - 1)) - 1) << 1) | 1)
/* In-place mask of a field given by its SHIFT/BITS pair; a constant expression. */
#define FXT_FIELD_MASK(shift, bits) (FXT_LOW_MASK(bits) << (shift))
/* Same, from the field's name: FXT_FMASK(FXT_EVENT_TYPE). */
#define FXT_FMASK(F) FXT_FIELD_MASK(F##_SHIFT, F##_BITS)

static inline uint64_t fxt_get(uint64_t word, unsigned shift, unsigned bits) {
  return (word >> shift) & FXT_LOW_MASK(bits);
}

/* Returns word with the field replaced by value; bits of value above the field are dropped
 * (encoders validate values first, so nothing is ever silently truncated there). */
static inline uint64_t fxt_set(uint64_t word, unsigned shift, unsigned bits, uint64_t value) {
  uint64_t mask = FXT_LOW_MASK(bits);
  return (word & ~(mask << shift)) | ((value & mask) << shift);
}

/* By field name: FXT_GET(hdr, FXT_EVENT_TYPE), FXT_SET(hdr, FXT_EVENT_TYPE, 4). */
#define FXT_GET(word, F) fxt_get((word), F##_SHIFT, F##_BITS)
#define FXT_SET(word, F, value) fxt_set((word), F##_SHIFT, F##_BITS, (value))

/* Compile-time layout checks: a field fits in the word, and field A ends before field B
 * starts. Each header word below lists its fields in bit order, chained with
 * FXT_FIELD_BEFORE, so together they prove the word's fields are disjoint. */
#define FXT_FIELD_FITS(F)                                                                 \
  FXT_STATIC_ASSERT(F##_BITS >= 1 && F##_SHIFT + F##_BITS <= 64, #F " does not fit in 64 bits")
#define FXT_FIELD_BEFORE(A, B)                                                            \
  FXT_STATIC_ASSERT(A##_SHIFT + A##_BITS <= B##_SHIFT, #A " overlaps " #B)

/* ---- Record header, record types 0..14 (§2.1) ---- */
#define FXT_HDR_TYPE_SHIFT 0
#define FXT_HDR_TYPE_BITS 4
#define FXT_HDR_SIZE_SHIFT 4 /* words, including the header; 1..4095 */
#define FXT_HDR_SIZE_BITS 12
FXT_FIELD_BEFORE(FXT_HDR_TYPE, FXT_HDR_SIZE);
FXT_FIELD_FITS(FXT_HDR_SIZE);

/* ---- Large record header, record type 15 (§2.2) and large blob (§4.11) ---- */
#define FXT_LARGE_SIZE_SHIFT 4 /* words, including the header */
#define FXT_LARGE_SIZE_BITS 32
#define FXT_LARGE_TYPE_SHIFT 36 /* enum fxt_large_type */
#define FXT_LARGE_TYPE_BITS 4
#define FXT_LARGE_BLOB_FORMAT_SHIFT 40 /* enum fxt_large_blob_format; [44..63] reserved */
#define FXT_LARGE_BLOB_FORMAT_BITS 4
FXT_FIELD_BEFORE(FXT_HDR_TYPE, FXT_LARGE_SIZE);
FXT_FIELD_BEFORE(FXT_LARGE_SIZE, FXT_LARGE_TYPE);
FXT_FIELD_BEFORE(FXT_LARGE_TYPE, FXT_LARGE_BLOB_FORMAT);
FXT_FIELD_FITS(FXT_LARGE_BLOB_FORMAT);

/* Large blob format header word (the word after the large header), format 0 (with event
 * metadata) and format 1 (attachment: category and name only, [32..63] reserved). */
#define FXT_LBLOB_CATEGORY_SHIFT 0 /* string ref */
#define FXT_LBLOB_CATEGORY_BITS 16
#define FXT_LBLOB_NAME_SHIFT 16 /* string ref */
#define FXT_LBLOB_NAME_BITS 16
#define FXT_LBLOB_ARGS_SHIFT 32 /* format 0 only */
#define FXT_LBLOB_ARGS_BITS 4
#define FXT_LBLOB_THREAD_SHIFT 36 /* format 0 only: thread ref; [44..63] reserved */
#define FXT_LBLOB_THREAD_BITS 8
FXT_FIELD_BEFORE(FXT_LBLOB_CATEGORY, FXT_LBLOB_NAME);
FXT_FIELD_BEFORE(FXT_LBLOB_NAME, FXT_LBLOB_ARGS);
FXT_FIELD_BEFORE(FXT_LBLOB_ARGS, FXT_LBLOB_THREAD);
FXT_FIELD_FITS(FXT_LBLOB_THREAD);

/* ---- Metadata, record type 0 (§4.1-§4.4) ---- */
#define FXT_METADATA_TYPE_SHIFT 16 /* enum fxt_metadata_type */
#define FXT_METADATA_TYPE_BITS 4
FXT_FIELD_BEFORE(FXT_HDR_SIZE, FXT_METADATA_TYPE);

/* Provider info (metadata type 1): [60..63] reserved; followed by the name stream. */
#define FXT_PROVIDER_INFO_ID_SHIFT 20
#define FXT_PROVIDER_INFO_ID_BITS 32
#define FXT_PROVIDER_INFO_NAME_LEN_SHIFT 52
#define FXT_PROVIDER_INFO_NAME_LEN_BITS 8
FXT_FIELD_BEFORE(FXT_METADATA_TYPE, FXT_PROVIDER_INFO_ID);
FXT_FIELD_BEFORE(FXT_PROVIDER_INFO_ID, FXT_PROVIDER_INFO_NAME_LEN);
FXT_FIELD_FITS(FXT_PROVIDER_INFO_NAME_LEN);

/* Provider section (metadata type 2): [52..63] reserved. */
#define FXT_PROVIDER_SECTION_ID_SHIFT 20
#define FXT_PROVIDER_SECTION_ID_BITS 32
FXT_FIELD_BEFORE(FXT_METADATA_TYPE, FXT_PROVIDER_SECTION_ID);
FXT_FIELD_FITS(FXT_PROVIDER_SECTION_ID);

/* Provider event (metadata type 3): [56..63] reserved. */
#define FXT_PROVIDER_EVENT_PROVIDER_ID_SHIFT 20
#define FXT_PROVIDER_EVENT_PROVIDER_ID_BITS 32
#define FXT_PROVIDER_EVENT_EVENT_ID_SHIFT 52 /* enum fxt_provider_event_id */
#define FXT_PROVIDER_EVENT_EVENT_ID_BITS 4
FXT_FIELD_BEFORE(FXT_METADATA_TYPE, FXT_PROVIDER_EVENT_PROVIDER_ID);
FXT_FIELD_BEFORE(FXT_PROVIDER_EVENT_PROVIDER_ID, FXT_PROVIDER_EVENT_EVENT_ID);
FXT_FIELD_FITS(FXT_PROVIDER_EVENT_EVENT_ID);

/* Trace info (metadata type 4) and its magic number form (trace info type 0): [56..63] 0. */
#define FXT_TRACE_INFO_TYPE_SHIFT 20 /* enum fxt_trace_info_type */
#define FXT_TRACE_INFO_TYPE_BITS 4
#define FXT_MAGIC_SHIFT 24 /* FXT_MAGIC_VALUE32 */
#define FXT_MAGIC_BITS 32
FXT_FIELD_BEFORE(FXT_METADATA_TYPE, FXT_TRACE_INFO_TYPE);
FXT_FIELD_BEFORE(FXT_TRACE_INFO_TYPE, FXT_MAGIC);
FXT_FIELD_FITS(FXT_MAGIC);

/* ---- Initialization, record type 1 (§4.5): header [16..63] reserved; word 2 ticks/s. ---- */

/* ---- String, record type 2 (§4.6): [31] and [47..63] reserved; text stream follows. ---- */
#define FXT_STRING_INDEX_SHIFT 16 /* 1..0x7fff */
#define FXT_STRING_INDEX_BITS 15
#define FXT_STRING_LEN_SHIFT 32 /* bytes */
#define FXT_STRING_LEN_BITS 15
FXT_FIELD_BEFORE(FXT_HDR_SIZE, FXT_STRING_INDEX);
FXT_FIELD_BEFORE(FXT_STRING_INDEX, FXT_STRING_LEN);
FXT_FIELD_FITS(FXT_STRING_LEN);

/* ---- Thread, record type 3 (§4.7): [24..63] reserved; process koid, thread koid follow. ---- */
#define FXT_THREAD_INDEX_SHIFT 16 /* 1..255 */
#define FXT_THREAD_INDEX_BITS 8
FXT_FIELD_BEFORE(FXT_HDR_SIZE, FXT_THREAD_INDEX);
FXT_FIELD_FITS(FXT_THREAD_INDEX);

/* ---- Event, record type 4 (§8.1): no reserved bits. ---- */
#define FXT_EVENT_TYPE_SHIFT 16 /* enum fxt_event_type */
#define FXT_EVENT_TYPE_BITS 4
#define FXT_EVENT_ARGS_SHIFT 20
#define FXT_EVENT_ARGS_BITS 4
#define FXT_EVENT_THREAD_SHIFT 24 /* thread ref */
#define FXT_EVENT_THREAD_BITS 8
#define FXT_EVENT_CATEGORY_SHIFT 32 /* string ref */
#define FXT_EVENT_CATEGORY_BITS 16
#define FXT_EVENT_NAME_SHIFT 48 /* string ref */
#define FXT_EVENT_NAME_BITS 16
FXT_FIELD_BEFORE(FXT_HDR_SIZE, FXT_EVENT_TYPE);
FXT_FIELD_BEFORE(FXT_EVENT_TYPE, FXT_EVENT_ARGS);
FXT_FIELD_BEFORE(FXT_EVENT_ARGS, FXT_EVENT_THREAD);
FXT_FIELD_BEFORE(FXT_EVENT_THREAD, FXT_EVENT_CATEGORY);
FXT_FIELD_BEFORE(FXT_EVENT_CATEGORY, FXT_EVENT_NAME);
FXT_FIELD_FITS(FXT_EVENT_NAME);

/* ---- Blob, record type 5 (§4.8): [47] and [56..63] reserved. ---- */
#define FXT_BLOB_NAME_SHIFT 16 /* string ref */
#define FXT_BLOB_NAME_BITS 16
#define FXT_BLOB_SIZE_SHIFT 32 /* payload bytes */
#define FXT_BLOB_SIZE_BITS 15
#define FXT_BLOB_TYPE_SHIFT 48 /* enum fxt_blob_type */
#define FXT_BLOB_TYPE_BITS 8
FXT_FIELD_BEFORE(FXT_HDR_SIZE, FXT_BLOB_NAME);
FXT_FIELD_BEFORE(FXT_BLOB_NAME, FXT_BLOB_SIZE);
FXT_FIELD_BEFORE(FXT_BLOB_SIZE, FXT_BLOB_TYPE);
FXT_FIELD_FITS(FXT_BLOB_TYPE);

/* ---- Userspace object, record type 6 (§4.9): [44..63] reserved. ---- */
#define FXT_UOBJ_THREAD_SHIFT 16 /* thread ref (only its process koid is used) */
#define FXT_UOBJ_THREAD_BITS 8
#define FXT_UOBJ_NAME_SHIFT 24 /* string ref */
#define FXT_UOBJ_NAME_BITS 16
#define FXT_UOBJ_ARGS_SHIFT 40
#define FXT_UOBJ_ARGS_BITS 4
FXT_FIELD_BEFORE(FXT_HDR_SIZE, FXT_UOBJ_THREAD);
FXT_FIELD_BEFORE(FXT_UOBJ_THREAD, FXT_UOBJ_NAME);
FXT_FIELD_BEFORE(FXT_UOBJ_NAME, FXT_UOBJ_ARGS);
FXT_FIELD_FITS(FXT_UOBJ_ARGS);

/* ---- Kernel object, record type 7 (§4.10): [44..63] reserved. ---- */
#define FXT_KOBJ_TYPE_SHIFT 16 /* enum fxt_kobj_type (ZX_OBJ_TYPE_*) */
#define FXT_KOBJ_TYPE_BITS 8
#define FXT_KOBJ_NAME_SHIFT 24 /* string ref */
#define FXT_KOBJ_NAME_BITS 16
#define FXT_KOBJ_ARGS_SHIFT 40
#define FXT_KOBJ_ARGS_BITS 4
FXT_FIELD_BEFORE(FXT_HDR_SIZE, FXT_KOBJ_TYPE);
FXT_FIELD_BEFORE(FXT_KOBJ_TYPE, FXT_KOBJ_NAME);
FXT_FIELD_BEFORE(FXT_KOBJ_NAME, FXT_KOBJ_ARGS);
FXT_FIELD_FITS(FXT_KOBJ_ARGS);

/* ---- Scheduling, record type 8 (§7): [60..63] select the layout of [16..59]. ---- */
#define FXT_SCHED_TYPE_SHIFT 60 /* enum fxt_sched_type */
#define FXT_SCHED_TYPE_BITS 4
FXT_FIELD_BEFORE(FXT_HDR_SIZE, FXT_SCHED_TYPE);
FXT_FIELD_FITS(FXT_SCHED_TYPE);

/* Context switch (scheduling type 1, §7.1): [40..59] reserved. */
#define FXT_CSWITCH_ARGS_SHIFT 16
#define FXT_CSWITCH_ARGS_BITS 4
#define FXT_CSWITCH_CPU_SHIFT 20
#define FXT_CSWITCH_CPU_BITS 16
#define FXT_CSWITCH_OUT_STATE_SHIFT 36 /* enum fxt_thread_state */
#define FXT_CSWITCH_OUT_STATE_BITS 4
FXT_FIELD_BEFORE(FXT_HDR_SIZE, FXT_CSWITCH_ARGS);
FXT_FIELD_BEFORE(FXT_CSWITCH_ARGS, FXT_CSWITCH_CPU);
FXT_FIELD_BEFORE(FXT_CSWITCH_CPU, FXT_CSWITCH_OUT_STATE);
FXT_FIELD_BEFORE(FXT_CSWITCH_OUT_STATE, FXT_SCHED_TYPE);

/* Thread wakeup (scheduling type 2, §7.2): [36..59] reserved. */
#define FXT_WAKEUP_ARGS_SHIFT 16
#define FXT_WAKEUP_ARGS_BITS 4
#define FXT_WAKEUP_CPU_SHIFT 20
#define FXT_WAKEUP_CPU_BITS 16
FXT_FIELD_BEFORE(FXT_HDR_SIZE, FXT_WAKEUP_ARGS);
FXT_FIELD_BEFORE(FXT_WAKEUP_ARGS, FXT_WAKEUP_CPU);
FXT_FIELD_BEFORE(FXT_WAKEUP_CPU, FXT_SCHED_TYPE);

/* Legacy context switch (scheduling type 0, §7.3): no reserved bits. */
#define FXT_LEGACY_CPU_SHIFT 16
#define FXT_LEGACY_CPU_BITS 8
#define FXT_LEGACY_OUT_STATE_SHIFT 24 /* enum fxt_thread_state */
#define FXT_LEGACY_OUT_STATE_BITS 4
#define FXT_LEGACY_OUT_THREAD_SHIFT 28 /* thread ref */
#define FXT_LEGACY_OUT_THREAD_BITS 8
#define FXT_LEGACY_IN_THREAD_SHIFT 36 /* thread ref */
#define FXT_LEGACY_IN_THREAD_BITS 8
#define FXT_LEGACY_OUT_PRIO_SHIFT 44
#define FXT_LEGACY_OUT_PRIO_BITS 8
#define FXT_LEGACY_IN_PRIO_SHIFT 52
#define FXT_LEGACY_IN_PRIO_BITS 8
FXT_FIELD_BEFORE(FXT_HDR_SIZE, FXT_LEGACY_CPU);
FXT_FIELD_BEFORE(FXT_LEGACY_CPU, FXT_LEGACY_OUT_STATE);
FXT_FIELD_BEFORE(FXT_LEGACY_OUT_STATE, FXT_LEGACY_OUT_THREAD);
FXT_FIELD_BEFORE(FXT_LEGACY_OUT_THREAD, FXT_LEGACY_IN_THREAD);
FXT_FIELD_BEFORE(FXT_LEGACY_IN_THREAD, FXT_LEGACY_OUT_PRIO);
FXT_FIELD_BEFORE(FXT_LEGACY_OUT_PRIO, FXT_LEGACY_IN_PRIO);
FXT_FIELD_BEFORE(FXT_LEGACY_IN_PRIO, FXT_SCHED_TYPE);

/* ---- Log, record type 9 (§4.12): [31] and [40..63] reserved. ---- */
#define FXT_LOG_MSG_LEN_SHIFT 16 /* bytes */
#define FXT_LOG_MSG_LEN_BITS 15
#define FXT_LOG_THREAD_SHIFT 32 /* thread ref */
#define FXT_LOG_THREAD_BITS 8
FXT_FIELD_BEFORE(FXT_HDR_SIZE, FXT_LOG_MSG_LEN);
FXT_FIELD_BEFORE(FXT_LOG_MSG_LEN, FXT_LOG_THREAD);
FXT_FIELD_FITS(FXT_LOG_THREAD);

/* ---- Argument header word (§6) ---- */
#define FXT_ARG_TYPE_SHIFT 0 /* enum fxt_arg_type */
#define FXT_ARG_TYPE_BITS 4
#define FXT_ARG_SIZE_SHIFT 4 /* words, including this header, name stream and value */
#define FXT_ARG_SIZE_BITS 12
#define FXT_ARG_NAME_SHIFT 16 /* string ref */
#define FXT_ARG_NAME_BITS 16
/* Type-specific part: exactly one of these per argument type; unnamed bits are reserved
 * (for null and the 64-bit types, pointer and koid, all of [32..63]). */
#define FXT_ARG_VALUE32_SHIFT 32 /* int32 (two's complement) and uint32 */
#define FXT_ARG_VALUE32_BITS 32
#define FXT_ARG_STRING_VALUE_SHIFT 32 /* string ref; [48..63] reserved */
#define FXT_ARG_STRING_VALUE_BITS 16
#define FXT_ARG_BOOL_VALUE_SHIFT 32 /* [33..63] reserved */
#define FXT_ARG_BOOL_VALUE_BITS 1
#define FXT_ARG_BLOB_SIZE_SHIFT 32 /* payload bytes */
#define FXT_ARG_BLOB_SIZE_BITS 32
FXT_FIELD_BEFORE(FXT_ARG_TYPE, FXT_ARG_SIZE);
FXT_FIELD_BEFORE(FXT_ARG_SIZE, FXT_ARG_NAME);
FXT_FIELD_BEFORE(FXT_ARG_NAME, FXT_ARG_VALUE32);
FXT_FIELD_BEFORE(FXT_ARG_NAME, FXT_ARG_STRING_VALUE);
FXT_FIELD_BEFORE(FXT_ARG_NAME, FXT_ARG_BOOL_VALUE);
FXT_FIELD_BEFORE(FXT_ARG_NAME, FXT_ARG_BLOB_SIZE);
FXT_FIELD_FITS(FXT_ARG_VALUE32);
FXT_FIELD_FITS(FXT_ARG_STRING_VALUE);
FXT_FIELD_FITS(FXT_ARG_BOOL_VALUE);
FXT_FIELD_FITS(FXT_ARG_BLOB_SIZE);

/* The magic record is exactly the fields above with their fixed values. */
FXT_STATIC_ASSERT(((UINT64_C(0) << FXT_HDR_TYPE_SHIFT) | (UINT64_C(1) << FXT_HDR_SIZE_SHIFT) |
                   (UINT64_C(4) << FXT_METADATA_TYPE_SHIFT) |
                   (UINT64_C(0) << FXT_TRACE_INFO_TYPE_SHIFT) |
                   ((UINT64_C(0) | FXT_MAGIC_VALUE32) << FXT_MAGIC_SHIFT)) == FXT_MAGIC_WORD,
                  "magic word does not match its fields");

/* ------------------------------------------------------------------------------------------ */
/* Enumerations (wire values)                                                                  */

enum fxt_record_type {
  FXT_RECORD_METADATA = 0,
  FXT_RECORD_INIT = 1,
  FXT_RECORD_STRING = 2,
  FXT_RECORD_THREAD = 3,
  FXT_RECORD_EVENT = 4,
  FXT_RECORD_BLOB = 5,
  FXT_RECORD_USERSPACE_OBJECT = 6,
  FXT_RECORD_KERNEL_OBJECT = 7,
  FXT_RECORD_SCHEDULING = 8,
  FXT_RECORD_LOG = 9,
  /* 10..14 unassigned */
  FXT_RECORD_LARGE = 15
};

enum fxt_metadata_type {
  FXT_METADATA_PROVIDER_INFO = 1,
  FXT_METADATA_PROVIDER_SECTION = 2,
  FXT_METADATA_PROVIDER_EVENT = 3,
  FXT_METADATA_TRACE_INFO = 4
};

enum fxt_trace_info_type { FXT_TRACE_INFO_MAGIC = 0 };

enum fxt_provider_event_id { FXT_PROVIDER_EVENT_BUFFER_OVERFLOW = 0 };

enum fxt_event_type {
  FXT_EVENT_INSTANT = 0,
  FXT_EVENT_COUNTER = 1,          /* trailer: counter id */
  FXT_EVENT_DURATION_BEGIN = 2,
  FXT_EVENT_DURATION_END = 3,
  FXT_EVENT_DURATION_COMPLETE = 4, /* trailer: end timestamp */
  FXT_EVENT_ASYNC_BEGIN = 5,       /* trailer: async correlation id */
  FXT_EVENT_ASYNC_INSTANT = 6,
  FXT_EVENT_ASYNC_END = 7,
  FXT_EVENT_FLOW_BEGIN = 8, /* trailer: flow correlation id */
  FXT_EVENT_FLOW_STEP = 9,
  FXT_EVENT_FLOW_END = 10
};
#define FXT_EVENT_TYPE_LAST FXT_EVENT_FLOW_END

enum fxt_arg_type {
  FXT_ARG_NULL = 0,
  FXT_ARG_INT32 = 1,
  FXT_ARG_UINT32 = 2,
  FXT_ARG_INT64 = 3,
  FXT_ARG_UINT64 = 4,
  FXT_ARG_DOUBLE = 5,
  FXT_ARG_STRING = 6,
  FXT_ARG_POINTER = 7,
  FXT_ARG_KOID = 8,
  FXT_ARG_BOOL = 9,
  FXT_ARG_BLOB = 10 /* decoded, never encoded by fxtrace (§6) */
};

enum fxt_sched_type {
  FXT_SCHED_LEGACY_CONTEXT_SWITCH = 0,
  FXT_SCHED_CONTEXT_SWITCH = 1,
  FXT_SCHED_WAKEUP = 2
};

/* Zircon ZX_THREAD_STATE_* values (§7.4). */
enum fxt_thread_state {
  FXT_THREAD_STATE_NEW = 0,
  FXT_THREAD_STATE_RUNNING = 1,
  FXT_THREAD_STATE_SUSPENDED = 2,
  FXT_THREAD_STATE_BLOCKED = 3,
  FXT_THREAD_STATE_DYING = 4,
  FXT_THREAD_STATE_DEAD = 5
};

/* Zircon ZX_OBJ_TYPE_* values used by kernel object records (§4.10). */
enum fxt_kobj_type { FXT_KOBJ_PROCESS = 1, FXT_KOBJ_THREAD = 2 };

enum fxt_blob_type {
  FXT_BLOB_DATA = 1,
  FXT_BLOB_LAST_BRANCH = 2,
  FXT_BLOB_PERFETTO = 3
};

enum fxt_large_type { FXT_LARGE_BLOB = 0 };

/* §4.11: 0 = with event metadata, 1 = attachment (never the other way round). */
enum fxt_large_blob_format {
  FXT_LBLOB_FORMAT_EVENT = 0,
  FXT_LBLOB_FORMAT_ATTACHMENT = 1
};

#endif /* FXTRACE_FXT_LAYOUT_H */
