/* tests/unit/test_fxtfile.c - the FXT file reader (src/formats/fxtfile.h) on files built here
 * record by record with the codec's encoders (never with fxtrace's session writer): two
 * provider segments that bind the same string and thread indices to different things, CPU
 * records, losses of every kind (a thread's, and a CPU's as a trace.dat's conversion writes
 * them), clock syncs, tracepoint descriptions. Every expected value (order, ns, CPU, losses,
 * counts) is worked out by hand in the comments.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "../test_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/fxtfile.h"
#include "formats/fxtfile_int.h"
#include "base/text.h"
#include "base/tpdesc.h"
#include "report_lines.h"

/* ---- building files --------------------------------------------------------------------- */

#include "fxt_build.h"

/* Events named by string index; arguments by index with their value as 64 bits. */
static struct fxt_event ev(uint32_t type, struct fxt_thread_ref th, uint16_t cat, uint16_t name,
                           uint64_t ts) {
  return event(type, th, sref(cat), sref(name), ts);
}

static void add_arg(struct fxt_event *e, uint32_t type, uint16_t name, uint64_t v) {
  struct fxt_arg *a = arg(e, type, sref(name));
  if (type == FXT_ARG_UINT32)
    a->value.u32 = (uint32_t)v;
  else if (type == FXT_ARG_INT32)
    a->value.i32 = (int32_t)v;
  else
    a->value.u64 = v;
}

/* A description blob: fixed part, format, fields (name ref, type). */
static void desc(uint32_t id, uint16_t sys, uint16_t name, uint16_t kind, const char *fmt,
                 uint16_t nfields, const uint16_t *field_refs, const uint8_t *field_types) {
  uint8_t p[256];
  uint16_t fl = (uint16_t)strlen(fmt);
  size_t n = fxt_tpdesc_head(p, id, sys, name, kind, nfields, fl);
  memcpy(p + n, fmt, fl), n += fl;
  for (uint16_t i = 0; i < nfields; i++)
    n += fxt_tpdesc_field(p + n, field_refs[i], field_types[i], 0);
  struct fxt_blob b = {sref(FXT_STR_TRACEPOINT), FXT_BLOB_DATA, (uint16_t)n, p};
  emit(fxt_encode_blob(ROOM, &b));
}

/* ---- the two-process file --------------------------------------------------------------------
 *
 * Provider A (pid 100): 2e9 ticks/s says its initialization record, but its clock syncs, at
 * ticks 1000 -> 5 s and ticks 3001000 -> 5 s + 1 ms, make 3 ticks per ns; an event at
 * ticks 1000 + 3k is therefore at 5e9 + k ns. Thread 101 (ref 1, "alpha"), thread 102 (inline,
 * "beta"). Provider B (pid 200): 1e9 ticks/s and one clock sync, ticks 500 -> 5e9 + 15 ns, so
 * ticks t are at 5e9 + 15 + (t - 500). B re-binds string 32 and thread ref 1 to its own.
 */

#define S_DEMO 32
#define S_WORK 33
#define S_SEQ 34
#define S_TICK 35
#define S_PRINTK 36
#define S_GOT 37
#define S_A0 38
#define T(k) (1000 + 3 * (uint64_t)(k)) /* provider A ticks at 5e9 + k ns */
#define NS(k) (UINT64_C(5000000000) + (k))

struct offsets {
  uint64_t seq1, tick20, b25, seq2, tick30, seq3, b40, printk50;
};
static struct offsets g_off;

static void provider_a(void) {
  struct fxt_thread_ref t101 = fxt_thread_index(1), t102 = fxt_thread_inline(100, 102);
  provider(100, 2000000000);
  meta_strings();
  string(S_DEMO, "demo"), string(S_WORK, "work"), string(S_SEQ, "seq");
  string(S_TICK, "tick"), string(S_PRINTK, "printk"), string(S_GOT, "got %d"), string(S_A0, "a0");
  kobj(FXT_KOBJ_PROCESS, 100, "procA", 0);
  clock_sync(100, T(0), NS(0));
  desc(1, S_DEMO, S_WORK, 0, "seq=%llu", 1, (uint16_t[]){S_SEQ}, (uint8_t[]){4 /* u64 */});
  desc(2, S_DEMO, S_TICK, 1, "", 0, NULL, NULL);
  desc(3, S_PRINTK, S_GOT, 6, "", 0, NULL, NULL);
  thread(1, 100, 101);
  kobj(FXT_KOBJ_THREAD, 101, "alpha", 100);
  kobj(FXT_KOBJ_THREAD, 102, "beta", 100);
  cpu(t101, T(10), 2);
  struct fxt_event e = ev(FXT_EVENT_INSTANT, t101, S_DEMO, S_WORK, T(10));
  add_arg(&e, FXT_ARG_UINT64, S_SEQ, 1);
  g_off.seq1 = put(&e);
  e.timestamp = T(30), e.args[0].value.u64 = 2;
  g_off.seq2 = put(&e);
  cpu(t102, T(20), 5);
  /* an ad-hoc instant with one argument of every type, one with an inline name */
  struct fxt_event t = ev(FXT_EVENT_INSTANT, t102, S_DEMO, S_TICK, T(20));
  add_arg(&t, FXT_ARG_INT32, S_A0, (uint64_t)-7);
  add_arg(&t, FXT_ARG_UINT32, S_SEQ, 7);
  add_arg(&t, FXT_ARG_INT64, S_SEQ, (uint64_t)INT64_MIN);
  add_arg(&t, FXT_ARG_UINT64, S_SEQ, UINT64_MAX);
  add_arg(&t, FXT_ARG_DOUBLE, S_SEQ, 0x3fd0000000000000); /* 0.25 */
  add_arg(&t, FXT_ARG_POINTER, S_SEQ, 0xabc);
  add_arg(&t, FXT_ARG_KOID, S_SEQ, 99);
  add_arg(&t, FXT_ARG_BOOL, S_SEQ, 0);
  t.args[t.num_args - 1].value.b = true;
  add_arg(&t, FXT_ARG_NULL, S_SEQ, 0);
  t.args[t.num_args] = (struct fxt_arg){FXT_ARG_STRING, inl("inl"), {.u64 = 0}};
  t.args[t.num_args++].value.str = inl("text value");
  g_off.tick20 = put(&t);
  loss(t102, FXT_STR_DROP_STATS, T(25), 4);
  struct fxt_event t30 = ev(FXT_EVENT_INSTANT, t102, S_DEMO, S_TICK, T(30));
  g_off.tick30 = put(&t30);
  cpu(t101, T(40), 3);
  e.timestamp = T(40), e.args[0].value.u64 = 3;
  g_off.seq3 = put(&e);
  loss(t102, FXT_STR_OVERRUN, T(45), 2);
  loss(t102, FXT_STR_LOST, T(46), 1);
  struct fxt_event p = ev(FXT_EVENT_INSTANT, t102, S_PRINTK, S_GOT, T(50));
  add_arg(&p, FXT_ARG_INT32, S_A0, 7);
  g_off.printk50 = put(&p);
  loss(t101, FXT_STR_DROP_STATS, T(60), 9); /* after 101's last event: trailing */
  clock_sync(100, T(1000000), NS(1000000));
}

static void provider_b(void) {
  struct fxt_thread_ref t201 = fxt_thread_index(1);
  provider(200, 1000000000);
  meta_strings();
  string(S_DEMO, "other"), string(S_WORK, "evt");
  kobj(FXT_KOBJ_PROCESS, 200, "procB", 0);
  clock_sync(200, 500, NS(15));
  thread(1, 200, 201);
  kobj(FXT_KOBJ_THREAD, 201, "gamma", 200);
  cpu(t201, 510, 0);
  struct fxt_event e = ev(FXT_EVENT_COUNTER, t201, S_DEMO, S_WORK, 510); /* 5e9 + 25 */
  e.trailer = 4;
  g_off.b25 = put(&e);
  e.timestamp = 525; /* 5e9 + 40: ties with A's seq=3, which comes first in the file */
  g_off.b40 = put(&e);
}

static void build_two_providers(void) {
  g_len = 0;
  magic();
  provider_a();
  provider_b();
}

static struct fxtf_file *load(void) {
  char err[FXTF_ERR_SIZE];
  struct fxtf_file *f = NULL;
  int rc = fxtf_load(g_buf, g_len, &f, err, sizeof err);
  if (rc != 0)
    fail_msg("fxtf_load: %d %s", rc, err);
  return f;
}

/* ---- tests ------------------------------------------------------------------------------- */

struct want {
  uint64_t offset, ns, tid;
  uint32_t cpu;
  uint64_t lost_before;
  const char *name;
};

static void test_merged_order_cpu_ns_losses(void **state) {
  (void)state;
  build_two_providers();
  struct fxtf_file *f = load();
  const struct want want[] = {
      {g_off.seq1, NS(10), 101, 2, 0, "work"},
      {g_off.tick20, NS(20), 102, 5, 0, "tick"},
      {g_off.b25, NS(25), 201, 0, 0, "evt"},
      {g_off.seq2, NS(30), 101, 2, 0, "work"},   /* tie at 30: file order */
      {g_off.tick30, NS(30), 102, 5, 4, "tick"}, /* after drop_stats 4 */
      {g_off.seq3, NS(40), 101, 3, 0, "work"},   /* tie across providers: file order */
      {g_off.b40, NS(40), 201, 0, 0, "evt"},
      {g_off.printk50, NS(50), 102, 5, 3, "got %d"}, /* overrun 2 + lost 1 */
  };
  assert_int_equal(fxtf_event_count(f), sizeof want / sizeof want[0]);
  struct fxtf_event e;
  char err[FXTF_ERR_SIZE];
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    assert_int_equal(fxtf_event_at(f, i, &e, err, sizeof err), 0);
    assert_int_equal(e.offset, want[i].offset);
    assert_int_equal(e.ns, want[i].ns);
    assert_int_equal(e.thread->tid, want[i].tid);
    assert_int_equal(e.ev.thread.thread_koid, want[i].tid);
    assert_int_equal(e.cpu, want[i].cpu);
    assert_int_equal(e.lost_before, want[i].lost_before);
    assert_int_equal(e.ev.name.len, strlen(want[i].name));
    assert_memory_equal(e.ev.name.data, want[i].name, e.ev.name.len);
  }
  assert_int_equal(fxtf_event_at(f, 8, &e, err, sizeof err), FXT_EINVAL);
  fxtf_close(f);
}

static void test_threads_providers_totals(void **state) {
  (void)state;
  build_two_providers();
  struct fxtf_file *f = load();
  assert_int_equal(fxtf_provider_count(f), 2);
  const struct fxtf_provider *a = fxtf_provider(f, 0), *b = fxtf_provider(f, 1);
  assert_int_equal(a->id, 100);
  assert_true(fxtf_text_is(a->process_name, "procA"));
  assert_true(fxtf_text_is(b->process_name, "procB"));
  assert_int_equal(a->nsyncs, 2);
  assert_int_equal(b->nsyncs, 1);
  assert_int_equal(a->events, 6);
  assert_int_equal(b->events, 2);
  assert_int_equal(b->offset, a->end);
  uint32_t n;
  const struct fxtf_thread *t = fxtf_threads(f, &n);
  assert_int_equal(n, 3); /* 101, 102, 201 in order of first appearance */
  assert_int_equal(t[0].tid, 101);
  assert_true(t[0].named && fxtf_text_is(t[0].comm, "alpha"));
  assert_int_equal(t[0].events, 3);
  assert_int_equal(t[0].dropped, 9);
  assert_int_equal(t[0].trailing_lost, 9);
  assert_int_equal(t[0].cpu, 3);
  assert_int_equal(t[1].tid, 102);
  assert_true(fxtf_text_is(t[1].comm, "beta"));
  assert_int_equal(t[1].events, 3);
  assert_int_equal(t[1].dropped, 4);
  assert_int_equal(t[1].overrun, 2);
  assert_int_equal(t[1].lost, 1);
  assert_int_equal(t[1].trailing_lost, 0);
  assert_int_equal(t[2].pid, 200);
  assert_int_equal(t[2].tid, 201);
  assert_true(fxtf_text_is(t[2].comm, "gamma"));
  struct fxtf_totals tot;
  fxtf_totals(f, &tot);
  assert_int_equal(tot.events, 8);
  assert_int_equal(tot.dropped, 13);
  assert_int_equal(tot.overrun, 2);
  assert_int_equal(tot.lost, 1);
  assert_int_equal(tot.trailing_lost, 9);
  assert_int_equal(tot.providers, 2);
  assert_int_equal(tot.threads, 3);
  fxtf_close(f);
}

/* The same two processes with their writes interleaved (as a parent's and its child's to one
 * stdout): after B's records, a provider section record returns to A (100), whose event uses
 * thread ref 1 and string S_DEMO/S_WORK, which B re-bound; then one returns to B (200). Each
 * event is its own provider's: A's at T(70) is 5e9 + 70 ns by A's clock syncs, thread 101,
 * "work"; B's at ticks 540 is 5e9 + 15 + 40 ns, thread 201, "evt". No third provider. */
static void test_interleaved_providers(void **state) {
  (void)state;
  build_two_providers();
  struct fxt_provider_section to_a = {100}, to_b = {200};
  uint64_t sec_a = emit(fxt_encode_provider_section(ROOM, &to_a));
  struct fxt_event e = ev(FXT_EVENT_INSTANT, fxt_thread_index(1), S_DEMO, S_WORK, T(70));
  add_arg(&e, FXT_ARG_UINT64, S_SEQ, 4);
  uint64_t a70 = put(&e);
  uint64_t sec_b = emit(fxt_encode_provider_section(ROOM, &to_b));
  struct fxt_event c = ev(FXT_EVENT_COUNTER, fxt_thread_index(1), S_DEMO, S_WORK, 540);
  c.trailer = 4;
  uint64_t b55 = put(&c);
  struct fxtf_file *f = load();
  assert_int_equal(fxtf_provider_count(f), 2);
  const struct fxtf_provider *a = fxtf_provider(f, 0), *b = fxtf_provider(f, 1);
  assert_int_equal(a->events, 7);
  assert_int_equal(b->events, 3);
  assert_int_equal(a->end, sec_b);
  assert_int_equal(b->end, g_len);
  assert_int_equal(fxtf_provider_at(f, g_off.b40), 1);
  assert_int_equal(fxtf_provider_at(f, sec_a), 0);
  assert_int_equal(fxtf_provider_at(f, a70), 0);
  assert_int_equal(fxtf_provider_at(f, b55), 1);
  assert_int_equal(fxtf_event_count(f), 10);
  struct fxtf_event got;
  char err[FXTF_ERR_SIZE];
  size_t seen = 0;
  for (size_t i = 0; i < fxtf_event_count(f); i++) {
    assert_int_equal(fxtf_event_at(f, i, &got, err, sizeof err), 0);
    if (got.offset != a70 && got.offset != b55)
      continue;
    bool is_a = got.offset == a70;
    assert_int_equal(got.ns, is_a ? NS(70) : NS(55));
    assert_int_equal(got.thread->pid, is_a ? 100 : 200);
    assert_int_equal(got.thread->tid, is_a ? 101 : 201);
    assert_int_equal(got.ev.thread.thread_koid, is_a ? 101 : 201);
    assert_true(fxtf_str_is(&got.ev.name, is_a ? "work" : "evt"));
    seen++;
  }
  assert_int_equal(seen, 2);
  uint32_t n;
  const struct fxtf_thread *t = fxtf_threads(f, &n);
  assert_int_equal(n, 3);
  assert_int_equal(t[0].events, 4);
  assert_int_equal(t[2].events, 3);
  fxtf_close(f);
}

static void test_name_counts(void **state) {
  (void)state;
  build_two_providers();
  struct fxtf_file *f = load();
  struct fxtf_name_count *c;
  size_t n;
  assert_int_equal(fxtf_name_counts(f, &c, &n), 0);
  /* by count, then system, then name */
  const char *want[][2] = {{"demo", "work"}, {"demo", "tick"}, {"other", "evt"},
                           {"printk", "got %d"}};
  const uint64_t counts[] = {3, 2, 2, 1};
  assert_int_equal(n, 4);
  for (size_t i = 0; i < n; i++) {
    assert_true(fxtf_text_is(c[i].system, want[i][0]));
    assert_true(fxtf_text_is(c[i].name, want[i][1]));
    assert_int_equal(c[i].count, counts[i]);
  }
  free(c);
  fxtf_close(f);
}

/* ---- CPU losses ------------------------------------------------------------------------------
 *
 * A kernel trace as `fxtrace convert X.dat --to fxt` writes it: a CPU's losses are `lost`
 * records of thread 0 carrying that CPU (cpu_loss). Provider 7 (1e9 ticks/s, no clock sync:
 * ticks are ns), the idle task 0 on CPU 0, task 11 on CPU 0, task 12 on CPU 1:
 *   10  CPU 1 loses 5             -> before 12's event at 40, not the idle task's at 20
 *   20  idle task event (CPU 0)      (thread 0, the losses' own thread, takes none of them)
 *   25  CPU 0 loses some, how many unknown; CPU 2 loses 4 (no event on CPU 2: trailing)
 *   30  idle task event           <- "CPU:0 [LOST EVENTS]"
 *   40  12's event (CPU 1)        <- 5
 *   45  11 drops 2 of its own (drop_stats, no cpu); 50  CPU 0 loses 6
 *   60  11's event (CPU 0)        <- 2 + 6 = 8
 *   70  CPU 0 loses 1: the provider ends with it pending, trailing
 * Provider 8: 80  task 21's event on CPU 0 (another provider: takes nothing of 7's CPU 0).
 * Trailing CPU losses in the order of their first record: CPU 2's 4, CPU 0's 1. */
static void sched_ev(struct fxt_thread_ref th, uint64_t ts) {
  struct fxt_event e = ev(FXT_EVENT_INSTANT, th, S_DEMO, S_WORK, ts);
  put(&e);
}

static void build_cpu_losses(void) {
  struct fxt_thread_ref idle = fxt_thread_inline(7, 0), t11 = fxt_thread_inline(7, 11),
                        t12 = fxt_thread_inline(7, 12), t21 = fxt_thread_inline(8, 21);
  file_start(7, 1000000000);
  string(S_DEMO, "sched"), string(S_WORK, "ev");
  cpu(idle, 0, 0), cpu(t11, 0, 0), cpu(t12, 0, 1);
  cpu_loss(7, 10, 1, 5, false);
  sched_ev(idle, 20);
  cpu_loss(7, 25, 0, 0, true);
  cpu_loss(7, 25, 2, 4, false);
  sched_ev(idle, 30);
  sched_ev(t12, 40);
  loss(t11, FXT_STR_DROP_STATS, 45, 2);
  cpu_loss(7, 50, 0, 6, false);
  sched_ev(t11, 60);
  cpu_loss(7, 70, 0, 1, false);
  provider(8, 1000000000);
  meta_strings();
  string(S_DEMO, "sched"), string(S_WORK, "ev");
  cpu(t21, 0, 0);
  sched_ev(t21, 80);
}

static void test_cpu_losses(void **state) {
  (void)state;
  build_cpu_losses();
  struct fxtf_file *f = load();
  static const struct want_event want[] = {
      {20, 0, 0, ""},
      {30, 0, 0, "CPU:0 [LOST EVENTS]\n"},
      {40, 12, 1, "CPU:1 [LOST 5 EVENTS]\n"},
      {60, 11, 0, "CPU:0 [LOST 8 EVENTS]\n"},
      {80, 21, 0, ""},
  };
  expect_events(f, want, 5);
  struct fxtf_event e;
  char err[FXTF_ERR_SIZE];
  assert_int_equal(fxtf_event_at(f, 1, &e, err, sizeof err), 0);
  assert_int_equal(e.lost_before, 0);
  assert_true(e.lost_unknown);
  assert_int_equal(fxtf_event_at(f, 3, &e, err, sizeof err), 0);
  assert_int_equal(e.lost_before, 8);
  assert_false(e.lost_unknown);
  static const struct fxtf_cpu_loss trailing[] = {{0, 2, 4, false}, {0, 0, 1, false}};
  expect_trailing_cpu_losses(f, trailing, 2);
  uint32_t nt;
  const struct fxtf_thread *t = fxtf_threads(f, &nt);
  assert_int_equal(t[0].tid, 0); /* the losses count as the idle task's, as stats shows */
  assert_int_equal(t[0].lost, 16);
  assert_int_equal(t[0].trailing_lost, 0);
  struct fxtf_totals tot;
  fxtf_totals(f, &tot);
  assert_int_equal(tot.lost, 16);
  assert_int_equal(tot.dropped, 2);
  assert_int_equal(tot.trailing_lost, 5);
  fxtf_close(f);
}

static void test_clock_mapping(void **state) {
  (void)state;
  struct fxtf_provider p;
  memset(&p, 0, sizeof p);
  p.ticks_per_second = 2000000000;
  assert_int_equal(fxtf_ticks_to_ns(&p, 4000), 2000); /* no sync: the rate alone */
  p.ticks_per_second = 0;
  assert_int_equal(fxtf_ticks_to_ns(&p, 4000), 4000); /* nothing: ticks are ns */
  p.ticks_per_second = 2000000000;
  p.nsyncs = 1;
  p.first_sync = p.last_sync = (struct fxtf_sync){0, 1000, 7000, 0};
  assert_int_equal(fxtf_ticks_to_ns(&p, 3000), 8000); /* one sync at the rate */
  assert_int_equal(fxtf_ticks_to_ns(&p, 0), 6500);    /* extrapolated backwards */
  p.nsyncs = 2;
  p.last_sync = (struct fxtf_sync){0, 3001000, 1007000, 0}; /* 3 ticks per ns */
  assert_int_equal(fxtf_ticks_to_ns(&p, 3001000 + 3000), 1008000); /* extrapolated forwards */
  assert_int_equal(fxtf_ticks_to_ns(&p, 1000 + 3 * 12345), 7000 + 12345);
  assert_int_equal(fxtf_ticks_to_ns(&p, 1000 + 3 * 12345 + 1), 7000 + 12345); /* 1/3 ns down */
  assert_int_equal(fxtf_ticks_to_ns(&p, 1000 + 3 * 12345 + 2), 7000 + 12346); /* 2/3 ns up */
  p.first_sync.monotonic_ns = 0; /* before 0: saturates */
  assert_int_equal(fxtf_ticks_to_ns(&p, 0), 0);
}

/* Clock syncs about once a second: ticks map piecewise through all of them (the counter's
 * drift against CLOCK_MONOTONIC is followed), the first and last segments extended. */
static void test_clock_mapping_piecewise(void **state) {
  (void)state;
  struct fxtf_sync syncs[3] = {
      {0, 1000, 7000, 0}, /* 3 ticks per ns up to the next */
      {0, 4000, 8000, 0}, /* 2 ticks per ns from here */
      {0, 6000, 9000, 0},
  };
  struct fxtf_provider p;
  memset(&p, 0, sizeof p);
  p.ticks_per_second = 2000000000;
  p.nsyncs = 3;
  p.first_sync = syncs[0];
  p.last_sync = syncs[2];
  p.syncs = syncs;
  assert_int_equal(fxtf_ticks_to_ns(&p, 1000), 7000);
  assert_int_equal(fxtf_ticks_to_ns(&p, 2500), 7500); /* first segment */
  assert_int_equal(fxtf_ticks_to_ns(&p, 4000), 8000);
  assert_int_equal(fxtf_ticks_to_ns(&p, 5000), 8500); /* second segment */
  assert_int_equal(fxtf_ticks_to_ns(&p, 7000), 9500); /* beyond: the last segment's rate */
  assert_int_equal(fxtf_ticks_to_ns(&p, 0), 6667);    /* before: the first segment's */
  /* Through the first and last only, the middle sync is 8000 - 7000 - 3000 * 2000 / 5000 =
   * 200 ns off: what a reader of first and last alone would get. */
  p.syncs = NULL;
  assert_int_equal(fxtf_ticks_to_ns(&p, 4000), 8200);
  /* Syncs out of order (a damaged or hand-made file): first and last only. */
  syncs[1].ticks = 500;
  p.syncs = syncs;
  assert_int_equal(fxtf_ticks_to_ns(&p, 4000), 8200);
  /* A loaded file keeps every sync of a provider. */
  build_two_providers();
  struct fxtf_file *f = load();
  const struct fxtf_provider *a = fxtf_provider(f, 0);
  assert_int_equal(a->nsyncs, 2);
  assert_non_null(a->syncs);
  assert_int_equal(a->syncs[0].ticks, T(0));
  assert_int_equal(a->syncs[1].ticks, T(1000000));
  fxtf_close(f);
}

/* fxtf_clockmap_apply_seg (the loader's, which keeps the segment of the previous ticks) maps
 * every tick as fxtf_clockmap_apply does: at and around each sync, beyond the first and last,
 * in order and jumping back and forth, with many syncs, two, one and none. */
static void test_clock_mapping_segment_cache(void **state) {
  (void)state;
  struct fxtf_sync syncs[6] = {
      {0, 1000, 7000, 0},       {0, 4000, 8000, 0},          {0, 4001, 8003, 0},
      {0, 9000000, 3008003, 0}, {0, 9000007, 3008003, 0}, {0, 20000000000, 9000000000, 0},
  };
  uint64_t ticks[64];
  size_t n = 0;
  ticks[n++] = 0;
  ticks[n++] = UINT64_MAX;
  for (int k = 0; k < 6; k++)
    for (int d = -2; d <= 2; d++)
      ticks[n++] = syncs[k].ticks + (uint64_t)(int64_t)d;
  ticks[n++] = 30000000000;
  ticks[n++] = 123456789;
  for (uint32_t nsyncs = 0; nsyncs <= 6; nsyncs++) {
    struct fxtf_provider p;
    memset(&p, 0, sizeof p);
    p.ticks_per_second = 3000000000;
    p.nsyncs = nsyncs;
    if (nsyncs) {
      p.first_sync = syncs[0];
      p.last_sync = syncs[nsyncs - 1];
      p.syncs = syncs;
    }
    struct fxtf_clockmap m = fxtf_clockmap_of(&p);
    struct fxtf_clockseg g = {0};
    for (size_t i = 0; i < n; i++) /* jumping around */
      assert_int_equal(fxtf_clockmap_apply_seg(&m, &g, ticks[i]),
                       fxtf_clockmap_apply(&m, ticks[i]));
    memset(&g, 0, sizeof g);
    for (uint64_t t = 0; t < 9000100; t += 997) /* in order, through the segments */
      assert_int_equal(fxtf_clockmap_apply_seg(&m, &g, t), fxtf_clockmap_apply(&m, t));
  }
}

/* Every event re-read by fxtf_event_at equals what the decoder read in file order. */
static void test_reread_matches_decoder(void **state) {
  (void)state;
  build_two_providers();
  struct fxtf_file *f = load();
  static struct fxt_str_slot table[FXT_STRING_TABLE_SIZE];
  struct fxt_decoder d;
  struct fxt_record rec;
  struct fxtf_event e;
  char err[FXT_DECODER_MSG_SIZE];
  assert_int_equal(fxt_decoder_init(&d, g_buf, g_len, table), 0);
  size_t matched = 0;
  while (fxt_decoder_next(&d, &rec, err, sizeof err) == 1) {
    for (size_t i = 0; i < fxtf_event_count(f); i++) {
      assert_int_equal(fxtf_event_at(f, i, &e, NULL, 0), 0);
      if (e.offset != rec.offset)
        continue;
      const struct fxt_event *w = &rec.u.event;
      assert_int_equal(e.ev.type, w->type);
      assert_int_equal(e.ev.timestamp, w->timestamp);
      assert_int_equal(e.ev.trailer, w->trailer);
      assert_int_equal(e.ev.num_args, w->num_args);
      for (uint32_t k = 0; k < w->num_args; k++) {
        const struct fxt_arg *x = &e.ev.args[k], *y = &w->args[k];
        assert_int_equal(x->type, y->type);
        assert_int_equal(x->name.len, y->name.len);
        assert_memory_equal(x->name.data, y->name.data, y->name.len);
        if (y->type == FXT_ARG_STRING) {
          assert_int_equal(x->value.str.len, y->value.str.len);
          assert_memory_equal(x->value.str.data, y->value.str.data, y->value.str.len);
        } else if (y->type == FXT_ARG_BOOL) {
          assert_int_equal(x->value.b, y->value.b);
        } else if (y->type == FXT_ARG_INT32 || y->type == FXT_ARG_UINT32) {
          assert_int_equal(x->value.u32, y->value.u32);
        } else if (y->type != FXT_ARG_NULL) {
          assert_int_equal(x->value.u64, y->value.u64);
        }
      }
      matched++;
    }
  }
  assert_int_equal(matched, 8);
  fxtf_close(f);
}

static void test_descriptions(void **state) {
  (void)state;
  build_two_providers();
  struct fxtf_file *f = load();
  struct fxtf_event e;
  assert_int_equal(fxtf_event_at(f, 0, &e, NULL, 0), 0); /* demo:work */
  assert_non_null(e.desc);
  assert_int_equal(e.desc->id, 1);
  assert_int_equal(e.desc->kind, 0);
  assert_true(fxtf_text_is(e.desc->fmt, "seq=%llu"));
  assert_int_equal(e.desc->nfields, 1);
  assert_true(fxtf_text_is(e.desc->fields[0].name, "seq"));
  assert_int_equal(e.desc->fields[0].type, 4);
  assert_int_equal(fxtf_event_at(f, 2, &e, NULL, 0), 0); /* B's other:evt: none */
  assert_null(e.desc);
  assert_int_equal(fxtf_event_at(f, 7, &e, NULL, 0), 0); /* printk */
  assert_int_equal(e.desc->kind, 6);
  /* and the text a report prints */
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  for (size_t i = 0; i < fxtf_event_count(f); i++) {
    assert_int_equal(fxtf_event_at(f, i, &e, NULL, 0), 0);
    fxt_text_event(&b, &e);
  }
  assert_string_equal(
      fxt_tbuf_str(&b),
      "           alpha-101     [002] .....     5.000000: work: seq=1\n"
      "            beta-102     [005] .....     5.000000: tick: a0=-7 seq=7 "
      "seq=-9223372036854775808 seq=18446744073709551615 seq=0.25 seq=0xabc seq=99 seq=1 "
      "seq= inl=text value\n"
      "           gamma-201     [000] .....     5.000000: evt: id=4\n"
      "           alpha-101     [002] .....     5.000000: work: seq=2\n"
      "CPU:5 [LOST 4 EVENTS]\n"
      "            beta-102     [005] .....     5.000000: tick: \n"
      "           alpha-101     [003] .....     5.000000: work: seq=3\n"
      "           gamma-201     [000] .....     5.000000: evt: id=4\n"
      "CPU:5 [LOST 3 EVENTS]\n"
      "            beta-102     [005] .....     5.000000: printk: got 7\n");
  fxt_tbuf_free(&b);
  fxtf_close(f);
}

/* ---- errors ------------------------------------------------------------------------------ */

static void expect_load_error(int code, const char *msg) {
  char err[FXTF_ERR_SIZE];
  struct fxtf_file *f = (struct fxtf_file *)1;
  uint8_t *copy = malloc(g_len); /* exact size: an overread fails under ASan */
  memcpy(copy, g_buf, g_len);
  assert_int_equal(fxtf_load(copy, g_len, &f, err, sizeof err), code);
  assert_null(f);
  assert_string_equal(err, msg);
  free(copy);
}

static void test_errors(void **state) {
  (void)state;
  char msg[200];
  /* a string index bound again to other text */
  g_len = 0;
  magic();
  provider(1, 1000);
  string(40, "one");
  uint64_t at = string(40, "two");
  snprintf(msg, sizeof msg,
           "offset %llu: string index 40 re-bound to other text (fxtrace binds each index "
           "once per process)",
           (unsigned long long)at);
  expect_load_error(FXT_EBADMSG, msg);

  /* a bookkeeping record without its argument */
  g_len = 0;
  magic();
  provider(1, 1000);
  meta_strings();
  struct fxt_event e = ev(FXT_EVENT_INSTANT, fxt_thread_inline(1, 2), FXT_STR_KERNEL_META,
                             FXT_STR_OVERRUN, 5);
  at = put(&e);
  snprintf(msg, sizeof msg,
           "offset %llu: kernel:meta overrun record without an unsigned integer argument "
           "'num_records'",
           (unsigned long long)at);
  expect_load_error(FXT_EBADMSG, msg);

  /* a description with an unknown kind; its payload starts one word into the record */
  g_len = 0;
  magic();
  provider(1, 1000);
  meta_strings();
  at = g_len;
  desc(1, FXT_STR_CPU, FXT_STR_CPU, 9, "", 0, NULL, NULL);
  snprintf(msg, sizeof msg, "offset %llu: tracepoint description: unknown kind 9",
           (unsigned long long)at + 8 + 8);
  expect_load_error(FXT_EBADMSG, msg);

  /* a description naming an undefined string */
  g_len = 0;
  magic();
  provider(1, 1000);
  meta_strings();
  at = g_len;
  desc(1, 200, FXT_STR_CPU, 0, "", 0, NULL, NULL);
  snprintf(msg, sizeof msg,
           "offset %llu: tracepoint description: the system refers to undefined string 200",
           (unsigned long long)at + 8 + 4);
  expect_load_error(FXT_EBADMSG, msg);

  /* decoder errors come through with their offset: a size 0 record inside the file */
  build_two_providers();
  memset(g_buf + g_off.b40, 0, 8);
  snprintf(msg, sizeof msg, "offset %llu: record size 0 (type 0)", (unsigned long long)g_off.b40);
  expect_load_error(FXT_EBADMSG, msg);
}

/* A torn tail (the file ends inside a record): every record before it is read, and the reader
 * says where the tail is. B's last event (3 words) loses its last word. */
static void test_torn_tail(void **state) {
  (void)state;
  char err[FXTF_ERR_SIZE];
  struct fxtf_file *f = NULL;
  build_two_providers();
  assert_int_equal(fxtf_load(g_buf, g_len, &f, err, sizeof err), 0);
  size_t whole = fxtf_event_count(f);
  assert_int_equal(fxtf_torn(f), UINT64_MAX);
  fxtf_close(f);
  for (size_t cut = 1; cut <= 23; cut++) { /* inside its header word, or after it */
    uint8_t *copy = malloc(g_off.b40 + 24 - cut); /* exact size: an overread fails under ASan */
    memcpy(copy, g_buf, g_off.b40 + 24 - cut);
    assert_int_equal(fxtf_load(copy, g_off.b40 + 24 - cut, &f, err, sizeof err), 0);
    assert_string_equal(err, "");
    assert_int_equal(fxtf_torn(f), g_off.b40);
    assert_int_equal(fxtf_event_count(f), whole - 1 - (g_len - g_off.b40 - 24 > 0));
    struct fxtf_event e;
    for (size_t i = 0; i < fxtf_event_count(f); i++) {
      assert_int_equal(fxtf_event_at(f, i, &e, NULL, 0), 0);
      assert_true(e.offset < g_off.b40);
    }
    fxtf_close(f);
    free(copy);
  }
  /* a record the reader refuses, then a torn one: the refusal stands (a torn tail is what
   * the decoder finds, never what a record says) */
  g_len = 0;
  magic();
  provider(1, 1000);
  meta_strings();
  struct fxt_event bad = ev(FXT_EVENT_INSTANT, fxt_thread_inline(1, 2), FXT_STR_KERNEL_META,
                            FXT_STR_OVERRUN, 5);
  uint64_t at = put(&bad); /* an overrun record without its arguments */
  put(&bad);
  f = (struct fxtf_file *)1;
  assert_int_equal(fxtf_load(g_buf, g_len - 4, &f, err, sizeof err), FXT_EBADMSG);
  assert_null(f);
  char msg[200];
  snprintf(msg, sizeof msg,
           "offset %llu: kernel:meta overrun record without an unsigned integer argument "
           "'num_records'",
           (unsigned long long)at);
  assert_string_equal(err, msg);
  build_two_providers();
  /* pos 0 is never a torn tail: a cut magic record is not an FXT file */
  assert_int_equal(fxtf_load(g_buf, 5, &f, err, sizeof err), FXT_EBADMSG);
  assert_false(fxtf_torn_at(g_buf, 5, 0));
  assert_true(fxtf_torn_at(g_buf, g_off.b40 + 3, g_off.b40));
  assert_false(fxtf_torn_at(g_buf, g_len, g_off.b40));
}

static void test_truncated_everywhere(void **state) { /* every cut is a torn tail */
  (void)state;
  build_two_providers();
  size_t full = g_len;
  for (size_t n = 0; n < full; n++) { /* no crash, and an error for every cut mid-record */
    char err[FXTF_ERR_SIZE];
    struct fxtf_file *f = NULL;
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, g_buf, n);
    int rc = fxtf_load(copy, n, &f, err, sizeof err);
    if (n < 8) /* no magic record */
      assert_int_equal(rc, FXT_EBADMSG);
    else /* a torn tail: the records before it */
      assert_int_equal(rc, 0);
    if (rc == 0) {
      if (n % 8 != 0)
        assert_true(fxtf_torn(f) < n && fxtf_torn(f) % 8 == 0);
      struct fxtf_event e;
      for (size_t i = 0; i < fxtf_event_count(f); i++)
        assert_int_equal(fxtf_event_at(f, i, &e, NULL, 0), 0);
      fxtf_close(f);
    } else {
      assert_null(f);
      assert_true(strncmp(err, "offset ", 7) == 0);
    }
    free(copy);
  }
}

FXT_TEST_MAIN(
    cmocka_unit_test(test_merged_order_cpu_ns_losses),
    cmocka_unit_test(test_threads_providers_totals), cmocka_unit_test(test_cpu_losses),
    cmocka_unit_test(test_interleaved_providers), cmocka_unit_test(test_name_counts),
    cmocka_unit_test(test_clock_mapping), cmocka_unit_test(test_clock_mapping_piecewise),
    cmocka_unit_test(test_clock_mapping_segment_cache),
    cmocka_unit_test(test_reread_matches_decoder), cmocka_unit_test(test_descriptions),
    cmocka_unit_test(test_errors), cmocka_unit_test(test_truncated_everywhere),
    cmocka_unit_test(test_torn_tail))
