/* namefix.c - a thread or process name made well-formed UTF-8 (see namefix.h). */
#define _GNU_SOURCE /* strnlen */
#include "namefix.h"

#include <fcntl.h>
#include <fxtrace/fxt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void fxt_name_fix(char *s, size_t size)
{
  if (size == 0)
    return;
  size_t len = strnlen(s, size - 1);
  if (fxt_utf8_valid(s, len) == len)
    return;
  char fixed[256];
  len = fxt_utf8_cut(s, (uint32_t)len); /* a character the kernel's 15 bytes cut */
  len = fxt_utf8_sanitize(fixed, size - 1 < sizeof(fixed) ? size - 1 : sizeof(fixed), s, len);
  memcpy(s, fixed, len);
  memset(s + len, 0, size - len);
}

bool fxt_read_line(const char *path, char *out, size_t size)
{
  memset(out, 0, size);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = read(fd, out, size - 1);
  close(fd);
  if (n > 0 && out[n - 1] == '\n')
    out[n - 1] = 0;
  return out[0] != 0;
}

bool fxt_read_comm(int tid, char *name, size_t size)
{
  char path[48] = "/proc/self/comm";
  if (tid > 0)
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", tid);
  bool ok = fxt_read_line(path, name, size);
  fxt_name_fix(name, size);
  return ok;
}
