/* tests/unit/test_tracedat.c - fxtrace FXT files as trace.dat (src/formats/tracedat_write.h), on
 * FXT files built here record by record with the codec's encoders: the file's structure item by
 * item (spec tracedat.md §1, read back by a small v6 walker written here), the formats and
 * record bytes of typed, ad hoc and printk events, events placed on their thread's CPU in time
 * order, lost records (a thread's, a CPU's) as pages' missed counts and as CPU stats, events
 * too big for a page, many CPUs, the external sort spilling runs (same bytes as without), and
 * errors: a bad input writes nothing, a failing writer stops the conversion. Expected texts
 * and bytes are written by hand (worked out in the comments), never produced by the code
 * under test.
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

#include <fxtrace/tracepoint.h>

#include "base/text.h"
#include "formats/tracedat_write.h"
#include "formats/tracedat_write_sort.h"

#define FXB_BYTES (4u << 20)
#include "fxt_build.h"
#include "tracedat_test.h"

/* ---- building files ------------------------------------------------------------------------- */

enum { S_DEMO = 32, S_TICK, S_SEQ, S_VAL, S_Q, S_DEPTH, S_RATIO, S_IO, S_REQ, S_PRINTK, S_FMT,
       S_A0, S_A1, S_ALL, S_U8, S_S16, S_NAME, S_MAC, S_PTR, S_OK, S_DBL, S_BIG, S_TEXT };


static const uint16_t k_tick_fields[2][3] = {{S_SEQ, FXT_TYPE_U64, 0}, {S_VAL, FXT_TYPE_U32, 0}};

/* demo:tick (id 1000) of thread 4242 "demo-app" (ref 1) on CPU 1, as in the spec's worked
 * example (tracedat.md §4.2): ticks are ns (1e9 ticks/s, no clock sync). */
static void head_of_file(void) {
  file_start(4242, 1000000000);
  string(S_DEMO, "demo"), string(S_TICK, "tick"), string(S_SEQ, "seq"), string(S_VAL, "val");
  kobj(FXT_KOBJ_PROCESS, 4242, "demo-app", 0);
  desc(1000, S_DEMO, S_TICK, FXT_TP_TYPED, "seq=%llu val=%u", 2, k_tick_fields);
  thread(1, 4242, 4242);
  kobj(FXT_KOBJ_THREAD, 4242, "demo-app", 4242);
}

/* An instant event of demo named name (a string index) with the fields seq and val. */
static void seq_val_event(uint16_t name, struct fxt_thread_ref th, uint64_t ts, uint64_t seq,
                          uint32_t val) {
  struct fxt_event e = event(FXT_EVENT_INSTANT, th, sref(S_DEMO), sref(name), ts);
  if (seq % 2 == 0) /* as fxtrace writes a u64 that fits in 32 bits (emit.h fxt_field_wide) */
    arg(&e, FXT_ARG_UINT32, sref(S_SEQ))->value.u32 = (uint32_t)seq;
  else
    arg(&e, FXT_ARG_UINT64, sref(S_SEQ))->value.u64 = seq;
  arg(&e, FXT_ARG_UINT32, sref(S_VAL))->value.u32 = val;
  put(&e);
}

static void tick(struct fxt_thread_ref th, uint64_t ts, uint64_t seq, uint32_t val) {
  seq_val_event(S_TICK, th, ts, seq, val);
}

/* CPU cpu's stats (of d, walked) say "dropped events: dropped" and "read events: read". */
static void expect_dropped_read(const struct dat *d, uint32_t cpu, unsigned dropped,
                                unsigned read) {
  char want[96];
  snprintf(want, sizeof want, "\ndropped events: %u\nread events: %u\n", dropped, read);
  if (cpu >= d->ncpustat || strstr(d->cpustat[cpu], want) == NULL)
    fail_msg("CPU %u's stats do not say%s", (unsigned)cpu, want);
}

/* ---- converting ------------------------------------------------------------------------------ */

/* Converts g_buf with the options *o, written to the sink s (emptied first; its write number
 * fail_at fails, 0: none): o's writer is set to it. err: 256 bytes. */
static int convert_opts(struct sink *s, size_t fail_at, struct fxt_tracedat_options *o,
                        struct fxt_tracedat_stats *st, char *err) {
  memset(s, 0, sizeof *s);
  fxt_tbuf_init(&s->out);
  s->fail_at_call = fail_at;
  o->write = sink_write;
  o->write_ctx = s;
  return fxt_tracedat_convert(g_buf, g_len, o, st, err, 256);
}

static int convert(struct sink *s, size_t run_bytes, struct fxt_tracedat_stats *st, char *err) {
  struct fxt_tracedat_options o = {.uname = "Linux t 6.1 x", .run_bytes = run_bytes};
  return convert_opts(s, 0, &o, st, err);
}

/* Converts g_buf: it must succeed. */
static void convert_ok(struct sink *s, struct fxt_tracedat_stats *st) {
  char err[256];
  int rc = convert(s, 0, st, err);
  if (rc != 0)
    fail_msg("convert: %d %s", rc, err);
}

/* Converts g_buf (must succeed) and walks the output. */
static void convert_walk(struct sink *s, struct fxt_tracedat_stats *st, struct dat *d) {
  convert_ok(s, st);
  walk(d, &s->out);
}

/* ---- the whole file ------------------------------------------------------------------------ */

static void whole_file(void **state) {
  (void)state;
  head_of_file();
  cpu(fxt_thread_index(1), 1000124956000, 1);
  tick(fxt_thread_index(1), 1000124956789, 1, 100);
  tick(fxt_thread_index(1), 1000124956789 + 1500001, 2, 107);
  struct sink s;
  struct fxt_tracedat_stats st;
  struct dat d;
  convert_walk(&s, &st, &d);
  assert_int_equal(d.nsystems, 1);
  assert_string_equal(d.fmt_system[0], "demo");
  assert_int_equal(d.nformats, 1);
  /* The kernel's layout (spec ftrace-text.md §3): common fields, blank line, fields as a C
   * struct (u64 at 8, u32 at 16), blank line, the print format. */
  static const char want_format[] =
      "name: tick\nID: 1000\nformat:\n"
      "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
      "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
      "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
      "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
      "\n"
      "\tfield:u64 seq;\toffset:8;\tsize:8;\tsigned:0;\n"
      "\tfield:u32 val;\toffset:16;\tsize:4;\tsigned:0;\n"
      "\n"
      "print fmt: \"seq=%llu val=%u\", REC->seq, REC->val\n";
  assert_int_equal(d.format_len[0], strlen(want_format));
  assert_memory_equal(d.formats[0], want_format, strlen(want_format));
  assert_int_equal(d.cmdlines_len, 14);
  assert_memory_equal(d.cmdlines, "4242 demo-app\n", 14);
  assert_int_equal(d.cpus, 2); /* CPU 0 (empty) and CPU 1 */
  assert_int_equal(d.option_len[4], 8);
  assert_memory_equal(d.options[4], "[mono]\n", 8); /* NUL included */
  assert_string_equal(d.options[5], "Linux t 6.1 x");
  assert_string_equal(d.options[9], "fxtrace 0.1.0");
  assert_int_equal(d.option_len[8], 4);
  assert_memory_equal(d.options[8], "\x02\0\0\0", 4);
  assert_int_equal(d.ncpustat, 2);
  /* now ts: no clock sync, so 0 */
  assert_string_equal(d.cpustat[0], "CPU: 0\nentries: 0\noverrun: 0\ncommit overrun: 0\n"
                                    "bytes: 0\noldest event ts:     0.000000\n"
                                    "now ts:     0.000000\ndropped events: 0\nread events: 0\n");
  assert_string_equal(d.cpustat[1], "CPU: 1\nentries: 0\noverrun: 0\ncommit overrun: 0\n"
                                    "bytes: 0\noldest event ts:  1000.124957\n"
                                    "now ts:     0.000000\ndropped events: 0\nread events: 2\n");
  assert_int_equal(d.cpu_size[0], 0);
  assert_int_equal(d.cpu_offset[1], d.pos); /* the data follows the padding */
  assert_int_equal(d.cpu_size[1], 4096);
  assert_int_equal(s.out.len, d.pos + 4096);
  static const unsigned char want_page[16 + 56] = {
      0x75, 0xc0, 0x17, 0xdc, 0xe8, 0, 0, 0, /* 1000124956789 */
      56, 0, 0, 0, 0, 0, 0, 0,               /* commit: 2 x 28 */
      0x06, 0, 0, 0,                         /* type_len 6 (24 bytes), delta 0 */
      0xe8, 0x03, 0, 0, 0x92, 0x10, 0, 0,    /* common_type 1000, flags, preempt, pid 4242 */
      1, 0, 0, 0, 0, 0, 0, 0,                /* seq */
      100, 0, 0, 0, 0, 0, 0, 0,              /* val, 4 bytes of struct padding */
      0x26, 0x6c, 0xdc, 0x02,                /* 6 | 1500001 << 5 */
      0xe8, 0x03, 0, 0, 0x92, 0x10, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 107, 0, 0, 0, 0, 0, 0, 0,
  };
  assert_memory_equal(s.out.data + d.cpu_offset[1], want_page, sizeof want_page);
  assert_int_equal(st.events, 2);
  assert_int_equal(st.formats, 1); /* seq 1 as uint64, seq 2 as uint32: both the u64 field */
  assert_int_equal(st.cpus, 2);
  assert_int_equal(st.cmdlines, 1);
  assert_int_equal(st.pages, 1);
  assert_int_equal(st.bytes, s.out.len);
  assert_int_equal(st.records, g_records);
  fxt_tbuf_free(&s.out);
}

/* ---- formats and records of every kind ---------------------------------------------------- */

struct tdat_all {
  char text[64 * 1024]; /* every format, one after the other */
};

static void all_formats(const struct fxt_tbuf *out, struct tdat_all *all) {
  struct dat d;
  walk(&d, out);
  all->text[0] = '\0';
  for (uint32_t i = 0; i < d.nformats; i++) {
    strncat(all->text, d.formats[i], d.format_len[i]);
    strcat(all->text, "\x01"); /* a separator no format has */
  }
}

static const char k_common[] =
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";

static void assert_has(const struct tdat_all *all, const char *name, uint32_t id,
                       const char *fields_and_print) {
  char want[4096];
  snprintf(want, sizeof want, "name: %s\nID: %u\nformat:\n%s%s\x01", name, id, k_common,
           fields_and_print);
  if (strstr(all->text, want) == NULL)
    fail_msg("no format\n%s\nin\n%s", want, all->text);
}

/* The fields of demo:all from the double on, and its print format (both variants). */
#define ALL_TAIL                                                                            \
  "\tfield:double d;\toffset:24;\tsize:8;\tsigned:1;\n"                                      \
  "\tfield:void * p;\toffset:32;\tsize:8;\tsigned:0;\n"                                      \
  "\tfield:bool ok;\toffset:40;\tsize:1;\tsigned:0;\n"                                       \
  "\tfield:s64 seq;\toffset:48;\tsize:8;\tsigned:1;\n"                                       \
  "\tfield:__data_loc char[] d_str;\toffset:56;\tsize:4;\tsigned:0;\n"                       \
  "\tfield:__data_loc char[] text;\toffset:60;\tsize:4;\tsigned:0;\n"                        \
  "\n"                                                                                      \
  "print fmt: \"u=%u s=%d name=%-4s| mac=%s d=%s p=0x%llx ok=%d seq=%lld h=%s\", "            \
  "REC->u, REC->s | -(REC->s & 0x8000), __get_str(name), __print_hex_str(REC->mac, 3), "      \
  "__get_str(d_str), REC->p, REC->ok, REC->seq, __get_str(text)\n"

static void every_kind(void **state) {
  (void)state;
  static struct tdat_all all;
  static const uint16_t all_fields[8][3] = {
      {S_U8, FXT_TYPE_U8, 0},      {S_S16, FXT_TYPE_S16, 0},   {S_NAME, FXT_TYPE_STR, 16},
      {S_MAC, FXT_TYPE_BYTES, 3},  {S_DBL, FXT_TYPE_DOUBLE, 0}, {S_PTR, FXT_TYPE_PTR, 0},
      {S_OK, FXT_TYPE_BOOL, 0},    {S_SEQ, FXT_TYPE_S64, 0},
  };
  head_of_file();
  string(S_Q, "q"), string(S_DEPTH, "depth"), string(S_RATIO, "ratio"), string(S_IO, "io");
  string(S_REQ, "req"), string(S_PRINTK, "printk"), string(S_FMT, "got %d, %.1f%%\n");
  string(S_A0, "a0"), string(S_A1, "a1"), string(S_ALL, "all"), string(S_U8, "u");
  string(S_S16, "s"), string(S_NAME, "name"), string(S_MAC, "mac"), string(S_PTR, "p");
  string(S_OK, "ok"), string(S_DBL, "d");
  desc(7, S_DEMO, S_ALL, FXT_TP_TYPED,
       "u=%u s=%d name=%-4s| mac=%s d=%.2f p=%p ok=%d seq=%lld h=%hhx", 8, all_fields);
  struct fxt_thread_ref t = fxt_thread_index(1);
  static const struct tdt_refs names = {S_DEMO, S_ALL, S_U8, S_S16, S_NAME, S_MAC, S_DBL, S_PTR,
                                        S_OK, S_SEQ, S_Q, S_DEPTH, S_RATIO, S_IO, S_REQ, S_PRINTK,
                                        S_FMT, S_A0, S_A1};
  struct fxt_event e = put_all(&names, t, 5000);
  /* the same tracepoint with a u8 of 300 (not what a u8 holds): another variant */
  e.args[0].value.u32 = 300;
  e.timestamp = 5001;
  put(&e);
  put_q_io_req(&names, t, 5002);
  put_printk(&names, t, 5005);

  struct sink s;
  struct fxt_tracedat_stats st;
  convert_ok(&s, &st);
  assert_int_equal(st.formats, 6); /* all (twice), q, io, req, printk; tick: no event, none */
  all_formats(&s.out, &all);
  /* Typed: u8 at 8, s16 at 10, str at 12, mac[3] at 16, double at 24, ptr at 32, bool at 40,
   * s64 at 48, then the rendered double (%.2f) at 56 and, at 60, the rendered %hhx, which has
   * no argument left (text.c prints "<?>"): 64 bytes. s16 with %d is sign-extended; %p prints
   * 0x%llx; bytes go through __print_hex_str. */
  assert_has(&all, "all", 7,
             "\tfield:u8 u;\toffset:8;\tsize:1;\tsigned:0;\n"
             "\tfield:s16 s;\toffset:10;\tsize:2;\tsigned:1;\n"
             "\tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;\n"
             "\tfield:u8 mac[3];\toffset:16;\tsize:3;\tsigned:0;\n"
             ALL_TAIL);
  /* The u8 of 300 is stored as the u32 it was recorded as: another ID, from the top (32767:
   * KernelShark keeps IDs in an int16_t). */
  assert_has(&all, "all", 32767,
             "\tfield:u32 u;\toffset:8;\tsize:4;\tsigned:0;\n"
             "\tfield:s16 s;\toffset:12;\tsize:2;\tsigned:1;\n"
             "\tfield:__data_loc char[] name;\toffset:16;\tsize:4;\tsigned:0;\n"
             "\tfield:u8 mac[3];\toffset:20;\tsize:3;\tsigned:0;\n"
             ALL_TAIL);
  assert_has(&all, "q", 32766,
             "\tfield:u64 id;\toffset:8;\tsize:8;\tsigned:0;\n"
             "\tfield:u32 depth;\toffset:16;\tsize:4;\tsigned:0;\n"
             "\tfield:double ratio;\toffset:24;\tsize:8;\tsigned:1;\n"
             "\tfield:__data_loc char[] ratio_str;\toffset:32;\tsize:4;\tsigned:0;\n"
             "\n"
             "print fmt: \"id=%llu depth=%u ratio=%s\", REC->id, REC->depth, "
             "__get_str(ratio_str)\n");
  assert_has(&all, "io", 32765,
             "\tfield:u64 dur_ns;\toffset:8;\tsize:8;\tsigned:0;\n"
             "\n"
             "print fmt: \"dur=%llu.%03lluus\", REC->dur_ns / 1000, REC->dur_ns % 1000\n");
  assert_has(&all, "req", 32764,
             "\tfield:u64 id;\toffset:8;\tsize:8;\tsigned:0;\n"
             "\tfield:s32 x_y;\toffset:16;\tsize:4;\tsigned:1;\n"
             "\n"
             "print fmt: \"async_begin id=0x%llx x-y=%d nil=\", REC->id, REC->x_y\n");
  /* printk: the final newline goes (the line's own ends it), %.1f is rendered, "%%" stays */
  assert_has(&all, "printk", 32763,
             "\tfield:s32 a0;\toffset:8;\tsize:4;\tsigned:1;\n"
             "\tfield:double a1;\toffset:16;\tsize:8;\tsigned:1;\n"
             "\tfield:__data_loc char[] a1_str;\toffset:24;\tsize:4;\tsigned:0;\n"
             "\n"
             "print fmt: \"got %d, %s%%\", REC->a0, __get_str(a1_str)\n");

  /* The first event's record: 64 fixed bytes, then "ab", "0.25", "<?>" with their NULs. */
  struct dat d;
  walk(&d, &s.out);
  struct rec r[8];
  int64_t missed;
  assert_int_equal(page_records((const unsigned char *)s.out.data + d.cpu_offset[0], r, 8,
                                &missed), 6);
  assert_int_equal(missed, 0);
  static const unsigned char want[76] = {
      7, 0, 0, 0, 0x92, 0x10, 0, 0,       /* type 7, pid 4242 */
      200, 0, 0xfe, 0xff,                 /* u, s = -2 */
      0x40, 0, 0x03, 0,                   /* name: 3 bytes at 64 */
      0x0a, 0x0b, 0x0c, 0, 0, 0, 0, 0,    /* mac, padding */
      0, 0, 0, 0, 0, 0, 0xd0, 0x3f,       /* d = 0.25 = 0x3fd0000000000000 */
      0, 0x7f, 0, 0, 0, 0, 0, 0,          /* p */
      1, 0, 0, 0, 0, 0, 0, 0,             /* ok, padding */
      0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* seq = -3 */
      0x43, 0, 0x05, 0,                   /* d_str: 5 bytes at 67 */
      0x48, 0, 0x04, 0,                   /* text: 4 bytes at 72 */
      'a', 'b', 0, '0', '.', '2', '5', 0, '<', '?', '>', 0,
  };
  assert_int_equal(r[0].ts, 5000);
  assert_int_equal(r[0].len, 76); /* type_len 19 */
  assert_memory_equal(r[0].data, want, sizeof want);
  /* The u8 of 300 as a u32 at 8 (0x12c), of type 32767 */
  static const unsigned char want2[12] = {0xff, 0x7f, 0, 0, 0x92, 0x10, 0, 0, 0x2c, 0x01, 0, 0};
  assert_memory_equal(r[1].data, want2, sizeof want2);
  /* The duration: 2500 ns at 8 */
  static const unsigned char want4[16] = {0xfd, 0x7f, 0, 0, 0x92, 0x10, 0, 0,
                                          0xc4, 0x09, 0, 0, 0, 0, 0, 0};
  assert_int_equal(r[3].len, 16);
  assert_memory_equal(r[3].data, want4, sizeof want4);
  fxt_tbuf_free(&s.out);
}

/* ---- CPUs and losses ------------------------------------------------------------------------- */

static uint64_t seq_of(const struct rec *r) { /* a tick's seq */
  uint64_t v;
  memcpy(&v, r->data + 8, 8);
  return v;
}

static void cpus_and_losses(void **state) {
  (void)state;
  struct fxt_thread_ref a = fxt_thread_index(1), b = fxt_thread_inline(4242, 4243);
  head_of_file();
  cpu(a, 10, 1);
  tick(a, 100, 1, 0);
  tick(b, 150, 2, 0); /* b: no cpu record, on CPU 0 as report prints it */
  loss(a, FXT_STR_DROP_STATS, 180, 5);
  tick(a, 200, 3, 0); /* after 5 dropped: starts a page with them */
  tick(a, 210, 4, 0);
  loss(b, FXT_STR_OVERRUN, 220, 2);
  tick(b, 250, 5, 0);
  cpu(a, 260, 3);
  tick(a, 300, 6, 0);
  loss(a, FXT_STR_LOST, 310, 4); /* after a's last event: in CPU 3's stats only */
  struct sink s;
  struct fxt_tracedat_stats st;
  struct dat d;
  convert_walk(&s, &st, &d);
  assert_int_equal(d.cpus, 4);
  assert_memory_equal(d.cmdlines, "4242 demo-app\n", 14); /* 4243 has no name */
  assert_int_equal(d.cmdlines_len, 14);
  struct rec r[16];
  int64_t m[16];
  /* CPU 0: b's events, the second after 2 overrun */
  assert_int_equal(cpu_records(&s.out, &d, 0, r, m, 16), 2);
  assert_int_equal(seq_of(&r[0]), 2);
  assert_int_equal(seq_of(&r[1]), 5);
  assert_int_equal(m[0], 0);
  assert_int_equal(m[1], 2);
  assert_int_equal(r[1].ts, 250);
  assert_int_equal(r[0].data[4] | r[0].data[5] << 8, 4243); /* pid */
  /* CPU 1: 1, then 3 and 4 on a page of their own after 5 dropped */
  assert_int_equal(d.cpu_size[1], 2 * 4096);
  assert_int_equal(cpu_records(&s.out, &d, 1, r, m, 16), 3);
  assert_int_equal(seq_of(&r[0]) * 100 + seq_of(&r[1]) * 10 + seq_of(&r[2]), 134);
  assert_int_equal(m[1], 5);
  assert_int_equal(r[1].ts, 200);
  assert_int_equal(r[2].ts, 210);
  assert_int_equal(d.cpu_size[2], 0); /* CPU 2: nothing, but in the table */
  assert_int_equal(d.cpu_offset[2], 0);
  assert_int_equal(cpu_records(&s.out, &d, 3, r, m, 16), 1);
  assert_int_equal(seq_of(&r[0]), 6);
  assert_int_equal(d.ncpustat, 4);
  assert_non_null(strstr(d.cpustat[0], "\noverrun: 2\n"));
  expect_dropped_read(&d, 0, 0, 2);
  assert_non_null(strstr(d.cpustat[1], "\noverrun: 0\n"));
  expect_dropped_read(&d, 1, 5, 3);
  expect_dropped_read(&d, 2, 0, 0);
  expect_dropped_read(&d, 3, 4, 1);
  assert_int_equal(st.events, 6);
  assert_int_equal(st.missed, 7);
  assert_int_equal(st.lost_trailing, 4);
  assert_int_equal(st.pages, 5); /* CPU 0: 2 (the overrun starts one), CPU 1: 2, CPU 3: 1 */
  assert_int_equal(d.cpu_size[0], 2 * 4096);
  fxt_tbuf_free(&s.out);
}

/* A kernel trace's losses, as `fxtrace convert X.dat --to fxt` writes them: `lost` records of
 * thread 0 with the CPU that lost them (cpu_loss). Each goes to the page of its provider's
 * next event on that CPU, whatever the thread (not thread 0's next event, nor its CPU), one of
 * an unknown count as RB_MISSED_EVENTS without a count; one no event of its provider follows
 * on its CPU is in the CPU's stats only, even when another provider's event follows there. */
static void cpu_losses(void **state) {
  (void)state;
  struct sink s;
  struct fxt_tracedat_stats st;
  struct dat d;
  struct rec r[8];
  int64_t m[8];
  struct fxt_thread_ref a = fxt_thread_index(1), b = fxt_thread_inline(4242, 4243);
  head_of_file();
  cpu(a, 10, 1), cpu(b, 10, 0);
  tick(a, 100, 1, 0);
  tick(b, 110, 2, 0);
  cpu_loss(4242, 150, 0, 3, false); /* CPU 0 loses 3 */
  tick(a, 200, 3, 0);               /* CPU 1: not its losses */
  tick(b, 250, 4, 0);               /* CPU 0: a page after 3 missed */
  cpu_loss(4242, 260, 1, 0, true);  /* CPU 1 loses some, how many unknown */
  tick(a, 300, 5, 0);               /* a page flagged, without a count */
  cpu_loss(4242, 400, 1, 7, false); /* no later event of this provider on CPU 1: trailing */
  provider(5000, 1000000000);
  meta_strings();
  string(S_DEMO, "demo"), string(S_TICK, "tick"), string(S_SEQ, "seq"), string(S_VAL, "val");
  desc(1000, S_DEMO, S_TICK, FXT_TP_TYPED, "seq=%llu val=%u", 2, k_tick_fields);
  struct fxt_thread_ref c = fxt_thread_inline(5000, 5001);
  cpu(c, 490, 1);
  tick(c, 500, 6, 0); /* CPU 1, another provider: the 7 are not its */
  convert_walk(&s, &st, &d);
  assert_int_equal(cpu_records(&s.out, &d, 0, r, m, 8), 2);
  assert_int_equal(seq_of(&r[0]) * 10 + seq_of(&r[1]), 24);
  assert_int_equal(m[0], 0);
  assert_int_equal(m[1], 3);
  assert_int_equal(r[1].ts, 250);
  assert_int_equal(cpu_records(&s.out, &d, 1, r, m, 8), 4);
  assert_int_equal(seq_of(&r[0]) * 1000 + seq_of(&r[1]) * 100 + seq_of(&r[2]) * 10 +
                       seq_of(&r[3]),
                   1356);
  assert_int_equal(m[1], 0);
  assert_int_equal(m[2], -1); /* RB_MISSED_EVENTS without RB_MISSED_STORED */
  assert_int_equal(r[2].ts, 300);
  assert_int_equal(m[3], 0);
  expect_dropped_read(&d, 0, 3, 2);
  assert_non_null(strstr(d.cpustat[1], "\noverrun: 0\n"));
  expect_dropped_read(&d, 1, 7, 4);
  assert_int_equal(st.events, 6);
  assert_int_equal(st.missed, 3);
  assert_int_equal(st.missed_unknown, 1);
  assert_int_equal(st.lost_trailing, 7);
  assert_int_equal(st.pages, 4);
  fxt_tbuf_free(&s.out);
}

/* ---- events too big for a page ------------------------------------------------------------- */

static void too_big(void **state) {
  (void)state;
  static char big[5001];
  memset(big, 'x', 5000);
  struct fxt_thread_ref a = fxt_thread_index(1);
  head_of_file();
  string(S_BIG, "big"), string(S_TEXT, "text");
  tick(a, 100, 1, 0);
  loss(a, FXT_STR_DROP_STATS, 150, 3);
  struct fxt_event e = event(FXT_EVENT_INSTANT, a, sref(S_DEMO), sref(S_BIG), 200);
  arg(&e, FXT_ARG_STRING, sref(S_TEXT))->value.str = inl(big); /* 8 + 4 + 5001 > 4072 */
  put(&e);
  tick(a, 300, 2, 0); /* carries the 3 dropped and the 1 too big */
  e.timestamp = 400;
  put(&e); /* too big again, and last: counted, shown nowhere */
  struct sink s;
  struct fxt_tracedat_stats st;
  struct dat d;
  convert_walk(&s, &st, &d);
  struct rec r[4];
  int64_t m[4];
  assert_int_equal(cpu_records(&s.out, &d, 0, r, m, 4), 2);
  assert_int_equal(seq_of(&r[1]), 2);
  assert_int_equal(m[1], 4);
  assert_int_equal(r[1].ts, 300);
  expect_dropped_read(&d, 0, 5, 2);
  assert_int_equal(st.too_big, 2);
  assert_int_equal(st.missed, 4);
  assert_int_equal(st.lost_trailing, 1);
  assert_int_equal(st.formats, 2); /* the big event's format is there, with no record */
  fxt_tbuf_free(&s.out);
}

/* ---- the external sort ---------------------------------------------------------------------- */

/* 3 threads on 3 CPUs, each thread's events in file chunks of 500 that interleave out of time
 * order, 30000 events: with 64 KiB runs the sort spills to its file, and the output is the same,
 * byte for byte, as with one run in memory. */
static void spilled_sort(void **state) {
  (void)state;
  struct fxt_thread_ref th[3] = {fxt_thread_index(1), fxt_thread_inline(4242, 7),
                                 fxt_thread_inline(4242, 8)};
  head_of_file();
  for (int t = 0; t < 3; t++)
    cpu(th[t], 0, (uint32_t)(2 - t));
  for (uint64_t chunk = 0; chunk < 20; chunk++)
    for (int t = 2; t >= 0; t--)
      for (uint64_t i = 0; i < 500; i++) {
        uint64_t k = chunk * 500 + i; /* thread t's k-th event */
        tick(th[t], 1000 + k * 3 + (uint64_t)t, k * 3 + (uint64_t)t, 0);
      }
  struct sink one, many;
  struct fxt_tracedat_stats st1, st2;
  char err[256];
  assert_int_equal(convert(&one, 0, &st1, err), 0);
  assert_int_equal(st1.sort_runs, 0);
  assert_int_equal(convert(&many, 64 << 10, &st2, err), 0);
  assert_true(st2.sort_runs >= 10); /* 30000 x (32 + 24) bytes in 64 KiB runs */
  assert_int_equal(one.out.len, many.out.len);
  assert_memory_equal(one.out.data, many.out.data, one.out.len);
  struct dat d;
  walk(&d, &many.out);
  static struct rec r[10001];
  static int64_t m[10001];
  for (uint32_t c = 0; c < 3; c++) {
    assert_int_equal(cpu_records(&many.out, &d, c, r, m, 10001), 10000);
    for (int i = 0; i < 10000; i++) { /* thread 2 - c, in time order, every event */
      assert_int_equal(seq_of(&r[i]), (uint64_t)i * 3 + (2 - c));
      assert_int_equal(r[i].ts, 1000 + (uint64_t)i * 3 + (2 - c));
    }
  }
  assert_int_equal(st2.events, 30000);
  fxt_tbuf_free(&one.out);
  fxt_tbuf_free(&many.out);
}

static void sort_order(void **state) {
  (void)state;
  struct fxt_td_sort s;
  assert_int_equal(fxt_td_sort_init(&s, 1, NULL), 0); /* made the 64 KiB minimum */
  uint64_t x = 12345;
  unsigned char payload[100];
  for (uint64_t i = 0; i < 20000; i++) {
    x = x * 6364136223846793005u + 1442695040888963407u;
    struct fxt_td_sort_key k = {(x >> 20) % 1000, i, i, (uint16_t)((x >> 40) % 4), 0,
                          (uint32_t)(i % 101)};
    memset(payload, (int)(i & 0xff), sizeof payload);
    assert_int_equal(fxt_td_sort_add(&s, &k, payload), 0);
  }
  struct fxt_td_sort_key big = {0, 0, 0, 0, 0, FXT_TD_SORT_MAX_PAYLOAD + 1};
  assert_int_equal(fxt_td_sort_add(&s, &big, payload), FXT_E2BIG);
  assert_int_equal(fxt_td_sort_finish(&s), 0);
  assert_true(s.nruns > 5);
  for (int round = 0; round < 2; round++) { /* read twice: rewind gives the same */
    assert_int_equal(fxt_td_sort_rewind(&s), 0);
    struct fxt_td_sort_key k, prev = {0};
    const void *p;
    uint64_t n = 0;
    while (fxt_td_sort_next(&s, &k, &p) == 1) {
      bool later = prev.ns < k.ns || (prev.ns == k.ns && prev.seq < k.seq);
      if (n > 0)
        assert_true(prev.cpu < k.cpu || (prev.cpu == k.cpu && later));
      assert_int_equal(k.lost, k.seq);
      assert_int_equal(k.size, k.seq % 101);
      for (uint32_t i = 0; i < k.size; i++)
        assert_int_equal(((const unsigned char *)p)[i], k.seq & 0xff);
      prev = k;
      n++;
    }
    assert_int_equal(n, 20000);
  }
  assert_int_equal(fxt_td_sort_add(&s, &big, payload), FXT_EINVAL); /* after the end */
  fxt_td_sort_free(&s);
}

/* ---- two processes ------------------------------------------------------------------------- */

/* The same tracepoint in two processes shares one format; another tracepoint with an id taken
 * gets the highest free one; each provider's clock maps its own ticks. */
static void two_providers(void **state) {
  (void)state;
  head_of_file();
  tick(fxt_thread_index(1), 1000, 1, 0);
  provider(5000, 2000000000); /* 2 ticks a ns */
  meta_strings();
  string(S_DEMO, "demo"), string(S_TICK, "tick"), string(S_SEQ, "seq"), string(S_VAL, "val");
  string(S_Q, "other");
  desc(1000, S_DEMO, S_TICK, FXT_TP_TYPED, "seq=%llu val=%u", 2, k_tick_fields);
  desc(1000, S_DEMO, S_Q, FXT_TP_TYPED, "seq=%llu val=%u", 2, k_tick_fields);
  thread(1, 5000, 5001);
  kobj(FXT_KOBJ_THREAD, 5001, "other-proc", 5000);
  tick(fxt_thread_index(1), 3000, 2, 0); /* 1500 ns */
  seq_val_event(S_Q, fxt_thread_index(1), 4000, 3, 0);
  struct sink s;
  struct fxt_tracedat_stats st;
  convert_ok(&s, &st);
  assert_int_equal(st.formats, 2);
  struct dat d;
  walk(&d, &s.out);
  assert_int_equal(d.cmdlines_len, 14 + 16);
  assert_memory_equal(d.cmdlines, "4242 demo-app\n5001 other-proc\n", 30);
  struct rec r[4];
  int64_t m[4];
  assert_int_equal(cpu_records(&s.out, &d, 0, r, m, 4), 3);
  uint16_t type[3];
  for (int i = 0; i < 3; i++)
    memcpy(&type[i], r[i].data, 2);
  assert_int_equal(r[0].ts, 1000);
  assert_int_equal(r[1].ts, 1500);
  assert_int_equal(r[2].ts, 2000);
  assert_int_equal(type[0], 1000);
  assert_int_equal(type[1], 1000);
  assert_int_equal(type[2], 32767);
  fxt_tbuf_free(&s.out);
}

/* ---- IDs KernelShark can show ------------------------------------------------------------- */

/* A tracepoint whose id does not fit an int16_t gets the highest free ID below 32768: KernelShark
 * 2.x keeps event IDs in an int16_t and shows negative ones as rows with no event and no info. */
static void ids_below_32768(void **state) {
  (void)state;
  static struct tdat_all all;
  head_of_file();
  string(S_Q, "big");
  desc(40000, S_DEMO, S_Q, FXT_TP_TYPED, "seq=%llu val=%u", 2, k_tick_fields);
  seq_val_event(S_Q, fxt_thread_index(1), 100, 1, 2);
  struct sink s;
  struct fxt_tracedat_stats st;
  convert_ok(&s, &st);
  assert_int_equal(st.formats, 1);
  all_formats(&s.out, &all);
  assert_has(&all, "big", 32767,
             "\tfield:u64 seq;\toffset:8;\tsize:8;\tsigned:0;\n"
             "\tfield:u32 val;\toffset:16;\tsize:4;\tsigned:0;\n"
             "\n"
             "print fmt: \"seq=%llu val=%u\", REC->seq, REC->val\n");
  fxt_tbuf_free(&s.out);
}

/* ---- errors ------------------------------------------------------------------------------- */

/* A file without events (no formats: an empty event table) converts to a valid trace.dat
 * (under UBSan: no NULL given to memcpy). */
static void no_events(void **state) {
  (void)state;
  struct sink s;
  struct fxt_tracedat_stats st;
  head_of_file();
  convert_ok(&s, &st);
  assert_int_equal(st.events, 0);
  assert_int_equal(st.formats, 0);
  assert_true(s.out.len > 0);
  assert_memory_equal(s.out.data, "\x17\x08\x44tracing", 10);
  fxt_tbuf_free(&s.out);
}

static void errors(void **state) {
  (void)state;
  struct sink s;
  struct fxt_tracedat_stats st;
  char err[256];
  head_of_file();
  tick(fxt_thread_index(1), 100, 1, 0);
  size_t second = g_len;
  tick(fxt_thread_index(1), 200, 2, 0);
  size_t whole = g_len;
  /* Cut in the middle of the last record (a torn tail), strict: nothing is written, the
   * offset is said. */
  g_len = whole - 8;
  struct fxt_tracedat_options so = {.uname = "Linux t 6.1 x", .strict = true};
  assert_int_equal(convert_opts(&s, 0, &so, &st, err), FXT_EBADMSG);
  assert_int_equal(s.calls, 0);
  assert_non_null(strstr(err, "offset "));
  fxt_tbuf_free(&s.out);
  /* Not strict: the records before it, and where it is. */
  assert_int_equal(convert(&s, 0, &st, err), 0);
  assert_int_equal(st.events, 1);
  assert_int_equal(st.torn, second);
  fxt_tbuf_free(&s.out);
  g_len = whole;
  /* A failing writer: its code comes back, at the head or at the data. */
  for (size_t at = 1; at <= 2; at++) {
    struct fxt_tracedat_options o = {.uname = "u"};
    assert_int_equal(convert_opts(&s, at, &o, &st, err), -5);
    assert_int_equal(s.calls, at);
    fxt_tbuf_free(&s.out);
  }
  /* A temporary directory that cannot be: the spill fails with its reason, nothing written. */
  for (int i = 0; i < 3000; i++)
    tick(fxt_thread_index(1), 300 + (uint64_t)i, 3, 0);
  struct fxt_tracedat_options o = {.uname = "u", .tmpdir = "/nonexistent/fxtrace-test",
                                   .run_bytes = 1};
  assert_int_equal(convert_opts(&s, 0, &o, &st, err), FXT_ENOSPC);
  assert_non_null(strstr(err, "/nonexistent/fxtrace-test"));
  assert_int_equal(s.calls, 0);
  fxt_tbuf_free(&s.out);
  assert_int_equal(fxt_tracedat_convert(g_buf, g_len, NULL, &st, err, sizeof err), FXT_EINVAL);
  o.write = NULL;
  assert_int_equal(fxt_tracedat_convert(g_buf, g_len, &o, &st, err, sizeof err), FXT_EINVAL);
}

FXT_TEST_MAIN(
    cmocka_unit_test(whole_file), cmocka_unit_test(every_kind), cmocka_unit_test(cpus_and_losses),
    cmocka_unit_test(cpu_losses), cmocka_unit_test(too_big), cmocka_unit_test(spilled_sort),
    cmocka_unit_test(sort_order), cmocka_unit_test(two_providers), cmocka_unit_test(errors),
    cmocka_unit_test(ids_below_32768), cmocka_unit_test(no_events))
