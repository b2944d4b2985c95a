/* tests/cxx/cxx_tp.h - a tracepoint declared in a header that two C++ units include
 * (cxx_trace.cpp, cxx_other.cpp): each unit has its own copy, and both copies must be one
 * event (one id, enabled together), as in C. */
#ifndef FXT_TESTS_CXX_TP_H
#define FXT_TESTS_CXX_TP_H

#include <fxtrace/fxtrace.h>

FXT_TRACEPOINT(cxxhdr, shared, "n=%u unit=%s", (u32, n), (str, unit, 16));

/* cxx_other.cpp: fires cxxhdr:shared with n and unit "other"; returns its copy's id. */
uint32_t cxx_other_fire(uint32_t n);

/* An inline function both units call: one event per site, whichever unit's copy fires. */
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

/* ---- system cxxs: ad-hoc sites where g++ 12 could not have them (fxtrace.h, "C++ sites") --
 * Every kind (instant, begin/end, counter, scope) in (a) an inline function, (b) a member
 * function defined in its class, (c) a function template, (d) lambdas (in an inline function,
 * one of them generic); (a) to (d) in both units, each of which has other events too. The
 * value fired is the round, which cxx_trace.cpp's checks find back in each event. */
#define CXXS_ALL(what, v)                                                                    \
  do {                                                                                       \
    FXT_SCOPE("cxxs", what "_scope");                                                        \
    FXT_INSTANT("cxxs", what "_instant", FXT_ARG("v", v));                                   \
    FXT_BEGIN("cxxs", what "_dur");                                                          \
    FXT_END("cxxs", what "_dur");                                                            \
    FXT_COUNTER("cxxs", what "_counter", 3, FXT_ARG("v", v));                                \
  } while (0)

inline int cxxs_inline(int round) /* (a) */
{
  CXXS_ALL("inl", round);
  return round;
}

struct cxxs_member { /* (b) */
  int fire(int round)
  {
    CXXS_ALL("member", round);
    return round;
  }
};

template <typename T> T cxxs_template(T x) /* (c) */
{
  CXXS_ALL("template", x);
  return x;
}

inline int cxxs_lambda(int round) /* (d) */
{
  auto plain = [](int r) {
    CXXS_ALL("lambda", r);
    return r;
  };
  auto generic = [](auto r) {
    FXT_INSTANT("cxxs", "generic_lambda_instant", FXT_ARG("v", r));
    return r;
  };
  return plain(round) + generic(round) + (int)generic((double)round);
}

/* Inlined into each of its callers, even at -O0: the compiler emits a site's asm statement
 * once per copy of the code, so a unit that calls it twice lists its tracepoint twice (the
 * registry must keep one). */
__attribute__((always_inline)) inline void cxxs_everywhere(int round)
{
  FXT_INSTANT("cxxs", "everywhere_instant", FXT_ARG("v", round));
}

/* cxx_other.cpp: (a) to (d) fired from the other unit, templates for int only;
 * cxxs_everywhere twice. */
void cxxs_other(int round);

#endif /* FXT_TESTS_CXX_TP_H */
