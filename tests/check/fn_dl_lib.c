/* fn_dl_lib.c - a library built with the function tracer's flags, loaded with dlopen by
 * fn_dlopen.c: one function whose calls fn_dlopen.sh counts. */
#if defined(__clang__)
#define KEEP __attribute__((noinline, visibility("default")))
#else
#define KEEP __attribute__((noinline, noipa, visibility("default")))
#endif

KEEP int fn_dl_work(int x)
{
  return x * 3 + 1;
}
