/* fnshim.h - what the files of the function tracer's shim (libfxtrace-functions, src/fnshim)
 * share: the shim is built -fvisibility=hidden, and its version script
 * (src/fxtrace-functions.map) exports the names SHIM_API marks; its own code is never
 * instrumented (NOINSTR), whatever flags a program adds. The shim calls into libfxtrace only
 * through fxtrace/detail/fn_shim.h. */
#ifndef FXTRACE_FNSHIM_H
#define FXTRACE_FNSHIM_H

#include <fxtrace/detail/fn_shim.h>

#define SHIM_API __attribute__((visibility("default")))
#define NOINSTR __attribute__((no_instrument_function))

#endif
