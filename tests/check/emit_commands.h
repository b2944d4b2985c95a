/* emit_commands.h - the command loop of the check programs that fire events only when told
 * (flight_events.c, adhoc_hist_prog.c): a session started with cfg, then on stdin, one command
 * a line,
 *
 *   emit N    fire(seq) for the next N numbers seq = 0, 1, 2, ..., then "emitted TOTAL"
 *
 * and at the end of stdin the session stopped. Returns main's exit code: 0, 1 (the session
 * failed to start or stop), 2 (an unknown command). Header-only: include it once.
 */
#ifndef FXTRACE_TESTS_EMIT_COMMANDS_H
#define FXTRACE_TESTS_EMIT_COMMANDS_H

#include <fxtrace/session.h>
#include <inttypes.h>
#include <stdio.h>

static int emit_commands(const char *name, const struct fxt_session_config *cfg,
                         void (*fire)(uint64_t seq))
{
  if (fxt_session_start(cfg) != 0) {
    fprintf(stderr, "%s: cannot start the session\n", name);
    return 1;
  }
  uint64_t seq = 0, n;
  char line[64];
  while (fgets(line, sizeof(line), stdin)) {
    if (sscanf(line, "emit %" SCNu64, &n) != 1) {
      fprintf(stderr, "%s: unknown command: %s", name, line);
      return 2;
    }
    for (uint64_t end = seq + n; seq < end; seq++)
      fire(seq);
    printf("emitted %" PRIu64 "\n", seq);
    fflush(stdout);
  }
  if (fxt_session_stop() != 0) {
    fprintf(stderr, "%s: stopping the session failed\n", name);
    return 1;
  }
  return 0;
}

#endif /* FXTRACE_TESTS_EMIT_COMMANDS_H */
