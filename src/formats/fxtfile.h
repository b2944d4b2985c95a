/* src/formats/fxtfile.h - reader of fxtrace FXT files (docs/fxt-conventions.md).
 *
 * fxtf_open() maps a file (fxtf_load() takes a buffer) and reads it once with the strict
 * decoder, collecting per provider (one per process of a multi-process file): its string
 * table, tracepoint descriptions, process and thread names, clock-sync records and, for every
 * event, a 24-byte index entry (file offset, CLOCK_MONOTONIC ns, thread, CPU). Bookkeeping
 * records (`kernel:meta`) are not events: losses are attached to the thread's next event (a
 * loss with a `cpu` argument, a kernel CPU buffer's, to the provider's next event on that
 * CPU, whatever its thread), CPU records set the thread's CPU, clock syncs map ticks to
 * nanoseconds. The entries are then sorted by time (ties keep file order), and
 * fxtf_event_at() re-reads the i-th event on demand, so memory stays at the index plus the
 * mapped file, whatever the number of events.
 *
 * A torn tail - the file ends inside a record, as a writer that stopped mid-write leaves it (a
 * full disk, a crash) - is not an error: the reader keeps every record before it and says
 * where it is (fxtf_torn); callers warn, or refuse the file when asked to be strict.
 *
 * Errors: functions return 0 or a negative FXT_E* code and write "offset N: reason" (or a
 * plain reason when no offset applies: I/O) into the caller's err buffer.
 *   FXT_EBADMSG  malformed input (decoder errors, bad tracepoint descriptions, bookkeeping
 *                records without their arguments, a string index re-bound to other text)
 *   FXT_ENOSYS   a record type the decoder does not know
 *   FXT_ENOENT   the file cannot be opened or mapped
 *   FXT_ENOMEM   out of memory
 *   FXT_EINVAL   NULL arguments
 * Nothing here is thread-safe; one fxtf_file per thread.
 */
#ifndef FXTRACE_FORMATS_FXTFILE_H
#define FXTRACE_FORMATS_FXTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fxtrace/fxt.h>
#include <fxtrace/tracepoint.h>

#include "../base/fxtf_clock.h" /* the event model (fxtf_event.h), fxtf_ticks_to_ns */

#define FXTF_ERR_SIZE 256u

struct fxtf_name_count {
  struct fxtf_text system, name;
  uint64_t count;
};

/* Losses of one CPU (loss records with a `cpu` argument) that no later event of their
 * provider on that CPU stands behind. */
struct fxtf_cpu_loss {
  uint32_t provider; /* index */
  uint32_t cpu;
  uint64_t records;
  bool unknown; /* and some more, of an unknown count */
};

struct fxtf_totals {
  uint64_t records; /* every record decoded */
  uint64_t events;
  uint64_t dropped, overrun, lost;
  uint64_t trailing_lost; /* threads' and CPUs' */
  uint32_t providers;
  uint32_t threads; /* threads with events or losses */
};

/* What a `kernel:meta` record is (docs/fxt-conventions.md, bookkeeping records). */
enum fxtf_meta_kind {
  FXTF_META_NONE = 0, /* not a kernel:meta record: an event */
  FXTF_META_DROP_STATS,
  FXTF_META_OVERRUN,
  FXTF_META_LOST,
  FXTF_META_CPU,
  FXTF_META_CLOCK_SYNC,
  FXTF_META_DROPPED,
  FXTF_META_OTHER /* a kernel:meta name this reader does not know: ignored */
};

struct fxtf_meta {
  enum fxtf_meta_kind kind;
  int want_type;      /* the FXT event type the conventions give it; -1 for none */
  uint64_t records;   /* drop_stats, overrun, lost: num_records */
  bool count_unknown; /* drop_stats, overrun, lost: bool `count_unknown` true (more were lost
                         than num_records says: a trace.dat page without its count) */
  bool has_cpu;       /* drop_stats, overrun, lost: a `cpu` argument (a CPU's losses) */
  uint32_t cpu;       /* cpu; a loss's `cpu` */
  struct fxtf_sync sync;
};

struct fxtf_file;

/* Maps path and reads it; *out is NULL on failure. */
int fxtf_open(const char *path, struct fxtf_file **out, char *err, size_t err_size);
/* Reads buf[0..len) (not copied: it must outlive the fxtf_file). */
int fxtf_load(const void *buf, size_t len, struct fxtf_file **out, char *err, size_t err_size);
void fxtf_close(struct fxtf_file *f);

size_t fxtf_event_count(const struct fxtf_file *f);
/* The i-th event in time order (0 <= i < fxtf_event_count). Returns 0, FXT_EINVAL for a bad i
 * or FXT_EBADMSG should the record no longer read as it did (not for files fxtf_load took). */
int fxtf_event_at(const struct fxtf_file *f, size_t i, struct fxtf_event *out, char *err,
                  size_t err_size);

uint32_t fxtf_provider_count(const struct fxtf_file *f);
const struct fxtf_provider *fxtf_provider(const struct fxtf_file *f, uint32_t i);
/* Every thread seen (named, with events or with losses); an array of *n. */
const struct fxtf_thread *fxtf_threads(const struct fxtf_file *f, uint32_t *n);
/* CPU losses after their CPU's last event in their provider, in the order of their first
 * record; an array of *n. */
const struct fxtf_cpu_loss *fxtf_trailing_cpu_losses(const struct fxtf_file *f, size_t *n);
void fxtf_totals(const struct fxtf_file *f, struct fxtf_totals *t);
/* Events per system:event over all providers, most frequent first (ties: by name). *out is
 * malloc'ed (free it); 0 or FXT_ENOMEM. */
int fxtf_name_counts(const struct fxtf_file *f, struct fxtf_name_count **out, size_t *n);

/* The offset of the torn tail (the record the file ends inside), or UINT64_MAX when the file
 * ends on a record boundary; what follows that offset was not read. */
uint64_t fxtf_torn(const struct fxtf_file *f);
/* Whether a decoder of buf[0..len) that failed with the record at pos (fxt_decoder_stats'
 * `bytes`) failed on a torn tail: the record there runs past len (its header word cut, or its
 * size beyond the end). Every record before pos is then intact. pos 0 is never torn: a file
 * without its magic record is not an FXT file. Every reader of fxtrace files (this one, the
 * converters, `fxtrace check`) stops at a torn tail the same way. */
bool fxtf_torn_at(const void *buf, size_t len, uint64_t pos);

/* The tables of the providers a decoder meets after its first (fxtf_decoder_init). */
struct fxtf_tables {
  struct fxt_provider_tables *v[FXT_DECODER_MAX_PROVIDERS - 1];
  uint32_t n;
};
/* fxt_decoder_init, and the decoder keeps the string and thread tables of up to
 * FXT_DECODER_MAX_PROVIDERS providers at once (fxt_decoder_add_tables), as every reader of a
 * file whose processes' writes interleave needs: each in an anonymous mapping made when the
 * decoder meets a provider (only pages where it binds something are touched), in *more, which
 * fxtf_tables_free frees after the decoder (also when this fails). */
int fxtf_decoder_init(struct fxt_decoder *d, const void *buf, size_t len,
                      struct fxt_str_slot *table, struct fxtf_tables *more);
void fxtf_tables_free(struct fxtf_tables *more);

/* Lookups, for `fxtrace check`'s own pass over the file (fxtf_data). */
const void *fxtf_data(const struct fxtf_file *f, size_t *len);
/* The provider whose records include offset; UINT32_MAX for none (before the first). */
uint32_t fxtf_provider_at(const struct fxtf_file *f, uint64_t offset);
/* A thread's index in fxtf_threads(), or -1. */
int64_t fxtf_thread_find(const struct fxtf_file *f, uint32_t provider, uint64_t pid,
                         uint64_t tid);
/* The system:event id (0 <= id < fxtf_name_ids(f)) of an event record of provider, or -1. */
int64_t fxtf_name_find(const struct fxtf_file *f, uint32_t provider, const struct fxt_str_ref *cat,
                       const struct fxt_str_ref *name);
uint32_t fxtf_name_ids(const struct fxtf_file *f);
/* The (latest) description of name id in provider, or NULL. */
const struct fxtf_desc *fxtf_desc_find(const struct fxtf_file *f, uint32_t provider, int64_t name);


/* Helpers shared with `fxtrace check`, which walks files with its own decoder. */

/* True when rec is a blob named fxtrace:tracepoint. */
bool fxtf_is_desc(const struct fxt_record *rec);
/* Parses a tracepoint description; d resolves its string refs (the decoder that returned rec,
 * before it decodes anything else). */
int fxtf_parse_desc(const struct fxt_decoder *d, const struct fxt_record *rec,
                    struct fxtf_desc *out, char *err, size_t err_size);
/* Classifies an event record; for bookkeeping records checks and extracts their arguments
 * (FXT_EBADMSG when one is missing or of the wrong type). */
int fxtf_parse_meta(const struct fxt_record *rec, struct fxtf_meta *out, char *err,
                    size_t err_size);
/* True when the text equals the NUL-terminated s. */
bool fxtf_text_is(struct fxtf_text t, const char *s);
bool fxtf_str_is(const struct fxt_str_ref *r, const char *s);

#endif /* FXTRACE_FORMATS_FXTFILE_H */
