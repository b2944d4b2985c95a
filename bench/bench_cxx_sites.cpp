/* bench_cxx_sites - the off path of C++ ad-hoc sites, one figure a line as name=value, each the
 * median of 7 runs (bench_cxx_sites [--runs N] [--iters N]); every event is off (no session):
 *
 *   typed_tracepoint_off_ns   FXT_TRACE of a disabled typed tracepoint: the peer, one load and
 *                             one branch (bench_emit's disabled_tracepoint_ns)
 *   adhoc_function_off_ns     FXT_INSTANT in the loop's own function
 *   adhoc_inline_off_ns       FXT_INSTANT in an inline function the loop calls (inlined)
 *   adhoc_template_off_ns     FXT_INSTANT in a function template's instantiation (inlined)
 *   scope_inline_off_ns       FXT_SCOPE in an inline function (inlined)
 *   peer_static_guard_off_ns  what registering a site at its first execution through a
 *                             function-local static would add: the static's guard (an acquire
 *                             load and a branch) before the same load and branch
 *   ratio_<name>_vs_typed     a median divided by typed_tracepoint_off_ns's
 *
 * Each loop runs 2^26 iterations (--iters) of one site (inlined) and a compiler barrier, the
 * same in every loop, so the figures compare (the barrier keeps the loop from being folded).
 * The sites and the guard's static live in this unit with other events: what g++ 12 refused
 * before fxtrace.h's "C++ sites" (section type conflict), so an older header builds this file
 * with clang++ only.
 */
#include <fxtrace/fxtrace.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string_view>

FXT_TRACEPOINT(benchx, off, "a=%llu", (u64, a));

#define BARRIER() __asm__ __volatile__("" ::: "memory")

/* Outside the unnamed namespace: inline functions and templates of external linkage, whose
 * statics are COMDAT objects (the case g++ 12 refused with the older header). */
inline void inline_site(long i)
{
  FXT_INSTANT("benchx", "inline", FXT_ARG("i", i));
}

template <typename T> inline void template_site(T i)
{
  FXT_INSTANT("benchx", "template", FXT_ARG("i", i));
}

inline void scope_site()
{
  FXT_SCOPE("benchx", "scope");
}

namespace {

long iters = 1L << 26; /* --iters */

double now_ns()
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The peer: a guard's first pass would register the site; later passes load the guard. */
__attribute__((noinline)) int register_once()
{
  return 1;
}
struct fxt_tracepoint guarded_tp = {};
inline void guarded_site(long i)
{
  static int registered = register_once();
  (void)registered;
  if (FXT_UNLIKELY(fxt_enabled(&guarded_tp)))
    std::printf("%ld\n", i);
}

/* ns per iteration of a loop of iters calls of body(i) and a barrier. */
template <typename F> double per_iteration(F body)
{
  double t0 = now_ns();
  for (long i = 0; i < iters; i++) {
    body(i);
    BARRIER();
  }
  return (now_ns() - t0) / (double)iters;
}

double run_typed()
{
  return per_iteration([](long i) { FXT_TRACE(benchx, off, (uint64_t)i); });
}

double run_function()
{
  return per_iteration([](long i) { FXT_INSTANT("benchx", "function", FXT_ARG("i", i)); });
}

double run_inline()
{
  return per_iteration([](long i) { inline_site(i); });
}

double run_template()
{
  return per_iteration([](long i) { template_site(i); });
}

double run_scope()
{
  return per_iteration([](long) { scope_site(); });
}

double run_guard()
{
  return per_iteration([](long i) { guarded_site(i); });
}

double median(double *v, int n)
{
  std::sort(v, v + n);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

} // namespace

int main(int argc, char **argv)
{
  int runs = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--runs") == 0)
      runs = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--iters") == 0)
      iters = std::atol(argv[i + 1]);
    else
      runs = 0;
  }
  if (runs < 1 || runs > 99 || iters < 1 || argc % 2 == 0) {
    std::fprintf(stderr, "usage: bench_cxx_sites [--runs N (1..99)] [--iters N]\n");
    return 2;
  }
  struct bench {
    const char *name;
    double (*run)();
    double v[99];
  } b[] = {{"typed_tracepoint_off_ns", run_typed, {}},
           {"adhoc_function_off_ns", run_function, {}},
           {"adhoc_inline_off_ns", run_inline, {}},
           {"adhoc_template_off_ns", run_template, {}},
           {"scope_inline_off_ns", run_scope, {}},
           {"peer_static_guard_off_ns", run_guard, {}}};
  const int nb = (int)(sizeof(b) / sizeof(b[0]));
  for (int r = 0; r < runs; r++) /* interleaved: a slow moment of the machine hits all alike */
    for (int k = 0; k < nb; k++)
      b[k].v[r] = b[k].run();
  double typed = median(b[0].v, runs);
  for (int k = 0; k < nb; k++)
    std::printf("%s=%.3f\n", b[k].name, median(b[k].v, runs));
  for (int k = 1; k < nb; k++) {
    std::string_view n = b[k].name;
    std::printf("ratio_%.*s_vs_typed=%.3f\n", (int)(n.size() - 3), b[k].name,
                median(b[k].v, runs) / typed);
  }
  return 0;
}
