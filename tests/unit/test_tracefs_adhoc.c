/* test_tracefs_adhoc - the live tree's ad-hoc events: a duration's `format` has the field
 * `u64 dur_ns` and a counter's `u64 id` (then their arguments: test_tracefs_adhoc_args.c),
 * laid out as the trace.dat export lays them out (src/formats/tracedat_write_event.h, spec
 * ftrace-text.md 3), so filters on them compile and
 * decide: complete events and scopes by their length, begin/end events as dur_ns 0, counters
 * by their id. The session runs on CLOCK_MONOTONIC, so FXT_COMPLETE's start can be set a known
 * number of nanoseconds back.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../test_main.h"

#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tracefs_test.h"

static unsigned count(const char *text, const char *what)
{
  unsigned n = 0;
  for (const char *p = text; (p = strstr(p, what)) != NULL; p++)
    n++;
  return n;
}

#define COMMON                                                                             \
  "format:\n"                                                                              \
  "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"                   \
  "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"                   \
  "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"           \
  "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"                               \
  "\n"

/* The id file's text ("N\n") into id[32]. */
static void id_of(const char *path, char *id)
{
  const char *t = cat(path);
  size_t n = strlen(t);
  assert_true(n > 1 && n < 32);
  memcpy(id, t, n + 1);
}

static void fire(uint64_t back_ns, uint64_t id)
{
  FXT_COMPLETE("tfa", "complete", fxt_now() - back_ns);
  FXT_COUNTER("tfa", "counter", id, FXT_U64("v", back_ns));
  FXT_BEGIN("tfa", "pair");
  FXT_END("tfa", "pair");
}

static void formats_and_filters(void **state)
{
  (void)state;
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "tfa:*", .output = "",
                                   .clock = FXT_CLOCK_MONOTONIC};
  assert_int_equal(fxt_session_start(&cfg), 0);
  echo("tracing_on", "1\n", 0);
  fire(1, 1); /* registered and named */
  char want[2048], id[32];
  id_of("events/tfa/complete/id", id);
  snprintf(want, sizeof want,
           "name: complete\nID: %s" COMMON "\tfield:u64 dur_ns;\toffset:8;\tsize:8;\tsigned:0;\n"
           "\nprint fmt: \"dur=%%llu.%%03lluus\", REC->dur_ns / 1000, REC->dur_ns %% 1000\n",
           id);
  assert_string_equal(cat("events/tfa/complete/format"), want);
  id_of("events/tfa/counter/id", id);
  snprintf(want, sizeof want,
           "name: counter\nID: %s" COMMON "\tfield:u64 id;\toffset:8;\tsize:8;\tsigned:0;\n"
           "\tfield:u64 v;\toffset:16;\tsize:8;\tsigned:0;\n"
           "\nprint fmt: \"id=%%llu v=%%llu\", REC->id, REC->v\n",
           id);
  assert_string_equal(cat("events/tfa/counter/format"), want);

  echo("events/tfa/complete/filter", "dur_ns > 100000", 0);
  echo("events/tfa/counter/filter", "id == 7 || id == 9", 0);
  echo("events/tfa/pair/filter", "dur_ns == 0", 0);
  assert_string_equal(cat("events/tfa/complete/filter"), "dur_ns > 100000\n");
  echo("trace", "", 0); /* cleared: events stamped before this are not shown, and a */
  struct timespec later = {0, 10000000}; /* complete event is stamped with its start */
  nanosleep(&later, NULL);
  for (uint64_t i = 0; i < 10; i++) {
    fire(i % 2 ? 5000000 : 1000, i); /* 5 ms passes, 1 us does not */
    FXT_SCOPE("tfa", "scope");
    if (i % 2) { /* a scope of at least 2 ms passes its filter below, an empty one not */
      struct timespec ts = {0, 2000000};
      nanosleep(&ts, NULL);
    }
  }
  assert_int_equal(fxt_session_flush(), 0);
  const char *t = cat("trace");
  assert_int_equal(count(t, " complete: dur="), 5);
  assert_int_equal(count(t, " counter: id="), 2); /* 7 and 9 */
  assert_int_equal(count(t, " counter: id=7 "), 1);
  assert_int_equal(count(t, " pair: B"), 10);
  assert_int_equal(count(t, " pair: E"), 10);
  assert_int_equal(count(t, " scope: dur="), 10); /* no filter yet */

  echo("events/tfa/scope/filter", "dur_ns >= 2000000", 0);
  echo("events/tfa/pair/filter", "dur_ns != 0", 0); /* begin and end: no length, 0 */
  echo("trace", "", 0);
  for (uint64_t i = 0; i < 10; i++) {
    fire(1, 1);
    FXT_SCOPE("tfa", "scope");
    if (i % 2) {
      struct timespec ts = {0, 2000000};
      nanosleep(&ts, NULL);
    }
  }
  assert_int_equal(fxt_session_flush(), 0);
  t = cat("trace");
  assert_int_equal(count(t, " scope: dur="), 5);
  assert_int_equal(count(t, " pair: "), 0);
  assert_int_equal(count(t, " complete: "), 0);
  /* A field these events do not have is the kernel's error. */
  echo("events/tfa/counter/filter", "dur_ns > 1", -22);
  assert_non_null(strstr(cat("events/tfa/counter/filter"), "\nparse_error: Field not found\n"));
  assert_int_equal(fxt_session_stop(), 0);
}

FXT_TEST_MAIN(
    cmocka_unit_test(formats_and_filters))
