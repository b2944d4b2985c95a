/* functions_fib.c - the program bench/functions builds with each set of flags: fib(N)
 * (argv[1]), recursive, C(N) = 1 + C(N-1) + C(N-2) calls (C(0) = C(1) = 1), plus main. */
#include <stdio.h>
#include <stdlib.h>

#if defined(__clang__)
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noinline, noipa))
#endif

KEEP static long fib(int n)
{
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
  printf("%ld\n", fib(argc > 1 ? atoi(argv[1]) : 32));
  return 0;
}
