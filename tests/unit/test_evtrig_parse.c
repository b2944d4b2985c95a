/* test_evtrig_parse - the text of event triggers (src/host/evtrig_parse.c): what a write to a
 * `trigger` file parses to, which writes fail and with which errno, and the lines a read
 * prints. Every expectation is the kernel's (6.18, this machine's tracefs, writes to
 * events/sched/EVENT/trigger): what it accepted, refused (EINVAL / ERANGE) and printed back. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../test_main.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/tbuf.h"
#include "host/evtrig.h"

/* Parses text; returns the result, with spec and the stripped text's start. */
static int parse(const char *text, struct fxt_evtrig_spec *sp, char *copy)
{
  size_t start;
  strcpy(copy, text);
  int rc = fxt_evtrig_parse(copy, strlen(copy), &start, sp);
  if (rc == 0)
    memmove(copy, copy + start, strlen(copy + start) + 1);
  return rc;
}

/* The line a read prints for what text parsed to (the count and filter as written). */
static const char *line_of(const char *text)
{
  static char out[8192];
  char copy[8192], target[512];
  struct fxt_evtrig_spec sp;
  size_t start;
  strcpy(copy, text);
  if (fxt_evtrig_parse(copy, strlen(copy), &start, &sp) != 0)
    return "<refused>";
  char filter[4096] = "";
  if (sp.filter_len)
    snprintf(filter, sizeof(filter), "%.*s", (int)sp.filter_len, copy + sp.filter_at);
  if (fxt_evtrig_has_target(sp.cmd))
    snprintf(target, sizeof(target), "%.*s:%.*s", (int)sp.sys_len, copy + sp.sys_at,
             (int)sp.ev_len, copy + sp.ev_at);
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  fxt_evtrig_print(&b, sp.cmd, fxt_evtrig_has_target(sp.cmd) ? target : NULL, sp.count,
                   sp.filter_len ? filter : NULL);
  snprintf(out, sizeof(out), "%.*s", (int)b.len, b.data);
  fxt_tbuf_free(&b);
  return out;
}

/* Accepted writes and what the kernel listed for each. */
static const struct fxt_text_case k_accepted[] = {
    {"traceoff:5", "traceoff:count=5\n"},
    {"traceoff", "traceoff:unlimited\n"},
    {"  traceon  ", "traceon:unlimited\n"},
    {"stacktrace if comm == \"x\"", "stacktrace:unlimited if comm == \"x\"\n"},
    {"traceoff\tif\tcommon_pid==1", "traceoff:unlimited if common_pid==1\n"},
    /* The filter kept as written, its inner blanks too; text after a second ':' ignored. */
    {"traceoff:3:junk if common_pid  ==  1", "traceoff:count=3 if common_pid  ==  1\n"},
    {"traceoff if  pid == 1", "traceoff:unlimited if  pid == 1\n"},
    /* Blanks after the command's ':' are skipped. */
    {"traceoff: 3", "traceoff:count=3\n"},
    /* kstrtoul's bases: 0x hex, 0 octal. */
    {"traceoff:0x10", "traceoff:count=16\n"},
    {"traceoff:010", "traceoff:count=8\n"},
    {"traceoff:0 if child_pid == 7", "traceoff:count=0 if child_pid == 7\n"},
    {"stacktrace:5 if next_pid > 10", "stacktrace:count=5 if next_pid > 10\n"},
    {"enable_event:sched:sched_wakeup:2", "enable_event:sched:sched_wakeup:count=2\n"},
    {"enable_event:sched:sched_process_hang", "enable_event:sched:sched_process_hang:unlimited\n"},
    {"disable_event:sched:sched_process_hang:2:x",
     "disable_event:sched:sched_process_hang:count=2\n"},
    {"enable_event:sched:sched_process_hang:3 if child_pid == 1",
     "enable_event:sched:sched_process_hang:count=3 if child_pid == 1\n"},
    /* "traceon:" and "traceon:0" parse (the kernel then said EEXIST: a traceoff was there). */
    {"traceon:", "traceon:unlimited\n"},
    {"traceon:0", "traceon:count=0\n"},
    /* A count of 2^64 - 1 is the kernel's -1. */
    {"traceoff:18446744073709551615", "traceoff:unlimited\n"},
};

static void accepted_and_printed(void **state)
{
  (void)state;
  for (size_t i = 0; i < sizeof(k_accepted) / sizeof(k_accepted[0]); i++)
    if (strcmp(line_of(k_accepted[i].in), k_accepted[i].want) != 0)
      fail_msg("'%s' reads back as '%s', the kernel's: '%s'", k_accepted[i].in,
               line_of(k_accepted[i].in), k_accepted[i].want);
}

static void refused(void **state)
{
  (void)state;
  struct fxt_evtrig_spec sp;
  char copy[8192];
  static const char *const einval[] = {
      "traceon:x", "foo", "hist", "hist:", "enable_event:sched", "enable_event:",
      "enable_event:sched:sched_process_hang:", "traceoff extra", "traceoff:3x", "", "   ",
      "!", "traceoff if", "! traceoff", "traceoff:5 iff x", "traceoff:0x",
  };
  for (size_t i = 0; i < sizeof(einval) / sizeof(einval[0]); i++)
    if (parse(einval[i], &sp, copy) != -EINVAL)
      fail_msg("'%s' should be EINVAL", einval[i]);
  /* kstrtoul's overflow. */
  assert_int_equal(parse("traceoff:18446744073709551616", &sp, copy), -ERANGE);
  /* A write of a page or more. */
  static char big[5000];
  memset(big, ' ', sizeof(big) - 1);
  memcpy(big, "traceoff", 8);
  assert_int_equal(parse(big, &sp, copy), -EINVAL);
}

static void removal(void **state)
{
  (void)state;
  struct fxt_evtrig_spec sp;
  char copy[8192];
  /* The kernel removed these with success: nothing after the command (or target) counts. */
  assert_int_equal(parse("!traceoff if x", &sp, copy), 0);
  assert_true(sp.remove);
  assert_int_equal(sp.cmd, FXT_EVTRIG_TRACEOFF);
  assert_int_equal(parse("!traceon", &sp, copy), 0);
  assert_int_equal(sp.cmd, FXT_EVTRIG_TRACEON);
  assert_int_equal(parse("!enable_event:sched:sched_wakeup", &sp, copy), 0);
  assert_int_equal(sp.cmd, FXT_EVTRIG_ENABLE_EVENT);
  assert_memory_equal(copy + sp.sys_at, "sched", 5);
  assert_int_equal(sp.sys_len, 5);
  assert_memory_equal(copy + sp.ev_at, "sched_wakeup", 12);
  assert_int_equal(sp.ev_len, 12);
  assert_int_equal(parse("!traceoff:zz", &sp, copy), 0);
}

static void available_line(void **state)
{
  (void)state;
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  fxt_evtrig_print_available(&b);
  /* This kernel's line ("# traceon traceoff stacktrace enable_event disable_event") with
   * snapshot where a kernel built with it registers it: after traceoff; and enable_hist,
   * disable_hist and hist where one built with CONFIG_HIST_TRIGGERS registers them, last. */
  assert_int_equal(b.len, strlen("# Available triggers:\n"
                                 "# traceon traceoff snapshot stacktrace enable_event "
                                 "disable_event enable_hist disable_hist hist\n"));
  assert_memory_equal(b.data,
                      "# Available triggers:\n"
                      "# traceon traceoff snapshot stacktrace enable_event disable_event "
                      "enable_hist disable_hist hist\n",
                      b.len);
  fxt_tbuf_free(&b);
}

FXT_TEST_MAIN(
    cmocka_unit_test(accepted_and_printed), cmocka_unit_test(refused), cmocka_unit_test(removal),
    cmocka_unit_test(available_line))
