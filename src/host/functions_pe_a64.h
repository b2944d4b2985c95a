/* functions_pe_a64.h - the aarch64 part of the patchable-entry engine, included by
 * functions_pe.c only (its arch_* functions; the x86-64 ones are functions_pe.c's own). As
 * the kernel's arm64 DYNAMIC_FTRACE (arch/arm64/kernel/ftrace.c, entry-ftrace.S):
 *
 * Sites. -fpatchable-function-entry=2 puts two NOPs at each function's entry fn, after its
 * `bti c` when it is built with BTI (-mbranch-protection=bti or standard: the section's record
 * is then fn + 4, and a pac-ret function's `paciasp` comes after the NOPs). A record whose two
 * instructions are not NOP NOP, or what this engine writes there, is skipped (counted).
 *
 * Enabled: `mov x9, x30` (the caller's return address kept in x9, a temporary no argument
 * uses) then `bl stub`, the stub on a page mapped within bl's +-128 MiB of the object; it
 * jumps to fxt_fn_pe_entry_tramp (functions_tramp_a64.c) with x17 = 8 or 12, the distance from
 * the return address of that bl back to fn (12: a `bti c` before the NOPs): two stubs a page.
 *
 * Patching while threads run. Each change is one aligned 4-byte store, single-copy atomic:
 * the first time a site is enabled, its MOV over the first NOP (while the second is still a
 * NOP: a thread there runs either NOP or the MOV, and the MOV alone only writes x9), then the
 * BL over the second; disabled, the BL back to a NOP (the MOV stays: harmless). NOP and BL are
 * in the ARM ARM's list of instructions that may be modified while another thread runs them
 * (B2.2.5, "Concurrent modification and execution of instructions"): a thread runs the old or
 * the new one. After each step of a batch, __builtin___clear_cache over every site changed
 * (DC CVAU, IC IVAU, DSB ISH, ISB on this CPU) and a core-serializing membarrier
 * (MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE: a context synchronization event on every CPU
 * that runs a thread of the process), so no thread keeps running the old instruction. */
#define A64_NOP 0xd503201fu
#define A64_BTI_C 0xd503245fu
#define A64_MOV_X9_X30 0xaa1e03e9u /* orr x9, xzr, x30 */
#define A64_BL 0x94000000u
#define A64_BL_MASK 0xfc000000u

static uint32_t a64_insn(uintptr_t a)
{
  return *(const volatile uint32_t *)a;
}

/* Whether rec is a site; *t filled (t->fn the function, t->at where its NOPs are). */
static bool arch_site(const struct dl_phdr_info *info, uintptr_t rec, struct site *t)
{
  if ((rec & 3) != 0 || !in_text(info, rec, 8))
    return false;
  uint32_t a = a64_insn(rec), b = a64_insn(rec + 4);
  if (!((a == A64_NOP && b == A64_NOP) || (a == A64_MOV_X9_X30 && b == A64_NOP) ||
        (a == A64_MOV_X9_X30 && (b & A64_BL_MASK) == A64_BL)))
    return false;
  t->at = in_text(info, rec - 4, 4) && a64_insn(rec - 4) == A64_BTI_C ? 4 : 0;
  t->fn = rec - t->at;
  t->orig[0] = t->orig[1] = 0;
  return true;
}

/* A stub page's code: two stubs, at 0 (x17 = 8) and 12 (x17 = 12), each `movz x17, #d; ldr
 * x16, <the entry trampoline's address at 24>; br x16`. */
static void arch_stub(void *page)
{
  uint32_t *w = page;
  w[0] = 0xd2800111u; /* movz x17, #8 */
  w[1] = 0x580000b0u; /* ldr x16, .+20 (byte 24) */
  w[2] = 0xd61f0200u; /* br x16 */
  w[3] = 0xd2800191u; /* movz x17, #12 */
  w[4] = 0x58000050u; /* ldr x16, .+8 (byte 24) */
  w[5] = 0xd61f0200u; /* br x16 */
  uintptr_t target = (uintptr_t)fxt_fn_pe_entry_tramp;
  memcpy(&w[6], &target, sizeof target);
}

/* Whether the site's second instruction is the BL now. */
static bool arch_enabled(const struct site *s)
{
  return (a64_insn(s->fn + s->at + 4) & A64_BL_MASK) == A64_BL;
}

/* The instructions a site's patching writes: [*at, *at + *len). */
static void arch_code(const struct site *s, uintptr_t *at, size_t *len)
{
  *at = s->fn + s->at;
  *len = 8;
}

/* One instruction written at p (4-byte aligned, its page writable): a single-copy-atomic
 * store. Not seen by ThreadSanitizer (functions_pe.c's x86-64 poke says why). */
__attribute__((no_sanitize("thread"))) static void a64_poke(uintptr_t p, uint32_t insn)
{
  __atomic_store_n((uint32_t *)p, insn, __ATOMIC_RELAXED);
}

/* The instructions of the n sites v[chg[i]] made visible to this CPU's instruction fetch,
 * then to every thread's. */
static void a64_publish(struct site *v, const size_t *chg, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    char *p = (char *)(v[chg[i]].fn + v[chg[i]].at);
    __builtin___clear_cache(p, p + 8);
  }
  sync_cores();
}

/* Switches the n sites v[chg[i]] to what the filters want for mode (their pages writable):
 * 0, or FXT_ENOMEM when no stub could be mapped near a site (nothing switched). */
static int arch_patch(struct site *v, const size_t *chg, size_t n, struct fxt_fn_table *tab,
                      uint32_t mode)
{
  bool movs = false;
  for (size_t i = 0; i < n; i++) {
    struct site *t = &v[chg[i]];
    if (!stub_for(t->fn, t->fn))
      return FXT_ENOMEM;
    if (a64_insn(t->fn + t->at) == A64_NOP) {
      a64_poke(t->fn + t->at, A64_MOV_X9_X30);
      movs = true;
    }
  }
  if (movs)
    a64_publish(v, chg, n); /* every MOV seen before a BL that needs it */
  for (size_t i = 0; i < n; i++) {
    struct site *t = &v[chg[i]];
    uintptr_t at = t->fn + t->at + 4;
    uint32_t insn = A64_NOP;
    if (wanted(tab ? fxt_fn_sym_entry(tab, t->fn) : NULL, mode)) {
      uintptr_t stub = stub_for(t->fn, t->fn) + (t->at ? 12 : 0);
      insn = A64_BL | (uint32_t)(((intptr_t)stub - (intptr_t)at) >> 2 & 0x03ffffff);
    }
    a64_poke(at, insn);
  }
  a64_publish(v, chg, n);
  return 0;
}
