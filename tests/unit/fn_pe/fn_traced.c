/* fn_pe/fn_traced.c - fn/fn_traced.c again, for test_functions_pe: CMake's source properties
 * belong to a file, and this one is built with -fpatchable-function-entry=11,9 where the
 * other has -finstrument-functions. */
#include "../fn/fn_traced.c"
