/* src/base/elf.h - a 64-bit ELF file of this host's byte order, read from an image in memory
 * with every offset and size checked against the image: its header, its section headers,
 * bytes at a file offset. The function tracer's symbol tables (src/host/functions_syms.c) and
 * `fxtrace list`'s tracepoints (src/formats/elf_events.c) are read through it.
 *
 * Nothing here trusts the file: a header or a section that does not fit in the image is an
 * error, never a read past it. Offsets need not be aligned (everything is copied out).
 */
#ifndef FXTRACE_BASE_ELF_H
#define FXTRACE_BASE_ELF_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fxt_elf {
  const unsigned char *image;
  size_t size;
  Elf64_Ehdr eh; /* checked by fxt_elf_open */
};

/* Checks that image is an ELF64 file of the host's byte order whose section header table
 * (e_shoff, e_shnum entries of sizeof(Elf64_Shdr)) lies inside the image, and fills e.
 * Returns 0, or with *why set to a static reason: FXT_EINVAL ("not an ELF file": no ELF
 * magic; a truncated header; a table outside the image), FXT_ENOSYS (another class or byte
 * order). */
int fxt_elf_open(struct fxt_elf *e, const void *image, size_t size, const char **why);

/* Copies n bytes at file offset off into out; false when they are not all inside the image. */
bool fxt_elf_read(const struct fxt_elf *e, uint64_t off, void *out, size_t n);

/* Section header i (< e->eh.e_shnum, else false). */
bool fxt_elf_shdr(const struct fxt_elf *e, uint32_t i, Elf64_Shdr *out);

/* Whether the section's bytes [sh_offset, sh_offset + sh_size) are inside the image
 * (SHT_NOBITS sections have none: true). */
bool fxt_elf_in_image(const struct fxt_elf *e, const Elf64_Shdr *s);

#endif /* FXTRACE_BASE_ELF_H */
