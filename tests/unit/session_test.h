/* tests/unit/session_test.h - the steps test_session, test_fork, test_noalloc and test_utf8
 * share: a session started on a file in /dev/shm named for the process, then stopped, its file
 * counted by fxtcount.h (into `counts`) or read whole, and removed. Header-only: include it once, after <cmocka.h>
 * and <fxtrace/session.h> (and FXTCOUNT_MAX_THREADS, if set).
 *
 * SESSION_TEST_MAX_FILE_KB: the sessions' max_file_kb; 64 MiB unless the test sets it
 * (test_noalloc: 0, no limit).
 */
#ifndef FXT_TESTS_SESSION_TEST_H
#define FXT_TESTS_SESSION_TEST_H

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "../fxtcount.h"

#ifndef SESSION_TEST_MAX_FILE_KB
#define SESSION_TEST_MAX_FILE_KB 65536
#endif

static char path[256];
static struct fxtcount counts;

static inline void start(const char *events, uint32_t buffer_kb, uint32_t total_kb, uint32_t mode)
{
  snprintf(path, sizeof(path), "/dev/shm/fxtrace-test-session-%d.fxt", (int)getpid());
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = events,
                                   .buffer_kb = buffer_kb, .total_kb = total_kb, .mode = mode,
                                   .output = path, .max_file_kb = SESSION_TEST_MAX_FILE_KB};
  assert_int_equal(fxt_session_start(&cfg), 0);
}

/* Stops the session and counts its file: the decoder's message names the file on failure.
 * seq_event: the event whose first argument is a sequence number (fxtcount_file). */
static inline void stop_and_count(const char *seq_event)
{
  assert_int_equal(fxt_session_stop(), 0);
  if (fxtcount_file(path, seq_event, &counts) != 0)
    fail_msg("decoding %s: %s", path, counts.err);
  unlink(path);
}

/* Runs fn on a thread of its own to its end, stops the session and returns its file, removed:
 * *len bytes, malloc'ed (the caller frees them). */
static inline unsigned char *run_thread_and_read(void *(*fn)(void *), size_t *len)
{
  pthread_t th;
  pthread_create(&th, NULL, fn, NULL);
  pthread_join(th, NULL);
  assert_int_equal(fxt_session_stop(), 0);
  *len = 0;
  unsigned char *buf = fxtcount_read(path, len);
  assert_non_null(buf);
  unlink(path);
  return buf;
}

#endif /* FXT_TESTS_SESSION_TEST_H */
