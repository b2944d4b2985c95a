/* src/formats/json_int.h - internals of the JSON exporter: the buffered output (json_out.c),
 * JSON value writers, and a small hash map for the converter's per-thread state (json.c).
 */
#ifndef FXTRACE_FORMATS_JSON_INT_H
#define FXTRACE_FORMATS_JSON_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "json.h"
#include "../base/text.h"
#include "tracedat_write_sort.h"

/* The output is handed to the write callback in blocks of at least this many bytes. */
#define FXT_JOUT_FLUSH (256u * 1024u)

/* Buffered output. error is sticky: once a write failed (or memory ran out) nothing more is
 * written and every flush returns it. */
struct fxt_jout {
  struct fxt_tbuf b;
  fxt_json_write_fn write;
  void *ctx;
  int error;
  uint64_t bytes; /* handed to write so far */
};

void fxt_jout_init(struct fxt_jout *o, fxt_json_write_fn write, void *ctx);
void fxt_jout_free(struct fxt_jout *o);
/* Writes out everything buffered; 0 or the sticky error. */
int fxt_jout_flush(struct fxt_jout *o);
/* Flushes when FXT_JOUT_FLUSH bytes are buffered; 0 or the sticky error. */
static inline int fxt_jout_tick(struct fxt_jout *o) {
  return o->b.len >= FXT_JOUT_FLUSH || o->b.oom ? fxt_jout_flush(o) : o->error;
}

/* ---- values (appended to a text buffer) ---------------------------------------------------- */

/* n bytes of JSON syntax; inline, so a literal's copy is a few moves. */
static inline void fxt_json_put(struct fxt_tbuf *b, const char *s, size_t n) {
  if (fxt_tbuf_reserve(b, n)) {
    memcpy(b->data + b->len, s, n);
    b->len += n;
  }
}
#define FXT_JSON_LIT(b, lit) fxt_json_put((b), "" lit, sizeof(lit) - 1)

/* The text of a JSON string without its quotes: '"', '\\' and control characters escaped
 * (\b \f \n \r \t, else \u00XX; DEL too, which Perfetto's JSON tokenizer refuses raw),
 * each byte that does not start a valid UTF-8 sequence (RFC 3629: no overlongs, surrogates
 * or code points above U+10FFFF) replaced by U+FFFD. */
void fxt_json_str_body(struct fxt_tbuf *b, const char *s, size_t n);
/* The same in quotes. s may be NULL when n is 0. */
void fxt_json_str(struct fxt_tbuf *b, const char *s, size_t n);
void fxt_json_raw(struct fxt_tbuf *b, const char *s); /* s as is (JSON syntax) */
void fxt_json_u64(struct fxt_tbuf *b, uint64_t v);     /* a number, every digit */
void fxt_json_i64(struct fxt_tbuf *b, int64_t v);
/* Numbers while exact in a double (|v| <= 2^53), else decimal strings. */
void fxt_json_u64_safe(struct fxt_tbuf *b, uint64_t v);
void fxt_json_i64_safe(struct fxt_tbuf *b, int64_t v);
/* The shortest decimal that reads back as v; NaN and infinities as the strings "NaN",
 * "Infinity", "-Infinity" (JSON has no such numbers). */
void fxt_json_double(struct fxt_tbuf *b, double v);
/* "0x<lowercase hex>" in quotes. */
void fxt_json_hex(struct fxt_tbuf *b, uint64_t v);
/* Nanoseconds as microseconds with three decimals: 1234567 -> 1234.567. */
void fxt_json_us(struct fxt_tbuf *b, uint64_t ns);
/* The duration from start to end (ns), for a reader that adds it to the start as doubles, as
 * Chromium's DevTools does to nest slices: three decimals where that sum is the end's own
 * double (fxt_json_us of end), else the shortest decimal of end's double minus start's, which
 * is. So a slice that ends in the nanosecond the next one starts does not end after it (the
 * panel drops a slice that ends after the one it starts in). */
void fxt_json_dur(struct fxt_tbuf *b, uint64_t start, uint64_t end);
/* ,"args":{...}; counter samples keep only numeric arguments (and always have "args"). A name
 * an earlier argument already has becomes "name #2", "name #3"... (JSON keys are unique). */
void fxt_json_args(struct fxt_tbuf *b, const struct fxt_arg *args, uint32_t n, bool counter);

/* ---- map (a, b) -> two values --------------------------------------------------------------- */

struct fxt_jmap_entry {
  uint64_t a, b;
  uint64_t v[2];
  bool used;
};

struct fxt_jmap {
  struct fxt_jmap_entry *e;
  size_t mask, count; /* capacity mask + 1 entries when e != NULL */
};

/* The values of (a, b) (an array of 2), added as zeros when absent; NULL when memory ran
 * out. The pointer is valid until the next fxt_jmap_get. */
uint64_t *fxt_jmap_get(struct fxt_jmap *m, uint64_t a, uint64_t b);
/* The values of (a, b), or NULL when absent. */
uint64_t *fxt_jmap_find(const struct fxt_jmap *m, uint64_t a, uint64_t b);
/* A thread's state kept in an array beside the map: the element of *arr (*n elements of elem
 * bytes, room for *cap) that value k of (a, b) numbers (index + 1); a zeroed one appended and
 * numbered when (a, b) has none yet, and *added set (added may be NULL). NULL when memory
 * ran out. */
void *fxt_jmap_elem(struct fxt_jmap *m, uint64_t a, uint64_t b, unsigned k, void **arr,
                    size_t *n, size_t *cap, size_t elem, bool *added);
void fxt_jmap_free(struct fxt_jmap *m);

/* ---- time order (json_order.c) ------------------------------------------------------------ */

struct fxt_jspan {
  uint64_t start, end;
};
struct fxt_jstack {
  struct fxt_jspan *v;
  size_t n, cap;
};

/* The events of a conversion, sorted by time in bounded memory (two external sorts, spilled
 * to a temporary file in tmpdir), flows moved to the start of the slice that encloses them on
 * their thread. Events are given whole ("{...}"), flows without their ",\"ts\":...}" end. */
struct fxt_jorder {
  struct fxt_td_sort events, binds;
  struct fxt_tbuf text;         /* a record read back, its chunks joined */
  struct fxt_jmap threads;      /* (pid, tid) -> index + 1 of its stack */
  struct fxt_jstack *stacks;
  size_t nstacks, cap_stacks;
  uint64_t seq;
  uint64_t written;     /* events written */
  uint64_t flows_bound; /* flows moved to an enclosing slice's start */
  uint64_t runs;        /* sorted runs spilled to the temporary file */
  bool ready;
  char err[FXT_TD_SORT_ERR_SIZE];
};

/* tmpdir NULL: $TMPDIR, else /tmp; run_bytes 0: 4 MiB (the flows' and slices' sort gets a
 * quarter).
 * Every function returns 0 or a negative FXT_E* code with err set (but a write callback's
 * code, which fxt_jorder_write returns as it is: out->error). */
int fxt_jorder_init(struct fxt_jorder *o, const char *tmpdir, size_t run_bytes);
/* An event at time ns (its "ts"). */
int fxt_jorder_event(struct fxt_jorder *o, uint64_t ns, const char *text, size_t n);
/* A metadata event: before every timed one, in the order given. */
int fxt_jorder_meta(struct fxt_jorder *o, const char *text, size_t n);
/* A slice [start, end] of thread (pid, tid) that flows may bind to. */
int fxt_jorder_slice(struct fxt_jorder *o, uint64_t pid, uint64_t tid, uint64_t start,
                     uint64_t end);
/* A flow event of thread (pid, tid) at ns: text is "{...", all but its time and "}". */
int fxt_jorder_flow(struct fxt_jorder *o, uint64_t pid, uint64_t tid, uint64_t ns,
                    const char *text, size_t n);
/* Binds the flows, then writes every event in time order to out ("\n" before the first,
 * ",\n" before the others). */
int fxt_jorder_write(struct fxt_jorder *o, struct fxt_jout *out);
void fxt_jorder_free(struct fxt_jorder *o);

#endif /* FXTRACE_FORMATS_JSON_INT_H */
