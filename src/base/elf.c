/* src/base/elf.c - a 64-bit ELF file's header and section headers, bounds-checked
 * (src/base/elf.h). */
#include "elf.h"

#include <string.h>

#include <fxtrace/errors.h>

bool fxt_elf_read(const struct fxt_elf *e, uint64_t off, void *out, size_t n)
{
  if (off > e->size || n > e->size - off)
    return false;
  memcpy(out, e->image + off, n);
  return true;
}

int fxt_elf_open(struct fxt_elf *e, const void *image, size_t size, const char **why)
{
  e->image = image;
  e->size = size;
  Elf64_Ehdr *eh = &e->eh;
  if (!fxt_elf_read(e, 0, eh->e_ident, EI_NIDENT) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) {
    *why = "not an ELF file";
    return FXT_EINVAL;
  }
  const unsigned char order =
      __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
  if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != order) {
    *why = eh->e_ident[EI_CLASS] != ELFCLASS64 ? "not a 64-bit ELF file"
                                              : "an ELF file of the other byte order";
    return FXT_ENOSYS;
  }
  if (!fxt_elf_read(e, 0, eh, sizeof *eh)) {
    *why = "truncated ELF header";
    return FXT_EINVAL;
  }
  if (eh->e_shnum != 0 && (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > size ||
                           (size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum)) {
    *why = "its section header table is outside the file";
    return FXT_EINVAL;
  }
  return 0;
}

bool fxt_elf_shdr(const struct fxt_elf *e, uint32_t i, Elf64_Shdr *out)
{
  return i < e->eh.e_shnum &&
         fxt_elf_read(e, e->eh.e_shoff + (uint64_t)i * sizeof *out, out, sizeof *out);
}

bool fxt_elf_in_image(const struct fxt_elf *e, const Elf64_Shdr *s)
{
  return s->sh_type == SHT_NOBITS || (s->sh_offset <= e->size && s->sh_size <= e->size - s->sh_offset);
}
