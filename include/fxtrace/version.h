/* fxtrace/version.h - library version.
 *
 * ABI promise: within one MAJOR version, public structs only grow at the end, exported
 * functions keep their signatures, and FXT record layouts in buffers and files never change.
 *
 * User API (docs/architecture.md, "Public headers").
 */
#ifndef FXTRACE_VERSION_H
#define FXTRACE_VERSION_H

#include "common.h"

#define FXT_VERSION_MAJOR 0
#define FXT_VERSION_MINOR 1
#define FXT_VERSION_PATCH 0
#define FXT_VERSION_HEX ((FXT_VERSION_MAJOR << 16) | (FXT_VERSION_MINOR << 8) | FXT_VERSION_PATCH)

FXT_EXTERN_C_BEGIN
/* FXT_VERSION_HEX of the library actually linked (may differ from the header's). */
FXT_API unsigned fxt_version(void);
/* "MAJOR.MINOR.PATCH" of the library actually linked. */
FXT_API const char *fxt_version_string(void);
FXT_EXTERN_C_END

#endif /* FXTRACE_VERSION_H */
