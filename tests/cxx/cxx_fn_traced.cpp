/* tests/cxx/cxx_fn_traced.cpp - the functions cxx_fn_throw traces, the one unit built with
 * -finstrument-functions: exceptions thrown through traced frames and caught above them, and
 * a thread that leaves by pthread_exit from inside traced frames. */
#include "cxx_fn_traced.h"

#include <pthread.h>
#include <stdexcept>

namespace fnx {

__attribute__((noinline)) int thrower(int depth)
{
  if (depth == 0)
    throw std::runtime_error("thrown through the traced frames");
  return thrower(depth - 1) + 1;
}

__attribute__((noinline)) int catcher(int depth)
{
  try {
    return thrower(depth);
  } catch (const std::runtime_error &) {
    return -1;
  }
}

__attribute__((noinline)) int after(int x)
{
  return x + 1;
}

int run(int rounds, int depth)
{
  int sum = 0;
  for (int r = 0; r < rounds; r++)
    sum += catcher(depth) + after(r);
  return sum;
}

__attribute__((noinline)) int exit_deep(int depth)
{
  if (depth < 0)
    return 0;
  if (depth == 0)
    pthread_exit(nullptr); /* glibc unwinds the thread's frames (forced unwind) */
  return exit_deep(depth - 1) + 1;
}

} // namespace fnx
