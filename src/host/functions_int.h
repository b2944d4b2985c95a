/* functions_int.h - what the files of the function tracer share (functions.c: the entry and
 * exit hooks, the shadow stack, the records; functions_syms.c: the symbol table of the
 * loaded objects and its address lookup; functions_ctl.c: the tracer's settings, their
 * tracefs files and FXTRACE keys). The design is at the top of functions.c and in
 * docs/functions.md.
 */
#ifndef FXTRACE_HOST_FUNCTIONS_INT_H
#define FXTRACE_HOST_FUNCTIONS_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "functions.h"

/* current_tracer */
enum fxt_fn_mode { FXT_FN_NOP = 0, FXT_FN_FUNCTION = 1, FXT_FN_GRAPH = 2 };

/* A symbol's filter flags (fxt_fn_sym.flags): what set_ftrace_filter, set_ftrace_notrace,
 * set_graph_function and set_graph_notrace hold, per function, as the kernel keeps them. */
#define FXT_FN_F_FILTER 1u
#define FXT_FN_F_NOTRACE 2u
#define FXT_FN_F_GRAPH 4u
#define FXT_FN_F_GRAPH_NOTRACE 8u

/* One function of a loaded object. Written once when the table is built, except ref (the
 * name's interned string, 0 until the first record that names it: any thread, relaxed - two
 * racing threads intern the same string and get the same index) and flags (the control side,
 * under fxt_fn_lock; the hooks read them relaxed: a filter change reaches each thread's
 * next call, as the kernel's does). */
struct fxt_fn_sym {
  uintptr_t addr;
  uint64_t size;
  const char *name;  /* demangled when a demangler was at hand */
  uint32_t obj;      /* index in the table's objects (0 = the executable) */
  _Atomic uint32_t ref;
  _Atomic uint32_t flags;
};

/* The functions of every object loaded when it was built, sorted by address, and a hash of
 * their entry addresses. Immutable once published (fxt_fn_table_get's release store) except
 * the syms' ref and flags; never freed (a hook may hold it at any time). */
struct fxt_fn_table {
  struct fxt_fn_sym *syms;
  uint32_t n;
  uint32_t *hash; /* index + 1 of the sym at each entry address, 0 = empty; mask + 1 slots */
  uint32_t mask;
  char **objs;    /* short names of the objects ("" for the executable) */
  uint32_t nobjs;
  uint64_t adds, subs; /* dl_iterate_phdr's counters when it was built */
  struct fxt_fn_table *prev; /* the table this one replaced: a hook may still read it, so it
                              * is never freed (one per change of the loaded objects seen by
                              * a control write), and stays reachable */
};

/* Calls fn(ctx, name, value, size, global) for each function symbol defined in the ELF
 * image (64-bit, of this machine's byte order) of size bytes at image: from its .symtab, else
 * its .dynsym (value: the symbol's, before the load bias; name: inside image, NUL-terminated).
 * Reads nothing outside image, whatever it holds. Returns 0 (also for an ELF without symbol
 * table), FXT_EINVAL (not such an ELF, or headers that point outside it), or fn's first
 * nonzero return. */
typedef int (*fxt_fn_elf_fn)(void *ctx, const char *name, uint64_t value, uint64_t size,
                             bool global);
int fxt_fn_elf_functions(const void *image, size_t size, fxt_fn_elf_fn fn, void *ctx);

/* dl_iterate_phdr's counters of objects loaded and unloaded: counts[0] adds, [1] subs. */
void fxt_fn_dl_counts(uint64_t counts[2]);
/* The file at path mapped read-only (munmap it with *size), or NULL. */
void *fxt_fn_map_file(const char *path, size_t *size);

/* Serializes the control side: the settings, the table's build and its flags. */
extern pthread_mutex_t fxt_fn_lock;

/* The settings the hooks read (relaxed; written under fxt_fn_lock by functions_ctl.c). */
struct fxt_fn_settings {
  _Atomic uint32_t mode;          /* enum fxt_fn_mode; the hooks' one load when off */
  _Atomic uint32_t gen;           /* raised at each switch on: threads drop older frames */
  _Atomic uint32_t has_filter;    /* some function is in set_ftrace_filter */
  _Atomic uint32_t has_graph;     /* some function is in set_graph_function */
  _Atomic uint32_t max_depth;     /* max_graph_depth, 0 = no limit */
  _Atomic uint64_t thresh_ticks;  /* tracing_thresh in trace-clock ticks, 0 = off */
  _Atomic uint32_t category;      /* interned "function" */
  _Atomic uint32_t parent_name;   /* interned "parent" (the function tracer's argument) */
  _Atomic uint32_t depth_name;    /* interned "depth" (function_graph's argument) */
};
extern struct fxt_fn_settings fxt_fn_set;

/* The published table (acquire), or NULL before the tracer was first set up. */
struct fxt_fn_table *fxt_fn_table_current(void);
/* Builds the table if none is published or objects were loaded or unloaded since (control
 * side, under fxt_fn_lock: allocates, reads files); the new table keeps the old one's flags
 * for functions of the same name. Returns the current table, or NULL (out of memory). */
struct fxt_fn_table *fxt_fn_table_update(void);
/* The function whose entry is addr, or NULL. Hot path: no lock, no allocation. */
struct fxt_fn_sym *fxt_fn_sym_entry(const struct fxt_fn_table *t, uintptr_t addr);
/* The function that contains addr, or NULL (binary search). */
struct fxt_fn_sym *fxt_fn_sym_at(const struct fxt_fn_table *t, uintptr_t addr);

/* The entry mechanisms' calls into the runtime (functions.c: the design): an activation of fn
 * called from site (the return address into its caller) starts or ends; cfa: a stack
 * pointer of its frame, above what it calls (functions.c's design); mode: fxt_fn_set.mode as the
 * caller loaded it, never FXT_FN_NOP. */
void fxt_fn_entry(uintptr_t fn, uintptr_t site, uintptr_t cfa, uint32_t mode);
void fxt_fn_exit(uintptr_t fn, uintptr_t site, uintptr_t cfa, uint32_t mode);
/* Before a tracer is first switched on (control side): the key whose destructor counts the
 * frames a thread leaves open at its exit. */
void fxt_fn_runtime_setup(void);

/* ---- the patchable-entry engine (functions_pe.c, functions_tramp.c) ---------------------
 * Code built with -fpatchable-function-entry=FXT_FN_PE_NOPS,FXT_FN_PE_PRE: 9 NOPs before each
 * function's entry fn and 2 at it, fn - 9 recorded in the object's
 * __patchable_function_entries section. Enabled, fn holds `jmp fn-9` (EB F5), fn - 9 `call
 * stub` (the stub jumps to fxt_fn_pe_entry_tramp) and fn - 4 `jmp fn+2` (EB 04). */
#if defined(__x86_64__) && defined(__linux__)
#define FXT_FN_PE_SUPPORTED 1
#else
#define FXT_FN_PE_SUPPORTED 0
#endif
#define FXT_FN_PE_NOPS 11
#define FXT_FN_PE_PRE 9

/* The entry trampoline's C (functions.c): fn was called, slot is its return address's slot
 * on the stack. function: the record; function_graph: the shadow frame pushed and *slot
 * redirected to fxt_fn_pe_return_tramp when the call is traced. */
void fxt_fn_pe_enter(uintptr_t fn, uintptr_t *slot);
/* The return trampoline's C: sp is the stack pointer after the function's ret. Pops the
 * thread's frame of that slot, writes its record, returns the original return address. */
uintptr_t fxt_fn_pe_exit(uintptr_t sp);
/* Before an unwinder walks the calling thread's stack: the redirected return addresses put
 * back (functions.c; called by functions_unwind.c). */
void fxt_fn_pe_unwinding(void);
void fxt_fn_pe_entry_tramp(void);
void fxt_fn_pe_return_tramp(void);
/* Patches the sites of every loaded object to what the settings want: a site is enabled when
 * the tracer mode is not nop and its function passes the filters (fxt_fn_pe_wanted). Control
 * side, under fxt_fn_lock. Returns 0, or (nothing changed) FXT_EPERM (the code's pages could
 * not be made writable: a W^X policy), FXT_ENOSYS (no membarrier, or not x86-64 Linux with
 * sites to patch), FXT_ENOMEM. */
int fxt_fn_pe_sync(uint32_t mode);
/* Sites found and enabled now (tests, available_filter_functions' users). */
struct fxt_fn_pe_stats {
  uint64_t sites, enabled, skipped; /* skipped: a record whose bytes are not the layout */
};
void fxt_fn_pe_stats(struct fxt_fn_pe_stats *st);
/* The section headers of an ELF image: calls fn(ctx, addr, size) for each allocated section
 * named name (sh_addr before the load bias). Reads nothing outside image. Returns 0,
 * FXT_EINVAL (not a 64-bit ELF of this byte order, or headers outside it) or fn's first
 * nonzero return (functions_syms.c). */
typedef int (*fxt_fn_elf_section_fn)(void *ctx, uint64_t addr, uint64_t size);
int fxt_fn_elf_sections(const void *image, size_t size, const char *name,
                        fxt_fn_elf_section_fn fn, void *ctx);

/* Counters of frames the tracer could not close (functions.c). */
struct fxt_fn_counts {
  _Atomic uint64_t cut;      /* frames whose exit was never seen: longjmp, a C++ exception,
                                the tracer switched off and on, or left by a thread's exit */
  _Atomic uint64_t overflow; /* calls deeper than the shadow stack: not traced */
};
extern struct fxt_fn_counts fxt_fn_counts;

#endif
