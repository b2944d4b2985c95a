/* src/formats/elf_events.h - the tracepoints compiled into an executable or a shared object,
 * read from its file without running it (`fxtrace list`).
 *
 * They are the pointers of the object's "fxt_tp" section (include/fxtrace/fxtrace.h), each to
 * a struct fxt_tracepoint whose strings and field table are pointers into the object's other
 * sections. In a non-PIE executable those pointers are in the file as they are; in a PIE or a
 * shared object the dynamic loader fills them, so the file's dynamic relocations are applied
 * first: R_*_RELATIVE (the addend) and R_X86_64_64 / R_AARCH64_ABS64 against a symbol the
 * object defines (its value plus the addend); RELR-packed relocations keep the value in place.
 * The struct is read with this host's layout (offsetof), so only objects of this host's ABI
 * (ELF64, its machine and byte order: x86-64 or AArch64) are read; others are refused.
 *
 * The file is outside input: every offset, address, size and string is checked against the
 * image, and a malformed file is an error with a reason, never a read past the image.
 */
#ifndef FXTRACE_FORMATS_ELF_EVENTS_H
#define FXTRACE_FORMATS_ELF_EVENTS_H

#include <stddef.h>

#include <fxtrace/tracepoint.h>

/* One tracepoint of the file: tp's constant part as its definition wrote it (kind, nfields,
 * system, name, print_fmt, fields, file, line), its strings NUL-terminated inside the image,
 * its fields in `fields`; enabled, id and reg zero. */
struct fxt_elf_event {
  struct fxt_tracepoint tp;
  struct fxt_field fields[FXT_MAX_FIELDS];
};

/* Called for each tracepoint; non-zero stops the walk with that result. */
typedef int (*fxt_elf_event_fn)(void *ctx, const struct fxt_elf_event *ev);

/* Room for any reason fxt_elf_events gives. */
#define FXT_ELF_ERR_SIZE 160

/* Calls fn for every tracepoint listed in the "fxt_tp" section of the ELF image (size bytes),
 * in the section's order: a tracepoint defined in several units (a header's) comes once per
 * unit. Returns 0, fn's non-zero result, or with the reason in err:
 *   FXT_EINVAL  not an ELF file, or a malformed one (a section, a relocation, a tracepoint or
 *               a string outside the file; an unknown kind; too many fields)
 *   FXT_ENOSYS  an ELF file of another ABI (class, byte order, machine), a relocatable object
 *               (.o), or a host this reader does not know
 *   FXT_ENOENT  no "fxt_tp" section, or an empty one: no fxtrace events
 *   FXT_ENOMEM */
int fxt_elf_events(const void *image, size_t size, fxt_elf_event_fn fn, void *ctx, char *err,
                   size_t err_size);

#endif /* FXTRACE_FORMATS_ELF_EVENTS_H */
