/* src/formats/fxtfile_int.h - internals shared by fxtfile.c (loading: the one decoding pass)
 * and fxtfile_index.c (lookup tables, time sort, re-reading events).
 */
#ifndef FXTRACE_FORMATS_FXTFILE_INT_H
#define FXTRACE_FORMATS_FXTFILE_INT_H

#include "../base/errmsg.h"
#include "../core/fxt_decode_int.h" /* the decoder's inline pieces: record size, values */
#include "fileio.h"
#include "fxtfile.h"

/* One entry of a provider's string table: text inside the file. Indices are bound once per
 * process (docs/fxt-conventions.md), so the table at the end of the provider resolves every
 * ref of its events and events can be re-read in any order. */
struct fxtf_strslot {
  const char *data;
  uint16_t len;
  bool bound;
};

struct fxtf_prov {
  struct fxtf_provider pub;
  struct fxtf_strslot *strings;
  uint32_t nstrings; /* entries allocated: highest bound index + 1 at most 0x8000 */
  size_t first_entry;
  struct fxtf_clockmap map; /* set when the file ends */
  struct fxtf_clockseg seg; /* map's line of the latest entry converted */
  struct fxtf_sync *sync_arr; /* pub.syncs: every clock sync, sync_cap allocated */
  uint32_t sync_cap;
};

/* From offset on, the records are provider prov's (until the next run). */
struct fxtf_run {
  uint64_t offset;
  uint32_t prov;
};

/* The per-event index: 24 bytes, the only memory that grows with the number of events. */
#define FXTF_ENTRY_LOSS 0x1u /* a loss precedes it: see fxtf_file.losses */
#define FXTF_ENTRY_CPU_UNKNOWN 0xffffu
struct fxtf_entry {
  uint64_t ns; /* ticks until its provider ends, then CLOCK_MONOTONIC ns */
  uint64_t offset;
  uint32_t thread;
  uint16_t cpu; /* FXTF_ENTRY_CPU_UNKNOWN, or min(cpu, 0xfffe) */
  uint16_t flags;
};

/* Records lost before the event at offset (sorted by offset: appended in file order). */
struct fxtf_loss {
  uint64_t offset;
  uint64_t records;
  bool unknown; /* and some more, of an unknown count */
};

/* Open-addressing map of ids (indices of one of the arrays below): a slot holds
 * (hash32 << 32) | (id + 1), 0 when free; equality is decided by the caller's callback. */
struct fxtf_idmap {
  uint64_t *slots;
  uint32_t mask, count;
};

/* An integer key and its value, for two maps:
 *  - evkeys: (provider << 32 | category ref << 16 | name ref) of events with table refs ->
 *    system:event name id, so an event costs one integer lookup rather than hashing its text;
 *  - desckeys: (provider << 32 | name id) -> description index (the latest one). */
struct fxtf_kv {
  uint64_t key;
  uint32_t value;
};

struct fxtf_name {
  struct fxtf_text system, name;
  uint64_t count;
};

struct fxtf_file {
  const unsigned char *buf;
  size_t len;
  struct fxt_fio_in file; /* fxtf_open's mapping; empty otherwise */
  uint64_t records;
  uint64_t torn; /* fxtf_torn: offset of the torn tail, UINT64_MAX none (len is then torn) */

  struct fxtf_prov *provs;
  uint32_t nprovs, cap_provs;
  uint32_t cur;     /* the current provider while loading */
  bool interleaved; /* a provider section returned to a provider after another's records */
  struct fxtf_run *runs; /* where each provider's records start again, in file order */
  size_t nruns, cap_runs;
  struct fxtf_thread *threads;
  uint32_t nthreads, cap_threads;
  struct fxtf_desc *descs;
  uint32_t ndescs, cap_descs;
  struct fxtf_name *names;
  uint32_t nnames, cap_names;
  struct fxtf_kv *evkeys, *desckeys;
  uint32_t nevkeys, cap_evkeys, ndesckeys, cap_desckeys;
  struct fxtf_entry *entries;
  size_t nentries, cap_entries;
  bool entries_mapped; /* entries is a mapping of cap_entries entries (fxtfile.c), not malloc'ed */
  struct fxtf_loss *losses;
  size_t nlosses, cap_losses;
  /* CPU losses not yet before an event: those of [cpu_open, ncpu_losses) of the current
   * provider, for its next event on their CPU; those before cpu_open (providers that ended:
   * while no provider section has returned to an earlier provider, a provider info record
   * ends those before it; after, none ends before the file does), and all at the end of the
   * file, trailing. */
  struct fxtf_cpu_loss *cpu_losses;
  size_t ncpu_losses, cap_cpu_losses, cpu_open;

  struct fxtf_idmap thread_map, name_map, evkey_map, desc_map;
  /* fxtf_event_at's last description lookup, by an evkeys key (events with table refs):
   * consecutive events are mostly of one kind. Written through the const file it reads (not
   * thread-safe, as nothing here is). */
  bool look_valid;
  uint64_t look_key;
  const struct fxtf_desc *look_desc;
  uint32_t ref_cache[FXT_MAX_THREAD_INDEX + 1]; /* thread ref -> thread id + 1, 0 unknown */
};

/* Grows *p (of *cap elements of elem bytes) to hold need; 0 or FXT_ENOMEM. */
int fxtf_grow(void **p, uint32_t *cap, uint64_t need, size_t elem);
int fxtf_grow_size(void **p, size_t *cap, size_t need, size_t elem);

/* Find-or-add; return the id or FXT_ENOMEM. */
int64_t fxtf_thread_get(struct fxtf_file *f, uint32_t provider, uint64_t pid, uint64_t tid);
int64_t fxtf_name_get(struct fxtf_file *f, struct fxtf_text system, struct fxtf_text name);
/* The name id of an event record's category and name (refs as a decoded record has them). */
int64_t fxtf_event_name_get(struct fxtf_file *f, uint32_t provider, const struct fxt_str_ref *cat,
                            const struct fxt_str_ref *name);
/* Adds a description (latest wins for its system:event); 0 or FXT_ENOMEM. */
int fxtf_desc_add(struct fxtf_file *f, const struct fxtf_desc *d);

/* Sorts entries by (ns, offset); 0 or FXT_ENOMEM. */
int fxtf_sort_entries(struct fxtf_file *f);

void fxtf_free_tables(struct fxtf_file *f);

/* The providers of a file as the exporters (json.c, tracedat_write.c) follow them over two passes,
 * split exactly as fxtf_open splits them: a provider info record starts one; a provider
 * section returns to the latest one of its id (starts one when there is none); a record that
 * needs a provider before any (initialization, string, event, tracepoint description, kernel
 * object) starts an anonymous one, id 0. The first pass adds them (and collects each one's
 * clock syncs into p), the second enters them again. */
struct fxtf_seg {
  struct fxtf_provider p;
  struct fxtf_clockmap map; /* the caller sets it from p between the passes */
  struct fxtf_sync *sync_arr; /* p.syncs: every clock sync of the segment (fxtf_seg_add_sync) */
  uint32_t sync_cap;
};
struct fxtf_segs {
  struct fxtf_seg *v;
  uint32_t n, cap;
  uint32_t cur;  /* the current provider + 1; 0 before the first */
  uint32_t seen; /* providers started so far in this pass */
};
/* A clock sync of provider p, kept with the others (p->first_sync, last_sync, nsyncs, syncs) in
 * *arr (*cap allocated), so that every reader maps ticks the same way (fxtf_ticks_to_ns).
 * 0 or FXT_ENOMEM. */
int fxtf_sync_add(struct fxtf_provider *p, struct fxtf_sync **arr, uint32_t *cap,
                  const struct fxtf_sync *s);
/* The same for segment g. */
int fxtf_seg_add_sync(struct fxtf_seg *g, const struct fxtf_sync *s);
/* Frees the segments and their syncs. */
void fxtf_segs_free(struct fxtf_segs *segs);
/* Follows rec: 1 when it started a provider (per-provider state starts afresh), 2 when it
 * returned to one started before (whose records continue after another's), 0 when neither,
 * FXT_ENOMEM, or FXT_EBADMSG when the second pass meets a provider the first did not add. */
int fxtf_segs_step(struct fxtf_segs *s, const struct fxt_record *rec, bool add);
/* Starts the second pass. */
static inline void fxtf_segs_rewind(struct fxtf_segs *s) { s->cur = s->seen = 0; }

/* An exporter's input (json.c, tracedat_write.c) and its passes over it: a decoder with the
 * tables of every provider (fxtf_decoder_init) hands each record to fn(ctx) in rec until fn or
 * the decoder fails; every 8 MiB the bytes done with go to release; a torn tail (fxtf_torn_at)
 * ends the input, as in every reader, unless strict. The exporter sets the fields above dec
 * once (fxtf_pass_init, then the options) and rewinds its own per-pass state
 * (fxtf_segs_rewind) before each pass. */
struct fxtf_pass {
  const unsigned char *buf;
  size_t len;     /* the input's length: cut to a torn tail's offset, which goes in *torn */
  uint64_t *torn; /* the exporter's stats */
  char *err;      /* the decoder's message; emptied when a torn tail ends the input */
  size_t err_size;
  struct fxt_str_slot *table; /* the first provider's string table */
  void (*release)(void *ctx, uint64_t from, uint64_t to); /* NULL: none */
  void *release_ctx;
  bool strict;
  /* How far release goes after each record: false, to the start of the record fn was just
   * given (trace.dat keeps pointers into it); true, through its end once fn took it (JSON). */
  bool release_taken;
  struct fxt_decoder dec;
  struct fxt_record rec; /* the record fn is given */
};
/* The input buf[0..len), the first provider's string table, the exporter's torn tail offset and
 * error message; no release, not strict. */
void fxtf_pass_init(struct fxtf_pass *p, const void *buf, size_t len, struct fxt_str_slot *table,
                    uint64_t *torn, char *err, size_t err_size);
/* 0, fn's first non-zero return, or the decoder's error (its message in err). */
int fxtf_pass(struct fxtf_pass *p, int (*fn)(void *ctx), void *ctx);

#endif /* FXTRACE_FORMATS_FXTFILE_INT_H */
