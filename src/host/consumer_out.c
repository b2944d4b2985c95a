/* consumer_out.c - the consumer's output: its buffer and writes (a failed one cut back to
 * whole records), the file's pages allocated ahead, the records the consumer writes itself
 * (metadata: strings, descriptions, threads; losses, clock syncs, the file head), and the commit
 * protocol every write goes through (consumer.c's comment; docs/recovery.md). */
#define _GNU_SOURCE
#include "consumer_int.h"

#include "../base/namefix.h"

/* ---- output ------------------------------------------------------------------------------ */

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
uint64_t fxt_cons_records_in(const unsigned char *p, size_t len)
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

/* Whether o->fd is still the output (outfile.h: the program may have closed it and given its
 * number to a file of its own). If not, a path is opened again when it still names the file,
 * and the writes go on where they were; else nothing more is written (EBADF: the stop says
 * "write failed at byte N: Bad file descriptor" and counts what was not written),
 * and the descriptor, not ours, is never closed. A snapshot's file (no id) is not checked. */
static bool out_ours(struct out *o)
{
  if (o->fd != OUT_LOST) {
    if (o->id.ino == 0 || fxt_fd_is(o->fd, o->id))
      return true;
    uint64_t size;
    const char *path = fxt_cons.s->output;
    int fd = fxt_outfile_fd(path) < 0 ? fxt_outfile_open_append(path, &size) : -1;
    if (fd >= 0 && fxt_fd_is(fd, o->id) &&
        lseek(fd, (off_t)o->file_len, SEEK_SET) == (off_t)o->file_len) {
      o->fd = fd;
      return true;
    }
    if (fd >= 0)
      close(fd);
  }
  o->fd = OUT_LOST;
  if (!o->error) {
    o->error = EBADF;
    o->failed_at = o->file_len;
  }
  return false;
}

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
  if (!out_ours(o))
    return;
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
 * nor for stdout. What is left ahead at the end is given back (out_prealloc_release). How
 * far and in which steps: PREALLOC_AHEAD, PREALLOC_STEP (consumer_int.h). */

bool fxt_cons_out_prealloc(uint64_t ahead)
{
  struct out *o = &fxt_cons.out;
  if (!o->prealloc || o->error)
    return false;
  if (o->prealloc_end < o->file_len)
    o->prealloc_end = o->file_len;
  if (o->prealloc_end >= o->file_len + ahead)
    return false;
  if (!out_ours(o))
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
__attribute__((cold)) void fxt_cons_out_prealloc_release(void)
{
  struct out *o = &fxt_cons.out;
  struct stat st;
  if (o->prealloc_end == 0 || !out_ours(o) || fstat(o->fd, &st) != 0 ||
      (uint64_t)st.st_size >= o->prealloc_end)
    return;
  if (fallocate(o->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, st.st_size,
                (off_t)o->prealloc_end - st.st_size) != 0 &&
      ftruncate(o->fd, st.st_size) != 0)
    return; /* only room held: nothing of the trace */
  o->prealloc_end = 0;
}

/* Buffered records go out (a commit of their own). */
void fxt_cons_out_flush(void)
{
  fxt_cons_commit(NULL, 0, NULL);
}

/* Makes room for n bytes of whole records in the buffer. */
void fxt_cons_out_reserve(size_t n)
{
  if (fxt_cons.out.len + n > OUT_BYTES)
    fxt_cons_out_flush();
}

/* Buffers one whole record (or several): a record is never split across two writes, so every
 * commit ends on a record boundary. */
void fxt_cons_out_write(struct out *o, const void *p, size_t n)
{
  o->written += n;
  if (o->fd < 0)
    return;
  if (n > OUT_BYTES - o->len)
    fxt_cons_out_flush();
  if (n > OUT_BYTES) { /* cannot happen: records are at most 32 KiB */
    write_all(o, NULL, 0, p, n);
    return;
  }
  memcpy(o->buf + o->len, p, n);
  o->len += n;
}

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
  for (; fxt_cons.strings_end < end; fxt_cons.strings_end++) {
    const char *text;
    uint32_t len;
    if (fxt_cons.strings_end <= FXT_META_STRING_LAST &&
        !fxt_intern_lookup(fxt_cons.strings_end, &text, &len))
      continue; /* an unused reserved index */
    if (!fxt_intern_lookup(fxt_cons.strings_end, &text, &len))
      break; /* still being interned: next pass */
    if (len == 0)
      continue;
    struct fxt_string rec = {(uint16_t)fxt_cons.strings_end, (uint16_t)len, text};
    EMIT(fxt_encode_string, &rec);
  }
}

/* Whether the strings tp's description refers to (system, name, field names) are in the file
 * already: a tracepoint registered after write_strings ran has its names interned after it. */
static bool described_strings_written(const struct fxt_tracepoint *tp)
{
  uint16_t refs[2] = {(uint16_t)(tp->reg.header >> 32), (uint16_t)(tp->reg.header >> 48)};
  for (int k = 0; k < 2; k++)
    if (!(refs[k] & 0x8000) && refs[k] >= fxt_cons.strings_end)
      return false;
  for (uint32_t i = 0; tp->kind == FXT_TP_TYPED && i < tp->nfields; i++) {
    uint16_t ref = (uint16_t)(tp->reg.arg_header[i] >> 16);
    if (!(ref & 0x8000) && ref >= fxt_cons.strings_end)
      return false;
  }
  return true;
}

/* Blob "fxtrace:tracepoint" describing tp (docs/fxt-conventions.md); ctx: set to true when a
 * description must wait for its strings (write_metadata writes them, then describes again). */
static int describe(void *ctx, struct fxt_tracepoint *tp)
{
  if (tp->id == 0 || (fxt_cons.described[tp->id / 8] & (1u << (tp->id % 8))))
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
  fxt_cons.described[tp->id / 8] |= (uint8_t)(1u << (tp->id % 8));
  return 0;
}

void fxt_cons_write_metadata(void)
{
  write_strings();
  uint32_t gen = fxt_registry_generation();
  if (gen != fxt_cons.registry_gen) {
    fxt_cons.registry_gen = gen;
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
      fxt_cons.registry_gen = gen - 1; /* the next pass describes the rest */
  }
}

void fxt_cons_write_kobj_thread(struct session *s, const struct slot_info *info)
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

void fxt_cons_announce(struct session *s, uint32_t i)
{
  struct slot_info *info = &s->info[i];
  struct fxt_tslot *t = session_slot(s, i);
  if (info->announced_gen == info->owner_gen)
    return;
  fxt_cons_write_metadata();
  if (t->thread_bits) {
    struct fxt_thread th = {(uint8_t)(t->thread_bits >> 24), (uint64_t)s->pid,
                            (uint64_t)info->tid};
    EMIT(fxt_encode_thread, &th);
  }
  fxt_cons_write_kobj_thread(s, info);
  info->announced_gen = info->owner_gen;
}

/* Thread renames: the consumer looks at each live thread's comm about once a second. */
void fxt_cons_refresh_names(struct session *s)
{
  uint64_t now = fxt_ticks_slow();
  if (now - fxt_cons.last_comm_check < 1000000000u)
    return;
  fxt_cons.last_comm_check = now;
  for (uint32_t i = 0; i < s->nslots; i++) {
    struct slot_info *info = &s->info[i];
    if (atomic_load_explicit(&info->state, memory_order_acquire) != SLOT_LIVE ||
        info->announced_gen != info->owner_gen)
      continue;
    char comm[sizeof(info->comm)];
    if (!fxt_read_comm((int)info->tid, comm, sizeof(comm)))
      continue;
    if (strncmp(comm, info->comm, sizeof(info->comm)) != 0) {
      memcpy(info->comm, comm, sizeof(info->comm) - 1);
      info->comm[sizeof(info->comm) - 1] = 0;
      fxt_cons_write_kobj_thread(s, info);
    }
  }
}

/* A kernel:meta instant (overrun, lost) in a slot's thread stream. */
void fxt_cons_write_loss(struct session *s, uint32_t i, uint16_t name, uint64_t records,
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
uint32_t fxt_cons_encode_cpu(struct session *s, uint32_t i, uint32_t cpu, uint64_t ts,
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
void fxt_cons_write_dropped(struct session *s, uint32_t i, uint64_t ts)
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
__attribute__((cold)) void fxt_cons_write_process_loss(struct session *s, uint64_t records)
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

void fxt_cons_write_clock_sync(struct session *s, bool first)
{
  uint64_t ticks, mono, real;
  fxt_clock_sync(&ticks, &mono, &real);
  if (first)
    live_set_clock(ticks, mono, s->ticks_per_second);
  struct fxt_event e = {0};
  fxt_meta_clock_sync(&e, ticks, mono, real);
  e.thread.process_koid = (uint64_t)s->pid;
  EMIT(fxt_encode_event, &e);
  fxt_cons.last_sync_ns = mono;
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
 * descriptions. first: the session's own output (its clock sync is the live view's too).
 * Once a session, and a snapshot: cold (compiled for size). */
__attribute__((cold)) void fxt_cons_write_header(struct session *s, bool first)
{
  if (!(first && fxt_cons.no_magic))
    EMIT(fxt_encode_magic_, NULL);
  struct fxt_provider_info pi = {(uint32_t)s->pid, (uint8_t)strlen(PROVIDER_NAME), PROVIDER_NAME};
  EMIT(fxt_encode_provider_info, &pi);
  struct fxt_init init = {s->ticks_per_second};
  EMIT(fxt_encode_init, &init);
  fxt_cons.strings_end = 1;
  write_strings();
  char comm[64];
  fxt_read_comm(0, comm, sizeof(comm));
  struct fxt_kernel_object k = {0};
  k.koid = (uint64_t)s->pid;
  k.obj_type = FXT_KOBJ_PROCESS;
  k.name = ref_inline(comm);
  EMIT(fxt_encode_kernel_object, &k);
  fxt_cons_write_clock_sync(s, first);
  write_clock_choice(s);
  fxt_cons.registry_gen = fxt_registry_generation() - 1; /* force the descriptions */
  fxt_cons_write_metadata();
}

/* ---- commit ---------------------------------------------------------------------------- */

/* FXTRACE_TEST_DIE_IN_WRITE=before|after (read as the consumer starts; tests only): the
 * process kills itself with SIGKILL inside its consumer's first write of a ring's records made
 * while an fxt_session_flush waits (so in the write the test asks for, not in a pass a full
 * ring woke while the events were still being emitted), the intent WRITING: before the write
 * (nothing of it in the output) or after it returned, so that a test can make either death at
 * will (tests/check/top_level_kill.sh, stdout). 0: off. */
int fxt_cons_die_in_write;

static bool die_here(int when, bool has_slot, const struct effect *fx)
{
  return fxt_cons_die_in_write == when && has_slot && fx->st.len &&
         atomic_load_explicit(&fxt_cons_flushers, memory_order_relaxed) != 0;
}

/* Says on stderr where the write it dies in goes (the file offset it starts at and its
 * bytes), for the test to check what landed, then dies. */
static void die_in_write(uint64_t at, size_t bytes)
{
  fprintf(stderr, "fxtrace test: killed in a write of %zu bytes at offset %llu\n", bytes,
          (unsigned long long)at);
  raise(SIGKILL);
}

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
 * output buffer (SECTION_BYTES, consumer_int.h): no copy, and writev takes it with the rest
 * (no syscall more). */

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
void fxt_cons_commit(const unsigned char *chunk, size_t len, const struct effect *fx)
{
  struct session *s = fxt_cons.s;
  struct fxt_sh *h = s->sh;
  struct out *o = &fxt_cons.out;
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
  if (o->len + len == 0 && !has_slot && !fxt_cons.held_taken)
    return;
  if (o->sections && o->fd >= 0 && o->len + len > 0 &&
      section_word(o->len ? o->buf : chunk, (uint32_t)s->pid, o->buf - SECTION_BYTES)) {
    a = o->buf - SECTION_BYTES;
    alen += SECTION_BYTES;
  }
  struct fxt_sh_slot *e = has_slot ? sh_slot(s, fx->slot) : NULL;
  uint32_t seq = fxt_cons.seq;
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
    uint32_t held_n = chunk && chunk == fxt_cons.merged ? fxt_cons.held_n : 0;
    atomic_store_explicit(&h->intent_held_n, held_n, memory_order_relaxed);
    for (uint32_t k = 0; k < held_n; k++)
      atomic_store_explicit(&h->intent_held_off[k], fxt_cons.held_off[k], memory_order_relaxed);
  }
  atomic_store_explicit(&h->intent_rep_no_slot,
                        atomic_load_explicit(&h->rep_no_slot, memory_order_relaxed) +
                            fxt_cons.no_slot_written,
                        memory_order_relaxed);
  if (o->shared_stdout)
    stdout_place(h, o, a, alen, chunk, len);
  atomic_store_explicit(&h->intent_seq, seq, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&h->intent_state, FXT_SH_WRITING, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
  /* 2. The write. */
  uint64_t at = o->file_len;
  if (die_here(1, has_slot, fx))
    die_in_write(at, alen + len);
  write_all(o, a, alen, chunk, len);
  if (die_here(2, has_slot, fx))
    die_in_write(at, alen + len);
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
  fxt_cons.no_slot_written = 0;
  atomic_store_explicit(&h->committed, o->file_len, memory_order_relaxed);
  /* 5. The records are in the file: their space goes back to the producer. */
  if (has_slot && fx->st.len) {
    struct fxt_ring *r = &session_slot(s, fx->slot)->w.ring;
    uint32_t cr, cb;
    uint32_t moved = fxt_deliver_advance(r, &fx->st, &cr, &cb);
    atomic_signal_fence(memory_order_seq_cst);
    /* The consumer is the only writer of these counters. */
    FXT_ADD_OWNED(&e->consumed, moved);
    FXT_ADD_OWNED(&e->credit_records, cr);
    FXT_ADD_OWNED(&e->credit_bytes, cb);
  }
  if (fxt_cons.held_taken) {
    fxt_cons_held_compact(s);
    fxt_cons.held_taken = false;
  }
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&h->intent_state, FXT_SH_IDLE, memory_order_relaxed);
  fxt_cons.seq = seq + 1 ? seq + 1 : 1;
}

