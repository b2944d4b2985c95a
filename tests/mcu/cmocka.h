/* tests/mcu/cmocka.h - the part of cmocka's API that the unit tests cross-built without
 * cmocka use: tests/unit/test_ring.c and test_writer.c for the MCU build (newlib targets have
 * no cmocka), test_ring.c, test_emit.c and test_functions.c for aarch64 Linux (tests/aarch64:
 * no cmocka in the cross sysroot). The same test sources, unchanged, run the same assertions
 * on a Cortex-M under QEMU or on aarch64 under qemu-user. A failed assertion prints where and
 * why (over semihosting on an MCU) and leaves the test with longjmp, as does skip(); the run
 * returns the number of failed tests, as cmocka_run_group_tests does.
 */
#ifndef FXTRACE_TESTS_MCU_CMOCKA_H
#define FXTRACE_TESTS_MCU_CMOCKA_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct CMUnitTest {
  const char *name;
  void (*test_func)(void **state);
  int (*setup_func)(void **state);
  int (*teardown_func)(void **state);
};

#define cmocka_unit_test(f) {#f, f, NULL, NULL}
#define cmocka_unit_test_setup(f, setup) {#f, f, setup, NULL}
#define cmocka_unit_test_setup_teardown(f, setup, teardown) {#f, f, setup, teardown}
#define cmocka_run_group_tests(tests, group_setup, group_teardown)                           \
  mcu_run_tests(tests, sizeof(tests) / sizeof((tests)[0]), group_setup, group_teardown)

static jmp_buf mcu_test_env;

static inline void mcu_fail(const char *file, int line, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  printf("%s:%d: ", file, line);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  longjmp(mcu_test_env, 1);
}

static inline void mcu_int_equal(unsigned long long a, unsigned long long b, const char *as,
                                 const char *bs, const char *file, int line)
{
  if (a != b)
    mcu_fail(file, line, "%s == %s: 0x%llx != 0x%llx", as, bs, a, b);
}

static inline void mcu_memory_equal(const void *a, const void *b, size_t n, const char *file,
                                    int line)
{
  const unsigned char *x = a, *y = b;
  for (size_t i = 0; i < n; i++)
    if (x[i] != y[i])
      mcu_fail(file, line, "memory differs at byte %u of %u: 0x%02x != 0x%02x", (unsigned)i,
               (unsigned)n, x[i], y[i]);
}

#define assert_true(c) ((c) ? (void)0 : mcu_fail(__FILE__, __LINE__, "%s", #c))
#define assert_false(c) (!(c) ? (void)0 : mcu_fail(__FILE__, __LINE__, "!(%s)", #c))
#define assert_int_equal(a, b)                                                                 \
  mcu_int_equal((unsigned long long)(a), (unsigned long long)(b), #a, #b, __FILE__, __LINE__)
#define assert_ptr_equal(a, b) assert_true((const void *)(a) == (const void *)(b))
#define assert_memory_equal(a, b, n) mcu_memory_equal(a, b, n, __FILE__, __LINE__)
#define fail_msg(...) mcu_fail(__FILE__, __LINE__, __VA_ARGS__)
#define fail() mcu_fail(__FILE__, __LINE__, "fail()")
#define assert_null(p) assert_true((p) == NULL)
#define assert_non_null(p) assert_true((p) != NULL)
#define assert_ptr_not_equal(a, b) assert_true((const void *)(a) != (const void *)(b))
#define assert_string_equal(a, b) mcu_string_equal(a, b, #a, #b, __FILE__, __LINE__)
/* The test ends here, counted as skipped (longjmp with 2). */
#define skip() longjmp(mcu_test_env, 2)

static inline void mcu_string_equal(const char *a, const char *b, const char *as,
                                    const char *bs, const char *file, int line)
{
  if (strcmp(a, b) != 0)
    mcu_fail(file, line, "%s == %s: \"%s\" != \"%s\"", as, bs, a, b);
}

static inline int mcu_run_tests(const struct CMUnitTest *tests, size_t n,
                                int (*group_setup)(void **), int (*group_teardown)(void **))
{
  void *state = NULL;
  volatile int failed = 0; /* volatile: live across setjmp */
  if (group_setup != NULL && group_setup(&state) != 0)
    return -1;
  for (volatile size_t i = 0; i < n; i++) {
    printf("[ RUN      ] %s\n", tests[i].name);
    void *test_state = state;
    switch (setjmp(mcu_test_env)) { /* setjmp as a whole controlling expression (C11 7.13.1.1) */
    case 0:
      if (tests[i].setup_func != NULL && tests[i].setup_func(&test_state) != 0)
        mcu_fail(__FILE__, __LINE__, "setup failed");
      tests[i].test_func(&test_state);
      printf("[       OK ] %s\n", tests[i].name);
      break;
    case 2:
      printf("[  SKIPPED ] %s\n", tests[i].name);
      break;
    default:
      printf("[  FAILED  ] %s\n", tests[i].name);
      failed++;
    }
    if (tests[i].teardown_func != NULL)
      tests[i].teardown_func(&test_state);
  }
  if (group_teardown != NULL)
    group_teardown(&state);
  printf("[==========] %u test(s) run, %d failed.\n", (unsigned)n, (int)failed);
  return failed;
}

#endif /* FXTRACE_TESTS_MCU_CMOCKA_H */
