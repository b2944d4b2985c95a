/* fn_dl_lib.c - a library built with the function tracer's flags, loaded with dlopen by
 * fn_dlopen.c: the functions whose calls fn_dlopen.sh counts. Built twice: fn_dl_lib with
 * fn_dl_work, fn_dl_lib2 with FN_DL_WORK=fn_dl_work2 (the library loaded and unloaded in a
 * loop while another thread calls the first). */
#if defined(__clang__)
#define KEEP __attribute__((noinline, visibility("default")))
#else
#define KEEP __attribute__((noinline, noipa, visibility("default")))
#endif
#ifndef FN_DL_WORK
#define FN_DL_WORK fn_dl_work
#endif

KEEP int FN_DL_WORK(int x)
{
  return x * 3 + 1;
}

/* Calls cb, which may longjmp out: this call's frame is then left open. */
KEEP int fn_dl_call(int (*cb)(int), int x)
{
  return cb(x) + 1;
}
