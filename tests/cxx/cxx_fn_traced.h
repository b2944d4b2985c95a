/* tests/cxx/cxx_fn_traced.h - the traced functions of cxx_fn_throw (cxx_fn_traced.cpp). */
#ifndef FXT_TESTS_CXX_FN_TRACED_H
#define FXT_TESTS_CXX_FN_TRACED_H

namespace fnx {
/* Calls itself depth times, then throws std::runtime_error: depth + 1 activations, none of
 * which returns. */
int thrower(int depth);
/* thrower(depth), caught: returns -1. */
int catcher(int depth);
/* x + 1. */
int after(int x);
/* catcher(depth) + after(r) for r in [0, rounds): the sum of r + 0 = rounds * (rounds - 1) / 2. */
int run(int rounds, int depth);
/* Calls itself depth times, then pthread_exit: depth + 1 activations, none of which returns. */
int exit_deep(int depth);
} // namespace fnx

#endif /* FXT_TESTS_CXX_FN_TRACED_H */
