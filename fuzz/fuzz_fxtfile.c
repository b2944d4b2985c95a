/* fuzz/fuzz_fxtfile.c - libFuzzer target for the FXT file reader and the text renderer.
 *
 * The input is read as an fxtrace file (fxtf_load) and every event is rendered as a report
 * line; the input is also used as a print format over a fixed set of arguments. Properties
 * checked (abort() on a violation, on top of ASan/UBSan):
 *  - a load error leaves no file and says "offset N: reason" with N inside the input;
 *  - every indexed event re-reads (fxtf_event_at returns 0) and equals the record the decoder
 *    returns at its offset, in type, timestamp, trailer and arguments;
 *  - events come in (ns, offset) order and every thread's counts add up to the total;
 *  - a rendered line ends with '\n' and is all of the buffer's new bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/formats/fxtfile.h"
#include "../src/base/text.h"

static struct fxt_str_slot g_table[FXT_STRING_TABLE_SIZE];
static struct fxt_decoder g_dec;
static struct fxt_record g_rec;
static struct fxtf_event g_ev;

static void check(int ok) {
  if (!ok)
    abort();
}

static void check_message(const char *err, size_t size) {
  check(strncmp(err, "offset ", 7) == 0);
  char *end;
  unsigned long long n = strtoull(err + 7, &end, 10);
  check(end != err + 7 && end[0] == ':' && end[1] == ' ' && end[2] != '\0');
  check(n < size || n == 0);
}

static void same_args(const struct fxt_event *x, const struct fxt_event *y) {
  check(x->num_args == y->num_args);
  for (uint32_t i = 0; i < y->num_args; i++) {
    const struct fxt_arg *a = &x->args[i], *b = &y->args[i];
    check(a->type == b->type && a->name.len == b->name.len);
    check(memcmp(a->name.data, b->name.data, b->name.len) == 0);
    if (b->type == FXT_ARG_STRING)
      check(a->value.str.len == b->value.str.len &&
            memcmp(a->value.str.data, b->value.str.data, b->value.str.len) == 0);
    else if (b->type == FXT_ARG_BOOL)
      check(a->value.b == b->value.b);
    else if (b->type == FXT_ARG_INT32 || b->type == FXT_ARG_UINT32)
      check(a->value.u32 == b->value.u32);
    else if (b->type == FXT_ARG_BLOB)
      check(a->value.blob.size == b->value.blob.size &&
            (b->value.blob.size == 0 || a->value.blob.data == b->value.blob.data));
    else if (b->type != FXT_ARG_NULL)
      check(a->value.u64 == b->value.u64);
  }
}

struct pos {
  uint64_t offset;
  size_t index;
};

static int by_offset(const void *a, const void *b) {
  const struct pos *x = a, *y = b;
  return (x->offset > y->offset) - (x->offset < y->offset);
}

/* Decodes the input again and compares each event record with the reader's re-read. */
static void compare_with_decoder(const struct fxtf_file *f, const uint8_t *data, size_t size) {
  size_t n = fxtf_event_count(f), k = 0;
  struct pos *p = malloc((n + 1) * sizeof *p);
  check(p != NULL);
  for (size_t i = 0; i < n; i++) {
    check(fxtf_event_at(f, i, &g_ev, NULL, 0) == 0);
    p[i].offset = g_ev.offset;
    p[i].index = i;
  }
  qsort(p, n, sizeof *p, by_offset);
  fxt_decoder_init(&g_dec, data, size, g_table);
  while (fxt_decoder_next(&g_dec, &g_rec, NULL, 0) == 1) {
    if (k == n || p[k].offset != g_rec.offset)
      continue;
    check(g_rec.kind == FXT_KIND_EVENT);
    check(fxtf_event_at(f, p[k++].index, &g_ev, NULL, 0) == 0);
    const struct fxt_event *w = &g_rec.u.event;
    check(g_ev.ev.type == w->type && g_ev.ev.timestamp == w->timestamp);
    check(g_ev.ev.trailer == w->trailer);
    check(g_ev.ev.thread.process_koid == w->thread.process_koid);
    check(g_ev.ev.thread.thread_koid == w->thread.thread_koid);
    same_args(&g_ev.ev, w);
  }
  check(k == n); /* every indexed event was an event record of the input */
  free(p);
}

static void render_all(const struct fxtf_file *f) {
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  uint64_t last_ns = 0, last_off = 0;
  for (size_t i = 0; i < fxtf_event_count(f); i++) {
    check(fxtf_event_at(f, i, &g_ev, NULL, 0) == 0);
    check(i == 0 || g_ev.ns > last_ns || (g_ev.ns == last_ns && g_ev.offset > last_off));
    last_ns = g_ev.ns;
    last_off = g_ev.offset;
    b.len = 0;
    fxt_text_event(&b, &g_ev);
    check(b.oom || (b.len > 0 && b.data[b.len - 1] == '\n'));
  }
  fxt_tbuf_free(&b);
}

static void check_counts(const struct fxtf_file *f) {
  uint32_t n;
  const struct fxtf_thread *t = fxtf_threads(f, &n);
  uint64_t events = 0;
  for (uint32_t i = 0; i < n; i++)
    events += t[i].events;
  check(events == fxtf_event_count(f));
  struct fxtf_name_count *c;
  size_t nc;
  check(fxtf_name_counts(f, &c, &nc) == 0);
  uint64_t named = 0;
  for (size_t i = 0; i < nc; i++)
    named += c[i].count;
  check(named == events);
  free(c);
}

/* The input as a print format, over arguments of every type. */
static void render_format(const uint8_t *data, size_t size) {
  struct fxt_arg a[6];
  memset(a, 0, sizeof a);
  a[0].type = FXT_ARG_INT32, a[0].value.i32 = -5;
  a[1].type = FXT_ARG_UINT64, a[1].value.u64 = UINT64_MAX;
  a[2].type = FXT_ARG_DOUBLE, a[2].value.f64 = 1e300;
  a[3].type = FXT_ARG_STRING, a[3].value.str = fxt_str_inline("str", 3);
  a[4].type = FXT_ARG_POINTER, a[4].value.pointer = 0xdead;
  a[5].type = FXT_ARG_INT32, a[5].value.i32 = 4096;
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  fxt_text_printf(&b, (const char *)data, size, a, 6);
  fxt_tbuf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[FXTF_ERR_SIZE];
  struct fxtf_file *f = NULL;
  int rc = fxtf_load(data, size, &f, err, sizeof err);
  if (rc != 0) {
    check(f == NULL);
    check(rc == FXT_EBADMSG || rc == FXT_ENOSYS);
    check_message(err, size);
  } else {
    render_all(f);
    compare_with_decoder(f, data, size);
    check_counts(f);
    fxtf_close(f);
  }
  if (size < 4096)
    render_format(data, size);
  return 0;
}
