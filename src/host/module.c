/* src/host/module.c - loading a module on demand (module.h). */
#define _GNU_SOURCE
#include "module.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* dlopen of name in dir; NULL with why set when it fails. */
static void *open_in(const char *dir, size_t dir_len, const char *name, char *why,
                     size_t why_size) {
  char path[PATH_MAX];
  int n = snprintf(path, sizeof path, "%.*s/%s", (int)dir_len, dir, name);
  void *h = n > 0 && (size_t)n < sizeof path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (h == NULL) {
    const char *e = dlerror();
    snprintf(why, why_size, "%s", e ? e : "path too long");
  }
  return h;
}

static char anchor; /* an address in the object this code is in, for dladdr */

void *fxt_module_load(const char *name, const char *entry, void **handle, char *why,
                      size_t why_size) {
  /* Beside the object this code is in, else where it was installed. dladdr names a program
   * (linked with libfxtrace.a) by its argv[0], which may hold no directory (an exec by name):
   * then the kernel's link to it says where it is. */
  void *h = NULL;
  Dl_info info;
  char exe[PATH_MAX];
  const char *file = dladdr(&anchor, &info) != 0 ? info.dli_fname : NULL;
  if (file != NULL && strchr(file, '/') == NULL) {
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    file = exe;
  }
  const char *slash = file ? strrchr(file, '/') : NULL;
  if (slash != NULL)
    h = open_in(file, (size_t)(slash - file), name, why, why_size);
  if (h == NULL)
    h = open_in(FXT_MODULE_DIR, strlen(FXT_MODULE_DIR), name, why, why_size);
  void *sym = h ? dlsym(h, entry) : NULL;
  if (sym == NULL && h != NULL) {
    snprintf(why, why_size, "%s", dlerror());
    dlclose(h);
  }
  *handle = sym ? h : NULL;
  return sym;
}
