/* fuzz/fuzz_elfevents.c - libFuzzer target for fxt_elf_events() (src/formats/elf_events.c),
 * `fxtrace list`'s reader of the tracepoints compiled into an ELF file.
 *
 * The input is the image (in a heap buffer of exactly its size, so ASan sees any byte read
 * past it). Properties checked (abort() on any violation, on top of ASan/UBSan):
 *  - the result is 0, FXT_EINVAL, FXT_ENOSYS or FXT_ENOENT with a reason in err (NUL-ended),
 *    or the callback's own code;
 *  - every event's system, name, print format, file and field names are inside the image and
 *    NUL-terminated there; its kind is known, its fields (a typed tracepoint's, an ad-hoc
 *    site's arguments) at most FXT_MAX_FIELDS;
 *  - no more events than 8-byte pointers fit in the image;
 *  - its format file (src/base/tp_format.c) is made without fault, also with its fields
 *    merged as `fxtrace list -v` merges an event's sites;
 *  - a callback that fails at the k-th event stops the walk there with its code.
 * Seeds: corpus/elfevents (stripped builds of tests/check/list_prog.c: a PIE, a non-PIE and an
 * lld-linked executable, and a PIE built since ad-hoc sites list their arguments
 * (list_prog_adhoc_args); tests/dl/dl_module.c as a shared object; a file with no events).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fxtrace/errors.h>

#include "base/tbuf.h"
#include "base/tp_format.h"
#include "formats/elf_events.h"

/* The image walked, and the events seen so far (the walk stops at the stop-th, 0: never). */
struct walk {
  const unsigned char *base;
  size_t size;
  uint64_t n, stop_at;
};

/* A property that must hold: abort() makes the fuzzer keep the input. */
#define check(ok) ((ok) ? (void)0 : abort())

static void in_image(const struct walk *w, const char *s, bool null_ok)
{
  if (s == NULL) {
    check(null_ok);
    return;
  }
  const unsigned char *p = (const unsigned char *)s;
  check(p >= w->base && p < w->base + w->size);
  check(memchr(p, 0, (size_t)(w->base + w->size - p)) != NULL);
}

static int on_event(void *ctx, const struct fxt_elf_event *ev)
{
  struct walk *w = ctx;
  const struct fxt_tracepoint *tp = &ev->tp;
  in_image(w, tp->system, false);
  in_image(w, tp->name, false);
  in_image(w, tp->print_fmt, true);
  in_image(w, tp->file, true);
  check(tp->kind <= FXT_TP_PRINTK && tp->nfields <= FXT_MAX_FIELDS);
  for (uint32_t i = 0; i < tp->nfields; i++) /* a typed one's fields, an ad-hoc one's args */
    in_image(w, tp->fields[i].name, false);
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  fxt_tp_format(&b, tp, 0);
  struct fxt_field f[FXT_TP_FIELDS_MAX]; /* as `fxtrace list -v` merges an event's sites */
  uint32_t nf = fxt_tracepoint_fields_merge(tp, f, fxt_tracepoint_fields(tp, f));
  check(nf <= FXT_TP_FIELDS_MAX);
  fxt_tp_format_fields(&b, tp, 0, f, nf);
  fxt_tbuf_free(&b);
  if (++w->n == w->stop_at)
    return -12345;
  return 0;
}

/* One walk of the image that stops at the stop_at-th event (0: never); its result. */
static int walk_image(struct walk *w, uint64_t stop_at)
{
  char err[FXT_ELF_ERR_SIZE];
  memset(err, 1, sizeof err);
  w->n = 0;
  w->stop_at = stop_at;
  int rc = fxt_elf_events(w->base, w->size, on_event, w, err, sizeof err);
  check(rc == -12345 || rc == 0 || memchr(err, 0, sizeof err) != NULL);
  return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  unsigned char *img = malloc(size ? size : 1); /* exactly the input: ASan sees past it */
  if (img == NULL)
    return 0;
  memcpy(img, data, size);
  struct walk w = {img, size, 0, 0};
  int rc = walk_image(&w, 0);
  check(rc == 0 || rc == FXT_EINVAL || rc == FXT_ENOSYS || rc == FXT_ENOENT);
  check(w.n <= size / 8);
  uint64_t all = w.n;
  if (rc == 0 && all > 0)
    check(walk_image(&w, (all + 1) / 2) == -12345 && w.n == (all + 1) / 2);
  free(img);
  return 0;
}
