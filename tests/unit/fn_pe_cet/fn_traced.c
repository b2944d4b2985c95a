/* fn_pe_cet/fn_traced.c - fn/fn_traced.c again, for test_functions_pe_cet: built with
 * -fpatchable-function-entry=11,9 and -fcf-protection (the engine's endbr layout for the
 * exported functions), as a distribution's build flags make it. */
#include "../fn/fn_traced.c"
