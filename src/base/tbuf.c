/* src/base/tbuf.c - the growable text buffer (tbuf.h). The event text's writers inline their
 * own copies of the fast case (text.c); these are the out-of-line ones. */
#include "tbuf.h"
#include "grow.h"

#include <stdlib.h>
#include <string.h>

void fxt_tbuf_init(struct fxt_tbuf *b) { memset(b, 0, sizeof *b); }

void fxt_tbuf_free(struct fxt_tbuf *b) {
  free(b->data);
  fxt_tbuf_init(b);
}

bool fxt_tbuf_grow(struct fxt_tbuf *b, size_t n) {
  if (b->oom || n > SIZE_MAX / 4 - b->len) {
    b->oom = true;
    return false;
  }
  if (!fxt_grow((void **)&b->data, &b->cap, b->len + n, 1, 256)) {
    b->oom = true;
    return false;
  }
  return true;
}

void fxt_tbuf_put(struct fxt_tbuf *b, const char *s, size_t n) {
  if (n == 0 || !fxt_tbuf_reserve(b, n))
    return;
  memcpy(b->data + b->len, s, n);
  b->len += n;
}

void fxt_tbuf_puts(struct fxt_tbuf *b, const char *s) { fxt_tbuf_put(b, s, strlen(s)); }

const char *fxt_tbuf_str(struct fxt_tbuf *b) {
  if (!fxt_tbuf_reserve(b, 1))
    return "";
  b->data[b->len] = '\0';
  return b->data;
}
