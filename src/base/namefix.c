/* namefix.c - a thread or process name made well-formed UTF-8 (see namefix.h). */
#define _GNU_SOURCE /* strnlen */
#include "namefix.h"

#include <fxtrace/fxt.h>
#include <stdint.h>
#include <string.h>

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
