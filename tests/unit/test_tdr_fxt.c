/* tests/unit/test_tdr_fxt.c - a whole trace.dat (v6, built here byte by byte after spec
 * tracedat.md §1) through the reader (tracedat_read.h) and the FXT conversion (tracedat_import.h):
 * options, CPU table, two CPUs merged by time, missed events, CPUSTAT, and what the FXT file
 * says (context switches, wakeups, instants with their fields, names, losses, clock syncs),
 * decoded with fxtrace's own FXT decoder and file reader, and where report shows the losses.
 * Then every truncation of the file fails with an offset inside what is left, and refused
 * forms say why.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "../test_main.h"

#include <stdlib.h>
#include <string.h>

#include "formats/fxtfile.h"
#include "formats/tracedat_import.h"
#include "../mem_sink.h"
#include "report_lines.h"
#include "tdr_formats.h"

#define PAGE 256u

struct buf {
  unsigned char b[8192];
  size_t len;
};

static void put(struct buf *o, const void *p, size_t n) {
  memcpy(o->b + o->len, p, n);
  o->len += n;
}
static void le(struct buf *o, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    o->b[o->len++] = (unsigned char)(v >> (8 * i));
}
static void str(struct buf *o, const char *s) { put(o, s, strlen(s) + 1); }
static void text8(struct buf *o, const char *s) { /* u64 length + text */
  le(o, strlen(s), 8);
  put(o, s, strlen(s));
}

static const char k_header_page[] = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
                                    "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
                                    "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
                                    "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
static const char k_switch[] = FXT_TD_SCHED_SWITCH_FORMAT;
static const char k_wakeup[] = FXT_TD_SCHED_WAKEUP_FORMAT;

/* A sched_switch payload (64 bytes): common_pid = prev. */
static void sw(struct buf *o, uint32_t delta, int32_t prev, const char *pcomm, int64_t state,
               int32_t next, const char *ncomm) {
  char c[16];
  le(o, delta << 5 | 16, 4); /* type_len 16: 64 bytes */
  le(o, 316, 2), le(o, 0, 2), le(o, (uint32_t)prev, 4);
  memset(c, 0, 16), strcpy(c, pcomm), put(o, c, 16);
  le(o, (uint32_t)prev, 4), le(o, 120, 4), le(o, (uint64_t)state, 8);
  memset(c, 0, 16), strcpy(c, ncomm), put(o, c, 16);
  le(o, (uint32_t)next, 4), le(o, 120, 4);
}

/* A sched_wakeup payload (40 bytes, 36 used): common_pid = waker. */
static void wk(struct buf *o, uint32_t delta, int32_t waker, const char *comm, int32_t pid,
               int32_t cpu) {
  char c[16];
  le(o, delta << 5 | 10, 4);
  le(o, 374, 2), le(o, 0, 2), le(o, (uint32_t)waker, 4);
  memset(c, 0, 16), strcpy(c, comm), put(o, c, 16);
  le(o, (uint32_t)pid, 4), le(o, 120, 4), le(o, (uint32_t)cpu, 4), le(o, 0, 4);
}

/* The file. CPU 0's page (ts 1000):
 *     1000  app(100) S ==> swapper/0(0)
 *     1500  swapper/0 wakes app(100) onto CPU 0      (delta 500)
 *     1510  swapper/0 R ==> app(100)                 (delta 10)
 *   with lost_page, a second page of CPU 0 (ts 2000, events lost before it, no count stored):
 *     2000  swapper/0 wakes worker(101) onto CPU 1
 *   CPU 1's page (ts 1200, 2 events lost before it, count stored):
 *     1200  worker(101) R+ (state 0x100) ==> swapper/1(0)
 *   Options: TRACECLOCK [mono], CPUSTAT of CPU 1 with overrun 5 (3 beyond the page's 2). */
static size_t build_with(struct buf *o, bool lost_page) {
  memset(o, 0, sizeof *o);
  put(o, "\x17\x08\x44tracing6", 11);
  le(o, 0, 1), le(o, 0, 1), le(o, 8, 1), le(o, PAGE, 4);
  str(o, "header_page"), text8(o, k_header_page);
  str(o, "header_event"), text8(o, "# compressed entry header\n");
  le(o, 0, 4);                               /* ftrace formats */
  le(o, 1, 4), str(o, "sched"), le(o, 2, 4); /* one system, two events */
  text8(o, k_switch), text8(o, k_wakeup);
  le(o, 0, 4), le(o, 0, 4); /* kallsyms, printk */
  text8(o, "100 app\n101 worker\n");
  le(o, 2, 4); /* CPUs */
  put(o, "options  ", 10);
  static const char clock[] = "local [mono] boot\n";
  static const char stat1[] = "CPU: 1\nentries: 1\noverrun: 5\ncommit overrun: 0\n";
  le(o, 4, 2), le(o, sizeof clock, 4), put(o, clock, sizeof clock);
  le(o, 2, 2), le(o, sizeof stat1, 4), put(o, stat1, sizeof stat1);
  le(o, 0, 2);
  put(o, "flyrecord", 10);
  size_t table = o->len, data = (table + 32 + 14 + PAGE - 1) / PAGE * PAGE;
  size_t cpu0 = lost_page ? 2 * PAGE : PAGE;
  le(o, data, 8), le(o, cpu0, 8), le(o, data + cpu0, 8), le(o, PAGE, 8);
  text8(o, "[mono]");
  o->len = data;
  le(o, 1000, 8), le(o, 68 + 44 + 68, 8);
  sw(o, 0, 100, "app", 1, 0, "swapper/0");
  wk(o, 500, 0, "app", 100, 0);
  sw(o, 10, 0, "swapper/0", 0, 100, "app");
  if (lost_page) {
    o->len = data + PAGE;
    le(o, 2000, 8), le(o, 44 | UINT64_C(1) << 31, 8); /* RB_MISSED_EVENTS alone */
    wk(o, 0, 0, "worker", 101, 1);
  }
  o->len = data + cpu0;
  le(o, 1200, 8), le(o, 68 | UINT64_C(3) << 30, 8);
  sw(o, 0, 101, "worker", 0x100, 0, "swapper/1");
  le(o, 2, 8); /* the missed count, after the data */
  o->len = data + cpu0 + PAGE;
  return o->len;
}

static size_t build(struct buf *o) { return build_with(o, false); }

static struct buf g_file;
static struct fxt_str_slot g_table[FXT_STRING_TABLE_SIZE];

static const struct fxt_arg *arg(const struct fxt_record *r, const char *name) {
  const struct fxt_arg *a = r->kind == FXT_KIND_EVENT            ? r->u.event.args
                            : r->kind == FXT_KIND_CONTEXT_SWITCH ? r->u.context_switch.args
                                                                 : r->u.wakeup.args;
  uint32_t n = r->kind == FXT_KIND_EVENT            ? r->u.event.num_args
               : r->kind == FXT_KIND_CONTEXT_SWITCH ? r->u.context_switch.num_args
                                                    : r->u.wakeup.num_args;
  for (uint32_t i = 0; i < n; i++)
    if (fxtf_str_is(&a[i].name, name))
      return &a[i];
  fail_msg("no argument %s", name);
  return NULL;
}

static void test_reader(void **state) {
  (void)state;
  size_t len = build(&g_file);
  struct fxt_td_file *f;
  char err[FXT_TD_ERR_SIZE];
  assert_int_equal(fxt_td_open(g_file.b, len, &f, err, sizeof err), 0);
  assert_int_equal(f->version, 6);
  assert_int_equal(f->page_size, PAGE);
  assert_int_equal(f->lay.data_offset, 16);
  assert_int_equal(f->lay.long_size, 8);
  assert_int_equal(f->cpus, 2);
  assert_int_equal(f->clock.len, 4);
  assert_memory_equal(f->clock.data, "mono", 4);
  assert_int_equal(f->nevents, 2);
  assert_non_null(fxt_td_event_by_id(f, 374));
  assert_null(fxt_td_event_by_id(f, 375));
  assert_int_equal(f->ncmdlines, 2);
  assert_int_equal(f->cmdlines[1].pid, 101);
  assert_int_equal(f->ncpustats, 1);
  assert_int_equal(f->cpustats[0].cpu, 1);
  assert_int_equal(f->cpustats[0].overrun, 5);
  assert_int_equal(f->cpustats[0].dropped, UINT64_MAX); /* no such line */
  struct fxt_td_iter *it;
  struct fxt_td_item item;
  assert_int_equal(fxt_td_iter_new(f, &it, err, sizeof err), 0);
  /* time order across CPUs: 1000 (cpu 0), then cpu 1's missed notice and record at 1200 */
  static const struct {
    uint32_t kind, cpu;
    uint64_t ts;
    int32_t pid;
  } want[] = {{FXT_TD_ITEM_RECORD, 0, 1000, 100},
              {FXT_TD_ITEM_MISSED, 1, 1200, 0},
              {FXT_TD_ITEM_RECORD, 1, 1200, 101},
              {FXT_TD_ITEM_RECORD, 0, 1500, 0},
              {FXT_TD_ITEM_RECORD, 0, 1510, 0}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    assert_int_equal(fxt_td_iter_next(it, &item, err, sizeof err), 1);
    assert_int_equal(item.kind, want[i].kind);
    assert_int_equal(item.cpu, want[i].cpu);
    assert_int_equal(item.rec.ts, want[i].ts);
    if (item.kind == FXT_TD_ITEM_RECORD)
      assert_int_equal(item.pid, want[i].pid);
    else
      assert_true(item.missed_known && item.missed_count == 2);
  }
  assert_int_equal(fxt_td_iter_next(it, &item, err, sizeof err), 0);
  fxt_td_iter_free(it);
  fxt_td_close(f);
}

/* The FXT in s read by the fxtrace reader (must succeed): n events. */
static struct fxtf_file *load_events(const struct mem_sink *s, size_t n) {
  struct fxtf_file *ff;
  char ferr[FXTF_ERR_SIZE];
  int rc = fxtf_load(s->buf, s->len, &ff, ferr, sizeof ferr);
  if (rc != 0)
    fail_msg("fxtf_load: %d %s", rc, ferr);
  assert_int_equal(fxtf_event_count(ff), n);
  return ff;
}

/* g_file's first len bytes as FXT into s (must succeed). */
static void convert(size_t len, struct mem_sink *s, struct fxt_td_fxt_stats *st) {
  char err[FXT_TD_ERR_SIZE] = "";
  int rc = fxt_td_to_fxt(g_file.b, len, mem_sink_write, s, st, err, sizeof err);
  if (rc != 0)
    fail_msg("fxt_td_to_fxt: %d %s", rc, err);
}

static void test_conversion(void **state) {
  (void)state;
  struct mem_sink s = {0};
  struct fxt_td_fxt_stats st;
  char err[FXT_TD_ERR_SIZE] = "";
  convert(build(&g_file), &s, &st);
  assert_int_equal(st.records, 4);
  assert_int_equal(st.events, 4);
  assert_int_equal(st.switches, 3);
  assert_int_equal(st.wakeups, 1);
  assert_int_equal(st.lost_pages, 1);
  assert_int_equal(st.lost_known, 2);
  assert_int_equal(st.lost_cpustat, 3); /* overrun 5 - 2 the page counted */
  assert_string_equal(st.clock, "mono");

  /* The records, in file order, as the strict decoder reads them. */
  struct fxt_decoder d;
  struct fxt_record r;
  assert_int_equal(fxt_decoder_init(&d, s.buf, s.len, g_table), 0);
  int rc, switches = 0, syncs = 0, lost = 0, wakeups = 0;
  uint64_t lost_total = 0;
  while ((rc = fxt_decoder_next(&d, &r, err, sizeof err)) == 1) {
    if (r.kind == FXT_KIND_PROVIDER_INFO) {
      assert_int_equal(r.u.provider_info.id, 0);
      assert_memory_equal(r.u.provider_info.name, "fxtrace/1", 9);
    } else if (r.kind == FXT_KIND_INIT) {
      assert_int_equal(r.u.init.ticks_per_second, 1000000000);
    } else if (r.kind == FXT_KIND_CONTEXT_SWITCH) {
      const struct fxt_context_switch *cs = &r.u.context_switch;
      static const uint64_t ts[] = {1000, 1200, 1510}, out[] = {100, 101, 0}, in[] = {0, 0, 100};
      static const uint8_t st_out[] = {FXT_THREAD_STATE_BLOCKED, FXT_THREAD_STATE_NEW,
                                       FXT_THREAD_STATE_NEW};
      static const uint16_t cpu[] = {0, 1, 0};
      assert_int_equal(cs->timestamp, ts[switches]);
      assert_int_equal(cs->outgoing_tid, out[switches]);
      assert_int_equal(cs->incoming_tid, in[switches]);
      assert_int_equal(cs->outgoing_state, st_out[switches]);
      assert_int_equal(cs->cpu, cpu[switches]);
      /* the idle task weighs INT32_MIN (Perfetto leaves it out), others their prio */
      assert_int_equal(arg(&r, "outgoing_weight")->value.i32, out[switches] ? 120 : INT32_MIN);
      assert_int_equal(arg(&r, "incoming_weight")->value.i32, in[switches] ? 120 : INT32_MIN);
      switches++;
    } else if (r.kind == FXT_KIND_WAKEUP) {
      assert_int_equal(r.u.wakeup.timestamp, 1500);
      assert_int_equal(r.u.wakeup.waking_tid, 100);
      assert_int_equal(r.u.wakeup.cpu, 0);
      assert_int_equal(arg(&r, "weight")->value.i32, 120);
      wakeups++;
    } else if (r.kind == FXT_KIND_EVENT && fxtf_str_is(&r.u.event.name, "clock_sync")) {
      assert_int_equal(arg(&r, "ticks")->value.u64, syncs ? 1510 : 1000);
      assert_int_equal(arg(&r, "monotonic_ns")->value.u64, syncs ? 1510 : 1000);
      syncs++;
    } else if (r.kind == FXT_KIND_EVENT && fxtf_str_is(&r.u.event.name, "lost")) {
      assert_int_equal(arg(&r, "cpu")->value.u32, 1);
      lost_total += arg(&r, "num_records")->value.u32;
      lost++;
    } else if (r.kind == FXT_KIND_EVENT && fxtf_str_is(&r.u.event.name, "trace_clock")) {
      assert_int_equal(arg(&r, "clock")->value.str.len, 4);
    }
  }
  assert_int_equal(rc, 0);
  assert_int_equal(switches, 3);
  assert_int_equal(wakeups, 1);
  assert_int_equal(syncs, 2);
  assert_int_equal(lost, 2);
  assert_int_equal(lost_total, 5);

  /* The fxtrace reader: events in time order with their fields, threads named. */
  struct fxtf_file *ff = load_events(&s, 4);
  char ferr[FXTF_ERR_SIZE];
  struct fxtf_event e;
  assert_int_equal(fxtf_event_at(ff, 0, &e, ferr, sizeof ferr), 0);
  assert_int_equal(e.ns, 1000);
  assert_int_equal(e.cpu, 0);
  assert_true(fxtf_str_is(&e.ev.category, "sched") && fxtf_str_is(&e.ev.name, "sched_switch"));
  assert_int_equal(e.ev.num_args, 7);
  assert_true(fxtf_str_is(&e.ev.args[0].name, "prev_comm"));
  assert_int_equal(e.ev.args[0].type, FXT_ARG_STRING);
  assert_int_equal(e.ev.args[0].value.str.len, 3);
  assert_int_equal(e.ev.args[1].type, FXT_ARG_INT32);
  assert_int_equal(e.ev.args[1].value.i32, 100);
  assert_int_equal(e.ev.args[3].type, FXT_ARG_INT64); /* long prev_state */
  assert_int_equal(e.ev.args[3].value.i64, 1);
  assert_non_null(e.desc);
  assert_int_equal(e.desc->nfields, 7);
  assert_int_equal(e.thread->tid, 100);
  assert_true(fxtf_text_is(e.thread->comm, "app"));
  assert_int_equal(fxtf_event_at(ff, 1, &e, ferr, sizeof ferr), 0);
  assert_int_equal(e.ns, 1200);
  assert_int_equal(e.cpu, 1);
  assert_true(fxtf_text_is(e.thread->comm, "worker"));
  assert_int_equal(fxtf_event_at(ff, 3, &e, ferr, sizeof ferr), 0);
  assert_true(fxtf_text_is(e.thread->comm, "swapper/0")); /* named from the records */
  struct fxtf_totals t;
  fxtf_totals(ff, &t);
  assert_int_equal(t.lost, 5);
  fxtf_close(ff);
  free(s.buf);
}

/* Where the losses go: each before the first event after it on its CPU, as the kernel's
 * trace file prints "CPU:N [LOST n EVENTS]" (report), not before the next event of thread 0,
 * whose records they are (the idle task's, on CPU 0 at 1500); the page without a count as
 * "[LOST EVENTS]"; CPUSTAT's 3 beyond the page at the end, no event of CPU 1 following. */
static void test_losses_before_their_events(void **state) {
  (void)state;
  struct mem_sink s = {0};
  struct fxt_td_fxt_stats st;
  convert(build_with(&g_file, true), &s, &st);
  assert_int_equal(st.lost_pages, 2);
  assert_int_equal(st.lost_known, 2);
  assert_int_equal(st.lost_unknown, 1);
  assert_int_equal(st.lost_cpustat, 3);
  struct fxtf_file *ff = load_events(&s, 5);
  static const struct want_event want[] = {
      {1000, 100, 0, ""},
      {1200, 101, 1, "CPU:1 [LOST 2 EVENTS]\n"},
      {1500, 0, 0, ""},
      {1510, 0, 0, ""},
      {2000, 0, 0, "CPU:0 [LOST EVENTS]\n"},
  };
  expect_events(ff, want, 5);
  static const struct fxtf_cpu_loss trailing[] = {{0, 1, 3, false}};
  expect_trailing_cpu_losses(ff, trailing, 1);
  fxtf_close(ff);
  free(s.buf);
}

/* Every cut of the file fails (the CPU table names bytes up to the end), naming an offset
 * inside what is left. */
static void test_truncations(void **state) {
  (void)state;
  size_t len = build(&g_file);
  for (size_t cut = 0; cut < len; cut++) {
    struct mem_sink s = {0};
    char err[FXT_TD_ERR_SIZE] = "";
    int rc = fxt_td_to_fxt(g_file.b, cut, mem_sink_write, &s, NULL, err, sizeof err);
    free(s.buf);
    assert_int_equal(rc, FXT_EBADMSG);
    char *end;
    unsigned long long at = strtoull(err + 7, &end, 10);
    assert_memory_equal(err, "offset ", 7);
    assert_true(at <= cut);
  }
}

static void test_refused(void **state) {
  (void)state;
  size_t len = build(&g_file);
  char err[FXT_TD_ERR_SIZE];
  struct fxt_td_file *f;
  g_file.b[10] = '8'; /* version "8" */
  assert_int_equal(fxt_td_open(g_file.b, len, &f, err, sizeof err), FXT_ENOSYS);
  assert_string_equal(err, "offset 10: trace.dat version '8' (this reader reads 6 and 7)");
  g_file.b[10] = '7'; /* a v7 header with zstd compression */
  static const char zstd[] = "zstd\0001.5.4";
  memcpy(g_file.b + 18, zstd, sizeof zstd);
  assert_int_equal(fxt_td_open(g_file.b, len, &f, err, sizeof err), FXT_ENOSYS);
  assert_true(strncmp(err,
                      "offset 18: compressed trace.dat (zstd 1.5.4): fxtrace reads "
                      "uncompressed files",
                      73) == 0);
  g_file.b[0] = 0;
  assert_int_equal(fxt_td_open(g_file.b, len, &f, err, sizeof err), FXT_EBADMSG);
}

/* Two formats named demo:run (fxtrace's own trace.dat writer makes one per ad-hoc variant of
 * a name), one with a double field (its writer's type for doubles): one untyped description
 * for the name, written before either's first event; the double read as a double. */
static void test_shared_names_and_doubles(void **state) {
  (void)state;
  static const char k_run_b[] = "name: run\nID: 900\n" FXT_TD_COMMON_FIELDS "print fmt: \"B\"\n";
  static const char k_run_e[] = "name: run\nID: 901\n" FXT_TD_COMMON_FIELDS
                                "\tfield:double v;\toffset:8;\tsize:8;\tsigned:1;\n\n"
                                "print fmt: \"E v=%g\", REC->v\n";
  struct buf *o = &g_file;
  memset(o, 0, sizeof *o);
  put(o, "\x17\x08\x44tracing6", 11);
  le(o, 0, 1), le(o, 0, 1), le(o, 8, 1), le(o, PAGE, 4);
  str(o, "header_page"), text8(o, k_header_page);
  str(o, "header_event"), text8(o, "");
  le(o, 0, 4), le(o, 1, 4), str(o, "demo"), le(o, 2, 4);
  text8(o, k_run_b), text8(o, k_run_e);
  le(o, 0, 4), le(o, 0, 4), text8(o, "7 demo\n"), le(o, 1, 4);
  put(o, "flyrecord", 10);
  size_t data = (o->len + 16 + PAGE - 1) / PAGE * PAGE;
  le(o, data, 8), le(o, PAGE, 8);
  o->len = data;
  le(o, 50, 8), le(o, 12 + 20, 8);
  le(o, 2, 4), le(o, 900, 2), le(o, 0, 2), le(o, 7, 4); /* run B at 50 */
  double v = 0.25;
  uint64_t bits;
  memcpy(&bits, &v, 8);
  le(o, 9u << 5 | 4, 4), le(o, 901, 2), le(o, 0, 2), le(o, 7, 4), le(o, bits, 8); /* E at 59 */
  o->len = data + PAGE;
  struct mem_sink s = {0};
  char err[FXT_TD_ERR_SIZE] = "";
  assert_int_equal(fxt_td_to_fxt(o->b, o->len, mem_sink_write, &s, NULL, err, sizeof err), 0);
  struct fxtf_file *ff = load_events(&s, 2);
  char ferr[FXTF_ERR_SIZE];
  struct fxtf_event e;
  assert_int_equal(fxtf_event_at(ff, 1, &e, ferr, sizeof ferr), 0);
  assert_int_equal(e.ns, 59);
  assert_int_equal(e.ev.num_args, 1);
  assert_int_equal(e.ev.args[0].type, FXT_ARG_DOUBLE);
  assert_true(e.ev.args[0].value.f64 == 0.25);
  assert_non_null(e.desc);
  assert_int_equal(e.desc->kind, FXT_TP_INSTANT); /* one untyped description of demo:run */
  assert_int_equal(e.desc->nfields, 0);
  assert_int_equal(fxtf_event_at(ff, 0, &e, ferr, sizeof ferr), 0);
  assert_true(e.desc != NULL && e.desc->offset < e.offset);
  fxtf_close(ff);
  free(s.buf);
}

FXT_TEST_MAIN(
    cmocka_unit_test(test_reader), cmocka_unit_test(test_shared_names_and_doubles),
    cmocka_unit_test(test_conversion), cmocka_unit_test(test_losses_before_their_events),
    cmocka_unit_test(test_truncations), cmocka_unit_test(test_refused))
