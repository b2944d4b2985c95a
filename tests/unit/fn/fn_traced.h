/* fn_traced.h - the functions test_functions traces: fn_traced.c is the only file of the test
 * built with -finstrument-functions (test_functions_pe: -fpatchable-function-entry=11,9), so
 * these and nothing else reach the tracer. */
#ifndef FXT_TESTS_FN_TRACED_H
#define FXT_TESTS_FN_TRACED_H

#include <setjmp.h>
#include <stdint.h>

int fn_fib(int n);                 /* fib(n), recursively: C(n) calls */
int fn_driver(int n);              /* calls fn_fib(n) once */
int fn_pair(int n);                /* fn_leaf_a(n) then fn_leaf_b(n) */
int fn_branch(int n);              /* fn_pair(n) and fn_fib(n) */
void fn_sleeper(long us);          /* sleeps us microseconds */
void fn_quick(void);               /* returns at once */
int fn_phdr_count(void);           /* the loaded objects, counted by fn_phdr_cb, which libc's
                                      dl_iterate_phdr calls */
int fn_jump_outer(void);           /* setjmp; fn_jump_mid, which longjmps out of fn_jump_deep */
int fn_signal_outer(int sig);      /* raises sig (its handler: fn_on_signal) then fn_fib(3) */
void fn_on_signal(int sig);        /* a signal handler: fn_fib(5) */
void *fn_thread_body(void *arg);
int fn_switch_inside(void (*sw)(void)); /* sw(), then fn_driver(8) + 1 */
/* Every argument register and both return registers of each class: a + 2b + 3c + 4d + 5e +
 * 6f + x0 + 2 x1 + ... + 8 x7 */
double fn_args(int a, long b, int c, long d, int e, long f, double x0, double x1, double x2,
               double x3, double x4, double x5, double x6, double x7);
struct fn_ints {
  long a, b;
};
struct fn_doubles {
  double x, y;
};
struct fn_ints fn_ints(long a);          /* {a + 1, a + 2}: rax, rdx */
struct fn_doubles fn_doubles(double a);  /* {a + 0.5, a + 1.5}: xmm0, xmm1 */
int fn_tail(int n);                      /* fn_driver(n + 1), a sibling call when it can be */
/* Two arguments on the stack (the engine calls a redirected function's body with the stack
 * its caller left): a1 + 2 a2 + ... + 8 a8 */
long fn_stack_args(long a1, long a2, long a3, long a4, long a5, long a6, long a7, long a8);
long fn_varargs(int n, ...);             /* n values, long and double alternately: their sum */   /* fn_fib(4), then fn_exit_deep: pthread_exit in fn_exit_leaf */

#endif
