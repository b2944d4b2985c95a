/* registry.c - every tracepoint of the process, by id and by name (fxtrace/tracepoint.h).
 *
 * All state here is guarded by `lock`; nothing here runs on the emit path. A tracepoint's
 * registry-owned fields are written before its `enabled` flag can become non-zero, and that
 * flag is set with a release store (fire sites pair it with an acquire fence in emission).
 *
 * Ids are per "system:event", stable for the life of the process: a library that is unloaded
 * and loaded again gets its old ids back, and several call sites of one ad-hoc event share
 * one id (they are one event to the ftrace surface, as in the kernel).
 */
#define _GNU_SOURCE
#include "registry.h"

#include <fnmatch.h>
#include <stdio.h>
#include <fxtrace/detail/emit.h>
#include <fxtrace/fxt.h>
#include <fxtrace/session.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../base/globs.h"
#include "../base/grow.h"
#include "../base/tpdesc.h"
#include "filters.h"
#include "intern.h"

#define FIRST_ID 32    /* ftrace's built-in events own the small ids */
#define MAX_IDS 65535
#define MAX_SECTIONS 1024

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fxt_tracepoint *head, **tail = &head; /* registration order */
struct section {
  struct fxt_tracepoint *const *begin, *const *end;
  uint32_t refs; /* constructors that registered it (one per translation unit) */
};
static struct section sections[MAX_SECTIONS];
static uint32_t nsections;
/* id -> (system ref, name ref); index id - FIRST_ID. Grows, never shrinks. */
static struct idname {
  uint16_t system_ref, name_ref;
} *ids;
static uint32_t nids;
static size_t ids_cap;
static char *patterns; /* the session's enabled patterns, normalized; NULL = none */
static _Atomic uint32_t generation; /* bumped on every change of the tracepoint set */
static void (*mirror_fn)(struct fxt_tracepoint *tp); /* under lock */


/* fork: the registry lock must not be held by another thread (the consumer walks the
 * registry) when the process forks, or the child's consumer would wait on it forever. */
void fxt_registry_lock(void)
{
  pthread_mutex_lock(&lock);
}

void fxt_registry_unlock(void)
{
  pthread_mutex_unlock(&lock);
}

uint32_t fxt_registry_generation(void)
{
  return atomic_load_explicit(&generation, memory_order_acquire);
}

/* Id of system:name, assigning the next free one. Returns 0 when the id space is full. */
static uint32_t id_for(uint16_t system_ref, uint16_t name_ref)
{
  for (uint32_t i = 0; i < nids; i++)
    if (ids[i].system_ref == system_ref && ids[i].name_ref == name_ref)
      return FIRST_ID + i;
  if (FIRST_ID + nids > MAX_IDS)
    return 0;
  if (!fxt_grow((void **)&ids, &ids_cap, (size_t)nids + 1, sizeof(*ids), 256))
    return 0;
  ids[nids] = (struct idname){system_ref, name_ref};
  return FIRST_ID + nids++;
}

/* "system:event" of tp into buf. */
static void full_name(const struct fxt_tracepoint *tp, char *buf, size_t size)
{
  size_t s = strlen(tp->system), n = strlen(tp->name);
  if (s + 1 + n + 1 > size) {
    buf[0] = 0;
    return;
  }
  memcpy(buf, tp->system, s);
  buf[s] = ':';
  memcpy(buf + s + 1, tp->name, n + 1);
}

/* The enabled patterns are an ordered list; the last glob that matches decides: "glob"
 * enables, "!glob" disables. FXTRACE's events= and set_event writes both append to it. */
static bool matches_patterns(const struct fxt_tracepoint *tp)
{
  if (!patterns)
    return false;
  char name[512];
  full_name(tp, name, sizeof(name));
  return fxt_globs_match(patterns, name);
}

static void set_enabled_locked(struct fxt_tracepoint *tp, bool on)
{
  /* Release pairs with the acquire fence emission issues after the fire-site load. */
  atomic_store_explicit(&tp->enabled, on && tp->id != 0, memory_order_release);
}

/* Fills the registry-owned fields; tp->id stays 0 (never enabled) when a string cannot be
 * interned or the id space is full. */
static void prepare(struct fxt_tracepoint *tp)
{
  int sys = fxt_intern_cstr(tp->system), name = fxt_intern_cstr(tp->name);
  tp->id = 0;
  if (sys <= 0 || name <= 0)
    return;
  tp->reg.header = fxt_w_event_strings(sys, name);
  uint32_t refs[FXT_MAX_FIELDS] = {0};
  for (uint32_t i = 0; i < tp->nfields && i < FXT_MAX_FIELDS; i++) {
    const struct fxt_field *f = &tp->fields[i];
    int ref = fxt_intern_cstr(f->name);
    if (ref <= 0 || f->type == 0 || f->type > FXT_TYPE_BYTES)
      return;
    tp->reg.arg_header[i] = fxt_arg_header(f->type, (uint32_t)ref);
    refs[i] = (uint32_t)ref;
  }
  /* An ad-hoc site's argument names, from its static table (fxtrace.h, FXT_SITE_ARGS_): its
   * emission finds them interned (adhoc.c). Relaxed: read after the acquire fence that pairs
   * with the release store of `enabled`, as every registry-set member. */
  for (uint32_t i = 0; i < FXT_MAX_FIELDS; i++)
    atomic_store_explicit(&tp->reg.arg_ref[i], tp->kind == FXT_TP_TYPED ? 0 : refs[i],
                          memory_order_relaxed);
  tp->id = id_for((uint16_t)sys, (uint16_t)name);
  /* A filter or triggers already written for this event apply to this object too. */
  atomic_store_explicit(&tp->reg.filter, tp->id ? fxt_filters_hook_for(tp->id) : NULL,
                        memory_order_release);
}

/* Whether tp is on the list: the last one is tail's target, any other has a successor
 * (unlinking clears reg.next, and a tracepoint's storage starts zeroed). */
static bool listed(struct fxt_tracepoint *tp)
{
  return tp->reg.next != NULL || tail == &tp->reg.next;
}

/* A section may list one tracepoint several times: C++ sites are listed by an asm statement
 * at the site (fxtrace.h, "C++ sites"), which the compiler emits once per copy of the code (an
 * inline function inlined into two callers of a unit); the first entry registers it, the
 * others are skipped. */
void fxt_register_section(struct fxt_tracepoint *const *begin, struct fxt_tracepoint *const *end)
{
  if (!begin || begin == end)
    return;
  pthread_mutex_lock(&lock);
  for (uint32_t i = 0; i < nsections; i++)
    if (sections[i].begin == begin) {
      sections[i].refs++;
      pthread_mutex_unlock(&lock);
      return;
    }
  if (nsections < MAX_SECTIONS) {
    sections[nsections++] = (struct section){begin, end, 1};
    for (struct fxt_tracepoint *const *p = begin; p < end; p++) {
      struct fxt_tracepoint *tp = *p;
      if (!tp || listed(tp))
        continue;
      prepare(tp);
      tp->reg.next = NULL;
      *tail = tp;
      tail = &tp->reg.next;
      set_enabled_locked(tp, matches_patterns(tp));
      if (mirror_fn)
        mirror_fn(tp);
    }
    atomic_fetch_add_explicit(&generation, 1, memory_order_release);
  }
  pthread_mutex_unlock(&lock);
}

void fxt_unregister_section(struct fxt_tracepoint *const *begin, struct fxt_tracepoint *const *end)
{
  if (!begin || begin == end)
    return;
  /* The section's last reference going (an object unloading, or the program's destructors at
   * exit, which run before the session's stop): a running session's consumer describes its
   * tracepoints in the file first (a pass: fxt_session_flush), or events already recorded would
   * have no description (a program that exited before the consumer's first pass after its
   * sections registered: `fxtrace check` refused 1 recording in 6 under load). Not under the
   * lock: the pass walks the registry. */
  pthread_mutex_lock(&lock);
  bool last = false;
  for (uint32_t i = 0; i < nsections; i++)
    if (sections[i].begin == begin)
      last = sections[i].refs == 1;
  pthread_mutex_unlock(&lock);
  if (last)
    (void)fxt_session_flush(); /* FXT_ENOENT without a session */
  pthread_mutex_lock(&lock);
  for (uint32_t i = 0; i < nsections; i++) {
    if (sections[i].begin != begin || --sections[i].refs > 0)
      continue;
    /* Last reference: unlink every tracepoint of the section. */
    for (struct fxt_tracepoint **pp = &head; *pp;) {
      struct fxt_tracepoint *tp = *pp;
      bool inside = false;
      for (struct fxt_tracepoint *const *p = begin; p < end && !inside; p++)
        inside = *p == tp;
      if (inside) {
        atomic_store_explicit(&tp->enabled, 0, memory_order_relaxed);
        *pp = tp->reg.next;
        tp->reg.next = NULL; /* not listed (listed()) */
        continue;
      }
      pp = &tp->reg.next;
    }
    tail = &head;
    while (*tail)
      tail = &(*tail)->reg.next;
    sections[i] = sections[--nsections];
    atomic_fetch_add_explicit(&generation, 1, memory_order_release);
    break;
  }
  pthread_mutex_unlock(&lock);
}

struct fxt_tracepoint *fxt_tracepoint_by_id(uint32_t id)
{
  struct fxt_tracepoint *found = NULL;
  pthread_mutex_lock(&lock);
  for (struct fxt_tracepoint *tp = head; tp && !found; tp = tp->reg.next)
    if (tp->id == id)
      found = tp;
  pthread_mutex_unlock(&lock);
  return found;
}

struct fxt_tracepoint *fxt_tracepoint_by_name(const char *system, const char *name)
{
  struct fxt_tracepoint *found = NULL;
  pthread_mutex_lock(&lock);
  for (struct fxt_tracepoint *tp = head; tp && !found; tp = tp->reg.next)
    if (strcmp(tp->system, system) == 0 && strcmp(tp->name, name) == 0)
      found = tp;
  pthread_mutex_unlock(&lock);
  return found;
}

void fxt_registry_set_mirror(void (*fn)(struct fxt_tracepoint *tp))
{
  pthread_mutex_lock(&lock);
  mirror_fn = fn;
  for (struct fxt_tracepoint *tp = head; tp && fn; tp = tp->reg.next)
    fn(tp);
  pthread_mutex_unlock(&lock);
}

int fxt_tracepoint_foreach(fxt_tracepoint_fn fn, void *ctx)
{
  int rc = 0;
  pthread_mutex_lock(&lock);
  for (struct fxt_tracepoint *tp = head; tp && rc == 0; tp = tp->reg.next)
    rc = fn(ctx, tp);
  pthread_mutex_unlock(&lock);
  return rc;
}

void fxt_tracepoint_set_enabled(struct fxt_tracepoint *tp, int on)
{
  pthread_mutex_lock(&lock);
  set_enabled_locked(tp, on != 0);
  pthread_mutex_unlock(&lock);
}

int fxt_tracepoint_enable_patterns(const char *list)
{
  char *norm = fxt_globs_normalize(list ? list : "");
  if (!norm)
    return FXT_EINVAL;
  int enabled = 0;
  pthread_mutex_lock(&lock);
  free(patterns);
  patterns = norm[0] ? norm : NULL;
  if (!patterns)
    free(norm);
  for (struct fxt_tracepoint *tp = head; tp; tp = tp->reg.next) {
    bool on = matches_patterns(tp);
    set_enabled_locked(tp, on);
    enabled += on && tp->id != 0;
  }
  pthread_mutex_unlock(&lock);
  return enabled;
}

/* Appends "glob" (on) or "!glob" (off) to the patterns, dropping earlier entries for the same
 * glob, and applies them. Returns how many tracepoints the glob matched, or FXT_ENOMEM. */
int fxt_registry_set_glob(const char *glob, bool on)
{
  size_t glen = strlen(glob);
  pthread_mutex_lock(&lock);
  size_t old = patterns ? strlen(patterns) : 0;
  char *next = malloc(old + glen + 3);
  if (!next) {
    pthread_mutex_unlock(&lock);
    return FXT_ENOMEM;
  }
  size_t n = 0;
  for (const char *p = patterns ? patterns : ""; *p;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    size_t skip = len > 0 && *p == '!';
    if (!(len - skip == glen && memcmp(p + skip, glob, glen) == 0)) {
      if (n)
        next[n++] = ',';
      memcpy(next + n, p, len);
      n += len;
    }
    p += len + (comma != NULL);
  }
  if (n)
    next[n++] = ',';
  if (!on)
    next[n++] = '!';
  memcpy(next + n, glob, glen + 1);
  free(patterns);
  patterns = next;
  int matched = 0;
  for (struct fxt_tracepoint *tp = head; tp; tp = tp->reg.next) {
    char name[512];
    full_name(tp, name, sizeof(name));
    matched += fnmatch(glob, name, 0) == 0;
    set_enabled_locked(tp, matches_patterns(tp));
  }
  pthread_mutex_unlock(&lock);
  return matched;
}

int fxt_glob_match(const char *glob, const char *text)
{
  return fnmatch(glob, text, 0) == 0;
}

struct event_fields {
  const struct fxt_tracepoint *tp;
  struct fxt_field *out;
  uint32_t n;
};

static int event_fields_fn(void *ctx, struct fxt_tracepoint *tp)
{
  struct event_fields *e = ctx;
  if (tp != e->tp && tp->id == e->tp->id)
    e->n = fxt_tracepoint_fields_merge(tp, e->out, e->n);
  return 0;
}

uint32_t fxt_registry_event_fields(const struct fxt_tracepoint *tp, struct fxt_field *out)
{
  struct event_fields e = {tp, out, fxt_tracepoint_fields(tp, out)};
  if (tp->kind != FXT_TP_TYPED && tp->id != 0)
    fxt_tracepoint_foreach(event_fields_fn, &e);
  return e.n;
}

size_t fxt_tp_describe(const struct fxt_tracepoint *tp, unsigned char *p, size_t cap)
{
  char fmt[2048];
  const char *f = fxt_tracepoint_print_fmt(tp, fmt, sizeof(fmt));
  size_t flen = strlen(f);
  if (flen > 4096)
    flen = 4096;
  uint16_t nf = tp->kind == FXT_TP_TYPED ? tp->nfields : 0;
  if (tp->id == 0 || 16 + flen + (size_t)nf * 8 > cap)
    return 0;
  size_t n = fxt_tpdesc_head(p, tp->id, (uint16_t)(tp->reg.header >> 32),
                             (uint16_t)(tp->reg.header >> 48), tp->kind, nf, (uint16_t)flen);
  memcpy(p + n, f, flen), n += flen;
  for (uint32_t i = 0; i < nf; i++)
    n += fxt_tpdesc_field(p + n, (uint16_t)(tp->reg.arg_header[i] >> 16),
                          (uint8_t)tp->fields[i].type, tp->fields[i].bound);
  return n;
}
