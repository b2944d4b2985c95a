/* tests/check/check_session.h - the session a check program writes its FILE with: the events
 * given, in block mode with a long timeout (nothing lost) unless the program asks for another
 * mode; the count its command line starts with. Header-only; include it after
 * <fxtrace/session.h>, <stdio.h> and <stdlib.h>. */
#ifndef FXT_TESTS_CHECK_SESSION_H
#define FXT_TESTS_CHECK_SESSION_H

/* Starts the session on path; 0, or -1 with "PROG: cannot start the session" on stderr. */
static inline int check_session_start(const char *prog, uint32_t mode, uint32_t buffer_kb,
                                      const char *events, const char *path) {
  struct fxt_session_config cfg = {.struct_size = sizeof cfg, .mode = mode,
                                   .block_timeout_ms = 60000, .buffer_kb = buffer_kb,
                                   .events = events, .output = path};
  if (fxt_session_start(&cfg) != 0) {
    fprintf(stderr, "%s: cannot start the session\n", prog);
    return -1;
  }
  return 0;
}

/* The count a command line of argc words (the program's name included) starts with, above 0;
 * 0, with "usage: USAGE" on stderr, when the words are not that many or it is not a count. */
static inline unsigned long check_count_arg(int argc, char **argv, int want_argc,
                                            const char *usage) {
  unsigned long n = argc == want_argc ? strtoul(argv[1], NULL, 0) : 0;
  if (n == 0)
    fprintf(stderr, "usage: %s\n", usage);
  return n;
}

#endif /* FXT_TESTS_CHECK_SESSION_H */
