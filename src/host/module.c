/* src/host/module.c - loading a module on demand (module.h). */
#define _GNU_SOURCE
#include "module.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

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
  /* Beside the object this code is in, else where it was installed. */
  void *h = NULL;
  Dl_info info;
  if (dladdr(&anchor, &info) != 0 && info.dli_fname != NULL) {
    const char *slash = strrchr(info.dli_fname, '/');
    if (slash != NULL)
      h = open_in(info.dli_fname, (size_t)(slash - info.dli_fname), name, why, why_size);
  }
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
