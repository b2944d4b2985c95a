/* src/formats/tracedat_read.h - reader of trace-cmd's trace.dat, versions 6 and 7 (uncompressed),
 * as the real kernel's `trace-cmd record` writes it (spec tracedat.md).
 *
 * Three layers, each usable alone (and tested alone):
 *  - the page decoder (tracedat_read_page.c): one ring-buffer page of one CPU, record by record,
  * with the
 *    kernel's time rules (TIME_EXTEND adds, TIME_STAMP replaces, padding never moves time);
 *  - the format parser (tracedat_read_format.c): an events/<sys>/<event>/format text to its fields,
  * and
 *    a field's value out of a record;
 *  - the file (tracedat_read.c): headers, event formats, saved cmdlines, options (trace clock,
 *    DATE / OFFSET / TSC2NSEC offsets, CPUSTAT), the CPU data of every buffer instance;
 *  - the iterator (tracedat_read_iter.c) that merges all CPUs' records by time.
 *
 * The whole file is one caller buffer (mapped); nothing is copied out of it, so every pointer
 * returned points into it and stays valid while it does. Every length and count read from the
 * file is checked against the bytes that are really there before anything is allocated for
 * it, so memory is bounded by a small multiple of the file size whatever the file says.
 *
 * Errors: functions return 0 (or 1 where documented) or a negative FXT_E* code, and write
 * "offset N: reason" into the caller's err buffer, N being the file offset of what was wrong.
 *   FXT_EBADMSG  malformed or truncated input
 *   FXT_ENOSYS   a valid file this reader does not read: compressed v7, latency format, another
 *                version
 *   FXT_ENOMEM   out of memory
 *   FXT_EINVAL   NULL arguments
 * Nothing here is thread-safe; one fxt_td_file per thread.
 */
#ifndef FXTRACE_FORMATS_TRACEDAT_READ_H
#define FXTRACE_FORMATS_TRACEDAT_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fxtrace/errors.h>

#include "tracedat_page.h" /* FXT_TD_MISSED_*, FXT_TD_COMMIT_MASK: the page commit word */

#define FXT_TD_ERR_SIZE 256u
/* The first 10 bytes of every trace.dat: 0x17 0x08 0x44 "tracing". */
#define FXT_TD_MAGIC "\x17\x08\x44tracing"
#define FXT_TD_MAGIC_LEN 10u

/* True when buf starts with the trace.dat magic. */
bool fxt_td_is_tracedat(const void *buf, size_t len);

/* ---- ring-buffer pages (tracedat_read_page.c) ------------------------------------------------ */

/* How pages are laid out, from header_page (spec §3): the page header is a u64 timestamp and
 * a `commit` word of the kernel's long size (4 or 8 bytes), then the data. */
struct fxt_td_layout {
  bool big_endian;
  uint8_t long_size;      /* 4 or 8: size of `commit` and of a stored missed-events count */
  uint32_t ts_offset;     /* offset of the page timestamp (0) */
  uint32_t commit_offset; /* offset of commit (8) */
  uint32_t data_offset;   /* page header size: 12 or 16 */
};

/* Record types by type_len (spec §4.1). */
#define FXT_TD_TYPE_DATA_MAX 28u
#define FXT_TD_TYPE_PADDING 29u
#define FXT_TD_TYPE_TIME_EXTEND 30u
#define FXT_TD_TYPE_TIME_STAMP 31u

struct fxt_td_page {
  const unsigned char *page; /* the page's bytes (may be fewer than a page: the file's end) */
  uint32_t avail;            /* bytes at page */
  uint64_t file_offset;      /* of page[0], for messages */
  struct fxt_td_layout lay;
  uint64_t timestamp;    /* from the header */
  uint32_t data_len;     /* commit & FXT_TD_COMMIT_MASK */
  bool missed;           /* FXT_TD_MISSED_EVENTS */
  bool missed_known;     /* FXT_TD_MISSED_STORED and the count fits in the page */
  uint64_t missed_count; /* when missed_known */
  uint32_t pos;          /* next record, relative to the data start */
  uint64_t time;         /* running time */
};

/* One data record of a page: the event payload (common_type first), without the ring-buffer
 * header. */
struct fxt_td_rec {
  uint64_t ts;
  const unsigned char *data;
  uint32_t len;
  uint64_t offset; /* file offset of the record's 4-byte header */
};

/* Starts decoding page[0..avail). Checks that the header fits and that commit's length fits
 * in what follows it. Returns 0 or FXT_EBADMSG. */
int fxt_td_page_open(struct fxt_td_page *p, const void *page, size_t avail, uint64_t file_offset,
                     const struct fxt_td_layout *lay, char *err, size_t err_size);
/* The next data record: 1 with *rec set, 0 at the end of the page's data (or at kernel tail
 * padding), FXT_EBADMSG for a record that runs past the data or an empty data record. */
int fxt_td_page_next(struct fxt_td_page *p, struct fxt_td_rec *rec, char *err, size_t err_size);

/* ---- event formats (tracedat_read_format.c) -------------------------------------------------- */

enum fxt_td_field_kind {
  FXT_TD_FIELD_INT = 1, /* integer of 1, 2, 4 or 8 bytes (signed or not) */
  FXT_TD_FIELD_PTR,     /* a pointer (4 or 8 bytes) */
  FXT_TD_FIELD_STR,     /* char name[N]: text up to the first NUL (N = size 0: name[], the
                        rest of the record, as ftrace:print's buf) */
  FXT_TD_FIELD_BYTES,   /* any other fixed array or type: raw bytes (size 0: the rest) */
  FXT_TD_FIELD_DSTR,    /* __data_loc / __rel_loc char[]: text elsewhere in the record */
  FXT_TD_FIELD_DBYTES,  /* __data_loc / __rel_loc of anything else: bytes elsewhere */
  FXT_TD_FIELD_FLOAT    /* double (8 bytes) or float (4): never in kernel formats, but in those
                        fxtrace's own trace.dat writer makes for double fields */
};

struct fxt_td_text {
  const char *data;
  uint32_t len;
};

struct fxt_td_field {
  struct fxt_td_text name, type;
  uint32_t offset, size;
  uint8_t kind; /* enum fxt_td_field_kind */
  bool is_signed;
  bool rel; /* __rel_loc: the location's offset counts from the end of this field */
};

struct fxt_td_event {
  uint32_t id;
  struct fxt_td_text system, name;
  uint64_t offset;           /* file offset of its format text */
  uint32_t ncommon, nfields; /* fields[0..ncommon) are common_*, then the event's own */
  struct fxt_td_field *fields;
};

/* Parses one format text (text lives at file offset `offset`, for messages) into *ev (fields
 * are malloc'ed: fxt_td_event_free). Reads name, ID and every field line; the print fmt is not
 * needed and not read. Returns 0, FXT_EBADMSG or FXT_ENOMEM. */
int fxt_td_parse_format(const char *text, size_t len, uint64_t offset, struct fxt_td_text system,
                        struct fxt_td_event *ev, char *err, size_t err_size);
void fxt_td_event_free(struct fxt_td_event *ev);

/* A field's value in a record (data[0..len) = the payload), in the file's endianness:
 *  - INT, PTR and FLOAT: *u = the value (INT sign-extended to 64 bits when signed; FLOAT the
 *    IEEE-754 bits as stored);
 *  - STR, BYTES, DSTR, DBYTES: *bytes / *n = where the bytes are (for STR and DSTR up to the
 *    first NUL).
 * Returns 0, or FXT_EBADMSG when the field, or a dynamic field's data, is not inside the
 * record (the message names rec_offset). */
int fxt_td_field_value(const struct fxt_td_field *f, const unsigned char *data, uint32_t len,
                       bool big_endian, uint64_t rec_offset, uint64_t *u,
                       const unsigned char **bytes, uint32_t *n, char *err, size_t err_size);

/* ---- the file (tracedat_read.c) -------------------------------------------------------------- */

/* One CPU's data of one buffer instance: whole pages of page_size (the last may be short). */
struct fxt_td_cpu_data {
  uint32_t cpu;
  uint64_t offset, size;
};

struct fxt_td_buffer {
  struct fxt_td_text name;  /* "" for the top instance */
  struct fxt_td_text clock; /* v7: from its BUFFER option; v6: the file's clock */
  uint32_t ncpus;
  struct fxt_td_cpu_data *cpus;
};

/* Per-CPU counters of a CPUSTAT option (per_cpu/cpuN/stats at the end of the recording);
 * UINT64_MAX where a line is missing. */
struct fxt_td_cpustat {
  uint32_t cpu;
  uint64_t entries, overrun, commit_overrun, dropped;
};

struct fxt_td_cmdline {
  int32_t pid;
  struct fxt_td_text comm;
};

struct fxt_td_file {
  const unsigned char *buf;
  size_t len;
  uint32_t version; /* 6 or 7 */
  struct fxt_td_layout lay;
  uint32_t page_size;
  uint32_t cpus;         /* v6: entries of the CPU table; v7: CPUCOUNT (or the buffers' largest) */
  struct fxt_td_text clock; /* the trace clock's name, e.g. "mono"; "local" when the file has
                               none */
  bool has_date, has_offset, has_tsc2nsec;
  int64_t date_offset_ns; /* DATE: add to a timestamp to get CLOCK_REALTIME (µs resolution) */
  int64_t ts_offset_ns;   /* OFFSET (--ts-offset): added to timestamps by trace-cmd report */
  uint32_t tsc_mult, tsc_shift; /* TSC2NSEC: ns = (ticks * mult) >> shift */
  uint64_t tsc_offset;
  struct fxt_td_text uname, tc_version;

  uint32_t nevents;
  struct fxt_td_event *events;
  int32_t *by_id; /* 65536 entries: index into events, -1 for none */

  uint32_t ncmdlines;
  struct fxt_td_cmdline *cmdlines;

  uint32_t nbuffers;
  struct fxt_td_buffer *buffers;

  uint32_t ncpustats;
  struct fxt_td_cpustat *cpustats;
};

/* Reads the file's metadata from buf[0..len) (not copied: it must outlive the fxt_td_file): no
 * event data is decoded yet, but every CPU data range is checked to lie inside the file. *out
 * is NULL on failure. */
int fxt_td_open(const void *buf, size_t len, struct fxt_td_file **out, char *err, size_t err_size);
void fxt_td_close(struct fxt_td_file *f);

/* The event with this common_type, or NULL. */
const struct fxt_td_event *fxt_td_event_by_id(const struct fxt_td_file *f, uint32_t id);

/* ---- all records in time order (tracedat_read_iter.c) ---------------------------------------- */

/* What fxt_td_iter_next returns. */
enum fxt_td_item_kind {
  FXT_TD_ITEM_RECORD = 1, /* a data record */
  FXT_TD_ITEM_MISSED      /* events lost on a CPU before its next page (count when known) */
};

struct fxt_td_item {
  uint32_t kind; /* enum fxt_td_item_kind */
  uint32_t cpu;
  uint32_t buffer;               /* index into f->buffers */
  struct fxt_td_rec rec;            /* RECORD; for MISSED, rec.ts is the page's timestamp and
                                    rec.offset the page's offset */
  const struct fxt_td_event *event; /* RECORD: its format, NULL when the id is unknown */
  uint32_t type;                 /* RECORD: its common_type */
  int32_t pid;                   /* RECORD: its common_pid */
  bool missed_known;             /* MISSED */
  uint64_t missed_count;         /* MISSED, when known */
};

struct fxt_td_iter;

/* Merges the records of every CPU of every buffer instance by timestamp (ties: lower buffer,
 * then lower CPU first; within a CPU, file order). Returns 0, FXT_ENOMEM, or an error of the
 * first page of some CPU. */
int fxt_td_iter_new(const struct fxt_td_file *f, struct fxt_td_iter **out, char *err,
                    size_t err_size);
/* 1 with *item set, 0 at the end, or a negative error (page or record malformed). */
int fxt_td_iter_next(struct fxt_td_iter *it, struct fxt_td_item *item, char *err, size_t err_size);
/* Timestamp of the next item without taking it; false at the end. */
bool fxt_td_iter_peek_ts(const struct fxt_td_iter *it, uint64_t *ts);
void fxt_td_iter_free(struct fxt_td_iter *it);

#endif /* FXTRACE_FORMATS_TRACEDAT_READ_H */
