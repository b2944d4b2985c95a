/* src/host/module.h - the modules a traced process loads only when it needs them (the
 * trace.dat writer: outfile.h; the recovery of dead sessions: harvest.h). A module is found
 * beside the object this code is in (libfxtrace.so; a program linked with libfxtrace.a: the
 * program, wherever it was started from), else in the directory it was installed in
 * (FXT_MODULE_DIR, CMakeLists.txt).
 *
 * dlopen takes the dynamic loader's locks and allocates: never call this from a signal
 * handler, nor in a child of fork before it execs (harvest.h says how the harvest avoids it).
 */
#ifndef FXTRACE_HOST_MODULE_H
#define FXTRACE_HOST_MODULE_H

#include <stddef.h>

/* Loads the module file `name` (RTLD_NOW | RTLD_LOCAL) and returns the address of its symbol
 * entry, with *handle set to what dlclose takes. NULL when it cannot be loaded or lacks entry:
 * why says why (dlerror's text of the last place tried), and nothing stays loaded. */
void *fxt_module_load(const char *name, const char *entry, void **handle, char *why,
                      size_t why_size);

#endif /* FXTRACE_HOST_MODULE_H */
