/* tests/cxx/cxx_tp.h - a tracepoint declared in a header that two C++ units include
 * (cxx_trace.cpp, cxx_other.cpp): each unit has its own copy, and both copies must be one
 * event (one id, enabled together), as in C. */
#ifndef FXT_TESTS_CXX_TP_H
#define FXT_TESTS_CXX_TP_H

#include <fxtrace/fxtrace.h>

FXT_TRACEPOINT(cxxhdr, shared, "n=%u unit=%s", (u32, n), (str, unit, 16));

/* cxx_other.cpp: fires cxxhdr:shared with n and unit "other"; returns its copy's id. */
uint32_t cxx_other_fire(uint32_t n);

#if defined(__clang__)
/* clang++ only (g++ 12's limits: fxtrace.h's first comment). An inline function both units
 * call: its sites are static locals of one function, kept once by the linker (COMDAT), so both
 * units' calls fire the same event. */
inline uint32_t cxx_inline_fire(uint32_t n)
{
  FXT_SCOPE("cxxhdr", "inline_scope");
  FXT_INSTANT("cxxhdr", "inline_site", FXT_ARG("n", n));
  return n;
}

/* A function template: each instantiation has its own sites, all one event by name. */
template <typename T> T cxx_template_fire(T x)
{
  FXT_INSTANT("cxxhdr", "template_site", FXT_ARG("x", x));
  return x;
}
#endif

#endif /* FXT_TESTS_CXX_TP_H */
