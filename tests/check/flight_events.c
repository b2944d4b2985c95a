/* flight_events - a flight recorder for live_control.sh's flight mode: a session with
 * mode=overwrite and no output file, in anonymous buffers of BUFFER_KB, whose main thread
 * fires flight:tick events numbered 0, 1, 2, ... when told to on stdin, one command a line:
 *
 *   emit N    fires the next N events, then prints "emitted TOTAL" (all of them so far)
 *
 * It fires nothing else (events=flight:*), so between two commands its buffer does not move:
 * the test knows exactly what it holds. At the end of stdin it stops the session and exits 0.
 *
 *   flight_events BUFFER_KB
 */
#define _GNU_SOURCE
#include <fxtrace/fxtrace.h>
#include <stdlib.h>

#include "emit_commands.h" /* <fxtrace/session.h>, <stdio.h>: before check_session.h */
#include "check_session.h"

FXT_TRACEPOINT(flight, tick, "seq=%llu", (u64, seq));

static void fire(uint64_t seq) { FXT_TRACE(flight, tick, seq); }

int main(int argc, char **argv)
{
  uint32_t kb = (uint32_t)check_count_arg(argc, argv, 2, "flight_events BUFFER_KB");
  if (kb == 0)
    return 2;
  struct fxt_session_config cfg = {.struct_size = sizeof cfg, .mode = FXT_MODE_OVERWRITE,
                                   .buffer_kb = kb, .events = "flight:*", .output = "",
                                   .buffers = ""};
  return emit_commands("flight_events", &cfg, fire);
}
