/* recover.c - the recovered trace, from recovery's model (recover_model.c): the committed
 * part of the partial output file as it is, then a tail that needs nothing from it - every
 * string and tracepoint description again where the output lacks them, and per buffer its
 * thread and name records, the losses still unreported, its undelivered records merged in
 * time order with its signal-context records, a pending drop run - then the threads that
 * never got a buffer and a final clock sync. The tail is decoded strictly before it is
 * written; a record from a buffer that does not decode is dropped and reported.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fxtrace/errors.h>
#include <fxtrace/fxt.h>
#include <fxtrace/meta.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/cpunote.h"
#include "../base/grow.h"
#include "../base/metarec.h"
#include "../base/sdir.h"
#include "recover_int.h"

#define PROVIDER_NAME "fxtrace/1"
#define MAX_BAD_PER_SLOT 64 /* then the rest of that buffer is dropped */

/* Where each record of the tail came from (to drop one that does not decode). */
struct mark {
  size_t off;
  uint32_t len;
  uint32_t slot;   /* UINT32_MAX: generated here */
  bool event;      /* counts as an event (not kernel:meta) */
  uint64_t losses; /* drop_stats: records it reports */
  const unsigned char *from; /* where it begins in a mapped input file; NULL: made here */
};

struct tail {
  unsigned char *buf;
  size_t len, cap;
  struct mark *marks;
  size_t nmarks, mcap;
  bool oom;
};

static bool reserve(struct tail *t, size_t n)
{
  if (!fxt_grow((void **)&t->buf, &t->cap, t->len + n, 1, 65536)) {
    t->oom = true;
    return false;
  }
  return true;
}

static void put(struct tail *t, const void *p, size_t n, uint32_t slot, bool event,
                uint64_t losses, const unsigned char *in_file)
{
  if (t->oom || !reserve(t, n))
    return;
  if (!fxt_grow((void **)&t->marks, &t->mcap, t->nmarks + 1, sizeof(*t->marks), 1024)) {
    t->oom = true;
    return;
  }
  t->marks[t->nmarks++] = (struct mark){t->len, (uint32_t)n, slot, event, losses, in_file};
  memcpy(t->buf + t->len, p, n);
  t->len += n;
}

#define GEN(t, fn, rec)                                                                      \
  do {                                                                                       \
    uint64_t w_[1100];                                                                       \
    int64_t n_ = fn(w_, sizeof(w_), rec);                                                    \
    if (n_ > 0)                                                                              \
      put(t, w_, (size_t)n_, UINT32_MAX, false, 0, NULL);                                    \
  } while (0)

static int64_t encode_magic(void *out, size_t size, const void *unused)
{
  (void)unused;
  return fxt_encode_magic(out, size);
}

static struct fxt_str_ref sref(uint16_t index)
{
  return fxt_meta_ref(index);
}

static struct fxt_str_ref inline_str(const char *s)
{
  struct fxt_str_ref r = {s, (uint16_t)strnlen(s, 64), FXT_STR_REF_INLINE};
  if (r.len == 0)
    r.index = 0;
  return r;
}

static void clock_sync(struct tail *t, uint32_t pid, const uint64_t v[3])
{
  struct fxt_event e = {0};
  fxt_meta_clock_sync(&e, v[0], v[1], v[2]);
  e.thread.process_koid = pid;
  GEN(t, fxt_encode_event, &e);
}

/* kernel:meta instants overrun / lost (split past UINT32_MAX), in a thread's stream or (ref
 * 0, thread koid 0) the process's. */
static void loss(struct tail *t, const struct rec_slot *s, uint32_t pid, uint16_t name,
                 uint64_t records, uint64_t bytes, uint64_t ts)
{
  while (records || bytes) {
    uint32_t r = records > UINT32_MAX ? UINT32_MAX : (uint32_t)records;
    uint32_t b = bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
    struct fxt_event e = {0};
    fxt_meta_loss(&e, name, r, b, ts);
    e.thread.index = s ? (uint8_t)s->ref : 0;
    e.thread.process_koid = pid;
    e.thread.thread_koid = s ? s->tid : 0;
    GEN(t, fxt_encode_event, &e);
    records -= r;
    bytes -= b;
  }
}

/* A pending drop run, as the writer would have reported it (fxtrace/writer.h). */
static void drop_stats(struct tail *t, const struct rec_slot *s, uint32_t pid)
{
  uint64_t records = s->drop_records, bytes = s->drop_bytes;
  while (records || bytes) {
    uint32_t r = records > UINT32_MAX ? UINT32_MAX : (uint32_t)records;
    uint32_t b = bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
    struct fxt_event e = {0};
    fxt_meta_drop_stats(&e, r, b, s->drop_first, s->drop_last);
    e.thread.process_koid = pid;
    e.thread.thread_koid = s->tid;
    uint64_t w[16];
    int64_t n = fxt_encode_event(w, sizeof(w), &e);
    if (n > 0)
      put(t, w, (size_t)n, UINT32_MAX, false, r, NULL);
    records -= r;
    bytes -= b;
  }
}

/* ---- the committed part of the output ------------------------------------------------------ */

struct prefix {
  uint64_t len;             /* bytes kept */
  uint8_t described[65536 / 8];
  struct fxt_str_slot *table;
  struct fxt_decoder d;     /* its string table, after the kept bytes */
  bool decoded;
};

static void read_prefix(struct rec_model *m, struct prefix *p)
{
  const struct fxt_rec_file *o = &m->in->output;
  const struct rec_hdr *h = &m->h;
  struct fxt_rec_stats *st = m->stats;
  p->len = 0;
  if (o->size == 0) {
    if (m->in->output_gone && m->committed > 0)
      rec_say(m, 0, "%s: the %llu bytes the consumer wrote are no longer at this path "
                    "(the file was removed or replaced): only what followed them is here",
              h->output, (unsigned long long)m->committed);
    else if (h->output[0] && strcmp(h->output, "-") != 0 && m->committed > 0)
      rec_say(m, 1, "%s: %s: the %llu bytes the consumer had written are lost",
              o->name ? o->name : h->output,
              m->in->output_errno ? strerror(m->in->output_errno) : "missing or empty",
              (unsigned long long)m->committed);
    return;
  }
  uint64_t want = m->committed;
  if (o->size < want) {
    rec_say(m, 1, "%s: offset %llu: the file ends before the %llu bytes the session "
                  "committed (truncated): what was in the rest is lost",
            o->name, (unsigned long long)o->size, (unsigned long long)want);
    want = o->size;
  } else if (o->size > want && !(h->intent_state == FXT_SH_WRITING && !m->intent_written)) {
    rec_say(m, 0, "%s: offset %llu: %llu bytes past what the session committed are dropped",
            o->name, (unsigned long long)want, (unsigned long long)(o->size - want));
  }
  st->cut_bytes = o->size - want;
  fxt_decoder_init(&p->d, o->data, (size_t)want, p->table);
  struct fxt_record r;
  char err[256];
  int rc;
  uint64_t good = 0;
  bool first_provider = true;
  while ((rc = fxt_decoder_next(&p->d, &r, err, sizeof(err))) == 1) {
    if (r.kind == FXT_KIND_PROVIDER_INFO) {
      /* Another provider of the same process: a session after exec appends its records to
       * the trace its previous image left in the same file (harvest.h). */
      if (r.u.provider_info.id != h->pid) {
        rc = -1;
        snprintf(err, sizeof(err), "offset %llu: provider %u is not the session's process %u",
                 (unsigned long long)r.offset, r.u.provider_info.id, h->pid);
        break;
      }
      /* Tracepoint ids are an image's own: only the last section's descriptions count. */
      memset(p->described, 0, sizeof(p->described));
      first_provider = false;
    }
    if (r.kind == FXT_KIND_BLOB && r.u.blob.size >= 4 && r.u.blob.name.len == 18 &&
        memcmp(r.u.blob.name.data, "fxtrace:tracepoint", 18) == 0) {
      uint32_t id = rec_le32(r.u.blob.data);
      if (id < 65536)
        p->described[id / 8] |= (uint8_t)(1u << (id % 8));
    }
    good = r.offset + r.size;
  }
  if (rc < 0) {
    rec_say(m, 1, "%s: %s: the file is cut there (the %llu bytes after it are lost)", o->name,
            err, (unsigned long long)(want - good));
    st->cut_bytes += want - good;
  }
  if (first_provider)
    good = 0; /* no provider record: nothing of it can be kept */
  p->len = good;
  p->decoded = good > 0;
  st->prefix_bytes = good;
}

/* ---- the tail ------------------------------------------------------------------------------- */

/* Slot i's section: its thread, its losses, its records. */
static void slot_section(struct rec_model *m, struct tail *t, struct rec_slot *s)
{
  const struct rec_hdr *h = &m->h;
  size_t total = s->ring.n + s->extra.n;
  if (total == 0 && !s->overrun_records && !s->overrun_bytes && !s->lost_records &&
      !s->drop_records && !s->uncommitted)
    return;
  if (s->ref) {
    struct fxt_thread th = {(uint8_t)s->ref, h->pid, s->tid};
    GEN(t, fxt_encode_thread, &th);
  }
  struct fxt_kernel_object k = {0};
  k.koid = s->tid;
  k.obj_type = FXT_KOBJ_THREAD;
  k.name = inline_str(s->comm);
  k.num_args = 1;
  k.args[0].type = FXT_ARG_KOID;
  k.args[0].name = sref(FXT_STR_PROCESS);
  k.args[0].value.koid = h->pid;
  GEN(t, fxt_encode_kernel_object, &k);
  uint64_t ts = s->ring.n ? s->ring.v[0].ts : s->extra.n ? s->extra.v[0].ts
                : h->latest_ok ? h->latest[0] : h->sync[0];
  if (s->overrun_records || s->overrun_bytes)
    loss(t, s, h->pid, FXT_STR_OVERRUN, s->overrun_records, s->overrun_bytes, ts);
  if (s->lost_records)
    loss(t, s, h->pid, FXT_STR_LOST, s->lost_records, 0, ts);
  /* The ring's records in order, each signal-context record before the first ring record
   * that is later than it (as the consumer merges them). A pending drop run began after the
   * ring's last record (the ring had no room then): it goes after them, before the
   * signal-context records later than its last drop (a duration-complete record's place in
   * its thread's order is its end: docs/fxt-conventions.md), so the thread's times only
   * increase. */
  uint64_t drop_end = s->drop_last >= s->drop_first ? s->drop_last : s->drop_first;
  size_t a = 0, b = 0;
  bool drops_out = false;
  while (a < s->ring.n || b < s->extra.n) {
    const struct rec_record *r;
    if (b == s->extra.n || (a < s->ring.n && s->ring.v[a].ts <= s->extra.v[b].ts)) {
      r = &s->ring.v[a++];
      if (a == 1 && s->start_cpu != FXT_CPU_NOTE_NONE &&
          fxt_cpu_of_record(r->p, r->len) == FXT_CPU_NOTE_NONE) {
        /* The CPU its first records ran on: the `cpu` record that said it was passed or
         * delivered (cpunote.h). */
        struct fxt_event e = {0};
        fxt_meta_cpu(&e, s->start_cpu, r->ts);
        e.thread.index = (uint8_t)s->ref;
        e.thread.process_koid = h->pid;
        e.thread.thread_koid = s->tid;
        GEN(t, fxt_encode_event, &e);
      }
    } else {
      if (a == s->ring.n && !drops_out && s->extra.v[b].ts >= drop_end) {
        drop_stats(t, s, h->pid);
        drops_out = true;
      }
      r = &s->extra.v[b++];
    }
    uint64_t hd = rec_le64(r->p);
    bool meta = rec_is_meta(hd);
    uint64_t drops = 0;
    if (meta && (hd >> 48) == FXT_STR_DROP_STATS && r->len >= 40)
      drops = rec_le64(r->p + 32) >> 32;
    put(t, r->p, r->len, s->index, !meta, drops, r->in_file);
  }
  if (!drops_out)
    drop_stats(t, s, h->pid);
}

static void build_tail(struct rec_model *m, const struct prefix *p, struct tail *t)
{
  const struct rec_hdr *h = &m->h;
  if (!p->decoded) {
    GEN(t, encode_magic, NULL);
    struct fxt_provider_info pi = {h->pid, (uint8_t)strlen(PROVIDER_NAME), PROVIDER_NAME};
    GEN(t, fxt_encode_provider_info, &pi);
    struct fxt_init init = {h->ticks_per_second};
    GEN(t, fxt_encode_init, &init);
  }
  /* Every string: the session's table, the fixed ones, and any the output had that the table
   * lacks (rebinding an index to the same text changes nothing for a reader). */
  for (uint32_t i = 1; i < FXT_SH_STR_ENTRIES; i++) {
    const char *text = (const char *)m->str[i];
    size_t len = m->str_len[i];
    if (!text && (text = fxt_meta_string(i)) != NULL)
      len = strlen(text);
    if (!text && p->decoded && fxt_decoder_string(&p->d, i, &text, &len) != 0)
      text = NULL;
    if (!text || len == 0)
      continue;
    struct fxt_string rec = {(uint16_t)i, (uint16_t)len, text};
    GEN(t, fxt_encode_string, &rec);
  }
  if (!p->decoded) {
    struct fxt_kernel_object k = {0};
    k.koid = h->pid;
    k.obj_type = FXT_KOBJ_PROCESS;
    k.name = inline_str(h->process_name);
    GEN(t, fxt_encode_kernel_object, &k);
    clock_sync(t, h->pid, h->sync);
  }
  for (uint32_t id = 1; id < 65536; id++) {
    if (!m->tp[id] || (p->described[id / 8] & (1u << (id % 8))))
      continue;
    struct fxt_blob rec = {sref(FXT_STR_TRACEPOINT), FXT_BLOB_DATA, (uint16_t)m->tp_len[id],
                           m->tp[id]};
    GEN(t, fxt_encode_blob, &rec);
  }
  for (uint32_t i = 0; i < m->nslots; i++)
    if (m->slots[i].usable)
      slot_section(m, t, &m->slots[i]);
  if (m->no_slot_lost)
    loss(t, NULL, h->pid, FXT_STR_LOST, m->no_slot_lost, 0,
         h->latest_ok ? h->latest[0] : h->sync[0]);
  clock_sync(t, h->pid, h->latest_ok ? h->latest : h->sync);
}

/* Decodes the tail strictly (its records need nothing from the output's part): a record from
 * a buffer that fails is dropped and the tail decoded again. Returns false when a record
 * made here failed (a bug: nothing is written). */
static bool validate(struct rec_model *m, struct tail *t, struct fxt_str_slot *table,
                     bool with_magic, uint32_t *bad_per_slot)
{
  static struct fxt_record r;
  for (;;) {
    struct fxt_decoder d;
    fxt_decoder_init(&d, t->buf, t->len, table);
    if (!with_magic)
      fxt_decoder_set_options(&d, FXT_DECODE_NO_MAGIC);
    char err[256];
    int rc;
    size_t at = 0, k = 0; /* the first record that did not decode, and its mark */
    bool writers = false;
    while ((rc = fxt_decoder_next(&d, &r, err, sizeof(err))) == 1) {
      if (r.kind > FXT_KIND_INIT)
        continue;
      /* Magic, provider and init records are a file writer's: a producer never puts one in
       * its buffer, and one there (a damaged record) would change what the records after it
       * mean to a reader - a provider section switches to other string and thread tables. */
      at = (size_t)r.offset;
      while (k < t->nmarks && t->marks[k].off + t->marks[k].len <= at)
        k++;
      if (k < t->nmarks && t->marks[k].slot != UINT32_MAX) {
        snprintf(err, sizeof(err), "offset %zu: a %s record, which only a file's writer makes",
                 at, r.kind == FXT_KIND_MAGIC ? "magic number" : r.kind == FXT_KIND_INIT
                     ? "initialization" : "provider");
        writers = true;
        break;
      }
    }
    if (rc == 0 && !writers)
      return true;
    if (!writers) {
      struct fxt_decoder_stats ds;
      fxt_decoder_stats(&d, &ds);
      at = (size_t)ds.bytes;
    }
    while (k < t->nmarks && t->marks[k].off + t->marks[k].len <= at)
      k++;
    if (k == t->nmarks || t->marks[k].slot == UINT32_MAX) {
      rec_say(m, 1, "internal: a record recovery made does not decode (%s): nothing written",
              err);
      return false;
    }
    struct mark bad = t->marks[k];
    const struct rec_slot *s = &m->slots[bad.slot];
    bool all = ++bad_per_slot[bad.slot] > MAX_BAD_PER_SLOT;
    if (bad_per_slot[bad.slot] <= 3 || all) {
      /* Where it begins in the buffers (or session) file. */
      char where[4200] = "";
      const struct fxt_rec_file *files[] = {&m->in->pool, &m->in->session};
      for (size_t f = 0; f < 2 && !where[0]; f++)
        if (files[f]->data && bad.from >= files[f]->data &&
            bad.from < files[f]->data + files[f]->size)
          snprintf(where, sizeof(where), "%s: offset %llu: ", files[f]->name,
                   (unsigned long long)(bad.from - files[f]->data));
      rec_say(m, 1, "%sslot %u (thread %u): a record from its buffer does not decode (%s)%s",
              where, bad.slot, s->tid, err,
              all ? ": too many, the rest of this buffer is dropped" : ": dropped");
    }
    /* Drop it (or, past the limit, every record of that slot from here on). */
    size_t w = k, kept = t->marks[k].off;
    for (size_t j = k; j < t->nmarks; j++) {
      struct mark mk = t->marks[j];
      bool drop = j == k || (all && mk.slot == bad.slot);
      if (drop) {
        m->stats->bad_records++;
        m->stats->records--;
        m->stats->events -= mk.event;
        m->stats->dropped -= mk.losses;
        continue;
      }
      memmove(t->buf + kept, t->buf + mk.off, mk.len);
      mk.off = kept;
      kept += mk.len;
      t->marks[w++] = mk;
    }
    t->nmarks = w;
    t->len = kept;
  }
}

/* ---- run ------------------------------------------------------------------------------------ */

static void count(struct rec_model *m, const struct tail *t)
{
  struct fxt_rec_stats *st = m->stats;
  for (size_t k = 0; k < t->nmarks; k++) {
    const struct mark *mk = &t->marks[k];
    if (mk->slot == UINT32_MAX)
      continue;
    st->records++;
    st->events += mk->event;
    st->dropped += mk->losses;
  }
  for (uint32_t i = 0; i < m->nslots; i++) {
    const struct rec_slot *s = &m->slots[i];
    if (!s->usable)
      continue;
    st->overrun += s->overrun_records;
    st->lost += s->lost_records;
    st->dropped += s->drop_records;
    st->threads += s->ring.n + s->extra.n > 0;
    st->uncommitted += s->uncommitted;
  }
  st->lost += m->no_slot_lost;
}

static void describe_slots(struct rec_model *m, const uint32_t *bad)
{
  for (uint32_t i = 0; i < m->nslots; i++) {
    const struct rec_slot *s = &m->slots[i];
    if (!s->usable)
      continue;
    rec_say(m, 0, "thread %u (%s), slot %u: %zu records from its buffer, %zu from signal "
                  "context; overrun %llu, lost %llu, pending drops %llu%s",
            s->tid, s->comm, i, s->ring.n, s->extra.n, (unsigned long long)s->overrun_records,
            (unsigned long long)s->lost_records, (unsigned long long)s->drop_records,
            bad[i] ? " (some records did not decode: dropped)" : "");
    if (s->uncommitted && s->uncommitted_bytes)
      rec_say(m, 0, "thread %u was inside an emission when it died: its uncommitted %u-byte "
                    "record at the head of its buffer is skipped",
              s->tid, s->uncommitted_bytes);
    else if (s->uncommitted)
      rec_say(m, 0, "thread %u was inside an emission when it died: nothing of it was "
                    "committed, nothing is skipped but the emission itself",
              s->tid);
  }
}

int fxt_recover_run(const struct fxt_rec_input *in, fxt_rec_write_fn out, void *out_ctx,
                    fxt_rec_report_fn report, void *report_ctx, struct fxt_rec_stats *stats)
{
  struct fxt_rec_stats local;
  if (!stats)
    stats = &local;
  memset(stats, 0, sizeof(*stats));
  struct rec_model m;
  memset(&m, 0, sizeof(m));
  m.in = in;
  m.report = report;
  m.report_ctx = report_ctx;
  m.stats = stats;
  struct prefix *p = calloc(1, sizeof(*p));
  struct fxt_str_slot *table = malloc(FXT_STRING_TABLE_SIZE * sizeof(*table));
  struct tail t = {0};
  uint32_t *bad = NULL;
  int rc = p && table ? rec_model_build(&m) : FXT_ENOMEM;
  if (rc == 0 && in->live)
    rec_say(&m, 0, "process %u is running: its files were read as they were at one moment "
                   "(records written meanwhile may be missing or cut)",
            m.h.pid);
  if (rc == 0) {
    p->table = malloc(FXT_STRING_TABLE_SIZE * sizeof(*p->table));
    bad = calloc(m.nslots + 1, sizeof(*bad));
    if (!p->table || !bad)
      rc = FXT_ENOMEM;
  }
  if (rc == 0) {
    read_prefix(&m, p);
    build_tail(&m, p, &t);
    count(&m, &t);
    if (t.oom)
      rc = FXT_ENOMEM;
  }
  if (rc == 0 && !validate(&m, &t, table, !p->decoded, bad))
    rc = FXT_EBADMSG;
  if (rc == 0) {
    describe_slots(&m, bad);
    if (m.no_slot_lost)
      rec_say(&m, 0, "%llu events of threads that got no buffer",
              (unsigned long long)m.no_slot_lost);
    if (out && p->len)
      rc = out(out_ctx, in->output.data, (size_t)p->len);
    if (out && rc == 0)
      rc = out(out_ctx, t.buf, t.len);
    if (rc == 0)
      rc = stats->damage ? 1 : 0;
  }
  free(t.buf);
  free(t.marks);
  free(bad);
  if (p)
    free(p->table);
  free(p);
  free(table);
  rec_model_free(&m);
  return rc;
}

/* ---- the last write to a shared stdout ---------------------------------------------------- */

static bool pread_all(int fd, void *p, size_t n, uint64_t off)
{
  unsigned char *b = p;
  while (n) {
    ssize_t k = pread(fd, b, n, (off_t)off);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    b += k;
    n -= (size_t)k;
    off += (uint64_t)k;
  }
  return true;
}

void fxt_recover_check_stdout(struct fxt_rec_input *in, int fd)
{
  const unsigned char *d = in->session.data;
  in->stdout_write = FXT_REC_LANDED_UNKNOWN;
  in->stdout_bytes = (struct fxt_rec_file){"stdout", NULL, 0};
  if (!d || in->session.size < FXT_SH_HEADER_BYTES || rec_le64(d) != FXT_SH_MAGIC ||
      rec_le32(d + FXT_SH_OFF_VERSION) != FXT_SH_VERSION ||
      memcmp(d + FXT_SH_OFF_OUTPUT, "-", 2) != 0 ||
      rec_le32(d + FXT_SH_OFF_INTENT_STATE) != FXT_SH_WRITING)
    return;
  uint64_t dev = rec_le64(d + FXT_SH_OFF_OUT_DEV), ino = rec_le64(d + FXT_SH_OFF_OUT_INO);
  uint64_t pos = rec_le64(d + FXT_SH_OFF_INTENT_OUT_POS), len = rec_le64(d + FXT_SH_OFF_INTENT_LEN);
  uint64_t first = rec_le64(d + FXT_SH_OFF_INTENT_FIRST);
  uint64_t last = rec_le64(d + FXT_SH_OFF_INTENT_LAST);
  if (ino == 0 || pos == UINT64_MAX || len % 8 || len > (1ull << 30) || pos > UINT64_MAX - len)
    return;
  /* The file read through its own open (stdout is often write-only), when it is the one. */
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  int rfd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (rfd < 0)
    return;
  if (fstat(rfd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_dev != dev ||
      (uint64_t)st.st_ino != ino) {
    close(rfd);
    return;
  }
  uint64_t w = 0;
  unsigned char *bytes = NULL;
  if (len == 0) {
    in->stdout_write = FXT_REC_LANDED_YES; /* nothing to write: nothing missing */
  } else if (!pread_all(rfd, &w, 8, pos) || rec_le64((const unsigned char *)&w) != first) {
    in->stdout_write = FXT_REC_LANDED_NO;
  } else if (!pread_all(rfd, &w, 8, pos + len - 8) ||
             rec_le64((const unsigned char *)&w) != last) {
    in->stdout_write = FXT_REC_LANDED_TORN;
  } else {
    in->stdout_write = FXT_REC_LANDED_YES;
    bytes = malloc((size_t)len);
    if (bytes && !pread_all(rfd, bytes, (size_t)len, pos)) {
      free(bytes);
      bytes = NULL; /* (then overwrite mode's credit count says it cannot count) */
    }
  }
  close(rfd);
  if (bytes)
    in->stdout_bytes = (struct fxt_rec_file){"stdout", bytes, len};
}

void fxt_recover_stdout_free(struct fxt_rec_input *in)
{
  free((void *)in->stdout_bytes.data);
  in->stdout_bytes = (struct fxt_rec_file){"stdout", NULL, 0};
}

/* ---- the buffers directory's clean-up --------------------------------------------------- */

static const unsigned char *map_file(const char *path, uint64_t *size)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat sb;
  *size = 0;
  if (fd < 0)
    return NULL;
  if (fstat(fd, &sb) != 0 || sb.st_size <= 0) {
    close(fd);
    return NULL;
  }
  void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED)
    return NULL;
  *size = (uint64_t)sb.st_size;
  return p;
}

bool fxt_recover_alive(uint32_t pid, uint64_t proc_start)
{
  return fxt_proc_running(pid, proc_start);
}

enum fxt_rec_dead fxt_recover_dead_summary(const char *dir)
{
  char path[4400];
  uint64_t ssize = 0, psize = 0, osize = 0;
  snprintf(path, sizeof(path), "%s/%s", dir, FXT_SH_FILE);
  const unsigned char *sdata = map_file(path, &ssize);
  if (!sdata)
    return FXT_REC_KEEP;
  enum fxt_rec_dead state = FXT_REC_KEEP;
  if (ssize >= FXT_SH_HEADER_BYTES && rec_le64(sdata) == FXT_SH_MAGIC) {
    bool alive = fxt_recover_alive(rec_le32(sdata + FXT_SH_OFF_PID),
                                   rec_le64(sdata + FXT_SH_OFF_PROC_START));
    if (!alive && rec_le32(sdata + FXT_SH_OFF_STATE) == FXT_SH_STOPPED) {
      state = FXT_REC_STALE;
    } else if (!alive) {
      state = FXT_REC_CRASHED; /* unless the summary below finds nothing missing */
      /* Anything the output lacks? Count it, without building the trace. */
      struct fxt_rec_input in = {.session = {path, sdata, ssize},
                                 .pool = {"buffers", NULL, 0},
                                 .output = {"", NULL, 0}};
      char ppath[4400];
      snprintf(ppath, sizeof(ppath), "%s/%s", dir, FXT_SH_POOL_FILE);
      in.pool.data = map_file(ppath, &psize);
      in.pool.size = psize;
      char opath[4097];
      memcpy(opath, sdata + FXT_SH_OFF_OUTPUT, 4096);
      opath[4096] = 0;
      struct stat ost;
      if (opath[0] == '/' && stat(opath, &ost) == 0)
        osize = (uint64_t)ost.st_size;
      in.output.size = osize; /* sizes only: the summary reads no output byte */
      in.output.data = (const unsigned char *)"";
      struct fxt_rec_stats st;
      memset(&st, 0, sizeof(st));
      struct rec_model m;
      memset(&m, 0, sizeof(m));
      m.in = &in;
      m.stats = &st;
      m.summary = true;
      if (psize && rec_model_build(&m) == 0) {
        bool pending = m.no_slot_lost != 0 || st.damage != 0 || st.records != 0 ||
                       osize != m.committed;
        for (uint32_t i = 0; i < m.nslots && !pending; i++) {
          const struct rec_slot *s = &m.slots[i];
          pending = s->overrun_records || s->overrun_bytes || s->lost_records ||
                    s->drop_records || s->uncommitted;
        }
        if (!pending)
          state = FXT_REC_STALE;
      }
      rec_model_free(&m);
      if (in.pool.data)
        munmap((void *)in.pool.data, psize);
    }
  }
  munmap((void *)sdata, ssize);
  return state;
}
