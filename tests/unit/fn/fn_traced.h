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
int fn_jump_outer(void);           /* setjmp; fn_jump_mid, which longjmps out of fn_jump_deep */
int fn_signal_outer(int sig);      /* raises sig (its handler: fn_on_signal) then fn_fib(3) */
void fn_on_signal(int sig);        /* a signal handler: fn_fib(5) */
void *fn_thread_body(void *arg);
int fn_switch_inside(void (*sw)(void)); /* sw(), then fn_driver(8) + 1 */   /* fn_fib(4), then fn_exit_deep: pthread_exit in fn_exit_leaf */

#endif
