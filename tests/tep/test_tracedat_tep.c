/* tests/tep/test_tracedat_tep.c - the trace.dat writer (src/formats/tracedat_write.h) against
 * libtraceevent, the library trace-cmd and KernelShark read it with: the header_page and every
 * generated `format` parse (no event marked failed), the pages decode with libtraceevent's own
 * kbuffer (times, sizes, missed events), each record is found by its common_type, its fields
 * read back to the values the FXT events carried, and tep_print_event prints what
 * `fxtrace report` prints for it (written here by hand).
 *
 * Built only when pkg-config finds libtraceevent (tests/CMakeLists.txt); the FXT input is
 * built record by record with the codec's encoders (tests/unit/fxt_build.h).
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

#include <event-parse.h>
#include <kbuffer.h>
#include <trace-seq.h>

#include <fxtrace/tracepoint.h>

#include "base/text.h"
#include "formats/tracedat_write.h"

#define FXB_BYTES (1u << 20)
#include "fxt_build.h"
#include "tracedat_test.h"

enum { S_DEMO = 32, S_ALL, S_INTS, S_U, S_S, S_NAME, S_MAC, S_D, S_P, S_OK, S_SEQ, S_A, S_B,
       S_C, S_E, S_Q, S_DEPTH, S_RATIO, S_IO, S_REQ, S_MSG, S_RUN, S_PRINTK, S_FMT, S_A0, S_A1,
       S_FTRACE, S_PRINT, S_BUF, S_MICRO, S_ODD };


/* What each event must print as (fxtrace report's text, by hand), with its name. */
struct want {
  const char *name, *info;
  uint64_t ns;
  int missed;
};

static const struct want k_want[] = {
    {"all", "u=200 s=-2 name=ab  | mac=0a0b0c d=0.25 n=0x7f00 ok=1 seq=-3 h=<?>", 1000, 0},
    {"ints", "a=-128 b=-5 c=65535 e=ffffffff n=0x0", 1001, 0},
    {"q", "id=3 depth=4 ratio=0.5", 1002, 0},
    {"io", "dur=2.500us", 1003, 0},
    {"req", "async_begin id=0x2a x-y=-1 nil=", 1004, 0},
    {"msg", "flow_step id=0xabc", 1005, 0},
    {"run", "B seq=7", 1006, 0},
    {"run", "E", 1007, 0},
    {"printk", "got -5, 2.2%", 1008, 0},
    {"print", "hello \"marker\"", 1009, 0},
    {"micro", "\xc2\xb5s=5", 1010, 0},
    {"odd", "common_pid=1 a b=2", 1010, 0},
    /* 3 records dropped before it: a page of its own */
    {"ints", "a=1 b=2 c=3 e=4 n=0x1", 1011 + (UINT64_C(1) << 27), 3},
    /* 2^27 + 5 ns later: a TIME_EXTEND before it */
    {"run", "E", 1016 + (UINT64_C(2) << 27), 0},
};
#define NWANT (sizeof k_want / sizeof k_want[0])

static void build(void) {
  static const uint16_t all_fields[8][3] = {
      {S_U, FXT_TYPE_U8, 0},     {S_S, FXT_TYPE_S16, 0}, {S_NAME, FXT_TYPE_STR, 16},
      {S_MAC, FXT_TYPE_BYTES, 3}, {S_D, FXT_TYPE_DOUBLE, 0}, {S_P, FXT_TYPE_PTR, 0},
      {S_OK, FXT_TYPE_BOOL, 0},  {S_SEQ, FXT_TYPE_S64, 0},
  };
  static const uint16_t int_fields[5][3] = {
      {S_A, FXT_TYPE_S8, 0}, {S_B, FXT_TYPE_S32, 0}, {S_C, FXT_TYPE_U16, 0},
      {S_E, FXT_TYPE_S16, 0}, {S_P, FXT_TYPE_PTR, 0},
  };
  static const uint16_t buf_field[1][3] = {{S_BUF, FXT_TYPE_STR, 1024}};
  static const uint16_t micro_field[1][3] = {{S_A0, FXT_TYPE_U32, 0}};
  struct fxt_thread_ref t = fxt_thread_index(1);
  file_start(4242, 1000000000);
  string(S_DEMO, "demo"), string(S_ALL, "all"), string(S_INTS, "ints"), string(S_U, "u");
  string(S_S, "s"), string(S_NAME, "name"), string(S_MAC, "mac"), string(S_D, "d");
  string(S_P, "n"), string(S_OK, "ok"), string(S_SEQ, "seq"), string(S_A, "a");
  string(S_B, "b"), string(S_C, "c"), string(S_E, "e"), string(S_Q, "q");
  string(S_DEPTH, "depth"), string(S_RATIO, "ratio"), string(S_IO, "io"), string(S_REQ, "req");
  string(S_MSG, "msg"), string(S_RUN, "run"), string(S_PRINTK, "printk");
  string(S_FMT, "got %d, %.1f%%\n"), string(S_A0, "a0"), string(S_A1, "a1");
  string(S_FTRACE, "ftrace"), string(S_PRINT, "print"), string(S_BUF, "buf");
  string(S_MICRO, "micro"), string(S_ODD, "odd");
  desc(7, S_DEMO, S_ALL, FXT_TP_TYPED,
       "u=%u s=%d name=%-4s| mac=%s d=%.2f n=%p ok=%d seq=%lld h=%hhx", 8, all_fields);
  desc(8, S_DEMO, S_INTS, FXT_TP_TYPED, "a=%d b=%lld c=%hu e=%x n=%p", 5, int_fields);
  desc(9, S_FTRACE, S_PRINT, FXT_TP_TYPED, "%s", 1, buf_field);
  desc(10, S_DEMO, S_MICRO, FXT_TP_TYPED, "\xc2\xb5s=%u", 1, micro_field);
  thread(1, 4242, 4242);
  kobj(FXT_KOBJ_THREAD, 4242, "demo-app", 4242);

  static const struct tdt_refs names = {S_DEMO, S_ALL, S_U, S_S, S_NAME, S_MAC, S_D, S_P, S_OK,
                                        S_SEQ, S_Q, S_DEPTH, S_RATIO, S_IO, S_REQ, S_PRINTK,
                                        S_FMT, S_A0, S_A1};
  put_all(&names, t, 1000);
  struct fxt_event e = event(FXT_EVENT_INSTANT, t, sref(S_DEMO), sref(S_INTS), 1001);
  arg(&e, FXT_ARG_INT32, sref(S_A))->value.i32 = -128;
  arg(&e, FXT_ARG_INT32, sref(S_B))->value.i32 = -5;
  arg(&e, FXT_ARG_UINT32, sref(S_C))->value.u32 = 65535;
  arg(&e, FXT_ARG_INT32, sref(S_E))->value.i32 = -1;
  arg(&e, FXT_ARG_POINTER, sref(S_P))->value.pointer = 0;
  put(&e);
  put_q_io_req(&names, t, 1002);
  e = event(FXT_EVENT_FLOW_STEP, t, sref(S_DEMO), sref(S_MSG), 1005);
  e.trailer = 0xabc;
  put(&e);
  e = event(FXT_EVENT_DURATION_BEGIN, t, sref(S_DEMO), sref(S_RUN), 1006);
  arg(&e, FXT_ARG_UINT64, sref(S_SEQ))->value.u64 = 7;
  put(&e);
  e = event(FXT_EVENT_DURATION_END, t, sref(S_DEMO), sref(S_RUN), 1007);
  put(&e);
  put_printk(&names, t, 1008);
  e = event(FXT_EVENT_INSTANT, t, sref(S_FTRACE), sref(S_PRINT), 1009);
  arg(&e, FXT_ARG_STRING, sref(S_BUF))->value.str = inl("hello \"marker\"");
  put(&e);
  /* typed, with bytes no print format can hold literally; then ad hoc names that collide
   * with a common field or are no identifiers */
  e = event(FXT_EVENT_INSTANT, t, sref(S_DEMO), sref(S_MICRO), 1010);
  arg(&e, FXT_ARG_UINT32, sref(S_A0))->value.u32 = 5;
  put(&e);
  e = event(FXT_EVENT_INSTANT, t, sref(S_DEMO), sref(S_ODD), 1010);
  arg(&e, FXT_ARG_UINT32, inl("common_pid"))->value.u32 = 1;
  arg(&e, FXT_ARG_UINT32, inl("a b"))->value.u32 = 2;
  put(&e);
  loss(t, FXT_STR_DROP_STATS, 1011, 3);
  e = event(FXT_EVENT_INSTANT, t, sref(S_DEMO), sref(S_INTS), 1011 + (UINT64_C(1) << 27));
  arg(&e, FXT_ARG_INT32, sref(S_A))->value.i32 = 1;
  arg(&e, FXT_ARG_INT32, sref(S_B))->value.i32 = 2;
  arg(&e, FXT_ARG_UINT32, sref(S_C))->value.u32 = 3;
  arg(&e, FXT_ARG_INT32, sref(S_E))->value.i32 = 4;
  arg(&e, FXT_ARG_POINTER, sref(S_P))->value.pointer = 1;
  put(&e);
  e = event(FXT_EVENT_DURATION_END, t, sref(S_DEMO), sref(S_RUN), 1016 + (UINT64_C(2) << 27));
  put(&e);
}

/* ---- the test ------------------------------------------------------------------------------ */

struct ctx {
  struct sink s;
  struct dat d;
  struct tep_handle *tep;
};

static int setup(void **state) {
  static struct ctx c;
  build();
  memset(&c.s, 0, sizeof c.s);
  fxt_tbuf_init(&c.s.out);
  struct fxt_tracedat_options o = {.write = sink_write, .write_ctx = &c.s, .uname = "u"};
  char err[256];
  if (fxt_tracedat_convert(g_buf, g_len, &o, NULL, err, sizeof err) != 0)
    fail_msg("convert: %s", err);
  walk(&c.d, &c.s.out);
  c.tep = tep_alloc();
  assert_non_null(c.tep);
  tep_set_file_bigendian(c.tep, TEP_LITTLE_ENDIAN);
  tep_set_local_bigendian(c.tep, TEP_LITTLE_ENDIAN);
  tep_set_long_size(c.tep, 8);
  tep_set_page_size(c.tep, 4096);
  *state = &c;
  return 0;
}

static int teardown(void **state) {
  struct ctx *c = *state;
  tep_free(c->tep);
  fxt_tbuf_free(&c->s.out);
  return 0;
}

/* The header page and every format parse; the names and systems are the expected ones. */
static void formats_parse(void **state) {
  struct ctx *c = *state;
  /* header_page follows "header_page\0" + u64 size, right after the 18-byte initial part */
  char *hp = c->s.out.data + 18 + 12 + 8;
  assert_int_equal(tep_parse_header_page(c->tep, hp, 205, 8), 0);
  assert_int_equal(tep_get_header_page_size(c->tep), 8);      /* commit: a long of 8 */
  assert_int_equal(tep_get_header_timestamp_size(c->tep), 8); /* timestamp: u64 */
  assert_int_equal(c->d.nformats, 12);
  for (uint32_t i = 0; i < c->d.nformats; i++) {
    struct tep_event *ev = NULL;
    enum tep_errno rc = tep_parse_format(c->tep, &ev, c->d.formats[i], c->d.format_len[i],
                                         c->d.fmt_system[i]);
    if (rc != 0 || ev == NULL || (ev->flags & TEP_EVENT_FL_FAILED))
      fail_msg("format %u does not parse (%d):\n%.*s", i, (int)rc, (int)c->d.format_len[i],
               c->d.formats[i]);
  }
  assert_int_equal(tep_get_events_count(c->tep), 12);
  assert_non_null(tep_find_event_by_name(c->tep, "demo", "all"));
  assert_non_null(tep_find_event_by_name(c->tep, "printk", "printk"));
  assert_non_null(tep_find_event_by_name(c->tep, "ftrace", "print"));
  assert_int_equal(tep_find_event_by_name(c->tep, "demo", "all")->id, 7); /* its own id */
  assert_int_equal(tep_parse_saved_cmdlines(c->tep, "4242 demo-app\n"), 0);
}

static unsigned long long field(struct tep_event *ev, struct tep_record *r, const char *name) {
  struct tep_format_field *f = tep_find_field(ev, name);
  unsigned long long v = 0;
  if (f == NULL || tep_read_number_field(f, r->data, &v) != 0)
    fail_msg("%s: no number field %s", ev->name, name);
  return v;
}

static const char *str_field(struct tep_event *ev, struct tep_record *r, const char *name,
                             int *len) {
  struct trace_seq s;
  trace_seq_init(&s);
  const char *p = tep_get_field_raw(&s, ev, name, r, len, 1);
  trace_seq_destroy(&s);
  if (p == NULL)
    fail_msg("%s: no field %s", ev->name, name);
  return p;
}

/* The pages through kbuffer; every record through libtraceevent. */
static void records_decode(void **state) {
  struct ctx *c = *state;
  formats_parse(state);
  assert_int_equal(c->d.cpus, 1);
  struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
  assert_non_null(kb);
  size_t n = 0;
  for (uint64_t at = 0; at < c->d.cpu_size[0]; at += 4096) {
    unsigned char *page = (unsigned char *)c->s.out.data + c->d.cpu_offset[0] + at;
    assert_int_equal(kbuffer_load_subbuffer(kb, page), 0);
    unsigned long long ts;
    for (void *data = kbuffer_read_event(kb, &ts); data != NULL;
         data = kbuffer_next_event(kb, &ts), n++) {
      assert_true(n < NWANT);
      const struct want *w = &k_want[n];
      assert_int_equal(ts, w->ns);
      assert_int_equal(kbuffer_missed_events(kb), w->missed);
      struct tep_record rec = {.ts = ts, .cpu = 0, .data = data,
                               .size = kbuffer_event_size(kb)};
      struct tep_event *ev = tep_find_event_by_record(c->tep, &rec);
      assert_non_null(ev);
      assert_string_equal(ev->name, w->name);
      assert_int_equal(tep_data_pid(c->tep, &rec), 4242);
      assert_int_equal(tep_data_type(c->tep, &rec), ev->id);
      struct trace_seq s;
      trace_seq_init(&s);
      tep_print_event(c->tep, &s, &rec, "%s %s %d: %s", TEP_PRINT_COMM, TEP_PRINT_NAME,
                      TEP_PRINT_PID, TEP_PRINT_INFO);
      trace_seq_terminate(&s);
      char line[512];
      snprintf(line, sizeof line, "demo-app %s 4242: %s", w->name, w->info);
      assert_string_equal(s.buffer, line);
      trace_seq_destroy(&s);
      int len;
      if (n == 0) { /* the values as recorded, field by field */
        assert_int_equal(field(ev, &rec, "u"), 200);
        assert_int_equal(field(ev, &rec, "s"), 0xfffe); /* libtraceevent reads 2 bytes */
        assert_true(tep_find_field(ev, "s")->flags & TEP_FIELD_IS_SIGNED);
        assert_string_equal(str_field(ev, &rec, "name", &len), "ab");
        assert_int_equal(len, 3);
        assert_memory_equal(str_field(ev, &rec, "mac", &len), "\x0a\x0b\x0c", 3);
        assert_int_equal(len, 3);
        double d;
        unsigned long long bits = field(ev, &rec, "d");
        memcpy(&d, &bits, sizeof d);
        assert_true(d == 0.25);
        assert_int_equal(field(ev, &rec, "n"), 0x7f00);
        assert_int_equal(field(ev, &rec, "ok"), 1);
        assert_int_equal(field(ev, &rec, "seq"), (unsigned long long)-3);
        assert_string_equal(str_field(ev, &rec, "d_str", &len), "0.25");
      } else if (n == 1) {
        assert_int_equal(field(ev, &rec, "a"), 0x80);
        assert_int_equal(field(ev, &rec, "b"), 0xfffffffb);
        assert_int_equal(field(ev, &rec, "c"), 65535);
      } else if (n == 2) {
        assert_int_equal(field(ev, &rec, "id"), 3);
        assert_int_equal(field(ev, &rec, "depth"), 4);
      } else if (n == 3) {
        assert_int_equal(field(ev, &rec, "dur_ns"), 2500);
      } else if (n == 4) {
        assert_int_equal(field(ev, &rec, "id"), 0x2a);
        assert_int_equal(field(ev, &rec, "x_y"), 0xffffffff);
      } else if (n == 9) {
        assert_string_equal(str_field(ev, &rec, "buf", &len), "hello \"marker\"");
      } else if (n == 11) {
        assert_int_equal(field(ev, &rec, "common_pid_2"), 1);
        assert_int_equal(field(ev, &rec, "a_b"), 2);
        unsigned long long pid;
        struct trace_seq s2;
        trace_seq_init(&s2);
        assert_int_equal(tep_get_common_field_val(&s2, ev, "common_pid", &rec, &pid, 1), 0);
        trace_seq_destroy(&s2);
        assert_int_equal(pid, 4242);
      }
    }
  }
  assert_int_equal(n, NWANT);
  kbuffer_free(kb);
}

FXT_TEST_MAIN(
    FXT_TEST_ST(formats_parse), FXT_TEST_ST(records_decode))
