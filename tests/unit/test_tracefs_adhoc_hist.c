/* test_tracefs_adhoc_hist - hist triggers on ad-hoc events' fields in the live tree: keys and
 * values among a counter's arguments, an instant's (numbers and strings, FXT_ARG's types), the
 * arguments of an event whose sites differ (read by name; a site without one reads 0), an async event's id and a complete event's
 * dur_ns, as the kernel's hist triggers take a tracepoint's fields. Each histogram read from
 * events/tfh/<ev>/hist is compared, entry by entry, with the one computed here from the values
 * emitted (dur_ns: from the same events' lines in `trace`, CLOCK_MONOTONIC, so a duration is
 * the difference of its two recorded nanoseconds). While recording is off the triggers still
 * run (the histogram counts, a traceon turns it back on), as the kernel's.
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
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracefs_test.h"

#define N 200
#define MAXE 64

/* One entry of a histogram: its key's text (numbers as u64 in decimal, strings as they are),
 * its hitcount and its values (up to two). */
struct entry {
  char key[64];
  uint64_t hits, val[2];
};

struct hist {
  struct entry e[MAXE];
  unsigned n;
};

/* The entry of key in h, added (hits 0) when absent. */
static struct entry *at(struct hist *h, const char *key)
{
  for (unsigned i = 0; i < h->n; i++)
    if (strcmp(h->e[i].key, key) == 0)
      return &h->e[i];
  assert_true(h->n < MAXE);
  struct entry *e = &h->e[h->n++];
  memset(e, 0, sizeof(*e));
  snprintf(e->key, sizeof(e->key), "%s", key);
  return e;
}

static void add(struct hist *h, const char *key, uint64_t v0, uint64_t v1)
{
  struct entry *e = at(h, key);
  e->hits++;
  e->val[0] += v0;
  e->val[1] += v1;
}

static void add_u(struct hist *h, uint64_t key, uint64_t v0, uint64_t v1)
{
  char k[32];
  snprintf(k, sizeof(k), "%" PRIu64, key);
  add(h, k, v0, v1);
}

/* The entries of the kernel's hist text t ("{ KEY: VALUE } hitcount: N  V1: S  V2: S"; one
 * key), and its Totals' Hits, which must be their sum. */
static void parse(const char *t, struct hist *h)
{
  memset(h, 0, sizeof(*h));
  uint64_t sum = 0;
  for (const char *p = t; (p = strstr(p, "\n{ ")) != NULL; p++) {
    const char *colon = strchr(p + 3, ':'), *close = strstr(p, " } hitcount:");
    assert_non_null(colon);
    assert_non_null(close);
    const char *v = colon + 1;
    while (*v == ' ')
      v++;
    const char *end = close;
    while (end > v && end[-1] == ' ')
      end--;
    char key[64];
    assert_true((size_t)(end - v) < sizeof(key));
    memcpy(key, v, (size_t)(end - v));
    key[end - v] = 0;
    struct entry *e = at(h, key);
    if (e->hits != 0) /* each key once */
      fail_msg("key %s twice in\n%s", key, t);
    char *q;
    e->hits = strtoull(close + strlen(" } hitcount:"), &q, 10);
    sum += e->hits;
    for (unsigned k = 0; k < 2; k++) { /* "  name: value" after the hitcount, on its line */
      const char *nl = strchr(q, '\n'), *c = strchr(q, ':');
      if (!c || (nl && c > nl))
        break;
      e->val[k] = strtoull(c + 1, &q, 10);
    }
  }
  const char *tot = strstr(t, "\nTotals:\n    Hits: ");
  assert_non_null(tot);
  assert_int_equal(strtoull(tot + strlen("\nTotals:\n    Hits: "), NULL, 10), sum);
}

/* The histogram read (events/tfh/EV/hist) is want, in any order. */
static void same(const char *ev, const struct hist *want)
{
  char path[64];
  snprintf(path, sizeof path, "events/tfh/%s/hist", ev);
  static struct hist got;
  parse(cat(path), &got);
  if (got.n != want->n)
    fail_msg("%s: %u entries, %u expected:\n%s", path, got.n, want->n, buf);
  for (unsigned i = 0; i < want->n; i++) {
    const struct entry *w = &want->e[i];
    struct entry *g = at(&got, w->key);
    if (g->hits != w->hits || g->val[0] != w->val[0] || g->val[1] != w->val[1])
      fail_msg("%s: key %s: %" PRIu64 " %" PRIu64 " %" PRIu64 ", expected %" PRIu64 " %" PRIu64
               " %" PRIu64 "\n%s",
               path, w->key, g->hits, g->val[0], g->val[1], w->hits, w->val[0], w->val[1],
               buf);
  }
}

static void start_live(void)
{
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "tfh:*", .output = "",
                                   .clock = FXT_CLOCK_MONOTONIC};
  assert_int_equal(fxt_session_start(&cfg), 0);
  echo("tracing_on", "1\n", 0);
}

static void trig(const char *ev, const char *text)
{
  char path[64];
  snprintf(path, sizeof path, "events/tfh/%s/trigger", ev);
  echo(path, text, 0);
}

/* A live session, and a hist trigger on ev whose expected histogram h starts empty. */
static struct hist *start_with(const char *ev, const char *text, struct hist *h)
{
  start_live();
  trig(ev, text);
  memset(h, 0, sizeof(*h));
  return h;
}

static int64_t k1_of(int i) { return (int64_t)((i * 7) % 13) - 3; }
static uint64_t k2_of(int i) { return (UINT64_C(1) << 40) + (uint64_t)i; }

/* A counter's arguments as keys and values: k1 is an s64 (the kernel prints a key as u64). */
static void counter_hist(void **state)
{
  (void)state;
  static struct hist want, want_id;
  start_with("ctr", "hist:keys=k1:vals=k2", &want);
  trig("ctr", "hist:keys=id:vals=k1,hitcount if k1 > 5");
  memset(&want_id, 0, sizeof(want_id));
  for (int i = 0; i < N; i++) {
    FXT_COUNTER("tfh", "ctr", 3 + (uint64_t)(i % 2), FXT_I64("k1", k1_of(i)),
                FXT_U64("k2", k2_of(i)));
    add_u(&want, (uint64_t)k1_of(i), k2_of(i), 0);
    if (k1_of(i) > 5)
      add_u(&want_id, 3 + (uint64_t)(i % 2), (uint64_t)k1_of(i), 0);
  }
  /* The newest trigger's histogram comes first in the file: the other one removed to read
   * each alone. */
  echo("events/tfh/ctr/trigger", "!hist:keys=id:vals=k1,hitcount if k1 > 5", 0);
  same("ctr", &want);
  trig("ctr", "hist:keys=id:vals=k1,hitcount if k1 > 5"); /* a new one, empty */
  echo("events/tfh/ctr/trigger", "!hist:keys=k1:vals=k2", 0);
  for (int i = 0; i < N; i++)
    FXT_COUNTER("tfh", "ctr", 3 + (uint64_t)(i % 2), FXT_I64("k1", k1_of(i)),
                FXT_U64("k2", k2_of(i)));
  same("ctr", &want_id);
  echo("events/tfh/ctr/trigger", "!hist:keys=id:vals=k1,hitcount if k1 > 5", 0);
  assert_int_equal(fxt_session_stop(), 0);
}

/* An instant's string argument as a key, its numbers as values; a bool and a double key. */
static void instant_hist(void **state)
{
  (void)state;
  static struct hist want, want_b;
  start_with("inst", "hist:keys=who:vals=n,u", &want);
  memset(&want_b, 0, sizeof(want_b));
  for (int i = 0; i < N; i++) {
    const char *who = i % 3 ? "odd" : "even";
    FXT_INSTANT("tfh", "inst", FXT_ARG("n", i), FXT_STR("who", who),
                FXT_ARG("u", (unsigned)i * 3), FXT_ARG("d", i / 4.0),
                FXT_BOOL("b", i % 5 == 0));
    add(&want, who, (uint64_t)i, (uint64_t)i * 3);
    add_u(&want_b, i % 5 == 0, (uint64_t)(i / 4), 0);
  }
  same("inst", &want);
  echo("events/tfh/inst/trigger", "!hist:keys=who:vals=n,u", 0);
  trig("inst", "hist:keys=b:vals=d"); /* a double value: its integer part, as the kernel's */
  for (int i = 0; i < N; i++)
    FXT_INSTANT("tfh", "inst", FXT_ARG("n", i), FXT_STR("who", "x"),
                FXT_ARG("u", (unsigned)i), FXT_ARG("d", i / 4.0), FXT_BOOL("b", i % 5 == 0));
  same("inst", &want_b);
  assert_int_equal(fxt_session_stop(), 0);
}

/* Three sites of one event: with other arguments, in another order, with none (its b reads
 * 0). */
static void sites_differ(void **state)
{
  (void)state;
  static struct hist want;
  start_with("mix", "hist:keys=b", &want);
  for (uint32_t i = 0; i < 20; i++) {
    FXT_INSTANT("tfh", "mix", FXT_U32("a", i), FXT_U32("b", i % 10));
    FXT_INSTANT("tfh", "mix", FXT_U32("b", i % 8), FXT_STR("a", "x"));
    FXT_INSTANT("tfh", "mix");
    add_u(&want, i % 10, 0, 0);
    add_u(&want, i % 8, 0, 0);
    add_u(&want, 0, 0, 0);
  }
  same("mix", &want);
  assert_int_equal(fxt_session_stop(), 0);
}

/* An async event's id as a key; a complete event's dur_ns as a value, against its lines in
 * `trace` ("dur=US.NNNus": the record's end - start). */
static void head_fields(void **state)
{
  (void)state;
  static struct hist want;
  start_with("req", "hist:keys=id", &want);
  for (uint64_t i = 0; i < 30; i++) {
    FXT_ASYNC_BEGIN("tfh", "req", i % 7);
    add_u(&want, i % 7, 0, 0);
  }
  same("req", &want);
  trig("cmp", "hist:keys=common_pid:vals=dur_ns");
  echo("trace", "", 0);
  for (int i = 0; i < 20; i++) {
    uint64_t start = fxt_now();
    FXT_COMPLETE("tfh", "cmp", start, FXT_ARG("i", i));
  }
  assert_int_equal(fxt_session_flush(), 0);
  const char *t = cat("trace");
  uint64_t sum = 0;
  unsigned lines = 0;
  for (const char *p = t; (p = strstr(p, " cmp: dur=")) != NULL; p++, lines++) {
    char *q;
    uint64_t us = strtoull(p + strlen(" cmp: dur="), &q, 10);
    assert_int_equal(*q, '.');
    sum += us * 1000 + strtoull(q + 1, NULL, 10);
  }
  assert_int_equal(lines, 20);
  const char *h = strstr(cat("events/tfh/cmp/hist"), " } hitcount:");
  assert_non_null(h);
  char *q;
  assert_int_equal(strtoull(h + strlen(" } hitcount:"), &q, 10), 20);
  assert_non_null(strstr(q, "dur_ns:"));
  assert_int_equal(strtoull(strstr(q, "dur_ns:") + 7, NULL, 10), sum);
  assert_true(sum > 0);
  /* A field no site has: the kernel's error. */
  echo("events/tfh/cmp/trigger", "hist:keys=nope", -22);
  assert_non_null(strstr(cat("error_log"), "Couldn't find field"));
  assert_int_equal(fxt_session_stop(), 0);
}

/* While recording is off, an ad-hoc event's triggers still run, as a typed tracepoint's and
 * the kernel's: its histogram counts, a traceon with a filter turns recording on after the
 * event that matched (that one not recorded). */
static void counted_while_off(void **state)
{
  (void)state;
  static struct hist want;
  start_with("ctr", "hist:keys=k1:vals=k2", &want);
  trig("ctr", "traceon:1 if k2 == 1099511627786"); /* k2_of(10) */
  FXT_INSTANT("tfh", "warm"); /* the thread's buffer: a first event runs no trigger */
  echo("tracing_on", "0", 0);
  echo("trace", "", 0);
  for (int i = 0; i < N; i++) {
    FXT_COUNTER("tfh", "ctr", 3, FXT_I64("k1", k1_of(i)), FXT_U64("k2", k2_of(i)));
    add_u(&want, (uint64_t)k1_of(i), k2_of(i), 0);
  }
  assert_string_equal(cat("tracing_on"), "1\n");
  assert_int_equal(fxt_session_flush(), 0);
  const char *t = cat("trace");
  unsigned n = 0;
  for (const char *p = t; (p = strstr(p, " ctr: id=3 k1=")) != NULL; p++)
    n++;
  assert_int_equal(n, N - 11); /* i = 11 .. N - 1 */
  assert_non_null(strstr(t, " ctr: id=3 k1=9 k2=1099511627787")); /* i = 11 */
  echo("events/tfh/ctr/trigger", "!traceon", 0);
  same("ctr", &want);
  assert_int_equal(fxt_session_stop(), 0);
}

/* The number of lines of trace t that hold s. */
static unsigned lines_with(const char *t, const char *s)
{
  unsigned n = 0;
  for (const char *p = t; (p = strstr(p, s)) != NULL; p++)
    n++;
  return n;
}

/* A traceon without a filter fires before its event is recorded (the kernel's order: this
 * kernel, tracing_on 0, "traceon:1" on syscalls:sys_enter_sched_getscheduler recorded both of
 * two calls): the ad-hoc event that turned recording on is recorded, as a typed one is
 * (test_evtrig's traceon test) - unless its own filter refuses it, which does not stop its
 * triggers. */
static void traceon_records_its_event(void **state)
{
  (void)state;
  start_live();
  FXT_INSTANT("tfh", "warm"); /* the thread's buffer: a first event runs no trigger */
  trig("on", "traceon:1");
  echo("tracing_on", "0", 0);
  echo("trace", "", 0);
  for (uint32_t i = 0; i < 5; i++)
    FXT_INSTANT("tfh", "on", FXT_U32("seq", i));
  assert_string_equal(cat("tracing_on"), "1\n");
  assert_string_equal(cat("events/tfh/on/trigger"), "traceon:count=0\n");
  assert_int_equal(fxt_session_flush(), 0);
  const char *t = cat("trace");
  assert_int_equal(lines_with(t, " on: seq="), 5);
  assert_non_null(strstr(t, " on: seq=0\n"));

  /* Its filter refuses the event that fires the traceon: recording comes on, that event is
   * not recorded. */
  echo("events/tfh/on/trigger", "!traceon", 0);
  echo("events/tfh/on/filter", "seq != 10", 0);
  trig("on", "traceon:1");
  echo("tracing_on", "0", 0);
  echo("trace", "", 0);
  for (uint32_t i = 10; i < 15; i++)
    FXT_INSTANT("tfh", "on", FXT_U32("seq", i));
  assert_string_equal(cat("tracing_on"), "1\n");
  assert_int_equal(fxt_session_flush(), 0);
  t = cat("trace");
  assert_int_equal(lines_with(t, " on: seq="), 4);
  assert_null(strstr(t, " on: seq=10\n"));
  assert_non_null(strstr(t, " on: seq=11\n"));

  /* A scope's end, the event a scope records, likewise. */
  trig("sc", "traceon:1");
  echo("tracing_on", "0", 0);
  echo("trace", "", 0);
  for (int i = 0; i < 3; i++) {
    FXT_SCOPE("tfh", "sc");
  }
  assert_string_equal(cat("tracing_on"), "1\n");
  assert_int_equal(fxt_session_flush(), 0);
  assert_int_equal(lines_with(cat("trace"), " sc: dur="), 3);
  assert_int_equal(fxt_session_stop(), 0);
}

FXT_TEST_MAIN(cmocka_unit_test_teardown(counter_hist, live_stop),
              cmocka_unit_test_teardown(instant_hist, live_stop),
              cmocka_unit_test_teardown(sites_differ, live_stop),
              cmocka_unit_test_teardown(head_fields, live_stop),
              cmocka_unit_test_teardown(counted_while_off, live_stop),
              cmocka_unit_test_teardown(traceon_records_its_event, live_stop))
