/* fuzz/fuzz_evtrig.c - libFuzzer target for the event trigger parser (src/host/evtrig_parse.c),
 * what a write to events/<sys>/<ev>/trigger goes through first.
 *
 * The input is the written text, parsed from an exact-size heap copy (ASan sees any byte read
 * or written past it). Properties checked (abort() on any violation, on top of ASan/UBSan):
 *  - the result is 0, FXT_EINVAL or FXT_ERANGE, and the same on a second parse of the input;
 *  - on success the command is one of the six, the stripped text lies within the input and
 *    every offset (filter, target) within the stripped text, a filter is never empty and is
 *    never given to a removal, a target has both names only for enable_event/disable_event;
 *  - the line a read prints for it ends in one '\n' and starts with the command's name;
 *  - hist: its attributes (src/host/evtrig_hist.c) parse to 0 or FXT_EINVAL, every range
 *    within them, a size a power of two in [128, 131072]; checked against an event with a
 *    number, a string and a char array, and against an ad-hoc counter (its id and two
 *    arguments: an ad-hoc event's fields), at the smallest size, a histogram is made or
 *    FXT_EINVAL returned (with a caret within the command when it logs), and one event
 *    counted and its `hist` text printed ends in the totals.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fxtrace/filter.h>
#include <fxtrace/tracepoint.h>

#include "base/tbuf.h"
#include "host/evtrig.h"

static void check(int ok)
{
  if (!ok)
    abort();
}

static const struct fxt_field k_fields[] = {
    {"key", FXT_TYPE_U64, 0}, {"name", FXT_TYPE_STR, 16}, {"arr", FXT_TYPE_BYTES, 8}};
static const struct fxt_field k_args[] = {{"k", FXT_TYPE_S64, 0}, {"who", FXT_TYPE_STR, 0}};

static void hist(const char *text, size_t len)
{
  char *param = malloc(len + 1);
  check(param != NULL);
  memcpy(param, text, len);
  param[len] = 0;
  struct fxt_evtrig_hist_attrs a;
  struct fxt_evtrig_hist_error err;
  int rc = fxt_evtrig_hist_attrs(param, len, &a, &err);
  check(rc == 0 || rc == FXT_EINVAL);
  if (rc == 0) {
    check(a.keys.len > 0 && a.keys.at + a.keys.len <= len);
    check(a.vals.at + a.vals.len <= len && a.sort.at + a.sort.len <= len);
    check(a.name.at + a.name.len <= len);
    check(a.size >= 128 && a.size <= 131072 && (a.size & (a.size - 1)) == 0);
    /* A typed tracepoint, then an ad-hoc counter: its fields are its head (id) and its
     * arguments (fxt_registry_event_fields), its values laid out so. */
    for (int adhoc = 0; adhoc < 2; adhoc++) {
      struct fxt_tracepoint tp;
      memset(&tp, 0, sizeof(tp));
      tp.kind = adhoc ? FXT_TP_COUNTER : FXT_TP_TYPED;
      tp.system = "s";
      tp.name = "e";
      tp.fields = adhoc ? k_args : k_fields;
      tp.nfields = adhoc ? 2 : 3;
      a.size = 128;
      struct fxt_evtrig_hist *h = NULL;
      rc = fxt_evtrig_hist_new(&tp, param, &a, &h, &err);
      check(rc == 0 || rc == FXT_EINVAL);
      check(rc == 0 || err.code == 0 || err.pos <= 5 + len);
      check((rc == 0) == (h != NULL));
      if (h) {
        union fxt_value v[3] = {{.u = 7}, {.s = "abc"}, {.p = "12345678"}};
        if (adhoc) /* id, k, who */
          v[1].i = -3, v[2].s = "who";
        uint32_t lens[3] = {0, adhoc ? 0 : 3, adhoc ? 3 : 8};
        struct fxt_filter_common c = {.type = 1, .pid = 42, .cpu = 0, .comm = "fuzz"};
        fxt_evtrig_hist_count(h, v, lens, &c);
        struct fxt_tbuf t;
        fxt_tbuf_init(&t);
        fxt_evtrig_hist_show(h, NULL, true, &t);
        check(t.oom || (t.len > 0 && t.data[t.len - 1] == '\n'));
        fxt_tbuf_free(&t);
        fxt_evtrig_hist_free(h);
      }
    }
  }
  free(param);
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
    check(s1.cmd >= FXT_EVTRIG_TRACEON && s1.cmd <= FXT_EVTRIG_HIST);
    check(start < size);
    check(s1.filter_at + s1.filter_len <= size);
    check(!s1.remove || s1.filter_len == 0);
    check(s1.filter_len == 0 || s1.filter_at > start);
    bool target = fxt_evtrig_has_target(s1.cmd);
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
    if (s1.cmd == FXT_EVTRIG_HIST) {
      check(s1.param_len > 0 && s1.param_at + s1.param_len <= size);
      hist(a + s1.param_at, s1.param_len);
    }
  }
  free(a);
  free(b);
  return 0;
}
