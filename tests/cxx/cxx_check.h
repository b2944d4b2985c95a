/* tests/cxx/cxx_check.h - what the C++ test programs share (cxx_trace.cpp, cxx_fn_throw.cpp):
 * CHECK, which counts a failed condition in `failures` and prints it, and a file's bytes. */
#ifndef FXT_TESTS_CXX_CHECK_H
#define FXT_TESTS_CXX_CHECK_H

#include <cstdio>
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

#endif /* FXT_TESTS_CXX_CHECK_H */
