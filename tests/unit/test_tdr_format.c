/* tests/unit/test_tdr_format.c - event format texts of trace.dat
 * (src/formats/tracedat_read_format.c): declarations of every kind the kernel writes, field values
  * out of hand-built records
 * (sign extension, __data_loc, __rel_loc, flexible arrays), and the errors with their
 * offsets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "../test_main.h"

#include <string.h>

#include "formats/tracedat_read.h"
#include "tdr_formats.h"

#define COMMON FXT_TD_COMMON_FIELDS

/* Linux 6.18's sched_switch format, as events/sched/sched_switch/format prints it. */
static const char k_switch[] = FXT_TD_SCHED_SWITCH_FORMAT;

/* One field of each declaration form. Record layout (40 bytes + data):
 *   8 __data_loc char[] path (4)   12 __rel_loc u32[] words (4)   16 s16 delta (2)
 *   18 u8 addr[4]                  24 const void * where (8)      32 unsigned long caller[1]
 *   40 struct x blob (12)          52 char tail[] (0: the rest of the record) */
static const char k_forms[] = "name: forms\nID: 1000\n" COMMON
                              "\tfield:__data_loc char[] path;\toffset:8;\tsize:4;\tsigned:0;\n"
                              "\tfield:__rel_loc u32[] words;\toffset:12;\tsize:4;\tsigned:0;\n"
                              "\tfield:s16 delta;\toffset:16;\tsize:2;\tsigned:1;\n"
                              "\tfield:u8 addr[4];\toffset:18;\tsize:4;\tsigned:0;\n"
                              "\tfield:const void * where;\toffset:24;\tsize:8;\tsigned:0;\n"
                              "\tfield:unsigned long caller[1];\toffset:32;\tsize:8;\tsigned:0;\n"
                              "\tfield:struct x blob;\toffset:40;\tsize:12;\tsigned:0;\n"
                              "\tfield:char tail[];\toffset:52;\tsize:0;\tsigned:0;\n\n"
                              "print fmt: \"\"\n";

static char err[FXT_TD_ERR_SIZE];
static const struct fxt_td_text k_sys = {"sched", 5};

static bool name_is(struct fxt_td_text t, const char *s) {
  return t.len == strlen(s) && memcmp(t.data, s, t.len) == 0;
}

static void test_sched_switch(void **state) {
  (void)state;
  struct fxt_td_event ev;
  assert_int_equal(
      fxt_td_parse_format(k_switch, strlen(k_switch), 500, k_sys, &ev, err, sizeof err), 0);
  assert_int_equal(ev.id, 316);
  assert_true(name_is(ev.name, "sched_switch"));
  assert_true(name_is(ev.system, "sched"));
  assert_int_equal(ev.offset, 500);
  assert_int_equal(ev.ncommon, 4);
  assert_int_equal(ev.nfields, 11);
  const struct fxt_td_field *f = ev.fields;
  assert_true(name_is(f[0].name, "common_type") && name_is(f[0].type, "unsigned short"));
  assert_true(name_is(f[4].name, "prev_comm") && name_is(f[4].type, "char"));
  assert_int_equal(f[4].kind, FXT_TD_FIELD_STR);
  assert_int_equal(f[4].offset, 8);
  assert_int_equal(f[4].size, 16);
  assert_true(name_is(f[5].name, "prev_pid") && name_is(f[5].type, "pid_t"));
  assert_int_equal(f[5].kind, FXT_TD_FIELD_INT);
  assert_true(f[5].is_signed);
  assert_true(name_is(f[7].name, "prev_state"));
  assert_int_equal(f[7].size, 8);
  assert_int_equal(f[10].offset, 60);
  fxt_td_event_free(&ev);
}

static void test_declaration_forms(void **state) {
  (void)state;
  struct fxt_td_event ev;
  assert_int_equal(
      fxt_td_parse_format(k_forms, strlen(k_forms), 0, k_sys, &ev, err, sizeof err), 0);
  const struct fxt_td_field *f = ev.fields + ev.ncommon;
  assert_int_equal(ev.nfields - ev.ncommon, 8);
  assert_true(name_is(f[0].name, "path") && name_is(f[0].type, "char[]"));
  assert_int_equal(f[0].kind, FXT_TD_FIELD_DSTR);
  assert_false(f[0].rel);
  assert_true(name_is(f[1].name, "words") && f[1].rel);
  assert_int_equal(f[1].kind, FXT_TD_FIELD_DBYTES);
  assert_int_equal(f[2].kind, FXT_TD_FIELD_INT);
  assert_true(name_is(f[3].name, "addr"));
  assert_int_equal(f[3].kind, FXT_TD_FIELD_BYTES); /* u8 arrays are bytes (hex), not text */
  assert_true(name_is(f[4].name, "where") && name_is(f[4].type, "const void *"));
  assert_int_equal(f[4].kind, FXT_TD_FIELD_PTR);
  assert_int_equal(f[5].kind, FXT_TD_FIELD_BYTES);
  assert_true(name_is(f[6].name, "blob") && name_is(f[6].type, "struct x"));
  assert_int_equal(f[6].kind, FXT_TD_FIELD_BYTES);
  assert_true(name_is(f[7].name, "tail"));
  assert_int_equal(f[7].kind, FXT_TD_FIELD_STR);
  assert_int_equal(f[7].size, 0);

  /* A record: path "/x" at 60 (len 3 with NUL), words 7, 9 at 64 (rel: 64 - (12 + 4) = 48),
   * delta -3, addr 10.0.0.1, where 0xdeadbeef, tail "hi" at 52. */
  unsigned char rec[72];
  memset(rec, 0, sizeof rec);
  uint32_t path_loc = 3u << 16 | 60, words_loc = 8u << 16 | 48;
  memcpy(rec + 8, &path_loc, 4);
  memcpy(rec + 12, &words_loc, 4);
  rec[16] = 0xfd, rec[17] = 0xff;
  rec[18] = 10, rec[21] = 1;
  rec[24] = 0xef, rec[25] = 0xbe, rec[26] = 0xad, rec[27] = 0xde;
  memcpy(rec + 52, "hi\0", 3);
  memcpy(rec + 60, "/x\0", 3);
  rec[64] = 7, rec[68] = 9;
  uint64_t u;
  const unsigned char *b;
  uint32_t n;
  assert_int_equal(fxt_td_field_value(&f[0], rec, 72, false, 0, &u, &b, &n, err, sizeof err), 0);
  assert_int_equal(n, 2);
  assert_memory_equal(b, "/x", 2);
  assert_int_equal(fxt_td_field_value(&f[1], rec, 72, false, 0, &u, &b, &n, err, sizeof err), 0);
  assert_int_equal(n, 8);
  assert_ptr_equal(b, rec + 64);
  assert_int_equal(fxt_td_field_value(&f[2], rec, 72, false, 0, &u, &b, &n, err, sizeof err), 0);
  assert_int_equal(u, (uint64_t)-3); /* sign-extended */
  assert_int_equal(fxt_td_field_value(&f[3], rec, 72, false, 0, &u, &b, &n, err, sizeof err), 0);
  assert_int_equal(n, 4);
  assert_int_equal(b[0], 10);
  assert_int_equal(fxt_td_field_value(&f[4], rec, 72, false, 0, &u, &b, &n, err, sizeof err), 0);
  assert_int_equal(u, 0xdeadbeef);
  assert_int_equal(fxt_td_field_value(&f[7], rec, 72, false, 0, &u, &b, &n, err, sizeof err), 0);
  assert_int_equal(n, 2); /* "hi", up to its NUL in the rest of the record */
  assert_memory_equal(b, "hi", 2);

  /* Out of the record: a record of 40 bytes has no blob; a location past the end. */
  assert_int_equal(fxt_td_field_value(&f[6], rec, 40, false, 777, &u, &b, &n, err, sizeof err),
                   FXT_EBADMSG);
  assert_string_equal(err, "offset 777: record of 40 bytes, field 'blob' needs bytes 40..51");
  path_loc = 20u << 16 | 60;
  memcpy(rec + 8, &path_loc, 4);
  assert_int_equal(fxt_td_field_value(&f[0], rec, 72, false, 777, &u, &b, &n, err, sizeof err),
                   FXT_EBADMSG);
  assert_string_equal(err, "offset 777: record of 72 bytes, dynamic field 'path' points at "
                           "bytes 60..79");
  fxt_td_event_free(&ev);
}

/* Each malformed text, the error and the offset (format at file offset 1000). */
static void test_errors(void **state) {
  (void)state;
  static const struct fxt_text_case cases[] = {
      {"name: x\nformat:\n", "offset 1000: event format without an ID: line"},
      {"ID: 7\n", "offset 1000: event format without a name: line"},
      {"name: x\nID: 70000\n", "offset 1008: format ID is not a number 0..65535"},
      {"name: x\nID: 1\n\tfield:int;\toffset:8;\tsize:4;\n",
       "offset 1014: field 'int' has no type"},
      {"name: x\nID: 1\n\tfield:int a\toffset:8\n",
       "offset 1014: field line without ';' after its declaration"},
      {"name: x\nID: 1\n\tfield:int a;\tsize:4;\n",
       "offset 1014: field line without offset: and size:"},
      {"name: x\nID: 1\n\tfield:int a;\toffset:8;\tsize:0;\n",
       "offset 1014: field 'a' of size 0 (only an array may be empty: it then holds the rest "
       "of the record)"},
      {"name: x\nID: 1\n\tfield:__data_loc char[] s;\toffset:8;\tsize:8;\n",
       "offset 1014: dynamic field 's' of size 8 (its location word is 4 bytes)"},
      {"name: x\nID: 1\n\tfield:int a;\toffset:8;\tsize:4;\n"
       "\tfield:int common_pid;\toffset:4;\tsize:4;\n",
       "offset 1046: common field 'common_pid' after the event's own fields"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct fxt_td_event ev;
    assert_int_equal(
        fxt_td_parse_format(cases[i].in, strlen(cases[i].in), 1000, k_sys, &ev, err,
                            sizeof err),
        FXT_EBADMSG);
    assert_string_equal(err, cases[i].want);
    assert_null(ev.fields);
  }
}

FXT_TEST_MAIN(
    cmocka_unit_test(test_sched_switch), cmocka_unit_test(test_declaration_forms),
    cmocka_unit_test(test_errors))
