/* fxtrace/fxt_decode.h - the strict streaming FXT decoder. Embedder API (part of the codec:
 * fxtrace/fxt.h includes it; it may also be included alone).
 *
 * Freestanding, as the rest of the codec (src/core/fxt_decode.c, fxt_decode_fields.c).
 * In libfxtrace.a only (fxtrace::fxtrace_static): libfxtrace.so, which traced processes map,
 * does not export a reader (src/fxtrace.map).
 */
#ifndef FXTRACE_FXT_DECODE_H
#define FXTRACE_FXT_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "errors.h"
#include "fxt.h"

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
FXT_EXTERN_C_END

/* The text of a ref from a decoded record (resolved when the record was decoded). */
static inline const char *fxt_str_text(const struct fxt_str_ref *ref, size_t *len) {
  *len = ref->len;
  return ref->data ? ref->data : "";
}

#endif /* FXTRACE_FXT_DECODE_H */
