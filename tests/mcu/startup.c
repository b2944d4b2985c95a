/* tests/mcu/startup.c - reset and fault handlers for the MCU test programs under QEMU.
 *
 * Copies .data, clears .bss, opens newlib's semihosting streams (librdimon), runs main and
 * ends QEMU with main's status through semihosting: SYS_EXIT_EXTENDED, so QEMU's own exit
 * status is the program's. A fault (an instruction the core does not have, an unaligned or
 * wild access) prints which and ends with status 3.
 */
#include <stdint.h>
#include <stdio.h>

extern uint32_t __data_load[], __data_start[], __data_end[], __bss_start__[], __bss_end__[];
extern uint32_t __stack_top[];
extern void initialise_monitor_handles(void);
int main(void);

void mcu_reset(void);
void mcu_fault(void);

#define SYS_WRITE0 0x04
#define SYS_EXIT_EXTENDED 0x20
#define ADP_STOPPED_APPLICATION_EXIT 0x20026

static uint32_t semihost(uint32_t op, const void *arg)
{
  register uint32_t r0 __asm__("r0") = op;
  register const void *r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

static void mcu_exit(int status)
{
  uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)status};
  semihost(SYS_EXIT_EXTENDED, block);
  for (;;)
    ;
}

void mcu_reset(void)
{
  for (uint32_t *s = __data_load, *d = __data_start; d < __data_end;)
    *d++ = *s++;
  for (uint32_t *d = __bss_start__; d < __bss_end__;)
    *d++ = 0;
  initialise_monitor_handles();
  int status = main();
  fflush(stdout);
  mcu_exit(status == 0 ? 0 : 1);
}

void mcu_fault(void)
{
  uint32_t ipsr;
  __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
  semihost(SYS_WRITE0, ipsr == 3 ? "HardFault\n" : "unexpected exception\n");
  mcu_exit(3);
}

/* Initial stack pointer, then the handlers of the 15 system exceptions (enough for a test
 * that enables no interrupt). */
__attribute__((section(".vectors"), used)) void (*const mcu_vectors[16])(void) = {
    (void (*)(void))__stack_top, mcu_reset, mcu_fault, mcu_fault, mcu_fault, mcu_fault,
    mcu_fault, 0, 0, 0, 0, mcu_fault, mcu_fault, 0, mcu_fault, mcu_fault,
};
