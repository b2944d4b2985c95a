/* fuzz/fuzz_elfsyms.c - libFuzzer target for fxt_fn_elf_functions(), fxt_fn_elf_sections() and
 * fxt_fn_elf_imports() (src/host/functions_syms.c), the function tracer's readers of the symbol
 * tables, the section headers (the patchable-entry engine's __patchable_function_entries) and
 * the imports (-finstrument-functions' hooks) of the ELF files a process has loaded.
 *
 * The input is the image (in a heap buffer of exactly its size, so ASan sees any byte read
 * past it). Properties checked (abort() on any violation, on top of ASan/UBSan):
 *  - the result is 0 or FXT_EINVAL (the callback never fails here);
 *  - every name is inside the image and NUL-terminated there;
 *  - there are no more functions than 24-byte symbols fit in the image;
 *  - a callback that fails at the k-th function stops the walk there with its code;
 *  - the sections walk returns 0 or FXT_EINVAL, with no more sections than 64-byte headers fit;
 *  - the imports check returns 1, 0 or FXT_EINVAL, and 1 only for an image that holds the name.
 * Seeds: corpus/elfsyms (a small shared object with .symtab, the same stripped to .dynsym, a
 * relocatable object; patchable.o, built with -fpatchable-function-entry=11,9;
 * instrumented.so, built with -finstrument-functions: it imports the hooks).
 */
#define _GNU_SOURCE /* memmem */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fxtrace/errors.h>

#include "host/functions_int.h"

struct walk {
  const unsigned char *base;
  size_t size;
  uint64_t n, stop_at;
};

static void check(int ok)
{
  if (!ok)
    abort();
}

static int on_section(void *ctx, uint64_t addr, uint64_t size)
{
  (void)addr, (void)size;
  ++*(uint64_t *)ctx;
  return 0;
}

static int on_function(void *ctx, const char *name, uint64_t value, uint64_t size, bool global)
{
  struct walk *w = ctx;
  (void)value, (void)size, (void)global;
  const unsigned char *p = (const unsigned char *)name;
  check(p >= w->base && p < w->base + w->size);
  check(memchr(p, 0, (size_t)(w->base + w->size - p)) != NULL);
  if (++w->n == w->stop_at)
    return -12345;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  unsigned char *img = malloc(size ? size : 1);
  if (!img)
    return 0;
  memcpy(img, data, size);
  struct walk w = {img, size, 0, 0};
  int rc = fxt_fn_elf_functions(img, size, on_function, &w);
  check(rc == 0 || rc == FXT_EINVAL);
  check(w.n <= size / 24);
  if (rc == 0 && w.n > 0) {
    struct walk s = {img, size, 0, (w.n + 1) / 2};
    check(fxt_fn_elf_functions(img, size, on_function, &s) == -12345);
    check(s.n == s.stop_at);
  }
  uint64_t sections = 0;
  rc = fxt_fn_elf_sections(img, size, "__patchable_function_entries", on_section, &sections);
  check(rc == 0 || rc == FXT_EINVAL);
  check(sections <= size / 64);
  static const char hook[] = "__cyg_profile_func_enter";
  rc = fxt_fn_elf_imports(img, size, hook);
  check(rc == 0 || rc == 1 || rc == FXT_EINVAL);
  check(rc != 1 || memmem(img, size, hook, sizeof(hook)) != NULL);
  free(img);
  return 0;
}
