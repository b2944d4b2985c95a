/* functions_syms.c - the function tracer's names: the functions of the loaded objects, read
 * from the objects' ELF files (.symtab, else .dynsym) when the tracer is set up, sorted by
 * address with a hash of entry addresses for the hooks (functions_int.h). The objects whose
 * functions can be traced always; the others (libc, the tracer's own libraries) once the
 * function tracer, which names callers, was on.
 *
 * Built on the control side (allocates, opens files) under fxt_fn_lock; published with a
 * release store that pairs with the hooks' acquire load in fxt_fn_table_current, and never
 * freed: a hook may be reading a table at any time, and a rebuild happens only when objects
 * were loaded or unloaded (dl_iterate_phdr's adds and subs counters moved) and no table was
 * built before for the same objects (fxt_fn_dl_signature: that one is published again, so
 * a library loaded and unloaded in a loop costs one table, not one per load). Addresses are the
 * symbols' values plus each object's load bias, so PIE executables and ASLR need nothing more.
 * C++ names are demangled with __cxa_demangle when the process has it (found with dlsym:
 * C programs do not need libstdc++).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fxtrace/errors.h>

#include "../base/elf.h"
#include "../base/grow.h"
#include "functions_int.h"

/* The published table (functions_int.h: fxt_fn_table_current, fxt_fn_sym_entry). */
_Atomic(struct fxt_fn_table *) fxt_fn_table_pub;

struct fxt_fn_sym *fxt_fn_sym_at(const struct fxt_fn_table *t, uintptr_t addr)
{
  uint32_t lo = 0, hi = t->n; /* the last sym with sym.addr <= addr */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (t->syms[mid].addr <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0)
    return NULL;
  struct fxt_fn_sym *s = &t->syms[lo - 1];
  return addr - s->addr < (s->size ? s->size : 1) ? s : NULL;
}

/* ---- reading the objects ---------------------------------------------------------------- */

struct build {
  struct fxt_fn_sym *syms;
  size_t n, cap;
  char **objs;
  size_t nobjs, objcap;
  char *(*demangle)(const char *, char *, size_t *, int *);
  uint64_t sig; /* fxt_fn_dl_signature's, of the objects read */
  bool first, failed;
  bool all; /* every object's functions, not only the traceable ones' */
};

static char *name_copy(struct build *b, const char *name)
{
  if (b->demangle && name[0] == '_' && name[1] == 'Z') {
    int status = 0;
    char *d = b->demangle(name, NULL, NULL, &status);
    if (d && status == 0)
      return d;
    free(d);
  }
  return strdup(name);
}

int fxt_fn_elf_functions(const void *image, size_t size, fxt_fn_elf_fn fn, void *ctx)
{
  struct fxt_elf e; /* headers read with memcpy (src/base/elf.h): offsets need not be aligned */
  const char *why;
  if (fxt_elf_open(&e, image, size, &why) != 0)
    return FXT_EINVAL;
  const unsigned char *m = image;
  Elf64_Shdr sym, str;
  bool found = false;
  for (int pass = 0; pass < 2 && !found; pass++) /* .symtab (static functions too), .dynsym */
    for (uint32_t i = 0; i < e.eh.e_shnum && !found; i++)
      found = fxt_elf_shdr(&e, i, &sym) && sym.sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM);
  if (!found)
    return 0;
  if (sym.sh_entsize != sizeof(Elf64_Sym) || !fxt_elf_shdr(&e, sym.sh_link, &str) ||
      sym.sh_type == SHT_NOBITS || str.sh_type == SHT_NOBITS || !fxt_elf_in_image(&e, &sym) ||
      !fxt_elf_in_image(&e, &str) || str.sh_size == 0)
    return FXT_EINVAL;
  const char *names = (const char *)m + str.sh_offset;
  uint64_t count = sym.sh_size / sizeof(Elf64_Sym);
  for (uint64_t i = 0; i < count; i++) {
    Elf64_Sym s;
    fxt_elf_read(&e, sym.sh_offset + i * sizeof s, &s, sizeof s);
    unsigned type = ELF64_ST_TYPE(s.st_info);
    if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
        s.st_value == 0 || s.st_name >= str.sh_size ||
        !memchr(names + s.st_name, 0, str.sh_size - s.st_name))
      continue;
    int rc = fn(ctx, names + s.st_name, s.st_value, s.st_size,
                ELF64_ST_BIND(s.st_info) != STB_LOCAL);
    if (rc != 0)
      return rc;
  }
  return 0;
}

int fxt_fn_elf_imports(const void *image, size_t size, const char *name)
{
  struct fxt_elf e; /* src/base/elf.h: every header copied out, checked against the image */
  const char *why;
  if (fxt_elf_open(&e, image, size, &why) != 0)
    return FXT_EINVAL;
  Elf64_Shdr sym, str, sh;
  uint32_t dynsym = 0;
  for (uint32_t i = 0; i < e.eh.e_shnum && !dynsym; i++)
    if (fxt_elf_shdr(&e, i, &sym) && sym.sh_type == SHT_DYNSYM)
      dynsym = i;
  if (!dynsym)
    return 0; /* no dynamic symbols (a static executable, a relocatable object) */
  if (sym.sh_entsize != sizeof(Elf64_Sym) || !fxt_elf_shdr(&e, sym.sh_link, &str) ||
      sym.sh_type == SHT_NOBITS || str.sh_type == SHT_NOBITS || !fxt_elf_in_image(&e, &sym) ||
      !fxt_elf_in_image(&e, &str))
    return FXT_EINVAL;
  uint64_t count = sym.sh_size / sizeof(Elf64_Sym);
  /* .gnu.hash covers the defined symbols, which the linker puts last: its second word
   * (symoffset) is the first of them, and every import is before it. */
  for (uint32_t i = 0; i < e.eh.e_shnum; i++) {
    uint32_t head[2];
    if (fxt_elf_shdr(&e, i, &sh) && sh.sh_type == SHT_GNU_HASH && sh.sh_link == dynsym &&
        sh.sh_size >= sizeof(head) && fxt_elf_read(&e, sh.sh_offset, head, sizeof(head)) &&
        head[1] < count)
      count = head[1];
  }
  const char *names = (const char *)image + str.sh_offset;
  size_t len = strlen(name);
  for (uint64_t i = 1; i < count; i++) {
    Elf64_Sym s;
    fxt_elf_read(&e, sym.sh_offset + i * sizeof s, &s, sizeof s);
    if (s.st_shndx == SHN_UNDEF && s.st_name < str.sh_size && str.sh_size - s.st_name > len &&
        memcmp(names + s.st_name, name, len + 1) == 0)
      return 1;
  }
  return 0;
}

int fxt_fn_elf_sections(const void *image, size_t size, const char *name,
                        fxt_fn_elf_section_fn fn, void *ctx)
{
  struct fxt_elf e; /* src/base/elf.h: every header copied out, checked against the image */
  const char *why;
  if (fxt_elf_open(&e, image, size, &why) != 0)
    return FXT_EINVAL;
  if (e.eh.e_shnum == 0)
    return 0;
  const unsigned char *m = image;
  Elf64_Shdr sh, str;
  if (!fxt_elf_shdr(&e, e.eh.e_shstrndx, &str) || str.sh_type == SHT_NOBITS ||
      !fxt_elf_in_image(&e, &str))
    return FXT_EINVAL;
  size_t len = strlen(name);
  for (uint32_t i = 0; i < e.eh.e_shnum; i++) {
    if (!fxt_elf_shdr(&e, i, &sh) || !(sh.sh_flags & SHF_ALLOC) || sh.sh_type == SHT_NOBITS ||
        sh.sh_name >= str.sh_size || str.sh_size - sh.sh_name < len + 1 ||
        memcmp(m + str.sh_offset + sh.sh_name, name, len + 1) != 0)
      continue;
    int rc = fn(ctx, sh.sh_addr, sh.sh_size);
    if (rc != 0)
      return rc;
  }
  return 0;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    h = (h ^ ((const uint8_t *)p)[i]) * 0x100000001b3ull;
  return h;
}

/* Folds one object into a signature (fxt_fn_dl_signature): the first object is the
 * executable, whose file is /proc/self/exe. */
static void sig_add(uint64_t *h, const struct dl_phdr_info *info, bool exe)
{
  const char *name = info->dlpi_name ? info->dlpi_name : "";
  struct stat st;
  memset(&st, 0, sizeof st);
  if (exe || strchr(name, '/'))
    (void)stat(exe ? "/proc/self/exe" : name, &st);
  uint64_t v[5] = {info->dlpi_addr, (uint64_t)st.st_ino, (uint64_t)st.st_size,
                   (uint64_t)st.st_mtim.tv_sec, (uint64_t)st.st_mtim.tv_nsec};
  *h = fnv(fnv(*h, v, sizeof v), name, strlen(name) + 1);
}

#define SIG_SEED 0xcbf29ce484222325ull

struct object {
  struct build *b;
  uintptr_t bias;
  uint32_t obj;
  bool traceable;
};

static int add_function(void *ctx, const char *name, uint64_t value, uint64_t size, bool global)
{
  struct object *o = ctx;
  struct build *b = o->b;
  if (!fxt_grow((void **)&b->syms, &b->cap, b->n + 1, sizeof(*b->syms), 4096))
    return FXT_ENOMEM;
  struct fxt_fn_sym *f = &b->syms[b->n];
  memset(f, 0, sizeof(*f));
  f->addr = o->bias + value;
  f->size = size;
  f->obj = o->obj;
  f->traceable = o->traceable;
  f->name = name_copy(b, name);
  if (!f->name)
    return FXT_ENOMEM;
  /* flags holds the binding until the table is sorted (by_addr): a global one first */
  atomic_init(&f->flags, global ? 1u : 0u);
  b->n++;
  return 0;
}

/* The functions of the ELF file at path, loaded at bias. A file that is not a readable ELF
 * of our class is skipped. */
void *fxt_fn_map_file(const char *path, size_t *size)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  struct stat st;
  void *map = MAP_FAILED;
  if (fstat(fd, &st) == 0 && st.st_size > 0)
    map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED)
    return NULL;
  *size = (size_t)st.st_size;
  return map;
}

static int any_section(void *ctx, uint64_t addr, uint64_t size)
{
  (void)addr;
  *(bool *)ctx |= size != 0;
  return 0;
}

/* Whether the functions of the ELF image can be traced: it has patchable entries, or calls
 * -finstrument-functions' hooks (imports them: the shim or libfxtrace defines them). */
static bool traceable_image(const void *map, size_t size)
{
  bool sites = false;
  fxt_fn_elf_sections(map, size, "__patchable_function_entries", any_section, &sites);
  return sites || fxt_fn_elf_imports(map, size, "__cyg_profile_func_enter") == 1 ||
         fxt_fn_elf_imports(map, size, "__cyg_profile_func_exit") == 1;
}

static void read_object(struct build *b, const char *path, uintptr_t bias, uint32_t obj)
{
  size_t size;
  void *map = fxt_fn_map_file(path, &size);
  if (!map)
    return;
  /* The executable's always (where a program's code usually is, whatever it was built with). */
  struct object o = {b, bias, obj, obj == 0 || traceable_image(map, size)};
  if ((o.traceable || b->all) && fxt_fn_elf_functions(map, size, add_function, &o) == FXT_ENOMEM)
    b->failed = true;
  munmap(map, size);
}

static int object_fn(struct dl_phdr_info *info, size_t sz, void *ctx)
{
  (void)sz;
  struct build *b = ctx;
  const char *name = info->dlpi_name;
  bool exe = b->nobjs == 0; /* the executable comes first */
  sig_add(&b->sig, info, b->first);
  b->first = false;
  if (!exe && (!name || !strchr(name, '/')))
    return 0; /* the vDSO: no file */
  if (!fxt_grow((void **)&b->objs, &b->objcap, b->nobjs + 1, sizeof(*b->objs), 16)) {
    b->failed = true;
    return 1;
  }
  const char *base = exe ? "" : strrchr(name, '/') + 1;
  b->objs[b->nobjs] = strdup(base);
  if (!b->objs[b->nobjs]) {
    b->failed = true;
    return 1;
  }
  read_object(b, exe ? "/proc/self/exe" : name, info->dlpi_addr, (uint32_t)b->nobjs);
  b->nobjs++;
  return 0;
}

static int by_addr(const void *x, const void *y)
{
  const struct fxt_fn_sym *a = x, *b = y;
  if (a->addr != b->addr)
    return a->addr < b->addr ? -1 : 1;
  /* At one address, a global name first (malloc before __libc_malloc's local alias). */
  uint32_t ga = atomic_load_explicit(&a->flags, memory_order_relaxed);
  uint32_t gb = atomic_load_explicit(&b->flags, memory_order_relaxed);
  return ga == gb ? strcmp(a->name, b->name) : ga > gb ? -1 : 1;
}

static int counts_fn(struct dl_phdr_info *info, size_t sz, void *ctx)
{
  uint64_t *c = ctx;
  (void)sz;
  c[0] = info->dlpi_adds;
  c[1] = info->dlpi_subs;
  return 1;
}

void fxt_fn_dl_counts(uint64_t counts[2])
{
  counts[0] = counts[1] = 0;
  dl_iterate_phdr(counts_fn, counts);
}

struct sig_walk {
  uint64_t h;
  bool first;
};

static int signature_fn(struct dl_phdr_info *info, size_t sz, void *ctx)
{
  (void)sz;
  struct sig_walk *w = ctx;
  sig_add(&w->h, info, w->first);
  w->first = false;
  return 0;
}

uint64_t fxt_fn_dl_signature(void)
{
  struct sig_walk w = {SIG_SEED, true};
  dl_iterate_phdr(signature_fn, &w);
  return w.h;
}

/* A rebuild keeps the filters: the flags of each function of the old table that has some go
 * to the functions of the same name in the new one. */
static void keep_flags(const struct fxt_fn_table *old, struct fxt_fn_table *t)
{
  for (uint32_t i = 0; old && i < old->n; i++) {
    uint32_t fl = atomic_load_explicit(&old->syms[i].flags, memory_order_relaxed);
    for (uint32_t j = 0; fl && j < t->n; j++)
      if (t->syms[j].traceable && strcmp(old->syms[i].name, t->syms[j].name) == 0)
        atomic_store_explicit(&t->syms[j].flags, fl, memory_order_relaxed);
  }
}

static bool want_all; /* fxt_fn_table_all was called (under fxt_fn_lock) */

/* Every table built, newest first (under fxt_fn_lock). */
static struct fxt_fn_table *tables;

/* A table built before for the same objects, made current: its flags those of the current
 * one (old), as a rebuild's. */
static struct fxt_fn_table *reuse(struct fxt_fn_table *old, uint64_t sig, const uint64_t *counts)
{
  struct fxt_fn_table *t = tables;
  while (t && (t->sig != sig || (want_all && !t->all)))
    t = t->prev;
  if (!t)
    return NULL;
  if (t != old) {
    for (uint32_t i = 0; i < t->n; i++)
      atomic_store_explicit(&t->syms[i].flags, 0, memory_order_relaxed);
    keep_flags(old, t);
  }
  t->adds = counts[0];
  t->subs = counts[1];
  /* Release pairs with the acquire in fxt_fn_table_current (the table was whole already). */
  atomic_store_explicit(&fxt_fn_table_pub, t, memory_order_release);
  return t;
}

void fxt_fn_table_all(void)
{
  want_all = true;
}

struct fxt_fn_table *fxt_fn_table_update(void)
{
  struct fxt_fn_table *old = fxt_fn_table_current();
  uint64_t counts[2];
  fxt_fn_dl_counts(counts);
  if (old && old->adds == counts[0] && old->subs == counts[1] && (old->all || !want_all))
    return old;
  uint64_t sig = fxt_fn_dl_signature();
  struct fxt_fn_table *again = reuse(old, sig, counts);
  if (again)
    return again;
  struct build b = {.sig = SIG_SEED, .first = true, .all = want_all};
  *(void **)&b.demangle = dlsym(RTLD_DEFAULT, "__cxa_demangle");
  dl_iterate_phdr(object_fn, &b);
  struct fxt_fn_table *t = calloc(1, sizeof(*t));
  if (b.failed || !t) {
    free(t);
    return old; /* what was read stays allocated: rare, and the process is short of memory */
  }
  qsort(b.syms, b.n, sizeof(*b.syms), by_addr);
  size_t w = 0; /* one function per address */
  for (size_t r = 0; r < b.n; r++) {
    if (w > 0 && b.syms[w - 1].addr == b.syms[r].addr) {
      free((void *)b.syms[r].name);
      continue;
    }
    b.syms[w++] = b.syms[r];
  }
  uint32_t slots = 16;
  while (slots < 2 * w)
    slots *= 2;
  t->hash = calloc(slots, sizeof(*t->hash));
  if (!t->hash) {
    free(t);
    return old;
  }
  t->syms = b.syms;
  t->n = (uint32_t)w;
  t->mask = slots - 1;
  t->objs = b.objs;
  t->nobjs = (uint32_t)b.nobjs;
  t->adds = counts[0];
  t->subs = counts[1];
  for (uint32_t i = 0; i < t->n; i++) {
    atomic_store_explicit(&t->syms[i].flags, 0, memory_order_relaxed);
    uint32_t h = fxt_fn_hash_addr(t->syms[i].addr, t->mask);
    while (t->hash[h])
      h = (h + 1) & t->mask;
    t->hash[h] = i + 1;
  }
  keep_flags(old, t);
  t->sig = b.sig;
  t->all = b.all;
  t->prev = tables;
  tables = t;
  /* Release pairs with the acquire in fxt_fn_table_current. */
  atomic_store_explicit(&fxt_fn_table_pub, t, memory_order_release);
  return t;
}
