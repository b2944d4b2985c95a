/* adhoc_hist_prog - ad-hoc events fired when told, for adhoc_hist_live.py: a session recording
 * ahp:* to the file OUT, served live (its control socket), whose main thread fires rounds of
 * ad-hoc events when told on stdin, one command a line:
 *
 *   emit N    fires rounds i = TOTAL .. TOTAL + N - 1, then prints "emitted TOTAL"
 *
 * A round: a counter ahp:ctr (id i % 3, k an s64 in -3..9, v = i), an instant ahp:inst (who
 * "even" or "odd", n = i), and a scope ahp:work around a few of its own instructions. At the
 * end of stdin it stops the session (the file complete) and exits 0.
 *
 *   adhoc_hist_prog OUT
 */
#define _GNU_SOURCE
#include <fxtrace/fxtrace.h>

#include "emit_commands.h"

static volatile uint64_t sink;

static void fire(uint64_t i)
{
  FXT_COUNTER("ahp", "ctr", i % 3, FXT_I64("k", (int64_t)((i * 7) % 13) - 3), FXT_U64("v", i));
  FXT_INSTANT("ahp", "inst", FXT_STR("who", i % 3 ? "odd" : "even"), FXT_U64("n", i));
  {
    FXT_SCOPE("ahp", "work");
    sink += i;
  }
}

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: adhoc_hist_prog OUT\n");
    return 2;
  }
  struct fxt_session_config cfg = {.struct_size = sizeof cfg, .events = "ahp:*",
                                   .output = argv[1]};
  return emit_commands("adhoc_hist_prog", &cfg, fire);
}
