/* src/core/fmt.h - minimal message formatting for parsers' "offset N: reason" errors.
 *
 * src/core has no snprintf. This formats into a caller buffer, always NUL-terminated when
 * size > 0, silently truncating. Numbers are printed without 64-bit division so 32-bit
 * targets need no runtime helper (__aeabi_uldivmod).
 */
#ifndef FXTRACE_CORE_FMT_H
#define FXTRACE_CORE_FMT_H

#include <stddef.h>
#include <stdint.h>

struct fxt_fmt {
  char *buf;
  size_t size; /* capacity including the NUL */
  size_t len;  /* characters written so far (excluding the NUL) */
};

void fxt_fmt_init(struct fxt_fmt *f, char *buf, size_t size);
void fxt_fmt_str(struct fxt_fmt *f, const char *s);
void fxt_fmt_dec(struct fxt_fmt *f, uint64_t v);
void fxt_fmt_hex(struct fxt_fmt *f, uint64_t v); /* "0x" + lowercase hex, no leading zeros */

/* Formats spec into f: "%u" prints the next number in decimal, "%x" in hex ("0x..."), "%s" the
 * next string, "%%" a percent sign. Numbers come from nums[0..nnums) and strings from
 * strs[0..nstrs), each in order (0 and "" once they run out). */
void fxt_fmt_spec(struct fxt_fmt *f, const char *spec, const char *const *strs, size_t nstrs,
                  const uint64_t *nums, size_t nnums);

/* The n-th (from 0) of the strings laid end to end in list, each ended by its NUL: a table of
 * texts as one array of bytes, with no pointer per row to relocate in a shared object (24
 * bytes of .rela.dyn each, beside the pointer). n must be below the number of strings. */
const char *fxt_str_nth(const char *list, size_t n);

#endif /* FXTRACE_CORE_FMT_H */
