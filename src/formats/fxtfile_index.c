/* src/formats/fxtfile_index.c - the reader's lookup tables, the time sort of its index and the
 * re-reading of one event record by offset (fxtf_event_at).
 */
#include "fxtfile_int.h"
#include "../base/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- growable arrays --------------------------------------------------------------------- */

int fxtf_grow_size(void **p, size_t *cap, size_t need, size_t elem) {
  return fxt_grow(p, cap, need, elem, 16) ? 0 : FXT_ENOMEM;
}

int fxtf_grow(void **p, uint32_t *cap, uint64_t need, size_t elem) {
  if (need > UINT32_MAX - 1) /* ids are uint32_t and id + 1 must fit */
    return FXT_ENOMEM;
  size_t c = *cap;
  int rc = fxtf_grow_size(p, &c, (size_t)need, elem);
  *cap = c > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)c;
  return rc;
}

/* ---- hashing and the id map ---------------------------------------------------------------- */

static uint64_t mix64(uint64_t x) { /* murmur3's finalizer */
  x ^= x >> 33;
  x *= UINT64_C(0xff51afd7ed558ccd);
  x ^= x >> 33;
  x *= UINT64_C(0xc4ceb9fe1a85ec53);
  return x ^ (x >> 33);
}

static uint64_t hash_text(uint64_t h, struct fxtf_text t) { /* FNV-1a */
  for (uint32_t i = 0; i < t.len; i++)
    h = (h ^ (unsigned char)t.data[i]) * UINT64_C(0x100000001b3);
  return h;
}

typedef bool (*eq_fn)(const struct fxtf_file *f, uint32_t id, const void *key);

/* The id whose entry equals key, or -1. */
static int64_t idmap_find(const struct fxtf_idmap *m, uint32_t h, eq_fn eq,
                          const struct fxtf_file *f, const void *key) {
  if (m->slots == NULL)
    return -1;
  for (uint32_t i = h & m->mask;; i = (i + 1) & m->mask) {
    uint64_t s = m->slots[i];
    if (s == 0)
      return -1;
    if ((uint32_t)(s >> 32) == h && eq(f, (uint32_t)s - 1, key))
      return (uint32_t)s - 1;
  }
}

static void idmap_put(uint64_t *slots, uint32_t mask, uint64_t s) {
  uint32_t i = (uint32_t)(s >> 32) & mask;
  while (slots[i] != 0)
    i = (i + 1) & mask;
  slots[i] = s;
}

/* Adds id (not present) with hash h; keeps the load under 3/4 so probes stay short. */
static int idmap_add(struct fxtf_idmap *m, uint32_t h, uint32_t id) {
  uint64_t cap = m->slots ? (uint64_t)m->mask + 1 : 0;
  if ((uint64_t)(m->count + 1) * 4 > cap * 3) {
    uint64_t ncap = cap ? cap * 2 : 64;
    if (ncap > (UINT64_C(1) << 32))
      return FXT_ENOMEM;
    uint64_t *ns = calloc((size_t)ncap, sizeof *ns);
    if (ns == NULL)
      return FXT_ENOMEM;
    for (uint64_t i = 0; i < cap; i++)
      if (m->slots[i] != 0)
        idmap_put(ns, (uint32_t)(ncap - 1), m->slots[i]);
    free(m->slots);
    m->slots = ns;
    m->mask = (uint32_t)(ncap - 1);
  }
  idmap_put(m->slots, m->mask, (uint64_t)h << 32 | ((uint64_t)id + 1));
  m->count++;
  return 0;
}

/* ---- threads ----------------------------------------------------------------------------- */

struct thread_key {
  uint32_t provider;
  uint64_t pid, tid;
};

static bool thread_eq(const struct fxtf_file *f, uint32_t id, const void *key) {
  const struct thread_key *k = key;
  const struct fxtf_thread *t = &f->threads[id];
  return t->tid == k->tid && t->pid == k->pid && t->provider == k->provider;
}

static uint32_t thread_hash(const struct thread_key *k) {
  return (uint32_t)mix64(mix64(k->tid) ^ k->pid ^ (uint64_t)k->provider << 40);
}

int64_t fxtf_thread_get(struct fxtf_file *f, uint32_t provider, uint64_t pid, uint64_t tid) {
  struct thread_key k = {provider, pid, tid};
  uint32_t h = thread_hash(&k);
  int64_t id = idmap_find(&f->thread_map, h, thread_eq, f, &k);
  if (id >= 0)
    return id;
  if (fxtf_grow((void **)&f->threads, &f->cap_threads, (uint64_t)f->nthreads + 1,
                sizeof *f->threads) ||
      idmap_add(&f->thread_map, h, f->nthreads))
    return FXT_ENOMEM;
  struct fxtf_thread *t = &f->threads[f->nthreads];
  memset(t, 0, sizeof *t);
  t->provider = provider;
  t->pid = pid;
  t->tid = tid;
  t->comm.data = "";
  t->cpu = FXTF_CPU_UNKNOWN;
  t->first_offset = UINT64_MAX;
  return f->nthreads++;
}

/* ---- names (system:event) ---------------------------------------------------------------- */

struct name_key {
  struct fxtf_text system, name;
};

static bool text_eq(struct fxtf_text a, struct fxtf_text b) {
  return a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0);
}

static bool name_eq(const struct fxtf_file *f, uint32_t id, const void *key) {
  const struct name_key *k = key;
  return text_eq(f->names[id].name, k->name) && text_eq(f->names[id].system, k->system);
}

static uint32_t name_hash(const struct name_key *k) {
  uint64_t h = hash_text(UINT64_C(0xcbf29ce484222325), k->system);
  return (uint32_t)mix64(hash_text(h ^ 0x3a, k->name)); /* ':' between, so a:bc != ab:c */
}

int64_t fxtf_name_get(struct fxtf_file *f, struct fxtf_text system, struct fxtf_text name) {
  struct name_key k = {system, name};
  uint32_t h = name_hash(&k);
  int64_t id = idmap_find(&f->name_map, h, name_eq, f, &k);
  if (id >= 0)
    return id;
  if (fxtf_grow((void **)&f->names, &f->cap_names, (uint64_t)f->nnames + 1, sizeof *f->names) ||
      idmap_add(&f->name_map, h, f->nnames))
    return FXT_ENOMEM;
  f->names[f->nnames].system = system;
  f->names[f->nnames].name = name;
  f->names[f->nnames].count = 0;
  return f->nnames++;
}

/* ---- integer-keyed maps (evkeys, desckeys) ------------------------------------------------- */

static bool evkey_eq(const struct fxtf_file *f, uint32_t id, const void *key) {
  return f->evkeys[id].key == *(const uint64_t *)key;
}

static bool desckey_eq(const struct fxtf_file *f, uint32_t id, const void *key) {
  return f->desckeys[id].key == *(const uint64_t *)key;
}

static bool table_ref(const struct fxt_str_ref *r) {
  return r->index != 0 && r->index <= FXT_MAX_STRING_INDEX;
}

static struct fxtf_text text_of(const struct fxt_str_ref *r) {
  struct fxtf_text t = {r->data ? r->data : "", r->len};
  return t;
}

static int64_t event_name_find(const struct fxtf_file *f, uint32_t provider,
                               const struct fxt_str_ref *cat, const struct fxt_str_ref *name) {
  if (table_ref(cat) && table_ref(name)) {
    uint64_t key = (uint64_t)provider << 32 | (uint64_t)cat->index << 16 | name->index;
    int64_t id = idmap_find(&f->evkey_map, (uint32_t)mix64(key), evkey_eq, f, &key);
    return id < 0 ? -1 : (int64_t)f->evkeys[id].value;
  }
  struct name_key k = {text_of(cat), text_of(name)};
  return idmap_find(&f->name_map, name_hash(&k), name_eq, f, &k);
}

int64_t fxtf_event_name_get(struct fxtf_file *f, uint32_t provider, const struct fxt_str_ref *cat,
                            const struct fxt_str_ref *name) {
  int64_t id = event_name_find(f, provider, cat, name);
  if (id >= 0)
    return id;
  id = fxtf_name_get(f, text_of(cat), text_of(name));
  if (id < 0 || !table_ref(cat) || !table_ref(name))
    return id;
  uint64_t key = (uint64_t)provider << 32 | (uint64_t)cat->index << 16 | name->index;
  if (fxtf_grow((void **)&f->evkeys, &f->cap_evkeys, (uint64_t)f->nevkeys + 1,
                sizeof *f->evkeys) ||
      idmap_add(&f->evkey_map, (uint32_t)mix64(key), f->nevkeys))
    return FXT_ENOMEM;
  f->evkeys[f->nevkeys].key = key;
  f->evkeys[f->nevkeys++].value = (uint32_t)id;
  return id;
}

int fxtf_desc_add(struct fxtf_file *f, const struct fxtf_desc *d) {
  int64_t name = fxtf_name_get(f, d->system, d->name);
  if (name < 0)
    return (int)name;
  if (fxtf_grow((void **)&f->descs, &f->cap_descs, (uint64_t)f->ndescs + 1, sizeof *f->descs))
    return FXT_ENOMEM;
  f->descs[f->ndescs] = *d;
  uint64_t key = (uint64_t)d->provider << 32 | (uint64_t)name;
  uint32_t h = (uint32_t)mix64(key);
  int64_t id = idmap_find(&f->desc_map, h, desckey_eq, f, &key);
  if (id < 0) {
    if (fxtf_grow((void **)&f->desckeys, &f->cap_desckeys, (uint64_t)f->ndesckeys + 1,
                  sizeof *f->desckeys) ||
        idmap_add(&f->desc_map, h, f->ndesckeys))
      return FXT_ENOMEM;
    id = f->ndesckeys++;
    f->desckeys[id].key = key;
  }
  f->desckeys[id].value = f->ndescs++; /* the latest description wins */
  return 0;
}

const struct fxtf_desc *fxtf_desc_find(const struct fxtf_file *f, uint32_t provider,
                                       int64_t name) {
  if (name < 0)
    return NULL;
  uint64_t key = (uint64_t)provider << 32 | (uint64_t)name;
  int64_t id = idmap_find(&f->desc_map, (uint32_t)mix64(key), desckey_eq, f, &key);
  return id < 0 ? NULL : &f->descs[f->desckeys[id].value];
}

int64_t fxtf_name_find(const struct fxtf_file *f, uint32_t provider, const struct fxt_str_ref *cat,
                       const struct fxt_str_ref *name) {
  return event_name_find(f, provider, cat, name);
}

uint32_t fxtf_name_ids(const struct fxtf_file *f) { return f->nnames; }

int64_t fxtf_thread_find(const struct fxtf_file *f, uint32_t provider, uint64_t pid,
                         uint64_t tid) {
  struct thread_key k = {provider, pid, tid};
  return idmap_find(&f->thread_map, thread_hash(&k), thread_eq, f, &k);
}

/* ---- sorting the index ---------------------------------------------------------------------- */

/* Offsets are unique, so (ns, offset) is a total order that equals a stable sort by time. */
static bool entry_less(const struct fxtf_entry *a, const struct fxtf_entry *b) {
  return a->ns < b->ns || (a->ns == b->ns && a->offset < b->offset);
}

#define MIN_RUN 32u /* shorter runs are insertion-sorted up to this length */

static void insertion_sort(struct fxtf_entry *e, size_t lo, size_t hi) {
  for (size_t i = lo + 1; i < hi; i++) {
    struct fxtf_entry x = e[i];
    size_t j = i;
    for (; j > lo && entry_less(&x, &e[j - 1]); j--)
      e[j] = e[j - 1];
    e[j] = x;
  }
}

struct sorter {
  struct fxtf_entry *e, *tmp;
  size_t tmp_cap;
};

/* Merges the sorted runs [lo, mid) and [mid, hi), copying only the smaller side out (so the
 * scratch space never exceeds half the index) after trimming what is already in place. */
static int merge(struct sorter *s, size_t lo, size_t mid, size_t hi) {
  struct fxtf_entry *e = s->e;
  while (lo < mid && !entry_less(&e[mid], &e[lo]))
    lo++;
  while (hi > mid && !entry_less(&e[hi - 1], &e[mid - 1]))
    hi--;
  if (lo == mid || hi == mid)
    return 0;
  size_t nl = mid - lo, nr = hi - mid, need = nl < nr ? nl : nr;
  if (fxtf_grow_size((void **)&s->tmp, &s->tmp_cap, need, sizeof *s->tmp))
    return FXT_ENOMEM;
  struct fxtf_entry *t = s->tmp;
  if (nl <= nr) { /* forward: left run out, merge into [lo, hi) from the front */
    memcpy(t, e + lo, nl * sizeof *t);
    size_t i = 0, j = mid, k = lo;
    while (i < nl && j < hi)
      e[k++] = entry_less(&e[j], &t[i]) ? e[j++] : t[i++];
    memcpy(e + k, t + i, (nl - i) * sizeof *t);
  } else { /* backward: right run out, merge from the back */
    memcpy(t, e + mid, nr * sizeof *t);
    size_t i = nr, j = mid, k = hi;
    while (i > 0 && j > lo)
      e[--k] = entry_less(&t[i - 1], &e[j - 1]) ? e[--j] : t[--i];
    memcpy(e + lo, t, i * sizeof *t);
  }
  return 0;
}

/* Natural runs (each thread's events are already in time order, so runs are chunk-long). */
static size_t find_runs(struct fxtf_entry *e, size_t n, size_t *bounds) {
  size_t nb = 0;
  bounds[nb++] = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && !entry_less(&e[j], &e[j - 1]))
      j++;
    if (j - i < MIN_RUN) {
      j = n - i < MIN_RUN ? n : i + MIN_RUN;
      insertion_sort(e, i, j);
      while (j < n && !entry_less(&e[j], &e[j - 1]))
        j++;
    }
    bounds[nb++] = j;
    i = j;
  }
  return nb - 1;
}

int fxtf_sort_entries(struct fxtf_file *f) {
  struct fxtf_entry *e = f->entries;
  size_t n = f->nentries, i = 1;
  while (i < n && !entry_less(&e[i], &e[i - 1]))
    i++;
  if (i >= n) /* already in order: the common single-thread case costs one scan */
    return 0;
  size_t *b = malloc((n / MIN_RUN + 2) * sizeof *b);
  struct sorter s = {e, NULL, 0};
  if (b == NULL)
    return FXT_ENOMEM;
  size_t runs = find_runs(e, n, b);
  int rc = 0;
  while (runs > 1 && rc == 0) { /* merge neighbours pairwise: log2(runs) passes */
    size_t k = 0, out = 0;
    for (; k + 1 < runs && rc == 0; k += 2, out++) {
      rc = merge(&s, b[k], b[k + 1], b[k + 2]);
      b[out] = b[k];
    }
    if (k < runs)
      b[out++] = b[k];
    b[out] = n;
    runs = out;
  }
  free(s.tmp);
  free(b);
  return rc;
}

/* ---- clock mapping ------------------------------------------------------------------------ */

int fxtf_sync_add(struct fxtf_provider *p, struct fxtf_sync **arr, uint32_t *cap,
                  const struct fxtf_sync *s) {
  if (p->nsyncs == *cap) {
    if (fxtf_grow((void **)arr, cap, (uint64_t)p->nsyncs + 1, sizeof **arr))
      return FXT_ENOMEM;
    p->syncs = *arr;
  }
  (*arr)[p->nsyncs] = *s;
  if (p->nsyncs++ == 0)
    p->first_sync = *s;
  p->last_sync = *s;
  return 0;
}

int fxtf_seg_add_sync(struct fxtf_seg *g, const struct fxtf_sync *s) {
  return fxtf_sync_add(&g->p, &g->sync_arr, &g->sync_cap, s);
}

void fxtf_segs_free(struct fxtf_segs *segs) {
  for (uint32_t i = 0; segs->v && i < segs->n; i++)
    free(segs->v[i].sync_arr);
  free(segs->v);
  segs->v = NULL;
}

/* ---- re-reading an event --------------------------------------------------------------------- */
/*
 * The loading pass validated every record with the strict decoder, but the decoder can only
 * walk a file front to back (its tables are those of the moment), while events are wanted in
 * time order. An event record needs only the string table to be read again, and the provider's
 * table at its end resolves every ref of its events (indices are bound once). So this is a
 * small reader for one already validated event record; it still checks every bound, so a
 * buffer changed under it yields FXT_EBADMSG, never a bad read. The record's size, its trailer
 * and the arguments' values are decoded by the core decoder's own inline functions
 * (fxt_decode_int.h); refs resolve through the provider's table, not the decoder's.
 */

struct rd {
  const unsigned char *rec;
  uint64_t pos, end; /* words */
  const struct fxtf_prov *p;
};

static bool rd_word(struct rd *r, uint64_t *w) {
  if (r->pos >= r->end)
    return false;
  memcpy(w, r->rec + r->pos++ * 8, 8);
  return true;
}

static bool rd_ref(struct rd *r, uint64_t field, struct fxt_str_ref *s) {
  s->index = (uint16_t)field;
  s->data = "";
  s->len = 0;
  if (field == 0)
    return true;
  if (field & FXT_STR_REF_INLINE) {
    uint64_t len = field & FXT_MAX_STRING_INDEX, words = fxt_stream_words(len);
    if (words > r->end - r->pos)
      return false;
    s->data = (const char *)r->rec + r->pos * 8;
    s->len = (uint16_t)len;
    r->pos += words;
    return true;
  }
  if (field >= r->p->nstrings || !r->p->strings[field].bound)
    return false;
  s->data = r->p->strings[field].data;
  s->len = r->p->strings[field].len;
  return true;
}

static bool rd_arg_value(struct rd *a, uint64_t h, struct fxt_arg *arg) {
  if (fxt_arg_header_value(h, arg))
    return true;
  switch (arg->type) {
  case FXT_ARG_STRING:
    return rd_ref(a, FXT_GET(h, FXT_ARG_STRING_VALUE), &arg->value.str);
  case FXT_ARG_BLOB: {
    uint64_t size = FXT_GET(h, FXT_ARG_BLOB_SIZE), words = fxt_stream_words(size);
    if (words > a->end - a->pos)
      return false;
    arg->value.blob.data = a->rec + a->pos * 8;
    arg->value.blob.size = (uint32_t)size;
    a->pos += words;
    return true;
  }
  case FXT_ARG_INT64:
  case FXT_ARG_UINT64:
  case FXT_ARG_DOUBLE:
  case FXT_ARG_POINTER:
  case FXT_ARG_KOID: {
    uint64_t w;
    if (!rd_word(a, &w))
      return false;
    fxt_arg_word_value(w, arg);
    return true;
  }
  default:
    return false;
  }
}

static bool rd_arg(struct rd *r, struct fxt_arg *arg) {
  uint64_t h;
  if (!rd_word(r, &h))
    return false;
  uint64_t size = FXT_GET(h, FXT_ARG_SIZE);
  if (size == 0 || size - 1 > r->end - r->pos)
    return false;
  struct rd a = *r;
  a.end = r->pos - 1 + size;
  arg->type = (uint32_t)FXT_GET(h, FXT_ARG_TYPE);
  if (!rd_ref(&a, FXT_GET(h, FXT_ARG_NAME), &arg->name) || !rd_arg_value(&a, h, arg))
    return false;
  r->pos = a.end;
  return true;
}

static bool reread_event(const struct fxtf_file *f, const struct fxtf_prov *p, uint64_t off,
                         struct fxt_event *ev) {
  if (off > f->len || f->len - off < 8)
    return false;
  struct rd r = {f->buf + off, 0, 1, p};
  uint64_t h = 0;
  if (!rd_word(&r, &h))
    return false;
  uint64_t words = fxt_w_record_words(h);
  if (FXT_GET(h, FXT_HDR_TYPE) != FXT_RECORD_EVENT || words == 0 || words > (f->len - off) / 8)
    return false;
  r.end = words;
  ev->type = (uint32_t)FXT_GET(h, FXT_EVENT_TYPE);
  ev->num_args = (uint32_t)FXT_GET(h, FXT_EVENT_ARGS);
  ev->thread.index = (uint8_t)FXT_GET(h, FXT_EVENT_THREAD);
  ev->trailer = 0;
  if (ev->type > FXT_EVENT_TYPE_LAST || !rd_word(&r, &ev->timestamp))
    return false;
  if (ev->thread.index == 0 && r.end - r.pos < 2) /* inline koids: the thread says them */
    return false;
  r.pos += ev->thread.index == 0 ? 2 : 0;
  if (!rd_ref(&r, FXT_GET(h, FXT_EVENT_CATEGORY), &ev->category) ||
      !rd_ref(&r, FXT_GET(h, FXT_EVENT_NAME), &ev->name))
    return false;
  for (uint32_t i = 0; i < ev->num_args; i++)
    if (!rd_arg(&r, &ev->args[i]))
      return false;
  if (fxt_event_has_trailer(ev->type) && !rd_word(&r, &ev->trailer))
    return false;
  return r.pos == r.end;
}

static const struct fxtf_loss *loss_at(const struct fxtf_file *f, uint64_t offset) {
  size_t lo = 0, hi = f->nlosses;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (f->losses[mid].offset < offset)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < f->nlosses && f->losses[lo].offset == offset ? &f->losses[lo] : NULL;
}

int fxtf_event_at(const struct fxtf_file *f, size_t i, struct fxtf_event *out, char *err,
                  size_t err_size) {
  if (i >= f->nentries)
    return FXT_EINVAL;
  const struct fxtf_entry *e = &f->entries[i];
  const struct fxtf_thread *t = &f->threads[e->thread];
  const struct fxtf_prov *p = &f->provs[t->provider];
  if (!reread_event(f, p, e->offset, &out->ev)) {
    if (err != NULL && err_size > 0)
      snprintf(err, err_size, "offset %llu: event record changed since it was read",
               (unsigned long long)e->offset);
    return FXT_EBADMSG;
  }
  out->ev.thread.process_koid = t->pid;
  out->ev.thread.thread_koid = t->tid;
  out->provider = &p->pub;
  out->thread = t;
  out->offset = e->offset;
  out->ns = e->ns;
  out->cpu = e->cpu == FXTF_ENTRY_CPU_UNKNOWN ? FXTF_CPU_UNKNOWN : e->cpu;
  const struct fxtf_loss *loss = (e->flags & FXTF_ENTRY_LOSS) ? loss_at(f, e->offset) : NULL;
  out->lost_before = loss ? loss->records : 0;
  out->lost_unknown = loss ? loss->unknown : false;
  const struct fxt_str_ref *cat = &out->ev.category, *nm = &out->ev.name;
  if (!table_ref(cat) || !table_ref(nm)) {
    out->desc = fxtf_desc_find(f, t->provider, event_name_find(f, t->provider, cat, nm));
    return 0;
  }
  /* Table refs are bound once per provider and descriptions are final once loaded: the last
   * lookup holds for as long as the events are of its kind (see fxtf_file.look_key). */
  uint64_t key = (uint64_t)t->provider << 32 | (uint64_t)cat->index << 16 | nm->index;
  if (!f->look_valid || f->look_key != key) {
    struct fxtf_file *mf = (struct fxtf_file *)f; /* the cache only: not const */
    mf->look_desc = fxtf_desc_find(f, t->provider, event_name_find(f, t->provider, cat, nm));
    mf->look_key = key;
    mf->look_valid = true;
  }
  out->desc = f->look_desc;
  return 0;
}

/* ---- counts ------------------------------------------------------------------------------ */

static int text_cmp(struct fxtf_text a, struct fxtf_text b) {
  size_t n = a.len < b.len ? a.len : b.len;
  int c = n ? memcmp(a.data, b.data, n) : 0;
  return c ? c : (a.len > b.len) - (a.len < b.len);
}

static int count_cmp(const void *pa, const void *pb) {
  const struct fxtf_name_count *a = pa, *b = pb;
  if (a->count != b->count)
    return a->count < b->count ? 1 : -1;
  int c = text_cmp(a->system, b->system);
  return c ? c : text_cmp(a->name, b->name);
}

int fxtf_name_counts(const struct fxtf_file *f, struct fxtf_name_count **out, size_t *n) {
  *out = malloc((f->nnames + 1) * sizeof **out);
  *n = 0;
  if (*out == NULL)
    return FXT_ENOMEM;
  for (uint32_t i = 0; i < f->nnames; i++)
    if (f->names[i].count != 0) {
      struct fxtf_name_count c = {f->names[i].system, f->names[i].name, f->names[i].count};
      (*out)[(*n)++] = c;
    }
  qsort(*out, *n, sizeof **out, count_cmp);
  return 0;
}

void fxtf_free_tables(struct fxtf_file *f) {
  free(f->threads);
  free(f->descs);
  free(f->names);
  free(f->evkeys);
  free(f->desckeys);
  if (f->entries_mapped)
    munmap(f->entries, f->cap_entries * sizeof *f->entries);
  else
    free(f->entries);
  free(f->losses);
  free(f->cpu_losses);
  free(f->thread_map.slots);
  free(f->name_map.slots);
  free(f->evkey_map.slots);
  free(f->desc_map.slots);
}
