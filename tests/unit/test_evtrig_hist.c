/* test_evtrig_hist - `hist` event triggers live, in-process (events/<sys>/<ev>/trigger and
 * events/<sys>/<ev>/hist, src/host/evtrig_hist.c, src/base/hist.c): two threads count into one
 * histogram and every entry's hitcount and sum is exactly what the test computes on its own;
 * a full table counts Dropped exactly; pause, cont and clear; the `trigger` file's line; the
 * kernel's errors and error_log entries (texts from the kernel's trace_events_hist.c: this
 * machine's kernel has no CONFIG_HIST_TRIGGERS); removal; counting while recording is off;
 * and the live histogram is the text `fxtrace hist` prints over the file the session wrote. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../test_main.h"

#include <errno.h>
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/hist.h"
#include "tracefs_test.h"

FXT_TRACEPOINT(hst, ev, "key=%llu val=%llu name=%s", (u64, key), (u64, val), (str, name, 16));
FXT_TRACEPOINT(hst, off, "x=%llu", (u64, x));
FXT_TRACEPOINT(hst, on, "x=%llu", (u64, x));

static int setup(void **state)
{
  (void)state;
  live_start(FXT_MODE_OVERWRITE, "", NULL);
  return 0;
}

static int teardown(void **state) { return live_stop(state); }

/* One entry of a `hist` text: "{ key:          K } hitcount:          H  val:          V". */
struct row {
  uint64_t key, hits, val;
};

/* The rows of text (keys=key:vals=val), in order, and the totals; false when the text is not
 * made of them. */
static size_t rows(const char *text, struct row *r, size_t max, uint64_t *hits, uint64_t *entries,
                   uint64_t *dropped)
{
  size_t n = 0;
  for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    if (n < max && sscanf(l, "{ key: %" SCNu64 " } hitcount: %" SCNu64 "  val: %" SCNu64,
                          &r[n].key, &r[n].hits, &r[n].val) == 3)
      n++;
  }
  const char *t = strstr(text, "\nTotals:\n");
  assert_non_null(t);
  assert_int_equal(sscanf(t, "\nTotals:\n    Hits: %" SCNu64 "\n    Entries: %" SCNu64
                             "\n    Dropped: %" SCNu64,
                          hits, entries, dropped),
                   3);
  return n;
}

#define KEYS 3
#define PER_THREAD 300000

static pthread_barrier_t go; /* both threads fire at once: their adds overlap */

static void *firer(void *arg)
{
  uint64_t base = (uint64_t)(uintptr_t)arg;
  pthread_barrier_wait(&go);
  for (uint64_t i = 0; i < PER_THREAD; i++)
    FXT_TRACE(hst, ev, i % KEYS, base + i, "x");
  return NULL;
}

static void two_threads_count_exactly(void **state)
{
  (void)state;
  echo("events/hst/ev/trigger", "hist:keys=key:vals=val", 0);
  assert_string_equal(cat("events/hst/ev/trigger"),
                      "hist:keys=key:vals=hitcount,val:sort=hitcount:size=2048 [active]\n");
  pthread_t th[2];
  pthread_barrier_init(&go, NULL, 2);
  for (int i = 0; i < 2; i++)
    assert_int_equal(pthread_create(&th[i], NULL, firer, (void *)(uintptr_t)(i * 1000000)), 0);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  pthread_barrier_destroy(&go);
  /* What each key must hold, computed here. */
  uint64_t want_hits[KEYS] = {0}, want_sum[KEYS] = {0};
  for (int t = 0; t < 2; t++)
    for (uint64_t i = 0; i < PER_THREAD; i++) {
      want_hits[i % KEYS]++;
      want_sum[i % KEYS] += (uint64_t)t * 1000000 + i;
    }
  struct row r[16];
  uint64_t hits, entries, dropped;
  const char *text = cat("events/hst/ev/hist");
  assert_int_equal(strncmp(text, "# event histogram\n#\n# trigger info: hist:keys=key:vals="
                                 "hitcount,val:sort=hitcount:size=2048 [active]\n#\n\n",
                           strlen("# event histogram\n#\n# trigger info: hist:keys=key:vals="
                                  "hitcount,val:sort=hitcount:size=2048 [active]\n#\n\n")),
                   0);
  size_t n = rows(text, r, 16, &hits, &entries, &dropped);
  assert_int_equal(n, KEYS);
  assert_int_equal(hits, 2 * PER_THREAD);
  assert_int_equal(entries, KEYS);
  assert_int_equal(dropped, 0);
  for (size_t i = 0; i < n; i++) {
    assert_true(r[i].key < KEYS);
    assert_int_equal(r[i].hits, want_hits[r[i].key]);
    assert_int_equal(r[i].val, want_sum[r[i].key]);
    if (i) /* sort=hitcount: ascending, ties by key */
      assert_true(r[i - 1].hits < r[i].hits ||
                  (r[i - 1].hits == r[i].hits && r[i - 1].key < r[i].key));
  }
  echo("events/hst/ev/trigger", "!hist:keys=key:vals=val", 0);
  assert_int_equal(strncmp(cat("events/hst/ev/trigger"), "# Available triggers:", 21), 0);
  assert_string_equal(cat("events/hst/ev/hist"), "");
}

static void a_full_table_drops_exactly(void **state)
{
  (void)state;
  /* size=100 is the kernel's 128 (a power of two, at least 2^7); 200 keys, each once, then
   * key 5 (in the table) and key 150 (not) again. */
  echo("events/hst/ev/trigger", "hist:keys=key:vals=val:size=100", 0);
  for (uint64_t k = 0; k < 200; k++)
    FXT_TRACE(hst, ev, k, 1, "x");
  FXT_TRACE(hst, ev, 5, 1, "x");
  FXT_TRACE(hst, ev, 150, 1, "x");
  struct row r[256];
  uint64_t hits, entries, dropped;
  size_t n = rows(cat("events/hst/ev/hist"), r, 256, &hits, &entries, &dropped);
  assert_int_equal(n, 128);
  assert_int_equal(entries, 128);
  assert_int_equal(hits, 129);
  assert_int_equal(dropped, 73);
  assert_string_equal(cat("events/hst/ev/trigger"),
                      "hist:keys=key:vals=hitcount,val:sort=hitcount:size=128 [active]\n");
  echo("events/hst/ev/trigger", "!hist:keys=key:vals=val", 0);
}

static uint64_t total_hits(void)
{
  struct row r[16];
  uint64_t hits, entries, dropped;
  (void)rows(cat("events/hst/ev/hist"), r, 16, &hits, &entries, &dropped);
  return hits;
}

static void pause_cont_clear_and_recording_off(void **state)
{
  (void)state;
  echo("events/hst/ev/trigger", "hist:keys=key:vals=val:sort=key.descending if key < 3", 0);
  for (uint64_t i = 0; i < 10; i++)
    FXT_TRACE(hst, ev, i, i, "x");
  assert_int_equal(total_hits(), 3);
  /* The same histogram with :pause pauses it (a write of the same keys, values, sort and
   * filter); its events are not counted. */
  echo("events/hst/ev/trigger", "hist:keys=key:vals=val:sort=key.descending:pause if key < 3",
       0);
  assert_string_equal(cat("events/hst/ev/trigger"),
                      "hist:keys=key:vals=hitcount,val:sort=key.descending:size=2048 if key < 3"
                      " [paused]\n");
  FXT_TRACE(hst, ev, 1, 1, "x");
  assert_int_equal(total_hits(), 3);
  echo("events/hst/ev/trigger", "hist:keys=key:vals=val:sort=key.descending:cont if key < 3", 0);
  FXT_TRACE(hst, ev, 1, 1, "x");
  assert_int_equal(total_hits(), 4);
  /* Recording off: a hist trigger still counts (the kernel evaluates the event for its
   * triggers in a scratch buffer). */
  echo("tracing_on", "0", 0);
  FXT_TRACE(hst, ev, 2, 1, "x");
  echo("tracing_on", "1", 0);
  assert_int_equal(total_hits(), 5);
  struct row r[4];
  uint64_t hits, entries, dropped;
  assert_int_equal(rows(cat("events/hst/ev/hist"), r, 4, &hits, &entries, &dropped), 3);
  assert_int_equal(r[0].key, 2); /* key.descending */
  assert_int_equal(r[0].hits, 2);
  assert_int_equal(r[1].key, 1);
  assert_int_equal(r[1].hits, 2); /* seq 1 of the loop and the one after cont */
  assert_int_equal(r[1].val, 1 + 1);
  echo("events/hst/ev/trigger", "hist:keys=key:vals=val:sort=key.descending:clear if key < 3",
       0);
  assert_int_equal(total_hits(), 0);
  FXT_TRACE(hst, ev, 0, 0, "x");
  assert_int_equal(total_hits(), 1);
  /* Another histogram of the same event beside it (string key): both in the `hist` file. */
  echo("events/hst/ev/trigger", "hist:keys=name,common_pid.execname", 0);
  FXT_TRACE(hst, ev, 0, 0, "abc");
  const char *t = cat("events/hst/ev/hist");
  assert_non_null(strstr(t, "\n\n\n# event histogram\n#\n# trigger info: hist:keys=key:vals="));
  char want[128]; /* a string key printed as the kernel's "%-50s", an execname "%-16s[%10d]" */
  char comm[16];
  pthread_getname_np(pthread_self(), comm, sizeof(comm));
  snprintf(want, sizeof(want), "{ name: %-50s, common_pid: %-16s[", "abc", comm);
  assert_non_null(strstr(t, want));
  echo("events/hst/ev/trigger", "!hist:keys=name,common_pid.execname", 0);
  echo("events/hst/ev/trigger", "!hist:keys=key:vals=val:sort=key.descending if key < 3", 0);
  assert_string_equal(cat("events/hst/ev/hist"), "");
}

static void errors_are_the_kernels(void **state)
{
  (void)state;
  echo("error_log", "", 0);
  static const char *const refused[] = {"hist:keys=nosuch", "hist:keys=key.foo",
                                         "hist:keys=key:sort=val", "hist:keys=key:sort=key.up",
                                         NULL};
  echo_each_refused("events/hst/ev/trigger", refused);
  echo("events/hst/ev/trigger", "hist:keys=key:clear", -ENOENT);
  echo("events/hst/ev/trigger", "hist:vals=val", -EINVAL);          /* no keys */
  echo("events/hst/ev/trigger", "hist:keys=key:size=1000000", -EINVAL); /* over 2^17 */
  echo("events/hst/ev/trigger", "hist:keys=key", 0);
  echo("events/hst/ev/trigger", "hist:keys=key", -EEXIST);
  const char *log = cat("error_log");
  /* The kernel's hist_err: location "hist:<sys>:<ev>", the command with "hist:" put back,
   * the caret at errpos (where the offending text first occurs in the command; 0 for the
   * existence errors) after "  Command: ". */
  static const struct {
    const char *error, *command, *at;
  } entries[] = {
      {"Couldn't find field", "hist:keys=nosuch", "nosuch"},
      {"Invalid field modifier", "hist:keys=key.foo", "foo"},
      {"Sort field must be a key or a val", "hist:keys=key:sort=val", "val"},
      {"Invalid sort modifier", "hist:keys=key:sort=key.up", "up"},
      {"Can't clear or continue a nonexistent hist trigger", "hist:keys=key:clear", NULL},
      {"Hist trigger already exists", "hist:keys=key", NULL},
  };
  for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
    char want[512];
    int pos = entries[i].at ? (int)(strstr(entries[i].command, entries[i].at) -
                                    entries[i].command)
                            : 0;
    snprintf(want, sizeof(want), "] hist:hst:ev: error: %s\n  Command: %s\n%*s^\n",
             entries[i].error, entries[i].command, 11 + pos, "");
    const char *at = strstr(log, want);
    if (!at)
      fail_msg("error_log lacks entry %zu:\n%s", i, log);
    log = at + strlen(want);
  }
  echo("events/hst/ev/trigger", "!hist:keys=key", 0);
}

static void enable_and_disable_hist_switch_exactly(void **state)
{
  (void)state;
  /* off pauses ev's histograms at x == 3, on continues them at x == 6 (once: its count), each
   * after ev's event of that round: ev's 4, 5 and 6 are not counted. enable_hist and
   * disable_hist of one target are one kind (the kernel's ETT_HIST_ENABLE: EEXIST). */
  echo("events/hst/ev/trigger", "hist:keys=key", 0);
  echo("events/hst/off/trigger", "disable_hist:hst:ev if x == 3", 0);
  echo("events/hst/off/trigger", "enable_hist:hst:ev", -EEXIST);
  echo("events/hst/on/trigger", "enable_hist:hst:ev:1 if x == 6 || x == 8", 0);
  for (uint64_t i = 0; i < 10; i++) {
    FXT_TRACE(hst, ev, i, 0, "x");
    FXT_TRACE(hst, off, i);
    FXT_TRACE(hst, on, i);
    if (i == 4)
      assert_non_null(strstr(cat("events/hst/ev/trigger"), " [paused]\n"));
  }
  assert_string_equal(cat("events/hst/on/trigger"),
                      "enable_hist:hst:ev:count=0 if x == 6 || x == 8\n");
  assert_string_equal(cat("events/hst/off/trigger"), "disable_hist:hst:ev:unlimited if x == 3\n");
  assert_string_equal(cat("events/hst/ev/trigger"),
                      "hist:keys=key:vals=hitcount:sort=hitcount:size=2048 [active]\n");
  struct row r[16];
  uint64_t hits, entries, dropped;
  (void)rows(cat("events/hst/ev/hist"), r, 16, &hits, &entries, &dropped);
  assert_int_equal(hits, 7);
  assert_int_equal(entries, 7);
  echo("events/hst/on/trigger", "!enable_hist:hst:ev", 0);
  echo("events/hst/off/trigger", "!disable_hist:hst:ev", 0);
  echo("events/hst/ev/trigger", "!hist:keys=key", 0);
}

/* The live histogram and `fxtrace hist`'s over the file the same session wrote (the same
 * table and text, the fields read two ways: from the fire site's values, from the file). */
static void live_and_offline_agree(void **state)
{
  (void)state;
  fxt_session_stop();
  char path[64];
  snprintf(path, sizeof(path), "/tmp/fxt-evtrig-hist-%d.fxt", (int)getpid());
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .mode = FXT_MODE_DISCARD,
                                   .events = "hst:ev", .output = path};
  assert_int_equal(fxt_session_start(&cfg), 0);
  echo("events/hst/ev/trigger", "hist:keys=key.buckets=3,name:vals=val:sort=val.descending", 0);
  static const char *const names[] = {"a", "bb", "ccc"};
  for (uint64_t i = 0; i < 1000; i++)
    FXT_TRACE(hst, ev, i % 13, i * 7, names[i % 3]);
  char *live = strdup(cat("events/hst/ev/hist"));
  assert_non_null(live);
  echo("events/hst/ev/trigger", "!hist:keys=key.buckets=3,name:vals=val:sort=val.descending", 0);
  fxt_session_stop();
  struct fxt_hist_spec spec;
  char err[256];
  assert_int_equal(fxt_hist_parse(&spec, "key.buckets=3,name", "val", "val.descending", NULL, err,
                                  sizeof(err)),
                   0);
  struct fxt_hist *h = fxt_hist_new(&spec);
  struct fxtf_file *f;
  assert_non_null(h);
  assert_int_equal(fxtf_open(path, &f, err, sizeof(err)), 0);
  for (size_t i = 0; i < fxtf_event_count(f); i++) {
    struct fxtf_event e;
    assert_int_equal(fxtf_event_at(f, i, &e, err, sizeof(err)), 0);
    if (e.ev.name.len == 2 && memcmp(e.ev.name.data, "ev", 2) == 0)
      assert_int_equal(fxt_hist_add(h, &e), 0);
  }
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  assert_int_equal(fxt_hist_print(h, NULL, &b), 0);
  /* (offline, a string key is 255 bytes wide, live its field's bound: the same text) */
  assert_string_equal(fxt_tbuf_str(&b), live);
  assert_non_null(strstr(live, "    Hits: 1000\n"));
  fxt_tbuf_free(&b);
  free(live);
  fxt_hist_free(h);
  fxtf_close(f);
  unlink(path);
  assert_int_equal(fxt_session_start(&(struct fxt_session_config){
                       .struct_size = sizeof(cfg), .mode = FXT_MODE_OVERWRITE, .events = "",
                       .output = ""}),
                   0);
}

FXT_TEST_MAIN(
    FXT_TEST_ST(two_threads_count_exactly), FXT_TEST_ST(a_full_table_drops_exactly),
    FXT_TEST_ST(pause_cont_clear_and_recording_off), FXT_TEST_ST(errors_are_the_kernels),
    FXT_TEST_ST(enable_and_disable_hist_switch_exactly), FXT_TEST_ST(live_and_offline_agree))
