/* tests/unit/test_hist.c - `fxtrace hist`'s description (src/formats/hist.h): keys, values,
 * sort keys and size as the kernel's hist trigger takes them, and what bad ones say.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include "../test_main.h"

#include "formats/hist.h"

static void parse_ok(void **state) {
  (void)state;
  struct fxt_hist_spec s;
  char err[256];
  assert_int_equal(fxt_hist_parse(&s, "common_pid,dur_ns.log2,len.buckets=100", "bytes.hex,hitcount,n",
                                  "n.descending,len", "3000", err, sizeof err),
                   0);
  assert_int_equal(s.nkeys, 3);
  assert_string_equal(s.keys[0].name, "common_pid");
  assert_int_equal(s.keys[0].mod, FXT_HIST_PLAIN);
  assert_int_equal(s.keys[1].mod, FXT_HIST_LOG2);
  assert_int_equal(s.keys[2].mod, FXT_HIST_BUCKETS);
  assert_int_equal(s.keys[2].buckets, 100);
  assert_int_equal(s.nvals, 2); /* hitcount is always there */
  assert_int_equal(s.vals[0].mod, FXT_HIST_HEX);
  assert_int_equal(s.nsort, 2);
  assert_int_equal(s.sort[0].field, FXT_HIST_MAX_KEYS + 1);
  assert_true(s.sort[0].descending);
  assert_int_equal(s.sort[1].field, 2);
  assert_false(s.sort[1].descending);
  assert_int_equal(s.size, 4096); /* the kernel's roundup_pow_of_two */
  /* the kernel's defaults: sort by hitcount ascending, 2048 entries */
  assert_int_equal(fxt_hist_parse(&s, "a", NULL, NULL, NULL, err, sizeof err), 0);
  assert_true(s.nsort == 1 && s.sort[0].field == -1 && !s.sort[0].descending);
  assert_int_equal(s.size, 2048);
  assert_int_equal(fxt_hist_parse(&s, "a", NULL, NULL, "65", err, sizeof err), 0);
  assert_int_equal(s.size, 128);
  assert_int_equal(fxt_hist_parse(&s, "a", NULL, NULL, "131072", err, sizeof err), 0);
  assert_int_equal(s.size, 131072);
}

static void parse_bad(void **state) {
  (void)state;
  static const struct {
    const char *keys, *vals, *sort, *size, *msg;
  } k[] = {
      {"a,b,c,d", NULL, NULL, NULL, "more than 3 keys at 'd'"},
      {"a.foo", NULL, NULL, NULL, "unknown modifier (hex, log2, buckets=N, execname) in 'a.foo'"},
      {"a", "b.log2", NULL, NULL, "unknown modifier (hex) in 'b.log2'"},
      {"a.buckets=0", NULL, NULL, NULL, "bad bucket size in 'a.buckets=0'"},
      {"a.buckets=x", NULL, NULL, NULL, "bad bucket size in 'a.buckets=x'"},
      {"a,", NULL, NULL, NULL, "empty field in ''"},
      {"a", NULL, "b", NULL, "sort key is not hitcount, a key or a value: 'b'"},
      {"a", NULL, "a,hitcount,a", NULL, "more than 2 sort keys at 'a'"},
      {"a", NULL, NULL, "64", "size out of range (65..131072): '64'"},
      {"a", NULL, NULL, "131073", "size out of range (65..131072): '131073'"},
      {"a", NULL, NULL, "1k", "bad size '1k'"},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    struct fxt_hist_spec s;
    char err[256] = "";
    assert_int_equal(fxt_hist_parse(&s, k[i].keys, k[i].vals, k[i].sort, k[i].size, err, sizeof err),
                     FXT_EINVAL);
    assert_string_equal(err, k[i].msg);
  }
}

FXT_TEST_MAIN(
    cmocka_unit_test(parse_ok), cmocka_unit_test(parse_bad))
