/* disabled.c compiled as C++: with -DFXT_DISABLE every macro compiles away in C++ too, with
 * no fxtrace symbol referenced and no argument evaluated (tests/check/disabled.sh). */
#include "disabled.c"
