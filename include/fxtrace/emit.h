/* fxtrace/emit.h - kept so that `#include <fxtrace/emit.h>` still compiles: the emit path
 * now lives in fxtrace/detail/emit.h, which is not API. Include fxtrace/fxtrace.h instead.
 */
#ifndef FXTRACE_EMIT_H
#define FXTRACE_EMIT_H

#include "detail/emit.h"

#endif /* FXTRACE_EMIT_H */
