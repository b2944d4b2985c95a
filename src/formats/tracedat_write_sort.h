/* src/formats/tracedat_write_sort.h - the trace.dat writer's events in (cpu, time, file offset)
 * order, in bounded memory: an external merge sort.
 *
 * Records (a key and up to FXT_TD_SORT_MAX_PAYLOAD bytes of payload) are collected in a run of
 * at most run_bytes; a full run is sorted and appended to a temporary file (created unlinked
 * in tmpdir: nothing is left behind, whatever happens), and a new run starts. Reading merges
 * the runs with a heap, each file run through its own small read buffer; the last run stays in
 * memory. The same order can be read any number of times (fxt_td_sort_rewind).
 *
 * Memory: run_bytes for the run's records, 24 bytes per record of the run for its sort index,
 * and per file run a read buffer (FXT_TD_SORT_READ_BYTES). Disk: 32 bytes per record plus its
 * payload rounded up to 8.
 *
 * Errors: 0 or a negative FXT_E* code with a message in err (when not NULL):
 *   FXT_ENOMEM  out of memory;  FXT_ENOSPC  the temporary file could not be created, written or
 *   read back (the message says why);  FXT_E2BIG  a payload over FXT_TD_SORT_MAX_PAYLOAD;
 *   FXT_EINVAL  adding after fxt_td_sort_finish, or reading before it.
 * One thread at a time per sorter.
 */
#ifndef FXTRACE_FORMATS_TRACEDAT_WRITE_SORT_H
#define FXTRACE_FORMATS_TRACEDAT_WRITE_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FXT_TD_SORT_MAX_PAYLOAD 4096u
#define FXT_TD_SORT_READ_BYTES (32u * 1024u)
#define FXT_TD_SORT_ERR_SIZE 160u

/* fxt_td_sort_key.flags */
#define FXT_TD_SORT_TOO_BIG 0x1u /* an event no page can hold: no payload, counted as missed */
#define FXT_TD_SORT_LOST_UNKNOWN 0x2u /* more than `lost` were lost before it: how many, unknown */

struct fxt_td_sort_key {
  uint64_t ns;   /* the event's time */
  uint64_t seq;  /* unique, ascending in input order: breaks ties of time (file offset) */
  uint64_t lost; /* events lost just before it on its thread or its CPU */
  uint16_t cpu;
  uint16_t flags; /* FXT_TDKEY_* */
  uint32_t size;  /* payload bytes */
};

struct fxt_td_sort_run {
  uint64_t start, end; /* bytes of the temporary file */
};

struct fxt_td_sort_cursor;

struct fxt_td_sort {
  size_t run_bytes;
  const char *tmpdir;
  unsigned char *arena; /* the current run's records: key, payload, zeros to 8 bytes */
  size_t arena_len;
  struct fxt_td_sort_ent *ents; /* its sort index */
  size_t nents, cap_ents;
  int fd; /* the temporary file, -1 until the first run is spilled */
  uint64_t file_len;
  struct fxt_td_sort_run *runs;
  size_t nruns, cap_runs;
  bool finished;
  struct fxt_td_sort_cursor *cur; /* nruns file cursors, then the memory run */
  uint32_t *heap;                /* cursor indices, least key first */
  uint32_t nheap;
  bool pending; /* the top cursor's record was returned: move it on at the next call */
  uint64_t records;
  char err[FXT_TD_SORT_ERR_SIZE];
};

/* run_bytes: 0 for 8 MiB (64 KiB to 1 GiB are used); tmpdir: NULL for $TMPDIR, else /tmp. */
int fxt_td_sort_init(struct fxt_td_sort *s, size_t run_bytes, const char *tmpdir);
int fxt_td_sort_add(struct fxt_td_sort *s, const struct fxt_td_sort_key *k, const void *payload);
/* Ends adding; the records can now be read. */
int fxt_td_sort_finish(struct fxt_td_sort *s);
/* Starts reading from the first record again. */
int fxt_td_sort_rewind(struct fxt_td_sort *s);
/* The next record: 1 with *k and *payload (valid until the next call), 0 after the last. */
int fxt_td_sort_next(struct fxt_td_sort *s, struct fxt_td_sort_key *k, const void **payload);
/* Frees everything and closes (so deletes) the temporary file. */
void fxt_td_sort_free(struct fxt_td_sort *s);

#endif /* FXTRACE_FORMATS_TRACEDAT_WRITE_SORT_H */
