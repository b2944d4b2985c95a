/* tests/mcu/port_critical.c - the embedder's critical section of fxtrace/port.h for a
 * single-core Cortex-M: PRIMASK saved, interrupts off, PRIMASK restored. The core calls it on
 * ARMv6-M only (no LDREX/STREX there); on ARMv7-M nothing references it and the linker leaves
 * it out (it is in a library of its own). */
#include <fxtrace/port.h>

uintptr_t fxt_port_critical_enter(void)
{
  uint32_t primask;
  __asm__ volatile("mrs %0, primask\n\tcpsid i" : "=r"(primask) : : "memory");
  return primask;
}

void fxt_port_critical_exit(uintptr_t state)
{
  __asm__ volatile("msr primask, %0" : : "r"((uint32_t)state) : "memory");
}
