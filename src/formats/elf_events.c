/* src/formats/elf_events.c - the tracepoints of an ELF file: its "fxt_tp" section's pointers,
 * relocated, and the structs and strings they point to, read by virtual address from the
 * file's sections (src/formats/elf_events.h). */
#include "elf_events.h"

#include <stdarg.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fxtrace/errors.h>

#include "../base/elf.h"
#include "../base/grow.h"

/* This host's machine and the two relocations that fill a data pointer. */
#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#define HOST_NAME "x86-64"
#define HOST_R_RELATIVE R_X86_64_RELATIVE
#define HOST_R_ABS64 R_X86_64_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#define HOST_NAME "AArch64"
#define HOST_R_RELATIVE R_AARCH64_RELATIVE
#define HOST_R_ABS64 R_AARCH64_ABS64
#endif

/* A relocated pointer: the value the loader stores at off (ok false: a symbol of another
 * object, unknown here). */
struct reloc {
  uint64_t off, value;
  bool ok;
};

struct reader {
  struct fxt_elf e;
  Elf64_Shdr *alloc; /* the sections loaded at an address (SHF_ALLOC) */
  size_t nalloc, alloc_cap;
  struct reloc *rel; /* sorted by off */
  size_t nrel, rel_cap;
  char *err;
  size_t err_size;
};

__attribute__((format(printf, 3, 4))) static int fail(struct reader *r, int code,
                                                        const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->err, r->err_size, fmt, ap);
  va_end(ap);
  return code;
}

/* The loaded section holding the n bytes at address va; NULL when none holds them all. */
static const Elf64_Shdr *section_at(const struct reader *r, uint64_t va, uint64_t n)
{
  for (size_t i = 0; i < r->nalloc; i++) {
    const Elf64_Shdr *s = &r->alloc[i];
    if (va >= s->sh_addr && va - s->sh_addr <= s->sh_size && n <= s->sh_size - (va - s->sh_addr))
      return s;
  }
  return NULL;
}

/* n bytes at address va as the file holds them (.bss and other NOBITS sections: zeros). */
static bool read_va(const struct reader *r, uint64_t va, void *out, size_t n)
{
  const Elf64_Shdr *s = section_at(r, va, n);
  if (s == NULL)
    return false;
  if (s->sh_type == SHT_NOBITS) {
    memset(out, 0, n);
    return true;
  }
  return fxt_elf_read(&r->e, s->sh_offset + (va - s->sh_addr), out, n);
}

static int by_off(const void *a, const void *b)
{
  const struct reloc *x = a, *y = b;
  return x->off < y->off ? -1 : x->off > y->off;
}

/* The pointer at address va once the loader relocated it. */
static bool read_ptr(const struct reader *r, uint64_t va, uint64_t *out)
{
  const struct reloc key = {va, 0, false};
  const struct reloc *x = r->nrel ? bsearch(&key, r->rel, r->nrel, sizeof key, by_off) : NULL;
  if (x != NULL) {
    *out = x->value;
    return x->ok;
  }
  return read_va(r, va, out, sizeof *out); /* not relocated, or RELR: the value in place */
}

/* The NUL-terminated string at address va, inside one section of the file. */
static const char *read_str(const struct reader *r, uint64_t va)
{
  const Elf64_Shdr *s = section_at(r, va, 1);
  if (s == NULL || s->sh_type == SHT_NOBITS)
    return NULL;
  uint64_t at = s->sh_offset + (va - s->sh_addr), left = s->sh_size - (va - s->sh_addr);
  const char *p = (const char *)r->e.image + at; /* inside: fxt_elf_in_image at collection */
  return memchr(p, 0, left) ? p : NULL;
}

/* The pointer relocations of one SHT_RELA section. */
static int add_relocs(struct reader *r, const Elf64_Shdr *s)
{
  Elf64_Shdr symtab;
  bool have_syms = fxt_elf_shdr(&r->e, s->sh_link, &symtab) &&
                   (symtab.sh_type == SHT_DYNSYM || symtab.sh_type == SHT_SYMTAB) &&
                   symtab.sh_entsize == sizeof(Elf64_Sym) && fxt_elf_in_image(&r->e, &symtab);
  uint64_t n = s->sh_size / sizeof(Elf64_Rela);
  for (uint64_t i = 0; i < n; i++) {
    Elf64_Rela rela;
    fxt_elf_read(&r->e, s->sh_offset + i * sizeof rela, &rela, sizeof rela); /* in image */
    uint64_t type = ELF64_R_TYPE(rela.r_info), sym = ELF64_R_SYM(rela.r_info);
    struct reloc x = {rela.r_offset, (uint64_t)rela.r_addend, true};
    if (type == HOST_R_ABS64) {
      Elf64_Sym st;
      x.ok = have_syms && sym < symtab.sh_size / sizeof st &&
             fxt_elf_read(&r->e, symtab.sh_offset + sym * sizeof st, &st, sizeof st) &&
             st.st_shndx != SHN_UNDEF;
      x.value = x.ok ? st.st_value + (uint64_t)rela.r_addend : 0;
    } else if (type != HOST_R_RELATIVE) {
      continue; /* not a data pointer's (GLOB_DAT, JUMP_SLOT, COPY, TLS...) */
    }
    if (!fxt_grow((void **)&r->rel, &r->rel_cap, r->nrel + 1, sizeof *r->rel, 256))
      return fail(r, FXT_ENOMEM, "out of memory");
    r->rel[r->nrel++] = x;
  }
  return 0;
}

/* The section headers: the loaded ones kept, the relocations read, fxt_tp found (*tp). */
static int scan(struct reader *r, Elf64_Shdr *tp, bool *found)
{
  const Elf64_Ehdr *eh = &r->e.eh;
  Elf64_Shdr s0, names;
  uint32_t shstrndx = eh->e_shstrndx;
  if (shstrndx == SHN_XINDEX && fxt_elf_shdr(&r->e, 0, &s0))
    shstrndx = s0.sh_link;
  if (!fxt_elf_shdr(&r->e, shstrndx, &names) || names.sh_type == SHT_NOBITS ||
      !fxt_elf_in_image(&r->e, &names))
    return fail(r, FXT_EINVAL, "no section names (e_shstrndx %" PRIu64 ")", (uint64_t)shstrndx);
  *found = false;
  for (uint32_t i = 0; i < eh->e_shnum; i++) {
    Elf64_Shdr s;
    fxt_elf_shdr(&r->e, i, &s); /* inside: fxt_elf_open checked the table */
    if (!fxt_elf_in_image(&r->e, &s))
      return fail(r, FXT_EINVAL, "section %" PRIu64 " is outside the file", (uint64_t)i);
    /* A thread-local section's addresses are a template's, overlapping others': not data */
    if ((s.sh_flags & (SHF_ALLOC | SHF_TLS)) == SHF_ALLOC && s.sh_size > 0 &&
        s.sh_addr + s.sh_size >= s.sh_addr) {
      if (!fxt_grow((void **)&r->alloc, &r->alloc_cap, r->nalloc + 1, sizeof *r->alloc, 32))
        return fail(r, FXT_ENOMEM, "out of memory");
      r->alloc[r->nalloc++] = s;
    }
    if (s.sh_type == SHT_RELA && s.sh_entsize == sizeof(Elf64_Rela)) {
      int rc = add_relocs(r, &s);
      if (rc != 0)
        return rc;
    }
    static const char want[] = "fxt_tp";
    if (s.sh_name < names.sh_size && names.sh_size - s.sh_name >= sizeof want &&
        memcmp(r->e.image + names.sh_offset + s.sh_name, want, sizeof want) == 0) {
      *tp = s;
      *found = true;
    }
  }
  if (r->nrel > 1)
    qsort(r->rel, r->nrel, sizeof *r->rel, by_off);
  return 0;
}

/* The string of a tracepoint's member: a pointer at va to a NUL-terminated string (NULL
 * allowed only where null_ok). */
static int member_str(struct reader *r, uint64_t va, bool null_ok, const char **out,
                      uint64_t index, const char *what)
{
  uint64_t p = 0;
  bool ok = read_ptr(r, va, &p);
  *out = NULL;
  if (ok && p == 0 && null_ok)
    return 0;
  if (!ok || p == 0 || (*out = read_str(r, p)) == NULL)
    return fail(r, FXT_EINVAL, "tracepoint %" PRIu64 ": its %s is not a string in the file",
                index, what);
  return 0;
}

#define TP_AT(m) (va + offsetof(struct fxt_tracepoint, m))
#define FIELD_AT(m) (fa + offsetof(struct fxt_field, m))

/* The tracepoint at address va (the index-th of the section) into ev. */
static int read_tracepoint(struct reader *r, uint64_t va, uint64_t index, struct fxt_elf_event *ev)
{
  memset(ev, 0, sizeof *ev);
  struct fxt_tracepoint *tp = &ev->tp;
  uint16_t kind, nfields;
  uint32_t line;
  uint64_t fields = 0;
  int rc;
  if (!read_va(r, TP_AT(kind), &kind, sizeof kind) ||
      !read_va(r, TP_AT(nfields), &nfields, sizeof nfields) ||
      !read_va(r, TP_AT(line), &line, sizeof line) ||
      (nfields > 0 && !read_ptr(r, TP_AT(fields), &fields)))
    return fail(r, FXT_EINVAL, "tracepoint %" PRIu64 " is not in the file", index);
  if (kind > FXT_TP_PRINTK)
    return fail(r, FXT_EINVAL, "tracepoint %" PRIu64 ": unknown kind", index);
  if (nfields > FXT_MAX_FIELDS) /* a typed tracepoint's fields, an ad-hoc site's arguments */
    return fail(r, FXT_EINVAL, "tracepoint %" PRIu64 ": more fields than FXT_MAX_FIELDS",
                index);
  tp->kind = kind;
  tp->nfields = nfields;
  tp->line = line;
  if ((rc = member_str(r, TP_AT(system), false, &tp->system, index, "system")) != 0 ||
      (rc = member_str(r, TP_AT(name), false, &tp->name, index, "name")) != 0 ||
      (rc = member_str(r, TP_AT(print_fmt), true, &tp->print_fmt, index, "print_fmt")) != 0 ||
      (rc = member_str(r, TP_AT(file), true, &tp->file, index, "file")) != 0)
    return rc;
  for (uint64_t i = 0; i < tp->nfields; i++) {
    uint64_t fa = fields + i * sizeof(struct fxt_field);
    struct fxt_field *f = &ev->fields[i];
    if (!read_va(r, FIELD_AT(type), &f->type, sizeof f->type) ||
        !read_va(r, FIELD_AT(bound), &f->bound, sizeof f->bound))
      return fail(r, FXT_EINVAL, "tracepoint %" PRIu64 ": its fields are not in the file",
                  index);
    if ((rc = member_str(r, FIELD_AT(name), false, &f->name, index, "field name")) != 0)
      return rc;
  }
  tp->fields = tp->nfields ? ev->fields : NULL;
  return 0;
}

static int walk(struct reader *r, fxt_elf_event_fn fn, void *ctx)
{
  const Elf64_Ehdr *eh = &r->e.eh;
#ifdef HOST_MACHINE
  if (eh->e_machine != HOST_MACHINE)
    return fail(r, FXT_ENOSYS,
                "built for ELF machine %" PRIu64 ", not this host's " HOST_NAME
                " (fxtrace list reads its own host's ABI only)",
                (uint64_t)eh->e_machine);
#else
  return fail(r, FXT_ENOSYS, "fxtrace list does not know this host's ABI");
#endif
  if (eh->e_type == ET_REL)
    return fail(r, FXT_ENOSYS,
                "a relocatable object (.o): list the executable or shared object it is "
                "linked into");
  if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
    return fail(r, FXT_EINVAL, "not an executable or a shared object (e_type %" PRIu64 ")",
                (uint64_t)eh->e_type);
  Elf64_Shdr tp = {0};
  bool found = false;
  int rc = scan(r, &tp, &found);
  if (rc != 0)
    return rc;
  if (!found || tp.sh_size == 0)
    return fail(r, FXT_ENOENT, "no fxtrace events (not built with fxtrace)");
  if (tp.sh_type == SHT_NOBITS || tp.sh_size % sizeof(uint64_t) != 0)
    return fail(r, FXT_EINVAL, "its fxt_tp section is malformed (%" PRIu64 " bytes)",
                tp.sh_size);
  struct fxt_elf_event *ev = malloc(sizeof *ev);
  if (ev == NULL)
    return fail(r, FXT_ENOMEM, "out of memory");
  for (uint64_t i = 0; rc == 0 && i < tp.sh_size / sizeof(uint64_t); i++) {
    uint64_t va;
    if (!read_ptr(r, tp.sh_addr + i * sizeof va, &va) || va == 0)
      rc = fail(r, FXT_EINVAL, "fxt_tp entry %" PRIu64 " points nowhere in the file", i);
    else if ((rc = read_tracepoint(r, va, i, ev)) == 0)
      rc = fn(ctx, ev);
  }
  free(ev);
  return rc;
}

int fxt_elf_events(const void *image, size_t size, fxt_elf_event_fn fn, void *ctx, char *err,
                   size_t err_size)
{
  _Static_assert(sizeof(void *) == sizeof(uint64_t), "the fxt_tp reader reads LP64 layouts");
  struct reader r = {.err = err, .err_size = err_size};
  const char *why;
  int rc = fxt_elf_open(&r.e, image, size, &why);
  if (rc != 0) {
    snprintf(err, err_size, "%s", why);
    return rc;
  }
  rc = walk(&r, fn, ctx);
  free(r.alloc);
  free(r.rel);
  return rc;
}
