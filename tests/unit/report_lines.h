/* tests/unit/report_lines.h - what `fxtrace report` prints about losses, checked on a loaded
 * file (src/formats/fxtfile.h): each event's LOST line (text.c) and the CPU losses it prints at
 * the end. For test_fxtfile.c and test_tdr_fxt.c.
 */
#ifndef FXTRACE_TEST_REPORT_LINES_H
#define FXTRACE_TEST_REPORT_LINES_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "formats/fxtfile.h"
#include "base/text.h"

/* An event in time order and the LOST line report prints before it ("" for none). */
struct want_event {
  uint64_t ns, tid;
  uint32_t cpu;
  const char *lost_line;
};

static inline void expect_events(const struct fxtf_file *f, const struct want_event *want,
                                 size_t n) {
  assert_int_equal(fxtf_event_count(f), n);
  struct fxtf_event e;
  char err[FXTF_ERR_SIZE];
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(fxtf_event_at(f, i, &e, err, sizeof err), 0);
    assert_int_equal(e.ns, want[i].ns);
    assert_int_equal(e.thread->tid, want[i].tid);
    assert_int_equal(e.cpu, want[i].cpu);
    b.len = 0;
    fxt_text_event(&b, &e);
    size_t k = strlen(want[i].lost_line);
    assert_memory_equal(fxt_tbuf_str(&b), want[i].lost_line, k);
    assert_int_equal(b.data[k], ' '); /* then the event's own line, no other LOST line */
  }
  fxt_tbuf_free(&b);
}

/* The CPU losses no event stands behind, in order. */
static inline void expect_trailing_cpu_losses(const struct fxtf_file *f,
                                              const struct fxtf_cpu_loss *want, size_t n) {
  size_t got;
  const struct fxtf_cpu_loss *c = fxtf_trailing_cpu_losses(f, &got);
  assert_int_equal(got, n);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(c[i].provider, want[i].provider);
    assert_int_equal(c[i].cpu, want[i].cpu);
    assert_int_equal(c[i].records, want[i].records);
    assert_int_equal(c[i].unknown, want[i].unknown);
  }
}

#endif
