/* fxtrace/pp.h - kept so that `#include <fxtrace/pp.h>` still compiles: the preprocessor
 * helpers now live in fxtrace/detail/pp.h, which is not API.
 */
#ifndef FXTRACE_PP_H
#define FXTRACE_PP_H

#include "detail/pp.h"

#endif /* FXTRACE_PP_H */
