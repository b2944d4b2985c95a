/* tests/cxx/cxx_tp.h - a tracepoint declared in a header that two C++ units include
 * (cxx_trace.cpp, cxx_other.cpp): each unit has its own copy, and both copies must be one
 * event (one id, enabled together), as in C. */
#ifndef FXT_TESTS_CXX_TP_H
#define FXT_TESTS_CXX_TP_H

#include <fxtrace/fxtrace.h>

FXT_TRACEPOINT(cxxhdr, shared, "n=%u unit=%s", (u32, n), (str, unit, 16));

/* cxx_other.cpp: fires cxxhdr:shared with n and unit "other"; returns its copy's id. */
uint32_t cxx_other_fire(uint32_t n);

#endif /* FXT_TESTS_CXX_TP_H */
