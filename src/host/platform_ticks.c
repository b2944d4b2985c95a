/* platform_ticks.c - the host's fxt_platform_ticks(): CLOCK_MONOTONIC in nanoseconds.
 *
 * Alone in its object file on purpose: a program or test that defines fxt_platform_ticks()
 * itself replaces this one (static link: this member is never pulled in; shared library: the
 * symbol is exported with default visibility and can be interposed).
 */
#define _POSIX_C_SOURCE 200809L
#include <fxtrace/writer.h>

#include <time.h>

uint64_t fxt_platform_ticks(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
