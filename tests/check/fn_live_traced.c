/* fn_live_traced.c - the functions fn_live traces: the only file of the program built with
 * -finstrument-functions, so its main (which reads the live files) is never inside a traced
 * call. */
#include "fn_live_traced.h"

#include "../fn_keep.h"

KEEP int fn_live_fib(int n)
{
  return n < 2 ? n : fn_live_fib(n - 1) + fn_live_fib(n - 2);
}

KEEP int fn_live_outer(int n, void (*mark)(int))
{
  int r = fn_live_fib(n); /* a call returned: the thread's tree is held from here */
  mark(n);                /* an event inside fn_live_outer, after fib's calls */
  r += fn_live_fib(n - 2);
  mark(n + 1);
  return r;
}
