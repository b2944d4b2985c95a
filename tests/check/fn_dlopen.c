/* fn_dlopen.c - a library built with the function tracer's flags (fn_dl_lib.c) loaded with
 * dlopen before or after function_graph is switched on, for fn_dlopen.sh.
 *   fn_dlopen LIB before OUT   dlopen, tracer on, 10 calls of fn_dl_work
 *   fn_dlopen LIB after OUT    tracer on, dlopen, 10 calls; then a write of set_ftrace_notrace
 *                              (emptied), 10 calls
 * The tracer off and the session stopped (OUT written), it prints the sum of the results. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>

static int calls(int (*fn)(int))
{
  int sum = 0;
  for (int i = 0; i < 10; i++)
    sum += fn(i);
  return sum;
}

int main(int argc, char **argv)
{
  if (argc != 4)
    return 2;
  int before = strcmp(argv[2], "before") == 0;
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "", .output = argv[3]};
  if (fxt_session_start(&cfg) != 0)
    return 1;
  void *h = before ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
  if (fxt_fs_echo("current_tracer", "function_graph") < 0)
    return 1;
  if (!before)
    h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  int (*fn)(int);
  *(void **)&fn = h ? dlsym(h, "fn_dl_work") : NULL;
  if (!fn)
    return 1;
  int sum = calls(fn);
  if (!before) {
    if (fxt_fs_echo("set_ftrace_notrace", "") < 0)
      return 1;
    sum += calls(fn);
  }
  if (fxt_fs_echo("current_tracer", "nop") < 0 || fxt_session_stop() != 0)
    return 1;
  printf("%d\n", sum);
  return 0;
}
