/* test_utf8 - every string fxtrace writes is well-formed UTF-8 (issue 13, item 3): the helpers
 * of fxt.h byte for byte, then a session whose thread name the kernel cut inside a character,
 * a (str, s, 4) field given "abc\u00e9", and an event name with a stray byte: every string of
 * the file is well-formed, and each says what it was made of. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../test_main.h"

#include <fxtrace/fxt.h>
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "session_test.h"

FXT_TRACEPOINT(u8t, cut, "s=%s", (str, s, 4));

/* ---- the helpers ---------------------------------------------------------------------------- */

static void valid_offsets(void **state)
{
  (void)state;
  assert_int_equal(fxt_utf8_valid("", 0), 0);
  assert_int_equal(fxt_utf8_valid("abc", 3), 3);
  assert_int_equal(fxt_utf8_valid("t\xc3\xa9st", 5), 5);             /* é */
  assert_int_equal(fxt_utf8_valid("\xe2\x82\xac", 3), 3);            /* € */
  assert_int_equal(fxt_utf8_valid("\xf0\x9f\x98\x80", 4), 4);        /* U+1F600 */
  assert_int_equal(fxt_utf8_valid("ab\xc3", 3), 2);                  /* cut at the end */
  assert_int_equal(fxt_utf8_valid("ab\xff" "c", 4), 2);              /* never a lead */
  assert_int_equal(fxt_utf8_valid("a\x80", 2), 1);                   /* stray continuation */
  assert_int_equal(fxt_utf8_valid("\xc0\xaf", 2), 0);                /* overlong '/' */
  assert_int_equal(fxt_utf8_valid("\xe0\x80\xaf", 3), 0);            /* overlong */
  assert_int_equal(fxt_utf8_valid("\xed\xa0\x80", 3), 0);            /* surrogate D800 */
  assert_int_equal(fxt_utf8_valid("\xf4\x90\x80\x80", 4), 0);        /* above U+10FFFF */
}

static void cut_on_boundaries(void **state)
{
  (void)state;
  const char *s = "abc\xc3\xa9"; /* "abcé" */
  assert_int_equal(fxt_utf8_cut(s, 5), 5);
  assert_int_equal(fxt_utf8_cut(s, 4), 3); /* inside é */
  assert_int_equal(fxt_utf8_cut(s, 3), 3);
  const char *e = "\xe2\x82\xac\xf0\x9f\x98\x80"; /* €, U+1F600 */
  assert_int_equal(fxt_utf8_cut(e, 1), 0);
  assert_int_equal(fxt_utf8_cut(e, 2), 0);
  assert_int_equal(fxt_utf8_cut(e, 3), 3);
  assert_int_equal(fxt_utf8_cut(e, 4), 3);
  assert_int_equal(fxt_utf8_cut(e, 6), 3);
  assert_int_equal(fxt_utf8_cut(e, 7), 7);
  assert_int_equal(fxt_utf8_cut("a\x80\x80\x80\x80", 5), 5); /* no lead: left as it is */
  assert_int_equal(fxt_utf8_cut("", 0), 0);
}

static void sanitize_replaces(void **state)
{
  (void)state;
  char out[32];
  size_t n = fxt_utf8_sanitize(out, sizeof out, "a\xff" "b\xc3", 4);
  assert_int_equal(n, 8);
  assert_memory_equal(out, "a\xef\xbf\xbd" "b\xef\xbf\xbd", 8);
  n = fxt_utf8_sanitize(out, sizeof out, "t\xc3\xa9", 3); /* well-formed: as it is */
  assert_int_equal(n, 3);
  assert_memory_equal(out, "t\xc3\xa9", 3);
  n = fxt_utf8_sanitize(out, 3, "ab\xff", 3); /* U+FFFD does not fit: whole characters only */
  assert_int_equal(n, 2);
}

/* ---- a session ------------------------------------------------------------------------------- */

static void *named_thread(void *arg)
{
  (void)arg;
  /* 16 bytes: the kernel keeps 15, cutting the last é in half */
  prctl(PR_SET_NAME, "t\xc3\xa9st-\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
  FXT_TRACE(u8t, cut, "abc\xc3\xa9");
  FXT_TRACE(u8t, cut, "ab\xc3\xa9");
  FXT_INSTANT("u8t", "bad\xff-name");
  return NULL;
}

/* Whether the decoded string n bytes at s equals want (NUL-terminated). */
static bool is(const char *s, size_t n, const char *want)
{
  return n == strlen(want) && memcmp(s, want, n) == 0;
}

static void session_strings_are_utf8(void **state)
{
  (void)state;
  start("u8t:*", 64, 0, FXT_MODE_DISCARD);
  size_t len;
  unsigned char *buf = run_thread_and_read(named_thread, &len);

  static struct fxt_str_slot table[FXT_STRING_TABLE_SIZE];
  struct fxt_decoder d;
  struct fxt_record r;
  char err[FXT_DECODER_MSG_SIZE];
  assert_int_equal(fxt_decoder_init(&d, buf, len, table), 0);
  int rc, name_seen = 0, bad_seen = 0, cut = 0, whole = 0, strings = 0;
  while ((rc = fxt_decoder_next(&d, &r, err, sizeof(err))) == 1) {
    const char *s = NULL;
    size_t n = 0;
    if (r.kind == FXT_KIND_STRING) {
      s = r.u.string.data;
      n = r.u.string.len;
      strings++;
      bad_seen += is(s, n, "bad\xef\xbf\xbd-name");
      assert_int_equal(fxt_utf8_valid(s, n), n);
    } else if (r.kind == FXT_KIND_KERNEL_OBJECT) {
      s = fxt_str_text(&r.u.kernel_object.name, &n);
      assert_int_equal(fxt_utf8_valid(s, n), n);
      /* the name, less the cut é: 14 bytes */
      name_seen += is(s, n, "t\xc3\xa9st-\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
    } else if (r.kind == FXT_KIND_EVENT) {
      for (uint32_t i = 0; i < r.u.event.num_args; i++) {
        if (r.u.event.args[i].type != FXT_ARG_STRING)
          continue;
        s = fxt_str_text(&r.u.event.args[i].value.str, &n);
        assert_int_equal(fxt_utf8_valid(s, n), n);
        cut += is(s, n, "abc");           /* "abcé" at bound 4 */
        whole += is(s, n, "ab\xc3\xa9"); /* "abé" is 4 bytes: kept */
      }
    }
  }
  free(buf);
  if (rc != 0)
    fail_msg("%s", err);
  assert_true(strings > 0);
  assert_int_equal(name_seen, 1);
  assert_int_equal(bad_seen, 1);
  assert_int_equal(cut, 1);
  assert_int_equal(whole, 1);
}

FXT_TEST_MAIN(
    cmocka_unit_test(valid_offsets), cmocka_unit_test(cut_on_boundaries),
    cmocka_unit_test(sanitize_replaces), cmocka_unit_test(session_strings_are_utf8))
