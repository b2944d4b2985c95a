/* fn_prog.c - a program built with the function tracer's flags for functions_record.sh: fib(N)
 * (argv[1]) from a second function, so the call tree and counts are known:
 * main -> fn_run -> fn_fib(N) making C(N) = 1 + C(N-1) + C(N-2) calls (C(0) = C(1) = 1).
 * With a second argument (fn_profile_live.sh), it then waits for the end of its stdin before
 * it returns: its tracefs tree is read meanwhile. */
#include <stdio.h>
#include <stdlib.h>

#include "../fn_keep.h"

KEEP static int fn_fib(int n)
{
  return n < 2 ? n : fn_fib(n - 1) + fn_fib(n - 2);
}

KEEP static int fn_run(int n)
{
  return fn_fib(n);
}

int main(int argc, char **argv)
{
  /* strtol, not atoi: glibc's atoi is an inline function, which Clang instruments */
  int n = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 10;
  printf("%d\n", fn_run(n));
  if (argc > 2) {
    fflush(stdout);
    while (getchar() != EOF)
      ;
  }
  return 0;
}
