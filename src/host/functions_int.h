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
/* fxt_fn_set.mode holds the tracer (enum fxt_fn_mode) in its low bits, FXT_FN_TRACER, and
 * FXT_FN_PROF while function_profile_enabled is 1 (functions_prof.c): the hooks' one load is
 * nonzero when either runs; the runtime splits the two. */
#define FXT_FN_TRACER 3u
#define FXT_FN_PROF 4u

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
  bool traceable;    /* of an object whose functions can be traced (fxt_fn_table_update) */
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
  uint64_t adds, subs; /* dl_iterate_phdr's counters when it was last published */
  uint64_t sig;        /* fxt_fn_dl_signature() of the objects it was built from */
  bool all;            /* every object's functions (fxt_fn_table_all), not only traceable */
  struct fxt_fn_table *prev; /* the table built before this one: a hook may still read it, so
                              * it is never freed (one per set of loaded objects seen by a
                              * control write or a dlopen), and stays reachable */
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
/* A hash of the loaded objects: each one's load address, name, and its file's inode, size and
 * modification time. Equal when the same files are loaded at the same places: a table or
 * site list built for them is reused, not built again (a library loaded and unloaded in a
 * loop costs one of each, not one per load). */
uint64_t fxt_fn_dl_signature(void);
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
  _Atomic uint32_t rules;         /* 0 while no function has a flag (FXT_FN_F_*: none in
                                     any of the four filter files) and max_depth is 0: then
                                     function_graph traces every call, and its hooks take
                                     their fast paths (functions.c) */
  _Atomic uint64_t thresh_ticks;  /* tracing_thresh in trace-clock ticks, 0 = off */
  _Atomic uint32_t category;      /* interned "function" */
  _Atomic uint32_t parent_name;   /* interned "parent" (the function tracer's argument) */
  _Atomic uint32_t depth_name;    /* interned "depth" (function_graph's argument) */
  _Atomic uint32_t prof_self;     /* options/graph-time is 0 (functions_prof_ctl.c writes it):
                                     the profiler counts a call's own time, without its
                                     children's (functions_prof.c); 0, the default: with */
};
extern struct fxt_fn_settings fxt_fn_set;
/* Stores mode into fxt_fn_set.mode (release) and whether it is on into the flags of the shims
 * attached (functions_shim.c): every store of the mode goes through it. Under fxt_fn_lock. */
void fxt_fn_mode_store(uint32_t mode);

/* The published table (acquire), or NULL before the tracer was first set up. Inline with
 * fxt_fn_sym_entry: both are on every hook's path (functions_syms.c is compiled for size). */
extern _Atomic(struct fxt_fn_table *) fxt_fn_table_pub;
__attribute__((always_inline)) static inline struct fxt_fn_table *fxt_fn_table_current(void)
{
  /* Acquire pairs with the release store in fxt_fn_table_update: the table is complete. */
  return atomic_load_explicit(&fxt_fn_table_pub, memory_order_acquire);
}
/* Builds the table if none is published or objects were loaded or unloaded since (control
 * side, under fxt_fn_lock: allocates, reads files); the new table keeps the old one's flags
 * for functions of the same name. Returns the current table, or NULL (out of memory).
 * A table holds the functions that can be traced - those of the executable and of each object
 * with patchable entries or that imports -finstrument-functions' hooks (sym.traceable) - and,
 * once fxt_fn_table_all was called, those of every other object too (the function tracer
 * names a caller in libc). The others' symbols cost the start of a function_graph session
 * ~3 ms of ELF reading on a VM (docs/functions.md). */
struct fxt_fn_table *fxt_fn_table_update(void);
/* From now on tables hold every object's functions (under fxt_fn_lock; the next update
 * builds one when the current one does not). */
void fxt_fn_table_all(void);
/* The slot of addr in a table's hash of entry addresses (mask + 1 slots, linear probing). */
__attribute__((always_inline)) static inline uint32_t fxt_fn_hash_addr(uintptr_t a, uint32_t mask)
{
  return (uint32_t)(((uint64_t)a * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}
/* The function whose entry is addr, or NULL. Hot path: no lock, no allocation. */
__attribute__((always_inline)) static inline struct fxt_fn_sym *
fxt_fn_sym_entry(const struct fxt_fn_table *t, uintptr_t addr)
{
  for (uint32_t h = fxt_fn_hash_addr(addr, t->mask);; h = (h + 1) & t->mask) {
    uint32_t i = t->hash[h];
    if (i == 0)
      return NULL;
    if (t->syms[i - 1].addr == addr)
      return &t->syms[i - 1];
  }
}
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
 * stub` (the stub jumps to fxt_fn_pe_entry_tramp) and fn - 4 `jmp *%r11` (41 FF E3: the
 * entry trampoline returns there with r11 the body, fn + 2, or fxt_fn_pe_call_body).
 * With -fcf-protection (Ubuntu's and Fedora's default) a function that can be called
 * indirectly starts with endbr64 (F3 0F 1E FA), the 2 NOPs after it: the endbr layout. Its 2
 * switched bytes are at fn + FXT_FN_PE_ENDBR (`jmp fn-9`: EB F1), its body at fn + 6, and its
 * `call stub` goes to the stub's second entry (fxt_fn_pe_entry_tramp_endbr). fn stays the
 * function's address: names, filters, frames. */
#if defined(__x86_64__) && defined(__linux__)
#define FXT_FN_PE_X86_64 1
#define FXT_FN_PE_NOPS 11
#define FXT_FN_PE_PRE 9
#define FXT_FN_PE_ENDBR 4 /* endbr64's length: where the endbr layout's 2 NOPs are */
#else
#define FXT_FN_PE_X86_64 0
#endif
/* aarch64 Linux (functions_pe_a64.h): -fpatchable-function-entry=2, two NOP instructions at
 * the function's entry (after its `bti c` when built with BTI), enabled as `mov x9, x30; bl
 * stub` (the kernel's arm64 DYNAMIC_FTRACE layout). The build defines FXT_FN_PE_AARCH64 (its
 * switch, on by default: CMakeLists.txt). */
#if defined(__aarch64__) && defined(__linux__) && defined(FXT_FN_PE_AARCH64)
#define FXT_FN_PE_A64 1
#define FXT_FN_PE_NOPS 2 /* instructions */
#define FXT_FN_PE_PRE 0
#else
#define FXT_FN_PE_A64 0
#endif
#define FXT_FN_PE_SUPPORTED (FXT_FN_PE_X86_64 || FXT_FN_PE_A64)
/* The x86-64 engine's lean entry: functions.c and functions_tramp.c built without SSE
 * registers (-mgeneral-regs-only, CMakeLists.txt; not in sanitizer or fuzzing builds, whose
 * runtime calls may use them), so fxt_fn_pe_enter's fast path leaves the xmm argument registers alone
 * and the entry trampoline saves them only before the general path (fxt_fn_pe_enter_any). */
#if FXT_FN_PE_X86_64 && !defined(__SSE2__)
#define FXT_FN_PE_LEAN 1
#else
#define FXT_FN_PE_LEAN 0
#endif
#if defined(__aarch64__)
/* v signed as a pac-ret prologue signs a return address: key A (kind 1) or B (2), modifier
 * mod; kind 0: v (functions_unwind_a64.c). */
uintptr_t fxt_fn_pe_a64_sign(uintptr_t v, uintptr_t mod, int kind);
#endif

/* The entry trampoline's C (functions.c): fn was called, slot is its return address's slot
 * on the stack. function: the record; function_graph: the shadow frame pushed when the call
 * is traced. Returns 1 when the return is to be redirected (the frame holds *slot, and the
 * trampoline calls the body from fxt_fn_pe_call_body, whose return address is
 * fxt_fn_pe_return_tramp), else 0; 2 (FXT_FN_PE_LEAN only) when it leaves the call to
 * fxt_fn_pe_enter_any. */
int fxt_fn_pe_enter(uintptr_t fn, uintptr_t *slot);
/* The same for every case: what fxt_fn_pe_enter's fast path leaves to it (with
 * FXT_FN_PE_LEAN, fxt_fn_pe_enter returns 2 instead and the trampoline calls this one). */
int fxt_fn_pe_enter_any(uintptr_t fn, uintptr_t *slot);
/* The return trampoline's C: sp is the stack pointer after the function's ret. Pops the
 * thread's frame of that slot, writes its record, returns the original return address. */
uintptr_t fxt_fn_pe_exit(uintptr_t sp);
/* Before an unwinder walks the calling thread's stack: the redirected return addresses put
 * back (functions_pe_unwind.c; called by the shim's interposers, src/fnshim/unwind.c). */
void fxt_fn_pe_unwinding(void);
/* A C++ exception caught by the function whose stack pointer is sp: the frames it went through
 * popped (cut) and, when redirect (no other unwind in flight), those put back by
 * fxt_fn_pe_unwinding still open above sp redirected again. */
void fxt_fn_pe_caught(uintptr_t sp, bool redirect);
#if FXT_FN_PE_A64
/* Where a redirected function saved its return address (functions_unwind_a64.c): loc, signed
 * as fxt_fn_pe_a64_sign's kind with the function's CFA cfa. */
struct fxt_fn_a64_ra {
  uintptr_t *loc;
  uintptr_t cfa;
  int kind;
};
/* Walks the calling thread's stack to the first redirected return: true, *ra filled. */
bool fxt_fn_pe_a64_next(struct fxt_fn_a64_ra *ra);
/* ra->kind made sure for the function fn (a signature of 0 looks plain). */
int fxt_fn_pe_a64_kind(int kind, uintptr_t cfa, uintptr_t fn);
/* The original return address of the redirected frame of slot (functions_pe_unwind.c), or 0. */
uintptr_t fxt_fn_pe_a64_site(uintptr_t slot);
#endif
void fxt_fn_pe_entry_tramp(void);
void fxt_fn_pe_entry_tramp_endbr(void); /* the same for the endbr layout: the body at fn + 6 */
/* Where an unwind that met a redirected return goes on (functions_pe.c: the return
 * trampoline's personality). */
void fxt_fn_pe_unwind_pad(void);
void fxt_fn_pe_call_body(void);
void fxt_fn_pe_return_tramp(void);
/* Patches the sites of every loaded object to what the settings want: a site is enabled when
 * the tracer mode is not nop and its function passes the filters (fxt_fn_pe_wanted). Control
 * side, under fxt_fn_lock. Returns 0, or (nothing changed) FXT_EPERM (the code's pages could
 * not be made writable: a W^X policy), FXT_ENOSYS (no membarrier, or not x86-64 Linux with
 * sites to patch), FXT_ENOMEM. */
int fxt_fn_pe_sync(uint32_t mode);
/* Sites found and enabled now (tests, available_filter_functions' users). */
struct fxt_fn_pe_stats {
  uint64_t sites, enabled, skipped; /* skipped: a record whose bytes are not a layout */
  uint64_t endbr;                   /* sites of the endbr layout (in sites) */
};
void fxt_fn_pe_stats(struct fxt_fn_pe_stats *st);
/* The section headers of an ELF image: calls fn(ctx, addr, size) for each allocated section
 * named name (sh_addr before the load bias). Reads nothing outside image. Returns 0,
 * FXT_EINVAL (not a 64-bit ELF of this byte order, or headers outside it) or fn's first
 * nonzero return (functions_syms.c). */
typedef int (*fxt_fn_elf_section_fn)(void *ctx, uint64_t addr, uint64_t size);
int fxt_fn_elf_sections(const void *image, size_t size, const char *name,
                        fxt_fn_elf_section_fn fn, void *ctx);
/* Whether the ELF image's .dynsym has name as an undefined symbol (an import): 1 or 0, or
 * FXT_EINVAL (headers outside the image). Only the imports' part of the table is read when
 * a .gnu.hash says where the defined symbols start (functions_syms.c). */
int fxt_fn_elf_imports(const void *image, size_t size, const char *name);

/* ---- the function profiler (functions_prof.c) --------------------------------------------
 * The hooks' side, called when fxt_fn_set.mode has FXT_FN_PROF: a call of fn (s its symbol,
 * NULL when the table does not know it) starts - its hit counted on the CPU it runs on when
 * the function passes set_ftrace_filter and set_ftrace_notrace; true when it passes (its hit
 * counted, or counted as a miss when its table is full), and the caller then times the call:
 * its start in its frame, its subtime zeroed. No lock, no allocation. */
bool fxt_fn_prof_enter(const struct fxt_fn_sym *s, uintptr_t fn);
/* A call of fn that started at start (trace-clock ticks, its frame's) ends at end: its time
 * added to fn's entry on the CPU it returns on (as the kernel: when that CPU counted fn).
 * parent not NULL (fxt_fn_set.prof_self, options/graph-time 0): the time added is its own,
 * the kernel's profile_graph_return: its entry-to-return time (ns) added to *parent (the
 * subtime of the profiled call it returns into, or a sink), and the time counted that time
 * minus sub (its own subtime: its direct children's times), 0 when sub is not less. */
void fxt_fn_prof_exit(uintptr_t fn, uint64_t start, uint64_t end, uint64_t sub,
                      uint64_t *parent);
/* A shadow frame's sub when the profiler does not time its call. */
#define FXT_FN_PROF_NONE UINT64_MAX
/* Control side, under fxt_fn_lock: function_profile_enabled written (0, or the kernel's
 * negative errno: nothing changed) and read. */
int fxt_fn_prof_write(const char *v);
/* options/graph-time written, as function_profile_enabled (0 or 1, else FXT_EINVAL or
 * FXT_ERANGE, nothing changed); read: fxt_fn_set.prof_self is its negation. */
int fxt_fn_graph_time_write(const char *v);
/* The trace clock's rate (functions_ctl.c passes the session's): times shown in ns. */
void fxt_fn_prof_rate(uint64_t ticks_per_second);
/* tracing_thresh in ns (functions_ctl.c; under fxt_fn_lock): the profile's rows whose average
 * is shorter are left out, as the kernel's. */
uint64_t fxt_fn_thresh_ns(void);

/* Counters of frames the tracer could not close (functions.c). */
struct fxt_fn_counts {
  _Atomic uint64_t cut;      /* frames whose exit was never seen: longjmp, a C++ exception,
                                the tracer switched off and on, or left by a thread's exit */
  _Atomic uint64_t overflow; /* calls deeper than the shadow stack: not traced */
};
extern struct fxt_fn_counts fxt_fn_counts;

#endif
