/* fxtrace/tracepoint.h - tracepoints and their registry.
 *
 * A tracepoint is a static object at its definition (typed tracepoints) or at its call site
 * (ad-hoc events), listed in the linker section "fxt_tp" of its executable or shared object
 * (a C++ ad-hoc site's by an asm statement at the site, once per copy of its code: fxtrace.h,
 * "C++ sites"; a tracepoint listed more than once is registered once).
 * A constructor in every object that includes fxtrace/fxtrace.h registers that object's
 * section when it loads (dlopen included) and a destructor unregisters it when it unloads
 * (dlclose), so every tracepoint is found by id and by name while its code is mapped, and
 * never after. Registration interns its strings and applies the enabled patterns of the
 * running session, so a library loaded later follows them.
 *
 * Use the macros of fxtrace/fxtrace.h; this header is the data model and the control side.
 *
 * User API (docs/architecture.md, "Public headers").
 */
#ifndef FXTRACE_TRACEPOINT_H
#define FXTRACE_TRACEPOINT_H

#include "common.h"
#include "errors.h"
#include "detail/tp_registry.h"

/* Field and argument types. */
enum fxt_type {
  FXT_TYPE_U8 = 1,
  FXT_TYPE_U16,
  FXT_TYPE_U32,
  FXT_TYPE_U64,
  FXT_TYPE_S8,
  FXT_TYPE_S16,
  FXT_TYPE_S32,
  FXT_TYPE_S64,
  FXT_TYPE_BOOL,
  FXT_TYPE_DOUBLE,
  FXT_TYPE_PTR,
  FXT_TYPE_STR,   /* NUL-terminated, copied inline up to the field's bound */
  FXT_TYPE_BYTES, /* fixed-size byte array of `bound` bytes, recorded as hex text */
};

/* What a tracepoint records (docs/fxt-conventions.md). */
enum fxt_tp_kind {
  FXT_TP_TYPED = 0,
  FXT_TP_INSTANT = 1,
  FXT_TP_COUNTER = 2,
  FXT_TP_DURATION = 3,
  FXT_TP_ASYNC = 4,
  FXT_TP_FLOW = 5,
  FXT_TP_PRINTK = 6,
};

/* FXT_MAX_FIELDS (15): FXT's argument limit, defined in detail/tp_registry.h with the arrays
 * it sizes. */
#define FXT_STR_MAX_BOUND 1024 /* longest string a field may copy inline */

/* A field or argument value (which member: by the field's type). */
union fxt_value {
  uint64_t u;
  int64_t i;
  double d;
  const void *p;
  const char *s;
};

struct fxt_field {
  const char *name;
  uint16_t type;  /* enum fxt_type */
  uint16_t bound; /* FXT_TYPE_STR: bytes kept (<= FXT_STR_MAX_BOUND); FXT_TYPE_BYTES: size */
};

/* A tracepoint. The constant part is written by its definition (the macros of
 * fxtrace/fxtrace.h); `enabled`, `id` and `reg` belong to the library: the registry sets them
 * at registration, before `enabled` can first become non-zero, and a program only reads
 * `enabled` and `id` (fxt_tracepoint_set_enabled changes the first). The layout is ABI: a
 * program's tracepoints are read by the libfxtrace.so it runs with. */
struct fxt_tracepoint {
  /* The fire-site flag: written by the registry (release store, under its lock), read at
   * fire sites with one relaxed load; emission then issues an acquire fence before reading the
   * registry-set fields below, which pairs with that release store. First, so that load
   * needs no offset. */
  FXT_ATOMIC(uint32_t) enabled;
  uint16_t kind;    /* enum fxt_tp_kind */
  uint16_t nfields; /* typed tracepoints */
  const char *system;
  const char *name;
  const char *print_fmt; /* typed: NULL = "f1=%... f2=%..." made from the fields */
  const struct fxt_field *fields;
  const char *file;
  uint32_t line;

  uint32_t id; /* set by the registry: 1..65535, stable per "system:event" in the process;
                  0 = not registered (never enabled). Here, not in `reg`, as it fills the
                  4 bytes after `line` */
  /* The registry's state (headers, argument refs, filter, list link): the user must not
   * read or write it. */
  struct fxt_tp_registry reg;
};

/* Visitor for fxt_tracepoint_foreach: non-zero stops the walk. */
typedef int (*fxt_tracepoint_fn)(void *ctx, struct fxt_tracepoint *tp);

FXT_EXTERN_C_BEGIN

/* Registers the tracepoints listed in [begin, end) (one object's "fxt_tp" section); called by
 * the constructor that fxtrace/fxtrace.h places in each object. Idempotent per begin; a
 * tracepoint listed twice, or already registered, is registered once. */
FXT_API void fxt_register_section(struct fxt_tracepoint *const *begin,
                                  struct fxt_tracepoint *const *end) FXT_NOEXCEPT;
/* Unregisters them (destructor, at exit or dlclose); after it returns nothing refers to them. */
FXT_API void fxt_unregister_section(struct fxt_tracepoint *const *begin,
                                    struct fxt_tracepoint *const *end) FXT_NOEXCEPT;

/* Lookup. The pointer stays valid while the object that defines the tracepoint is loaded. */
FXT_API struct fxt_tracepoint *fxt_tracepoint_by_id(uint32_t id);
FXT_API struct fxt_tracepoint *fxt_tracepoint_by_name(const char *system, const char *name);

/* Calls fn for every registered tracepoint, in registration order, under the registry lock
 * (fn must not register, unregister or enable). Returns fn's non-zero result or 0. */
FXT_API int fxt_tracepoint_foreach(fxt_tracepoint_fn fn, void *ctx);

/* Enables (on != 0) or disables one tracepoint. */
FXT_API void fxt_tracepoint_set_enabled(struct fxt_tracepoint *tp, int on);

/* Sets the enabled patterns: a comma-separated list of globs on "system:event" (as in
 * FXTRACE's events=); every registered tracepoint is enabled exactly when it matches one, and
 * so is every tracepoint registered later. Returns the number of tracepoints enabled now, or
 * FXT_EINVAL for a malformed list. NULL or "" disables everything. */
FXT_API int fxt_tracepoint_enable_patterns(const char *patterns);

/* True when "system:event" matches the glob ('*', '?', '[set]', '[!set]'). */
FXT_API int fxt_glob_match(const char *glob, const char *text);

FXT_EXTERN_C_END

#endif /* FXTRACE_TRACEPOINT_H */
