/* fuzz/fuzz_filter.c - libFuzzer target for the ftrace event filter (fxtrace/filter.h).
 *
 * The input is the text written to a `filter` file, compiled against a field list with every
 * fxtrace type into a heap buffer of exactly FXT_FILTER_PROG_MAX(size) bytes (ASan sees any
 * byte written past it). Properties checked (abort() on any violation, on top of ASan/UBSan):
 *  - the result is > 0 (a program no bigger than the buffer), 0 (only for a "0" text), or one
 *    of the documented errors with err filled: a NUL-terminated message equal to
 *    fxt_filter_strerror(code), a position within the text + 2, never FXT_ENOSPC;
 *  - compiling is deterministic (same bytes twice) and a smaller buffer gives the same result
 *    or FXT_ENOSPC;
 *  - a program runs from an exact-size copy on records of every shape (NULL strings, no
 *    lengths, long and empty strings, NaN, extreme integers) without reading outside it, and
 *    gives the same answer twice;
 *  - the renderings of the `filter` file and of error_log are NUL-terminated in buffers of any
 *    size, their lengths match the full rendering, and a truncated one is its prefix;
 *  - the system helper agrees with the per-event results.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fxtrace/filter.h>

static void check(int ok)
{
  if (!ok)
    abort();
}

static const struct fxt_field fields[] = {
    {"a8", FXT_TYPE_U8, 0},    {"a16", FXT_TYPE_U16, 0}, {"a32", FXT_TYPE_U32, 0},
    {"a64", FXT_TYPE_U64, 0},  {"b8", FXT_TYPE_S8, 0},   {"b16", FXT_TYPE_S16, 0},
    {"b32", FXT_TYPE_S32, 0},  {"b64", FXT_TYPE_S64, 0}, {"flag", FXT_TYPE_BOOL, 0},
    {"d", FXT_TYPE_DOUBLE, 0}, {"p", FXT_TYPE_PTR, 0},   {"s", FXT_TYPE_STR, 32},
    {"raw", FXT_TYPE_BYTES, 8}, {"cpu", FXT_TYPE_U16, 0}, {"big", FXT_TYPE_STR, 0xffff},
};
#define NF (sizeof fields / sizeof fields[0])
static const struct fxt_filter_event ev = {fields, NF, 8};
static const struct fxt_filter_event ev_small = {fields, 3, 1};

static void *dup_exact(const void *p, size_t n)
{
  void *q = malloc(n ? n : 1);
  check(q != NULL);
  memcpy(q, p, n);
  return q;
}

static void run_records(const void *prog)
{
  static char raw0[8] = {'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'}; /* no NUL */
  static char raw1[8] = {'x', 0, 'y', 0, 0, 0, 0, 0};
  static char long_s[300];
  memset(long_s, 'z', sizeof long_s - 1);
  union fxt_value v[NF];
  uint32_t lens[NF] = {0};
  struct fxt_filter_common c = {0xffff, 0xff, 0xff, -1, 7, "0123456789abcdefXYZ"};
  for (int r = 0; r < 4; r++) {
    for (size_t k = 0; k < NF; k++)
      v[k].u = r == 0 ? 0 : r == 1 ? UINT64_MAX : r == 2 ? UINT64_C(1) << 63 : 0x1234;
    v[9].d = r == 0 ? NAN : r == 1 ? -INFINITY : r == 2 ? 4.9e-324 : -123.0;
    v[10].p = r == 1 ? (const void *)&c : NULL;
    v[11].s = r == 0 ? NULL : r == 1 ? "" : r == 2 ? long_s : "hello";
    v[12].p = r == 0 ? NULL : r & 1 ? raw0 : raw1;
    v[14].s = r == 3 ? long_s : "x";
    lens[11] = r == 2 ? 299 : r == 3 ? 5 : 0; /* clamped to the bound */
    lens[14] = r == 3 ? 299 : 1;
    c.cpu = (uint32_t)r * 3;
    c.comm = r == 0 ? NULL : c.comm;
    const bool m1 = fxt_filter_match(prog, v, lens, &c);
    const bool m2 = fxt_filter_match(prog, v, lens, &c);
    check(m1 == m2);
    if (r != 2) /* no lens: the same strings up to their NUL or bound */
      (void)fxt_filter_match(prog, v, NULL, r == 3 ? NULL : &c);
  }
}

static void check_render(const char *text, size_t len, int r, const struct fxt_filter_error *err,
                         size_t cut)
{
  const size_t full = fxt_filter_render(NULL, 0, text, len, r, err);
  char *buf = malloc(full + 1);
  check(buf != NULL);
  check(fxt_filter_render(buf, full + 1, text, len, r, err) == full);
  check(strlen(buf) == full);
  if (cut > full)
    cut = full;
  char *small = malloc(cut + 1);
  check(small != NULL);
  check(fxt_filter_render(small, cut + 1, text, len, r, err) == full);
  check(strlen(small) == cut && memcmp(small, buf, cut) == 0);
  free(small);
  free(buf);

  const size_t lfull = fxt_filter_render_error_log(NULL, 0, text, len, err, UINT64_MAX);
  char *log = malloc(lfull + 1);
  check(log != NULL);
  check(fxt_filter_render_error_log(log, lfull + 1, text, len, err, UINT64_MAX) == lfull);
  check(strlen(log) == lfull);
  check((lfull > 0) == (r < 0 && err->code > 0 && err->code < FXT_FILTER_ERR_WRITE_TOO_LONG));
  free(log);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *text = (const char *)data;
  const size_t cap = FXT_FILTER_PROG_MAX(size);
  unsigned char *prog = malloc(cap), *again = malloc(cap);
  struct fxt_filter_error err, err2;
  check(prog && again);

  const int r = fxt_filter_compile(text, size, &ev, prog, cap, &err);
  check(err.result == r);
  check(err.msg != NULL && strcmp(err.msg, fxt_filter_strerror(err.code)) == 0);
  if (size > FXT_FILTER_MAX_WRITE) {
    check(r == FXT_EINVAL && err.code == FXT_FILTER_ERR_WRITE_TOO_LONG);
  } else if (r > 0) {
    check(err.code == FXT_FILTER_ERR_NONE && (size_t)r <= cap);
  } else if (r == 0) {
    const size_t n = fxt_filter_text_len(text, size);
    size_t b = 0;
    while (b < n && (text[b] == ' ' || (text[b] >= 9 && text[b] <= 13) ||
                     (unsigned char)text[b] == 0xa0))
      b++;
    check(n - b == 1 && text[b] == '0');
  } else {
    check(r == FXT_EINVAL || r == FXT_FILTER_EPERM || r == FXT_ENOENT ||
          r == FXT_FILTER_ESRCH);
    check(err.code > FXT_FILTER_ERR_NONE && err.code <= FXT_FILTER_ERR_NO_FILTER);
    check(err.pos <= fxt_filter_text_len(text, size) + 2);
  }

  /* deterministic */
  const int r2 = fxt_filter_compile(text, size, &ev, again, cap, &err2);
  check(r2 == r && err2.code == err.code && err2.pos == err.pos);
  if (r > 0)
    check(memcmp(prog, again, (size_t)r) == 0);

  /* smaller buffers: the same or FXT_ENOSPC */
  if (r > 0 && size <= FXT_FILTER_MAX_WRITE) {
    const size_t sizes[] = {0, 16, (size_t)r / 2, (size_t)r, (size_t)r + 64};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
      unsigned char *b = malloc(sizes[k] ? sizes[k] : 1);
      check(b != NULL);
      const int rs = fxt_filter_compile(text, size, &ev, b, sizes[k], &err2);
      check(rs == r || (rs == FXT_ENOSPC && err2.code == FXT_FILTER_ERR_NO_SPACE));
      if (rs == r)
        check(memcmp(b, prog, (size_t)r) == 0);
      free(b);
    }
  }

  /* run from an exact-size copy */
  if (r > 0) {
    void *copy = dup_exact(prog, (size_t)r);
    run_records(copy);
    free(copy);
  }

  check_render(text, size, r, &err, size / 2);

  /* the system helper: two events, one without most fields */
  if (size <= FXT_FILTER_MAX_WRITE) {
    unsigned char *p2 = malloc(cap);
    check(p2 != NULL);
    struct fxt_filter_slot slots[2] = {{&ev, again, cap, 0, {0}}, {&ev_small, p2, cap, 0, {0}}};
    check(fxt_filter_compile_system(text, size, slots, 2) == 0);
    check(slots[0].result == r);
    if (slots[0].result < 0)
      check(slots[0].err.code == FXT_FILTER_ERR_BAD_SUBSYS_FILTER && slots[0].err.pos == 0);
    for (int k = 0; k < 2; k++)
      check_render(text, size, slots[k].result, &slots[k].err, 3);
    if (slots[1].result > 0) {
      void *copy = dup_exact(p2, (size_t)slots[1].result);
      run_records(copy);
      free(copy);
    }
    free(p2);
  }
  free(prog);
  free(again);
  return 0;
}
