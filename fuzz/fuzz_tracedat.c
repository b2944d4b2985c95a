/* fuzz/fuzz_tracedat.c - libFuzzer target for the trace.dat reader and its FXT conversion
 * (src/formats/tracedat_read.h, tracedat_import.h).
 *
 * The input is read as a trace.dat and converted to FXT. Properties checked (abort() on a
 * violation, on top of ASan/UBSan):
 *  - a failure says "offset N: reason" with N at most the input size, and is FXT_EBADMSG or
 *    FXT_ENOSYS (nothing here is big enough to run out of memory);
 *  - a success writes an FXT file that the strict decoder reads to its end and that the
 *    fxtrace file reader (what report, check and merge use) loads, with every data record
 *    the statistics count either an event of it or skipped as unknown, and every lost record
 *    it counts shown once where report shows losses (before an event, or at the end), a page
 *    without a count as a loss of an unknown count;
 *  - the page decoder alone, over the input as one page of each layout, never reads outside
 *    it and ends (every call consumes at least 4 bytes or stops).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/formats/fxtfile.h"
#include "../src/formats/tracedat_import.h"
#include "../tests/mem_sink.h"

static struct fxt_str_slot g_table[FXT_STRING_TABLE_SIZE];
static struct fxt_decoder g_dec;
static struct fxt_record g_rec;

static void check(int ok) {
  if (!ok)
    abort();
}

/* The output in memory; running out of memory is a failure of the target, not of the input. */
static int collect(void *ctx, const void *data, size_t n) {
  int rc = mem_sink_write(ctx, data, n);
  check(rc == 0);
  return rc;
}

static void check_message(const char *err, size_t size) {
  check(strncmp(err, "offset ", 7) == 0);
  char *end;
  unsigned long long n = strtoull(err + 7, &end, 10);
  check(end != err + 7 && end[0] == ':' && end[1] == ' ' && end[2] != '\0');
  check(n <= size);
}

/* What report shows: the losses before events and at the end (threads', CPUs'). */
static void check_losses(const struct fxtf_file *f, const struct fxt_td_fxt_stats *st) {
  static struct fxtf_event e;
  char err[FXTF_ERR_SIZE];
  uint64_t shown = 0, unknown = 0;
  for (size_t i = 0; i < fxtf_event_count(f); i++) {
    check(fxtf_event_at(f, i, &e, err, sizeof err) == 0);
    shown += e.lost_before;
    unknown += e.lost_unknown;
  }
  uint32_t nt;
  const struct fxtf_thread *t = fxtf_threads(f, &nt);
  for (uint32_t i = 0; i < nt; i++) {
    shown += t[i].trailing_lost;
    unknown += t[i].trailing_unknown;
  }
  size_t nc;
  const struct fxtf_cpu_loss *c = fxtf_trailing_cpu_losses(f, &nc);
  for (size_t i = 0; i < nc; i++) {
    shown += c[i].records;
    unknown += c[i].unknown;
  }
  struct fxtf_totals tot;
  fxtf_totals(f, &tot);
  check(shown == tot.dropped + tot.overrun + tot.lost); /* (sums modulo 2^64 alike) */
  check((unknown != 0) == (st->lost_unknown != 0));
}

static void check_output(const struct mem_sink *s, const struct fxt_td_fxt_stats *st) {
  fxt_decoder_init(&g_dec, s->buf, s->len, g_table);
  int rc;
  uint64_t events = 0;
  while ((rc = fxt_decoder_next(&g_dec, &g_rec, NULL, 0)) == 1)
    events += g_rec.kind == FXT_KIND_EVENT;
  check(rc == 0);
  check(events >= st->events);
  check(st->records == st->events + st->unknown);
  char err[FXTF_ERR_SIZE];
  struct fxtf_file *f = NULL;
  check(fxtf_load(s->buf, s->len, &f, err, sizeof err) == 0);
  check(fxtf_event_count(f) == st->events);
  check_losses(f, st);
  fxtf_close(f);
}

static void pages_alone(const uint8_t *data, size_t size) {
  static const struct fxt_td_layout lays[] = {{false, 8, 0, 8, 16}, {true, 4, 0, 8, 12}};
  for (size_t k = 0; k < sizeof lays / sizeof lays[0]; k++) {
    struct fxt_td_page p;
    struct fxt_td_rec r;
    if (fxt_td_page_open(&p, data, size, 0, &lays[k], NULL, 0) != 0)
      continue;
    uint32_t last = 0, n = 0;
    while (fxt_td_page_next(&p, &r, NULL, 0) == 1) {
      check(r.data >= data + lays[k].data_offset && r.data + r.len <= data + size);
      check(p.pos > last); /* progress */
      last = p.pos;
      n++;
    }
    check(n <= size / 4);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct mem_sink s = {NULL, 0, 0};
  struct fxt_td_fxt_stats st;
  char err[FXT_TD_ERR_SIZE];
  int rc = fxt_td_to_fxt(data, size, collect, &s, &st, err, sizeof err);
  if (rc != 0) {
    check(rc == FXT_EBADMSG || rc == FXT_ENOSYS);
    check_message(err, size);
  } else {
    check_output(&s, &st);
  }
  free(s.buf);
  pages_alone(data, size);
  return 0;
}
