/* dl_module.c - a shared library with its own tracepoints, loaded by test_dlopen. */
#include <fxtrace/fxtrace.h>

FXT_TRACEPOINT(dl, ev, "n=%llu", (u64, n));

void fire_dl(uint64_t count);
void fire_dl(uint64_t count)
{
  for (uint64_t i = 0; i < count; i++) {
    FXT_TRACE(dl, ev, i);
    FXT_INSTANT("dl", "adhoc", FXT_U64("i", i));
  }
}
