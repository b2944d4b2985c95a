/* fn_dlopen.c - libraries built with the function tracer's flags (fn_dl_lib.c) loaded with
 * dlopen before or while function_graph is on, for fn_dlopen.sh.
 *   fn_dlopen LIB LIB2 MODE OUT
 *   before   dlopen, tracer on, 10 calls of fn_dl_work
 *   after    tracer on, dlopen, 10 calls
 *   filter   set_ftrace_filter main, tracer on, dlopen, 10 calls (the library's functions are
 *            not in the filter, as a module loaded after the kernel's filter was written)
 *   notrace  set_ftrace_notrace main, tracer on, dlopen, 10 calls (traced)
 *   close    tracer on, dlopen, fn_dl_call whose callback longjmps out of it (its frame left
 *            open on the shadow stack), dlclose (unloaded), dlopen again, 10 calls; the
 *            tracer switched off and on (a new generation meets the frame), 10 calls
 *   runpath  tracer on, dlopen of LIB's file name without its directory, which only
 *            fn_dlopen's RUNPATH has (glibc searches the caller's), 10 calls
 *   loop     LIB loaded, tracer on; one thread makes 2000 calls of fn_dl_work while another
 *            loads LIB2 (and LIB again), calls fn_dl_work2 once and unloads both, 50 times
 * The tracer off and the session stopped (OUT written), it prints the sum of the results. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>

typedef int (*work_fn)(int);

static work_fn sym(void *h, const char *name)
{
  work_fn fn;
  *(void **)&fn = h ? dlsym(h, name) : NULL;
  return fn;
}

static int calls(work_fn fn, int n)
{
  int sum = 0;
  for (int i = 0; i < n; i++)
    sum += fn(i % 10);
  return sum;
}

static jmp_buf out;
static int jump_out(int x)
{
  longjmp(out, x + 1);
}

static const char *lib2;
static pthread_barrier_t start;
static int loads_sum = -1;

/* Loads lib2 (and lib once more), calls it once, unloads both: 50 times. */
static void *loader(void *lib)
{
  pthread_barrier_wait(&start);
  int sum = 0;
  for (int i = 0; i < 50; i++) {
    void *h2 = dlopen(lib2, RTLD_NOW | RTLD_LOCAL), *h1 = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    work_fn fn = sym(h2, "fn_dl_work2");
    if (!fn || !h1)
      return NULL;
    sum += fn(i % 10);
    dlclose(h1);
    dlclose(h2);
    if (dlopen(lib2, RTLD_NOW | RTLD_NOLOAD)) /* unloaded: the next dlopen maps it again */
      return NULL;
  }
  loads_sum = sum;
  return NULL;
}

static int run(const char *lib, const char *mode)
{
  if (strcmp(mode, "filter") == 0 && fxt_fs_echo("set_ftrace_filter", "main") < 0)
    return -1;
  if (strcmp(mode, "notrace") == 0 && fxt_fs_echo("set_ftrace_notrace", "main") < 0)
    return -1;
  void *h = strcmp(mode, "before") == 0 ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (fxt_fs_echo("current_tracer", "function_graph") < 0)
    return -1;
  if (strcmp(mode, "runpath") == 0)
    h = strrchr(lib, '/') ? dlopen(strrchr(lib, '/') + 1, RTLD_NOW | RTLD_LOCAL) : NULL;
  else if (!h)
    h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (strcmp(mode, "close") == 0) {
    int (*call)(work_fn, int);
    *(void **)&call = h ? dlsym(h, "fn_dl_call") : NULL;
    if (!call || setjmp(out) == 0) {
      if (call)
        call(jump_out, 0);
      return -1;
    }
    dlclose(h);
    if (dlopen(lib, RTLD_NOW | RTLD_NOLOAD))
      return -1; /* not unloaded */
    h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    int sum = calls(sym(h, "fn_dl_work"), 10);
    if (fxt_fs_echo("current_tracer", "nop") < 0 ||
        fxt_fs_echo("current_tracer", "function_graph") < 0)
      return -1;
    return sum + calls(sym(h, "fn_dl_work"), 10);
  }
  if (strcmp(mode, "loop") == 0) {
    pthread_t t;
    pthread_barrier_init(&start, NULL, 2);
    if (!sym(h, "fn_dl_work") || pthread_create(&t, NULL, loader, (void *)lib) != 0)
      return -1;
    pthread_barrier_wait(&start);
    int sum = calls(sym(h, "fn_dl_work"), 2000);
    pthread_join(t, NULL);
    return loads_sum < 0 ? -1 : sum + loads_sum;
  }
  work_fn fn = sym(h, "fn_dl_work");
  return fn ? calls(fn, 10) : -1;
}

int main(int argc, char **argv)
{
  if (argc != 5)
    return 2;
  lib2 = argv[2];
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "", .output = argv[4]};
  if (fxt_session_start(&cfg) != 0)
    return 1;
  int sum = run(argv[1], argv[3]);
  if (sum < 0 || fxt_fs_echo("current_tracer", "nop") < 0 || fxt_session_stop() != 0)
    return 1;
  printf("%d\n", sum);
  return 0;
}
