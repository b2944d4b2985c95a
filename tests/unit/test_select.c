/* tests/unit/test_select.c - the selection options' values (src/formats/select.h): lists
 * "1,3-5", times "S.fraction" / "+S", and what bad input says (the reason and its offset),
 * and the filter's syntax checked when the option is given.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include "../test_main.h"

#include "formats/select.h"

static void list_ok(void **state) {
  (void)state;
  struct fxt_sel_range *r;
  size_t n;
  char err[128];
  assert_int_equal(fxt_sel_parse_list("1,3-5,18446744073709551615", &r, &n, err, sizeof err), 0);
  assert_int_equal(n, 3);
  assert_true(r[0].lo == 1 && r[0].hi == 1);
  assert_true(r[1].lo == 3 && r[1].hi == 5);
  assert_true(r[2].lo == UINT64_MAX && r[2].hi == UINT64_MAX);
  free(r);
  assert_int_equal(fxt_sel_parse_list("7-7", &r, &n, err, sizeof err), 0);
  assert_true(n == 1 && r[0].lo == 7 && r[0].hi == 7);
  free(r);
}

/* Each bad list: its message, naming the offset of the first byte that is wrong. */
static void list_bad(void **state) {
  (void)state;
  static const struct fxt_text_case k[] = {
      {"", "expected a number at offset 0"},
      {"1,", "expected a number at offset 2"},
      {"1,x", "expected a number at offset 2"},
      {"1;2", "expected ',' or '-' at offset 1"},
      {"5-3", "range ends before it starts at offset 2"},
      {"3-", "expected a number at offset 2"},
      {" 1", "expected a number at offset 0"},
      {"18446744073709551616", "number too large at offset 19"},
      {"-1", "expected a number at offset 0"},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    struct fxt_sel_range *r = (void *)1;
    size_t n = 9;
    char err[128] = "";
    assert_int_equal(fxt_sel_parse_list(k[i].in, &r, &n, err, sizeof err), FXT_EINVAL);
    assert_string_equal(err, k[i].want);
    assert_null(r);
    assert_int_equal(n, 0);
  }
}

static void time_ok(void **state) {
  (void)state;
  struct fxt_sel_time t;
  char err[128];
  assert_int_equal(fxt_sel_parse_time("11304.770471", &t, err, sizeof err), 0);
  assert_true(t.ns == 11304770471000u && t.printed && !t.relative);
  assert_int_equal(fxt_sel_parse_time("+1.5", &t, err, sizeof err), 0);
  assert_true(t.ns == 1500000000u && !t.printed && t.relative);
  assert_int_equal(fxt_sel_parse_time("2.000000001", &t, err, sizeof err), 0);
  assert_true(t.ns == 2000000001u && !t.printed);
  assert_int_equal(fxt_sel_parse_time("0", &t, err, sizeof err), 0);
  assert_true(t.ns == 0 && t.printed);
  /* the largest second that fits in 64-bit nanoseconds, and one more */
  assert_int_equal(fxt_sel_parse_time("18446744073", &t, err, sizeof err), 0);
  assert_true(t.ns == 18446744073000000000u);
  assert_int_equal(fxt_sel_parse_time("18446744074", &t, err, sizeof err), FXT_EINVAL);
}

static void time_bad(void **state) {
  (void)state;
  static const struct fxt_text_case k[] = {
      {"", "expected seconds at offset 0"},
      {"+", "expected seconds at offset 1"},
      {"1.", "expected digits after '.' at offset 2"},
      {".5", "expected seconds at offset 0"},
      {"1.0000000001", "more than 9 decimals at offset 11"},
      {"1s", "expected seconds (S or S.fraction, '+' before: from the first event) at offset 1"},
      {"-1", "expected seconds at offset 0"},
      {"18446744073.709551616", "number too large at offset 0"},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    struct fxt_sel_time t;
    char err[128] = "";
    assert_int_equal(fxt_sel_parse_time(k[i].in, &t, err, sizeof err), FXT_EINVAL);
    assert_string_equal(err, k[i].want);
  }
}

/* A filter's syntax is checked when it is added, with the kernel's message and position; a
 * field no event has is not an error then (it depends on the events). */
static void filter_syntax(void **state) {
  (void)state;
  struct fxt_sel *s = fxt_sel_new();
  char err[256];
  struct fxt_filter_error fe;
  assert_non_null(s);
  assert_false(fxt_sel_any(s));
  assert_int_equal(fxt_sel_add(s, FXT_SEL_FILTER, "dur_ns > 100", err, sizeof err, &fe), 0);
  assert_int_equal(fxt_sel_add(s, FXT_SEL_FILTER, "nosuch == 1", err, sizeof err, &fe), 0);
  assert_true(fxt_sel_add(s, FXT_SEL_FILTER, "(a == 1", err, sizeof err, &fe) < 0);
  assert_int_equal(fe.code, FXT_FILTER_ERR_TOO_MANY_OPEN);
  assert_string_equal(err, "Too many '(' at offset 0");
  assert_true(fxt_sel_add(s, FXT_SEL_FILTER, "a == \"x", err, sizeof err, &fe) < 0);
  assert_int_equal(fe.code, FXT_FILTER_ERR_MISSING_QUOTE);
  assert_int_equal(fxt_sel_add(s, FXT_SEL_PID, "1-x", err, sizeof err, NULL), FXT_EINVAL);
  assert_string_equal(err, "expected a number at offset 2");
  assert_true(fxt_sel_any(s));
  fxt_sel_free(s);
}

FXT_TEST_MAIN(
    cmocka_unit_test(list_ok), cmocka_unit_test(list_bad), cmocka_unit_test(time_ok),
    cmocka_unit_test(time_bad), cmocka_unit_test(filter_syntax))
