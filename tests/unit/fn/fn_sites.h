/* fn_sites.h - what a function's patchable-entry site holds, read from its bytes, for the
 * function tracer's tests of the patchable-entry engine (test_functions.c built with
 * FXT_TEST_PE): off (the compiler's NOPs), on (the engine's jump and call), and the layouts
 * (x86-64 plain and endbr64, aarch64 plain and `bti c`; src/host/functions_int.h has them).
 */
#ifndef FXTRACE_TESTS_FN_SITES_H
#define FXTRACE_TESTS_FN_SITES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "host/functions_int.h"

#if defined(__aarch64__)
/* aarch64: a site's 2 instructions, at the function's entry or after its `bti c`. */
static const uint32_t *site_of(int (*f)(int))
{
  const uint32_t *p = (const uint32_t *)(uintptr_t)f;
  return p[0] == 0xd503245f ? p + 1 : p;
}

/* Off: NOP NOP, or the `mov x9, x30` an earlier enable left and a NOP. */
static bool off(int (*f)(int))
{
  const uint32_t *p = site_of(f);
  return (p[0] == 0xd503201f || p[0] == 0xaa1e03e9) && p[1] == 0xd503201f;
}

/* On: `mov x9, x30; bl stub`. */
static bool on(int (*f)(int))
{
  const uint32_t *p = site_of(f);
  return p[0] == 0xaa1e03e9 && (p[1] & 0xfc000000) == 0x94000000;
}
#else
static bool has_endbr(int (*f)(int))
{
  static const uint8_t endbr64[] = {0xF3, 0x0F, 0x1E, 0xFA};
  return memcmp((const void *)(uintptr_t)f, endbr64, sizeof endbr64) == 0;
}

/* The 2 bytes at a function's entry, after its endbr64 when it has one. */
static const uint8_t *entry_of(int (*f)(int))
{
  return (const uint8_t *)(uintptr_t)f + (has_endbr(f) ? 4 : 0);
}

/* The displacement of a 2-byte jmp at f's entry to f - 9 (the pre-entry call): from the
 * instruction after the jump. */
static uint8_t jump_back(int (*f)(int))
{
  return (uint8_t)((uintptr_t)f - FXT_FN_PE_PRE - ((uintptr_t)entry_of(f) + 2));
}

/* The 9 bytes before it. */
static const uint8_t *pre_entry_of(int (*f)(int))
{
  return (const uint8_t *)((uintptr_t)f - FXT_FN_PE_PRE);
}

/* Off: the entry's NOPs (gcc's or clang's). */
static bool off(int (*f)(int))
{
  const uint8_t *p = entry_of(f);
  return (p[0] == 0x90 && p[1] == 0x90) || (p[0] == 0x66 && p[1] == 0x90);
}

/* On: `jmp fn-9` at the entry, `call stub; jmp *%r11` before it. */
static bool on(int (*f)(int))
{
  const uint8_t *e = entry_of(f), *p = pre_entry_of(f);
  return e[0] == 0xEB && e[1] == jump_back(f) && p[0] == 0xE8 && p[5] == 0x41 && p[6] == 0xFF &&
         p[7] == 0xE3;
}
#endif

#endif
