/* tests/fn_keep.h - KEEP: a traced test function stays a call of its own (noinline, and GCC's
 * noipa: no clone, no folding of its result into the caller), so the number of activations a
 * test counts is the source's. Header-only. */
#ifndef FXTRACE_TESTS_FN_KEEP_H
#define FXTRACE_TESTS_FN_KEEP_H

#if defined(__clang__)
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noinline, noipa))
#endif

#endif
