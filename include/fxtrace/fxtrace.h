/* fxtrace/fxtrace.h - instrumentation: typed tracepoints, ad-hoc events, printk.
 *
 * Typed tracepoints (ftrace style): declare once, fire with the field values.
 *
 *   FXT_TRACEPOINT(demo, work_done, "seq=%llu worker=%u name=%s",
 *                  (u64, seq), (u32, worker), (str, name, 32));
 *   ...
 *   FXT_TRACE(demo, work_done, seq, worker, name);
 *   if (FXT_TRACE_ENABLED(demo, work_done)) { expensive(); FXT_TRACE(...); }
 *
 *   Field types: u8 u16 u32 u64 s8 s16 s32 s64 bool f64 (double) ptr, (str, name, BOUND) — a
 *   NUL-terminated string copied inline, at most BOUND (<= 256) bytes — and (bytes, name, N) —
 *   a fixed array of N bytes. 1..15 fields. The print format is printf-like and optional
 *   (NULL makes "f1=%... f2=%..." from the fields); it is never evaluated when tracing, only
 *   by readers. A declaration may sit in a header: each translation unit then has its own copy
 *   of the tracepoint, and all copies are one event (one id, enabled together).
 *
 * Ad-hoc events (Fuchsia / Perfetto style), anywhere:
 *
 *   FXT_INSTANT("demo", "tick", FXT_U64("n", n), FXT_STR("who", name));
 *   FXT_BEGIN("demo", "load");  ...  FXT_END("demo", "load");
 *   { FXT_SCOPE("demo", "parse"); ... }          one complete event when the block exits
 *   FXT_COMPLETE("demo", "io", start_ticks);     start from fxt_now()
 *   FXT_COUNTER("demo", "queue", 0, FXT_U64("depth", d));
 *   FXT_ASYNC_BEGIN("demo", "req", id); FXT_ASYNC_INSTANT(...); FXT_ASYNC_END(...);
 *   FXT_FLOW_BEGIN("demo", "msg", id); FXT_FLOW_STEP(...); FXT_FLOW_END(...);
 *   FXT_PRINTK("got %d bytes from %s", n, host);  format interned, values stored raw (and
 *                                                 checked against the format, as printf's)
 *
 *   FXT_COUNTER's third argument is the counter's id (FXT's counter id, a uint64): samples of
 *   one name with different ids are different counters - one per queue, per connection -
 *   (`fxtrace convert --to json` names them "queue (3)"); 0 when the name has one counter.
 *   Perfetto's FXT importer keys counter tracks by process, name and argument only: where it
 *   must tell them apart, give each its own name. Each argument is one series of the counter.
 *   The async and flow macros' id ties their begin, steps and end together.
 *
 *   Arguments: FXT_I32, FXT_U32, FXT_I64, FXT_U64, FXT_F64, FXT_BOOL, FXT_PTR, FXT_STR (name,
 *   value), or FXT_ARG(name, value) which picks the type from the value. Names and the system
 *   and event strings must be string literals. 0..15 arguments. The argument macros are only
 *   for the event macros' argument lists. Each site keeps a static table of its arguments'
 *   names and types (FXT_ARG's: the type of the value's C type), so they are fields of the
 *   event's live `format` and filter from the program's start (README, "Tracing a program");
 *   the fire site's instructions are the same as without it. In C++17 an FXT_ARG value
 *   may not hold a lambda expression (its type is taken in an unevaluated operand, where
 *   C++20 first allows one): compute it before, or use FXT_I64 and the like.
 *
 * Every event is off until a session enables it (fxtrace/session.h). Off, a fire site costs
 * one relaxed load and one predictable branch. Build with -DFXT_DISABLE to compile every macro
 * of this header away (arguments are then not evaluated).
 *
 * Languages: C11 and C++17 or later (gcc, clang), the same macros and the same code:
 *
 *   what                      C11                            C++17, C++20
 *   every macro above         yes                            yes, same instructions
 *   FXT_ARG's type choice     _Generic                       overloads (fxt_argv_of)
 *   FXT_SCOPE's end           cleanup attribute              a destructor: also on an
 *                                                            exception or a return
 *   atomics of the inline     <stdatomic.h>                  __atomic builtins on the same
 *   path                                                     structs (detail/atomic.h)
 *   exceptions, RTTI          -                              none thrown (library calls
 *                                                            noexcept); -fno-exceptions and
 *                                                            -fno-rtti work
 *   session.h, tracefs.h      yes                            yes (extern "C")
 *
 * A tracepoint declared in a header and fired from several units, of either language, is one
 * event. FXT_PRINTK's values are checked against its format as printf's, in both languages.
 *
 * Ad-hoc events and FXT_SCOPE work in every C++ function with g++ as with clang++: inline
 * functions, member functions defined in their class, function templates (each instantiation
 * its own site, all one event), lambdas (generic ones too). An event is registered when the
 * object that holds its code loads (dlopen included), as in C, so it is in available_events
 * from the start and the enabled patterns (events=, -e, a live `enable`) apply to it: an inline
 * function's or a template's event is there once the program uses the function (a function no
 * unit emits has no code, so no event). Each unit that emits an inline function has its own
 * copy of its sites, all one event by name (one id, enabled together, one line in
 * available_events). Off, every site is the same one load and branch ("C++ sites" below).
 *
 * User API (docs/architecture.md, "Public headers").
 */
#ifndef FXTRACE_FXTRACE_H
#define FXTRACE_FXTRACE_H

#include "common.h"
#include "tracepoint.h"

#ifndef FXT_DISABLE
#include "detail/emit.h"
#include "detail/pp.h"

/* ---- registration: one linker section of tracepoint pointers per object ---------------- */

/* retain (SHF_GNU_RETAIN, "R"): --gc-sections keeps the section though only __start_fxt_tp
 * refers to it (lld 14's default, -z start-stop-gc, dropped it, and every event with it). */
#if defined(__has_attribute)
#if __has_attribute(retain)
#define FXT_TP_RETAIN_ retain,
#define FXT_TP_RETAIN_FLAG_ "R"
#endif
#endif
#ifndef FXT_TP_RETAIN_
#define FXT_TP_RETAIN_
#define FXT_TP_RETAIN_FLAG_ ""
#endif
#define FXT_TP_SECTION                                                                       \
  __attribute__((used, FXT_TP_RETAIN_ section("fxt_tp"), aligned(sizeof(void *))))

FXT_EXTERN_C_BEGIN
extern struct fxt_tracepoint *const __start_fxt_tp[] __attribute__((weak, visibility("hidden")));
extern struct fxt_tracepoint *const __stop_fxt_tp[] __attribute__((weak, visibility("hidden")));
FXT_EXTERN_C_END

/* Every translation unit that includes this header registers its object's section when the
 * object loads and unregisters it when it unloads (the registry counts the units). The
 * library's own units do not: it registers its section once, from the unit that defines its
 * tracepoint (src/host/tracefs_nodes.c), not once a unit (a constructor, a destructor and
 * their two relocated pointers each). */
#ifndef FXT_BUILDING_LIBRARY
__attribute__((constructor)) static void fxt_register_this_object(void)
{
  fxt_register_section(__start_fxt_tp, __stop_fxt_tp);
}
__attribute__((destructor)) static void fxt_unregister_this_object(void)
{
  fxt_unregister_section(__start_fxt_tp, __stop_fxt_tp);
}
#endif

/* True when the tracepoint is enabled (one relaxed load). */
#define fxt_enabled(tp) FXT_LOAD(&(tp)->enabled, FXT_MO_RELAXED)

/* A tracepoint's static initializer: positional, every member given, as C++17 has no
 * designated initializers; `enabled`, `id` and `reg` zero (the registry's). */
#ifdef __cplusplus
#define FXT_TP_INIT_(kind_, nfields_, sys_, name_, fmt_, fields_)                             \
  {0, kind_, nfields_, sys_, name_, fmt_, fields_, __FILE__, __LINE__, 0, {}}
#else
#define FXT_TP_INIT_(kind_, nfields_, sys_, name_, fmt_, fields_)                             \
  {0, kind_, nfields_, sys_, name_, fmt_, fields_, __FILE__, __LINE__, 0, {0}}
#endif

/* A union fxt_value with member m set to x (u, i, d, p, s): what (union fxt_value){.m = x}
 * says in C, in a spelling C++ has too. Inlined, it is the value's register. */
static inline FXT_ALWAYS_INLINE union fxt_value fxt_value_u(uint64_t x)
{
  union fxt_value v;
  v.u = x;
  return v;
}
static inline FXT_ALWAYS_INLINE union fxt_value fxt_value_i(int64_t x)
{
  union fxt_value v;
  v.i = x;
  return v;
}
static inline FXT_ALWAYS_INLINE union fxt_value fxt_value_d(double x)
{
  union fxt_value v;
  v.d = x;
  return v;
}
static inline FXT_ALWAYS_INLINE union fxt_value fxt_value_p(const void *x)
{
  union fxt_value v;
  v.p = x;
  return v;
}
static inline FXT_ALWAYS_INLINE union fxt_value fxt_value_s(const char *x)
{
  union fxt_value v;
  v.s = x;
  return v;
}

/* ---- typed tracepoints ----------------------------------------------------------------- */

/* Field types: FXT_FT_<type>(K, i, name[, bound]) calls K(i, type code, C parameter type,
 * name, bound, member of union fxt_value). */
#define FXT_FT_u8(K, idx, n) K(idx, FXT_TYPE_U8, uint8_t, n, 0, u)
#define FXT_FT_u16(K, idx, n) K(idx, FXT_TYPE_U16, uint16_t, n, 0, u)
#define FXT_FT_u32(K, idx, n) K(idx, FXT_TYPE_U32, uint32_t, n, 0, u)
#define FXT_FT_u64(K, idx, n) K(idx, FXT_TYPE_U64, uint64_t, n, 0, u)
#define FXT_FT_s8(K, idx, n) K(idx, FXT_TYPE_S8, int8_t, n, 0, i)
#define FXT_FT_s16(K, idx, n) K(idx, FXT_TYPE_S16, int16_t, n, 0, i)
#define FXT_FT_s32(K, idx, n) K(idx, FXT_TYPE_S32, int32_t, n, 0, i)
#define FXT_FT_s64(K, idx, n) K(idx, FXT_TYPE_S64, int64_t, n, 0, i)
#define FXT_FT_bool(K, idx, n) K(idx, FXT_TYPE_BOOL, bool, n, 0, u)
#define FXT_FT__Bool(K, idx, n) FXT_FT_bool(K, idx, n) /* <stdbool.h> turns bool into _Bool */
#define FXT_FT_f64(K, idx, n) K(idx, FXT_TYPE_DOUBLE, double, n, 0, d)
#define FXT_FT_ptr(K, idx, n) K(idx, FXT_TYPE_PTR, const void *, n, 0, p)
#define FXT_FT_str(K, idx, n, bound) K(idx, FXT_TYPE_STR, const char *, n, bound, s)
#define FXT_FT_bytes(K, idx, n, size) K(idx, FXT_TYPE_BYTES, const void *, n, size, p)

/* Applies K to field f = (type, name[, bound]) at index i. */
#define FXT_FIELD_(K, i, f) FXT_FIELD_ARGS_(K, i, FXT_PP_EXPAND f)
#define FXT_FIELD_ARGS_(...) FXT_FIELD_TYPE_(__VA_ARGS__)
#define FXT_FIELD_TYPE_(K, i, t, ...) FXT_FT_##t(K, i, __VA_ARGS__)

#define FXT_DESC_(i, f) FXT_FIELD_(FXT_DESC_X, i, f),
#define FXT_DESC_X(i, code, ctype, n, bound, m) {#n, code, bound}
#define FXT_PARAM_(i, f) FXT_FIELD_(FXT_PARAM_X, i, f)
#define FXT_PARAM_X(i, code, ctype, n, bound, m) , ctype n
#define FXT_LEN_(i, f) FXT_FIELD_(FXT_LEN_X, i, f)
#define FXT_LEN_X(i, code, ctype, n, bound, m)                                               \
  const uint32_t fxt_len##i = fxt_field_len(code, bound, fxt_value_##m(n));
#define FXT_VAL_(i, f) FXT_FIELD_(FXT_VAL_X, i, f)
#define FXT_VAL_X(i, code, ctype, n, bound, m) fxt_value_##m(n),
#define FXT_LENV_(i, f) fxt_len##i,
#define FXT_WORDS_(i, f) FXT_FIELD_(FXT_WORDS_X, i, f)
#define FXT_WORDS_X(i, code, ctype, n, bound, m) +fxt_field_words_n(code, fxt_len##i, fxt_narrow)
#define FXT_WIDE_(i, f) FXT_FIELD_(FXT_WIDE_X, i, f)
#define FXT_WIDE_X(i, code, ctype, n, bound, m) | fxt_field_wide(code, fxt_value_##m(n))
#define FXT_NAME_(i, f) FXT_FIELD_(FXT_NAME_X, i, f)
#define FXT_NAME_X(i, code, ctype, n, bound, m) , n
#define FXT_PUTF_(i, f) FXT_FIELD_(FXT_PUTF_X, i, f)
#define FXT_PUTF_X(i, code, ctype, n, bound, m)                                              \
  fxt_put_field(&fxt_f.c, fxt_tp->reg.arg_header[i], code, fxt_value_##m(n), fxt_len##i,     \
                fxt_narrow);
#define FXT_PUT_(i, f) FXT_FIELD_(FXT_PUT_X, i, f)
#define FXT_PUT_X(i, code, ctype, n, bound, m)                                               \
  fxt_put_field(&fxt_c, fxt_tp->reg.arg_header[i], code, fxt_value_##m(n), fxt_len##i,       \
                fxt_narrow);

/* The fast path's attempt (fxt_fire_ and fxt_fire_clk_ below; clk: as fxt_fast_begin's). */
#define FXT_FAST_TRY_(clk, ...)                                                              \
  const uint32_t fxt_words = 2 FXT_PP_MAP(FXT_WORDS_, __VA_ARGS__);                          \
  if (FXT_LIKELY(fxt_fast_begin(fxt_tp, fxt_words,                                           \
                                fxt_w_event(FXT_EVENT_INSTANT, FXT_PP_NARGS(__VA_ARGS__)),   \
                                clk, &fxt_f))) {                                             \
    fxt_put(&fxt_f.c, (clk) ? fxt_f.ts : fxt_fast_ticks());                                  \
    FXT_PP_MAP(FXT_PUTF_, __VA_ARGS__)                                                       \
    fxt_fast_end(&fxt_f);                                                                    \
    return;                                                                                  \
  }

#define FXT_TRACEPOINT(sys, ev, fmt, ...)                                                    \
  static const struct fxt_field fxt_fields_##sys##_##ev[] = {                                \
      FXT_PP_MAP(FXT_DESC_, __VA_ARGS__)};                                                   \
  static struct fxt_tracepoint fxt_tp_##sys##_##ev = FXT_TP_INIT_(                          \
      FXT_TP_TYPED, sizeof(fxt_fields_##sys##_##ev) / sizeof(struct fxt_field), #sys, #ev,     \
      fmt, fxt_fields_##sys##_##ev);                                                         \
  static struct fxt_tracepoint *const fxt_tp_ptr_##sys##_##ev FXT_TP_SECTION =             \
      &fxt_tp_##sys##_##ev;                                                                  \
  /* The general path: every case (fxt_emit.h); the fast path below falls back to it. */   \
  __attribute__((unused, noinline, cold)) static void fxt_fire_slow_##sys##_##ev(            \
      int fxt_unused_ FXT_PP_MAP(FXT_PARAM_, __VA_ARGS__)) FXT_NOEXCEPT                     \
  {                                                                                          \
    struct fxt_tracepoint *const fxt_tp = &fxt_tp_##sys##_##ev;                             \
    struct fxt_tslot *fxt_t = fxt_emit_enter();                                              \
    (void)fxt_unused_;                                                                       \
    if (!fxt_t) {                                                                            \
      /* Refused; recording off, an event with a hook still runs its triggers (traceon). */ \
      if (FXT_UNLIKELY(FXT_LOAD(&fxt_tp->reg.filter, FXT_MO_RELAXED) != FXT_NULL)) {        \
        FXT_PP_MAP(FXT_LEN_, __VA_ARGS__)                                                    \
        const union fxt_value fxt_v[] = {FXT_PP_MAP(FXT_VAL_, __VA_ARGS__)};                 \
        const uint32_t fxt_l[] = {FXT_PP_MAP(FXT_LENV_, __VA_ARGS__)};                        \
        fxt_filter_off(fxt_tp, fxt_v, fxt_l);                                                \
      }                                                                                      \
      return;                                                                                \
    }                                                                                        \
    uint32_t fxt_cpu;                                                                        \
    uint64_t fxt_ts = fxt_emit_time(&fxt_cpu);                                               \
    FXT_PP_MAP(FXT_LEN_, __VA_ARGS__)                                                        \
    if (FXT_UNLIKELY(FXT_LOAD(&fxt_tp->reg.filter, FXT_MO_ACQUIRE) != FXT_NULL)) {          \
      /* A filter decides before anything is reserved: a filtered-out event costs no space. */ \
      const union fxt_value fxt_v[] = {FXT_PP_MAP(FXT_VAL_, __VA_ARGS__)};                   \
      const uint32_t fxt_l[] = {FXT_PP_MAP(FXT_LENV_, __VA_ARGS__)};                          \
      if (!fxt_filter_pass(fxt_tp, fxt_t, fxt_v, fxt_l, fxt_cpu)) {                          \
        fxt_emit_leave(fxt_t);                                                               \
        return;                                                                              \
      }                                                                                      \
    }                                                                                        \
    const bool fxt_narrow = (0 FXT_PP_MAP(FXT_WIDE_, __VA_ARGS__)) == 0;                     \
    const uint32_t fxt_words =                                                               \
        2 + fxt_emit_thread_words(fxt_t) FXT_PP_MAP(FXT_WORDS_, __VA_ARGS__);               \
    const uint64_t fxt_hdr = fxt_tp->reg.header | fxt_t->thread_bits |                       \
                             fxt_w_event(FXT_EVENT_INSTANT, FXT_PP_NARGS(__VA_ARGS__)) |     \
                             fxt_w_size(fxt_words);                                          \
    struct fxt_cursor fxt_c;                                                                 \
    if (fxt_emit_reserve(fxt_t, fxt_cpu, fxt_ts, fxt_hdr, &fxt_c)) {                         \
      fxt_put(&fxt_c, fxt_hdr);                                                              \
      fxt_put_event_head(&fxt_c, fxt_t, fxt_ts);                                             \
      FXT_PP_MAP(FXT_PUT_, __VA_ARGS__)                                                      \
      fxt_emit_commit(fxt_t, &fxt_c);                                                        \
      fxt_fast_refresh(fxt_t);                                                               \
    }                                                                                        \
    fxt_emit_leave(fxt_t);                                                                   \
  }                                                                                          \
  /* The fast path on CLOCK_MONOTONIC, with the clock's call (fxt_fast_begin); the fast    \
   * path below falls back to it, and it to the general path. */                            \
  __attribute__((unused, noinline)) static void fxt_fire_clk_##sys##_##ev(                   \
      int fxt_unused_ FXT_PP_MAP(FXT_PARAM_, __VA_ARGS__)) FXT_NOEXCEPT                     \
  {                                                                                          \
    if (!fxt_clock_is_tsc) {                                                                 \
      struct fxt_tracepoint *const fxt_tp = &fxt_tp_##sys##_##ev;                           \
      FXT_PP_MAP(FXT_LEN_, __VA_ARGS__)                                                      \
      struct fxt_fast fxt_f;                                                                 \
      const bool fxt_narrow = (0 FXT_PP_MAP(FXT_WIDE_, __VA_ARGS__)) == 0;                   \
      FXT_FAST_TRY_(true, __VA_ARGS__)                                                       \
    }                                                                                        \
    fxt_fire_slow_##sys##_##ev(fxt_unused_ FXT_PP_MAP(FXT_NAME_, __VA_ARGS__));              \
  }                                                                                          \
  /* The common case, with no call and so no stack frame (fxt_fast_begin). */               \
  __attribute__((unused, noinline)) static void fxt_fire_##sys##_##ev(                       \
      int fxt_unused_ FXT_PP_MAP(FXT_PARAM_, __VA_ARGS__)) FXT_NOEXCEPT                     \
  {                                                                                          \
    struct fxt_tracepoint *const fxt_tp = &fxt_tp_##sys##_##ev;                             \
    FXT_PP_MAP(FXT_LEN_, __VA_ARGS__)                                                        \
    struct fxt_fast fxt_f;                                                                   \
    /* Two copies, each of constant size: one branch picks (fxt_field_wide). */              \
    if (FXT_LIKELY((0 FXT_PP_MAP(FXT_WIDE_, __VA_ARGS__)) == 0)) {                           \
      const bool fxt_narrow = true;                                                          \
      FXT_FAST_TRY_(false, __VA_ARGS__)                                                      \
    } else {                                                                                 \
      const bool fxt_narrow = false;                                                         \
      FXT_FAST_TRY_(false, __VA_ARGS__)                                                      \
    }                                                                                        \
    fxt_fire_clk_##sys##_##ev(fxt_unused_ FXT_PP_MAP(FXT_NAME_, __VA_ARGS__));               \
  }                                                                                          \
  struct fxt_swallow_semicolon_

#define FXT_TRACE(sys, ev, ...)                                                              \
  do {                                                                                       \
    if (FXT_UNLIKELY(fxt_enabled(&fxt_tp_##sys##_##ev)))                                     \
      fxt_fire_##sys##_##ev(0, __VA_ARGS__);                                                 \
  } while (0)

#define FXT_TRACE_ENABLED(sys, ev) FXT_UNLIKELY(fxt_enabled(&fxt_tp_##sys##_##ev))

/* ---- ad-hoc events ---------------------------------------------------------------------- */

/* An argument value as the macros pass it. */
struct fxt_argv {
  const char *name; /* string literal; NULL ends the list */
  uint32_t type;    /* enum fxt_type */
  union fxt_value v;
};

/* An argument macro expands to a tuple (K, name, type, value) that the event macros below
 * take apart: the site's static table of (name, type) - its fields in the live `format` and
 * filter, known before the first emission (src/base/tp_format.h) - from name and type, the
 * runtime list of struct fxt_argv from all of it. K: v, value is a union fxt_value and type
 * the argument's; g (FXT_ARG), value is a struct fxt_argv and type the field type its C type
 * gives (an integer constant expression: FXT_ARGT_), which the value's own type (narrowed to
 * 32 bits when it fits, fxt_argv_i64) may be narrower than; e, the list's end. */
#define FXT_I32(n, x) (fxt_k_v, n, FXT_TYPE_S32, fxt_value_i((int32_t)(x)))
#define FXT_U32(n, x) (fxt_k_v, n, FXT_TYPE_U32, fxt_value_u((uint32_t)(x)))
#define FXT_I64(n, x) (fxt_k_v, n, FXT_TYPE_S64, fxt_value_i((int64_t)(x)))
#define FXT_U64(n, x) (fxt_k_v, n, FXT_TYPE_U64, fxt_value_u((uint64_t)(x)))
#define FXT_F64(n, x) (fxt_k_v, n, FXT_TYPE_DOUBLE, fxt_value_d((double)(x)))
#define FXT_BOOL(n, x) (fxt_k_v, n, FXT_TYPE_BOOL, fxt_value_u((x) ? 1u : 0u))
#define FXT_PTR(n, x) (fxt_k_v, n, FXT_TYPE_PTR, fxt_value_p((const void *)(x)))
#define FXT_STR(n, x) (fxt_k_v, n, FXT_TYPE_STR, fxt_value_s(x))
#define FXT_ARGS_END_ (fxt_k_e, ~, ~, ~)
/* Argument i's struct fxt_argv (FXT_AV_), static field (FXT_AF_) and, in C++, its type as an
 * enumerator of the site's block (FXT_AT_: a local class may name it, not the value). */
#define FXT_AV_(i, a) FXT_PP_CAT(FXT_AV_, FXT_PP_FIRST a) a
#define FXT_AV_fxt_k_v(K, n, t, x) {"" n, t, x},
#define FXT_AV_fxt_k_g(K, n, t, x) x,
#define FXT_AV_fxt_k_e(K, n, t, x) {FXT_NULL, 0, {0}}
#define FXT_ARG_CALL_(m, ...) m(__VA_ARGS__)
#define FXT_AF_(i, a) FXT_ARG_CALL_(FXT_PP_CAT(FXT_AF_, FXT_PP_FIRST a), i, FXT_PP_EXPAND a)
#define FXT_AF_fxt_k_e(i, ...) {FXT_NULL, 0, 0}
#ifdef __cplusplus
#define FXT_AF_fxt_k_v(i, K, n, t, x) {"" n, fxt_argt_##i##_, 0},
#define FXT_AT_(i, a) FXT_ARG_CALL_(FXT_PP_CAT(FXT_AT_, FXT_PP_FIRST a), i, FXT_PP_EXPAND a)
#define FXT_AT_fxt_k_v(i, K, n, t, x) fxt_argt_##i##_ = (t),
#define FXT_AT_fxt_k_g FXT_AT_fxt_k_v
#define FXT_AT_fxt_k_e(i, ...)
#else
#define FXT_AF_fxt_k_v(i, K, n, t, x) {"" n, (t), 0},
#endif
#define FXT_AF_fxt_k_g FXT_AF_fxt_k_v

/* FXT_ARG picks one of these by the value's type; only the chosen one sees the value. */
static inline struct fxt_argv fxt_argv_i64(const char *n, int64_t x)
{
  struct fxt_argv a = {n, x >= INT32_MIN && x <= INT32_MAX ? FXT_TYPE_S32 : FXT_TYPE_S64,
                       fxt_value_i(x)};
  return a;
}
static inline struct fxt_argv fxt_argv_u64(const char *n, uint64_t x)
{
  struct fxt_argv a = {n, x <= UINT32_MAX ? FXT_TYPE_U32 : FXT_TYPE_U64, fxt_value_u(x)};
  return a;
}
static inline struct fxt_argv fxt_argv_f64(const char *n, double x)
{
  struct fxt_argv a = {n, FXT_TYPE_DOUBLE, fxt_value_d(x)};
  return a;
}
static inline struct fxt_argv fxt_argv_bool(const char *n, bool x)
{
  struct fxt_argv a = {n, FXT_TYPE_BOOL, fxt_value_u(x)};
  return a;
}
static inline struct fxt_argv fxt_argv_str(const char *n, const char *x)
{
  struct fxt_argv a = {n, FXT_TYPE_STR, fxt_value_s(x)};
  return a;
}
static inline struct fxt_argv fxt_argv_ptr(const char *n, const void *x)
{
  struct fxt_argv a = {n, FXT_TYPE_PTR, fxt_value_p(x)};
  return a;
}
#ifdef __cplusplus
/* C++: overloads choose as C's _Generic below does (an enum as its integer, string literals
 * and char arrays as strings, any other pointer as a pointer). */
extern "C++" {
static inline struct fxt_argv fxt_argv_of(const char *n, bool x) { return fxt_argv_bool(n, x); }
static inline struct fxt_argv fxt_argv_of(const char *n, float x)
{
  return fxt_argv_f64(n, (double)x);
}
static inline struct fxt_argv fxt_argv_of(const char *n, double x) { return fxt_argv_f64(n, x); }
static inline struct fxt_argv fxt_argv_of(const char *n, char *x) { return fxt_argv_str(n, x); }
static inline struct fxt_argv fxt_argv_of(const char *n, const char *x)
{
  return fxt_argv_str(n, x);
}
static inline struct fxt_argv fxt_argv_of(const char *n, char x) { return fxt_argv_i64(n, x); }
static inline struct fxt_argv fxt_argv_of(const char *n, signed char x)
{
  return fxt_argv_i64(n, x);
}
static inline struct fxt_argv fxt_argv_of(const char *n, short x) { return fxt_argv_i64(n, x); }
static inline struct fxt_argv fxt_argv_of(const char *n, int x) { return fxt_argv_i64(n, x); }
static inline struct fxt_argv fxt_argv_of(const char *n, long x) { return fxt_argv_i64(n, x); }
static inline struct fxt_argv fxt_argv_of(const char *n, long long x)
{
  return fxt_argv_i64(n, x);
}
static inline struct fxt_argv fxt_argv_of(const char *n, unsigned char x)
{
  return fxt_argv_u64(n, x);
}
static inline struct fxt_argv fxt_argv_of(const char *n, unsigned short x)
{
  return fxt_argv_u64(n, x);
}
static inline struct fxt_argv fxt_argv_of(const char *n, unsigned x) { return fxt_argv_u64(n, x); }
static inline struct fxt_argv fxt_argv_of(const char *n, unsigned long x)
{
  return fxt_argv_u64(n, x);
}
static inline struct fxt_argv fxt_argv_of(const char *n, unsigned long long x)
{
  return fxt_argv_u64(n, x);
}
static inline struct fxt_argv fxt_argv_of(const char *n, decltype(nullptr))
{
  return fxt_argv_ptr(n, FXT_NULL);
}
template <typename T> static inline struct fxt_argv fxt_argv_of(const char *n, T *x)
{
  return fxt_argv_ptr(n, (const void *)x);
}
/* The field type of FXT_ARG's value by its C type, chosen by the same overloads, in an
 * unevaluated operand (declared, never defined). */
template <unsigned T> struct fxt_argt_is_ {
  static constexpr uint16_t value = T;
};
struct fxt_argt_ {
  static fxt_argt_is_<FXT_TYPE_BOOL> of(bool);
  static fxt_argt_is_<FXT_TYPE_DOUBLE> of(float);
  static fxt_argt_is_<FXT_TYPE_DOUBLE> of(double);
  static fxt_argt_is_<FXT_TYPE_STR> of(char *);
  static fxt_argt_is_<FXT_TYPE_STR> of(const char *);
  static fxt_argt_is_<FXT_TYPE_S32> of(char);
  static fxt_argt_is_<FXT_TYPE_S32> of(signed char);
  static fxt_argt_is_<FXT_TYPE_S32> of(short);
  static fxt_argt_is_<FXT_TYPE_S32> of(int);
  static fxt_argt_is_<FXT_TYPE_S64> of(long);
  static fxt_argt_is_<FXT_TYPE_S64> of(long long);
  static fxt_argt_is_<FXT_TYPE_U32> of(unsigned char);
  static fxt_argt_is_<FXT_TYPE_U32> of(unsigned short);
  static fxt_argt_is_<FXT_TYPE_U32> of(unsigned);
  static fxt_argt_is_<FXT_TYPE_U64> of(unsigned long);
  static fxt_argt_is_<FXT_TYPE_U64> of(unsigned long long);
  static fxt_argt_is_<FXT_TYPE_PTR> of(decltype(nullptr));
  template <typename T> static fxt_argt_is_<FXT_TYPE_PTR> of(T *);
};
}
#define FXT_ARGT_(x) decltype(fxt_argt_::of(x))::value
#define FXT_ARG(n, x) (fxt_k_g, n, FXT_ARGT_(x), fxt_argv_of("" n, (x)))
#else
/* The field type of FXT_ARG's value by its C type (the choice above; an integer constant). */
#define FXT_ARGT_(x)                                                                         \
  _Generic((x), _Bool: FXT_TYPE_BOOL, float: FXT_TYPE_DOUBLE, double: FXT_TYPE_DOUBLE,      \
           char *: FXT_TYPE_STR, const char *: FXT_TYPE_STR, char: FXT_TYPE_S32,             \
           signed char: FXT_TYPE_S32, short: FXT_TYPE_S32, int: FXT_TYPE_S32,                \
           long: FXT_TYPE_S64, long long: FXT_TYPE_S64, unsigned char: FXT_TYPE_U32,         \
           unsigned short: FXT_TYPE_U32, unsigned: FXT_TYPE_U32,                             \
           unsigned long: FXT_TYPE_U64, unsigned long long: FXT_TYPE_U64,                    \
           default: FXT_TYPE_PTR)
#define FXT_ARG(n, x) (fxt_k_g, n, FXT_ARGT_(x), FXT_ARGV_C_(n, x))
#define FXT_ARGV_C_(n, x)                                                                    \
  _Generic((x), _Bool: fxt_argv_bool, float: fxt_argv_f64, double: fxt_argv_f64,            \
           char *: fxt_argv_str, const char *: fxt_argv_str, char: fxt_argv_i64,             \
           signed char: fxt_argv_i64,                                                        \
           short: fxt_argv_i64, int: fxt_argv_i64, long: fxt_argv_i64,                       \
           long long: fxt_argv_i64, unsigned char: fxt_argv_u64, unsigned short: fxt_argv_u64, \
           unsigned: fxt_argv_u64, unsigned long: fxt_argv_u64,                              \
           unsigned long long: fxt_argv_u64, default: fxt_argv_ptr)("" n, (x))
#endif

FXT_EXTERN_C_BEGIN
/* Emits an ad-hoc event of FXT event type etype (with the trailer word where the type has
 * one) for the call site tp, with the arguments av[0..n). */
FXT_API void fxt_emit_adhoc(struct fxt_tracepoint *tp, uint32_t etype, uint64_t trailer,
                            const struct fxt_argv *av, uint32_t n) FXT_NOEXCEPT;
/* Emits a printk event: the format is the event name; values become args a0, a1, .... */
FXT_API void fxt_emit_printk(struct fxt_tracepoint *tp, const struct fxt_argv *av,
                             uint32_t n) FXT_NOEXCEPT;
/* The current trace clock (for FXT_COMPLETE's start). */
FXT_API uint64_t fxt_now(void) FXT_NOEXCEPT;
FXT_EXTERN_C_END

/* An ad-hoc event's call site: its tracepoint, named `site`, listed in the object's section.
 *
 * C: a static at the site, and a pointer to it in the section (FXT_TP_SECTION).
 *
 * C++ sites: the same in every function, inline or not, template or not, with g++ as with
 * clang++. A function's static would not do: in an inline function (or a template's
 * instantiation) it is a COMDAT object, which g++ refuses to put in a named section beside
 * the unit's others ("section type conflict"), and g++ ignores the section attribute of a
 * template's statics. So the tracepoint is the static member of an internal class template
 * (fxt_site_of_, unnamed namespace) instantiated for a class local to the site (`tag`, whose
 * make() is the initializer: constant, so no guard and no constructor), and an asm statement
 * at the site lists it: ".pushsection fxt_tp" holds its address, in the group of the function
 * it is in when that function is COMDAT ("?": a copy the linker drops drops its entry too).
 * Internal linkage makes the address a link-time constant, so the asm's "i" operand takes it
 * with -fPIC as without, and the fire site loads the flag straight, never through the GOT.
 * Each unit has its own tracepoint for an inline function's site (one per instantiation in a
 * template), all one event by name (one id, enabled together); the compiler emits the asm once
 * per copy of the code, so the registry skips an entry it already listed. Everything is
 * registered when the object loads, as in C: a site is in available_events as soon as the
 * code it is in is in the object (an inline function or a template instantiation the program
 * never uses has no code, and no event). */
#ifdef __cplusplus
extern "C++" {
namespace {
template <class Tag> struct fxt_site_of_ {
  static struct fxt_tracepoint tp;
};
#if defined(__cpp_constinit)
template <class Tag> constinit struct fxt_tracepoint fxt_site_of_<Tag>::tp = Tag::make();
#else
template <class Tag> struct fxt_tracepoint fxt_site_of_<Tag>::tp = Tag::make();
#endif
} // namespace
}
#if __SIZEOF_POINTER__ == 8
#define FXT_ASM_PTR_ ".quad"
#else
#define FXT_ASM_PTR_ ".long"
#endif
/* A site's table of fields (FXT_SITE_ARGS_): a local class may have no static data member,
 * so the table is this template's, made by the tag's fields(). */
template <unsigned N> struct fxt_field_tab_ {
  struct fxt_field f[N];
};
extern "C++" {
namespace {
template <class Tag> struct fxt_fields_of_ {
  static constexpr auto tab = Tag::fields();
};
} // namespace
}
#define FXT_SITE_DEF_(tag, site, kind_, cat, nm)                                             \
  struct tag {                                                                               \
    static constexpr struct fxt_tracepoint make()                                            \
    {                                                                                        \
      return FXT_TP_INIT_(kind_, 0, "" cat, "" nm, FXT_NULL, FXT_NULL);                      \
    }                                                                                        \
  };                                                                                         \
  FXT_SITE_LIST_(tag, site)
/* A site with arguments: __VA_ARGS__ their tuples, FXT_ARGS_END_ last. Their types are
 * enumerators of the site's block, so that the tag's fields() names no local variable. */
#define FXT_SITE_ARGS_(kind_, cat, nm, ...)                                                  \
  enum : uint16_t { FXT_PP_MAP(FXT_AT_, __VA_ARGS__) fxt_argt_end_ };                       \
  struct fxt_site_tag_ {                                                                     \
    static constexpr fxt_field_tab_<FXT_PP_NARGS(__VA_ARGS__)> fields()                     \
    {                                                                                        \
      return {{FXT_PP_MAP(FXT_AF_, __VA_ARGS__)}};                                           \
    }                                                                                        \
    static constexpr struct fxt_tracepoint make()                                            \
    {                                                                                        \
      return FXT_TP_INIT_(kind_, FXT_PP_NARGS(__VA_ARGS__) - 1, "" cat, "" nm, FXT_NULL,     \
                          fxt_fields_of_<fxt_site_tag_>::tab.f);                             \
    }                                                                                        \
  };                                                                                         \
  FXT_SITE_LIST_(fxt_site_tag_, fxt_site_)
#define FXT_SITE_LIST_(tag, site)                                                            \
  struct fxt_tracepoint &site = fxt_site_of_<tag>::tp;                                       \
  __asm__ __volatile__(".pushsection fxt_tp,\"a?w" FXT_TP_RETAIN_FLAG_ "\"\n\t.balign %c1\n\t" \
                       FXT_ASM_PTR_                                                          \
                       " %c0\n\t.popsection"                                                 \
                       :                                                                     \
                       : "i"(&fxt_site_of_<tag>::tp), "i"(sizeof(void *)))
#else
#define FXT_SITE_DEF_(tag, site, kind_, cat, nm)                                             \
  static struct fxt_tracepoint site = FXT_TP_INIT_(kind_, 0, "" cat, "" nm, FXT_NULL, FXT_NULL); \
  static struct fxt_tracepoint *const FXT_PP_CAT(site, _ptr) FXT_TP_SECTION = &site
#define FXT_SITE_ARGS_(kind_, cat, nm, ...)                                                  \
  static const struct fxt_field fxt_site_fields_[] = {FXT_PP_MAP(FXT_AF_, __VA_ARGS__)};    \
  static struct fxt_tracepoint fxt_site_ = FXT_TP_INIT_(                                     \
      kind_, FXT_PP_NARGS(__VA_ARGS__) - 1, "" cat, "" nm, FXT_NULL, fxt_site_fields_);      \
  static struct fxt_tracepoint *const fxt_site__ptr FXT_TP_SECTION = &fxt_site_
#endif
#define FXT_ADHOC_(kind_, etype, trailer, cat, nm, ...)                                      \
  do {                                                                                       \
    FXT_SITE_ARGS_(kind_, cat, nm, __VA_ARGS__);                                             \
    if (FXT_UNLIKELY(fxt_enabled(&fxt_site_))) {                                             \
      const struct fxt_argv fxt_av_[] = {FXT_PP_MAP(FXT_AV_, __VA_ARGS__)};                  \
      fxt_emit_adhoc(&fxt_site_, etype, (trailer), fxt_av_,                                  \
                     sizeof(fxt_av_) / sizeof(fxt_av_[0]) - 1);                              \
    }                                                                                        \
  } while (0)

#define FXT_INSTANT(...) FXT_ADHOC_(FXT_TP_INSTANT, 0, 0, __VA_ARGS__, FXT_ARGS_END_)
#define FXT_BEGIN(...) FXT_ADHOC_(FXT_TP_DURATION, 2, 0, __VA_ARGS__, FXT_ARGS_END_)
#define FXT_END(...) FXT_ADHOC_(FXT_TP_DURATION, 3, 0, __VA_ARGS__, FXT_ARGS_END_)
#define FXT_COMPLETE(cat, nm, ...) FXT_COMPLETE_(cat, nm, __VA_ARGS__, FXT_ARGS_END_)
#define FXT_COMPLETE_(cat, nm, start, ...)                                                   \
  FXT_ADHOC_(FXT_TP_DURATION, 4, (start), cat, nm, __VA_ARGS__)
#define FXT_COUNTER(cat, nm, ...) FXT_WITH_ID_(FXT_TP_COUNTER, 1, cat, nm, __VA_ARGS__)
#define FXT_ASYNC_BEGIN(cat, nm, ...) FXT_WITH_ID_(FXT_TP_ASYNC, 5, cat, nm, __VA_ARGS__)
#define FXT_ASYNC_INSTANT(cat, nm, ...) FXT_WITH_ID_(FXT_TP_ASYNC, 6, cat, nm, __VA_ARGS__)
#define FXT_ASYNC_END(cat, nm, ...) FXT_WITH_ID_(FXT_TP_ASYNC, 7, cat, nm, __VA_ARGS__)
#define FXT_FLOW_BEGIN(cat, nm, ...) FXT_WITH_ID_(FXT_TP_FLOW, 8, cat, nm, __VA_ARGS__)
#define FXT_FLOW_STEP(cat, nm, ...) FXT_WITH_ID_(FXT_TP_FLOW, 9, cat, nm, __VA_ARGS__)
#define FXT_FLOW_END(cat, nm, ...) FXT_WITH_ID_(FXT_TP_FLOW, 10, cat, nm, __VA_ARGS__)
#define FXT_WITH_ID_(kind_, etype, cat, nm, ...)                                             \
  FXT_WITH_ID_2(kind_, etype, cat, nm, __VA_ARGS__, FXT_ARGS_END_)
#define FXT_WITH_ID_2(kind_, etype, cat, nm, id, ...)                                        \
  FXT_ADHOC_(kind_, etype, (uint64_t)(id), cat, nm, __VA_ARGS__)

/* Scoped duration: one duration-complete event when the enclosing block exits. */
struct fxt_scope {
  struct fxt_tracepoint *tp; /* NULL when the event was off at entry */
  uint64_t start;
};
FXT_EXTERN_C_BEGIN
FXT_API void fxt_scope_end(struct fxt_scope *s) FXT_NOEXCEPT;
FXT_EXTERN_C_END
static inline struct fxt_scope fxt_scope_begin(struct fxt_tracepoint *tp)
{
  struct fxt_scope s = {FXT_NULL, 0};
  if (FXT_UNLIKELY(fxt_enabled(tp))) {
    s.tp = tp;
    s.start = fxt_ticks();
  }
  return s;
}
static inline void fxt_scope_cleanup_(struct fxt_scope *s)
{
  if (FXT_UNLIKELY(s->tp != FXT_NULL))
    fxt_scope_end(s);
}
#ifdef __cplusplus
/* C++: a destructor ends the scope, so an exception or a return through it ends it too. In
 * an unnamed namespace, as what it calls is static: each unit has its own. */
extern "C++" {
namespace {
class fxt_scope_guard_ {
public:
  explicit fxt_scope_guard_(struct fxt_tracepoint *tp) noexcept : s_(fxt_scope_begin(tp)) {}
  ~fxt_scope_guard_() { fxt_scope_cleanup_(&s_); }
  fxt_scope_guard_(const fxt_scope_guard_ &) = delete;
  fxt_scope_guard_ &operator=(const fxt_scope_guard_ &) = delete;

private:
  struct fxt_scope s_;
};
} // namespace
}
#define FXT_SCOPE_VAR_(var, site) const fxt_scope_guard_ var(&site)
#else
#define FXT_SCOPE_VAR_(var, site)                                                            \
  __attribute__((cleanup(fxt_scope_cleanup_), unused)) struct fxt_scope var =               \
      fxt_scope_begin(&site)
#endif
/* Names carry the line, so several scopes may share a block. */
#define FXT_SCOPE(cat, nm)                                                                   \
  FXT_SCOPE_(cat, nm, FXT_PP_CAT(fxt_scope_, __LINE__), FXT_PP_CAT(fxt_scope_site_, __LINE__), \
             FXT_PP_CAT(fxt_scope_tag_, __LINE__))
#define FXT_SCOPE_(cat, nm, var, site, tag)                                                  \
  FXT_SITE_DEF_(tag, site, FXT_TP_DURATION, cat, nm);                                        \
  FXT_SCOPE_VAR_(var, site)

/* printk: FXT_PRINTK(fmt, values...); the values become arguments a0, a1, ... */
#define FXT_PK_(i, x) FXT_PK_##i(x)
#define FXT_PK_0(x)
#define FXT_PK_1(x) FXT_ARG("a0", x),
#define FXT_PK_2(x) FXT_ARG("a1", x),
#define FXT_PK_3(x) FXT_ARG("a2", x),
#define FXT_PK_4(x) FXT_ARG("a3", x),
#define FXT_PK_5(x) FXT_ARG("a4", x),
#define FXT_PK_6(x) FXT_ARG("a5", x),
#define FXT_PK_7(x) FXT_ARG("a6", x),
#define FXT_PK_8(x) FXT_ARG("a7", x),
#define FXT_PK_9(x) FXT_ARG("a8", x),
#define FXT_PK_10(x) FXT_ARG("a9", x),
#define FXT_PK_11(x) FXT_ARG("a10", x),
#define FXT_PK_12(x) FXT_ARG("a11", x),
#define FXT_PK_13(x) FXT_ARG("a12", x),
#define FXT_PK_14(x) FXT_ARG("a13", x),
#define FXT_PK_15(x) FXT_ARG("a14", x),
/* Never called: the compiler checks FXT_PRINTK's values against its format as printf's (the
 * reader formats the stored values so, docs/fxt-conventions.md). */
static inline __attribute__((format(printf, 1, 2))) void fxt_printk_check_(const char *fmt, ...)
{
  (void)fmt;
}
#define FXT_PRINTK(...)                                                                      \
  do {                                                                                       \
    if (0)                                                                                   \
      fxt_printk_check_(__VA_ARGS__);                                                        \
    FXT_PRINTK_(FXT_PP_FIRST(__VA_ARGS__), FXT_PP_MAP(FXT_PK_, __VA_ARGS__) FXT_ARGS_END_); \
  } while (0)
#define FXT_PRINTK_(fmt, ...)                                                                \
  FXT_SITE_ARGS_(FXT_TP_PRINTK, "printk", fmt, __VA_ARGS__);                                 \
  if (FXT_UNLIKELY(fxt_enabled(&fxt_site_))) {                                               \
    const struct fxt_argv fxt_av_[] = {FXT_PP_MAP(FXT_AV_, __VA_ARGS__)};                    \
    fxt_emit_printk(&fxt_site_, fxt_av_, sizeof(fxt_av_) / sizeof(fxt_av_[0]) - 1);          \
  }

#else /* FXT_DISABLE */

/* Disabled: nothing is evaluated or referenced, but every argument is still type-checked and
 * counts as used (inside sizeof), so code that computes values only for tracing builds
 * warning-free either way. */
static inline int fxt_disabled_(int unused, ...)
{
  (void)unused;
  return 0;
}
static inline uint64_t fxt_now(void)
{
  return 0;
}
#define FXT_DISABLED_(...) ((void)sizeof(fxt_disabled_(0, __VA_ARGS__)))
#define FXT_I32(n, x) (x)
#define FXT_U32(n, x) (x)
#define FXT_I64(n, x) (x)
#define FXT_U64(n, x) (x)
#define FXT_F64(n, x) (x)
#define FXT_BOOL(n, x) (x)
#define FXT_PTR(n, x) (x)
#define FXT_STR(n, x) (x)
#define FXT_ARG(n, x) (x)
#define FXT_TRACEPOINT(sys, ev, fmt, ...) struct fxt_swallow_semicolon_
#define FXT_TRACE(sys, ev, ...) FXT_DISABLED_(__VA_ARGS__)
#define FXT_TRACE_ENABLED(sys, ev) 0
#define FXT_INSTANT(...) FXT_DISABLED_(__VA_ARGS__)
#define FXT_BEGIN(...) FXT_DISABLED_(__VA_ARGS__)
#define FXT_END(...) FXT_DISABLED_(__VA_ARGS__)
#define FXT_SCOPE(cat, nm) struct fxt_swallow_semicolon_
#define FXT_COMPLETE(...) FXT_DISABLED_(__VA_ARGS__)
#define FXT_COUNTER(...) FXT_DISABLED_(__VA_ARGS__)
#define FXT_ASYNC_BEGIN(...) FXT_DISABLED_(__VA_ARGS__)
#define FXT_ASYNC_INSTANT(...) FXT_DISABLED_(__VA_ARGS__)
#define FXT_ASYNC_END(...) FXT_DISABLED_(__VA_ARGS__)
#define FXT_FLOW_BEGIN(...) FXT_DISABLED_(__VA_ARGS__)
#define FXT_FLOW_STEP(...) FXT_DISABLED_(__VA_ARGS__)
#define FXT_FLOW_END(...) FXT_DISABLED_(__VA_ARGS__)
#define FXT_PRINTK(...) FXT_DISABLED_(__VA_ARGS__)

#endif /* FXT_DISABLE */

#endif /* FXTRACE_FXTRACE_H */
