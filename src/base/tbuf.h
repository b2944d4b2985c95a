/* src/base/tbuf.h - a growable text buffer (struct fxt_tbuf) every text writer of the tree
 * appends to: the event text (text.h), the tracefs files and control replies of the tracer,
 * the `fxtrace` command's reports.
 *
 * On out-of-memory the buffer stops growing and sets oom; later writes are dropped, so
 * callers check oom once at the end.
 */
#ifndef FXTRACE_BASE_TBUF_H
#define FXTRACE_BASE_TBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* fxt_text_prefix's (text.h) last line start, "<comm>-<pid> [<cpu>] ..... ", kept for the next line
 * of the same comm, pid and CPU (consecutive lines are mostly one thread's), and its last
 * seconds, "<seconds>."; empty (len 0) after fxt_tbuf_init. */
struct fxt_tbuf_prefix {
  uint64_t pid, sec;
  uint32_t cpu;
  uint8_t comm_len, len, sec_len;
  bool comm_ok; /* comm is well-formed UTF-8 */
  char comm[16];
  char text[64];
  char sec_text[24];
};

struct fxt_tbuf {
  char *data;
  size_t len, cap;
  bool oom;
  struct fxt_tbuf_prefix pc;
};

void fxt_tbuf_init(struct fxt_tbuf *b);
void fxt_tbuf_free(struct fxt_tbuf *b);
/* Room for n more bytes at data + len; false (and oom set) when memory ran out. */
bool fxt_tbuf_grow(struct fxt_tbuf *b, size_t n);
static inline bool fxt_tbuf_reserve(struct fxt_tbuf *b, size_t n) {
  return b->cap - b->len >= n || fxt_tbuf_grow(b, n);
}
void fxt_tbuf_put(struct fxt_tbuf *b, const char *s, size_t n);
void fxt_tbuf_puts(struct fxt_tbuf *b, const char *s);
/* NUL-terminates the contents (not counted in len); for tests and messages. */
const char *fxt_tbuf_str(struct fxt_tbuf *b);

#endif /* FXTRACE_BASE_TBUF_H */
