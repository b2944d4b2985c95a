/* src/base/version.c - the version of the library actually linked. */
#include <fxtrace/version.h>

#define FXT_STR2(x) #x
#define FXT_STR(x) FXT_STR2(x)

unsigned fxt_version(void)
{
  return FXT_VERSION_HEX;
}

const char *fxt_version_string(void)
{
  return FXT_STR(FXT_VERSION_MAJOR) "." FXT_STR(FXT_VERSION_MINOR) "." FXT_STR(
      FXT_VERSION_PATCH);
}
