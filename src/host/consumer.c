/* consumer.c - the session's consumer thread: the one reader of every ring, and the FXT file
 * writer (docs/fxt-conventions.md gives the file order).
 *
 * Each pass takes every non-free slot in turn: it announces a new owner thread (thread and
 * kernel-object records), stages the ring's records without consuming them (in place in
 * discard mode, a copy in overwrite mode; deliver.c), writes whatever strings and tracepoint
 * descriptions appeared meanwhile (after the staging, so every string a staged record refers
 * to was interned before and is covered), writes
 * loss records for the gap in front of the staged records, then the staged records
 * themselves, and only once write() has taken them moves the ring's tail past them (commit,
 * below; deliver.c). A slot whose thread exited is drained to the end, its pending drop
 * statistics written (the thread is gone, so the consumer may act as its producer), and freed.
 * A flight recorder's live slots are left alone unless a trace_pipe is open (pass); its
 * `trace` is shown from copies of the rings (view_refresh), and snapshots are copies too.
 *
 * Every write to the output goes through commit(), the protocol that lets `fxtrace recover`
 * know after a crash which records are in the file and which are still in their buffers
 * (docs/recovery.md): the intent (what the write holds, where it starts) is stored in the
 * session file before the write, marked WRITTEN after it returned, then applied (the slot's
 * delivered position and reported losses, the committed length), and only then does the
 * ring's tail move. All of it is the consumer thread's alone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fxtrace/fxt.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cpunote.h"
#include "deliver.h"
#include "intern.h"
#include "live.h"
#include "metarec.h"
#include "outfile.h"
#include "registry.h"
#include "session_int.h"

#define STAGE_BYTES (1u << 20)
#define OUT_BYTES (1u << 20)
/* Between passes when no producer wakes the consumer (one does at its wake mark, slots.c
 * wake_mark): 100 ms, and such a pass takes from a buffer below its mark only what was there
 * at the previous one (drain_live), so a burst that fits in the buffers is written after it,
 * not while it takes every core (and an idle process wakes ten times a second); 10 ms while a
 * trace_pipe reader waits, and then every pass takes everything (`trace` flushes before it
 * reads). */
#define POLL_NS 100000000
#define POLL_LIVE_NS 10000000
#define SYNC_NS 1000000000 /* between the clock syncs of a file (pass) */
#define PROVIDER_NAME "fxtrace/1"

struct out {
  int fd;
  unsigned char *buf;
  size_t len;
  uint64_t written;  /* bytes handed to the file so far (incl. buffered) */
  uint64_t file_len; /* bytes the file holds (what write() took) */
  uint64_t limit;    /* event bytes allowed (max_file_kb), 0 = none */
  int error;         /* first write error (errno), reported at stop; nothing is written after
                        it (write_all), but one last small try at the end (write_failed_tail) */
  uint64_t failed_at; /* file_len when it failed: the file ends there (on a record boundary) */
  size_t kept_b;      /* of the failed write_all: bytes of its second part the file kept */
  bool torn;          /* the failed write left part of a record at the file's end (a shared
                         stdout, which is never cut back): nothing more is written after it */
  bool direct;       /* a snapshot's file: written as it is, outside the commit protocol */
  bool prealloc;          /* a regular file of ours: pages allocated ahead (out_prealloc) */
  uint64_t prealloc_end;  /* allocated up to here, past the end the file shows */
  bool shared_stdout;     /* stdout (`-`) on a regular file, which others may write too: each
                             write's place in it goes in the intent (stdout_place) */
  bool append;            /* ... opened O_APPEND: a write lands at the file's end */
  bool sections;          /* stdout (`-`): each write begins with a provider section record
                             (section_word), buf has the 8 bytes before it for one */
};

/* What a write changes once it is in the file (commit; the intent of shfile.h). */
struct effect {
  uint32_t slot;                  /* FXT_SH_NO_SLOT: no slot's records or losses */
  struct fxt_staged st;           /* the slot's ring records in it (st.len 0: none) */
  uint32_t rep[4];                /* the slot's reported overrun records, bytes, lost records,
                                     bytes after it */
  uint64_t rep_nested;
};

static struct {
  struct session *s;
  struct out out;
  unsigned char *stage;
  unsigned char *merged; /* stage + held records in time order */
  uint32_t seq;          /* intent seq of the next commit (held records it takes say so) */
  bool held_taken;       /* the next commit takes held records: compact after it */
  uint32_t held_n;       /* held records in the merged chunk, at these offsets */
  uint32_t held_off[FXT_SH_HELD_MAX];
  uint64_t no_slot_written; /* process-wide losses in the buffered records (last pass) */
  uint32_t strings_end; /* next string index to write */
  uint32_t registry_gen;
  uint8_t described[65536 / 8]; /* tracepoint ids with a description in the file */
  uint64_t last_comm_check;
  uint64_t last_sync_ns;   /* CLOCK_MONOTONIC of the last clock sync in the output */
  uint64_t capped_records; /* records not written because of max_file_kb */
  bool no_magic;           /* the output is appended to a trace: no magic record */
  uint64_t unwritten_records; /* records not written because the output failed (out.error) */
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

static void commit(const unsigned char *chunk, size_t len, const struct effect *fx);

/* Bytes of the whole records of p[0..len) that end at or before n. */
static size_t whole_records(const unsigned char *p, size_t len, size_t n)
{
  size_t off = 0;
  while (off + 8 <= len) {
    uint64_t h;
    memcpy(&h, p + off, 8);
    size_t bytes = fxt_ring_record_bytes(h);
    if (bytes == 0 || bytes > len - off || off + bytes > n)
      break;
    off += bytes;
  }
  return off;
}

/* What records p[0..len) hold as the drain path counts a chunk: events (not kernel:meta), and
 * the records drop_stats records say were dropped (live.c feed counts them the same way). */
static uint64_t records_in(const unsigned char *p, size_t len)
{
  uint64_t n = 0;
  for (size_t off = 0, bytes; off + 8 <= len; off += bytes) {
    uint64_t w[4] = {0};
    memcpy(w, p + off, len - off < sizeof(w) ? len - off : sizeof(w));
    bytes = 8 * FXT_GET(w[0], FXT_HDR_SIZE);
    if (bytes == 0)
      break;
    if (FXT_GET(w[0], FXT_HDR_TYPE) != FXT_RECORD_EVENT)
      continue;
    if (FXT_GET(w[0], FXT_EVENT_CATEGORY) != FXT_STR_KERNEL_META)
      n++;
    else if (FXT_GET(w[0], FXT_EVENT_NAME) == FXT_STR_DROP_STATS) /* args after ts (+ koids) */
      n += w[FXT_GET(w[0], FXT_EVENT_THREAD) == 0 ? 4 : 2] >> 32;
  }
  return n;
}

/* What write_failed_tail writes: a `lost` record (48 bytes) and a clock sync (80). */
#define FAILED_TAIL_BYTES 128

/* Writes a[0..alen) then b[0..blen) (one writev at a time until both are in); counts what the
 * file took in file_len. After a failure (a full disk, an I/O error) nothing more is written:
 * of this write, the file keeps the whole records it took but FAILED_TAIL_BYTES (a regular
 * file: cut back to the last of them; kept_b says how much of b), so it ends on a record
 * boundary, which every reader opens, with room for write_failed_tail. A stdout on a regular
 * file is never cut (its parent, its children and the shell may have written to it; o's
 * counts are this session's bytes, not the file's): it keeps every whole record it took, and a
 * part of the next one if the write stopped inside it (torn: readers warn there and read what
 * precedes it, as they do a pipe's torn end). */
static void write_all(struct out *o, const void *a, size_t alen, const void *b, size_t blen)
{
  struct iovec iov[2] = {{(void *)a, alen}, {(void *)b, blen}};
  int first = alen ? 0 : 1;
  if (blen == 0 && alen == 0)
    return;
  int last = blen ? 2 : 1;
  uint64_t start = o->file_len; /* a record boundary: a and b hold whole records */
  o->kept_b = 0;
  while (first < last && o->fd >= 0 && !o->error) {
    ssize_t k = writev(o->fd, iov + first, last - first);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      o->error = k < 0 ? errno : EIO;
      size_t took = (size_t)(o->file_len - start);
      size_t room = o->shared_stdout
                        ? took
                        : took - (took < FAILED_TAIL_BYTES ? took : FAILED_TAIL_BYTES); /* tail */
      size_t keep = room >= alen ? alen + (o->kept_b = whole_records(b, blen, room - alen))
                                 : whole_records(a, alen, room);
      o->torn = o->shared_stdout && keep < took;
      if (keep < took && !o->shared_stdout && ftruncate(o->fd, (off_t)(start + keep)) == 0 &&
          lseek(o->fd, (off_t)(start + keep), SEEK_SET) == (off_t)(start + keep))
        o->file_len = start + keep; /* (a pipe keeps its torn tail: readers stop there) */
      o->failed_at = o->file_len;
      break;
    }
    o->file_len += (uint64_t)k;
    for (; first < last && (size_t)k >= iov[first].iov_len; first++)
      k -= (ssize_t)iov[first].iov_len;
    if (first < last) {
      iov[first].iov_base = (char *)iov[first].iov_base + k;
      iov[first].iov_len -= (size_t)k;
    }
  }
}

/* A regular output file of ours has its next pages allocated ahead of its end between passes
 * (fallocate keeping the size: readers, a recovery and `fxtrace report` of a file being written
 * see only what was written), so that a pass's write finds them allocated: on a VM whose host
 * takes back free guest pages (page reporting), a write into pages the kernel takes from free
 * memory ran at 2.1-2.6 ms a MiB, into allocated ones at 0.3-0.6 ms, and the first passes of
 * a session lost events at 10 M events/s. Not with max_file_kb (nothing is written past it),
 * nor for stdout. What is left ahead at the end is given back (out_prealloc_release). */
#define PREALLOC_AHEAD (16u << 20)
#define PREALLOC_STEP (256u << 10) /* between two looks at the wake word: ~0.6 ms */

static bool out_prealloc(uint64_t ahead)
{
  struct out *o = &C.out;
  if (!o->prealloc || o->error)
    return false;
  if (o->prealloc_end < o->file_len)
    o->prealloc_end = o->file_len;
  if (o->prealloc_end >= o->file_len + ahead)
    return false;
  if (fallocate(o->fd, FALLOC_FL_KEEP_SIZE, (off_t)o->prealloc_end, PREALLOC_STEP) != 0) {
    o->prealloc = false; /* not supported here, or no room: the writes say what they meet */
    return false;
  }
  o->prealloc_end += PREALLOC_STEP;
  return true;
}

/* Gives back the pages allocated past the file's end (a process killed before this leaves
 * them to the file until it is removed or truncated: at most PREALLOC_AHEAD). */
static void out_prealloc_release(void)
{
  struct out *o = &C.out;
  struct stat st;
  if (o->prealloc_end == 0 || fstat(o->fd, &st) != 0 || (uint64_t)st.st_size >= o->prealloc_end)
    return;
  if (fallocate(o->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, st.st_size,
                (off_t)o->prealloc_end - st.st_size) != 0 &&
      ftruncate(o->fd, st.st_size) != 0)
    return; /* only room held: nothing of the trace */
  o->prealloc_end = 0;
}

/* Buffered records go out (a commit of their own). */
static void out_flush(void)
{
  commit(NULL, 0, NULL);
}

/* Makes room for n bytes of whole records in the buffer. */
static void out_reserve(size_t n)
{
  if (C.out.len + n > OUT_BYTES)
    out_flush();
}

/* Buffers one whole record (or several): a record is never split across two writes, so every
 * commit ends on a record boundary. */
static void out_write(struct out *o, const void *p, size_t n)
{
  o->written += n;
  if (o->fd < 0)
    return;
  if (n > OUT_BYTES - o->len)
    out_flush();
  if (n > OUT_BYTES) { /* cannot happen: records are at most 32 KiB */
    write_all(o, NULL, 0, p, n);
    return;
  }
  memcpy(o->buf + o->len, p, n);
  o->len += n;
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

/* Whether the strings tp's description refers to (system, name, field names) are in the file
 * already: a tracepoint registered after write_strings ran has its names interned after it. */
static bool described_strings_written(const struct fxt_tracepoint *tp)
{
  uint16_t refs[2] = {(uint16_t)(tp->header >> 32), (uint16_t)(tp->header >> 48)};
  for (int k = 0; k < 2; k++)
    if (!(refs[k] & 0x8000) && refs[k] >= C.strings_end)
      return false;
  for (uint32_t i = 0; tp->kind == FXT_TP_TYPED && i < tp->nfields; i++) {
    uint16_t ref = (uint16_t)(tp->arg_header[i] >> 16);
    if (!(ref & 0x8000) && ref >= C.strings_end)
      return false;
  }
  return true;
}

/* Blob "fxtrace:tracepoint" describing tp (docs/fxt-conventions.md); ctx: set to true when a
 * description must wait for its strings (write_metadata writes them, then describes again). */
static int describe(void *ctx, struct fxt_tracepoint *tp)
{
  if (tp->id == 0 || (C.described[tp->id / 8] & (1u << (tp->id % 8))))
    return 0;
  if (!described_strings_written(tp)) {
    *(bool *)ctx = true;
    return 0;
  }
  unsigned char p[8192];
  size_t n = fxt_tp_describe(tp, p, sizeof(p));
  if (n == 0)
    return 0;
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
    bool waiting = false;
    fxt_tracepoint_foreach(describe, &waiting);
    /* Registration may have interned more; a description waits for its strings (a string
     * another thread is still interning stops write_strings short: it finishes in moments). */
    for (int tries = 0; tries < 1000; tries++) {
      write_strings();
      if (!waiting)
        break;
      waiting = false;
      fxt_tracepoint_foreach(describe, &waiting);
      if (waiting)
        sched_yield();
    }
    if (waiting)
      C.registry_gen = gen - 1; /* the next pass describes the rest */
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
    fxt_name_fix(comm, sizeof(info->comm)); /* UTF-8 cut at 15 bytes */
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
    fxt_meta_loss(&e, name, r, b, ts);
    e.thread.index = (uint8_t)(t->thread_bits >> 24);
    e.thread.process_koid = (uint64_t)s->pid;
    e.thread.thread_koid = (uint64_t)s->info[i].tid;
    EMIT(fxt_encode_event, &e);
    s->info[i].loss_total += r;
    records -= r;
    bytes -= b;
  }
}

/* Slot i's thread's `cpu` record (docs/fxt-conventions.md) into w: what a copy of its ring
 * puts in front of records whose `cpu` record it does not hold (cpunote.h). Returns its
 * bytes (48 at most). */
static uint32_t encode_cpu(struct session *s, uint32_t i, uint32_t cpu, uint64_t ts,
                           uint64_t w[6])
{
  struct fxt_tslot *t = session_slot(s, i);
  struct fxt_event e = {0};
  fxt_meta_cpu(&e, cpu, ts);
  e.thread.index = (uint8_t)(t->thread_bits >> 24);
  e.thread.process_koid = (uint64_t)s->pid;
  e.thread.thread_koid = (uint64_t)s->info[i].tid;
  int64_t n = fxt_encode_event(w, 6 * sizeof(uint64_t), &e);
  return n > 0 ? (uint32_t)n : 0;
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
    fxt_meta_loss(&e, FXT_STR_LOST, r, 0, fxt_ticks());
    e.thread.process_koid = (uint64_t)s->pid;
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
  fxt_meta_clock_sync(&e, ticks, mono, real);
  e.thread.process_koid = (uint64_t)s->pid;
  EMIT(fxt_encode_event, &e);
  C.last_sync_ns = mono;
}

/* Which clock the ticks are and why (the choice clock.c made at session start). */
static void write_clock_choice(struct session *s)
{
  const char *src = fxt_clock_source(), *why = fxt_clock_reason();
  struct fxt_event e = {0};
  fxt_meta_clock(&e, fxt_ticks(), src, (uint16_t)strlen(src), why,
                 (uint16_t)strnlen(why, 0x7fff));
  e.thread.process_koid = (uint64_t)s->pid;
  EMIT(fxt_encode_event, &e);
}

/* The head of a file: magic, provider, ticks, strings, process, clock sync, tracepoint
 * descriptions. first: the session's own output (its clock sync is the live view's too). */
static void write_header(struct session *s, bool first)
{
  if (!(first && C.no_magic))
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
  fxt_name_fix(comm, sizeof(comm));
  struct fxt_kernel_object k = {0};
  k.koid = (uint64_t)s->pid;
  k.obj_type = FXT_KOBJ_PROCESS;
  k.name = ref_inline(comm);
  EMIT(fxt_encode_kernel_object, &k);
  write_clock_sync(s, first);
  write_clock_choice(s);
  C.registry_gen = fxt_registry_generation() - 1; /* force the descriptions */
  write_metadata();
}

/* ---- draining ---------------------------------------------------------------------------- */

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

/* ---- signal-context records (ingress) ------------------------------------------------ *
 * Records popped from the ingress ring wait in the held area of the session file until they
 * are merged into their thread's stream: entries of FXT_SH_HELD_HEADER bytes (u32 slot, u32
 * len, u32 the ingress position they were popped from, u32 consumed_by) and the record. The
 * area has two halves; the current one is sh->held_active, its length sh->held_len[active].
 * An entry a write takes is marked with that write's intent seq before the write; after the
 * commit the entries taken are dropped by copying the others into the other half and switching
 * halves (one store), so a crash at any point leaves one consistent half (docs/recovery.md). */

static unsigned char *held_half(uint32_t half)
{
  return C.s->held + (size_t)half * C.s->sh->held_half_bytes;
}

static void hold_fn(void *ctx, const void *rec, uint32_t len, uint32_t epoch, uint32_t tag)
{
  struct session *s = ctx;
  struct fxt_sh *h = s->sh;
  uint32_t half = atomic_load_explicit(&h->held_active, memory_order_relaxed);
  uint64_t used = atomic_load_explicit(&h->held_len[half], memory_order_relaxed);
  if (epoch != s->gen || tag >= s->nslots || (len & 7) != 0 ||
      used + FXT_SH_HELD_HEADER + len > h->held_half_bytes)
    return; /* from an earlier session (pop_ingress leaves room for the largest record) */
  unsigned char *e = held_half(half) + used;
  /* ready_head is the position being popped: pop_batch stores it after this call. A crash
   * between this entry and that store leaves the record both here and in the ring: the
   * position tells a recovery which one to take. */
  uint32_t qpos = atomic_load_explicit(&s->ingress->ready_head, memory_order_relaxed);
  uint32_t zero = 0;
  memcpy(e, &tag, 4);
  memcpy(e + 4, &len, 4);
  memcpy(e + 8, &qpos, 4);
  memcpy(e + 12, &zero, 4);
  memcpy(e + FXT_SH_HELD_HEADER, rec, len);
  atomic_signal_fence(memory_order_seq_cst); /* the entry is whole before the length says so */
  atomic_store_explicit(&h->held_len[half], used + FXT_SH_HELD_HEADER + len,
                        memory_order_relaxed);
}

static void pop_ingress(struct session *s)
{
  struct fxt_sh *h = s->sh;
  for (;;) {
    uint32_t half = atomic_load_explicit(&h->held_active, memory_order_relaxed);
    uint64_t room = h->held_half_bytes - atomic_load_explicit(&h->held_len[half],
                                                              memory_order_relaxed);
    uint32_t max = (uint32_t)(room / (FXT_SH_HELD_HEADER + INGRESS_PAYLOAD));
    if (max == 0 || fxt_ingress_pop_batch(s->ingress, hold_fn, s, max < 128 ? max : 128) == 0)
      break;
  }
}

/* After a commit that took held records: the current half without them becomes the other. */
static void held_compact(struct session *s)
{
  struct fxt_sh *h = s->sh;
  uint32_t half = atomic_load_explicit(&h->held_active, memory_order_relaxed);
  uint64_t used = atomic_load_explicit(&h->held_len[half], memory_order_relaxed), keep = 0;
  const unsigned char *from = held_half(half);
  unsigned char *to = held_half(half ^ 1);
  for (uint64_t at = 0; at + FXT_SH_HELD_HEADER <= used;) {
    uint32_t len, taken;
    memcpy(&len, from + at + 4, 4);
    memcpy(&taken, from + at + 12, 4);
    if (!taken) {
      memcpy(to + keep, from + at, FXT_SH_HELD_HEADER + len);
      keep += FXT_SH_HELD_HEADER + len;
    }
    at += FXT_SH_HELD_HEADER + len;
  }
  atomic_store_explicit(&h->held_len[half ^ 1], keep, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&h->held_active, half ^ 1, memory_order_relaxed); /* the switch */
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&h->held_len[half], 0, memory_order_relaxed);
}

/* A record's place in its thread's time order: an event's timestamp, or for a
 * duration-complete event (a scope, drop_stats: written when it ends) its end, as readers
 * order them (docs/fxt-conventions.md; fxtrace check). */
static uint64_t ts_of(const unsigned char *rec, uint32_t len)
{
  uint64_t h, ts = 0;
  memcpy(&h, rec, 8);
  if ((h & 0xf) == FXT_RECORD_EVENT && len >= 16) {
    if ((h >> 16 & 0xf) == FXT_EVENT_DURATION_COMPLETE && len >= 24)
      memcpy(&ts, rec + len - 8, 8);
    else
      memcpy(&ts, rec + 8, 8);
  }
  return ts;
}

/* Merges slot i's held records into the staged chunk by time (stable: the chunk's records
 * first on ties); returns the merged length and marks what it took with the next commit's
 * seq. Which records: those no later than the chunk's last record (that record's emission
 * began after the handler's, so the emission the handler interrupted, earlier, is staged
 * already); or, when `all` (the ring is empty), those held before safe_end: popped before
 * the thread was seen outside any emission, so the emission they interrupted has committed
 * and been delivered. A record popped later waits: the emission it interrupted may still
 * commit a record with an earlier timestamp. At most FXT_SH_HELD_MAX held records go into
 * one chunk (the intent lists them); past that the chunk ends before the ring records that
 * would follow, which stay in the ring for the next one: *ring_used says how many bytes of
 * the staged ring records the chunk holds. */
static uint32_t merge_held(uint32_t i, const unsigned char *stage, uint32_t len, bool all,
                           uint64_t safe_end, unsigned char **out, uint32_t *ring_used)
{
  struct fxt_sh *h = C.s->sh;
  uint32_t half = atomic_load_explicit(&h->held_active, memory_order_relaxed);
  uint64_t used = atomic_load_explicit(&h->held_len[half], memory_order_relaxed);
  unsigned char *held = held_half(half);
  size_t need = 0;
  for (uint64_t at = 0; at + FXT_SH_HELD_HEADER <= used;) {
    uint32_t tag, n, taken;
    memcpy(&tag, held + at, 4);
    memcpy(&n, held + at + 4, 4);
    memcpy(&taken, held + at + 12, 4);
    need += tag == i && !taken ? n : 0;
    at += FXT_SH_HELD_HEADER + n;
  }
  C.held_n = 0;
  *ring_used = len;
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
  bool capped = false;
  C.held_n = 0;
  for (uint64_t at = 0; at + FXT_SH_HELD_HEADER <= used;) {
    uint32_t tag, n, taken;
    memcpy(&tag, held + at, 4);
    memcpy(&n, held + at + 4, 4);
    memcpy(&taken, held + at + 12, 4);
    const unsigned char *rec = held + at + FXT_SH_HELD_HEADER;
    if (tag == i && !taken && (all ? at < safe_end : ts_of(rec, n) <= limit) &&
        mlen + n + (len - so) <= STAGE_BYTES * 2) {
      if (C.held_n == FXT_SH_HELD_MAX) {
        capped = true; /* this one, and the ring records from so on, go in the next chunk */
        break;
      }
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
      C.held_off[C.held_n++] = mlen;
      memcpy(m + mlen, rec, n);
      mlen += n;
      memcpy(held + at + 12, &C.seq, 4); /* taken by the next commit */
      C.held_taken = true;
      atomic_fetch_add_explicit(&C.nested_records, 1, memory_order_relaxed);
    }
    at += FXT_SH_HELD_HEADER + n;
  }
  if (capped) {
    *ring_used = so;
  } else {
    memcpy(m + mlen, stage + so, len - so);
    mlen += len - so;
  }
  *out = m;
  return mlen;
}

/* ---- commit ---------------------------------------------------------------------------- */

/* FXTRACE_TEST_DIE_IN_WRITE=before|after (read as the consumer starts; tests only): the
 * process kills itself with SIGKILL inside its consumer's first write of a ring's records, the
 * intent WRITING: before the write (nothing of it in the output) or after it returned, so that
 * a test can make either death at will (tests/check/top_level_kill.sh, stdout). 0: off. */
static int die_in_write;

/* A write to a stdout that is a regular file (out.shared_stdout): where it lands and its first
 * and last 8 bytes (a then b: whole FXT words), in the intent, so that a harvester whose own
 * stdout is that file can tell whether it landed (shfile.h, intent_out_pos; recover.h,
 * fxt_recover_check_stdout): the file's length cannot, as the process's parent or children
 * may write to it too. The position is the file offset the write starts from, or the file's
 * end when it appends: another writer moving them between here and the write makes the
 * harvester find other bytes there, and count the write as not landed (its records are then
 * taken from the buffers again, as before this existed). The consumer thread, before the
 * WRITING store (commit). */
static void stdout_place(struct fxt_sh *h, const struct out *o, const unsigned char *a,
                         size_t alen, const unsigned char *b, size_t blen)
{
  uint64_t pos = UINT64_MAX, first = 0, last = 0;
  struct stat st;
  off_t at = o->append ? (fstat(o->fd, &st) == 0 ? st.st_size : -1) : lseek(o->fd, 0, SEEK_CUR);
  if (at >= 0 && alen + blen >= 8) {
    pos = (uint64_t)at;
    memcpy(&first, alen ? a : b, 8);
    memcpy(&last, blen ? b + blen - 8 : a + alen - 8, 8);
  }
  atomic_store_explicit(&h->intent_out_pos, pos, memory_order_relaxed);
  atomic_store_explicit(&h->intent_first, first, memory_order_relaxed);
  atomic_store_explicit(&h->intent_last, last, memory_order_relaxed);
}

/* A provider section record naming this process (§4.3), 8 bytes, goes in front of each write
 * to stdout: a parent and its children of fork share it, their consumers' writes interleave
 * in it, and each write's records are resolved with its process's string and thread tables
 * only when the write says whose it is (docs/fxt-conventions.md). Every write ends on a record
 * boundary, so a reader meets the record where the write begins. Not in front of a write that
 * begins with the magic or the provider info record (the head: a file must begin with the
 * magic record, and the provider info names the process itself). In the 8 bytes before the
 * output buffer: no copy, and writev takes it with the rest (no syscall more). */
#define SECTION_BYTES 8u

static bool section_word(const unsigned char *first, uint32_t pid, unsigned char *out)
{
  uint64_t h;
  memcpy(&h, first, 8);
  if (FXT_GET(h, FXT_HDR_TYPE) == FXT_RECORD_METADATA &&
      (FXT_GET(h, FXT_METADATA_TYPE) == FXT_METADATA_TRACE_INFO ||
       FXT_GET(h, FXT_METADATA_TYPE) == FXT_METADATA_PROVIDER_INFO))
    return false;
  struct fxt_provider_section ps = {pid};
  return fxt_encode_provider_section(out, SECTION_BYTES, &ps) == SECTION_BYTES;
}

/* Writes the buffered records, then chunk[0..len), and makes the write count (the protocol of
 * the file comment and docs/recovery.md; every store to the session file is the consumer
 * thread's, ordered for a reader that looks after the process died: compiler barriers keep
 * program order, and nothing the process stored before it died is lost). fx NULL: only
 * buffered records, no slot. */
static void commit(const unsigned char *chunk, size_t len, const struct effect *fx)
{
  struct session *s = C.s;
  struct fxt_sh *h = s->sh;
  struct out *o = &C.out;
  bool has_slot = fx && fx->slot != FXT_SH_NO_SLOT;
  const unsigned char *a = o->buf; /* the buffered records, and a provider section before */
  size_t alen = o->len;
  if (o->direct) { /* a snapshot (below): nothing in it is the session's output */
    write_all(o, o->buf, o->len, chunk, len);
    o->len = 0;
    return;
  }
  if (o->fd < 0) {
    o->len = 0;
    len = 0;
  }
  if (o->len + len == 0 && !has_slot && !C.held_taken)
    return;
  if (o->sections && o->fd >= 0 && o->len + len > 0 &&
      section_word(o->len ? o->buf : chunk, (uint32_t)s->pid, o->buf - SECTION_BYTES)) {
    a = o->buf - SECTION_BYTES;
    alen += SECTION_BYTES;
  }
  struct fxt_sh_slot *e = has_slot ? sh_slot(s, fx->slot) : NULL;
  uint32_t seq = C.seq;
  /* 1. The intent: what this write holds, where it starts. */
  atomic_store_explicit(&h->intent_slot, has_slot ? fx->slot : FXT_SH_NO_SLOT,
                        memory_order_relaxed);
  atomic_store_explicit(&h->intent_file_off, o->file_len, memory_order_relaxed);
  atomic_store_explicit(&h->intent_len, alen + len, memory_order_relaxed);
  if (has_slot) {
    atomic_store_explicit(&h->intent_from, fx->st.from, memory_order_relaxed);
    atomic_store_explicit(&h->intent_to, fx->st.to, memory_order_relaxed);
    atomic_store_explicit(&h->intent_consumed,
                          atomic_load_explicit(&e->consumed, memory_order_relaxed),
                          memory_order_relaxed);
    atomic_store_explicit(&h->intent_rep_overrun_records, fx->rep[0], memory_order_relaxed);
    atomic_store_explicit(&h->intent_rep_overrun_bytes, fx->rep[1], memory_order_relaxed);
    atomic_store_explicit(&h->intent_rep_lost_records, fx->rep[2], memory_order_relaxed);
    atomic_store_explicit(&h->intent_rep_lost_bytes, fx->rep[3], memory_order_relaxed);
    atomic_store_explicit(&h->intent_rep_nested, fx->rep_nested, memory_order_relaxed);
    atomic_store_explicit(&h->intent_credit_records,
                          atomic_load_explicit(&e->credit_records, memory_order_relaxed),
                          memory_order_relaxed);
    atomic_store_explicit(&h->intent_credit_bytes,
                          atomic_load_explicit(&e->credit_bytes, memory_order_relaxed),
                          memory_order_relaxed);
    atomic_store_explicit(&h->intent_chunk_off, o->file_len + alen, memory_order_relaxed);
    uint32_t held_n = chunk && chunk == C.merged ? C.held_n : 0;
    atomic_store_explicit(&h->intent_held_n, held_n, memory_order_relaxed);
    for (uint32_t k = 0; k < held_n; k++)
      atomic_store_explicit(&h->intent_held_off[k], C.held_off[k], memory_order_relaxed);
  }
  atomic_store_explicit(&h->intent_rep_no_slot,
                        atomic_load_explicit(&h->rep_no_slot, memory_order_relaxed) +
                            C.no_slot_written,
                        memory_order_relaxed);
  if (o->shared_stdout)
    stdout_place(h, o, a, alen, chunk, len);
  atomic_store_explicit(&h->intent_seq, seq, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&h->intent_state, FXT_SH_WRITING, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
  /* 2. The write. */
  if (die_in_write == 1 && has_slot && fx->st.len)
    raise(SIGKILL);
  write_all(o, a, alen, chunk, len);
  if (die_in_write == 2 && has_slot && fx->st.len)
    raise(SIGKILL);
  o->len = 0;
  /* 3. It returned: from here a recovery applies the intent itself if we die. */
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&h->intent_state, FXT_SH_WRITTEN, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
  /* 4. Apply. */
  if (has_slot) {
    if (fx->st.len)
      atomic_store_explicit(&e->delivered, fx->st.to, memory_order_relaxed);
    atomic_store_explicit(&e->rep_overrun_records, fx->rep[0], memory_order_relaxed);
    atomic_store_explicit(&e->rep_overrun_bytes, fx->rep[1], memory_order_relaxed);
    atomic_store_explicit(&e->rep_lost_records, fx->rep[2], memory_order_relaxed);
    atomic_store_explicit(&e->rep_lost_bytes, fx->rep[3], memory_order_relaxed);
    atomic_store_explicit(&e->rep_nested, fx->rep_nested, memory_order_relaxed);
  }
  atomic_store_explicit(&h->rep_no_slot,
                        atomic_load_explicit(&h->intent_rep_no_slot, memory_order_relaxed),
                        memory_order_relaxed);
  C.no_slot_written = 0;
  atomic_store_explicit(&h->committed, o->file_len, memory_order_relaxed);
  /* 5. The records are in the file: their space goes back to the producer. */
  if (has_slot && fx->st.len) {
    struct fxt_ring *r = &session_slot(s, fx->slot)->w.ring;
    uint32_t cr, cb;
    uint32_t moved = fxt_deliver_advance(r, &fx->st, &cr, &cb);
    atomic_signal_fence(memory_order_seq_cst);
    atomic_store_explicit(&e->consumed,
                          atomic_load_explicit(&e->consumed, memory_order_relaxed) + moved,
                          memory_order_relaxed);
    atomic_store_explicit(&e->credit_records,
                          atomic_load_explicit(&e->credit_records, memory_order_relaxed) + cr,
                          memory_order_relaxed);
    atomic_store_explicit(&e->credit_bytes,
                          atomic_load_explicit(&e->credit_bytes, memory_order_relaxed) + cb,
                          memory_order_relaxed);
  }
  if (C.held_taken) {
    held_compact(s);
    C.held_taken = false;
  }
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&h->intent_state, FXT_SH_IDLE, memory_order_relaxed);
  C.seq = seq + 1 ? seq + 1 : 1;
}

/* Overrun the producer counted (count, free-running) that no loss record reports yet: less
 * what it counted after the records were delivered (the credit; deliver.c) and what is
 * reported (rep). A count not yet caught up with its credit waits (0). */
static uint32_t unreported(uint32_t count, uint32_t credit, uint32_t rep)
{
  uint32_t n = count - credit - rep;
  return (int32_t)n > 0 ? n : 0;
}

/* Drains slot i: until it is empty, or (when `bounded`) one buffer's worth, so that a
 * producer as fast as the consumer cannot keep it on one slot (starving the others and the
 * ingress ring); with `upto`, only the records before that ring position (a head the
 * producer published: a record boundary). Returns the bytes read. */
static uint64_t drain_slot_to(struct session *s, uint32_t i, bool bounded, const uint32_t *upto)
{
  struct fxt_tslot *t = session_slot(s, i);
  struct slot_info *info = &s->info[i];
  struct fxt_sh_slot *e = sh_slot(s, i);
  uint64_t total = 0;
  announce(s, i);
  for (;;) {
    if (bounded && total >= s->buffer_bytes)
      break;
    uint32_t cap = STAGE_BYTES;
    if (upto) {
      /* The records before *upto: the ring's tail is ours in discard mode; in overwrite mode
       * the producer may have moved it past *upto, and then nothing is left to take. */
      int32_t left = (int32_t)(*upto - atomic_load_explicit(&t->w.ring.tail,
                                                            memory_order_relaxed));
      if (left <= 0)
        break;
      cap = (uint32_t)left < cap ? (uint32_t)left : cap;
    }
    struct effect fx = {.slot = i};
    fx.rep[0] = atomic_load_explicit(&e->rep_overrun_records, memory_order_relaxed);
    fx.rep[1] = atomic_load_explicit(&e->rep_overrun_bytes, memory_order_relaxed);
    fx.rep[2] = atomic_load_explicit(&e->rep_lost_records, memory_order_relaxed);
    fx.rep[3] = atomic_load_explicit(&e->rep_lost_bytes, memory_order_relaxed);
    fx.rep_nested = atomic_load_explicit(&e->rep_nested, memory_order_relaxed);
    /* The counters before the copy: an overrun counted now is of records older than the
     * ones staged, so it is reported in front of them; a producer that overwrites staged
     * records after this counts them later, and the claim credits them (deliver.c). */
    /* Held records so far, and whether the thread is outside any emission now: acquire pairs
     * with the release store of depth in fxt_emit_leave (its commits are visible). */
    uint32_t half = atomic_load_explicit(&s->sh->held_active, memory_order_relaxed);
    uint64_t safe_end = atomic_load_explicit(&s->sh->held_len[half], memory_order_relaxed);
    if (atomic_load_explicit(&t->depth, memory_order_acquire) != 0)
      safe_end = 0;
    struct fxt_ring_stats rs;
    fxt_ring_stats(&t->w.ring, &rs);
    uint64_t nested = atomic_load_explicit(&t->lost, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire); /* those loads before the copy's */
    int rc = fxt_deliver_stage(&t->w.ring, e, C.stage, cap, &fx.st);
    /* Then the signal-context records: a handler pushes its record before the emissions that
     * follow it commit, so everything the thread pushed before the newest staged record (the
     * acquire of its commit makes the push visible) is popped now and merged below in time
     * order, never in a later chunk behind newer records. */
    pop_ingress(s);
    out_reserve(4096); /* this slot's loss records and its commit go out together */
    if (rc < 0) {
      /* A corrupt ring (a producer wrote a bad header): drop its contents, count them. */
      uint32_t lost = fxt_ring_drain(&t->w.ring);
      atomic_store_explicit(&e->consumed,
                            atomic_load_explicit(&e->consumed, memory_order_relaxed) + lost,
                            memory_order_relaxed);
      write_loss(s, i, FXT_STR_LOST, 1, lost, fxt_ticks());
      fx.st.len = 0;
      commit(NULL, 0, &fx);
      continue;
    }
    uint64_t ts = first_ts(fx.st.data, fx.st.len);
    bool wrote = false;
    /* Records that do not follow the last ones staged (the producer passed records in
     * between, overwrite mode): their CPU, from the producer's note (cpunote.h), goes in
     * front of the chunk below unless their first record names it. */
    uint32_t cpu = info->ring_cpu;
    bool put_cpu = false;
    if (fx.st.len && fx.st.from != info->ring_pos) {
      cpu = fx.st.cpu;
      uint64_t h;
      memcpy(&h, fx.st.data, 8);
      put_cpu = cpu != FXT_CPU_NOTE_NONE &&
                fxt_cpu_of_record(fx.st.data, fxt_ring_record_bytes(h)) == FXT_CPU_NOTE_NONE;
      if (put_cpu)
        info->live_cpu = cpu; /* for the losses' CPU:N lines too */
    }
    /* Overrun records the producer counted and the output does not report yet. */
    uint32_t orec = unreported(rs.overrun_records,
                               atomic_load_explicit(&e->credit_records, memory_order_relaxed),
                               fx.rep[0]);
    uint32_t obytes = unreported(rs.overrun_bytes,
                                 atomic_load_explicit(&e->credit_bytes, memory_order_relaxed),
                                 fx.rep[1]);
    if (orec || obytes) {
      write_loss(s, i, FXT_STR_OVERRUN, orec, obytes, ts);
      live_lost(info->live_cpu, orec, true);
      fx.rep[0] += orec;
      fx.rep[1] += obytes;
      wrote = true;
    }
    uint32_t lrec = rs.lost_records - fx.rep[2];
    uint32_t lbytes = rs.lost_bytes - fx.rep[3];
    if (lrec || lbytes) { /* claimed by the consumer but not delivered (overwrite mode) */
      write_loss(s, i, FXT_STR_LOST, lrec, lbytes, ts);
      live_lost(info->live_cpu, lrec, false);
      fx.rep[2] = rs.lost_records;
      fx.rep[3] = rs.lost_bytes;
      wrote = true;
    }
    if (nested != fx.rep_nested) {
      write_loss(s, i, FXT_STR_LOST, nested - fx.rep_nested, 0, ts);
      live_lost(info->live_cpu, nested - fx.rep_nested, false);
      fx.rep_nested = nested;
      wrote = true;
    }
    write_metadata(); /* strings interned before the copy: every staged ref is covered */
    /* Signal-context records of this thread, merged by time (all of them once the ring is
     * empty: they are newer than anything left in it). */
    unsigned char *chunk;
    uint32_t ring_used;
    uint32_t len = merge_held(i, fx.st.data, fx.st.len, fx.st.len == 0, safe_end, &chunk,
                              &ring_used);
    fx.st.len = ring_used; /* the rest stays in the ring for the next chunk */
    fx.st.to = fx.st.from + ring_used;
    if (len == 0) {
      if (wrote)
        commit(NULL, 0, &fx); /* the loss records, and what they report */
      break;
    }
    if (put_cpu && ring_used) {
      /* At the time of the chunk's first record (ts_of: the thread's order), so that the
       * signal-context records merged in front of the ring's stay in order behind it. */
      uint64_t h, w[6];
      memcpy(&h, chunk, 8);
      out_write(&C.out, w, encode_cpu(s, i, cpu, ts_of(chunk, fxt_ring_record_bytes(h)), w));
    }
    uint64_t events_before = info->events_read, dropped_before = info->dropped_total;
    uint32_t last_cpu;
    live_feed(chunk, len, (uint32_t)info->tid, info->comm, &info->live_cpu, &info->events_read,
              &info->dropped_total, &last_cpu);
    if (ring_used) {
      /* The CPU at the end of what is staged, noted before the claim moves the tail there
       * (cpunote.h (N1): deliver.c's claim is a release); the note kept is the one for the
       * end of the previous claim. The feed's walk found the chunk's last cpu record, unless
       * signal-context records were merged into it (then a walk of the ring's part). */
      if (chunk != fx.st.data || len != ring_used)
        last_cpu = fxt_cpu_after(fx.st.data, ring_used, FXT_CPU_NOTE_NONE);
      info->ring_cpu = last_cpu != FXT_CPU_NOTE_NONE ? last_cpu : cpu;
      fxt_cpu_note_put(e->cons_cpu_note, info->ring_pos, fx.st.to, info->ring_cpu);
      info->ring_pos = fx.st.to;
    }
    atomic_store_explicit(&info->events_read_pub, info->events_read, memory_order_relaxed);
    atomic_store_explicit(&info->dropped_pub, info->dropped_total, memory_order_relaxed);
    if (C.out.error) {
      /* The output failed: nothing is written any more; what the chunk held is counted. */
      C.unwritten_records +=
          info->events_read - events_before + info->dropped_total - dropped_before;
      commit(NULL, 0, &fx);
    } else if (C.out.limit && C.out.written + len > C.out.limit) {
      /* Past max_file_kb: the chunk is not written, and what it held is counted in-band as
       * the thread's lost events (its events, and the drops its drop_stats reported); the
       * small bookkeeping record may go past the limit. */
      uint64_t lost = info->events_read - events_before + info->dropped_total - dropped_before;
      write_loss(s, i, FXT_STR_LOST, lost, len, ts);
      C.capped_records += lost;
      commit(NULL, 0, &fx);
    } else {
      C.out.written += len;
      /* Records on ring pages the kernel has not read yet go through the staging area (a
       * copy at ~10 GB/s, against ~2.7 ms a MiB for the kernel's first access to a page on a
       * VM with shadow paging; fxt_slots_kernel_warm reads them between passes). */
      const unsigned char *from = chunk;
      if (chunk == fx.st.data && chunk != C.stage &&
          !fxt_slot_kernel_warm(s, i, fx.st.from, len)) {
        memcpy(C.stage, chunk, len);
        from = C.stage;
      }
      commit(from, len, &fx);
      if (C.out.error) /* this write failed: the file kept the chunk's first kept_b bytes */
        C.unwritten_records += records_in(chunk + C.out.kept_b, len - C.out.kept_b);
      info->loss_total += info->dropped_total - dropped_before; /* its drop_stats records */
    }
    write_dropped(s, i, ts);
    total += fx.st.len;
  }
  info->delivered_bytes += total;
  write_dropped(s, i, fxt_ticks()); /* losses written with nothing after them */
  atomic_store_explicit(&t->wake_sent, 0, memory_order_relaxed); /* drained: wake me again */
  return total;
}

static uint64_t drain_slot(struct session *s, uint32_t i)
{
  return drain_slot_to(s, i, false, NULL);
}

/* A slot whose thread is gone (or, at stop, every slot: the handshake has run): write the
 * pending drop statistics as its producer, drain, and for an exited thread free the slot. */
static void finish_slot(struct session *s, uint32_t i, bool free_it)
{
  struct fxt_tslot *t = session_slot(s, i);
  drain_slot(s, i);
  for (;;) {
    if (t->w.drop_records | t->w.drop_bytes)
      fxt_pass_oldest(s, t, FXT_DROP_STATS_BYTES); /* as its producer (overwrite mode) */
    if (fxt_writer_emit_drop_stats(&t->w) == 0)
      break;
    drain_slot(s, i);
  }
  drain_slot(s, i);
  if (free_it)
    fxt_slot_free(s, i);
}

/* ---- requests served between passes (snapshots, a flight recorder's `trace`) ------------- *
 * A thread asks the consumer for work through a state word: it moves IDLE -> CLAIMED
 * (compare-and-swap: one request at a time), stores what the work needs, moves CLAIMED ->
 * REQUESTED (release), wakes the consumer and polls. The consumer, between passes, moves
 * REQUESTED -> WORKING, does the work and moves WORKING -> DONE; the requester takes the
 * result and moves DONE -> IDLE. A requester that gives up moves REQUESTED -> IDLE (the work
 * never began) or WORKING -> ABANDONED (the consumer then undoes what it must and moves it to
 * IDLE). Each release store pairs with the acquire load or compare-and-swap of the other
 * side, so what the request holds and what the work produced are handed over with the state.
 * Async-signal-safe on the requester's side (atomics, nanosleep, a futex wake). */
enum { REQ_IDLE, REQ_CLAIMED, REQ_REQUESTED, REQ_WORKING, REQ_DONE, REQ_ABANDONED };

/* Requester: IDLE -> CLAIMED; false when another request is under way. */
static bool req_claim(_Atomic int *state)
{
  int want = REQ_IDLE;
  return atomic_compare_exchange_strong_explicit(state, &want, REQ_CLAIMED, memory_order_relaxed,
                                                 memory_order_relaxed);
}

/* Requester, after req_claim and storing the request: CLAIMED -> REQUESTED, then waits at
 * most about timeout_ms for DONE. Returns REQ_DONE, or the state it gave up in: REQ_REQUESTED
 * (now IDLE: the consumer never saw it) or REQ_WORKING (now ABANDONED). */
static int req_wait(struct session *s, _Atomic int *state, uint32_t timeout_ms)
{
  /* Release: pairs with req_take's acquire (the request is stored). */
  atomic_store_explicit(state, REQ_REQUESTED, memory_order_release);
  fxt_consumer_wake(s);
  for (uint32_t waited = 0;; waited++) {
    /* Acquire: pairs with req_done's release (the work is done). */
    if (atomic_load_explicit(state, memory_order_acquire) == REQ_DONE)
      return REQ_DONE;
    if (waited >= timeout_ms) {
      int want = REQ_REQUESTED;
      if (atomic_compare_exchange_strong_explicit(state, &want, REQ_IDLE, memory_order_relaxed,
                                                  memory_order_relaxed))
        return REQ_REQUESTED;
      want = REQ_WORKING;
      if (atomic_compare_exchange_strong_explicit(state, &want, REQ_ABANDONED,
                                                  memory_order_relaxed, memory_order_relaxed))
        return REQ_WORKING;
      continue; /* DONE meanwhile */
    }
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
}

/* Consumer: REQUESTED -> WORKING (acquire: pairs with req_wait's release); false when nothing
 * is requested. */
static bool req_take(_Atomic int *state)
{
  int want = REQ_REQUESTED;
  return atomic_compare_exchange_strong_explicit(state, &want, REQ_WORKING, memory_order_acquire,
                                                 memory_order_relaxed);
}

/* Consumer: WORKING -> DONE (release: pairs with req_wait's acquire); false, and the state
 * IDLE, when the requester abandoned the work. */
static bool req_done(_Atomic int *state)
{
  int want = REQ_WORKING;
  if (atomic_compare_exchange_strong_explicit(state, &want, REQ_DONE, memory_order_release,
                                              memory_order_relaxed))
    return true;
  atomic_store_explicit(state, REQ_IDLE, memory_order_relaxed); /* abandoned */
  return false;
}

/* ---- snapshots (fxt_snapshot) ------------------------------------------------------------ *
 * A request (above) whose work is writing the file the requester opened: it hands fd over in
 * the request, the consumer closes it and hands back rc. A requester that gives up before
 * the work began closes the file itself. */
static struct {
  _Atomic int state;
  int fd, rc;
  unsigned char *copy; /* a ring's records (consumer thread; buffer_bytes) */
  size_t copy_bytes;
} snap;

/* The ring's committed records now, oldest first, into snap.copy: a contiguous run of whole
 * records (the iterator never returns a torn one; when the producer overwrote records under
 * it, what was copied before the gap is dropped, so the run has no hole). Returns its bytes;
 * *cpu: the CPU in effect at its first record (cpunote.h), or FXT_CPU_NOTE_NONE. */
static uint32_t snap_copy_ring(struct session *s, uint32_t i, bool *lapped, uint32_t *cpu)
{
  struct fxt_cpu_iter it;
  fxt_cpu_iter_begin(&it, &session_slot(s, i)->w.ring, sh_slot(s, i));
  uint32_t len = 0, n = 0;
  *lapped = false;
  *cpu = FXT_CPU_NOTE_NONE;
  for (;;) {
    bool gap;
    int rc = fxt_cpu_iter_next(&it, snap.copy + len, (uint32_t)snap.copy_bytes - len, &n, cpu,
                               &gap);
    if (gap) { /* keep only what follows it */
      *lapped = true;
      if (rc == 1)
        memmove(snap.copy, snap.copy + len, n);
      len = 0;
    }
    if (rc != 1)
      return len;
    len += n;
  }
}

/* Slot i's thread and records, when it has any. */
static void snap_slot(struct session *s, uint32_t i)
{
  uint32_t state = atomic_load_explicit(&s->info[i].state, memory_order_acquire);
  if (state == SLOT_FREE)
    return;
  struct fxt_tslot *t = session_slot(s, i);
  /* A producer that laps the copy leaves only what follows the last gap, possibly nothing (a
   * small ring written flat out while the copy walks it, as under TSan): copy again then. */
  bool lapped = false;
  uint32_t len = 0, cpu = FXT_CPU_NOTE_NONE;
  for (int tries = 0; tries < 64 && len == 0 && (tries == 0 || lapped); tries++)
    len = snap_copy_ring(s, i, &lapped, &cpu);
  if (len == 0)
    return;
  write_metadata(); /* strings interned before the copy: every ref in it is covered */
  if (t->thread_bits) {
    struct fxt_thread th = {(uint8_t)(t->thread_bits >> 24), (uint64_t)s->pid,
                            (uint64_t)s->info[i].tid};
    EMIT(fxt_encode_thread, &th);
  }
  write_kobj_thread(s, &s->info[i]);
  /* The CPU its first events ran on, unless the first record says it: the `cpu` record that
   * did was passed or taken before the copy. */
  uint64_t h;
  memcpy(&h, snap.copy, 8);
  if (cpu != FXT_CPU_NOTE_NONE &&
      fxt_cpu_of_record(snap.copy, fxt_ring_record_bytes(h)) == FXT_CPU_NOTE_NONE) {
    uint64_t w[6];
    out_write(&C.out, w, encode_cpu(s, i, cpu, first_ts(snap.copy, len), w));
  }
  out_write(&C.out, snap.copy, len);
}

/* Writes the snapshot into snap.fd: a file of its own (header, every thread's records, clock
 * sync), written with the consumer's writers while its own output's state is set aside. */
static int snap_write(struct session *s)
{
  if (!snap.copy || snap.copy_bytes < s->buffer_bytes) {
    free(snap.copy);
    snap.copy_bytes = s->buffer_bytes;
    snap.copy = malloc(snap.copy_bytes);
    if (!snap.copy)
      return FXT_ENOMEM;
  }
  static uint8_t described[sizeof(C.described)];
  struct out saved = C.out;
  uint32_t strings_end = C.strings_end, registry_gen = C.registry_gen;
  memcpy(described, C.described, sizeof(described));
  memset(C.described, 0, sizeof(C.described));
  /* The output's buffered bytes stay in its buffer: the snapshot has one of its own. */
  unsigned char *buf = malloc(OUT_BYTES);
  C.out = (struct out){.fd = snap.fd, .buf = buf, .direct = true};
  int rc = buf ? 0 : FXT_ENOMEM;
  if (rc == 0) {
    write_header(s, false);
    for (uint32_t i = 0; i < s->nslots; i++)
      snap_slot(s, i);
    write_metadata();
    write_clock_sync(s, false);
    commit(NULL, 0, NULL);
    rc = C.out.error ? -C.out.error : 0;
  }
  free(buf);
  C.out = saved;
  C.strings_end = strings_end;
  C.registry_gen = registry_gen;
  memcpy(C.described, described, sizeof(described));
  return rc;
}

/* Serves a pending request (consumer thread, between passes). */
static void snap_serve(struct session *s)
{
  if (!req_take(&snap.state))
    return;
  snap.rc = snap_write(s);
  close(snap.fd);
  req_done(&snap.state); /* (abandoned: nothing to undo, the file is written and closed) */
}

int fxt_consumer_snapshot(struct session *s, int fd, uint32_t timeout_ms)
{
  if (!req_claim(&snap.state))
    return FXT_EBUSY;
  snap.fd = fd;
  int st = req_wait(s, &snap.state, timeout_ms);
  if (st == REQ_DONE) {
    int rc = snap.rc;
    atomic_store_explicit(&snap.state, REQ_IDLE, memory_order_relaxed);
    return rc;
  }
  if (st == REQ_REQUESTED)
    close(fd); /* the consumer never had it */
  return FXT_EAGAIN;
}

/* ---- a flight recorder's `trace` (fxt_consumer_view_hold) -------------------------------- *
 * A flight recorder's consumer leaves the live threads' rings alone, and `trace` must not
 * consume, so a reader has the consumer copy what the rings hold into the live view's copies
 * (live.h): a request (above) whose work is view_refresh, after which the requester reads the
 * view and moves DONE -> IDLE itself (fxt_consumer_view_release; release store). While the
 * state is DONE, a pass moves no ring's records into the view (its acquire load of the state
 * pairs with that release store): a record the copies hold cannot arrive in the view a
 * second time while a reader shows both, and the reader is done with the copies before any
 * pass goes on. A requester that gives up leaves the copies to the consumer, which empties
 * them. One requester at a time: session.c holds the session's lifecycle lock from the
 * request to the release, so the session cannot stop in between either. */
static struct {
  _Atomic int state;
  struct view_src *src; /* consumer thread: a ring being copied, per slot */
  uint32_t nsrc;        /* allocated */
} view;

#define VIEW_WINDOW 4096u /* bytes of records copied from a ring at a time */

/* A ring being copied: the next records of its non-consuming iterator, oldest first. */
struct view_src {
  struct fxt_cpu_iter it;
  unsigned char *win;
  uint32_t cap, len, off; /* win's bytes, of whole records, the next one */
  uint32_t cpu;           /* the thread's CPU at win + off, as its stream says */
  uint32_t slot;
};

/* The next records of v's ring into its window: whole ones (the iterator never returns a torn
 * record; where the producer overwrote records under it, it goes on from the oldest left, and
 * they are counted in its overrun). The first record, and the first after such a gap, get the
 * thread's `cpu` record in front when they do not begin with one and its CPU is known
 * (cpunote.h): the one that named it was passed. A record larger than the window grows it.
 * False at the end. */
static bool src_fill(struct session *s, struct view_src *v)
{
  v->len = v->off = 0;
  for (;;) {
    uint32_t n = 0, cpu = FXT_CPU_NOTE_NONE;
    bool gap;
    /* Room kept for a `cpu` record (48 bytes at most) in front of the record. */
    uint32_t room = v->cap - v->len > 48 ? v->cap - v->len - 48 : 0;
    int rc = fxt_cpu_iter_next(&v->it, v->win + v->len + 48, room, &n, &cpu, &gap);
    if (rc == 1) {
      uint64_t h, w[6];
      memcpy(&h, v->win + v->len + 48, 8);
      uint32_t c = 0;
      if (cpu != FXT_CPU_NOTE_NONE &&
          fxt_cpu_of_record(v->win + v->len + 48, fxt_ring_record_bytes(h)) == FXT_CPU_NOTE_NONE)
        c = encode_cpu(s, v->slot, cpu, ts_of(v->win + v->len + 48, n), w);
      memcpy(v->win + v->len, w, c);
      memmove(v->win + v->len + c, v->win + v->len + 48, n);
      v->len += c + n;
      continue;
    }
    if (rc == FXT_ENOBUFS && v->len == 0) {
      unsigned char *w = realloc(v->win, n + 48);
      if (!w)
        return false;
      v->win = w;
      v->cap = n + 48;
      continue;
    }
    return v->len != 0;
  }
}

static uint32_t src_rec_bytes(const struct view_src *v, uint32_t off)
{
  uint64_t h;
  memcpy(&h, v->win + off, 8);
  return fxt_ring_record_bytes(h);
}

/* The time of v's record at off, as its thread's stream is ordered (ts_of). */
static uint64_t src_ts(const struct view_src *v, uint32_t off)
{
  return ts_of(v->win + off, src_rec_bytes(v, off));
}

/* Slot i's losses that no loss record reports yet (what a drain would report in front of the
 * records the copy holds), into the copies' counts. */
static void view_losses(struct session *s, uint32_t i)
{
  struct fxt_tslot *t = session_slot(s, i);
  struct fxt_sh_slot *e = sh_slot(s, i);
  struct fxt_ring_stats rs;
  fxt_ring_stats(&t->w.ring, &rs);
  uint32_t orec = unreported(rs.overrun_records,
                             atomic_load_explicit(&e->credit_records, memory_order_relaxed),
                             atomic_load_explicit(&e->rep_overrun_records, memory_order_relaxed));
  uint64_t lost =
      (uint32_t)(rs.lost_records -
                 atomic_load_explicit(&e->rep_lost_records, memory_order_relaxed)) +
      atomic_load_explicit(&t->lost, memory_order_relaxed) -
      atomic_load_explicit(&e->rep_nested, memory_order_relaxed);
  if (orec)
    live_copy_lost(s->info[i].live_cpu, orec, true);
  if (lost)
    live_copy_lost(s->info[i].live_cpu, lost, false);
}

/* Refills the view's copies with what every ring holds now (consumer thread, between passes;
 * nothing is consumed and no slot counter moves). The rings' records go in merged by time, a
 * window of each at a time, so that where a CPU's copy is full its oldest records give way, as
 * in the kernel's ring buffer, whichever thread they are of. */
static void view_refresh(struct session *s)
{
  if (live_copy_begin() != 0)
    return;
  if (view.nsrc < s->nslots) {
    struct view_src *v = realloc(view.src, s->nslots * sizeof(*v));
    if (!v)
      return;
    memset(v + view.nsrc, 0, (s->nslots - view.nsrc) * sizeof(*v));
    view.src = v;
    view.nsrc = s->nslots;
  }
  uint32_t n = 0; /* rings with records: view.src[0..n) */
  for (uint32_t i = 0; i < s->nslots; i++) {
    /* Acquire pairs with the attaching thread's release of LIVE (the ring is set up); only
     * this thread frees a slot, so its ring stays this thread's to read meanwhile. */
    if (atomic_load_explicit(&s->info[i].state, memory_order_acquire) == SLOT_FREE)
      continue;
    struct view_src *v = &view.src[n];
    if (!v->win && (v->win = malloc(VIEW_WINDOW)) != NULL)
      v->cap = VIEW_WINDOW;
    if (!v->win)
      break;
    view_losses(s, i); /* before the copy: what it counts is older than what is copied */
    fxt_cpu_iter_begin(&v->it, &session_slot(s, i)->w.ring, sh_slot(s, i));
    v->cpu = s->info[i].live_cpu; /* until a `cpu` record says (src_fill puts one first) */
    v->slot = i;
    n += src_fill(s, v);
  }
  for (;;) {
    /* The ring whose next record is the oldest takes its records up to the next ring's. */
    int best = -1;
    uint64_t best_ts = 0, next_ts = UINT64_MAX;
    for (uint32_t k = 0; k < n; k++) {
      if (view.src[k].off == view.src[k].len)
        continue;
      uint64_t ts = src_ts(&view.src[k], view.src[k].off);
      if (best < 0 || ts < best_ts) {
        next_ts = best < 0 ? next_ts : best_ts;
        best = (int)k;
        best_ts = ts;
      } else if (ts < next_ts) {
        next_ts = ts;
      }
    }
    if (best < 0)
      break;
    struct view_src *v = &view.src[best];
    uint32_t end = v->off;
    do
      end += src_rec_bytes(v, end);
    while (end < v->len && src_ts(v, end) <= next_ts);
    const struct slot_info *info = &s->info[v->slot];
    live_copy_feed(v->win + v->off, end - v->off, (uint32_t)info->tid, info->comm, &v->cpu);
    v->off = end;
    if (v->off == v->len)
      src_fill(s, v);
  }
}

static void view_serve(struct session *s)
{
  if (!req_take(&view.state))
    return;
  view_refresh(s);
  if (!req_done(&view.state))
    live_copy_clear(); /* abandoned: before the next pass feeds the view */
}

int fxt_consumer_view_hold(struct session *s, uint32_t timeout_ms)
{
  if (!req_claim(&view.state))
    return FXT_EBUSY; /* an abandoned refresh is still under way */
  return req_wait(s, &view.state, timeout_ms) == REQ_DONE ? 0 : FXT_EAGAIN;
}

void fxt_consumer_view_release(void)
{
  live_copy_clear();
  /* Release: pairs with pass()'s acquire load (the reader is done with the view). */
  atomic_store_explicit(&view.state, REQ_IDLE, memory_order_release);
}

/* A live slot in a pass. A pass that only the poll timer started (`timer`: no thread woke the
 * consumer, no reader waits on trace_pipe) takes a buffer below its wake mark only up to where
 * its head was at the previous such pass: records that have waited a whole poll period. A
 * burst that fits below the mark is so written after it, instead of competing with it for
 * the CPUs; a trickle of events is in the file within two poll periods. */
static void drain_live(struct session *s, uint32_t i, bool timer)
{
  struct fxt_tslot *t = session_slot(s, i);
  struct slot_info *info = &s->info[i];
  /* Acquire pairs with the producer's release of head (ring.c (1)). */
  uint32_t head = atomic_load_explicit(&t->w.ring.head, memory_order_acquire);
  uint32_t tail = atomic_load_explicit(&t->w.ring.tail, memory_order_relaxed);
  bool seen = info->poll_gen == info->owner_gen; /* poll_head is of this owner's ring */
  if (timer && head - tail <= t->wake_mark) {
    uint32_t upto = seen ? info->poll_head : tail;
    drain_slot_to(s, i, true, &upto);
  } else {
    drain_slot_to(s, i, true, NULL);
  }
  info->poll_head = head;
  info->poll_gen = info->owner_gen;
}

/* A pass drains the live slots, except in a flight recorder, which keeps its threads'
 * records in their rings until a trace_pipe is open (it consumes, as the kernel's does); a
 * flight recorder's `trace` reader showing copies of the rings (view.state DONE; acquire
 * pairs with fxt_consumer_view_release) holds back every ring's records, exited threads'
 * too, until it is done. */
static void pass(struct session *s, bool timer)
{
  timer = timer && !live_has_waiters();
  bool flight = fxt_flight_recorder(s);
  bool held = flight && atomic_load_explicit(&view.state, memory_order_acquire) == REQ_DONE;
  bool drain = !flight || (!held && live_pipe_readers());
  for (uint32_t i = 0; i < s->nslots; i++) {
    uint32_t state = atomic_load_explicit(&s->info[i].state, memory_order_acquire);
    if (state == SLOT_LIVE && drain)
      drain_live(s, i, timer);
    else if (state == SLOT_EXITED && !held)
      finish_slot(s, i, true);
  }
  refresh_names(s);
  write_metadata();
  /* About once a second a clock sync in the file, so that readers follow the counter's drift
   * against CLOCK_MONOTONIC through a long trace, and a crash leaves a recent one behind. */
  if (fxt_ticks_slow() - C.last_sync_ns >= SYNC_NS)
    write_clock_sync(s, false);
  fxt_buffers_maintain(s); /* the latest clock sync, room for new strings */
  /* Hand each pass to the kernel: a process killed without running its exit handlers still
   * leaves a readable file with everything drained so far. */
  out_flush();
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

/* The output failed (out.error): the file ends at the last whole write before the failure,
 * and nothing was written since. One last small try: a `lost` record of the process (thread
 * koid 0) counting the records not written, and the closing clock sync; if even that does not
 * fit, it is cut off again and the count is only on stderr. */
static void write_failed_tail(struct session *s)
{
  int error = C.out.error;
  C.out.len = 0; /* what is buffered could not be written either */
  bool counted = false;
  if (!C.out.torn) { /* records after a torn one would be read from inside it */
    C.out.error = 0;
    if (C.unwritten_records)
      write_process_loss(s, C.unwritten_records);
    write_clock_sync(s, false);
    out_flush();
    counted = C.out.error == 0;
    C.out.error = error;
  }
  fprintf(stderr,
          "fxtrace: %s: write failed at byte %llu: %s; stopped writing there: %llu records not "
          "written (%s)\n",
          s->output, (unsigned long long)C.out.failed_at, strerror(error),
          (unsigned long long)C.unwritten_records,
          counted      ? "counted in the file as lost, thread 0"
          : C.out.torn ? "not counted in the file: it ends inside a record, which a shared "
                         "stdout is not cut back to"
                       : "not counted in the file: no room");
}

/* Bytes the consumer writes for the first time between two looks at the wake word: 64 pages,
 * ~1 ms on a VM with shadow paging (~15 us a page). */
#define WARM_STEP (256u << 10)

/* Between passes, until a producer wakes the consumer (wake moved from w): first writes and
 * first kernel reads of what the passes will touch, a step at a time, so that they are not
 * paid inside a pass (the order is in the loop). Never before the first pass, nor in one go:
 * a producer that starts at once filled its 4 MiB buffer (8.7 ms at 10 M events/s) while the
 * consumer wrote ~6 MiB for the first time at its start, and lost events in 5 of 8 runs on
 * such a VM. The staging areas (3 MiB, for records that wrap, flight recorders and
 * signal-context records) hold nothing between passes. */
static void warm_between_passes(struct session *s, uint32_t w)
{
  static size_t own; /* bytes of the staging areas done: they live as long as the process */
  while (atomic_load_explicit(&s->wake, memory_order_relaxed) == w) {
    /* What the next pass reads and writes first: the live rings for the kernel, the staging
     * area a pass writes their first lap from, the file's next pages, the view; then the
     * area of merged signal-context records and the rest of what is allocated ahead. */
    if (fxt_slots_kernel_warm(s))
      continue;
    if (own < STAGE_BYTES * 3) { /* STAGE_BYTES is a multiple of WARM_STEP */
      unsigned char *p = own < STAGE_BYTES ? C.stage + own : C.merged + (own - STAGE_BYTES);
      fxt_write_pages(p, WARM_STEP);
      fxt_kernel_touch(p, WARM_STEP);
      own += WARM_STEP;
      if (own <= STAGE_BYTES)
        continue;
    }
    if (out_prealloc(PREALLOC_AHEAD / 4) || live_warm(WARM_STEP) || own < STAGE_BYTES * 3 ||
        out_prealloc(PREALLOC_AHEAD))
      continue;
    fxt_slots_prewarm(s); /* returns as soon as wake moves */
    break;
  }
}

static void *consumer_main(void *arg)
{
  struct session *s = arg;
  prctl(PR_SET_NAME, "fxtrace-consumer"); /* signals: blocked from birth (fxt_consumer_start) */
  bool timer = false; /* the first pass takes everything */
  for (;;) {
    uint32_t w = atomic_load_explicit(&s->wake, memory_order_acquire);
    /* Acquire pairs with fxt_consumer_stop's release: the stop handshake is complete. */
    bool stopping = atomic_load_explicit(&s->stop, memory_order_acquire);
    if (stopping)
      break;
    pass(s, timer);
    snap_serve(s);
    view_serve(s);
    fxt_buffers_harvest_children(s, false); /* children that died unstopped (buffers.c) */
    pass_done();
    warm_between_passes(s, w);
    struct timespec to = {0, live_has_waiters() ? POLL_LIVE_NS : POLL_NS};
    syscall(SYS_futex, &s->wake, FUTEX_WAIT_PRIVATE, w, &to, NULL, 0);
    /* Woken (a wake mark, a flush, a snapshot, a stop), or only the timer: nobody bumped wake
     * since it was loaded above, during the pass or the wait. */
    timer = atomic_load_explicit(&s->wake, memory_order_acquire) == w;
  }
  /* Last pass: no thread emits any more; the consumer is every writer's producer now. */
  for (uint32_t i = 0; i < s->nslots; i++) {
    uint32_t state = atomic_load_explicit(&s->info[i].state, memory_order_acquire);
    if (state != SLOT_FREE)
      finish_slot(s, i, state == SLOT_EXITED);
  }
  /* Threads that never got a buffer: what is not reported yet (rep_no_slot is applied with
   * the commit that writes it, so a recovery reports the rest once). */
  uint64_t no_slot = atomic_load_explicit(&s->sh->no_slot_drops, memory_order_relaxed);
  uint64_t fresh = no_slot - atomic_load_explicit(&s->sh->rep_no_slot, memory_order_relaxed);
  out_reserve(4096);
  if (fresh)
    write_process_loss(s, fresh);
  C.no_slot_written = fresh;
  atomic_store_explicit(&C.no_buffer_lost, no_slot, memory_order_relaxed);
  write_metadata();
  write_clock_sync(s, false);
  out_flush();
  if (C.capped_records)
    fprintf(stderr, "fxtrace: %s: %llu events not written (max_file_kb=%llu; counted in the file)\n", s->output,
            (unsigned long long)C.capped_records, (unsigned long long)s->cfg.max_file_kb);
  if (C.out.error)
    write_failed_tail(s);
  if (C.out.fd > 1) {
    out_prealloc_release();
    fxt_outfile_close(C.out.fd, s->output, C.out.error == 0);
  }
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
  C.unwritten_records = 0;
  C.last_comm_check = 0;
  atomic_store_explicit(&C.nested_records, 0, memory_order_relaxed);
  atomic_store_explicit(&C.no_buffer_lost, 0, memory_order_relaxed);
  if (!C.stage)
    C.stage = malloc(STAGE_BYTES);
  if (!C.merged)
    C.merged = malloc(STAGE_BYTES * 2);
  C.s = s;
  C.seq = atomic_load_explicit(&s->sh->intent_seq, memory_order_relaxed) + 1;
  C.seq = C.seq ? C.seq : 1;
  C.held_taken = false;
  C.no_slot_written = 0;
  /* No `trace` reader holds the view (session.c: its lifecycle lock is ours now); one that
   * gave up on the last consumer, or a parent's across fork, left nothing to wait for. */
  atomic_store_explicit(&view.state, REQ_IDLE, memory_order_relaxed);
  if (!C.out.buf) {
    unsigned char *b = malloc(SECTION_BYTES + OUT_BYTES);
    C.out.buf = b ? b + SECTION_BYTES : NULL; /* room for a provider section before it */
  }
  if (!C.stage || !C.merged || !C.out.buf)
    return FXT_ENOMEM;
  C.out.len = 0;
  C.out.written = 0;
  C.out.file_len = 0;
  C.out.error = 0;
  C.out.failed_at = 0;
  C.out.torn = false;
  C.out.limit = s->cfg.max_file_kb * 1024;
  if (s->output[0] == 0)
    C.out.fd = -1;
  else if (strcmp(s->output, "-") == 0)
    C.out.fd = dup(1);
  else if (s->output_append) /* after exec: the previous image's trace is in it (buffers.c) */
    C.out.fd = fxt_outfile_open_append(s->output, &C.out.file_len);
  else
    C.out.fd = fxt_outfile_open(s->output);
  struct stat st;
  bool to_stdout = strcmp(s->output, "-") == 0;
  bool regular = C.out.fd >= 0 && fstat(C.out.fd, &st) == 0 && S_ISREG(st.st_mode);
  C.out.prealloc = s->output[0] && !to_stdout && regular && C.out.limit == 0;
  C.out.prealloc_end = 0;
  if (s->output[0] && C.out.fd < 0) {
    int e = errno;
    fprintf(stderr, "fxtrace: %s: %s\n", s->output, strerror(e));
    return -e; /* ENOENT, EROFS, EMFILE, ...: fxt_strerror says it in the system's words */
  }
  /* stdout on a regular file: each write's place in it goes in its intent (stdout_place). */
  int fl = to_stdout && regular ? fcntl(C.out.fd, F_GETFL) : -1;
  C.out.shared_stdout = fl >= 0;
  C.out.append = fl >= 0 && (fl & O_APPEND);
  C.out.sections = to_stdout;
  const char *die = getenv("FXTRACE_TEST_DIE_IN_WRITE");
  die_in_write = !die ? 0 : strcmp(die, "before") == 0 ? 1 : strcmp(die, "after") == 0 ? 2 : 0;
  /* The file's identity, before it holds anything of this session: a harvest by another
   * process writes into what the path names only while it is this file (harvest.h); for
   * stdout on a regular file, the file a harvester reads the last write back from. */
  struct stat ost;
  bool own_file = C.out.fd >= 0 && (!to_stdout || C.out.shared_stdout) &&
                  fstat(C.out.fd, &ost) == 0;
  atomic_store_explicit(&s->sh->out_dev, own_file ? (uint64_t)ost.st_dev : 0,
                        memory_order_relaxed);
  atomic_store_explicit(&s->sh->out_ino, own_file ? (uint64_t)ost.st_ino : 0,
                        memory_order_relaxed);
  /* Not known, for good, but where each write to such a stdout says (stdout_place). */
  atomic_store_explicit(&s->sh->intent_out_pos, UINT64_MAX, memory_order_relaxed);
  /* What the file holds before this session's records is whole (a recovery keeps it); the
   * records that follow carry no magic record of their own (docs/fxt-conventions.md:
   * single-process traces concatenated). */
  atomic_store_explicit(&s->sh->committed, C.out.file_len, memory_order_relaxed);
  C.no_magic = C.out.file_len != 0;
  write_header(s, true);
  out_flush();
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
