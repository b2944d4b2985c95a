/* fxtrace/fxt.h - the FXT (Fuchsia trace format) codec: field tables, value types, encoders
 * and a strict streaming decoder.
 *
 * The wire format is specified bit by bit in spec/fxt.md; section numbers below (§) refer to it.
 * Every header word is described here as a table of named bit ranges, FXT_<FIELD>_SHIFT and
 * FXT_<FIELD>_BITS, checked at compile time to fit in 64 bits and not to overlap the other
 * fields of the same word. Bits not named are reserved and always zero.
 *
 * Freestanding: includes only <stdint.h>, <stddef.h>, <stdbool.h> and fxtrace headers. The
 * codec (src/core/fxt_encode.c, fxt_decode.c) never allocates, never calls the OS and uses no
 * external symbol but memcpy/memset/memmove/memcmp.
 */
#ifndef FXTRACE_FXT_H
#define FXTRACE_FXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "errors.h"

#ifdef __cplusplus
#define FXT_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#define FXT_NULL nullptr
#else
#define FXT_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#define FXT_NULL NULL
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

/* ------------------------------------------------------------------------------------------ */
/* Value types                                                                                 */

/* A string ref (§5.1).
 *  - index 0: the empty string;
 *  - index 1..0x7fff: an entry of the string table (data/len ignored by the encoder);
 *  - index FXT_STR_REF_INLINE: the len bytes at data are stored in the record (need not be
 *    NUL-terminated). The encoder writes an empty inline string as ref 0, never as 0x8000.
 * The decoder fills data/len with the text for every form (for index 0, "" and 0; for a
 * table index, the text bound when the record was decoded, pointing into the input). */
struct fxt_str_ref {
  const char *data;
  uint16_t len;
  uint16_t index;
};

/* A thread ref (§5.2): index 1..255 is an entry of the thread table (koids ignored by the
 * encoder); index 0 stores the koids in the record. The decoder fills the koids for both
 * forms. (In a userspace object record only the process koid is stored.) */
struct fxt_thread_ref {
  uint64_t process_koid;
  uint64_t thread_koid;
  uint8_t index;
};

/* Payload of a type-10 blob argument (decode only). */
struct fxt_blob_value {
  const void *data;
  uint32_t size;
};

union fxt_arg_value {
  int32_t i32;
  uint32_t u32;
  int64_t i64;
  uint64_t u64;
  double f64;
  struct fxt_str_ref str;
  uint64_t pointer;
  uint64_t koid;
  bool b;
  struct fxt_blob_value blob;
};

/* An argument (§6): which member of value is used depends on type (enum fxt_arg_type). */
struct fxt_arg {
  uint32_t type;
  struct fxt_str_ref name; /* should never be empty */
  union fxt_arg_value value;
};

/* Metadata records (§4.2-§4.4). The magic record has no fields. */
struct fxt_provider_info {
  uint32_t id;
  uint8_t name_len;
  const char *name;
};
struct fxt_provider_section {
  uint32_t id;
};
struct fxt_provider_event {
  uint32_t id;
  uint8_t event_id; /* 0..15; enum fxt_provider_event_id */
};

/* Initialization record (§4.5). */
struct fxt_init {
  uint64_t ticks_per_second;
};

/* String record (§4.6): binds index (1..0x7fff) to len bytes of text. */
struct fxt_string {
  uint16_t index;
  uint16_t len; /* 0..0x7fff */
  const char *data;
};

/* Thread record (§4.7): binds index (1..255) to a process/thread koid pair. */
struct fxt_thread {
  uint8_t index;
  uint64_t process_koid;
  uint64_t thread_koid;
};

/* Event record (§8). trailer is the counter id (counter), end timestamp (duration complete)
 * or correlation id (async, flow); ignored (and decoded as 0) for instant and duration
 * begin/end, which carry none. */
struct fxt_event {
  uint32_t type; /* enum fxt_event_type */
  uint32_t num_args;
  uint64_t timestamp;
  struct fxt_thread_ref thread;
  struct fxt_str_ref category;
  struct fxt_str_ref name;
  uint64_t trailer;
  struct fxt_arg args[FXT_MAX_ARGS];
};

/* Blob record (§4.8). */
struct fxt_blob {
  struct fxt_str_ref name;
  uint8_t blob_type; /* enum fxt_blob_type */
  uint16_t size;     /* payload bytes, 0..0x7fff */
  const void *data;
};

/* Userspace object record (§4.9). For an inline process (index 0) only
 * process.process_koid is stored. */
struct fxt_userspace_object {
  uint64_t pointer;
  struct fxt_thread_ref process;
  struct fxt_str_ref name;
  uint32_t num_args;
  struct fxt_arg args[FXT_MAX_ARGS];
};

/* Kernel object record (§4.10). */
struct fxt_kernel_object {
  uint64_t koid;
  uint8_t obj_type; /* enum fxt_kobj_type */
  struct fxt_str_ref name;
  uint32_t num_args;
  struct fxt_arg args[FXT_MAX_ARGS];
};

/* Context switch (scheduling type 1, §7.1). */
struct fxt_context_switch {
  uint64_t timestamp;
  uint16_t cpu;
  uint8_t outgoing_state; /* 0..15; enum fxt_thread_state */
  uint64_t outgoing_tid;
  uint64_t incoming_tid;
  uint32_t num_args;
  struct fxt_arg args[FXT_MAX_ARGS];
};

/* Thread wakeup (scheduling type 2, §7.2). */
struct fxt_wakeup {
  uint64_t timestamp;
  uint16_t cpu;
  uint64_t waking_tid;
  uint32_t num_args;
  struct fxt_arg args[FXT_MAX_ARGS];
};

/* Legacy context switch (scheduling type 0, §7.3). */
struct fxt_legacy_context_switch {
  uint64_t timestamp;
  uint8_t cpu;
  uint8_t outgoing_state; /* 0..15 */
  struct fxt_thread_ref outgoing;
  struct fxt_thread_ref incoming;
  uint8_t outgoing_priority;
  uint8_t incoming_priority;
};

/* Log record (§4.12). */
struct fxt_log {
  uint64_t timestamp;
  struct fxt_thread_ref thread;
  uint16_t len; /* 0..0x7fff */
  const char *message;
};

/* Large blob with event metadata (format 0, §4.11). */
struct fxt_large_blob_event {
  struct fxt_str_ref category;
  struct fxt_str_ref name;
  uint64_t timestamp;
  struct fxt_thread_ref thread;
  uint32_t num_args;
  struct fxt_arg args[FXT_MAX_ARGS];
  uint64_t size; /* payload bytes */
  const void *data;
};

/* Large blob attachment (format 1, §4.11). */
struct fxt_large_blob_attachment {
  struct fxt_str_ref category;
  struct fxt_str_ref name;
  uint64_t size;
  const void *data;
};

/* A record the decoder skipped as unknown (only with FXT_DECODE_SKIP_UNKNOWN): the record's
 * bytes, fxt_record.size of them. */
struct fxt_unknown {
  const void *data;
};

/* Which member of fxt_record.u is valid. */
enum fxt_kind {
  FXT_KIND_MAGIC = 1,
  FXT_KIND_PROVIDER_INFO,
  FXT_KIND_PROVIDER_SECTION,
  FXT_KIND_PROVIDER_EVENT,
  FXT_KIND_INIT,
  FXT_KIND_STRING,
  FXT_KIND_THREAD,
  FXT_KIND_EVENT,
  FXT_KIND_BLOB,
  FXT_KIND_USERSPACE_OBJECT,
  FXT_KIND_KERNEL_OBJECT,
  FXT_KIND_CONTEXT_SWITCH,
  FXT_KIND_WAKEUP,
  FXT_KIND_LEGACY_CONTEXT_SWITCH,
  FXT_KIND_LOG,
  FXT_KIND_LARGE_BLOB_EVENT,
  FXT_KIND_LARGE_BLOB_ATTACHMENT,
  FXT_KIND_UNKNOWN
};

/* fxt_record.flags: things a valid record may carry that fxtrace's encoder never produces.
 * A record with any of these set does not re-encode to the same bytes. */
/* A string record with index 0: readers must ignore it (§4.6); the decoder did not bind it. */
#define FXT_RECORD_WARN_STRING_INDEX0 0x1u
/* An inline empty string ref (0x8000), an inline string over FXT_MAX_INLINE_STRING bytes, an
 * empty argument name or a type-10 blob argument (§5.1, §6): readable, but not canonical. */
#define FXT_RECORD_WARN_NONCANONICAL 0x2u
/* A large record of 4096 words or more: Perfetto and Fuchsia's Rust reader lose sync on it
 * (§4.11). */
#define FXT_RECORD_WARN_OVERSIZE 0x4u

/* One decoded record. Pointers inside point into the decoder's input buffer. */
struct fxt_record {
  uint32_t kind;   /* enum fxt_kind */
  uint32_t flags;  /* FXT_RECORD_WARN_* */
  uint64_t offset; /* byte offset of the record in the input */
  uint64_t size;   /* bytes, header included */
  union {
    struct fxt_provider_info provider_info;
    struct fxt_provider_section provider_section;
    struct fxt_provider_event provider_event;
    struct fxt_init init;
    struct fxt_string string;
    struct fxt_thread thread;
    struct fxt_event event;
    struct fxt_blob blob;
    struct fxt_userspace_object userspace_object;
    struct fxt_kernel_object kernel_object;
    struct fxt_context_switch context_switch;
    struct fxt_wakeup wakeup;
    struct fxt_legacy_context_switch legacy_context_switch;
    struct fxt_log log;
    struct fxt_large_blob_event large_blob_event;
    struct fxt_large_blob_attachment large_blob_attachment;
    struct fxt_unknown unknown;
  } u;
};

/* ------------------------------------------------------------------------------------------ */
/* Small helpers                                                                               */

/* Words occupied by a stream of n bytes (§1), without the n + 7 overflow. */
static inline uint64_t fxt_stream_words(uint64_t n) {
  return (n >> 3) + ((n & 7u) != 0);
}

static inline struct fxt_str_ref fxt_str_empty(void) {
  struct fxt_str_ref r;
  r.data = "";
  r.len = 0;
  r.index = 0;
  return r;
}

/* A ref to string table entry index (1..0x7fff). */
static inline struct fxt_str_ref fxt_str_index(uint16_t index) {
  struct fxt_str_ref r;
  r.data = FXT_NULL;
  r.len = 0;
  r.index = index;
  return r;
}

/* An inline string of len bytes (not NUL-terminated; len <= FXT_MAX_INLINE_STRING). */
static inline struct fxt_str_ref fxt_str_inline(const char *data, uint16_t len) {
  struct fxt_str_ref r;
  r.data = data;
  r.len = len;
  r.index = FXT_STR_REF_INLINE;
  return r;
}

static inline struct fxt_thread_ref fxt_thread_index(uint8_t index) {
  struct fxt_thread_ref t;
  t.process_koid = 0;
  t.thread_koid = 0;
  t.index = index;
  return t;
}

static inline struct fxt_thread_ref fxt_thread_inline(uint64_t process_koid,
                                                      uint64_t thread_koid) {
  struct fxt_thread_ref t;
  t.process_koid = process_koid;
  t.thread_koid = thread_koid;
  t.index = 0;
  return t;
}

/* ------------------------------------------------------------------------------------------ */
/* Encoders                                                                                    */
/*
 * Every encoder writes one record into out[0..out_size) and returns the bytes written (a
 * multiple of 8). With out == NULL it writes nothing and returns the bytes it would need.
 * Errors, checked in this order:
 *   FXT_EINVAL   invalid input: NULL record, string index > 0x7fff (or any ref value other
 *                than 0..0x7fff and FXT_STR_REF_INLINE), inline string longer than
 *                FXT_MAX_INLINE_STRING or with NULL data, more than FXT_MAX_ARGS args,
 *                unknown argument type, a type-10 blob argument, an empty argument name, a
 *                string record with index 0, a thread record with index 0, an event type
 *                above 10, a field value wider than its field (provider event id, thread
 *                state, string/log/blob lengths over 0x7fff), NULL data with a length > 0;
 *   FXT_E2BIG    the record would be FXT_MAX_RECORD_WORDS + 1 words or more (fxtrace never
 *                writes such a record, large blobs included), or an argument over 4095 words;
 *   FXT_ENOBUFS  out_size is smaller than the record (out's contents are then unspecified).
 * Words are written little-endian; streams are zero-padded to 8 bytes with no terminator.
 */

FXT_EXTERN_C_BEGIN

FXT_API int64_t fxt_encode_magic(void *out, size_t out_size);
FXT_API int64_t fxt_encode_provider_info(void *out, size_t out_size,
                                         const struct fxt_provider_info *rec);
FXT_API int64_t fxt_encode_provider_section(void *out, size_t out_size,
                                            const struct fxt_provider_section *rec);
FXT_API int64_t fxt_encode_provider_event(void *out, size_t out_size,
                                          const struct fxt_provider_event *rec);
FXT_API int64_t fxt_encode_init(void *out, size_t out_size, const struct fxt_init *rec);
FXT_API int64_t fxt_encode_string(void *out, size_t out_size, const struct fxt_string *rec);
FXT_API int64_t fxt_encode_thread(void *out, size_t out_size, const struct fxt_thread *rec);
FXT_API int64_t fxt_encode_event(void *out, size_t out_size, const struct fxt_event *rec);
FXT_API int64_t fxt_encode_blob(void *out, size_t out_size, const struct fxt_blob *rec);
FXT_API int64_t fxt_encode_userspace_object(void *out, size_t out_size,
                                            const struct fxt_userspace_object *rec);
FXT_API int64_t fxt_encode_kernel_object(void *out, size_t out_size,
                                         const struct fxt_kernel_object *rec);
FXT_API int64_t fxt_encode_context_switch(void *out, size_t out_size,
                                          const struct fxt_context_switch *rec);
FXT_API int64_t fxt_encode_wakeup(void *out, size_t out_size, const struct fxt_wakeup *rec);
FXT_API int64_t fxt_encode_legacy_context_switch(void *out, size_t out_size,
                                                 const struct fxt_legacy_context_switch *rec);
FXT_API int64_t fxt_encode_log(void *out, size_t out_size, const struct fxt_log *rec);
FXT_API int64_t fxt_encode_large_blob_event(void *out, size_t out_size,
                                            const struct fxt_large_blob_event *rec);
FXT_API int64_t fxt_encode_large_blob_attachment(void *out, size_t out_size,
                                                 const struct fxt_large_blob_attachment *rec);

/* Encodes a decoded record by its kind (FXT_EINVAL for FXT_KIND_UNKNOWN or a bad kind). */
FXT_API int64_t fxt_encode_record(void *out, size_t out_size, const struct fxt_record *rec);

/* One argument alone (header, inline name stream, value), as it appears inside a record.
 * Same return values as the record encoders (FXT_E2BIG past FXT_MAX_ARG_WORDS). */
FXT_API int64_t fxt_encode_arg(void *out, size_t out_size, const struct fxt_arg *arg);

/* Bytes the argument occupies (a multiple of 8), or FXT_EINVAL / FXT_E2BIG as above. */
FXT_API int64_t fxt_arg_size(const struct fxt_arg *arg);

FXT_EXTERN_C_END

/* ------------------------------------------------------------------------------------------ */
/* Decoder                                                                                     */

/* One entry of the decoder's string table; members are private. The table is caller storage
 * of FXT_STRING_TABLE_SIZE entries (about 512 KiB on 64-bit targets): it may be static or
 * heap memory, need not be initialized, and must stay untouched while the decoder is in use.
 * One table serves one decoder at a time. */
struct fxt_str_slot {
  const char *data;
  uint32_t gen; /* bound while equal to the decoder's generation */
  uint16_t len;
};

/* One entry of the thread table (inside the decoder); members are private. */
struct fxt_thread_slot {
  uint64_t process_koid;
  uint64_t thread_koid;
  uint32_t gen;
};

/* fxt_decoder_set_options flags. */
/* Do not require the magic record first (e.g. to decode a ring buffer's contents). */
#define FXT_DECODE_NO_MAGIC 0x1u
/* Return records of unknown type (10..14), unknown event type (11..15) and unknown metadata,
 * trace info, scheduling or large subtypes as FXT_KIND_UNKNOWN (skipped by their size)
 * instead of failing with FXT_ENOSYS. An unknown argument type still fails: the record it is
 * in is known, and returning it without that argument would misrepresent it. */
#define FXT_DECODE_SKIP_UNKNOWN 0x2u

#define FXT_DECODER_MSG_SIZE 120u

/* Room for the tables of one more provider (fxt_decoder_add_tables): a string table and a
 * thread table, about 518 KiB on 64-bit targets. Members are private; the storage must be all
 * zero bytes when given (static storage, calloc, an anonymous mapping: its pages are touched
 * only where the provider binds something). */
struct fxt_provider_tables {
  struct fxt_str_slot strings[FXT_STRING_TABLE_SIZE];
  struct fxt_thread_slot threads[FXT_MAX_THREAD_INDEX + 1];
};

/* Providers a decoder keeps tables for at once: the first (fxt_decoder_init's string table)
 * and up to this many minus one more (fxt_decoder_add_tables). */
#define FXT_DECODER_MAX_PROVIDERS 64u

/* Storage for the tables of one more provider, all zero bytes, that stays valid while the
 * decoder is used; NULL when there is none (fxt_decoder_add_tables). */
typedef struct fxt_provider_tables *(*fxt_decoder_tables_fn)(void *ctx);

/* One provider whose tables the decoder keeps (inside the decoder); members are private. */
struct fxt_decoder_provider {
  struct fxt_str_slot *strings;
  struct fxt_thread_slot *threads;
  uint64_t last_used; /* when it was last made current: the least recent is reused first */
  uint32_t id;
  uint32_t gen; /* its slots are bound while their generation equals this */
};

/* Decoder state. Treat every member as private; the definition is public so a decoder can be
 * placed on the stack or in static storage (about 8 KiB, the 255-entry thread table and the
 * providers' list). It points into itself: do not copy it after fxt_decoder_init. */
struct fxt_decoder {
  const unsigned char *buf;
  uint64_t len;
  uint64_t pos; /* offset of the next record */
  struct fxt_str_slot *strings;    /* the current provider's tables: provs[cur]'s */
  struct fxt_thread_slot *threads;
  uint32_t gen;         /* provs[cur].gen */
  uint32_t options;     /* FXT_DECODE_* */
  uint32_t provider_id; /* provider whose tables are current */
  int error;            /* sticky: 0, or the error every later call returns */
  uint64_t records;
  uint64_t warnings;
  uint64_t strings_bound;
  uint64_t threads_bound;
  fxt_decoder_tables_fn get_tables; /* fxt_decoder_add_tables' */
  void *tables_ctx;
  uint32_t nprovs;                  /* entries of provs in use */
  uint32_t cur;                     /* the current provider's entry */
  uint32_t named;                   /* 0 until a provider info or section record */
  uint64_t switches;                /* clock of provs[].last_used */
  struct fxt_decoder_provider provs[FXT_DECODER_MAX_PROVIDERS];
  struct fxt_thread_slot first_threads[FXT_MAX_THREAD_INDEX + 1]; /* provs[0]'s */
  char msg[FXT_DECODER_MSG_SIZE]; /* message of the sticky error */
};

/* Counters of a decoder (records and bytes decoded successfully so far). */
struct fxt_decoder_stats {
  uint64_t records;       /* records returned */
  uint64_t bytes;         /* bytes of those records (= offset of the next record) */
  uint64_t warnings;      /* records returned with a non-zero fxt_record.flags */
  uint64_t strings_bound; /* string records that bound a table entry */
  uint64_t threads_bound; /* thread records */
};

FXT_EXTERN_C_BEGIN

/* Starts decoding buf[0..len) (any alignment; it must outlive the decoder and the records it
 * returns). string_table: caller storage of FXT_STRING_TABLE_SIZE entries, cleared here.
 * Options default to strict: magic record first, unknown types rejected.
 * Returns 0, or FXT_EINVAL when d or string_table is NULL, or buf is NULL with len > 0. */
FXT_API int fxt_decoder_init(struct fxt_decoder *d, const void *buf, size_t len,
                             struct fxt_str_slot *string_table);

/* Sets FXT_DECODE_* options (before the first fxt_decoder_next). Returns 0 or FXT_EINVAL
 * for unknown bits. */
FXT_API int fxt_decoder_set_options(struct fxt_decoder *d, uint32_t options);

/* Lets the decoder keep each provider's string and thread tables while others' records come
 * between (a provider section record switches back to them, §4.3): when it meets a provider it
 * has no tables for, it calls get(ctx) for storage (at most FXT_DECODER_MAX_PROVIDERS - 1
 * times). Without this call, when get returns NULL, or when more providers than that
 * interleave, the tables of the provider made current the longest ago are reused, as they
 * were without this call: a provider section record for a provider whose tables were reused
 * starts it with empty ones. Before the first fxt_decoder_next. Returns 0, or FXT_EINVAL
 * (d or get NULL, or after the first record). */
FXT_API int fxt_decoder_add_tables(struct fxt_decoder *d, fxt_decoder_tables_fn get, void *ctx);

/* Decodes the next record into *rec.
 * Returns 1 with a record; 0 at the clean end of the input (every byte consumed);
 *   FXT_EBADMSG  malformed input: truncated record, size 0, fields past the declared size,
 *                unconsumed words, wrong argument size, reserved bits or padding not zero, bool
 *                with bits other than 32, undefined string or thread ref, thread record with
 *                index 0, bad or missing magic record;
 *   FXT_ENOSYS   a record, subtype, event type or argument type this decoder does not know;
 *   FXT_EINVAL   d or rec is NULL.
 * On error err (if err_size > 0) receives a NUL-terminated message "offset N: reason", N being
 * the byte offset of the offending record or word; the decoder then stays failed and returns
 * the same error and message on every later call. String records bind the string table
 * (except index 0: returned with FXT_RECORD_WARN_STRING_INDEX0, not bound); thread records
 * bind the thread table; refs in other records are resolved as they are decoded. Tables are
 * per provider (§4.3): a provider info record registers its provider afresh, with empty
 * tables; a provider section record makes its provider's tables current again, as they were
 * (empty for a provider not seen yet; see fxt_decoder_add_tables for how many are kept). */
FXT_API int fxt_decoder_next(struct fxt_decoder *d, struct fxt_record *rec, char *err,
                             size_t err_size);

/* The text bound to string table index (1..0x7fff) now. Returns 0 with *data and *len set (index
 * 0: ""), or FXT_ENOENT when the index is not bound, FXT_EINVAL for an index over 0x7fff. */
FXT_API int fxt_decoder_string(const struct fxt_decoder *d, uint32_t index, const char **data,
                               size_t *len);

/* The koids bound to thread table index (1..255) now; FXT_ENOENT when not bound, FXT_EINVAL
 * for index 0. */
FXT_API int fxt_decoder_thread(const struct fxt_decoder *d, uint32_t index,
                               uint64_t *process_koid, uint64_t *thread_koid);

FXT_API void fxt_decoder_stats(const struct fxt_decoder *d, struct fxt_decoder_stats *st);


/* ---- UTF-8 (FXT strings are UTF-8: Fuchsia's reader refuses a file at a string that is not
 * well-formed, RFC 3629) ---- */

/* The offset of the first byte of s[0..n) that does not begin a well-formed sequence (a
 * sequence cut by the end counts as not well-formed); n when all of it is well-formed. */
FXT_API size_t fxt_utf8_valid(const char *s, size_t n);

/* n, or less when s[0..n) ends inside a multi-byte sequence: the length without that
 * sequence's bytes. For a string cut at a bound (the emit path calls it only then): the cut
 * lands on a character boundary. Looks at s[n-4..n) at most. */
FXT_API uint32_t fxt_utf8_cut(const char *s, uint32_t n);

/* Copies s[0..n) to dst as well-formed UTF-8, each byte that begins no well-formed sequence
 * replaced by U+FFFD (3 bytes), stopping before a character that would not fit in cap bytes.
 * Returns the bytes written. */
FXT_API size_t fxt_utf8_sanitize(char *dst, size_t cap, const char *s, size_t n);

FXT_EXTERN_C_END

/* The text of a ref from a decoded record (resolved when the record was decoded). */
static inline const char *fxt_str_text(const struct fxt_str_ref *ref, size_t *len) {
  *len = ref->len;
  return ref->data ? ref->data : "";
}

#endif /* FXTRACE_FXT_H */
