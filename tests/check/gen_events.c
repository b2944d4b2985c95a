/* gen_events - writes an fxtrace file of exactly N events, for the JSON exporter's memory test.
 *
 *   gen_events N FILE
 *
 * One thread fires N events (N a multiple of 8) in groups of 8: a duration begin, five typed
 * events, a counter and the duration's end. The session runs in block mode with a long
 * timeout, so nothing is lost; the file is about 22 bytes per event.
 */
#define _GNU_SOURCE
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_session.h"

FXT_TRACEPOINT(gen, tick, "i=%u", (u32, i));

int main(int argc, char **argv)
{
  uint64_t n = argc == 3 ? strtoull(argv[1], NULL, 0) : 0;
  if (n == 0 || n % 8 != 0) {
    fprintf(stderr, "usage: gen_events N FILE (N a multiple of 8)\n");
    return 2;
  }
  if (check_session_start("gen_events", FXT_MODE_BLOCK, 4096, "gen:*", argv[2]) != 0)
    return 1;
  for (uint64_t i = 0; i < n; i += 8) {
    FXT_BEGIN("gen", "group");
    for (uint32_t k = 1; k <= 5; k++)
      FXT_TRACE(gen, tick, (uint32_t)(i + k));
    FXT_COUNTER("gen", "level", 0, FXT_U32("v", i));
    FXT_END("gen", "group");
  }
  if (fxt_session_stop() != 0) {
    fprintf(stderr, "gen_events: stopping the session failed\n");
    return 1;
  }
  return 0;
}
