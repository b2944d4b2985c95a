/* fn_traced.c - functions built with -finstrument-functions for test_functions, with
 * -fpatchable-function-entry=11,9 for test_functions_pe (fn_traced.h).
 * noinline (and GCC's noipa) keep each call a call, so the number of activations is the source's. */
#define _GNU_SOURCE
#include "fn_traced.h"

#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <time.h>

#include "../../fn_keep.h"

KEEP int fn_fib(int n)
{
  return n < 2 ? n : fn_fib(n - 1) + fn_fib(n - 2);
}

KEEP int fn_driver(int n)
{
  return fn_fib(n);
}

KEEP static int fn_leaf_a(int n)
{
  return n + 1;
}

KEEP static int fn_leaf_b(int n)
{
  return n + 2;
}

KEEP int fn_pair(int n)
{
  return fn_leaf_a(n) + fn_leaf_b(n);
}

KEEP int fn_branch(int n)
{
  return fn_pair(n) + fn_fib(n);
}

KEEP void fn_sleeper(long us)
{
  struct timespec ts = {us / 1000000, us % 1000000 * 1000};
  while (nanosleep(&ts, &ts) != 0)
    ;
}

KEEP void fn_quick(void)
{
  __asm__ __volatile__("" ::: "memory");
}

KEEP static int fn_phdr_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
  (void)info, (void)size;
  ++*(int *)ctx;
  return 0;
}

KEEP int fn_phdr_count(void)
{
  int n = 0;
  dl_iterate_phdr(fn_phdr_cb, &n);
  return n;
}

static jmp_buf jump;

KEEP static void fn_jump_deep(void)
{
  longjmp(jump, 1);
}

KEEP static void fn_jump_mid(void)
{
  fn_jump_deep();
}

KEEP int fn_jump_outer(void)
{
  if (setjmp(jump) == 0) {
    fn_jump_mid();
    return 0;
  }
  return 1;
}

KEEP void fn_on_signal(int sig)
{
  (void)sig;
  fn_fib(5);
}

KEEP int fn_signal_outer(int sig)
{
  raise(sig);
  return fn_fib(3);
}

KEEP static void fn_exit_leaf(void)
{
  pthread_exit(NULL);
}

KEEP static void fn_exit_deep(void)
{
  fn_exit_leaf();
}

KEEP void *fn_thread_body(void *arg)
{
  (void)arg;
  fn_fib(4);
  fn_exit_deep();
  return NULL;
}

KEEP int fn_switch_inside(void (*sw)(void))
{
  sw();
  return fn_driver(8) + 1;
}

KEEP double fn_args(int a, long b, int c, long d, int e, long f, double x0, double x1, double x2,
                    double x3, double x4, double x5, double x6, double x7)
{
  return (double)(a + b * 2 + c * 3 + d * 4 + e * 5 + f * 6) + x0 + x1 * 2 + x2 * 3 + x3 * 4 +
         x4 * 5 + x5 * 6 + x6 * 7 + x7 * 8;
}

KEEP long fn_stack_args(long a1, long a2, long a3, long a4, long a5, long a6, long a7, long a8)
{
  return a1 + a2 * 2 + a3 * 3 + a4 * 4 + a5 * 5 + a6 * 6 + a7 * 7 + a8 * 8;
}

KEEP struct fn_ints fn_ints(long a)
{
  struct fn_ints r = {a + 1, a + 2};
  return r;
}

KEEP struct fn_doubles fn_doubles(double a)
{
  struct fn_doubles r = {a + 0.5, a + 1.5};
  return r;
}

KEEP long fn_varargs(int n, ...)
{
  va_list ap;
  va_start(ap, n);
  long s = 0;
  for (int i = 0; i < n; i++)
    s += i % 2 ? (long)va_arg(ap, double) : va_arg(ap, long);
  va_end(ap);
  return s;
}

/* A sibling call: fn_driver entered with fn_tail's return address slot (test_functions_pe: the
 * one function of this file built with sibling calls; with -finstrument-functions the exit
 * hook keeps it a call). */
#if defined(__clang__)
#define TAIL __attribute__((musttail))
#define TAIL_FN
#else
#define TAIL
#define TAIL_FN __attribute__((optimize("optimize-sibling-calls")))
#endif

KEEP TAIL_FN int fn_tail(int n)
{
  TAIL return fn_driver(n + 1);
}
