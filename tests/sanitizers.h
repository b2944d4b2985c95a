/* tests/sanitizers.h - which sanitizer a test is built with, as 0/1 macros for `if` and `#if`
 * (gcc says __SANITIZE_*__, clang __has_feature). Tests that change what they do or assert
 * under a sanitizer ask these, not the compilers, so that every test asks the same way.
 *
 * FXT_TEST_TSAN       ThreadSanitizer
 * FXT_TEST_SANITIZED  ThreadSanitizer or AddressSanitizer (their own per-thread state and
 *                     allocator)
 */
#ifndef FXT_TESTS_SANITIZERS_H
#define FXT_TESTS_SANITIZERS_H

#if defined(__SANITIZE_THREAD__)
#define FXT_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FXT_TEST_TSAN 1
#endif
#endif
#ifndef FXT_TEST_TSAN
#define FXT_TEST_TSAN 0
#endif

#if defined(__SANITIZE_ADDRESS__)
#define FXT_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FXT_TEST_ASAN 1
#endif
#endif
#ifndef FXT_TEST_ASAN
#define FXT_TEST_ASAN 0
#endif

#define FXT_TEST_SANITIZED (FXT_TEST_TSAN || FXT_TEST_ASAN)

#endif /* FXT_TESTS_SANITIZERS_H */
