/* test_emit - what each instrumentation style puts in the file: a typed tracepoint with every
 * field type (argument types, names and values), every ad-hoc event type with its trailer,
 * printk, scopes; the tracepoint description blob; registry lookups and enable patterns. */
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
#include <fxtrace/tracefs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

FXT_TRACEPOINT(tt, all, "all the types", (u8, a_u8), (u16, a_u16), (u32, a_u32), (u64, a_u64),
               (s8, a_s8), (s16, a_s16), (s32, a_s32), (s64, a_s64), (bool, a_bool),
               (f64, a_f64), (ptr, a_ptr), (str, a_str, 5), (bytes, a_bytes, 3));
FXT_TRACEPOINT(tt, defaults, NULL, (u32, x), (str, s, 8));
FXT_TRACEPOINT(other, quiet, NULL, (u32, x));
FXT_TRACEPOINT(tt, narrow, NULL, (u64, a), (s64, b), (u32, c));

static char path[256];
static unsigned char *file;
static long file_len;
static struct fxt_str_slot table[FXT_STRING_TABLE_SIZE];
static struct fxt_decoder dec;
static struct fxt_record rec;

static void record_session(void (*body)(void), const char *events)
{
  snprintf(path, sizeof(path), "/dev/shm/fxtrace-test-emit-%d.fxt", (int)getpid());
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = events, .output = path};
  assert_int_equal(fxt_session_start(&cfg), 0);
  body();
  assert_int_equal(fxt_session_stop(), 0);
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  file_len = ftell(f);
  fseek(f, 0, SEEK_SET);
  free(file);
  file = malloc((size_t)file_len);
  assert_int_equal(fread(file, 1, (size_t)file_len, f), (size_t)file_len);
  fclose(f);
  unlink(path);
}

static bool is(const struct fxt_str_ref *r, const char *s)
{
  return r->len == strlen(s) && memcmp(r->data, s, r->len) == 0;
}

/* The n-th (0-based) event named `name` that is not bookkeeping; NULL if none. */
static const struct fxt_event *event(const char *name, int n)
{
  char err[256];
  int rc;
  fxt_decoder_init(&dec, file, (size_t)file_len, table);
  while ((rc = fxt_decoder_next(&dec, &rec, err, sizeof(err))) == 1)
    if (rec.kind == FXT_KIND_EVENT && !is(&rec.u.event.category, "kernel:meta") &&
        is(&rec.u.event.name, name) && n-- == 0)
      return &rec.u.event;
  if (rc < 0)
    fail_msg("decode: %s", err);
  return NULL;
}

/* The first event called name, which must be there and of the type given (FXT_EVENT_*). */
static const struct fxt_event *event_of_type(const char *name, uint32_t type)
{
  const struct fxt_event *e = event(name, 0);
  if (e == NULL)
    fail_msg("no event '%s'", name);
  assert_int_equal(e->type, type);
  return e;
}

static void arg_is(const struct fxt_arg *a, const char *name, uint32_t type)
{
  if (!is(&a->name, name) || a->type != type)
    fail_msg("argument %.*s of type %u, expected %s of type %u", a->name.len, a->name.data,
             a->type, name, type);
}

static int marker;

static void fire_all(void)
{
  unsigned char bytes[3] = {0x00, 0xab, 0xff};
  FXT_TRACE(tt, all, 255, 65535, 4000000000u, 0xfedcba9876543210ull, -128, -32768, -2000000000,
            -5000000000ll, true, -1.25, &marker, "truncated", bytes);
  FXT_TRACE(tt, defaults, 7, "");
  FXT_TRACE(other, quiet, 1); /* not enabled */
}

static void typed_tracepoint_every_field_type(void **state)
{
  (void)state;
  record_session(fire_all, "tt:*");
  const struct fxt_event *e = event_of_type("all", FXT_EVENT_INSTANT);
  assert_true(is(&e->category, "tt"));
  assert_int_equal(e->thread.thread_koid, (uint64_t)gettid());
  assert_int_equal(e->thread.process_koid, (uint64_t)getpid());
  assert_int_equal(e->num_args, 13);
  const struct fxt_arg *a = e->args;
  arg_is(&a[0], "a_u8", FXT_ARG_UINT32);
  assert_int_equal(a[0].value.u32, 255);
  arg_is(&a[1], "a_u16", FXT_ARG_UINT32);
  assert_int_equal(a[1].value.u32, 65535);
  arg_is(&a[2], "a_u32", FXT_ARG_UINT32);
  assert_int_equal(a[2].value.u32, 4000000000u);
  arg_is(&a[3], "a_u64", FXT_ARG_UINT64);
  assert_int_equal(a[3].value.u64, 0xfedcba9876543210ull);
  arg_is(&a[4], "a_s8", FXT_ARG_INT32);
  assert_int_equal(a[4].value.i32, -128);
  arg_is(&a[5], "a_s16", FXT_ARG_INT32);
  assert_int_equal(a[5].value.i32, -32768);
  arg_is(&a[6], "a_s32", FXT_ARG_INT32);
  assert_int_equal(a[6].value.i32, -2000000000);
  arg_is(&a[7], "a_s64", FXT_ARG_INT64);
  assert_int_equal(a[7].value.i64, -5000000000ll);
  arg_is(&a[8], "a_bool", FXT_ARG_BOOL);
  assert_true(a[8].value.b);
  arg_is(&a[9], "a_f64", FXT_ARG_DOUBLE);
  assert_true(a[9].value.f64 == -1.25);
  arg_is(&a[10], "a_ptr", FXT_ARG_POINTER);
  assert_int_equal(a[10].value.pointer, (uint64_t)(uintptr_t)&marker);
  arg_is(&a[11], "a_str", FXT_ARG_STRING);
  assert_true(is(&a[11].value.str, "trunc")); /* bound 5 */
  arg_is(&a[12], "a_bytes", FXT_ARG_STRING);
  assert_true(is(&a[12].value.str, "00abff"));

  e = event("defaults", 0);
  assert_non_null(e);
  assert_int_equal(e->num_args, 2);
  assert_int_equal(e->args[0].value.u32, 7);
  assert_int_equal(e->args[1].value.str.index, 0); /* an empty string is ref 0 */
  assert_null(event("quiet", 0));
}

/* u64 and s64 fields whose values all fit in 32 bits are written as uint32 / int32
 * arguments, one word each (emit.h fxt_field_wide); one value that does not makes every 64-bit
 * field of the event two words. Expected sizes are counted from the spec (fxt.md: header,
 * timestamp, a thread inline or by ref, arguments of 1 or 2 words). */
static const struct {
  uint64_t a;
  int64_t b;
  bool narrow;
} k_narrow[] = {
    {0xffffffffull, INT32_MIN, true},        {0x100000000ull, 0, false},
    {5, (int64_t)INT32_MIN - 1, false},     {5, INT32_MAX, true},
    {5, (int64_t)INT32_MAX + 1, false},     {0, -1, true},
    {UINT64_MAX, INT64_MIN, false},
};
enum { N_NARROW = sizeof k_narrow / sizeof k_narrow[0] };

static void fire_narrow(void)
{
  for (uint32_t i = 0; i < N_NARROW; i++)
    FXT_TRACE(tt, narrow, k_narrow[i].a, k_narrow[i].b, i);
}

static void fire_narrow_filtered(void)
{
  /* A filter takes the general path (fxt_fire_slow_): the same encoding there. */
  assert_int_equal(fxt_fs_echo("events/tt/narrow/filter", "c < 100"), 7);
  fire_narrow();
}

static void check_narrow(void)
{
  for (uint32_t i = 0; i < N_NARROW; i++) {
    const struct fxt_event *e = event("narrow", (int)i);
    assert_non_null(e);
    assert_int_equal(e->num_args, 3);
    uint64_t h;
    memcpy(&h, file + rec.offset, 8);
    uint32_t thread_words = (h >> 24 & 0xff) == 0 ? 2 : 0; /* its ref, bits 24-31 */
    if (k_narrow[i].narrow) {
      arg_is(&e->args[0], "a", FXT_ARG_UINT32);
      assert_int_equal(e->args[0].value.u32, k_narrow[i].a);
      arg_is(&e->args[1], "b", FXT_ARG_INT32);
      assert_int_equal(e->args[1].value.i32, k_narrow[i].b);
    } else {
      arg_is(&e->args[0], "a", FXT_ARG_UINT64);
      assert_int_equal(e->args[0].value.u64, k_narrow[i].a);
      arg_is(&e->args[1], "b", FXT_ARG_INT64);
      assert_int_equal(e->args[1].value.i64, k_narrow[i].b);
    }
    arg_is(&e->args[2], "c", FXT_ARG_UINT32);
    assert_int_equal(e->args[2].value.u32, i);
    assert_int_equal(h >> 4 & 0xfff, 2 + thread_words + (k_narrow[i].narrow ? 3 : 5));
  }
  assert_null(event("narrow", N_NARROW));
}

static void u64_fields_that_fit_are_one_word(void **state)
{
  (void)state;
  record_session(fire_narrow, "tt:narrow");
  check_narrow();
  record_session(fire_narrow_filtered, "tt:narrow");
  check_narrow();
}

/* The description blob of tt:all: id, refs, kind, fields, print format. */
static void tracepoint_description_blob(void **state)
{
  (void)state;
  record_session(fire_all, "tt:*");
  struct fxt_tracepoint *tp = fxt_tracepoint_by_name("tt", "all");
  assert_non_null(tp);
  char err[256];
  int found = 0;
  fxt_decoder_init(&dec, file, (size_t)file_len, table);
  while (fxt_decoder_next(&dec, &rec, err, sizeof(err)) == 1) {
    if (rec.kind != FXT_KIND_BLOB || !is(&rec.u.blob.name, "fxtrace:tracepoint"))
      continue;
    const unsigned char *p = rec.u.blob.data;
    uint32_t id;
    uint16_t sys, name, kind, nf, fl;
    memcpy(&id, p, 4);
    memcpy(&sys, p + 4, 2);
    memcpy(&name, p + 6, 2);
    memcpy(&kind, p + 8, 2);
    memcpy(&nf, p + 10, 2);
    memcpy(&fl, p + 12, 2);
    if (id != tp->id)
      continue;
    found++;
    const char *s;
    size_t len;
    assert_int_equal(fxt_decoder_string(&dec, sys, &s, &len), 0);
    assert_true(len == 2 && !memcmp(s, "tt", 2));
    assert_int_equal(fxt_decoder_string(&dec, name, &s, &len), 0);
    assert_true(len == 3 && !memcmp(s, "all", 3));
    assert_int_equal(kind, FXT_TP_TYPED);
    assert_int_equal(nf, 13);
    assert_int_equal(fl, strlen("all the types"));
    assert_memory_equal(p + 16, "all the types", fl);
    const unsigned char *f = p + 16 + fl + 11 * 8; /* field 11: (str, a_str, 5) */
    uint16_t ref;
    uint32_t bound;
    memcpy(&ref, f, 2);
    memcpy(&bound, f + 4, 4);
    assert_int_equal(f[2], FXT_TYPE_STR);
    assert_int_equal(bound, 5);
    assert_int_equal(fxt_decoder_string(&dec, ref, &s, &len), 0);
    assert_true(len == 5 && !memcmp(s, "a_str", 5));
  }
  assert_int_equal(found, 1);
}

static void fire_adhoc(void)
{
  FXT_INSTANT("ah", "inst", FXT_ARG("i", -3), FXT_ARG("u", 7u), FXT_ARG("big", 1ull << 40),
              FXT_ARG("d", 2.5), FXT_ARG("s", "str"), FXT_ARG("b", (_Bool)1),
              FXT_ARG("p", &marker));
  FXT_COUNTER("ah", "ctr", 42, FXT_U64("v", 9));
  FXT_BEGIN("ah", "dur", FXT_U32("k", 1));
  FXT_END("ah", "dur");
  uint64_t start = fxt_now();
  FXT_COMPLETE("ah", "cmp", start);
  {
    FXT_SCOPE("ah", "scope");
  }
  FXT_ASYNC_BEGIN("ah", "async", 0x1234);
  FXT_ASYNC_INSTANT("ah", "async", 0x1234, FXT_STR("at", "middle"));
  FXT_ASYNC_END("ah", "async", 0x1234);
  FXT_FLOW_BEGIN("ah", "flow", 77);
  FXT_FLOW_STEP("ah", "flow", 77);
  FXT_FLOW_END("ah", "flow", 77);
  FXT_PRINTK("%d items from %s", 12, "here");
  FXT_PRINTK("no values");
}

static void adhoc_events_every_type(void **state)
{
  (void)state;
  record_session(fire_adhoc, "ah:*,printk:*");
  const struct fxt_event *e = event_of_type("inst", FXT_EVENT_INSTANT);
  assert_int_equal(e->num_args, 7);
  arg_is(&e->args[0], "i", FXT_ARG_INT32);
  assert_int_equal(e->args[0].value.i32, -3);
  arg_is(&e->args[1], "u", FXT_ARG_UINT32);
  arg_is(&e->args[2], "big", FXT_ARG_UINT64);
  assert_int_equal(e->args[2].value.u64, 1ull << 40);
  arg_is(&e->args[3], "d", FXT_ARG_DOUBLE);
  arg_is(&e->args[4], "s", FXT_ARG_STRING);
  assert_true(is(&e->args[4].value.str, "str"));
  arg_is(&e->args[5], "b", FXT_ARG_BOOL);
  arg_is(&e->args[6], "p", FXT_ARG_POINTER);

  e = event_of_type("ctr", FXT_EVENT_COUNTER);
  assert_int_equal(e->trailer, 42);
  arg_is(&e->args[0], "v", FXT_ARG_UINT32); /* FXT_U64 of 9: fits in 32 bits */
  assert_int_equal(e->args[0].value.u32, 9);
  assert_int_equal(event("dur", 0)->type, FXT_EVENT_DURATION_BEGIN);
  assert_int_equal(event("dur", 1)->type, FXT_EVENT_DURATION_END);
  e = event_of_type("cmp", FXT_EVENT_DURATION_COMPLETE);
  assert_true(e->trailer >= e->timestamp);
  e = event_of_type("scope", FXT_EVENT_DURATION_COMPLETE);
  assert_true(e->trailer >= e->timestamp);
  assert_int_equal(event("async", 0)->type, FXT_EVENT_ASYNC_BEGIN);
  assert_int_equal(event("async", 1)->type, FXT_EVENT_ASYNC_INSTANT);
  assert_int_equal(event("async", 1)->trailer, 0x1234);
  assert_int_equal(event("async", 2)->type, FXT_EVENT_ASYNC_END);
  assert_int_equal(event("flow", 0)->type, FXT_EVENT_FLOW_BEGIN);
  assert_int_equal(event("flow", 1)->type, FXT_EVENT_FLOW_STEP);
  assert_int_equal(event("flow", 2)->type, FXT_EVENT_FLOW_END);
  assert_int_equal(event("flow", 2)->trailer, 77);
  e = event("%d items from %s", 0);
  assert_non_null(e);
  assert_true(is(&e->category, "printk"));
  assert_int_equal(e->num_args, 2);
  arg_is(&e->args[0], "a0", FXT_ARG_INT32);
  assert_int_equal(e->args[0].value.i32, 12);
  arg_is(&e->args[1], "a1", FXT_ARG_STRING);
  assert_int_equal(event("no values", 0)->num_args, 0);
}

static void registry_lookup_and_patterns(void **state)
{
  (void)state;
  struct fxt_tracepoint *all = fxt_tracepoint_by_name("tt", "all");
  struct fxt_tracepoint *quiet = fxt_tracepoint_by_name("other", "quiet");
  assert_non_null(all);
  assert_non_null(quiet);
  assert_true(all->id >= 32 && all->id <= 65535);
  assert_true(all->id != quiet->id);
  assert_ptr_equal(fxt_tracepoint_by_id(all->id), all);
  assert_null(fxt_tracepoint_by_name("tt", "nope"));
  assert_int_equal(fxt_tracepoint_enable_patterns("other"), 1); /* "other" = "other:*" */
  assert_true(atomic_load(&quiet->enabled));
  assert_false(atomic_load(&all->enabled));
  assert_int_equal(fxt_tracepoint_enable_patterns(" tt:a* , x:[yz]"), 1);
  assert_true(atomic_load(&all->enabled));
  assert_int_equal(fxt_tracepoint_enable_patterns(""), 0);
  assert_false(atomic_load(&all->enabled));
  assert_true(fxt_glob_match("tt:*", "tt:all"));
  assert_false(fxt_glob_match("tt:b*", "tt:all"));
}

/* A section that lists one tracepoint twice, another between (a C++ site's asm entry is
 * emitted once per copy of the code: fxtrace.h, "C++ sites"): each registered once, and again
 * after the section is unregistered. */
static struct fxt_tracepoint twice_a = FXT_TP_INIT_(FXT_TP_INSTANT, 0, "twice", "a", NULL, NULL);
static struct fxt_tracepoint twice_b = FXT_TP_INIT_(FXT_TP_INSTANT, 0, "twice", "b", NULL, NULL);
static struct fxt_tracepoint *const twice_section[] = {&twice_a, &twice_b, &twice_a};

struct visits {
  int a, b, all;
};

static int visit(void *ctx, struct fxt_tracepoint *tp)
{
  struct visits *v = ctx;
  v->a += tp == &twice_a;
  v->b += tp == &twice_b;
  return ++v->all > 100000; /* a list made a loop stops here */
}

static void registry_section_lists_a_tracepoint_twice(void **state)
{
  (void)state;
  for (int round = 0; round < 2; round++) {
    fxt_register_section(twice_section, twice_section + 3);
    struct visits v = {0, 0, 0};
    assert_int_equal(fxt_tracepoint_foreach(visit, &v), 0);
    assert_int_equal(v.a, 1);
    assert_int_equal(v.b, 1);
    assert_int_equal(fxt_tracepoint_enable_patterns("twice:*"), 2);
    assert_true(atomic_load(&twice_a.enabled) && atomic_load(&twice_b.enabled));
    assert_int_equal(fxt_tracepoint_enable_patterns(""), 0);
    fxt_unregister_section(twice_section, twice_section + 3);
    v = (struct visits){0, 0, 0};
    assert_int_equal(fxt_tracepoint_foreach(visit, &v), 0);
    assert_int_equal(v.a + v.b, 0);
  }
}

FXT_TEST_MAIN(
    cmocka_unit_test(typed_tracepoint_every_field_type),
    cmocka_unit_test(u64_fields_that_fit_are_one_word),
    cmocka_unit_test(tracepoint_description_blob), cmocka_unit_test(adhoc_events_every_type),
    cmocka_unit_test(registry_lookup_and_patterns),
    cmocka_unit_test(registry_section_lists_a_tracepoint_twice))
