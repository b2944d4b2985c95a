/* intern.c - lock-free string interning (see intern.h).
 *
 * Layout: entries[index] describes a string in the text arena; hash[] maps a string's hash to
 * its index by open addressing. An inserter first builds a complete entry (claims an index and
 * arena bytes with fetch_add, copies the text, then publishes the entry with a release store of
 * its `ready` word), and only then links it into hash[] with a compare-and-swap (release). A
 * reader that finds an index in hash[] (acquire) therefore sees a complete entry. Two threads
 * racing to insert the same new string can both build an entry; the loser of the CAS uses the
 * winner's index and its own entry stays a valid but unused string (it still gets a string
 * record in files, which is harmless). Nothing is ever removed.
 */
#define _GNU_SOURCE
#include "intern.h"

#include <fxtrace/errors.h>
#include <fxtrace/fxt.h>
#include <fxtrace/meta.h>
#include <stdatomic.h>
#include <string.h>

#include "../base/shfile.h"

#define HASH_SLOTS 65536u        /* power of two, at least 2 x the index space */
#define ARENA_BYTES (8u << 20)   /* text of all interned strings */

struct entry {
  _Atomic uint32_t ready; /* 0 until complete; release store by the inserter */
  uint32_t offset;        /* in arena */
  uint32_t len;
};

static struct entry entries[FXT_INTERN_MAX_INDEX + 1];
static _Atomic uint16_t hash_slots[HASH_SLOTS];
static char arena[ARENA_BYTES];
static _Atomic uint32_t next_index = FXT_META_STRING_LAST + 1;
static _Atomic uint32_t arena_used;

static _Atomic(struct fxt_intern_mirror *) mirror;

void fxt_intern_set_mirror(struct fxt_intern_mirror *m)
{
  atomic_store_explicit(&mirror, m, memory_order_release);
}

/* Copies string index into m (see intern.h). Two threads may copy the same index (the
 * builder and fxt_intern_mirror_all): each into text of its own, the entry is one atomic word,
 * and either copy is whole before its entry names it. */
static void mirror_put(struct fxt_intern_mirror *m, uint32_t index, const char *s, uint32_t len)
{
  if (index >= FXT_SH_STR_ENTRIES)
    return;
  uint64_t off = atomic_fetch_add_explicit(&m->text_used, len, memory_order_relaxed);
  /* Acquire pairs with the consumer's release store of text_limit: the pages below it are
   * allocated (writing an unallocated page of a full tmpfs would be a SIGBUS). */
  uint64_t limit = atomic_load_explicit(&m->text_limit, memory_order_acquire);
  if (off > limit || len > limit - off || limit > m->text_cap || off > UINT32_MAX) {
    atomic_store_explicit(&m->overflow, 1, memory_order_relaxed);
    return;
  }
  memcpy(m->text + off, s, len);
  uint64_t e = off | (uint64_t)len << 32 | (uint64_t)FXT_SH_STR_MARK << 48;
  /* Release: the text is in place before the entry names it (for a reader of a live session;
   * after the process died every store it made is in the file anyway). */
  atomic_store_explicit(&m->entries[index], e, memory_order_release);
}

void fxt_intern_mirror_all(struct fxt_intern_mirror *m)
{
  uint32_t end = fxt_intern_end();
  for (uint32_t i = 1; i < end && i < FXT_SH_STR_ENTRIES; i++) {
    const char *text;
    uint32_t len;
    if (atomic_load_explicit(&m->entries[i], memory_order_relaxed) == 0 &&
        fxt_intern_lookup(i, &text, &len) && len > 0)
      mirror_put(m, i, text, len);
  }
}

static uint32_t hash_of(const char *s, uint32_t len)
{
  uint32_t h = 2166136261u; /* FNV-1a */
  for (uint32_t i = 0; i < len; i++)
    h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h ^ (h >> 16);
}

static bool same(uint32_t index, const char *s, uint32_t len)
{
  const struct entry *e = &entries[index];
  return e->len == len && memcmp(arena + e->offset, s, len) == 0;
}

/* Builds a complete, published entry for s; returns its index or a negative error. */
static int build_entry(const char *s, uint32_t len)
{
  uint32_t index = atomic_fetch_add_explicit(&next_index, 1, memory_order_relaxed);
  if (index > FXT_INTERN_MAX_INDEX) {
    atomic_store_explicit(&next_index, FXT_INTERN_MAX_INDEX + 1, memory_order_relaxed);
    return FXT_ENOSPC;
  }
  uint32_t off = atomic_fetch_add_explicit(&arena_used, len, memory_order_relaxed);
  if (off > ARENA_BYTES - len) {
    /* The index is spent: publish it as an empty string so readers walking upward pass it. */
    entries[index].offset = 0;
    entries[index].len = 0;
    atomic_store_explicit(&entries[index].ready, 1, memory_order_release);
    return FXT_ENOSPC;
  }
  memcpy(arena + off, s, len);
  entries[index].offset = off;
  entries[index].len = len;
  /* Release pairs with the acquire in fxt_intern_lookup (and, through hash_slots, with the
   * acquire load in fxt_intern). */
  atomic_store_explicit(&entries[index].ready, 1, memory_order_release);
  /* Acquire pairs with fxt_intern_set_mirror's release: the mirror is set up. */
  struct fxt_intern_mirror *m = atomic_load_explicit(&mirror, memory_order_acquire);
  if (m)
    mirror_put(m, index, s, len);
  return (int)index;
}

int fxt_intern(const char *s, uint32_t len)
{
  if (len == 0)
    return 0;
  if (len > FXT_INTERN_MAX_LEN)
    return FXT_E2BIG;
  char fixed[FXT_INTERN_FIX_MAX];
  if (fxt_utf8_valid(s, len) != len) { /* the well-formed text stands for it */
    len = (uint32_t)fxt_utf8_sanitize(fixed, sizeof(fixed), s, len);
    s = fixed;
  }
  for (uint32_t i = 1; i <= FXT_META_STRING_LAST; i++) {
    const char *meta = fxt_meta_string(i);
    if (meta != NULL && strlen(meta) == len && memcmp(meta, s, len) == 0)
      return (int)i;
  }

  uint32_t h = hash_of(s, len);
  int mine = 0; /* our entry, once built */
  for (uint32_t probe = 0; probe < HASH_SLOTS; probe++) {
    _Atomic uint16_t *slot = &hash_slots[(h + probe) & (HASH_SLOTS - 1)];
    /* Acquire pairs with the release CAS below: the entry behind the index is complete. */
    uint16_t index = atomic_load_explicit(slot, memory_order_acquire);
    if (index == 0) {
      if (mine == 0) {
        mine = build_entry(s, len);
        if (mine < 0)
          return mine;
      }
      if (atomic_compare_exchange_strong_explicit(slot, &index, (uint16_t)mine,
                                                  memory_order_release, memory_order_acquire))
        return mine;
      /* Someone linked another index here first: compare with it below. */
    }
    if (same(index, s, len))
      return index;
  }
  return FXT_ENOSPC;
}

int fxt_intern_cstr(const char *s)
{
  size_t len = strlen(s);
  return fxt_intern(s, len > FXT_INTERN_MAX_LEN ? FXT_INTERN_MAX_LEN + 1 : (uint32_t)len);
}

bool fxt_intern_lookup(uint32_t index, const char **s, uint32_t *len)
{
  if (index == 0 || index > FXT_INTERN_MAX_INDEX)
    return false;
  if (index <= FXT_META_STRING_LAST) {
    const char *meta = fxt_meta_string(index);
    if (meta == NULL)
      return false;
    *s = meta;
    *len = (uint32_t)strlen(meta);
    return true;
  }
  if (!atomic_load_explicit(&entries[index].ready, memory_order_acquire))
    return false;
  *s = arena + entries[index].offset;
  *len = entries[index].len;
  return true;
}

uint32_t fxt_intern_end(void)
{
  uint32_t end = atomic_load_explicit(&next_index, memory_order_relaxed);
  return end > FXT_INTERN_MAX_INDEX + 1 ? FXT_INTERN_MAX_INDEX + 1 : end;
}
