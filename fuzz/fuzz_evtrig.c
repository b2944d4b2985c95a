/* fuzz/fuzz_evtrig.c - libFuzzer target for the event trigger parser (src/host/evtrig_parse.c),
 * what a write to events/<sys>/<ev>/trigger goes through first.
 *
 * The input is the written text, parsed from an exact-size heap copy (ASan sees any byte read
 * or written past it). Properties checked (abort() on any violation, on top of ASan/UBSan):
 *  - the result is 0, FXT_EINVAL or FXT_ERANGE, and the same on a second parse of the input;
 *  - on success the command is one of the six, the stripped text lies within the input and
 *    every offset (filter, target) within the stripped text, a filter is never empty and is
 *    never given to a removal, a target has both names only for enable_event/disable_event;
 *  - the line a read prints for it ends in one '\n' and starts with the command's name.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/tbuf.h"
#include "host/evtrig.h"

static void check(int ok)
{
  if (!ok)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *a = malloc(size + 1), *b = malloc(size + 1);
  check(a && b);
  memcpy(a, data, size);
  memcpy(b, data, size);
  a[size] = b[size] = 0;
  struct fxt_evtrig_spec s1, s2;
  size_t start = 0, start2 = 0;
  int rc = fxt_evtrig_parse(a, size, &start, &s1);
  int rc2 = fxt_evtrig_parse(b, size, &start2, &s2);
  check(rc == 0 || rc == FXT_EINVAL || rc == FXT_ERANGE);
  check(rc == rc2);
  if (rc == 0) {
    check(memcmp(&s1, &s2, sizeof(s1)) == 0 && start == start2);
    check(s1.cmd >= FXT_EVTRIG_TRACEON && s1.cmd <= FXT_EVTRIG_DISABLE_EVENT);
    check(start < size);
    check(s1.filter_at + s1.filter_len <= size);
    check(!s1.remove || s1.filter_len == 0);
    check(s1.filter_len == 0 || s1.filter_at > start);
    bool target = s1.cmd >= FXT_EVTRIG_ENABLE_EVENT;
    check(target || (s1.sys_len == 0 && s1.ev_len == 0));
    check(s1.sys_at + s1.sys_len <= size && s1.ev_at + s1.ev_len <= size);
    char *filter = s1.filter_len ? strndup(a + s1.filter_at, s1.filter_len) : NULL;
    struct fxt_tbuf t;
    fxt_tbuf_init(&t);
    fxt_evtrig_print(&t, s1.cmd, target ? "sys:ev" : NULL, s1.count, filter);
    const char *name = fxt_evtrig_name(s1.cmd);
    check(t.len > strlen(name) && memcmp(t.data, name, strlen(name)) == 0);
    check(t.data[t.len - 1] == '\n');
    fxt_tbuf_free(&t);
    free(filter);
  }
  free(a);
  free(b);
  return 0;
}
