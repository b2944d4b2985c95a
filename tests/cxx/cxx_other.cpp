/* tests/cxx/cxx_other.cpp - the second unit of cxx_trace: fires the header's tracepoint from
 * its own copy of it (cxx_tp.h). */
#include "cxx_tp.h"

uint32_t cxx_other_fire(uint32_t n)
{
  FXT_TRACE(cxxhdr, shared, n, "other");
#if defined(__clang__)
  cxx_inline_fire(n);
  cxx_template_fire(n);
#endif
  return fxt_tp_cxxhdr_shared.id;
}
