/* tests/cxx/cxx_check.h - what the C++ test programs share (cxx_trace.cpp, cxx_fn_throw.cpp):
 * CHECK, which counts a failed condition in `failures` and prints it, a file's bytes, and the
 * session they write their file with. */
#ifndef FXT_TESTS_CXX_CHECK_H
#define FXT_TESTS_CXX_CHECK_H

#include <cstdio>
#include <fxtrace/session.h>
#include <unistd.h>
#include <vector>

static int failures;
#define CHECK(cond)                                                                          \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);          \
      failures++;                                                                            \
    }                                                                                        \
  } while (0)

/* The bytes of the file at path (none when it cannot be opened: a failed check). */
static inline std::vector<unsigned char> cxx_read_file(const char *path)
{
  std::vector<unsigned char> bytes;
  FILE *f = std::fopen(path, "rb");
  CHECK(f != nullptr);
  if (f) {
    unsigned char chunk[4096];
    size_t n;
    while ((n = std::fread(chunk, 1, sizeof(chunk), f)) > 0)
      bytes.insert(bytes.end(), chunk, chunk + n);
    std::fclose(f);
  }
  return bytes;
}

/* Starts a session that writes the events given to /dev/shm/fxtrace-test-NAME-PID.fxt, its
 * path put in path (path_size bytes), with buffers of buffer_kb (0: the default); false, said
 * on stderr, when it does not start. */
static inline bool cxx_session_start(const char *name, const char *events, uint32_t buffer_kb,
                                     char *path, size_t path_size)
{
  std::snprintf(path, path_size, "/dev/shm/fxtrace-test-%s-%d.fxt", name, (int)getpid());
  struct fxt_session_config cfg = {};
  cfg.struct_size = sizeof(cfg);
  cfg.events = events;
  cfg.buffer_kb = buffer_kb;
  cfg.output = path;
  if (fxt_session_start(&cfg) != 0) {
    std::fprintf(stderr, "fxt_session_start failed\n");
    return false;
  }
  return true;
}

#endif /* FXT_TESTS_CXX_CHECK_H */
