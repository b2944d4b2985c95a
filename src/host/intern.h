/* intern.h - the process-wide string table: every interned string has one FXT string index
 * (1..32767) for the life of the process, shared by all sessions and files.
 *
 * Lock-free and async-signal-safe: fxt_intern() never blocks, allocates or calls the OS (its
 * storage is static), so the first emission of a call site may intern its argument names from
 * any context. Indices 1..FXT_META_STRING_LAST are the fixed strings of fxtrace/meta.h.
 */
#ifndef FXT_HOST_INTERN_H
#define FXT_HOST_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FXT_INTERN_MAX_INDEX 0x7fff  /* FXT string refs are 15 bits */
#define FXT_INTERN_MAX_LEN 32000     /* Fuchsia writers' limit for one string */
#define FXT_INTERN_FIX_MAX 1024      /* bytes of a string made well-formed (on the stack) */

/* Returns the index of s[0..len) (interning it if new): 0 for the empty string, 1..0x7fff, or
 * FXT_E2BIG (len > FXT_INTERN_MAX_LEN) or FXT_ENOSPC (the table or its text arena is full).
 * What is interned is well-formed UTF-8 (FXT strings must be): s itself when it is, else s
 * with each stray byte replaced by U+FFFD (cut at a character boundary to FXT_INTERN_FIX_MAX
 * bytes: names and formats are short). The same s always gets the same index. */
int fxt_intern(const char *s, uint32_t len);

/* Same for a NUL-terminated string. */
int fxt_intern_cstr(const char *s);

/* The string of an index: true with *s and *len when index is bound and complete. The text
 * lives as long as the process. */
bool fxt_intern_lookup(uint32_t index, const char **s, uint32_t *len);

/* A copy of the table in a session's file, for recovery (buffers_tables.c; layout in shfile.h):
 * while it is set, the thread that interns a string copies it there itself, in any context
 * (atomics and memcpy only: no lock, no call into the OS). Text goes below text_limit only,
 * the bytes the consumer has allocated; a string that finds no room sets overflow and the
 * consumer copies it later (fxt_intern_mirror_all). */
struct fxt_intern_mirror {
  _Atomic uint64_t *entries;   /* FXT_SH_STR_ENTRIES entries, one per index */
  unsigned char *text;         /* text area of text_cap bytes */
  uint64_t text_cap;
  _Atomic uint64_t text_used;  /* claimed by fetch-and-add (may run past the limit) */
  _Atomic uint64_t text_limit; /* release store by the consumer after fallocate; writers load
                                  it with acquire before writing below it */
  _Atomic uint32_t overflow;   /* set by a writer that found no room */
};

/* Sets the mirror (NULL: none). Release: a writer that loads it (acquire) sees it set up. */
void fxt_intern_set_mirror(struct fxt_intern_mirror *m);

/* Copies every complete string that m does not have yet. */
void fxt_intern_mirror_all(struct fxt_intern_mirror *m);

/* One past the highest index handed out so far. Indices below it may still be completing
 * (fxt_intern_lookup false for a moment): readers that emit string records walk upward and
 * stop at the first incomplete one. */
uint32_t fxt_intern_end(void);

#endif
