/* tests/unit/fxt_build.h - building FXT files record by record with the codec's encoders,
 * for the tests of the readers of whole files (test_fxtfile.c, test_json.c). Never uses
 * fxtrace's session writer: what the file holds is what the test wrote, record by record.
 *
 * One static buffer per test program; define FXB_BYTES before including for a bigger one.
 */
#ifndef FXTRACE_TEST_FXT_BUILD_H
#define FXTRACE_TEST_FXT_BUILD_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include <fxtrace/fxt.h>
#include <fxtrace/meta.h>

#ifndef FXB_BYTES
#define FXB_BYTES (1u << 16)
#endif

static uint8_t g_buf[FXB_BYTES];
static size_t g_len, g_records;
#define ROOM (g_buf + g_len), (sizeof g_buf - g_len)

/* Account for a record the encoder wrote at g_len; returns its offset. */
static inline uint64_t emit(int64_t n) {
  assert_true(n > 0);
  uint64_t at = g_len;
  g_len += (size_t)n;
  g_records++;
  return at;
}

static inline void reset(void) { g_len = g_records = 0; }

static inline struct fxt_str_ref sref(uint16_t index) { return fxt_str_index(index); }
static inline struct fxt_str_ref inl(const char *s) {
  return fxt_str_inline(s, (uint16_t)strlen(s));
}

static inline void magic(void) { emit(fxt_encode_magic(ROOM)); }

/* A provider segment: provider info, then its initialization record (ticks per second). */
static inline void provider(uint32_t id, uint64_t tps) {
  struct fxt_provider_info p = {id, 9, "fxtrace/1"};
  emit(fxt_encode_provider_info(ROOM, &p));
  struct fxt_init i = {tps};
  emit(fxt_encode_init(ROOM, &i));
}

static inline uint64_t string(uint16_t index, const char *text) {
  struct fxt_string s = {index, (uint16_t)strlen(text), text};
  return emit(fxt_encode_string(ROOM, &s));
}

/* The bookkeeping strings at their fixed indices (meta.h). */
static inline void meta_strings(void) {
#define META_STRING(name, index, text) string(index, text);
  FXT_META_STRINGS(META_STRING)
#undef META_STRING
}

static inline void thread(uint8_t index, uint64_t pid, uint64_t tid) {
  struct fxt_thread t = {index, pid, tid};
  emit(fxt_encode_thread(ROOM, &t));
}

static inline void kobj(uint8_t type, uint64_t koid, const char *name, uint64_t process) {
  struct fxt_kernel_object k;
  memset(&k, 0, sizeof k);
  k.koid = koid;
  k.obj_type = type;
  k.name = inl(name);
  if (process) {
    k.num_args = 1;
    k.args[0].type = FXT_ARG_KOID;
    k.args[0].name = sref(FXT_STR_PROCESS);
    k.args[0].value.koid = process;
  }
  emit(fxt_encode_kernel_object(ROOM, &k));
}

static inline struct fxt_event event(uint32_t type, struct fxt_thread_ref th,
                                     struct fxt_str_ref cat, struct fxt_str_ref name,
                                     uint64_t ts) {
  struct fxt_event e;
  memset(&e, 0, sizeof e);
  e.type = type;
  e.thread = th;
  e.category = cat;
  e.name = name;
  e.timestamp = ts;
  return e;
}

/* Append an argument; the caller sets its value. */
static inline struct fxt_arg *arg(struct fxt_event *e, uint32_t type, struct fxt_str_ref name) {
  struct fxt_arg *a = &e->args[e->num_args++];
  memset(a, 0, sizeof *a);
  a->type = type;
  a->name = name;
  return a;
}

static inline uint64_t put(const struct fxt_event *e) { return emit(fxt_encode_event(ROOM, e)); }

/* kernel:meta clock_sync from process pid: realtime is monotonic + 1000 ns. */
/* A file's opening, the buffer emptied first: the magic, provider id (tps ticks per second)
 * and the bookkeeping strings. */
static inline void file_start(uint32_t id, uint64_t tps) {
  reset();
  magic();
  provider(id, tps);
  meta_strings();
}

static inline void clock_sync(uint64_t pid, uint64_t ticks, uint64_t mono) {
  struct fxt_event e = event(FXT_EVENT_INSTANT, fxt_thread_inline(pid, 0),
                             sref(FXT_STR_KERNEL_META), sref(FXT_STR_CLOCK_SYNC), ticks);
  arg(&e, FXT_ARG_UINT64, sref(FXT_STR_TICKS))->value.u64 = ticks;
  arg(&e, FXT_ARG_UINT64, sref(FXT_STR_MONOTONIC_NS))->value.u64 = mono;
  arg(&e, FXT_ARG_UINT64, sref(FXT_STR_REALTIME_NS))->value.u64 = mono + 1000;
  put(&e);
}

/* kernel:meta cpu: th's following records ran on CPU n. */
static inline void cpu(struct fxt_thread_ref th, uint64_t ts, uint32_t n) {
  struct fxt_event e =
      event(FXT_EVENT_COUNTER, th, sref(FXT_STR_KERNEL_META), sref(FXT_STR_CPU), ts);
  arg(&e, FXT_ARG_UINT32, sref(FXT_STR_CPU))->value.u32 = n;
  put(&e);
}

/* drop_stats (duration complete), overrun or lost (instants), 16 bytes per record. */
static inline void loss(struct fxt_thread_ref th, uint16_t name, uint64_t ts, uint32_t records) {
  uint32_t type = name == FXT_STR_DROP_STATS ? FXT_EVENT_DURATION_COMPLETE : FXT_EVENT_INSTANT;
  struct fxt_event e = event(type, th, sref(FXT_STR_KERNEL_META), sref(name), ts);
  arg(&e, FXT_ARG_UINT32, sref(FXT_STR_NUM_RECORDS))->value.u32 = records;
  arg(&e, FXT_ARG_UINT32, sref(FXT_STR_NUM_BYTES))->value.u32 = records * 16;
  e.trailer = ts + 1;
  put(&e);
}

/* A CPU's loss, as `fxtrace convert X.dat --to fxt` writes it (tracedat_import.h): `lost` of thread
 * 0 of process pid with num_records, num_bytes 0, the cpu and, when unknown, count_unknown. */
static inline void cpu_loss(uint64_t pid, uint64_t ts, uint32_t n, uint32_t records,
                            bool unknown) {
  struct fxt_event e = event(FXT_EVENT_INSTANT, fxt_thread_inline(pid, 0),
                             sref(FXT_STR_KERNEL_META), sref(FXT_STR_LOST), ts);
  arg(&e, FXT_ARG_UINT32, sref(FXT_STR_NUM_RECORDS))->value.u32 = records;
  arg(&e, FXT_ARG_UINT32, sref(FXT_STR_NUM_BYTES))->value.u32 = 0;
  arg(&e, FXT_ARG_UINT32, sref(FXT_STR_CPU))->value.u32 = n;
  if (unknown)
    arg(&e, FXT_ARG_BOOL, inl("count_unknown"))->value.b = true;
  put(&e);
}

#endif
