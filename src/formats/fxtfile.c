/* src/formats/fxtfile.c - loading an fxtrace FXT file: one pass of the strict decoder over the
 * whole file (it keeps string and thread tables per provider, as each process of a
 * multi-process file has its own: a provider info record starts a provider afresh, a provider
 * section record returns to one, so processes whose writes interleave in one file are told
 * apart), building the index of fxtfile_int.h.
 */
#define _GNU_SOURCE
#include "fxtfile_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fxtrace/meta.h>

/* State of the loading pass only. */
struct loader {
  struct fxtf_file *f;
  struct fxt_decoder dec;
  struct fxt_record rec;
  char *err;
  size_t err_size;
};

static void set_err(char *err, size_t err_size, const char *msg) {
  if (err != NULL && err_size > 0)
    snprintf(err, err_size, "%s", msg);
}

/* ---- providers --------------------------------------------------------------------------- */

/* Every provider ends with the file: their clock mappings are known now, so the entries'
 * ticks become ns, each by its own provider's mapping (one pass: providers may interleave). */
static void end_providers(struct fxtf_file *f, uint64_t end) {
  if (f->nprovs == 0)
    return;
  f->provs[f->cur].pub.end = end;
  for (uint32_t i = 0; i < f->nprovs; i++) {
    f->provs[i].map = fxtf_clockmap_of(&f->provs[i].pub);
    f->provs[i].seg = (struct fxtf_clockseg){0};
  }
  for (size_t i = 0; i < f->nentries; i++) {
    struct fxtf_prov *p = &f->provs[f->threads[f->entries[i].thread].provider];
    f->entries[i].ns = fxtf_clockmap_apply_seg(&p->map, &p->seg, f->entries[i].ns);
  }
}

/* Makes provider i current from offset on (records there and after are its). */
static int switch_provider(struct fxtf_file *f, uint32_t i, uint64_t offset) {
  if (f->nruns > 0) {
    if (f->cur == i)
      return 0;
    f->provs[f->cur].pub.end = offset; /* its records so far end here */
  }
  if (fxtf_grow_size((void **)&f->runs, &f->cap_runs, f->nruns + 1, sizeof *f->runs))
    return FXT_ENOMEM;
  f->runs[f->nruns++] = (struct fxtf_run){offset, i};
  f->cur = i;
  memset(f->ref_cache, 0, sizeof f->ref_cache); /* thread refs are the provider's */
  return 0;
}

/* A provider info record: a new provider (one of the same id before it is not returned to). */
static int begin_provider(struct fxtf_file *f, uint32_t id, const char *name, uint32_t name_len,
                          uint64_t offset) {
  if (fxtf_grow((void **)&f->provs, &f->cap_provs, (uint64_t)f->nprovs + 1, sizeof *f->provs))
    return FXT_ENOMEM;
  struct fxtf_prov *p = &f->provs[f->nprovs++];
  memset(p, 0, sizeof *p);
  p->pub.id = id;
  p->pub.name.data = name;
  p->pub.name.len = name_len;
  p->pub.process_name.data = "";
  p->pub.offset = offset;
  p->pub.end = offset;
  if (!f->interleaved) /* the CPU losses of the providers before are trailing */
    f->cpu_open = f->ncpu_losses;
  return switch_provider(f, f->nprovs - 1, offset);
}

/* A provider section record: back to the latest provider of that id (a new one if none). */
static int enter_provider(struct fxtf_file *f, uint32_t id, uint64_t offset) {
  for (uint32_t i = f->nprovs; i-- > 0;)
    if (f->provs[i].pub.id == id) {
      if (i != f->cur && f->nruns > 0 && i + 1 != f->nprovs && !f->interleaved) {
        f->interleaved = true; /* an earlier provider's records continue after another's */
        f->cpu_open = 0;       /* so its CPU losses are open again (for its events only) */
      }
      return switch_provider(f, i, offset);
    }
  return begin_provider(f, id, "", 0, offset);
}

/* The provider records belong to; records before any provider info record (not fxtrace's
 * layout, but readable) get an anonymous provider 0. */
static struct fxtf_prov *current(struct loader *l) {
  struct fxtf_file *f = l->f;
  if (f->nprovs == 0 && begin_provider(f, 0, "", 0, 0) != 0)
    return NULL;
  return &f->provs[f->cur];
}

static int bind_string(struct loader *l, const struct fxt_string *s, uint64_t off) {
  struct fxtf_prov *p = current(l);
  if (p == NULL)
    return FXT_ENOMEM;
  if (s->index == 0) /* readers ignore it (§4.6) */
    return 0;
  if (s->index >= p->nstrings) {
    uint32_t cap = p->nstrings;
    if (fxtf_grow((void **)&p->strings, &cap, (uint64_t)s->index + 1, sizeof *p->strings))
      return FXT_ENOMEM;
    memset(p->strings + p->nstrings, 0, (cap - p->nstrings) * sizeof *p->strings);
    p->nstrings = cap;
  }
  struct fxtf_strslot *slot = &p->strings[s->index];
  if (slot->bound && (slot->len != s->len || memcmp(slot->data, s->data, s->len) != 0))
    return fxt_fail_at(l->err, l->err_size, FXT_EBADMSG, off,
                       "string index %u re-bound to other text (fxtrace binds each index once per "
                       "process)",
                       s->index);
  slot->data = s->data;
  slot->len = s->len;
  slot->bound = true;
  return 0;
}

/* ---- threads ----------------------------------------------------------------------------- */

/* The thread of an event record: through the thread-ref cache when it has a ref. */
static int64_t event_thread(struct loader *l, const struct fxt_event *ev) {
  struct fxtf_file *f = l->f;
  uint8_t ref = ev->thread.index;
  if (ref != 0 && f->ref_cache[ref] != 0)
    return f->ref_cache[ref] - 1;
  int64_t id = fxtf_thread_get(f, f->cur, ev->thread.process_koid, ev->thread.thread_koid);
  if (id >= 0 && ref != 0)
    f->ref_cache[ref] = (uint32_t)id + 1;
  return id;
}

static int on_kernel_object(struct loader *l, const struct fxt_kernel_object *k) {
  struct fxtf_prov *p = current(l);
  if (p == NULL)
    return FXT_ENOMEM;
  if (k->obj_type == FXT_KOBJ_PROCESS) {
    if (k->koid == p->pub.id || p->pub.id == 0)
      p->pub.process_name = fxtf_text_of(&k->name);
    return 0;
  }
  if (k->obj_type != FXT_KOBJ_THREAD)
    return 0;
  uint64_t pid = p->pub.id;
  for (uint32_t i = 0; i < k->num_args; i++)
    if (k->args[i].type == FXT_ARG_KOID && fxtf_str_is(&k->args[i].name, "process"))
      pid = k->args[i].value.koid;
  int64_t id = fxtf_thread_get(l->f, l->f->cur, pid, k->koid);
  if (id < 0)
    return (int)id;
  struct fxtf_thread *t = &l->f->threads[id];
  t->comm = fxtf_text_of(&k->name);
  t->named = true;
  return 0;
}

/* ---- events ------------------------------------------------------------------------------ */

/* The current provider's losses of cpu not yet before an event, or NULL. */
static struct fxtf_cpu_loss *open_cpu_loss(struct fxtf_file *f, uint32_t cpu) {
  for (size_t i = f->cpu_open; i < f->ncpu_losses; i++)
    if (f->cpu_losses[i].cpu == cpu && f->cpu_losses[i].provider == f->cur)
      return &f->cpu_losses[i];
  return NULL;
}

/* A CPU's losses: for the provider's next event on that CPU. */
static int add_cpu_loss(struct fxtf_file *f, const struct fxtf_meta *m) {
  if (m->records == 0 && !m->count_unknown)
    return 0;
  struct fxtf_cpu_loss *c = open_cpu_loss(f, m->cpu);
  if (c == NULL) {
    if (fxtf_grow_size((void **)&f->cpu_losses, &f->cap_cpu_losses, f->ncpu_losses + 1,
                       sizeof *f->cpu_losses))
      return FXT_ENOMEM;
    c = &f->cpu_losses[f->ncpu_losses++];
    *c = (struct fxtf_cpu_loss){f->cur, m->cpu, 0, false};
  }
  c->records += m->records;
  c->unknown |= m->count_unknown;
  return 0;
}

/* Takes the current provider's open losses of cpu into *records and *unknown. */
static void take_cpu_loss(struct fxtf_file *f, uint32_t cpu, uint64_t *records, bool *unknown) {
  struct fxtf_cpu_loss *c = open_cpu_loss(f, cpu);
  if (c == NULL)
    return;
  *records += c->records;
  *unknown |= c->unknown;
  struct fxtf_cpu_loss *end = f->cpu_losses + f->ncpu_losses--;
  memmove(c, c + 1, (size_t)(end - (c + 1)) * sizeof *c); /* the others keep their order */
}

/* Room for one more entry. The index is the one array that grows with the events (24 bytes
 * each: 48 MB for 2 M), and its first writes were a third of `fxtf_open`'s time on a KVM guest
 * (12,000 page faults of ~20 us for 2 M events). A file that may hold 4 MiB of entries gets an
 * anonymous mapping for them, as large as the file could need (an event record is 16 bytes at
 * least; unused pages cost nothing) and advised for transparent huge pages: a fault per 2 MiB.
 * Where that is refused (address space limits, strict overcommit), or for smaller files, the
 * entries are malloc'ed and doubled as before. */
#define ENTRIES_MAP_MIN (4u << 20)

static int grow_entries(struct fxtf_file *f) {
  size_t elem = sizeof *f->entries;
  if (f->entries_mapped) { /* never, unless the file's records lied about their sizes */
    size_t bytes = f->cap_entries * elem;
    if (bytes > SIZE_MAX / 2)
      return FXT_ENOMEM;
    void *p = mremap(f->entries, bytes, 2 * bytes, MREMAP_MAYMOVE);
    if (p == MAP_FAILED)
      return FXT_ENOMEM;
    f->entries = p;
    f->cap_entries *= 2;
    return 0;
  }
  if (f->cap_entries == 0 && f->len / 16 >= ENTRIES_MAP_MIN / elem &&
      f->len / 16 < SIZE_MAX / elem / 2) {
    size_t huge = 2u << 20, bytes = (f->len / 16 * elem + huge - 1) / huge * huge;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p != MAP_FAILED) {
#ifdef MADV_HUGEPAGE
      (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice: fine if refused */
#endif
      f->entries = p;
      f->cap_entries = bytes / elem;
      f->entries_mapped = true;
      return 0;
    }
  }
  return fxtf_grow_size((void **)&f->entries, &f->cap_entries, f->nentries + 1, elem);
}

static int add_entry(struct loader *l, struct fxtf_thread *t, uint32_t tid,
                     const struct fxt_record *rec) {
  struct fxtf_file *f = l->f;
  if (f->nentries == f->cap_entries && grow_entries(f))
    return FXT_ENOMEM;
  struct fxtf_entry *e = &f->entries[f->nentries++];
  e->ns = rec->u.event.timestamp; /* made ns when the provider ends */
  e->offset = rec->offset;
  e->thread = tid;
  e->cpu = t->cpu == FXTF_CPU_UNKNOWN ? FXTF_ENTRY_CPU_UNKNOWN
                                      : (uint16_t)(t->cpu > 0xfffe ? 0xfffe : t->cpu);
  e->flags = 0;
  uint64_t lost = t->trailing_lost;
  bool unknown = t->trailing_unknown;
  if (f->ncpu_losses > f->cpu_open)
    take_cpu_loss(f, t->cpu, &lost, &unknown);
  if (lost != 0 || unknown) { /* the losses so far stand before this event */
    if (fxtf_grow_size((void **)&f->losses, &f->cap_losses, f->nlosses + 1, sizeof *f->losses))
      return FXT_ENOMEM;
    f->losses[f->nlosses++] = (struct fxtf_loss){rec->offset, lost, unknown};
    t->trailing_lost = 0;
    t->trailing_unknown = false;
    e->flags |= FXTF_ENTRY_LOSS;
  }
  t->events++;
  f->provs[f->cur].pub.events++;
  int64_t name = fxtf_event_name_get(f, f->cur, &rec->u.event.category,
                                     &rec->u.event.name);
  if (name < 0)
    return (int)name;
  f->names[name].count++;
  return 0;
}

/* A string argument's text, cut to fit out[size] (NUL-terminated); "" without one. */
static void arg_text(const struct fxt_event *ev, const char *name, char *out, size_t size) {
  out[0] = 0;
  for (uint32_t i = 0; i < ev->num_args; i++) {
    const struct fxt_arg *a = &ev->args[i];
    if (a->type != FXT_ARG_STRING || !fxtf_str_is(&a->name, name))
      continue;
    struct fxtf_text t = fxtf_text_of(&a->value.str);
    size_t n = t.len < size - 1 ? t.len : size - 1;
    memcpy(out, t.data, n);
    out[n] = 0;
    return;
  }
}

static int on_event(struct loader *l, const struct fxt_record *rec) {
  struct fxtf_meta m;
  int rc = fxtf_parse_meta(rec, &m, l->err, l->err_size);
  struct fxtf_prov *p = current(l);
  if (rc || p == NULL)
    return rc ? rc : FXT_ENOMEM;
  if (m.kind == FXTF_META_CLOCK_SYNC)
    return fxtf_sync_add(&p->pub, &p->sync_arr, &p->sync_cap, &m.sync);
  if (m.kind == FXTF_META_OTHER && fxtf_str_is(&rec->u.event.name, "clock")) {
    arg_text(&rec->u.event, "source", p->pub.clock_source, sizeof p->pub.clock_source);
    arg_text(&rec->u.event, "reason", p->pub.clock_reason, sizeof p->pub.clock_reason);
  }
  if (m.kind == FXTF_META_DROPPED || m.kind == FXTF_META_OTHER)
    return 0;
  int64_t id = event_thread(l, &rec->u.event);
  if (id < 0)
    return (int)id;
  struct fxtf_thread *t = &l->f->threads[id];
  if (t->first_offset == UINT64_MAX)
    t->first_offset = rec->offset;
  switch (m.kind) {
  case FXTF_META_DROP_STATS:
    t->dropped += m.records;
    break;
  case FXTF_META_OVERRUN:
    t->overrun += m.records;
    break;
  case FXTF_META_LOST:
    t->lost += m.records;
    break;
  case FXTF_META_CPU:
    t->cpu = m.cpu;
    return 0;
  default:
    return add_entry(l, t, (uint32_t)id, rec);
  }
  if (m.has_cpu) /* a CPU's: attached to the provider's next event on it, if any */
    return add_cpu_loss(l->f, &m);
  t->trailing_lost += m.records; /* attached to the thread's next event, if any */
  t->trailing_unknown |= m.count_unknown;
  return 0;
}

static int on_blob(struct loader *l, const struct fxt_record *rec) {
  if (!fxtf_is_desc(rec))
    return 0;
  struct fxtf_desc d;
  int rc = fxtf_parse_desc(&l->dec, rec, &d, l->err, l->err_size);
  if (rc == 0 && current(l) == NULL)
    rc = FXT_ENOMEM;
  if (rc)
    return rc;
  d.provider = l->f->cur;
  return fxtf_desc_add(l->f, &d);
}

static int on_record(struct loader *l) {
  const struct fxt_record *rec = &l->rec;
  struct fxtf_prov *p;
  switch (rec->kind) {
  case FXT_KIND_PROVIDER_INFO:
    return begin_provider(l->f, rec->u.provider_info.id, rec->u.provider_info.name,
                          rec->u.provider_info.name_len, rec->offset);
  case FXT_KIND_PROVIDER_SECTION: /* the decoder switches to that provider's tables too */
    return enter_provider(l->f, rec->u.provider_section.id, rec->offset);
  case FXT_KIND_INIT:
    p = current(l);
    if (p == NULL)
      return FXT_ENOMEM;
    p->pub.ticks_per_second = rec->u.init.ticks_per_second;
    return 0;
  case FXT_KIND_STRING:
    return bind_string(l, &rec->u.string, rec->offset);
  case FXT_KIND_THREAD:
    l->f->ref_cache[rec->u.thread.index] = 0;
    return 0;
  case FXT_KIND_EVENT:
    return on_event(l, rec);
  case FXT_KIND_BLOB:
    return on_blob(l, rec);
  case FXT_KIND_KERNEL_OBJECT:
    return on_kernel_object(l, &rec->u.kernel_object);
  default: /* magic; records fxtrace does not write (logs, scheduling, objects, large blobs) */
    return 0;
  }
}

static void free_strings(struct fxtf_file *f) {
  for (uint32_t i = 0; i < f->nprovs; i++) {
    free(f->provs[i].strings);
    f->provs[i].strings = NULL;
  }
}

/* The decoding pass. The string table (512 KiB) lives only as long as the pass. */
static int load_records(struct fxtf_file *f, char *err, size_t err_size) {
  struct loader *l = malloc(sizeof *l);
  struct fxt_str_slot *table = malloc(FXT_STRING_TABLE_SIZE * sizeof *table);
  struct fxtf_tables more = {.n = 0};
  int rc = l && table ? 0 : FXT_ENOMEM;
  if (rc == 0) {
    l->f = f;
    l->err = err;
    l->err_size = err_size;
    rc = fxtf_decoder_init(&l->dec, f->buf, f->len, table, &more);
  }
  bool decoding = false; /* the decoder failed (not what a record says) */
  while (rc == 0) {
    rc = fxt_decoder_next(&l->dec, &l->rec, err, err_size);
    decoding = rc < 0;
    if (rc <= 0)
      break;
    f->records++;
    rc = on_record(l);
  }
  struct fxt_decoder_stats ds;
  fxt_decoder_stats(&l->dec, &ds);
  if (decoding && rc == FXT_EBADMSG && fxtf_torn_at(f->buf, f->len, ds.bytes)) {
    f->torn = ds.bytes; /* the records before it are read: the file ends there */
    f->len = (size_t)ds.bytes;
    set_err(err, err_size, "");
    rc = 0;
  }
  if (rc == 0)
    end_providers(f, f->len);
  fxtf_tables_free(&more);
  free(table);
  free(l);
  return rc;
}

int fxtf_load(const void *buf, size_t len, struct fxtf_file **out, char *err, size_t err_size) {
  set_err(err, err_size, "");
  if (out == NULL || (buf == NULL && len > 0)) {
    set_err(err, err_size, "invalid argument");
    return FXT_EINVAL;
  }
  *out = NULL;
  struct fxtf_file *f = calloc(1, sizeof *f);
  if (f == NULL) {
    set_err(err, err_size, "out of memory");
    return FXT_ENOMEM;
  }
  f->buf = buf;
  f->len = len;
  f->torn = UINT64_MAX;
  int rc = load_records(f, err, err_size);
  if (rc == 0)
    rc = fxtf_sort_entries(f);
  if (rc == FXT_ENOMEM)
    set_err(err, err_size, "out of memory");
  if (rc != 0) {
    fxtf_close(f);
    return rc;
  }
  *out = f;
  return 0;
}

int fxtf_open(const char *path, struct fxtf_file **out, char *err, size_t err_size) {
  if (out == NULL || path == NULL) {
    set_err(err, err_size, "invalid argument");
    return FXT_EINVAL;
  }
  *out = NULL;
  struct fxt_fio_in in; /* advised for the loading pass, which reads it front to back */
  int rc = fxt_fio_map(&in, path, err, err_size);
  if (rc == 0)
    rc = fxtf_load(in.data, in.len, out, err, err_size);
  if (rc != 0) {
    fxt_fio_unmap(&in);
    return rc;
  }
  (*out)->file = in;
  if (in.data) /* re-reading events in time order jumps around */
    madvise((void *)in.data, in.len, MADV_NORMAL);
  return 0;
}

void fxtf_close(struct fxtf_file *f) {
  if (f == NULL)
    return;
  free_strings(f);
  fxtf_free_tables(f);
  for (uint32_t i = 0; i < f->nprovs; i++)
    free(f->provs[i].sync_arr);
  free(f->provs);
  free(f->runs);
  fxt_fio_unmap(&f->file);
  free(f);
}

/* ---- accessors --------------------------------------------------------------------------- */

size_t fxtf_event_count(const struct fxtf_file *f) { return f->nentries; }

uint64_t fxtf_torn(const struct fxtf_file *f) { return f->torn; }

bool fxtf_torn_at(const void *buf, size_t len, uint64_t pos) {
  if (pos == 0 || pos >= len || buf == NULL)
    return false;
  uint64_t left = len - pos;
  if (left < 8)
    return true;
  uint64_t h = 0;
  const unsigned char *p = (const unsigned char *)buf + pos;
  for (int i = 7; i >= 0; i--) /* little-endian, any alignment */
    h = h << 8 | p[i];
  return fxt_w_record_words(h) > left / 8;
}

uint32_t fxtf_provider_count(const struct fxtf_file *f) { return f->nprovs; }

const struct fxtf_provider *fxtf_provider(const struct fxtf_file *f, uint32_t i) {
  return i < f->nprovs ? &f->provs[i].pub : NULL;
}

const void *fxtf_data(const struct fxtf_file *f, size_t *len) {
  *len = f->len;
  return f->buf;
}

uint32_t fxtf_provider_at(const struct fxtf_file *f, uint64_t offset) {
  size_t lo = 0, hi = f->nruns; /* the last run starting at or before offset */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (f->runs[mid].offset <= offset)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo == 0 ? UINT32_MAX : f->runs[lo - 1].prov;
}

static struct fxt_provider_tables *map_tables(void *ctx) {
  struct fxtf_tables *m = ctx;
  if (m->n == FXT_DECODER_MAX_PROVIDERS - 1)
    return NULL;
  void *p = mmap(NULL, sizeof *m->v[0], PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return NULL; /* the decoder reuses the least recent provider's */
  return m->v[m->n++] = p;
}

int fxtf_decoder_init(struct fxt_decoder *d, const void *buf, size_t len,
                      struct fxt_str_slot *table, struct fxtf_tables *more) {
  more->n = 0;
  int rc = fxt_decoder_init(d, buf, len, table);
  return rc ? rc : fxt_decoder_add_tables(d, map_tables, more);
}

void fxtf_tables_free(struct fxtf_tables *more) {
  for (uint32_t i = 0; i < more->n; i++)
    munmap(more->v[i], sizeof *more->v[i]);
  more->n = 0;
}

/* The exporters hand their input back in steps of this many bytes at least. */
#define RELEASE_BYTES (8u << 20)

void fxtf_pass_init(struct fxtf_pass *p, const void *buf, size_t len, struct fxt_str_slot *table,
                    uint64_t *torn, char *err, size_t err_size) {
  memset(p, 0, sizeof *p);
  p->buf = buf;
  p->len = len;
  p->table = table;
  p->torn = torn;
  p->err = err;
  p->err_size = err_size;
}

int fxtf_pass(struct fxtf_pass *p, int (*fn)(void *ctx), void *ctx) {
  uint64_t released = 0;
  struct fxtf_tables more; /* the providers' tables: freed below */
  int rc = fxtf_decoder_init(&p->dec, p->buf, p->len, p->table, &more);
  bool decoding = false; /* the decoder failed (not what a record says) */
  while (rc == 0) {
    rc = fxt_decoder_next(&p->dec, &p->rec, p->err, p->err_size);
    decoding = rc < 0;
    if (rc <= 0)
      break;
    rc = fn(ctx);
    if (p->release == NULL || (p->release_taken && rc != 0))
      continue;
    uint64_t to = p->rec.offset + (p->release_taken ? p->rec.size : 0);
    if (to - released >= RELEASE_BYTES) {
      p->release(p->release_ctx, released, to);
      released = to;
    }
  }
  struct fxt_decoder_stats ds;
  fxt_decoder_stats(&p->dec, &ds);
  if (decoding && rc == FXT_EBADMSG && !p->strict && fxtf_torn_at(p->buf, p->len, ds.bytes)) {
    *p->torn = ds.bytes; /* the first pass: the input ends there */
    p->len = (size_t)ds.bytes;
    if (p->err != NULL && p->err_size > 0)
      p->err[0] = '\0';
    rc = 0;
  }
  if (rc == 0 && p->release != NULL && released < p->len)
    p->release(p->release_ctx, released, p->len);
  fxtf_tables_free(&more);
  return rc;
}
const struct fxtf_thread *fxtf_threads(const struct fxtf_file *f, uint32_t *n) {
  *n = f->nthreads;
  return f->threads;
}

void fxtf_totals(const struct fxtf_file *f, struct fxtf_totals *t) {
  memset(t, 0, sizeof *t);
  t->records = f->records;
  t->providers = f->nprovs;
  for (uint32_t i = 0; i < f->nthreads; i++) {
    const struct fxtf_thread *th = &f->threads[i];
    t->events += th->events;
    t->dropped += th->dropped;
    t->overrun += th->overrun;
    t->lost += th->lost;
    t->trailing_lost += th->trailing_lost;
    if (th->events || th->dropped || th->overrun || th->lost)
      t->threads++;
  }
  for (size_t i = 0; i < f->ncpu_losses; i++)
    t->trailing_lost += f->cpu_losses[i].records;
}

const struct fxtf_cpu_loss *fxtf_trailing_cpu_losses(const struct fxtf_file *f, size_t *n) {
  *n = f->ncpu_losses;
  return f->cpu_losses;
}

/* ---- providers as the exporters follow them (fxtfile_int.h) ------------------------------- */

static int segs_enter(struct fxtf_segs *s, uint32_t id, bool add) {
  if (!add) {
    if (s->seen >= s->n) /* the first pass saw fewer: the input changed under us */
      return FXT_EBADMSG;
    s->cur = ++s->seen;
    return 1;
  }
  if (fxtf_grow((void **)&s->v, &s->cap, (uint64_t)s->n + 1, sizeof *s->v))
    return FXT_ENOMEM;
  struct fxtf_seg *g = &s->v[s->n++];
  memset(g, 0, sizeof *g);
  g->p.id = id;
  s->cur = s->seen = s->n;
  return 1;
}

/* A provider section: back to the latest provider of that id entered so far in this pass
 * (2), or a new one (1), or 0 when it is the current one. */
static int segs_return(struct fxtf_segs *s, uint32_t id, bool add) {
  for (uint32_t i = s->seen; i-- > 0;)
    if (s->v[i].p.id == id) {
      if (s->cur == i + 1)
        return 0;
      s->cur = i + 1;
      return 2;
    }
  return segs_enter(s, id, add);
}

int fxtf_segs_step(struct fxtf_segs *s, const struct fxt_record *rec, bool add) {
  switch (rec->kind) {
  case FXT_KIND_PROVIDER_INFO:
    return segs_enter(s, rec->u.provider_info.id, add);
  case FXT_KIND_PROVIDER_SECTION: {
    int entered = 0;
    if (s->cur == 0 && (entered = segs_enter(s, 0, add)) < 0)
      return entered;
    int rc = segs_return(s, rec->u.provider_section.id, add);
    return rc == 0 ? entered : rc;
  }
  case FXT_KIND_BLOB:
    if (!fxtf_is_desc(rec))
      return 0;
    /* fall through */
  case FXT_KIND_INIT:
  case FXT_KIND_STRING:
  case FXT_KIND_EVENT:
  case FXT_KIND_KERNEL_OBJECT:
    return s->cur == 0 ? segs_enter(s, 0, add) : 0;
  default:
    return 0;
  }
}
