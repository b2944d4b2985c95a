/* fn_traced.c - functions built with -finstrument-functions for test_functions, with
 * -fpatchable-function-entry=11,9 for test_functions_pe (fn_traced.h).
 * noinline (and GCC's noipa) keep each call a call, so the number of activations is the source's. */
#define _GNU_SOURCE
#include "fn_traced.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#if defined(__clang__)
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noinline, noipa))
#endif

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
