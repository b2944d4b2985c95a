/* fn_live_traced.h - fn_live's traced functions (fn_live_traced.c). */
#ifndef FXT_TESTS_FN_LIVE_TRACED_H
#define FXT_TESTS_FN_LIVE_TRACED_H

int fn_live_fib(int n);                        /* fib(n), recursively */
int fn_live_outer(int n, void (*mark)(int));   /* fib(n), mark(n), fib(n - 2), mark(n + 1) */

#endif
