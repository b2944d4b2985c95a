/* platform_ticks.c - the host's fxt_platform_ticks(): the session's trace clock (TSC or
 * CLOCK_MONOTONIC ns, see clock.c), so drop times are on the same clock as events.
 *
 * Alone in its object file on purpose: a program or test that defines fxt_platform_ticks()
 * itself replaces this one (static link: this member is never pulled in; shared library: the
 * symbol is exported with default visibility and can be interposed).
 */
#include <fxtrace/detail/emit.h>

uint64_t fxt_platform_ticks(void)
{
  return fxt_ticks();
}
