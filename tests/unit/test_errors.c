/* tests/unit/test_errors.c - the texts of the return codes: fxt_err_name and fxt_strerror of
 * every row of FXT_ERRNO_MAP (errors.h), and fxt_filter_strerror of every filter error code,
 * each against its own row (both tables are one string read by position: fxt_str_nth).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include "../test_main.h"

#include <fxtrace/errors.h>
#include <fxtrace/filter.h>

static void every_code_has_its_row(void **state)
{
  (void)state;
#define ROW(name, value, msg)                                                                 \
  assert_string_equal(fxt_err_name(-(value)), #name);                                         \
  assert_string_equal(fxt_strerror(-(value)), msg);
  FXT_ERRNO_MAP(ROW)
#undef ROW
  assert_string_equal(fxt_err_name(0), "OK");
  assert_string_equal(fxt_strerror(0), "success");
  assert_string_equal(fxt_err_name(-4095), "UNKNOWN");
  assert_string_equal(fxt_err_name(1), "UNKNOWN");
  assert_string_equal(fxt_strerror(1), "unknown error");
  assert_string_equal(fxt_strerror(-4096), "unknown error");
  assert_string_equal(fxt_strerror(-EMFILE), strerror(EMFILE)); /* not an fxtrace code */
}

/* The kernel's texts (trace_events_filter.c, ERRORS), in the enum's order, then fxtrace's. */
static void every_filter_code_has_its_text(void **state)
{
  (void)state;
  static const char *const want[] = {
      "No error",
      "Invalid operator",
      "Too many '('",
      "Too few '('",
      "Missing matching quote",
      "Missing '{'",
      "Missing '}'",
      "Operand too long",
      "Expecting string field",
      "Expecting numeric field",
      "Illegal operation for field type",
      "Field not found",
      "Illegal integer value",
      "Couldn't find or set field in one of a subsystem's events",
      "Too many terms in predicate expression",
      "Meaningless filter expression",
      "Invalid cpulist",
      "Only 'ip' field is supported for function trace",
      "Invalid value (did you forget quotes)?",
      "Function not found",
      "Error",
      "No filter found",
  };
  assert_int_equal(sizeof want / sizeof want[0], FXT_FILTER_ERR_NO_FILTER + 1);
  for (int i = 0; i <= FXT_FILTER_ERR_NO_FILTER; i++)
    assert_string_equal(fxt_filter_strerror(i), want[i]);
  assert_string_equal(fxt_filter_strerror(FXT_FILTER_ERR_NO_FILTER + 1), "Unknown error");
  assert_string_equal(fxt_filter_strerror(-1), "Unknown error");
  assert_string_equal(fxt_filter_strerror(FXT_FILTER_ERR_WRITE_TOO_LONG), "Write too long");
  assert_string_equal(fxt_filter_strerror(FXT_FILTER_ERR_NO_SPACE), "Program buffer too small");
  assert_string_equal(fxt_filter_strerror(FXT_FILTER_ERR_ARGUMENT), "Invalid argument");
}

FXT_TEST_MAIN(cmocka_unit_test(every_code_has_its_row),
              cmocka_unit_test(every_filter_code_has_its_text))
