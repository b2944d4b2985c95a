/* test_evtrig_kernel - event triggers' effects on the tree's other files, and their errors,
 * as this machine's kernel (6.18, tracefs mounted on /sys/kernel/tracing, CONFIG_HIST_TRIGGERS
 * off) answered the same writes. Its events signal:signal_generate and signal:signal_deliver
 * (the whole `signal` system) are played here by tk:gen and tk:del (the whole `tk` system),
 * gen with signal_generate's fields. What the kernel answered is quoted at each step; it comes
 * from the kernel, not from fxtrace:
 *
 *   - set_event lists an event in soft mode, soft-disabled (`0*`) or not, by its plain name;
 *   - a system's `enable` counts an event in soft mode as enabled: `1` when its events are all
 *     in soft mode, whatever their `*`; `X` when its events are mixed;
 *   - an event an enable_event trigger enabled stays enabled (`1`, listed in set_event) once
 *     the trigger is removed, and records;
 *   - a wrong trigger filter's error_log entry, byte for byte after its time stamp, and the
 *     errno of each wrong write; wrong commands (not their filters) log nothing.
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
#include <stdlib.h>
#include <string.h>

/* signal_generate's fields (its format: int sig, int errno, int code, char comm[16], pid_t
 * pid, int group, int result). */
FXT_TRACEPOINT(tk, gen, "sig=%d errno=%d code=%d comm=%s pid=%d group=%d result=%d",
               (s32, sig), (s32, errno), (s32, code), (str, comm, 16), (s32, pid), (s32, group),
               (s32, result));
FXT_TRACEPOINT(tk, del, "sig=%d", (s32, sig));

/* After the tracepoints: it brings <errno.h>, whose errno macro would rename the field. */
#include "tracefs_test.h"

static void fire_gen(int sig) { FXT_TRACE(tk, gen, sig, 0, 0, "sh", 1, 0, 0); }

static int setup(void **state)
{
  (void)state;
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "", .output = ""};
  assert_int_equal(fxt_session_start(&cfg), 0);
  echo("tracing_on", "1", 0);
  return 0;
}

/* The lines of text, sorted, one string (the kernel lists set_event in its events' order,
 * fxtrace in its registry's: the same set). */
static const char *sorted(const char *text)
{
  static char lines[64][128], out[8192];
  size_t n = 0;
  for (const char *p = text; *p && n < 64;) {
    size_t len = strcspn(p, "\n");
    snprintf(lines[n++], sizeof(lines[0]), "%.*s", (int)len, p);
    p += len + (p[len] == '\n');
  }
  qsort(lines, n, sizeof(lines[0]), (int (*)(const void *, const void *))strcmp);
  out[0] = 0;
  for (size_t i = 0; i < n; i++)
    strcat(strcat(out, lines[i]), "\n");
  return out;
}

static void state_is(const char *del, const char *gen, const char *sys, const char *set_event)
{
  assert_string_equal(cat("events/tk/del/enable"), del);
  assert_string_equal(cat("events/tk/gen/enable"), gen);
  assert_string_equal(cat("events/tk/enable"), sys);
  assert_string_equal(sorted(cat("set_event")), set_event);
}

/* The kernel:
 *   # echo 'enable_event:signal:signal_deliver if sig == 99' > signal_generate/trigger
 *   signal_deliver/enable 0*, signal_generate/enable 0*, signal/enable 1,
 *   set_event: signal:signal_deliver, signal:signal_generate
 *   # echo 1 > signal_deliver/enable
 *   signal_deliver/enable 1*, signal/enable 1, set_event the same
 *   # echo 0 > signal_deliver/enable; echo '!enable_event:...' > signal_generate/trigger
 *   0, 0, 0, set_event empty */
static void soft_mode_in_set_event_and_system_enable(void **state)
{
  (void)state;
  echo("events/tk/gen/trigger", "enable_event:tk:del if sig == 99", 0);
  fire_gen(1);
  state_is("0*\n", "0*\n", "1\n", "tk:del\ntk:gen\n");
  echo("events/tk/del/enable", "1", 0);
  state_is("1*\n", "0*\n", "1\n", "tk:del\ntk:gen\n");
  echo("events/tk/del/enable", "0", 0);
  echo("events/tk/gen/trigger", "!enable_event:tk:del", 0);
  state_is("0\n", "0\n", "0\n", "");
}

/* The kernel:
 *   # echo 'enable_event:signal:signal_deliver' > signal_generate/trigger  (fired at once)
 *   signal_deliver/enable 1*, signal_generate/enable 0*, signal/enable 1
 *   # echo '!enable_event:signal:signal_deliver' > signal_generate/trigger
 *   signal_deliver/enable 1, signal_generate/enable 0, signal/enable X,
 *   set_event: signal:signal_deliver */
static void fired_enable_stays_after_removal(void **state)
{
  (void)state;
  echo("events/tk/gen/trigger", "enable_event:tk:del", 0);
  fire_gen(1);
  state_is("1*\n", "0*\n", "1\n", "tk:del\ntk:gen\n");
  echo("events/tk/gen/trigger", "!enable_event:tk:del", 0);
  state_is("1\n", "0\n", "X\n", "tk:del\n");
  echo("trace", "", 0);
  FXT_TRACE(tk, del, 7);
  fire_gen(2);
  assert_int_equal(fxt_session_flush(), 0);
  const char *t = cat("trace");
  assert_non_null(strstr(t, " del: sig=7"));
  assert_null(strstr(t, " gen: "));
  echo("events/tk/del/enable", "0", 0);
}

/* Wrong trigger filters and what the kernel's error_log said of each, after the time
 * stamp ("[39224.676535] "), its write's errno beside it:
 *   # echo 'traceoff if nosuchfield == 1' > signal_generate/trigger      EINVAL
 *   # echo 'traceoff if sig ==' > ...                                    EINVAL
 *   # echo 'stacktrace if (sig == 1' > ...                               ENOENT
 *   # echo 'traceon if errno ~ "x*"' > ...                               EINVAL
 *   # echo 'enable_event:signal:signal_deliver if comm == 1' > ...       EINVAL
 *   # echo 'traceoff if sig == 1 &&' > ...                               EINVAL
 *   # echo 'traceoff if 0' > ...                                         EINVAL
 *   # echo 'traceoff if sig == 1 if' > ...                               EPERM */
static const struct {
  const char *cmd;
  int err;
  const char *log;
} k_wrong[] = {
    {"traceoff if nosuchfield == 1", -22,
     "event filter parse error: error: Field not found\n"
     "  Command: nosuchfield == 1\n"
     "                       ^\n"},
    {"traceoff if sig ==", -22,
     "event filter parse error: error: Invalid value (did you forget quotes)?\n"
     "  Command: sig ==\n"
     "                  ^\n"},
    {"stacktrace if (sig == 1", -2,
     "event filter parse error: error: Too many '('\n"
     "  Command: (sig == 1\n"
     "           ^\n"},
    {"traceon if errno ~ \"x*\"", -22,
     "event filter parse error: error: Expecting numeric field\n"
     "  Command: errno ~ \"x*\"\n"
     "                    ^\n"},
    {"enable_event:tk:del if comm == 1", -22,
     "event filter parse error: error: Expecting string field\n"
     "  Command: comm == 1\n"
     "                    ^\n"},
    {"traceoff if sig == 1 &&", -22,
     "event filter parse error: error: Meaningless filter expression\n"
     "  Command: sig == 1 &&\n"
     "                      ^\n"},
    {"traceoff if 0", -22,
     "event filter parse error: error: Field not found\n"
     "  Command: 0\n"
     "             ^\n"},
    {"traceoff if sig == 1 if", -1,
     "event filter parse error: error: Too many terms in predicate expression\n"
     "  Command: sig == 1 if\n"
     "                    ^\n"},
};

/* Wrong commands the kernel refuses without an error_log entry, and two it takes:
 *   # echo CMD > signal_generate/trigger   (error_log empty after all of them) */
static const struct {
  const char *cmd;
  int err;
} k_refused[] = {
    {"bogus", -22},                                /* Invalid argument */
    {"traceoff:abc", -22},                         /* Invalid argument */
    {"enable_event:nosys:noev", -22},              /* Invalid argument */
    {"enable_event:tk", -22},                      /* (enable_event:signal) Invalid argument */
    {"traceoff:5 sig == 1", -22},                  /* Invalid argument */
    {"traceoff if", -22},                          /* Invalid argument */
    {"traceoff:99999999999999999999", -34},        /* Numerical result out of range */
    {"traceoff:-1", -22},                          /* Invalid argument */
    {"!traceoff:3", 0},                            /* removing what is not there: 0 */
    {"traceoff:0", 0},                             /* trigger: "traceoff:count=0" */
};

static void error_log_of_wrong_triggers(void **state)
{
  (void)state;
  size_t n = sizeof(k_wrong) / sizeof(k_wrong[0]);
  echo("error_log", "", 0);
  for (size_t i = 0; i < n; i++)
    echo("events/tk/gen/trigger", k_wrong[i].cmd, k_wrong[i].err);
  /* The entries, oldest first, each "[time] " then the kernel's text. */
  const char *p = cat("error_log");
  for (size_t i = 0; i < n; i++) {
    if (*p != '[' || !strstr(p, "] "))
      fail_msg("entry %zu: %s", i, p);
    p = strstr(p, "] ") + 2;
    size_t len = strlen(k_wrong[i].log);
    if (strncmp(p, k_wrong[i].log, len) != 0)
      fail_msg("entry %zu of '%s':\n%.*s\nthe kernel's:\n%s", i, k_wrong[i].cmd,
               (int)strcspn(p, "["), p, k_wrong[i].log);
    p += len;
  }
  assert_string_equal(p, "");
  echo("error_log", "", 0);
  for (size_t i = 0; i < sizeof(k_refused) / sizeof(k_refused[0]); i++)
    echo("events/tk/gen/trigger", k_refused[i].cmd,
         k_refused[i].err ? k_refused[i].err : (ssize_t)strlen(k_refused[i].cmd));
  assert_string_equal(cat("error_log"), "");
  assert_string_equal(cat("events/tk/gen/trigger"), "traceoff:count=0\n");
  echo("events/tk/gen/trigger", "!traceoff", 0);
  assert_string_equal(cat("events/tk/gen/trigger"),
                      "# Available triggers:\n"
                      "# traceon traceoff snapshot stacktrace enable_event disable_event "
                      "enable_hist disable_hist hist\n");
}

FXT_TEST_MAIN(cmocka_unit_test_setup_teardown(soft_mode_in_set_event_and_system_enable, setup, live_stop),
              cmocka_unit_test_setup_teardown(fired_enable_stays_after_removal, setup, live_stop),
              cmocka_unit_test_setup_teardown(error_log_of_wrong_triggers, setup, live_stop))
