/* fxtrace/fxt.h - the FXT (Fuchsia trace format) codec: value types, encoders and a strict
 * streaming decoder. Embedder API.
 *
 * The codec is in three headers, by concern; this one includes the other two, so including it
 * alone gives all of it, as it always did:
 *   fxtrace/fxt_layout.h   constants, the field table of every header word, wire enumerations
 *   fxtrace/fxt.h          value types, small helpers, the encoders, UTF-8
 *   fxtrace/fxt_decode.h   the decoder
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
#include "fxt_layout.h"

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

/* ---- UTF-8 (FXT strings are UTF-8: Fuchsia's reader refuses a file at a string that is not
 * well-formed, RFC 3629) ---- */

/* The offset of the first byte of s[0..n) that does not begin a well-formed sequence (a
 * sequence cut by the end counts as not well-formed); n when all of it is well-formed. */
FXT_API size_t fxt_utf8_valid(const char *s, size_t n);

/* n, or less when s[0..n) ends inside a multi-byte sequence: the length without that
 * sequence's bytes. For a string cut at a bound (the emit path calls it only then): the cut
 * lands on a character boundary. Looks at s[n-4..n) at most. */
FXT_API uint32_t fxt_utf8_cut(const char *s, uint32_t n) FXT_NOEXCEPT;

/* Copies s[0..n) to dst as well-formed UTF-8, each byte that begins no well-formed sequence
 * replaced by U+FFFD (3 bytes), stopping before a character that would not fit in cap bytes.
 * Returns the bytes written. */
FXT_API size_t fxt_utf8_sanitize(char *dst, size_t cap, const char *s, size_t n);
FXT_EXTERN_C_END

#include "fxt_decode.h"

#endif /* FXTRACE_FXT_H */
