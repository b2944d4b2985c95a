/* tests/cxx/cxx_trace.cpp - every macro of fxtrace/fxtrace.h from C++, recorded with a session
 * (fxtrace/session.h) and read back with the strict decoder the C tests use (fxtrace/fxt.h):
 * each event's count, type and argument values, against the values fired here. Also the
 * embedder's writer (writer.h, ring.h: their inline producer paths, whose atomics C++ spells
 * with the __atomic builtins) round-tripping words. Ad-hoc events and scopes in inline
 * functions, member functions defined in their class, templates and lambdas of both units
 * (cxx_tp.h, system cxxs): in available_events once each from the start, and recorded in the
 * rounds a glob, a live enable of their system, of one event and of all events turn them on.
 *
 * Built by tests/CMakeLists.txt as C++17, C++20 and C++17 with -fno-exceptions -fno-rtti (the
 * scope an exception unwinds through is checked where exceptions exist), with the build's
 * C++ compiler, and by tests/check/cxx_trace.sh with the other one. Exits 0 when every check
 * holds; each failed one is printed.
 */
#include "cxx_check.h"
#include "cxx_tp.h"

#include <fxtrace/fxt.h>
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>
#include <fxtrace/writer.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

FXT_TRACEPOINT(cxx, all, "all the types", (u8, a_u8), (u16, a_u16), (u32, a_u32), (u64, a_u64),
               (s8, a_s8), (s16, a_s16), (s32, a_s32), (s64, a_s64), (bool, a_bool),
               (f64, a_f64), (ptr, a_ptr), (str, a_str, 5), (bytes, a_bytes, 3));
FXT_TRACEPOINT(cxxoff, quiet, NULL, (u32, x)); /* never enabled */

static int marker;
enum colour { RED = 1, GREEN = 5 };

/* ---- the events ------------------------------------------------------------------------ */

static void fire_typed()
{
  unsigned char bytes[3] = {0x00, 0xab, 0xff};
  CHECK(FXT_TRACE_ENABLED(cxx, all));
  CHECK(!FXT_TRACE_ENABLED(cxxoff, quiet));
  FXT_TRACE(cxx, all, 255, 65535, 4000000000u, 0xfedcba9876543210ull, -128, -32768,
            -2000000000, -5000000000ll, true, -1.25, &marker, "truncated", bytes);
  FXT_TRACE(cxxoff, quiet, 1);
  FXT_TRACE(cxxhdr, shared, 1, "main");
  cxx_inline_fire(1);
  cxx_template_fire(0.5);
  uint32_t other_id = cxx_other_fire(2);
  CHECK(fxt_tp_cxxhdr_shared.id != 0);
  CHECK(other_id == fxt_tp_cxxhdr_shared.id); /* two copies, one event */
}

static void fire_adhoc()
{
  char buf[8] = "arr";
  std::string s = "std";
  short sh = -2;
  unsigned char uc = 200;
  FXT_INSTANT("cxx", "args", FXT_ARG("i", -3), FXT_ARG("u", 7u), FXT_ARG("big", 1ull << 40),
              FXT_ARG("neg", -5000000000ll), FXT_ARG("d", 2.5), FXT_ARG("f", 0.5f),
              FXT_ARG("s", "str"), FXT_ARG("b", true), FXT_ARG("p", &marker),
              FXT_ARG("arr", buf), FXT_ARG("e", GREEN), FXT_ARG("null", nullptr),
              FXT_ARG("sh", sh), FXT_ARG("uc", uc), FXT_ARG("cs", s.c_str()));
  FXT_INSTANT("cxx", "typed", FXT_I32("i32", -7), FXT_U32("u32", 7), FXT_I64("i64", -(1ll << 40)),
              FXT_U64("u64", 1ull << 41), FXT_F64("f64", 3), FXT_BOOL("bool", 2),
              FXT_PTR("ptr", &marker), FXT_STR("str", "x"));
  FXT_INSTANT("cxx", "bare");
  FXT_BEGIN("cxx", "dur", FXT_U32("k", 1));
  FXT_END("cxx", "dur");
  uint64_t start = fxt_now();
  FXT_COMPLETE("cxx", "cmp", start);
  FXT_COUNTER("cxx", "ctr", 42, FXT_U64("v", 9));
  /* an async slice and a flow interleaved, each step of one followed by the other's */
  FXT_ASYNC_BEGIN("cxx", "async", 0x1234);
  FXT_FLOW_BEGIN("cxx", "flow", 77);
  FXT_ASYNC_INSTANT("cxx", "async", 0x1234, FXT_STR("at", "middle"));
  FXT_FLOW_STEP("cxx", "flow", 77);
  FXT_ASYNC_END("cxx", "async", 0x1234);
  FXT_FLOW_END("cxx", "flow", 77);
  FXT_PRINTK("%d items from %s", 12, "here");
  FXT_PRINTK("no values");
  FXT_INSTANT("cxxoff", "off_instant"); /* not enabled */
}

/* Scopes: nested, left by a return, an exception and a disabled one. */
static int scoped_return(int x)
{
  FXT_SCOPE("cxx", "early");
  if (x)
    return 1;
  FXT_INSTANT("cxx", "not_reached");
  return 0;
}

#if defined(__cpp_exceptions)
static void scoped_throw()
{
  FXT_SCOPE("cxx", "thrown");
  throw 7;
}
#endif

static int fire_scopes()
{
  int thrown = 0;
  {
    FXT_SCOPE("cxx", "outer");
    FXT_SCOPE("cxx", "inner"); /* two scopes in one block */
    FXT_INSTANT("cxx", "in_scope");
  }
  CHECK(scoped_return(1) == 1);
#if defined(__cpp_exceptions)
  try {
    scoped_throw();
  } catch (int e) {
    thrown = e;
  }
  CHECK(thrown == 7);
#endif
  {
    FXT_SCOPE("cxxoff", "off_scope");
  }
  return thrown;
}

/* C++ sites where g++ 12 could not have them (cxx_tp.h, system cxxs): registered when the
 * program loads, before any ran, each event once in available_events whatever its number of
 * sites and units; then fired in rounds, each enabled another way or not at all. */
static const char *const cxxs_kinds[] = {"inl", "member", "template", "lambda"};
static const char *const cxxs_suffixes[] = {"_scope", "_instant", "_dur", "_counter"};

static int listed(const char *list, const char *event)
{
  int n = 0;
  size_t len = std::strlen(event);
  for (const char *p = list; (p = std::strstr(p, event)) != nullptr; p += len)
    n += (p == list || p[-1] == '\n') && (p[len] == '\n' || p[len] == 0);
  return n;
}

static void check_cxxs_available()
{
  static char list[1 << 16];
  ssize_t n = fxt_fs_cat("available_events", list, sizeof(list) - 1);
  CHECK(n > 0);
  list[n > 0 ? n : 0] = 0;
  for (const char *kind : cxxs_kinds)
    for (const char *suffix : cxxs_suffixes) {
      std::string name = std::string("cxxs:") + kind + suffix;
      if (listed(list, name.c_str()) != 1) {
        std::fprintf(stderr, "available_events lists %s %d times\n", name.c_str(),
                     listed(list, name.c_str()));
        failures++;
      }
    }
  CHECK(listed(list, "cxxs:generic_lambda_instant") == 1);
  CHECK(listed(list, "cxxs:everywhere_instant") == 1);
  CHECK(listed(list, "cxxs:other_unit") == 1 && listed(list, "cxxs:main_unit") == 1);
}

static void cxxs_round(int round)
{
  FXT_INSTANT("cxxs", "main_unit", FXT_ARG("v", round));
  cxxs_everywhere(round);
  cxxs_inline(round);
  cxxs_member().fire(round);
  cxxs_template(round);
  cxxs_template(round + 0.5);
  cxxs_lambda(round);
  cxxs_other(round);
}

static void fire_cxxs()
{
  check_cxxs_available();
  cxxs_round(1); /* on: the session's glob, cxxs:* */
  CHECK(fxt_fs_echo("events/cxxs/enable", "0") > 0);
  cxxs_round(2); /* off */
  CHECK(fxt_fs_echo("events/cxxs/enable", "1") > 0);
  cxxs_round(3); /* on: the live enable of the system */
  CHECK(fxt_fs_echo("events/enable", "0") > 0);
  CHECK(fxt_fs_echo("events/cxxs/inl_instant/enable", "1") > 0);
  cxxs_round(4); /* only inl_instant: the live enable of the event */
  CHECK(fxt_fs_echo("events/enable", "1") > 0);
  cxxs_round(5); /* on: the live enable of every event */
}

/* ---- reading the file back ------------------------------------------------------------- */

static std::vector<unsigned char> file;
static struct fxt_str_slot table[FXT_STRING_TABLE_SIZE];
static struct fxt_decoder dec;
static struct fxt_record rec;

static bool is(const struct fxt_str_ref *r, const char *s)
{
  return r->len == std::strlen(s) && std::memcmp(r->data, s, r->len) == 0;
}

/* The n-th (0-based) event named `name` that is not bookkeeping; NULL if none. */
static const struct fxt_event *event(const char *name, int n)
{
  char err[256];
  int rc;
  fxt_decoder_init(&dec, file.data(), file.size(), table);
  while ((rc = fxt_decoder_next(&dec, &rec, err, sizeof(err))) == 1)
    if (rec.kind == FXT_KIND_EVENT && !is(&rec.u.event.category, "kernel:meta") &&
        is(&rec.u.event.name, name) && n-- == 0)
      return &rec.u.event;
  if (rc < 0) {
    std::fprintf(stderr, "decode: %s\n", err);
    failures++;
  }
  return nullptr;
}

static int count(const char *name)
{
  int n = 0;
  while (event(name, n))
    n++;
  return n;
}

/* Argument i of e: its name, type and (through the caller) value. */
static const struct fxt_arg *arg(const struct fxt_event *e, uint32_t i, const char *name,
                                 uint32_t type)
{
  if (!e || i >= e->num_args || !is(&e->args[i].name, name) || e->args[i].type != type) {
    std::fprintf(stderr, "argument %u: expected %s of type %u\n", i, name, type);
    failures++;
    static struct fxt_arg none;
    return &none;
  }
  return &e->args[i];
}

static void check_typed()
{
  const struct fxt_event *e = event("all", 0);
  CHECK(e && e->type == FXT_EVENT_INSTANT && is(&e->category, "cxx") && e->num_args == 13);
  CHECK(e && e->thread.process_koid == (uint64_t)getpid());
  CHECK(arg(e, 0, "a_u8", FXT_ARG_UINT32)->value.u32 == 255);
  CHECK(arg(e, 1, "a_u16", FXT_ARG_UINT32)->value.u32 == 65535);
  CHECK(arg(e, 2, "a_u32", FXT_ARG_UINT32)->value.u32 == 4000000000u);
  CHECK(arg(e, 3, "a_u64", FXT_ARG_UINT64)->value.u64 == 0xfedcba9876543210ull);
  CHECK(arg(e, 4, "a_s8", FXT_ARG_INT32)->value.i32 == -128);
  CHECK(arg(e, 5, "a_s16", FXT_ARG_INT32)->value.i32 == -32768);
  CHECK(arg(e, 6, "a_s32", FXT_ARG_INT32)->value.i32 == -2000000000);
  CHECK(arg(e, 7, "a_s64", FXT_ARG_INT64)->value.i64 == -5000000000ll);
  CHECK(arg(e, 8, "a_bool", FXT_ARG_BOOL)->value.b);
  CHECK(arg(e, 9, "a_f64", FXT_ARG_DOUBLE)->value.f64 == -1.25);
  CHECK(arg(e, 10, "a_ptr", FXT_ARG_POINTER)->value.pointer == (uint64_t)(uintptr_t)&marker);
  CHECK(is(&arg(e, 11, "a_str", FXT_ARG_STRING)->value.str, "trunc")); /* bound 5 */
  CHECK(is(&arg(e, 12, "a_bytes", FXT_ARG_STRING)->value.str, "00abff"));
  CHECK(count("all") == 1);
  CHECK(count("quiet") == 0);
  CHECK(count("shared") == 2);
  e = event("shared", 0);
  CHECK(arg(e, 0, "n", FXT_ARG_UINT32)->value.u32 == 1);
  CHECK(is(&arg(e, 1, "unit", FXT_ARG_STRING)->value.str, "main"));
  e = event("shared", 1);
  CHECK(arg(e, 0, "n", FXT_ARG_UINT32)->value.u32 == 2);
  CHECK(is(&arg(e, 1, "unit", FXT_ARG_STRING)->value.str, "other"));
  /* an inline function's sites, called from both units */
  CHECK(count("inline_site") == 2 && count("inline_scope") == 2);
  CHECK(arg(event("inline_site", 0), 0, "n", FXT_ARG_UINT32)->value.u32 == 1);
  CHECK(arg(event("inline_site", 1), 0, "n", FXT_ARG_UINT32)->value.u32 == 2);
  /* a template's: double in this unit, uint32_t in the other */
  CHECK(count("template_site") == 2);
  CHECK(arg(event("template_site", 0), 0, "x", FXT_ARG_DOUBLE)->value.f64 == 0.5);
  CHECK(arg(event("template_site", 1), 0, "x", FXT_ARG_UINT32)->value.u32 == 2);
}

static void check_adhoc()
{
  const struct fxt_event *e = event("args", 0);
  CHECK(e && e->type == FXT_EVENT_INSTANT && e->num_args == 15);
  CHECK(arg(e, 0, "i", FXT_ARG_INT32)->value.i32 == -3);
  CHECK(arg(e, 1, "u", FXT_ARG_UINT32)->value.u32 == 7);
  CHECK(arg(e, 2, "big", FXT_ARG_UINT64)->value.u64 == 1ull << 40);
  CHECK(arg(e, 3, "neg", FXT_ARG_INT64)->value.i64 == -5000000000ll);
  CHECK(arg(e, 4, "d", FXT_ARG_DOUBLE)->value.f64 == 2.5);
  CHECK(arg(e, 5, "f", FXT_ARG_DOUBLE)->value.f64 == 0.5);
  CHECK(is(&arg(e, 6, "s", FXT_ARG_STRING)->value.str, "str"));
  CHECK(arg(e, 7, "b", FXT_ARG_BOOL)->value.b);
  CHECK(arg(e, 8, "p", FXT_ARG_POINTER)->value.pointer == (uint64_t)(uintptr_t)&marker);
  CHECK(is(&arg(e, 9, "arr", FXT_ARG_STRING)->value.str, "arr"));
  CHECK(arg(e, 10, "e", FXT_ARG_INT32)->value.i32 == 5);
  CHECK(arg(e, 11, "null", FXT_ARG_POINTER)->value.pointer == 0);
  CHECK(arg(e, 12, "sh", FXT_ARG_INT32)->value.i32 == -2);
  CHECK(arg(e, 13, "uc", FXT_ARG_UINT32)->value.u32 == 200);
  CHECK(is(&arg(e, 14, "cs", FXT_ARG_STRING)->value.str, "std"));

  e = event("typed", 0);
  CHECK(e && e->num_args == 8);
  CHECK(arg(e, 0, "i32", FXT_ARG_INT32)->value.i32 == -7);
  CHECK(arg(e, 1, "u32", FXT_ARG_UINT32)->value.u32 == 7);
  CHECK(arg(e, 2, "i64", FXT_ARG_INT64)->value.i64 == -(1ll << 40));
  CHECK(arg(e, 3, "u64", FXT_ARG_UINT64)->value.u64 == 1ull << 41);
  CHECK(arg(e, 4, "f64", FXT_ARG_DOUBLE)->value.f64 == 3.0);
  CHECK(arg(e, 5, "bool", FXT_ARG_BOOL)->value.b);
  CHECK(arg(e, 6, "ptr", FXT_ARG_POINTER)->value.pointer == (uint64_t)(uintptr_t)&marker);
  CHECK(is(&arg(e, 7, "str", FXT_ARG_STRING)->value.str, "x"));
  e = event("bare", 0);
  CHECK(e && e->num_args == 0);

  CHECK(event("dur", 0) && event("dur", 0)->type == FXT_EVENT_DURATION_BEGIN);
  CHECK(arg(event("dur", 0), 0, "k", FXT_ARG_UINT32)->value.u32 == 1);
  CHECK(event("dur", 1) && event("dur", 1)->type == FXT_EVENT_DURATION_END);
  e = event("cmp", 0);
  CHECK(e && e->type == FXT_EVENT_DURATION_COMPLETE && e->trailer >= e->timestamp);
  e = event("ctr", 0);
  CHECK(e && e->type == FXT_EVENT_COUNTER && e->trailer == 42);
  CHECK(arg(e, 0, "v", FXT_ARG_UINT32)->value.u32 == 9); /* FXT_U64 of 9: fits in 32 bits */
  static const uint32_t async_types[] = {FXT_EVENT_ASYNC_BEGIN, FXT_EVENT_ASYNC_INSTANT,
                                         FXT_EVENT_ASYNC_END};
  static const uint32_t flow_types[] = {FXT_EVENT_FLOW_BEGIN, FXT_EVENT_FLOW_STEP,
                                        FXT_EVENT_FLOW_END};
  for (int i = 0; i < 3; i++) {
    e = event("async", i);
    CHECK(e && e->type == async_types[i] && e->trailer == 0x1234);
    e = event("flow", i);
    CHECK(e && e->type == flow_types[i] && e->trailer == 77);
  }
  CHECK(is(&arg(event("async", 1), 0, "at", FXT_ARG_STRING)->value.str, "middle"));
  CHECK(count("async") == 3 && count("flow") == 3);
  e = event("%d items from %s", 0);
  CHECK(e && is(&e->category, "printk") && e->num_args == 2);
  CHECK(arg(e, 0, "a0", FXT_ARG_INT32)->value.i32 == 12);
  CHECK(is(&arg(e, 1, "a1", FXT_ARG_STRING)->value.str, "here"));
  CHECK(event("no values", 0) && event("no values", 0)->num_args == 0);
  CHECK(count("off_instant") == 0);
}

static void check_scopes(int thrown)
{
  const struct fxt_event *e = event("outer", 0);
  CHECK(e && e->type == FXT_EVENT_DURATION_COMPLETE && is(&e->category, "cxx"));
  uint64_t outer_start = e ? e->timestamp : 0, outer_end = e ? e->trailer : 0;
  e = event("inner", 0);
  CHECK(e && e->type == FXT_EVENT_DURATION_COMPLETE);
  /* inner began after outer and ended before it (destroyed in reverse order) */
  CHECK(e && e->timestamp >= outer_start && e->trailer <= outer_end && e->trailer >= e->timestamp);
  e = event("in_scope", 0);
  CHECK(e && e->timestamp >= outer_start && e->timestamp <= outer_end);
  e = event("early", 0);
  CHECK(e && e->type == FXT_EVENT_DURATION_COMPLETE && e->trailer >= e->timestamp);
  CHECK(count("early") == 1 && count("not_reached") == 0);
  CHECK(count("thrown") == (thrown ? 1 : 0));
  e = event("thrown", 0);
  CHECK(!thrown || (e && e->type == FXT_EVENT_DURATION_COMPLETE));
  CHECK(count("off_scope") == 0);
}

/* The value fired with an event of system cxxs: its round (a double is round + 0.5). */
static int cxxs_round_of(const struct fxt_event *e)
{
  if (!e || e->num_args < 1)
    return -1;
  if (e->args[0].type == FXT_ARG_INT32)
    return e->args[0].value.i32;
  if (e->args[0].type == FXT_ARG_DOUBLE)
    return (int)e->args[0].value.f64;
  return -1;
}

/* How many events are named `name`; per_round[r] how many of them carry round r (1..5),
 * per_round[0] how many carry none. */
static int cxxs_counts(const char *name, int per_round[6])
{
  int total = 0;
  for (int r = 0; r < 6; r++)
    per_round[r] = 0;
  for (const struct fxt_event *e; (e = event(name, total)) != nullptr; total++) {
    int r = cxxs_round_of(e);
    if (r >= 1 && r <= 5)
      per_round[r]++;
    else
      per_round[0]++;
  }
  return total;
}

/* Each event of a site fired `sites` times a round: in rounds 1, 3, 5 (and 4 for
 * inl_instant), never in round 2. */
static void check_cxxs_event(const char *name, int sites, bool with_value, bool in_round_4)
{
  int per[6];
  int total = cxxs_counts(name, per);
  int rounds = 3 + in_round_4;
  bool ok = total == sites * rounds;
  if (with_value)
    ok = ok && per[0] == 0 && per[1] == sites && per[2] == 0 && per[3] == sites &&
         per[4] == (in_round_4 ? sites : 0) && per[5] == sites;
  if (!ok) {
    std::fprintf(stderr,
                 "%s: %d events (rounds 1-5: %d %d %d %d %d, other %d), expected %d a round\n",
                 name, total, per[1], per[2], per[3], per[4], per[5], per[0], sites);
    failures++;
  }
}

static void check_cxxs()
{
  /* sites a round: (a), (b), (d) once in each unit; (c) for int in each and double here */
  static const int sites[] = {2, 2, 3, 2};
  for (int k = 0; k < 4; k++) {
    std::string kind = cxxs_kinds[k];
    bool r4 = kind == "inl";
    check_cxxs_event((kind + "_instant").c_str(), sites[k], true, r4);
    check_cxxs_event((kind + "_counter").c_str(), sites[k], true, false);
    check_cxxs_event((kind + "_scope").c_str(), sites[k], false, false);
    check_cxxs_event((kind + "_dur").c_str(), 2 * sites[k], false, false); /* begin + end */
    const struct fxt_event *e = event((kind + "_scope").c_str(), 0);
    CHECK(e && e->type == FXT_EVENT_DURATION_COMPLETE && e->trailer >= e->timestamp);
    e = event((kind + "_counter").c_str(), 0);
    CHECK(e && e->type == FXT_EVENT_COUNTER && e->trailer == 3);
    e = event((kind + "_dur").c_str(), 0);
    CHECK(e && e->type == FXT_EVENT_DURATION_BEGIN);
    e = event((kind + "_dur").c_str(), 1);
    CHECK(e && e->type == FXT_EVENT_DURATION_END);
  }
  check_cxxs_event("generic_lambda_instant", 4, true, false); /* int and double, two units */
  check_cxxs_event("main_unit", 1, true, false);
  check_cxxs_event("everywhere_instant", 3, true, false); /* one here, two there */
  check_cxxs_event("other_unit", 1, true, false);
}

/* The embedder's writer from C++: words reserved, written, committed and read back. */
static int copy_words(void *ctx, uint32_t offset, const void *src, uint32_t len)
{
  std::memcpy(static_cast<unsigned char *>(ctx) + offset, src, len);
  return 0;
}

/* The ad-hoc sites' static tables (fxtrace.h, FXT_SITE_ARGS_): each argument's name, and its
 * type by its C++ type as FXT_ARG's overloads choose (an enum as int, an array and std::string's
 * c_str() as strings, nullptr as a pointer), listed in the live format before and after. */
static void check_fields(const char *sys, const char *ev, const char *const *names,
                         const uint16_t *types, uint16_t n)
{
  const struct fxt_tracepoint *tp = fxt_tracepoint_by_name(sys, ev);
  CHECK(tp && tp->nfields == n);
  for (uint16_t i = 0; tp && i < n && i < tp->nfields; i++)
    CHECK(std::strcmp(tp->fields[i].name, names[i]) == 0 && tp->fields[i].type == types[i]);
}

static void check_site_fields()
{
  static const char *const args[] = {"i", "u", "big", "neg", "d", "f", "s", "b",
                                     "p", "arr", "e", "null", "sh", "uc", "cs"};
  static const uint16_t args_t[] = {FXT_TYPE_S32, FXT_TYPE_U32, FXT_TYPE_U64, FXT_TYPE_S64,
                                    FXT_TYPE_DOUBLE, FXT_TYPE_DOUBLE, FXT_TYPE_STR,
                                    FXT_TYPE_BOOL, FXT_TYPE_PTR, FXT_TYPE_STR, FXT_TYPE_S32,
                                    FXT_TYPE_PTR, FXT_TYPE_S32, FXT_TYPE_U32, FXT_TYPE_STR};
  check_fields("cxx", "args", args, args_t, 15);
  static const char *const typed[] = {"i32", "u32", "i64", "u64", "f64", "bool", "ptr", "str"};
  static const uint16_t typed_t[] = {FXT_TYPE_S32,    FXT_TYPE_U32,  FXT_TYPE_S64,
                                     FXT_TYPE_U64,    FXT_TYPE_DOUBLE, FXT_TYPE_BOOL,
                                     FXT_TYPE_PTR,    FXT_TYPE_STR};
  check_fields("cxx", "typed", typed, typed_t, 8);
  static const char *const v[] = {"v"};
  static const uint16_t s32[] = {FXT_TYPE_S32};
  check_fields("cxx", "bare", v, s32, 0);
  for (const char *ev : {"member_instant", "member_counter", "lambda_instant", "lambda_counter",
                         "inl_counter", "everywhere_instant"})
    check_fields("cxxs", ev, v, s32, 1);
  static char text[8192];
  CHECK(fxt_fs_cat("events/cxx/ctr/format", text, sizeof(text)) > 0);
  CHECK(std::strstr(text, "\tfield:u64 id;\toffset:8;\tsize:8;\tsigned:0;\n"
                          "\tfield:u64 v;\toffset:16;\tsize:8;\tsigned:0;\n") != nullptr);
  CHECK(fxt_fs_cat("events/cxxs/member_counter/format", text, sizeof(text)) > 0);
  CHECK(std::strstr(text, "\tfield:s32 v;\toffset:16;\tsize:4;\tsigned:1;\n") != nullptr);
}

static void check_writer()
{
  alignas(64) static unsigned char storage[256];
  static struct fxt_writer w;
  CHECK(fxt_writer_init(&w, storage, sizeof(storage), 1, 2) == 0);
  const uint64_t header = fxt_w_record(FXT_RECORD_METADATA, 3); /* 3 words */
  struct fxt_reservation res;
  CHECK(fxt_writer_reserve(&w, header, &res) == 0);
  fxt_res_write_word(&res, 0x1122334455667788ull);
  fxt_res_write_bytes(&res, "abc", 3);
  fxt_res_commit(&res);
  uint64_t out[4] = {0, 0, 0, 0};
  CHECK(fxt_writer_read(&w, copy_words, out, sizeof(out)) == 24);
  CHECK(out[0] == header && out[1] == 0x1122334455667788ull);
  CHECK(std::memcmp(&out[2], "abc\0\0\0\0\0", 8) == 0);
}

int main()
{
  char path[256];
  if (!cxx_session_start("cxx", "cxx:*,cxxhdr:*,printk:*,cxxs:*", 0, path, sizeof(path)))
    return 1;
  check_site_fields(); /* before any is fired */
  fire_typed();
  fire_adhoc();
  int thrown = fire_scopes();
  fire_cxxs(); /* last: it enables every event */
  CHECK(fxt_session_stop() == 0);

  file = cxx_read_file(path);
  unlink(path);
  check_typed();
  check_adhoc();
  check_scopes(thrown);
  check_cxxs();
  check_writer();
  if (failures) {
    std::fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  std::printf("ok: every macro from C++ (%ld, %s)\n", (long)__cplusplus,
              thrown ? "exceptions" : "no exceptions");
  return 0;
}
