/* consumer.c - the session's consumer thread: the one reader of every ring, and the FXT file
 * writer (docs/fxt-conventions.md gives the file order).
 *
 * Each pass takes every non-free slot in turn: it announces a new owner thread (thread and
 * kernel-object records), reads the ring into a staging buffer, writes whatever strings and
 * tracepoint descriptions appeared meanwhile (after the read, so every string a staged record
 * refers to was interned before the read and is covered), writes loss records for the gap in
 * front of the staged records, then the staged records themselves. A slot whose thread exited
 * is drained to the end, its pending drop statistics written (the thread is gone, so the
 * consumer may act as its producer), and freed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fxtrace/fxt.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "intern.h"
#include "live.h"
#include "outfile.h"
#include "registry.h"
#include "session_int.h"

#define STAGE_BYTES (1u << 20)
#define OUT_BYTES (1u << 20)
/* Between passes when no producer wakes the consumer (a producer does at half a buffer):
 * 100 ms, so a burst that fits in the buffers is written after it, not while it takes every
 * core (and an idle process wakes ten times a second); 10 ms while a trace_pipe reader waits
 * (`trace` flushes before it reads). */
#define POLL_NS 100000000
#define POLL_LIVE_NS 10000000
#define PROVIDER_NAME "fxtrace/1"

struct out {
  int fd;
  unsigned char *buf;
  size_t len;
  uint64_t written;  /* bytes handed to the file so far (incl. buffered) */
  uint64_t limit;    /* event bytes allowed (max_file_kb), 0 = none */
  int error;         /* first write error (errno), reported at stop */
};

/* Records popped from the ingress ring, waiting to be merged into their thread's stream:
 * entries of (u32 slot, u32 bytes, record). */
struct held {
  unsigned char *buf;
  size_t len, cap;
};

static struct {
  struct out out;
  unsigned char *stage;
  unsigned char *merged; /* stage + held records in time order */
  struct held held;
  uint32_t strings_end; /* next string index to write */
  uint32_t registry_gen;
  uint8_t described[65536 / 8]; /* tracepoint ids with a description in the file */
  uint64_t last_comm_check;
  uint64_t capped_records; /* records not written because of max_file_kb */
  _Atomic uint64_t nested_records; /* ingress records merged into their threads' streams */
  _Atomic uint64_t no_buffer_lost;
} C;

int fxt_session_counters(struct fxt_session_counters *c)
{
  if (!c || c->struct_size < sizeof(*c))
    return FXT_EINVAL;
  c->nested_records = atomic_load_explicit(&C.nested_records, memory_order_relaxed);
  c->no_buffer_lost = atomic_load_explicit(&C.no_buffer_lost, memory_order_relaxed);
  return 0;
}

/* ---- output ------------------------------------------------------------------------------ */

static void out_flush(struct out *o)
{
  size_t off = 0;
  while (off < o->len && o->fd >= 0) {
    ssize_t n = write(o->fd, o->buf + off, o->len - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (!o->error)
        o->error = n < 0 ? errno : EIO;
      break;
    }
    off += (size_t)n;
  }
  o->len = 0;
}

static void out_write(struct out *o, const void *p, size_t n)
{
  const unsigned char *b = p;
  o->written += n;
  if (o->fd < 0)
    return;
  while (n) {
    size_t room = OUT_BYTES - o->len, k = n < room ? n : room;
    memcpy(o->buf + o->len, b, k);
    o->len += k;
    b += k;
    n -= k;
    if (o->len == OUT_BYTES)
      out_flush(o);
  }
}

/* Writes a large chunk without copying it into the buffer: what is buffered, then the chunk,
 * in one writev. */
static void out_write_bulk(struct out *o, const void *p, size_t n)
{
  if (n < OUT_BYTES / 4 || o->fd < 0) {
    out_write(o, p, n);
    return;
  }
  o->written += n;
  struct iovec iov[2] = {{o->buf, o->len}, {(void *)p, n}};
  int first = o->len ? 0 : 1;
  while (first < 2) {
    ssize_t k = writev(o->fd, iov + first, 2 - first);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      if (!o->error)
        o->error = k < 0 ? errno : EIO;
      break;
    }
    for (; first < 2 && (size_t)k >= iov[first].iov_len; first++)
      k -= (ssize_t)iov[first].iov_len;
    if (first < 2) {
      iov[first].iov_base = (char *)iov[first].iov_base + k;
      iov[first].iov_len -= (size_t)k;
    }
  }
  o->len = 0;
}

/* Encodes one record with an fxt_encode_* call into a word buffer and writes it. */
#define EMIT(fn, rec)                                                                        \
  do {                                                                                       \
    uint64_t buf_[512];                                                                      \
    int64_t n_ = fn(buf_, sizeof(buf_), rec);                                                \
    if (n_ > 0)                                                                              \
      out_write(&C.out, buf_, (size_t)n_);                                                   \
  } while (0)

static int64_t fxt_encode_magic_(void *out, size_t size, const void *unused)
{
  (void)unused;
  return fxt_encode_magic(out, size);
}

static struct fxt_str_ref ref_index(uint16_t index)
{
  struct fxt_str_ref r = {NULL, 0, index};
  return r;
}

static struct fxt_str_ref ref_inline(const char *s)
{
  struct fxt_str_ref r = {s, (uint16_t)strlen(s), FXT_STR_REF_INLINE};
  if (r.len == 0)
    r.index = 0;
  return r;
}

/* ---- metadata ---------------------------------------------------------------------------- */

static void write_strings(void)
{
  uint32_t end = fxt_intern_end();
  for (; C.strings_end < end; C.strings_end++) {
    const char *text;
    uint32_t len;
    if (C.strings_end <= FXT_META_STRING_LAST &&
        !fxt_intern_lookup(C.strings_end, &text, &len))
      continue; /* an unused reserved index */
    if (!fxt_intern_lookup(C.strings_end, &text, &len))
      break; /* still being interned: next pass */
    if (len == 0)
      continue;
    struct fxt_string rec = {(uint16_t)C.strings_end, (uint16_t)len, text};
    EMIT(fxt_encode_string, &rec);
  }
}

/* Blob "fxtrace:tracepoint" describing tp (docs/fxt-conventions.md). */
static int describe(void *ctx, struct fxt_tracepoint *tp)
{
  (void)ctx;
  if (tp->id == 0 || (C.described[tp->id / 8] & (1u << (tp->id % 8))))
    return 0;
  unsigned char p[8192];
  char fmt[2048];
  const char *f = fxt_tracepoint_print_fmt(tp, fmt, sizeof(fmt));
  size_t flen = strlen(f);
  if (flen > 4096)
    flen = 4096;
  uint16_t nf = tp->kind == FXT_TP_TYPED ? tp->nfields : 0;
  uint32_t id = tp->id;
  uint16_t sys = (uint16_t)(tp->header >> 32), name = (uint16_t)(tp->header >> 48);
  uint16_t kind = tp->kind, fl = (uint16_t)flen, zero = 0;
  size_t n = 0;
  memcpy(p + n, &id, 4), n += 4;
  memcpy(p + n, &sys, 2), n += 2;
  memcpy(p + n, &name, 2), n += 2;
  memcpy(p + n, &kind, 2), n += 2;
  memcpy(p + n, &nf, 2), n += 2;
  memcpy(p + n, &fl, 2), n += 2;
  memcpy(p + n, &zero, 2), n += 2;
  memcpy(p + n, f, flen), n += flen;
  for (uint32_t i = 0; i < nf; i++) {
    uint16_t ref = (uint16_t)(tp->arg_header[i] >> 16);
    uint8_t type = (uint8_t)tp->fields[i].type, rsv = 0;
    uint32_t bound = tp->fields[i].bound;
    memcpy(p + n, &ref, 2), n += 2;
    p[n++] = type;
    p[n++] = rsv;
    memcpy(p + n, &bound, 4), n += 4;
  }
  struct fxt_blob rec = {ref_index(FXT_STR_TRACEPOINT), FXT_BLOB_DATA, (uint16_t)n, p};
  EMIT(fxt_encode_blob, &rec);
  C.described[tp->id / 8] |= (uint8_t)(1u << (tp->id % 8));
  return 0;
}

static void write_metadata(void)
{
  write_strings();
  uint32_t gen = fxt_registry_generation();
  if (gen != C.registry_gen) {
    C.registry_gen = gen;
    fxt_tracepoint_foreach(describe, NULL);
    write_strings(); /* registration may have interned more */
  }
}

static void write_kobj_thread(struct session *s, const struct slot_info *info)
{
  struct fxt_kernel_object k = {0};
  k.koid = (uint64_t)info->tid;
  k.obj_type = FXT_KOBJ_THREAD;
  k.name = ref_inline(info->comm);
  k.num_args = 1;
  k.args[0].type = FXT_ARG_KOID;
  k.args[0].name = ref_index(FXT_STR_PROCESS);
  k.args[0].value.koid = (uint64_t)s->pid;
  EMIT(fxt_encode_kernel_object, &k);
}

static void announce(struct session *s, uint32_t i)
{
  struct slot_info *info = &s->info[i];
  struct fxt_tslot *t = session_slot(s, i);
  if (info->announced_gen == info->owner_gen)
    return;
  write_metadata();
  if (t->thread_bits) {
    struct fxt_thread th = {(uint8_t)(t->thread_bits >> 24), (uint64_t)s->pid,
                            (uint64_t)info->tid};
    EMIT(fxt_encode_thread, &th);
  }
  write_kobj_thread(s, info);
  info->announced_gen = info->owner_gen;
}

/* Thread renames: the consumer looks at each live thread's comm about once a second. */
static void refresh_names(struct session *s)
{
  uint64_t now = fxt_ticks_slow();
  if (now - C.last_comm_check < 1000000000u)
    return;
  C.last_comm_check = now;
  for (uint32_t i = 0; i < s->nslots; i++) {
    struct slot_info *info = &s->info[i];
    if (atomic_load_explicit(&info->state, memory_order_acquire) != SLOT_LIVE ||
        info->announced_gen != info->owner_gen)
      continue;
    char path[64], comm[17] = {0};
    snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)info->tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      continue;
    ssize_t n = read(fd, comm, 16);
    close(fd);
    if (n <= 0)
      continue;
    comm[n] = 0;
    char *nl = strchr(comm, '\n');
    if (nl)
      *nl = 0;
    if (strncmp(comm, info->comm, sizeof(info->comm)) != 0) {
      memcpy(info->comm, comm, sizeof(info->comm) - 1);
      info->comm[sizeof(info->comm) - 1] = 0;
      write_kobj_thread(s, info);
    }
  }
}

/* A kernel:meta instant (overrun, lost) in a slot's thread stream. */
static void write_loss(struct session *s, uint32_t i, uint16_t name, uint64_t records,
                       uint64_t bytes, uint64_t ts)
{
  struct fxt_tslot *t = session_slot(s, i);
  while (records || bytes) {
    uint32_t r = records > UINT32_MAX ? UINT32_MAX : (uint32_t)records;
    uint32_t b = bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
    struct fxt_event e = {0};
    e.type = FXT_EVENT_INSTANT;
    e.timestamp = ts;
    e.thread.index = (uint8_t)(t->thread_bits >> 24);
    e.thread.process_koid = (uint64_t)s->pid;
    e.thread.thread_koid = (uint64_t)s->info[i].tid;
    e.category = ref_index(FXT_STR_KERNEL_META);
    e.name = ref_index(name);
    e.num_args = 2;
    e.args[0].type = FXT_ARG_UINT32;
    e.args[0].name = ref_index(FXT_STR_NUM_RECORDS);
    e.args[0].value.u32 = r;
    e.args[1].type = FXT_ARG_UINT32;
    e.args[1].name = ref_index(FXT_STR_NUM_BYTES);
    e.args[1].value.u32 = b;
    EMIT(fxt_encode_event, &e);
    s->info[i].loss_total += r;
    records -= r;
    bytes -= b;
  }
}

/* A kernel:meta counter `dropped` when a thread's losses grew: their running total as one
 * uint64 argument named "tid <tid>", so that Perfetto (which keys counter tracks by process,
 * event name and argument name) draws one loss track per thread. */
static void write_dropped(struct session *s, uint32_t i, uint64_t ts)
{
  struct slot_info *info = &s->info[i];
  if (info->loss_total == info->loss_shown)
    return;
  info->loss_shown = info->loss_total;
  struct fxt_tslot *t = session_slot(s, i);
  char name[24];
  int n = snprintf(name, sizeof(name), "tid %d", (int)info->tid);
  struct fxt_event e = {0};
  e.type = FXT_EVENT_COUNTER;
  e.timestamp = ts;
  e.thread.index = (uint8_t)(t->thread_bits >> 24);
  e.thread.process_koid = (uint64_t)s->pid;
  e.thread.thread_koid = (uint64_t)info->tid;
  e.category = ref_index(FXT_STR_KERNEL_META);
  e.name = ref_index(FXT_STR_DROPPED);
  e.num_args = 1;
  e.args[0].type = FXT_ARG_UINT64;
  e.args[0].name = fxt_str_inline(name, (uint16_t)n);
  e.args[0].value.u64 = info->loss_total;
  e.trailer = (uint64_t)info->tid; /* counter id */
  EMIT(fxt_encode_event, &e);
}

/* Events of threads that could get no buffer (total_kb reached): a `lost` record of the
 * process (thread koid 0), since no thread stream holds them. */
static void write_process_loss(struct session *s, uint64_t records)
{
  while (records) {
    uint32_t r = records > UINT32_MAX ? UINT32_MAX : (uint32_t)records;
    struct fxt_event e = {0};
    e.type = FXT_EVENT_INSTANT;
    e.timestamp = fxt_ticks();
    e.thread.process_koid = (uint64_t)s->pid;
    e.category = ref_index(FXT_STR_KERNEL_META);
    e.name = ref_index(FXT_STR_LOST);
    e.num_args = 2;
    e.args[0].type = FXT_ARG_UINT32;
    e.args[0].name = ref_index(FXT_STR_NUM_RECORDS);
    e.args[0].value.u32 = r;
    e.args[1].type = FXT_ARG_UINT32;
    e.args[1].name = ref_index(FXT_STR_NUM_BYTES);
    e.args[1].value.u32 = 0;
    EMIT(fxt_encode_event, &e);
    records -= r;
  }
}

static void write_clock_sync(struct session *s, bool first)
{
  uint64_t ticks, mono, real;
  fxt_clock_sync(&ticks, &mono, &real);
  if (first)
    live_set_clock(ticks, mono, s->ticks_per_second);
  struct fxt_event e = {0};
  e.type = FXT_EVENT_INSTANT;
  e.timestamp = ticks;
  e.thread.process_koid = (uint64_t)s->pid;
  e.category = ref_index(FXT_STR_KERNEL_META);
  e.name = ref_index(FXT_STR_CLOCK_SYNC);
  e.num_args = 3;
  uint16_t names[3] = {FXT_STR_TICKS, FXT_STR_MONOTONIC_NS, FXT_STR_REALTIME_NS};
  uint64_t values[3] = {ticks, mono, real};
  for (int k = 0; k < 3; k++) {
    e.args[k].type = FXT_ARG_UINT64;
    e.args[k].name = ref_index(names[k]);
    e.args[k].value.u64 = values[k];
  }
  EMIT(fxt_encode_event, &e);
}

static void write_header(struct session *s)
{
  EMIT(fxt_encode_magic_, NULL);
  struct fxt_provider_info pi = {(uint32_t)s->pid, (uint8_t)strlen(PROVIDER_NAME), PROVIDER_NAME};
  EMIT(fxt_encode_provider_info, &pi);
  struct fxt_init init = {s->ticks_per_second};
  EMIT(fxt_encode_init, &init);
  C.strings_end = 1;
  write_strings();
  char comm[64] = {0};
  int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t n = read(fd, comm, sizeof(comm) - 1);
    close(fd);
    if (n > 0 && comm[n - 1] == '\n')
      comm[n - 1] = 0;
  }
  struct fxt_kernel_object k = {0};
  k.koid = (uint64_t)s->pid;
  k.obj_type = FXT_KOBJ_PROCESS;
  k.name = ref_inline(comm);
  EMIT(fxt_encode_kernel_object, &k);
  write_clock_sync(s, true);
  C.registry_gen = fxt_registry_generation() - 1; /* force the descriptions */
  write_metadata();
}

/* ---- draining ---------------------------------------------------------------------------- */

struct stage {
  unsigned char *buf;
  uint32_t len;
};

static int stage_copy(void *ctx, uint32_t off, const void *src, uint32_t len)
{
  struct stage *st = ctx;
  memcpy(st->buf + off, src, len);
  st->len = off + len;
  return 0;
}

/* Timestamp of the first record of a chunk when it is an event, else the clock now. */
static uint64_t first_ts(const unsigned char *p, uint32_t len)
{
  uint64_t h, ts;
  if (len >= 16) {
    memcpy(&h, p, 8);
    if ((h & 0xf) == FXT_RECORD_EVENT) {
      memcpy(&ts, p + 8, 8);
      return ts;
    }
  }
  return fxt_ticks();
}

/* ---- signal-context records (ingress) ------------------------------------------------ */

static void hold_fn(void *ctx, const void *rec, uint32_t len, uint32_t epoch, uint32_t tag)
{
  struct session *s = ctx;
  struct held *h = &C.held;
  if (epoch != s->gen || tag >= s->nslots)
    return; /* from an earlier session */
  if (h->len + 8 + len > h->cap) {
    size_t cap = h->cap ? h->cap * 2 : 65536;
    while (cap < h->len + 8 + len)
      cap *= 2;
    unsigned char *b = realloc(h->buf, cap);
    if (!b)
      return;
    h->buf = b;
    h->cap = cap;
  }
  memcpy(h->buf + h->len, &tag, 4);
  memcpy(h->buf + h->len + 4, &len, 4);
  memcpy(h->buf + h->len + 8, rec, len);
  h->len += 8 + len;
}

static void pop_ingress(struct session *s)
{
  while (fxt_ingress_pop_batch(&s->ingress, hold_fn, s, 128) > 0)
    ;
}

static uint64_t ts_of(const unsigned char *rec, uint32_t len)
{
  uint64_t h, ts = 0;
  memcpy(&h, rec, 8);
  if ((h & 0xf) == FXT_RECORD_EVENT && len >= 16)
    memcpy(&ts, rec + 8, 8);
  return ts;
}

/* Merges slot i's held records with ts <= limit (all of them when `all`) into the staged
 * chunk by time (stable: the chunk's records first on ties); returns the merged length and
 * removes what it took from the held buffer. */
static uint32_t merge_held(uint32_t i, const unsigned char *stage, uint32_t len, bool all,
                           unsigned char **out)
{
  struct held *h = &C.held;
  size_t need = 0;
  for (size_t at = 0; at < h->len;) {
    uint32_t tag, n;
    memcpy(&tag, h->buf + at, 4);
    memcpy(&n, h->buf + at + 4, 4);
    need += tag == i ? n : 0;
    at += 8 + n;
  }
  if (need == 0) {
    *out = (unsigned char *)stage;
    return len;
  }
  uint64_t limit = UINT64_MAX;
  if (!all && len >= 16) { /* the chunk's last record's time: later ones wait for more */
    uint32_t off = 0, last = 0;
    while (off + 8 <= len) {
      uint64_t hd;
      memcpy(&hd, stage + off, 8);
      uint32_t b = fxt_ring_record_bytes(hd);
      if (b == 0 || b > len - off)
        break;
      last = off;
      off += b;
    }
    limit = ts_of(stage + last, len - last);
  }
  unsigned char *m = C.merged;
  uint32_t mlen = 0, so = 0;
  size_t keep = 0; /* compacted held length */
  for (size_t at = 0; at < h->len;) {
    uint32_t tag, n;
    memcpy(&tag, h->buf + at, 4);
    memcpy(&n, h->buf + at + 4, 4);
    const unsigned char *rec = h->buf + at + 8;
    if (tag == i && ts_of(rec, n) <= limit && mlen + n + (len - so) <= STAGE_BYTES * 2) {
      uint64_t t = ts_of(rec, n);
      while (so + 8 <= len) { /* chunk records up to this time go first */
        uint64_t hd;
        memcpy(&hd, stage + so, 8);
        uint32_t b = fxt_ring_record_bytes(hd);
        if (b == 0 || b > len - so || ts_of(stage + so, b) > t)
          break;
        memcpy(m + mlen, stage + so, b);
        mlen += b;
        so += b;
      }
      memcpy(m + mlen, rec, n);
      mlen += n;
      atomic_fetch_add_explicit(&C.nested_records, 1, memory_order_relaxed);
    } else {
      memmove(h->buf + keep, h->buf + at, 8 + n);
      keep += 8 + n;
    }
    at += 8 + n;
  }
  h->len = keep;
  memcpy(m + mlen, stage + so, len - so);
  mlen += len - so;
  *out = m;
  return mlen;
}

/* Drains slot i: until it is empty, or (when `bounded`) one buffer's worth, so that a
 * producer as fast as the consumer cannot keep it on one slot (starving the others and the
 * ingress ring). Returns the bytes read. */
static uint64_t drain_slot_bounded(struct session *s, uint32_t i, bool bounded)
{
  struct fxt_tslot *t = session_slot(s, i);
  struct slot_info *info = &s->info[i];
  uint64_t total = 0;
  announce(s, i);
  for (;;) {
    pop_ingress(s); /* everything the thread pushed before this read is merged below */
    if (bounded && total >= s->buffer_bytes)
      break;
    struct stage st = {C.stage, 0};
    int64_t n = fxt_writer_read(&t->w, stage_copy, &st, STAGE_BYTES);
    struct fxt_ring_stats rs;
    fxt_ring_stats(&t->w.ring, &rs);
    uint64_t nested = atomic_load_explicit(&t->lost, memory_order_relaxed);
    if (n < 0) {
      /* A corrupt ring (a producer wrote a bad header): drop its contents, count them. */
      uint32_t lost = fxt_ring_drain(&t->w.ring);
      write_loss(s, i, FXT_STR_LOST, 1, lost, fxt_ticks());
      continue;
    }
    write_metadata();
    uint64_t ts = first_ts(st.buf, st.len);
    uint32_t orec = rs.overrun_records - info->seen_overrun_records;
    uint32_t obytes = rs.overrun_bytes - info->seen_overrun_bytes;
    if (orec || obytes) {
      write_loss(s, i, FXT_STR_OVERRUN, orec, obytes, ts);
      live_lost(info->live_cpu, orec, true);
      info->seen_overrun_records = rs.overrun_records;
      info->seen_overrun_bytes = rs.overrun_bytes;
    }
    uint32_t lrec = rs.lost_records - info->seen_lost_records;
    uint32_t lbytes = rs.lost_bytes - info->seen_lost_bytes;
    if (lrec || lbytes) { /* claimed by the consumer but not delivered (overwrite mode) */
      write_loss(s, i, FXT_STR_LOST, lrec, lbytes, ts);
      live_lost(info->live_cpu, lrec, false);
      info->seen_lost_records = rs.lost_records;
      info->seen_lost_bytes = rs.lost_bytes;
    }
    if (nested != info->seen_lost) {
      write_loss(s, i, FXT_STR_LOST, nested - info->seen_lost, 0, ts);
      live_lost(info->live_cpu, nested - info->seen_lost, false);
      info->seen_lost = nested;
    }
    /* Signal-context records of this thread, merged by time (all of them once the ring is
     * empty: they are newer than anything left in it). */
    unsigned char *chunk;
    st.len = merge_held(i, st.buf, st.len, n == 0, &chunk);
    st.buf = chunk;
    if (st.len == 0)
      break;
    uint64_t events_before = info->events_read, dropped_before = info->dropped_total;
    live_feed(st.buf, st.len, (uint32_t)info->tid, info->comm, &info->live_cpu,
              &info->events_read, &info->dropped_total);
    if (C.out.limit && C.out.written + st.len > C.out.limit) {
      /* Past max_file_kb: the chunk is not written, and what it held is counted in-band as
       * the thread's lost events (its events, and the drops its drop_stats reported); the
       * small bookkeeping record may go past the limit. */
      uint64_t lost = info->events_read - events_before + info->dropped_total - dropped_before;
      write_loss(s, i, FXT_STR_LOST, lost, st.len, ts);
      C.capped_records += lost;
    } else {
      out_write_bulk(&C.out, st.buf, st.len);
      info->loss_total += info->dropped_total - dropped_before; /* its drop_stats records */
    }
    write_dropped(s, i, ts);
    total += (uint64_t)n;
  }
  info->delivered_bytes += total;
  write_dropped(s, i, fxt_ticks()); /* losses written with nothing after them */
  atomic_store_explicit(&t->wake_sent, 0, memory_order_relaxed); /* drained: wake me again */
  return total;
}

static uint64_t drain_slot(struct session *s, uint32_t i)
{
  return drain_slot_bounded(s, i, false);
}

/* A slot whose thread is gone (or, at stop, every slot: the handshake has run): write the
 * pending drop statistics as its producer, drain, and for an exited thread free the slot. */
static void finish_slot(struct session *s, uint32_t i, bool free_it)
{
  struct fxt_tslot *t = session_slot(s, i);
  drain_slot(s, i);
  while (fxt_writer_emit_drop_stats(&t->w) != 0)
    drain_slot(s, i);
  drain_slot(s, i);
  if (free_it)
    fxt_slot_free(s, i);
}

static void pass(struct session *s)
{
  for (uint32_t i = 0; i < s->nslots; i++) {
    uint32_t state = atomic_load_explicit(&s->info[i].state, memory_order_acquire);
    if (state == SLOT_LIVE)
      drain_slot_bounded(s, i, true);
    else if (state == SLOT_EXITED)
      finish_slot(s, i, true);
  }
  refresh_names(s);
  write_metadata();
  /* Hand each pass to the kernel: a process killed without running its exit handlers still
   * leaves a readable file with everything drained so far. */
  out_flush(&C.out);
}

/* Passes completed, for fxt_session_flush: the consumer bumps it after each pass. */
static pthread_mutex_t pass_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pass_cond = PTHREAD_COND_INITIALIZER;
static uint64_t passes;

static void pass_done(void)
{
  pthread_mutex_lock(&pass_lock);
  passes++;
  pthread_cond_broadcast(&pass_cond);
  pthread_mutex_unlock(&pass_lock);
}

int fxt_consumer_flush(struct session *s)
{
  if (!s->consumer_running)
    return FXT_ENOENT;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 10;
  pthread_mutex_lock(&pass_lock);
  uint64_t target = passes + 2; /* the pass under way may have begun before this call */
  int rc = 0;
  while (passes < target && rc == 0) {
    pthread_mutex_unlock(&pass_lock);
    fxt_consumer_wake(s);
    pthread_mutex_lock(&pass_lock);
    if (passes < target)
      rc = pthread_cond_timedwait(&pass_cond, &pass_lock, &until);
  }
  pthread_mutex_unlock(&pass_lock);
  return rc == 0 ? 0 : FXT_EAGAIN;
}

static void *consumer_main(void *arg)
{
  struct session *s = arg;
  prctl(PR_SET_NAME, "fxtrace-consumer"); /* signals: blocked from birth (fxt_consumer_start) */
  for (;;) {
    uint32_t w = atomic_load_explicit(&s->wake, memory_order_acquire);
    /* Acquire pairs with fxt_consumer_stop's release: the stop handshake is complete. */
    bool stopping = atomic_load_explicit(&s->stop, memory_order_acquire);
    if (stopping)
      break;
    pass(s);
    pass_done();
    struct timespec to = {0, live_has_waiters() ? POLL_LIVE_NS : POLL_NS};
    syscall(SYS_futex, &s->wake, FUTEX_WAIT_PRIVATE, w, &to, NULL, 0);
  }
  /* Last pass: no thread emits any more; the consumer is every writer's producer now. */
  for (uint32_t i = 0; i < s->nslots; i++) {
    uint32_t state = atomic_load_explicit(&s->info[i].state, memory_order_acquire);
    if (state != SLOT_FREE)
      finish_slot(s, i, state == SLOT_EXITED);
  }
  uint64_t no_slot = atomic_exchange_explicit(&s->no_slot_drops, 0, memory_order_relaxed);
  if (no_slot)
    write_process_loss(s, no_slot);
  atomic_store_explicit(&C.no_buffer_lost, no_slot, memory_order_relaxed);
  write_metadata();
  write_clock_sync(s, false);
  out_flush(&C.out);
  if (C.capped_records)
    fprintf(stderr, "fxtrace: %s: %llu events not written (max_file_kb=%llu; counted in the file)\n", s->output,
            (unsigned long long)C.capped_records, (unsigned long long)s->cfg.max_file_kb);
  if (C.out.error)
    fprintf(stderr, "fxtrace: %s: write failed: %s\n", s->output, strerror(C.out.error));
  if (C.out.fd > 1)
    fxt_outfile_close(C.out.fd, s->output, C.out.error == 0);
  C.out.fd = -1;
  return NULL;
}

/* ---- lifecycle --------------------------------------------------------------------------- */

int fxt_consumer_start(struct session *s)
{
  if (live_init() != 0)
    return FXT_ENOMEM;
  memset(&C.described, 0, sizeof(C.described));
  C.capped_records = 0;
  C.last_comm_check = 0;
  atomic_store_explicit(&C.nested_records, 0, memory_order_relaxed);
  atomic_store_explicit(&C.no_buffer_lost, 0, memory_order_relaxed);
  if (!C.stage)
    C.stage = malloc(STAGE_BYTES);
  if (!C.merged)
    C.merged = malloc(STAGE_BYTES * 2);
  C.held.len = 0;
  if (!C.out.buf)
    C.out.buf = malloc(OUT_BYTES);
  if (!C.stage || !C.merged || !C.out.buf)
    return FXT_ENOMEM;
  C.out.len = 0;
  C.out.written = 0;
  C.out.error = 0;
  C.out.limit = s->cfg.max_file_kb * 1024;
  if (s->output[0] == 0)
    C.out.fd = -1;
  else if (strcmp(s->output, "-") == 0)
    C.out.fd = dup(1);
  else
    C.out.fd = fxt_outfile_open(s->output);
  if (s->output[0] && C.out.fd < 0) {
    fprintf(stderr, "fxtrace: %s: %s\n", s->output, strerror(errno));
    return FXT_EINVAL;
  }
  write_header(s);
  out_flush(&C.out);
  atomic_store_explicit(&s->stop, 0, memory_order_relaxed);
  /* The consumer is born with every signal blocked (a thread inherits its creator's mask):
   * process-directed signals must go to the program's threads, never run a handler here. */
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  int created = pthread_create(&s->consumer, NULL, consumer_main, s);
  pthread_sigmask(SIG_SETMASK, &saved, NULL);
  if (created != 0) {
    if (C.out.fd > 1)
      fxt_outfile_close(C.out.fd, s->output, false);
    return FXT_ENOMEM;
  }
  s->consumer_running = true;
  return 0;
}

void fxt_consumer_wake(struct session *s)
{
  atomic_fetch_add_explicit(&s->wake, 1, memory_order_release);
  syscall(SYS_futex, &s->wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void fxt_consumer_stop(struct session *s)
{
  if (!s->consumer_running)
    return;
  /* Release pairs with the consumer's acquire load of stop. */
  atomic_store_explicit(&s->stop, 1, memory_order_release);
  fxt_consumer_wake(s);
  pthread_join(s->consumer, NULL);
  s->consumer_running = false;
}
