/* tests/cxx/cxx_other.cpp - the second unit of cxx_trace: fires the header's tracepoint from
 * its own copy of it, and the header's inline functions and templates (cxx_tp.h). */
#include "cxx_tp.h"

uint32_t cxx_other_fire(uint32_t n)
{
  FXT_TRACE(cxxhdr, shared, n, "other");
  cxx_inline_fire(n);
  cxx_template_fire(n);
  return fxt_tp_cxxhdr_shared.id;
}

void cxxs_other(int round)
{
  /* cxxs_everywhere's tracepoint listed twice, another between (where a registry that linked
   * it twice would make a loop of its list) */
  cxxs_everywhere(round);
  FXT_INSTANT("cxxs", "other_unit", FXT_ARG("v", round)); /* the unit's own site */
  cxxs_everywhere(round);
  cxxs_inline(round);
  cxxs_member().fire(round);
  cxxs_template(round);
  cxxs_lambda(round);
}
