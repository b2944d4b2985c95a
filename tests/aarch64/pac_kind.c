/* pac_kind.c - fxt_fn_pe_a64_kind (functions_unwind_a64.c), run under qemu-aarch64 -cpu max
 * (pointer authentication on): a function's saved return address that equals the return
 * trampoline's plain address is also its pac-ret signature when that signature is 0 (1 in
 * 128 modifiers); the function's code then decides. A modifier giving a signature of 0 is
 * searched; with it, a function that signs (built with -mbranch-protection=standard: its
 * paciasp) must come out as key A, one built without as plain. Exit 77 without pointer
 * authentication (every signature is then the plain address). */
#include <stdint.h>
#include <stdio.h>

#include "host/functions_int.h"

__attribute__((noinline)) int fn_signs(int (*f)(int), int x)
{
  return f(x) + 1; /* not a leaf: pac-ret signs its return address */
}

__attribute__((noinline, target("branch-protection=none"))) int fn_plain(int (*f)(int), int x)
{
  return f(x) + 1;
}

static int twice(int x)
{
  return 2 * x;
}

int main(void)
{
  uintptr_t t = (uintptr_t)fxt_fn_pe_return_tramp, zero = 0, nonzero = 0;
  for (uintptr_t m = 0x7fff0000u; m < 0x7fff0000u + 16 * 100000 && !(zero && nonzero); m += 16)
    *(fxt_fn_pe_a64_sign(t, m, 1) == t ? &zero : &nonzero) = m;
  if (!nonzero) {
    puts("SKIP: no pointer authentication (qemu-aarch64 -cpu max has it)");
    return 77;
  }
  if (!zero) {
    puts("FAIL: no modifier with a signature of 0 in 100000");
    return 1;
  }
  int fails = 0;
  struct {
    int kind;
    uintptr_t cfa, fn;
    int want;
    const char *what;
  } c[] = {
    {0, zero, (uintptr_t)fn_signs, 1, "signature 0, a function that signs: key A"},
    {0, zero, (uintptr_t)fn_plain, 0, "signature 0, a function that does not sign: plain"},
    {0, nonzero, (uintptr_t)fn_signs, 0, "a plain match, its signature not 0: plain"},
    {1, nonzero, (uintptr_t)fn_plain, 1, "a signed match: as found"},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    int got = fxt_fn_pe_a64_kind(c[i].kind, c[i].cfa, c[i].fn);
    if (got != c[i].want) {
      printf("FAIL: %s: kind %d, not %d\n", c[i].what, got, c[i].want);
      fails++;
    }
  }
  printf("%s (fn_signs %d, fn_plain %d)\n", fails ? "FAIL" : "ok", fn_signs(twice, 1),
         fn_plain(twice, 1));
  return fails != 0;
}
