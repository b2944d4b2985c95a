/* fn_kernel.h - the kernel's printing of a function profiler's duration, written out from its
 * source for the profiler's tests (test_fn_profile, test_fn_selftime): their expected text is
 * the kernel's, not the code under test's. */
#ifndef FXT_TESTS_FN_KERNEL_H
#define FXT_TESTS_FN_KERNEL_H

#include <stdio.h>
#include <string.h>

/* trace_print_graph_duration (kernel/trace/trace_functions_graph.c) into out (40 bytes at least). */
static inline void kernel_duration(char *out, unsigned long long duration)
{
  unsigned long nsecs_rem = duration % 1000;
  duration /= 1000;
  char usecs_str[21], nsecs_str[5];
  sprintf(usecs_str, "%lu", (unsigned long)duration);
  strcpy(out, usecs_str);
  size_t len = strlen(usecs_str);
  if (len < 7) {
    size_t slen = sizeof(nsecs_str) < 8 - len ? sizeof(nsecs_str) : 8 - len;
    snprintf(nsecs_str, slen, "%03lu", nsecs_rem);
    strcat(out, ".");
    strcat(out, nsecs_str);
    len += strlen(nsecs_str) + 1;
  }
  strcat(out, " us ");
  for (size_t i = len; i < 8; i++)
    strcat(out, " ");
}

#endif
