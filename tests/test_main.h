/* tests/test_main.h - the main() of a cmocka test program, written once.
 *
 * Include after <cmocka.h>. A program whose main() only runs its tests ends with
 *
 *   FXT_TEST_MAIN(cmocka_unit_test(a), FXT_TEST_ST(b))
 *
 * and one that does something first (reads its arguments, forks a child) ends its own main()
 * with FXT_RUN_TESTS(...). The group is named "tests", as cmocka prints it. A table of
 * inputs and the texts they must give is made of struct fxt_text_case.
 */
#ifndef FXTRACE_TEST_MAIN_H
#define FXTRACE_TEST_MAIN_H

/* Runs the CMUnitTests given as one group and returns its result from the calling function. */
#define FXT_RUN_TESTS(...)                                                                     \
  do {                                                                                         \
    const struct CMUnitTest tests[] = {__VA_ARGS__};                                           \
    return cmocka_run_group_tests(tests, NULL, NULL);                                          \
  } while (0)

/* int main(void) that runs the CMUnitTests given. */
#define FXT_TEST_MAIN(...)                                                                     \
  int main(void) { FXT_RUN_TESTS(__VA_ARGS__); }

/* A test run between the program's own static setup() and teardown(). */
#define FXT_TEST_ST(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

/* One row of a table-driven test: an input text and the text it must give (a message, a line
 * read back). */
struct fxt_text_case {
  const char *in, *want;
};

#endif
