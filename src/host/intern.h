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
#include <stdint.h>

#define FXT_INTERN_MAX_INDEX 0x7fff  /* FXT string refs are 15 bits */
#define FXT_INTERN_MAX_LEN 32000     /* Fuchsia writers' limit for one string */

/* Returns the index of s[0..len) (interning it if new): 0 for the empty string, 1..0x7fff, or
 * FXT_E2BIG (len > FXT_INTERN_MAX_LEN) or FXT_ENOSPC (the table or its text arena is full). */
int fxt_intern(const char *s, uint32_t len);

/* Same for a NUL-terminated string. */
int fxt_intern_cstr(const char *s);

/* The string of an index: true with *s and *len when index is bound and complete. The text
 * lives as long as the process. */
bool fxt_intern_lookup(uint32_t index, const char **s, uint32_t *len);

/* One past the highest index handed out so far. Indices below it may still be completing
 * (fxt_intern_lookup false for a moment): readers that emit string records walk upward and
 * stop at the first incomplete one. */
uint32_t fxt_intern_end(void);

#endif
