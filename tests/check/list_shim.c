/* list_shim.c - the reference of the list_events test: preloaded (LD_PRELOAD) into a program
 * linked with libfxtrace.so, it writes what the program's live tracefs tree serves, at its
 * exit: available_events to $FXT_LIST_OUT, and each event's format file, after a line
 * "==== system:event", to $FXT_LIST_OUT.formats. $FXT_LIST_DLOPEN: a shared object it loads
 * first (dlopen), so a library's events are listed too.
 *
 * The dump must run while every object is loaded with its tracepoints registered, so before
 * the objects' destructors: an atexit handler registered after __libc_start_main registered
 * the loader's (which runs the destructors, last). A preloaded constructor runs before that,
 * so the handler is registered from __libc_start_main itself, interposed here (glibc).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fxtrace/tracefs.h>

static char g_buf[1 << 20], g_names[1 << 20];

static void dump(void)
{
  const char *out = getenv("FXT_LIST_OUT");
  char path[4096];
  snprintf(path, sizeof path, "%s.formats", out);
  FILE *ev = fopen(out, "w"), *fm = fopen(path, "w");
  ssize_t n = fxt_fs_cat("available_events", g_names, sizeof g_names - 1);
  if (ev == NULL || fm == NULL || n < 0) {
    fprintf(stderr, "list_shim: cannot write %s or read available_events\n", out);
    _Exit(99);
  }
  fwrite(g_names, 1, (size_t)n, ev);
  g_names[n] = 0;
  for (char *line = strtok(g_names, "\n"); line != NULL; line = strtok(NULL, "\n")) {
    char *colon = strchr(line, ':');
    char fmt_path[2048];
    snprintf(fmt_path, sizeof fmt_path, "events/%.*s/%s/format", (int)(colon - line), line,
             colon + 1);
    ssize_t k = fxt_fs_cat(fmt_path, g_buf, sizeof g_buf);
    if (k < 0)
      continue; /* a name the tree's paths cannot hold (a printk format with a '/') */
    fprintf(fm, "==== %s\n", line);
    fwrite(g_buf, 1, (size_t)k, fm);
  }
  fclose(ev);
  fclose(fm);
}

typedef int (*main_fn)(int, char **, char **);
typedef int (*start_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void),
                        void *);
static main_fn g_main;

static int main_wrap(int argc, char **argv, char **envp)
{
  if (getenv("FXT_LIST_OUT") != NULL)
    atexit(dump); /* after the loader's handler: runs before it */
  return g_main(argc, argv, envp);
}

int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack_end);
int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
  void *sym = dlsym(RTLD_NEXT, "__libc_start_main");
  start_fn real;
  memcpy(&real, &sym, sizeof real); /* ISO C has no object-to-function pointer cast */
  g_main = main;
  return real(main_wrap, argc, argv, init, fini, rtld_fini, stack_end);
}

__attribute__((constructor)) static void shim_init(void)
{
  const char *lib = getenv("FXT_LIST_DLOPEN");
  if (lib != NULL && *lib != 0 && dlopen(lib, RTLD_NOW | RTLD_GLOBAL) == NULL) {
    fprintf(stderr, "list_shim: %s\n", dlerror());
    _Exit(98);
  }
}
