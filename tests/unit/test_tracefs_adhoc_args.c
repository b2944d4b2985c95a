/* test_tracefs_adhoc_args - the live tree's ad-hoc events with arguments: a counter's values,
 * an instant's arguments (FXT_ARG's type from the value's C type) and an async event's id are
 * fields of its `format` from the start (the site's static table, fxtrace.h), before anything
 * is emitted, and filters on them decide: the events kept are counted here from the values
 * emitted, an unknown field is the kernel's error, sites of one event that differ are read by
 * name, a trigger's condition on them holds for the same events. The trace.dat export of the
 * same events agrees: its format of the counter has the same fields, and trace-cmd report -F
 * with the same filter keeps the same events (skipped without trace-cmd). The C++ sites' tables: tests/cxx/cxx_trace.cpp.
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
#include <unistd.h>

#include "formats/tracedat_write.h"
#include "tracefs_test.h"

#define N 200

/* The values of event i: k1 in base..base + 12, k2 always past 32 bits (so the trace.dat
 * export stores both 64-bit, the variant whose format is the live one). */
static int64_t k1_of(int i, int64_t base) { return (int64_t)((i * 7) % 13) + base; }
static uint64_t k2_of(int i) { return (UINT64_C(1) << 40) + (uint64_t)i; }

static void fire_counters(int64_t base)
{
  for (int i = 0; i < N; i++)
    FXT_COUNTER("tfb", "ctr", 3, FXT_I64("k1", k1_of(i, base)), FXT_U64("k2", k2_of(i)));
}

/* One field line of a format: type, name, size, signed. */
struct fline {
  char type[160], name[160];
  unsigned offset, size;
  int sign;
};

/* The event's own fields (after the common ones) of the format text f: how many, into out. */
static unsigned own_fields(const char *f, struct fline *out, unsigned max)
{
  unsigned n = 0;
  for (const char *p = strstr(f, "\tfield:"); p && n < max; p = strstr(p + 1, "\tfield:")) {
    char decl[160];
    struct fline *l = &out[n];
    if (sscanf(p, "\tfield:%159[^;];\toffset:%u;\tsize:%u;\tsigned:%d;", decl, &l->offset,
               &l->size, &l->sign) != 4)
      fail_msg("bad field line in %s", f);
    char *sp = strrchr(decl, ' ');
    assert_non_null(sp);
    *sp = 0;
    memcpy(l->type, decl, (size_t)(sp - decl) + 1);
    memcpy(l->name, sp + 1, strlen(sp + 1) + 1);
    if (strncmp(l->name, "common_", 7) != 0)
      n++;
  }
  return n;
}

/* The kernel's field line for a C type (include/trace/trace_events.h: size, is_signed). */
static void want_field(const struct fline *l, const char *type, const char *name, unsigned size,
                       int sign)
{
  assert_string_equal(l->name, name);
  assert_string_equal(l->type, type);
  assert_int_equal(l->size, size);
  assert_int_equal(l->sign, sign);
}

static unsigned count(const char *text, const char *what)
{
  unsigned n = 0;
  for (const char *p = text; (p = strstr(p, what)) != NULL; p++)
    n++;
  return n;
}

static void start_live(void)
{
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "tfb:*", .output = ""};
  assert_int_equal(fxt_session_start(&cfg), 0);
  echo("tracing_on", "1\n", 0);
}

/* The formats, read before any of these events was emitted. */
static void formats_before_emission(void **state)
{
  (void)state;
  start_live();
  struct fline f[16];
  assert_int_equal(own_fields(cat("events/tfb/ctr/format"), f, 16), 3);
  want_field(&f[0], "u64", "id", 8, 0);
  want_field(&f[1], "s64", "k1", 8, 1);
  want_field(&f[2], "u64", "k2", 8, 0);
  assert_int_equal(f[1].offset, f[0].offset + 8);
  assert_int_equal(f[2].offset, f[1].offset + 8);
  assert_int_equal(own_fields(cat("events/tfb/inst/format"), f, 16), 6);
  want_field(&f[0], "s32", "n", 4, 1);                 /* FXT_ARG of an int */
  want_field(&f[1], "__data_loc char[]", "who", 4, 0); /* FXT_STR */
  want_field(&f[2], "s64", "big", 8, 1);               /* FXT_ARG of a long long */
  want_field(&f[3], "u32", "u", 4, 0);                 /* FXT_ARG of an unsigned */
  want_field(&f[4], "double", "d", 8, 1);              /* FXT_ARG of a double */
  want_field(&f[5], "bool", "b", 1, 0);                /* FXT_BOOL */
  assert_int_equal(own_fields(cat("events/tfb/req/format"), f, 16), 1);
  want_field(&f[0], "u64", "id", 8, 0);
  assert_non_null(strstr(cat("events/tfb/ctr/format"), "print fmt: \"id=%llu k1=%lld k2=%llu\""));
  assert_int_equal(fxt_session_stop(), 0);
}

/* A new filter on event EV (events/tfb/EV/filter) and the trace emptied: the events fired
 * next are what flushed_trace() shows. */
static void refilter(const char *ev, const char *expr)
{
  char path[64];
  snprintf(path, sizeof path, "events/tfb/%s/filter", ev);
  echo(path, expr, 0);
  echo("trace", "", 0);
}

/* The trace once what was fired is flushed. */
static const char *flushed_trace(void)
{
  assert_int_equal(fxt_session_flush(), 0);
  return cat("trace");
}

static void counter_filter(void **state)
{
  (void)state;
  start_live();
  unsigned want = 0;
  for (int i = 0; i < N; i++)
    want += k1_of(i, -3) > 5; /* an s64: -3 is not > 5 */
  /* A trigger's condition on them (before any filter is written for the event): a histogram
   * counts the events it keeps. */
  echo("events/tfb/ctr/trigger", "hist:keys=common_pid if k1 > 5 && k2 != 0", 0);
  fire_counters(-3);
  unsigned long hits = 0;
  const char *h = strstr(cat("events/tfb/ctr/hist"), "\nTotals:\n    Hits: ");
  assert_non_null(h);
  assert_int_equal(sscanf(h, "\nTotals:\n    Hits: %lu", &hits), 1);
  assert_int_equal(hits, want);
  echo("events/tfb/ctr/trigger", "!hist:keys=common_pid if k1 > 5 && k2 != 0", 0);
  refilter("ctr", "k1 > 5");
  fire_counters(-3);
  const char *t = flushed_trace();
  assert_true(want > 0 && want < N);
  assert_int_equal(count(t, " ctr: "), want);
  for (const char *p = t; (p = strstr(p, " ctr: id=3 k1=")) != NULL; p++)
    assert_true(strtoll(p + strlen(" ctr: id=3 k1="), NULL, 10) > 5);
  /* A field the event does not have: the kernel's error, in its filter file. */
  echo("events/tfb/ctr/filter", "k3 > 1", -22);
  assert_non_null(strstr(cat("events/tfb/ctr/filter"), "\nparse_error: Field not found\n"));
  assert_int_equal(fxt_session_stop(), 0);
}

static void fire_instants(void)
{
  for (int i = 0; i < N; i++)
    FXT_INSTANT("tfb", "inst", FXT_ARG("n", i), FXT_STR("who", i % 3 ? "odd" : "even"),
                FXT_ARG("big", (long long)i << 33), FXT_ARG("u", (unsigned)i),
                FXT_ARG("d", i / 4.0), FXT_BOOL("b", i % 5 == 0));
}

static void instant_filter(void **state)
{
  (void)state;
  start_live();
  refilter("inst", "who == \"even\" && n >= 40 && b == 1 && d < 45");
  fire_instants();
  unsigned want = 0;
  for (int i = 0; i < N; i++)
    want += i % 3 == 0 && i >= 40 && i % 5 == 0 && i / 4.0 < 45;
  assert_true(want > 0);
  assert_int_equal(count(flushed_trace(), " inst: "), want);
  refilter("inst", "big >= 0x1400000000 && u < 30"); /* i in 10..29 */
  fire_instants();
  assert_int_equal(count(flushed_trace(), " inst: "), 20);
  assert_int_equal(fxt_session_stop(), 0);
}

/* Three sites of one event: with other arguments, in another order, with none. */
static void fire_mix(void)
{
  for (uint32_t i = 0; i < 20; i++) {
    FXT_INSTANT("tfb", "mix", FXT_U32("a", i), FXT_U32("b", i % 10));
    FXT_INSTANT("tfb", "mix", FXT_U32("b", i % 8), FXT_STR("a", "x"));
    FXT_INSTANT("tfb", "mix");
  }
}

/* Sites of one event that differ: each read by name. */
static void sites_differ(void **state)
{
  (void)state;
  start_live();
  refilter("mix", "b == 7");
  fire_mix();
  const char *t = flushed_trace();
  /* b == 7: i = 7 and 17 at the first site, 7 and 15 at the second; none at the third. */
  assert_int_equal(count(t, " mix: "), 4);
  assert_int_equal(count(t, " mix: a=7 b=7"), 1);
  assert_int_equal(count(t, " mix: a=17 b=7"), 1);
  assert_int_equal(count(t, " mix: b=7 a=x"), 2);
  /* The event's fields are every site's, a site without one reads it as 0. */
  struct fline f[16];
  assert_int_equal(own_fields(cat("events/tfb/mix/format"), f, 16), 2);
  refilter("mix", "b == 0");
  fire_mix();
  t = flushed_trace();
  assert_int_equal(count(t, " mix: "), 2 + 3 + 20);
  refilter("req", "id == 4");
  for (uint64_t i = 0; i < 10; i++)
    FXT_ASYNC_BEGIN("tfb", "req", i);
  assert_int_equal(count(flushed_trace(), " req: "), 1);
  assert_int_equal(fxt_session_stop(), 0);
}

/* The k1 values of the lines of text that show a ctr event, in order, into k (count). */
static unsigned k1_values(const char *text, long long *k, unsigned max)
{
  unsigned n = 0;
  for (const char *p = text; (p = strstr(p, "k1=")) != NULL && n < max; p++)
    k[n++] = strtoll(p + 3, NULL, 10);
  return n;
}

static void tracedat_agrees(void **state)
{
  (void)state;
  if (system("trace-cmd -h >/dev/null 2>&1") == 127)
    skip();
  char dir[] = "/tmp/fxt_adhoc_args_XXXXXX", fxt[64], dat[64], cmd[256];
  assert_non_null(mkdtemp(dir));
  snprintf(fxt, sizeof fxt, "%s/all.fxt", dir);
  snprintf(dat, sizeof dat, "%s/all.dat", dir);
  /* Every event to a file, converted; trace-cmd filters it. k1 from 0: libtraceevent compares
   * a signed 8-byte field as unsigned (-3 > 5), where the kernel and fxtrace compare signed. */
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "tfb:ctr", .output = fxt};
  assert_int_equal(fxt_session_start(&cfg), 0);
  fire_counters(0);
  static char live_format[sizeof buf];
  memcpy(live_format, cat("events/tfb/ctr/format"), sizeof buf);
  assert_int_equal(fxt_session_stop(), 0);
  char err[256];
  int rc = fxt_tracedat_file(fxt, dat, NULL, err, sizeof err);
  if (rc != 0)
    fail_msg("%s -> %s: %d %s", fxt, dat, rc, err);
  snprintf(cmd, sizeof cmd, "trace-cmd report -F 'tfb/ctr: k1 > 5' %s 2>/dev/null", dat);
  static char out[1 << 16];
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  size_t got = fread(out, 1, sizeof out - 1, p);
  out[got] = 0;
  assert_int_equal(pclose(p), 0);
  static long long by_tc[N], by_live[N];
  unsigned ntc = k1_values(out, by_tc, N);
  /* The trace.dat's format of ctr: the live format's fields. */
  snprintf(cmd, sizeof cmd, "trace-cmd dump --events %s 2>/dev/null", dat);
  static char dump[1 << 16];
  p = popen(cmd, "r");
  assert_non_null(p);
  got = fread(dump, 1, sizeof dump - 1, p);
  dump[got] = 0;
  pclose(p);
  const char *ctr = strstr(dump, "name: ctr\n");
  assert_non_null(ctr);
  assert_null(strstr(ctr + 1, "name: ctr\n")); /* one variant: k2 is always 64-bit */
  struct fline lf[16], tf[16];
  unsigned nl = own_fields(live_format, lf, 16), nt = own_fields(ctr, tf, 3);
  assert_int_equal(nl, 3);
  assert_int_equal(nt, nl);
  for (unsigned i = 0; i < nl; i++) {
    want_field(&tf[i], lf[i].type, lf[i].name, lf[i].size, lf[i].sign);
    assert_int_equal(tf[i].offset, lf[i].offset);
  }
  /* The same filter live. */
  start_live();
  refilter("ctr", "k1 > 5");
  fire_counters(0);
  unsigned nlive = k1_values(flushed_trace(), by_live, N);
  assert_int_equal(fxt_session_stop(), 0);
  unsigned want = 0;
  for (int i = 0; i < N; i++)
    if (k1_of(i, 0) > 5)
      assert_int_equal(by_live[want++], k1_of(i, 0));
  assert_int_equal(nlive, want);
  assert_int_equal(ntc, want);
  assert_memory_equal(by_tc, by_live, want * sizeof by_tc[0]);
  unlink(fxt);
  unlink(dat);
  rmdir(dir);
}

FXT_TEST_MAIN(cmocka_unit_test_teardown(formats_before_emission, live_stop),
              cmocka_unit_test_teardown(counter_filter, live_stop),
              cmocka_unit_test_teardown(instant_filter, live_stop),
              cmocka_unit_test_teardown(sites_differ, live_stop),
              cmocka_unit_test_teardown(tracedat_agrees, live_stop))
