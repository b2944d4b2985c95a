// fn_prog_cxx.cpp - a C++ program built with the function tracer's flags for functions_record.sh:
// ns::K::f(N) (argv[1]) recurses N times, so N + 1 activations of the demangled
// ns::K::f(int), and a function template, double twice<double>(double), once; then an exception
// thrown 3 calls deep under catcher() (with the patchable-entry engine: through functions whose
// returns function_graph redirected), caught there: "caught 3".
#include <cstdio>
#include <cstdlib>

namespace ns {
struct K {
  __attribute__((noinline)) int f(int x) { return x > 0 ? f(x - 1) + 1 : 0; }
};
} // namespace ns

template <class T> __attribute__((noinline)) T twice(T v) { return v * 2; }

__attribute__((noinline)) int thrower(int depth)
{
  if (depth == 0)
    throw 3;
  return thrower(depth - 1) + 1;
}

__attribute__((noinline)) int catcher(void)
{
  try {
    return thrower(3);
  } catch (int v) {
    return v;
  }
}

int main(int argc, char **argv)
{
  ns::K k;
  volatile double x = 1.5; // not a constant: clang would fold twice(1.5) and drop the call
  std::printf("%d %g\n", k.f(argc > 1 ? (int)std::strtol(argv[1], nullptr, 10) : 3), twice((double)x));
  std::printf("caught %d\n", catcher());
  return 0;
}
