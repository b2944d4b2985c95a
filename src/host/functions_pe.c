/* functions_pe.c - the patchable-entry engine: the sites of the functions built with
 * -fpatchable-function-entry=11,9 found in every loaded object, and their entries rewritten
 * live, in the running process, when the tracer or its filters change (docs/functions.md).
 * The trampolines the sites call are functions_tramp.c; the C they call is functions.c's.
 * What follows is x86-64's; what depends on the instruction set is in the arch_* functions
 * (a site's layout, a stub, the patching), whose aarch64 versions are functions_pe_a64.h's
 * (with functions_tramp_a64.c: built with FXT_FN_PE_AARCH64). The sites' lists, the stubs'
 * placement and the membarrier are shared.
 *
 * Sites. Each object's __patchable_function_entries section (its section headers read from
 * the object's file, as functions_syms.c reads symbols; its contents in memory, already
 * relocated) lists fn - 9 for each function fn: 9 NOPs before fn, 2 at it (gcc: 90 90, clang:
 * 66 90); or, with -fcf-protection, for a function that can be called indirectly, endbr64 at
 * fn and the 2 NOPs at fn + 4 (the endbr layout: the endbr64 stays first, an indirect call
 * must land on it). A record whose bytes are neither layout is skipped (counted).
 * libfxtrace's own object is never read (it is not built with the flag anyway).
 *
 * Layout of an enabled site (functions_int.h): fn - 9 `call stub` (E8 rel32), fn - 4 `jmp
 * *%r11` (41 FF E3: the body fn + 2, as the trampoline returns it), fn `jmp fn-9` (EB F5).
 * The stub is 14 bytes (`jmp *[rip]` and the entry trampoline's address) on a page mapped
 * within +-2 GiB of the object (rel32's reach; mmap with address hints). The pre-entry bytes
 * are written once, the first time a site is enabled, while its entry still holds its NOPs: no
 * thread can be running them then, and they never change after. Switching a site is the 2
 * bytes at fn only. Two bytes, not 5, for gcc's sake: gcc emits single-byte NOPs, and a
 * thread stopped between two of them (an interrupt) would resume inside a 5-byte call. Here a
 * thread at fn + 1 runs the byte there, which is either the NOP or F5 (cmc: flags are dead at
 * a function's entry), then fn + 2.
 *
 * The endbr layout: the same pre-entry bytes, but their call goes to the stub's second entry
 * (STUB_SIZE further: the trampoline whose body is fn + 6), and the switched bytes are at
 * fn + 4, `jmp fn-9` there being EB F1. F1 is INT1 (icebp): a thread that gcc's first NOP at
 * fn + 4 let through and that resumes at fn + 5 once the jump is there (the jump cannot land
 * anywhere else: the pre-entry call and the jump after it fill 8 of the 9 bytes, and no byte
 * before fn - 5 decodes harmlessly) traps with its rip at fn + 6; the SIGTRAP handler lets it
 * go on there, its call run as if the site were off. clang's 2-byte NOP has no such point.
 *
 * Patching while threads run, as the kernel's text_poke_bp (arch/x86/kernel/alternative.c):
 * the pages made RWX (X kept: other threads run there), int3 (CC) written at fn of every site
 * to change, a core-serializing membarrier (every thread of the process serialized: none
 * keeps a stale copy of the bytes), byte fn + 1, membarrier, byte fn, membarrier, the pages
 * back to R-X. A thread that meets the int3 meanwhile takes SIGTRAP; the handler (installed
 * before the first patch, chaining to the one before it for an int3 that is not at a site)
 * moves it past the 2 bytes (fn + 2, fn + 6): that call is run as if the site were off.
 * MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE is registered once; a kernel without it (before 4.16) gets plain
 * PRIVATE_EXPEDITED, which on x86-64 serializes too (the IPI returns to user space through
 * IRET); a kernel with neither makes enabling a site fail with FXT_ENOSYS. Everything here
 * runs on the control side under fxt_fn_lock, one batch at a time.
 *
 * Memory order. The sites array is published with a release store (sites_pub) that pairs
 * with the SIGTRAP handler's acquire load; arrays are never freed (a handler may hold one).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <linux/membarrier.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#include <unwind.h>

#include <fxtrace/errors.h>

#include "../base/grow.h"
#include "functions_int.h"

#if FXT_FN_PE_SUPPORTED

#define PAGE 4096u
#if FXT_FN_PE_X86_64
#define REACH ((intptr_t)1 << 31) /* rel32 */
#define STUB_SIZE 16u /* a stub's bytes: the endbr layout's is the page's second */
#else
#define REACH ((intptr_t)1 << 27) /* aarch64's bl: +-128 MiB */
#endif

struct site {
  uintptr_t fn;     /* the function's entry (its symbol's address) */
  uint8_t orig[2];  /* x86-64: its 2 NOP bytes, switched */
  uint8_t at;       /* where its NOPs are, past fn: 0, or 4 after an endbr64 (x86-64's endbr
                     * layout) or a `bti c` (aarch64) */
};

struct sites {
  struct site *v; /* sorted by fn */
  size_t n;
  uint64_t adds, subs; /* dl_iterate_phdr's counters when last published */
  uint64_t skipped;
  uint64_t sig; /* fxt_fn_dl_signature() of the objects collected */
  struct sites *prev; /* the sites collected before: the trap handler may still read them, so
                       * never freed (one per set of loaded objects), kept reachable */
};

static _Atomic(struct sites *) sites_pub;
static struct sites *sites_all; /* every list collected, newest first (control side) */
static int membarrier_cmd; /* 0 until registered */

#if FXT_FN_PE_X86_64
static struct sigaction old_trap;

/* ---- SIGTRAP: a thread at an int3 being written ---------------------------------------- */

static const struct site *site_of(const struct sites *s, uintptr_t fn)
{
  size_t lo = 0, hi = s ? s->n : 0;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->v[mid].fn == fn)
      return &s->v[mid];
    if (s->v[mid].fn < fn)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

/* Where a thread that trapped with its rip at rip goes on, or 0 (not a site's trap): the int3
 * at a site's first switched byte (rip one past it), or the endbr layout's F1 run alone (rip
 * at fn + 6 already; gcc's NOPs only). Either way past the 2 bytes, as if the site were off.
 * The site list, not the byte: the int3 may be gone by the time the handler runs. */
static uintptr_t trap_resume(const struct sites *s, uintptr_t rip)
{
  const struct site *t;
  if ((t = site_of(s, rip - 1)) && !t->at)
    return rip + 1;
  if ((t = site_of(s, rip - 1 - FXT_FN_PE_ENDBR)) && t->at)
    return rip + 1;
  if ((t = site_of(s, rip - 2 - FXT_FN_PE_ENDBR)) && t->at && t->orig[0] == 0x90)
    return rip;
  return 0;
}

static void on_trap(int sig, siginfo_t *info, void *ctx)
{
  ucontext_t *uc = ctx;
  /* Acquire pairs with the release in collect: the array is whole. */
  uintptr_t to = trap_resume(atomic_load_explicit(&sites_pub, memory_order_acquire),
                             (uintptr_t)uc->uc_mcontext.gregs[REG_RIP]);
  if (to) {
    uc->uc_mcontext.gregs[REG_RIP] = (greg_t)to; /* the site as its NOPs */
    return;
  }
  if (old_trap.sa_flags & SA_SIGINFO) {
    old_trap.sa_sigaction(sig, info, ctx);
  } else if (old_trap.sa_handler == SIG_DFL) {
    signal(SIGTRAP, SIG_DFL); /* delivered when the handler returns: the default action */
    raise(SIGTRAP);
  } else if (old_trap.sa_handler != SIG_IGN) {
    old_trap.sa_handler(sig);
  }
}
#endif

/* ---- the sites of the loaded objects ----------------------------------------------------- */

struct collect {
  struct site *v;
  size_t n, cap;
  uint64_t skipped;
  const struct dl_phdr_info *info;
  uintptr_t self; /* an address in libfxtrace: its object is never read */
  bool exe, failed;
};

/* Whether [a, a + len) is inside an executable segment of the object. */
static bool in_text(const struct dl_phdr_info *info, uintptr_t a, size_t len)
{
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *p = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + p->p_vaddr;
    if (p->p_type == PT_LOAD && (p->p_flags & PF_X) && a >= lo && a - lo <= p->p_memsz &&
        len <= p->p_memsz - (a - lo))
      return true;
  }
  return false;
}

#if FXT_FN_PE_X86_64
static bool all_nops(const uint8_t *b, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (b[i] != 0x90)
      return false;
  return true;
}

/* Where a site's 2 switched bytes are, and the second of `jmp fn-9` from there. */
static uintptr_t switched(const struct site *t)
{
  return t->fn + t->at;
}

static uint8_t jump_rel(const struct site *t)
{
  return (uint8_t)-(FXT_FN_PE_PRE + t->at + 2); /* F5, F1 */
}

/* One record: fn - 9. Its 9 pre-entry bytes are NOPs or what an earlier enable wrote there
 * (E8 rel32 41 FF E3 90); at fn endbr64 or not (the layouts); then 2 bytes NOPs or `jmp fn-9`
 * (then the NOPs were gcc's, 90 90: the only form of a site this process enabled and a table
 * rebuild finds enabled). Whether it is a site; *t filled. */
static bool arch_site(const struct dl_phdr_info *info, uintptr_t rec, struct site *t)
{
  const uint8_t *p = (const uint8_t *)rec;
  static const uint8_t tail[] = {0x41, 0xFF, 0xE3, 0x90};
  static const uint8_t endbr64[FXT_FN_PE_ENDBR] = {0xF3, 0x0F, 0x1E, 0xFA};
  if (!in_text(info, rec, FXT_FN_PE_NOPS) ||
      !(all_nops(p, FXT_FN_PE_PRE) || (p[0] == 0xE8 && memcmp(p + 5, tail, 4) == 0)))
    return false;
  t->fn = rec + FXT_FN_PE_PRE;
  bool endbr = in_text(info, rec, FXT_FN_PE_NOPS + FXT_FN_PE_ENDBR) &&
               memcmp(p + FXT_FN_PE_PRE, endbr64, FXT_FN_PE_ENDBR) == 0;
  t->at = endbr ? FXT_FN_PE_ENDBR : 0;
  const uint8_t *w = p + FXT_FN_PE_PRE + t->at;
  if ((w[0] == 0x90 && w[1] == 0x90) || (w[0] == 0xEB && w[1] == jump_rel(t))) {
    t->orig[0] = t->orig[1] = 0x90;
  } else if (w[0] == 0x66 && w[1] == 0x90) {
    t->orig[0] = 0x66;
    t->orig[1] = 0x90;
  } else {
    return false;
  }
  return true;
}

/* A stub page's code: two stubs, `jmp *0(%rip)` and the entry trampoline's address, then
 * STUB_SIZE further the same to the endbr layout's trampoline (its body at fn + 6). */
static void arch_stub(void *page)
{
  static const uint8_t jmp[] = {0xFF, 0x25, 0, 0, 0, 0}; /* jmp *0(%rip) */
  const uintptr_t target[2] = {(uintptr_t)fxt_fn_pe_entry_tramp,
                               (uintptr_t)fxt_fn_pe_entry_tramp_endbr};
  for (int i = 0; i < 2; i++) {
    uint8_t *b = (uint8_t *)page + i * STUB_SIZE;
    memcpy(b, jmp, sizeof jmp);
    memcpy(b + sizeof jmp, &target[i], sizeof target[i]);
  }
}

/* Whether the site's entry holds the jump now. */
static bool arch_enabled(const struct site *s)
{
  return ((const uint8_t *)switched(s))[0] == 0xEB;
}

/* The bytes of code a site's patching writes: [*at, *at + *len): the pre-entry, [endbr64,]
 * the 2. */
static void arch_code(const struct site *s, uintptr_t *at, size_t *len)
{
  *at = s->fn - FXT_FN_PE_PRE;
  *len = FXT_FN_PE_NOPS + s->at;
}
#else
static uintptr_t stub_for(uintptr_t lo, uintptr_t hi);
static void sync_cores(void);
static bool wanted(const struct fxt_fn_sym *sym, uint32_t mode);
#include "functions_pe_a64.h" /* arch_site, arch_stub, arch_enabled, arch_code, arch_patch */
#endif

static void add_site(struct collect *c, uintptr_t rec)
{
  struct site t;
  if (!arch_site(c->info, rec, &t)) {
    c->skipped++;
    return;
  }
  if (!fxt_grow((void **)&c->v, &c->cap, c->n + 1, sizeof(*c->v), 1024)) {
    c->failed = true;
    return;
  }
  c->v[c->n++] = t;
}

static int on_section(void *ctx, uint64_t addr, uint64_t size)
{
  struct collect *c = ctx;
  const uintptr_t *rec = (const uintptr_t *)(c->info->dlpi_addr + addr);
  for (uint64_t i = 0; i < size / sizeof(uintptr_t) && !c->failed; i++)
    add_site(c, rec[i]);
  return 0;
}

static int object_sites(struct dl_phdr_info *info, size_t sz, void *ctx)
{
  (void)sz;
  struct collect *c = ctx;
  bool exe = c->exe;
  c->exe = false;
  const char *path = exe ? "/proc/self/exe" : info->dlpi_name;
  if (!path || !strchr(path, '/'))
    return 0; /* the vDSO (a name without a file); a relative path is the cwd's */
  for (int i = 0; i < info->dlpi_phnum; i++) /* libfxtrace.so itself */
    if (info->dlpi_phdr[i].p_type == PT_LOAD && !exe &&
        c->self - info->dlpi_addr - info->dlpi_phdr[i].p_vaddr <
            info->dlpi_phdr[i].p_memsz)
      return 0;
  size_t size;
  void *map = fxt_fn_map_file(path, &size);
  if (!map)
    return 0;
  c->info = info;
  fxt_fn_elf_sections(map, size, "__patchable_function_entries", on_section, c);
  munmap(map, size);
  return c->failed;
}

static int by_fn(const void *x, const void *y)
{
  const struct site *a = x, *b = y;
  return a->fn < b->fn ? -1 : a->fn > b->fn;
}

/* The current sites, collected again when objects were loaded or unloaded since. */
static struct sites *sites_update(void)
{
  struct sites *old = atomic_load_explicit(&sites_pub, memory_order_relaxed);
  uint64_t counts[2];
  fxt_fn_dl_counts(counts);
  if (old && old->adds == counts[0] && old->subs == counts[1])
    return old;
  /* The same objects as a list collected before (a library loaded again where it was): that
   * list. Called inside dl_iterate_phdr (sync_held): no object comes or goes meanwhile. */
  uint64_t sig = fxt_fn_dl_signature();
  for (struct sites *a = sites_all; a; a = a->prev)
    if (a->sig == sig) {
      a->adds = counts[0];
      a->subs = counts[1];
      /* Release pairs with the acquire in on_trap (the list was whole already). */
      atomic_store_explicit(&sites_pub, a, memory_order_release);
      return a;
    }
  struct collect c = {.exe = true, .self = (uintptr_t)fxt_fn_pe_entry_tramp};
  dl_iterate_phdr(object_sites, &c);
  struct sites *s = calloc(1, sizeof(*s));
  if (c.failed || !s) {
    free(c.v);
    free(s);
    return NULL;
  }
  if (c.n > 1) /* (c.v is NULL when no object has a site) */
    qsort(c.v, c.n, sizeof(*c.v), by_fn);
  s->v = c.v;
  s->n = c.n;
  s->skipped = c.skipped;
  s->adds = counts[0];
  s->subs = counts[1];
  s->sig = sig;
  s->prev = sites_all;
  sites_all = s;
  /* Release pairs with the acquire in on_trap. The old array stays allocated. */
  atomic_store_explicit(&sites_pub, s, memory_order_release);
  return s;
}

/* ---- stubs near the objects --------------------------------------------------------------- */

static uintptr_t stubs[64]; /* pages of stubs, each holding its stubs at its start (arch_stub) */
static size_t nstubs;

static bool reaches(uintptr_t from_lo, uintptr_t from_hi, uintptr_t to)
{
  return (intptr_t)(to - from_lo) > -REACH + (intptr_t)PAGE &&
         (intptr_t)(to - from_lo) < REACH - (intptr_t)PAGE &&
         (intptr_t)(to - from_hi) > -REACH + (intptr_t)PAGE &&
         (intptr_t)(to - from_hi) < REACH - (intptr_t)PAGE;
}

static uintptr_t new_stub(uintptr_t hint)
{
  void *p = mmap((void *)hint, PAGE, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (p == MAP_FAILED)
    return 0;
  arch_stub(p);
  if (mprotect(p, PAGE, PROT_READ | PROT_EXEC) != 0) {
    munmap(p, PAGE);
    return 0;
  }
  return (uintptr_t)p;
}

/* A stub every site of [lo, hi] reaches with a rel32 call, or 0. */
static uintptr_t stub_for(uintptr_t lo, uintptr_t hi)
{
  for (size_t i = 0; i < nstubs; i++)
    if (reaches(lo, hi, stubs[i]))
      return stubs[i];
  if (nstubs == sizeof stubs / sizeof stubs[0])
    return 0;
  for (uintptr_t d = 1u << 20; d < (uintptr_t)1 << 30; d *= 2) {
    uintptr_t cand[2] = {(lo - d) & ~(uintptr_t)(PAGE - 1), (hi + d) & ~(uintptr_t)(PAGE - 1)};
    for (int k = 0; k < 2; k++) {
      if (!reaches(lo, hi, cand[k]))
        continue;
      uintptr_t s = new_stub(cand[k]);
      if (s && reaches(lo, hi, s))
        return stubs[nstubs++] = s;
      if (s)
        munmap((void *)s, PAGE);
    }
  }
  return 0;
}

/* ---- patching ------------------------------------------------------------------------------ */

static long membarrier(int cmd)
{
  return syscall(SYS_membarrier, cmd, 0, 0);
}

/* Registers the core-serializing membarrier (once), installs the SIGTRAP handler. */
static int setup(void)
{
  if (membarrier_cmd)
    return 0;
  long q = membarrier(MEMBARRIER_CMD_QUERY);
  if (q > 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE) &&
      membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE) == 0)
    membarrier_cmd = MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE;
  else if (q > 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
           membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0)
    membarrier_cmd = MEMBARRIER_CMD_PRIVATE_EXPEDITED;
  else
    return FXT_ENOSYS;
#if FXT_FN_PE_X86_64 /* aarch64 switches a site by one instruction: no trap */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_trap;
  sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTRAP, &sa, &old_trap);
#endif
  return 0;
}

/* A refusal (EPERM: not registered - a child after fork, whose mm may not carry the
 * registration) registers again and retries; the registration cannot fail where it worked. */
static void sync_cores(void)
{
  if (membarrier(membarrier_cmd) == 0)
    return;
  membarrier(membarrier_cmd == MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE
                 ? MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE
                 : MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED);
  membarrier(membarrier_cmd);
}

/* The pages of [a, a + len) to prot; false when the kernel refuses. */
static bool protect(uintptr_t a, size_t len, int prot)
{
  uintptr_t lo = a & ~(uintptr_t)(PAGE - 1);
  return mprotect((void *)lo, a + len - lo, prot) == 0;
}

#if FXT_FN_PE_X86_64
/* Writes n bytes of code at p, its pages writable. Not seen by ThreadSanitizer: its runtime
 * maps the shadow of the objects' code segments (r-x in /proc/self/maps at its start: MapRodata
 * in tsan_platform_linux.cpp) to a read-only page of "read-only memory" marks, so an
 * instrumented store to code - or memcpy, which it intercepts - writes that shadow and faults
 * (SIGSEGV in __tsan_write1: the engine's first patch in the TSan build). Byte by byte through
 * volatile: never turned into a memcpy call. */
__attribute__((no_sanitize("thread"))) static void poke(uintptr_t p, const uint8_t *b, size_t n)
{
  for (size_t i = 0; i < n; i++)
    ((volatile uint8_t *)p)[i] = b[i];
}
#endif

/* Whether a site of function sym is enabled (sym NULL: a function the table does not know). */
static bool wanted(const struct fxt_fn_sym *sym, uint32_t mode)
{
  if (mode == FXT_FN_NOP)
    return false;
  bool has_filter = atomic_load_explicit(&fxt_fn_set.has_filter, memory_order_relaxed);
  if (!sym)
    return !has_filter;
  uint32_t fl = atomic_load_explicit(&sym->flags, memory_order_relaxed);
  if (fl & (FXT_FN_F_GRAPH | FXT_FN_F_GRAPH_NOTRACE))
    return true; /* function_graph needs to see them whatever the filter */
  return !(fl & FXT_FN_F_NOTRACE) && (!has_filter || (fl & FXT_FN_F_FILTER));
}

#if FXT_FN_PE_X86_64
/* Switches the n sites v[chg[i]] to what the filters want for mode (their pages writable):
 * 0, or FXT_ENOMEM when no stub could be mapped near a site (nothing switched). */
static int arch_patch(struct site *v, const size_t *chg, size_t n, struct fxt_fn_table *tab,
                      uint32_t mode)
{
  /* The pre-entry call of sites enabled for the first time (no thread runs those bytes). */
  for (size_t i = 0; i < n; i++) {
    struct site *t = &v[chg[i]];
    uint8_t *p = (uint8_t *)(t->fn - FXT_FN_PE_PRE);
    if (arch_enabled(t) || p[0] == 0xE8)
      continue;
    uintptr_t stub = stub_for(t->fn, t->fn);
    if (!stub)
      return FXT_ENOMEM;
    stub += t->at ? STUB_SIZE : 0; /* the endbr layout's trampoline: body at fn + 6 */
    int32_t rel = (int32_t)((intptr_t)stub - (intptr_t)(t->fn - FXT_FN_PE_PRE + 5));
    uint8_t code[9] = {0xE8, 0, 0, 0, 0, 0x41, 0xFF, 0xE3, 0x90};
    memcpy(code + 1, &rel, 4);
    poke((uintptr_t)p, code, sizeof code);
  }
  /* int3, the tails, the heads: a membarrier after each step of the whole batch. */
  static const uint8_t int3 = 0xCC;
  for (size_t i = 0; i < n; i++)
    poke(switched(&v[chg[i]]), &int3, 1);
  sync_cores();
  for (size_t i = 0; i < n; i++) {
    struct site *t = &v[chg[i]];
    bool on = wanted(tab ? fxt_fn_sym_entry(tab, t->fn) : NULL, mode);
    uint8_t b = on ? jump_rel(t) : t->orig[1];
    poke(switched(t) + 1, &b, 1);
  }
  sync_cores();
  for (size_t i = 0; i < n; i++) {
    struct site *t = &v[chg[i]];
    bool on = ((volatile uint8_t *)switched(t))[1] == jump_rel(t);
    uint8_t b = on ? 0xEB : t->orig[0];
    poke(switched(t), &b, 1);
  }
  sync_cores();
  return 0;
}
#endif

/* fxt_fn_pe_sync's work, inside a dl_iterate_phdr callback: glibc holds its lock
 * (dl_load_write_lock) there, which dlclose takes to unmap an object and unlink it, so every
 * object the sites were collected from stays mapped until the patching is done (a dlclose in
 * another thread waits). Nothing here takes the loader's other lock (dl_load_lock: dlopen,
 * dlsym), which dlclose holds while it waits for this one. */
static int sync_held(uint32_t mode)
{
  struct sites *s = sites_update();
  if (!s)
    return FXT_ENOMEM;
  struct fxt_fn_table *tab = fxt_fn_table_current();
  size_t *chg = NULL, n = 0, cap = 0;
  for (size_t i = 0; i < s->n; i++) {
    struct site *t = &s->v[i];
    bool want = wanted(tab ? fxt_fn_sym_entry(tab, t->fn) : NULL, mode);
    if (want == arch_enabled(t))
      continue;
    if (!fxt_grow((void **)&chg, &cap, n + 1, sizeof(*chg), 256)) {
      free(chg);
      return FXT_ENOMEM;
    }
    chg[n++] = i;
  }
  if (n == 0)
    return 0;
  int rc = setup();
  /* Pages writable; on a refusal those done go back and nothing is written. */
  size_t made = 0;
  for (; rc == 0 && made < n; made++) {
    uintptr_t at;
    size_t len;
    arch_code(&s->v[chg[made]], &at, &len);
    if (!protect(at, len, PROT_READ | PROT_WRITE | PROT_EXEC))
      rc = FXT_EPERM;
  }
  if (rc == 0)
    rc = arch_patch(s->v, chg, n, tab, mode);
  for (size_t i = 0; i < made; i++) {
    uintptr_t at;
    size_t len;
    arch_code(&s->v[chg[i]], &at, &len);
    protect(at, len, PROT_READ | PROT_EXEC);
  }
  free(chg);
  return rc;
}

struct sync_call {
  uint32_t mode;
  int rc;
};

static int sync_object(struct dl_phdr_info *info, size_t sz, void *ctx)
{
  (void)info;
  (void)sz;
  struct sync_call *c = ctx;
  c->rc = sync_held(c->mode);
  return 1; /* once: the first object, the executable */
}

int fxt_fn_pe_sync(uint32_t mode)
{
  struct sync_call c = {mode, 0};
  dl_iterate_phdr(sync_object, &c);
  return c.rc;
}

void fxt_fn_pe_stats(struct fxt_fn_pe_stats *st)
{
  struct sites *s = atomic_load_explicit(&sites_pub, memory_order_acquire);
  memset(st, 0, sizeof(*st));
  for (size_t i = 0; s && i < s->n; i++) {
    st->enabled += arch_enabled(&s->v[i]);
#if FXT_FN_PE_X86_64
    st->endbr += s->v[i].at != 0;
#endif
  }
  st->sites = s ? s->n : 0;
  st->skipped = s ? s->skipped : 0;
}

/* ---- a forced unwind that meets a redirected return ------------------------------------
 * An unwind the program did not start through the shim's entry points (src/fnshim/unwind.c) - a
 * cancellation (glibc unwinds from inside itself, with its own handle on libgcc_s), an
 * unwinder linked into some library - finds fxt_fn_pe_return_tramp as a return address. The
 * FDE that covers it (functions_tramp.c) says the return address is undefined, so a walk
 * that calls no personality (backtrace) ends there; its personality is fxt_fn_pe_personality,
 * which the walks of exceptions and forced unwinds call first, in the trampoline's "frame":
 * its stack pointer is slot + 8, as after the function's ret. It puts the thread's return
 * addresses back and, in the second phase, has the unwinder resume at fxt_fn_pe_unwind_pad
 * with the exception in rax and the slot's real return address in rdx (the landing pad's
 * registers 0 and 1: the unwinder's jump there writes its target over the slot), which
 * writes the address back into the slot and calls _Unwind_Resume from a frame whose FDE
 * gives the slot as its return address: the walk goes on to the real caller, whose
 * destructors run. The first
 * phase (the search of an exception's handler) cannot go on from a personality: it stops
 * there as before, which the shim's _Unwind_RaiseException (src/fnshim/unwind.c) prevents.
 * On aarch64 the same, the real return address taken from the slot's shadow frame (the
 * function saved the trampoline where its prologue put x30) and the pad
 * functions_unwind_a64.c's. */
_Unwind_Reason_Code fxt_fn_pe_personality(int version, _Unwind_Action actions,
                                          _Unwind_Exception_Class cls,
                                          struct _Unwind_Exception *e,
                                          struct _Unwind_Context *ctx);
_Unwind_Reason_Code fxt_fn_pe_personality(int version, _Unwind_Action actions,
                                          _Unwind_Exception_Class cls,
                                          struct _Unwind_Exception *e,
                                          struct _Unwind_Context *ctx)
{
  (void)version;
  (void)cls;
#if FXT_FN_PE_A64
  uintptr_t ra = fxt_fn_pe_a64_site(_Unwind_GetCFA(ctx) - sizeof(uintptr_t));
  fxt_fn_pe_unwinding();
#else
  fxt_fn_pe_unwinding();
  /* The slot's real return address (put back): the jump to the pad writes over the slot. */
  uintptr_t ra = *(const uintptr_t *)(_Unwind_GetCFA(ctx) - sizeof(uintptr_t));
#endif
  if (!(actions & _UA_CLEANUP_PHASE))
    return _URC_CONTINUE_UNWIND;
  if (ra == 0 || ra == (uintptr_t)fxt_fn_pe_return_tramp)
    return _URC_CONTINUE_UNWIND; /* no frame of this thread held it: the walk ends here */
  _Unwind_SetGR(ctx, __builtin_eh_return_data_regno(0), (_Unwind_Word)(uintptr_t)e);
  _Unwind_SetGR(ctx, __builtin_eh_return_data_regno(1), (_Unwind_Word)ra);
  _Unwind_SetIP(ctx, (_Unwind_Ptr)(uintptr_t)fxt_fn_pe_unwind_pad);
  return _URC_INSTALL_CONTEXT;
}

#if FXT_FN_PE_X86_64

/* Entered with rsp = slot + 8, 16-byte aligned (the caller's stack pointer at its call): the
 * CFA, the return address at CFA - 8 (the slot, put back). The NOP before is never run. */
__asm__(".text\n"
        ".p2align 4\n"
        ".cfi_startproc\n"
        ".cfi_def_cfa %rsp, 0\n"
        ".cfi_offset %rip, -8\n"
        "  nop\n"
        ".globl fxt_fn_pe_unwind_pad\n"
        ".hidden fxt_fn_pe_unwind_pad\n"
        ".type fxt_fn_pe_unwind_pad, @function\n"
        "fxt_fn_pe_unwind_pad:\n"
        "  movq %rdx, -8(%rsp)\n" /* the slot: the real return address again */
        "  subq $16, %rsp\n"
        ".cfi_adjust_cfa_offset 16\n"
        "  movq %rax, %rdi\n"
        "  call _Unwind_Resume@PLT\n"
        "  ud2\n"
        ".cfi_endproc\n"
        ".size fxt_fn_pe_unwind_pad, .-fxt_fn_pe_unwind_pad\n");
#endif

#else /* no engine (functions_int.h): nothing to patch */

int fxt_fn_pe_sync(uint32_t mode)
{
  (void)mode;
  return 0;
}

void fxt_fn_pe_stats(struct fxt_fn_pe_stats *st)
{
  memset(st, 0, sizeof(*st));
}

#endif
