/* bench_emit - the emit path through a real session, one figure a line as name=value, each the
 * median of 5 runs (bench_emit [--runs N]):
 *
 *   disabled_tracepoint_ns       FXT_TRACE of a disabled tracepoint (one load, one branch)
 *   enabled_tracepoint_2u64_ns   FXT_TRACE with two u64 fields, enabled, one thread, into a
 *                                128 MiB buffer that holds the whole run (so nothing is lost
 *                                whatever the consumer's speed), consumer writing /dev/shm
 *   enabled_lost_fraction        fraction of those events not in the file (should be 0)
 *   scoped_duration_ns           FXT_SCOPE (one duration-complete event per scope)
 *   two_thread_events_per_s      2 threads, discard mode, 256 KiB buffers: events that landed
 *                                in the file per second of the run (lost ones do not count)
 *   two_thread_lost_fraction
 *   consumer_file_MBps           2 threads in block mode (nothing lost: producers wait for the
 *                                consumer), file bytes on /dev/shm per second
 *   peer_clock_gettime_ns        clock_gettime(CLOCK_MONOTONIC), for scale, same run
 *   buffers_anon_2u64_ns         as enabled_tracepoint_2u64_ns, buffers in anonymous memory
 *   buffers_file_2u64_ns         the same with the buffers in files on /dev/shm (the default:
 *                                docs/recovery.md); each run maps fresh pages, and its 64 MB
 *                                of events touch 16384 of them, so page faults are included
 *   buffers_file_vs_anon_ratio   median of the per-run ratios file / anon (the two alternate
 *                                within each run)
 *   flight_recorder_2u64_ns      the same event into a flight recorder (mode=overwrite, no
 *                                output file, 256 KiB): the ring is always full, every event
 *                                overwrites the oldest
 *   str16_short_ns               a (str, s, 16) field given 11 bytes, into the same flight
 *                                recorder: the string is not cut
 *   str16_cut_ascii_ns           given 24 ASCII bytes: cut at its bound, 16; the cut checks
 *                                the last bytes for a character it would split (none)
 *   str16_cut_utf8_ns            given 24 bytes with a 2-byte character at 15..16: the cut
 *                                backs off to 15 (a string is never cut inside a character:
 *                                docs/fxt-conventions.md); the three alternate within each run
 *   paused_tracepoint_2u64_ns    the flight recorder's event, enabled, with recording off
 *                                (tracing_on 0): refused at the emission's entry
 *   paused_trigger_2u64_ns       the same event with an event trigger that never fires
 *                                ("traceon if a == 1"): its triggers run while recording is
 *                                off (a traceon's way back)
 *   hist_trigger_2u64_ns         the flight recorder's event, recording on, with a hist
 *                                trigger "hist:keys=a.log2:vals=b" (the event recorded and
 *                                counted into one of its 22 entries)
 *
 * bench_emit --emit [--runs N]: the single-thread figures only (disabled, flight recorder,
 * paused, paused with a trigger, hist, the clock), alternating within each run.
 */
#define _GNU_SOURCE
#include <fxtrace/fxt.h>
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

FXT_TRACEPOINT(bench, two, "a=%llu b=%llu", (u64, a), (u64, b));
FXT_TRACEPOINT(bench, off, "a=%llu", (u64, a));
FXT_TRACEPOINT(bench, str16, "s=%s", (str, s, 16));

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof(*v), cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static char path[256];
static const char *buffers; /* NULL: the default directory; "": anonymous memory */

static void start(const char *events, uint32_t buffer_kb, uint32_t mode)
{
  uint32_t total_kb = buffer_kb * 4 > 65536 ? buffer_kb * 4 : 65536;
  snprintf(path, sizeof(path), "/dev/shm/fxtrace-bench-%d.fxt", (int)getpid());
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = events,
                                   .buffer_kb = buffer_kb, .total_kb = total_kb, .mode = mode,
                                   .output = path, .buffers = buffers,
                                   .block_timeout_ms = 60000};
  if (fxt_session_start(&cfg) != 0) {
    fprintf(stderr, "bench_emit: cannot start a session\n");
    exit(1);
  }
}

/* Events named `name` that landed in the stopped session's file, and the file's size; removes
 * the file. */
static uint64_t count_landed(const char *name, uint64_t *file_bytes)
{
  static struct fxt_str_slot table[FXT_STRING_TABLE_SIZE];
  struct stat st;
  if (stat(path, &st) != 0)
    return 0;
  *file_bytes = (uint64_t)st.st_size;
  FILE *f = fopen(path, "rb");
  unsigned char *buf = malloc((size_t)st.st_size);
  if (!f || !buf || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
    fprintf(stderr, "bench_emit: cannot read %s\n", path);
    exit(1);
  }
  fclose(f);
  struct fxt_decoder d;
  static struct fxt_record r;
  char err[256];
  uint64_t n = 0;
  size_t len = strlen(name);
  fxt_decoder_init(&d, buf, (size_t)st.st_size, table);
  while (fxt_decoder_next(&d, &r, err, sizeof(err)) == 1)
    if (r.kind == FXT_KIND_EVENT && r.u.event.name.len == len &&
        memcmp(r.u.event.name.data, name, len) == 0)
      n++;
  free(buf);
  unlink(path);
  return n;
}

#define N_SINGLE 2000000u

static double disabled_ns(void)
{
  double t0 = now_s();
  for (uint64_t i = 0; i < 100000000u; i++) {
    FXT_TRACE(bench, off, i);
    __asm__ volatile("" ::: "memory"); /* keep the loop */
  }
  return (now_s() - t0) * 1e9 / 100000000.0;
}

static double enabled_ns(double *lost_fraction)
{
  start("bench:two", 131072, FXT_MODE_DISCARD);
  FXT_TRACE(bench, two, 0, 0); /* attach the thread outside the timing */
  double t0 = now_s();
  for (uint64_t i = 0; i < N_SINGLE; i++)
    FXT_TRACE(bench, two, i, i);
  double t = now_s() - t0;
  fxt_session_stop();
  uint64_t bytes, landed = count_landed("two", &bytes);
  *lost_fraction = 1.0 - (double)landed / (N_SINGLE + 1);
  return t * 1e9 / N_SINGLE;
}

/* Starts the flight recorder (bench:two, 256 KiB rings) and gives the thread its slot, outside
 * any timing. */
static void start_flight(void)
{
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "bench:two",
                                   .buffer_kb = 256, .mode = FXT_MODE_OVERWRITE, .output = ""};
  if (fxt_session_start(&cfg) != 0) {
    fprintf(stderr, "bench_emit: cannot start a session\n");
    exit(1);
  }
  FXT_TRACE(bench, two, 0, 0);
}

static double flight_recorder_ns(void)
{
  start_flight();
  double t0 = now_s();
  for (uint64_t i = 0; i < 10 * N_SINGLE; i++)
    FXT_TRACE(bench, two, i, i);
  double t = now_s() - t0;
  fxt_session_stop();
  return t * 1e9 / (10 * N_SINGLE);
}

/* The flight recorder's event with recording off (tracing_on 0), with a trigger that never
 * fires or none: ns per event. */
static double paused_ns(bool trigger)
{
  start_flight();
  if ((trigger && fxt_fs_echo("events/bench/two/trigger", "traceon if a == 1") < 0) ||
      fxt_fs_echo("tracing_on", "0") < 0) {
    fprintf(stderr, "bench_emit: cannot write the tracefs files\n");
    exit(1);
  }
  double t0 = now_s();
  for (uint64_t i = 2; i < 10 * N_SINGLE + 2; i++)
    FXT_TRACE(bench, two, i, i);
  double t = now_s() - t0;
  if (trigger)
    (void)fxt_fs_echo("events/bench/two/trigger", "!traceon");
  (void)fxt_fs_echo("tracing_on", "1");
  fxt_session_stop();
  return t * 1e9 / (10 * N_SINGLE);
}

/* The flight recorder's event with a hist trigger: ns per event. */
static double hist_ns(void)
{
  start_flight();
  if (fxt_fs_echo("events/bench/two/trigger", "hist:keys=a.log2:vals=b") < 0) {
    fprintf(stderr, "bench_emit: cannot write the trigger\n");
    exit(1);
  }
  double t0 = now_s();
  for (uint64_t i = 0; i < 10 * N_SINGLE; i++)
    FXT_TRACE(bench, two, i, i);
  double t = now_s() - t0;
  (void)fxt_fs_echo("events/bench/two/trigger", "!hist:keys=a.log2:vals=b");
  fxt_session_stop();
  return t * 1e9 / (10 * N_SINGLE);
}

/* One (str, s, 16) event a turn into a flight recorder, given s: ns per event. */
static double str16_ns(const char *s)
{
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "bench:str16",
                                   .buffer_kb = 256, .mode = FXT_MODE_OVERWRITE, .output = ""};
  if (fxt_session_start(&cfg) != 0) {
    fprintf(stderr, "bench_emit: cannot start a session\n");
    exit(1);
  }
  FXT_TRACE(bench, str16, s);
  double t0 = now_s();
  for (uint64_t i = 0; i < 5 * N_SINGLE; i++) {
    FXT_TRACE(bench, str16, s);
    __asm__ volatile("" : : "r"(s) : "memory"); /* s is read again every turn */
  }
  double t = now_s() - t0;
  fxt_session_stop();
  return t * 1e9 / (5 * N_SINGLE);
}

static double scope_ns(void)
{
  start("bench:scope", 131072, FXT_MODE_DISCARD);
  double t0 = now_s();
  for (uint64_t i = 0; i < N_SINGLE; i++) {
    FXT_SCOPE("bench", "scope");
    __asm__ volatile("" ::: "memory");
  }
  double t = now_s() - t0;
  fxt_session_stop();
  uint64_t bytes;
  count_landed("scope", &bytes);
  return t * 1e9 / N_SINGLE;
}

static void *two_thread_body(void *arg)
{
  uint64_t n = *(uint64_t *)arg;
  for (uint64_t i = 0; i < n; i++)
    FXT_TRACE(bench, two, i, i);
  return NULL;
}

/* Two threads of n events each; returns seconds; *landed and *bytes from the file. */
static double two_threads(uint64_t n, uint32_t mode, uint64_t *landed, uint64_t *bytes)
{
  start("bench:two", 256, mode);
  pthread_t t[2];
  double t0 = now_s();
  for (int i = 0; i < 2; i++)
    pthread_create(&t[i], NULL, two_thread_body, &n);
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], NULL);
  fxt_session_stop(); /* the consumer's last pass is part of the run */
  double secs = now_s() - t0;
  *landed = count_landed("two", bytes);
  return secs;
}

static double clock_ns(void)
{
  struct timespec ts;
  double t0 = now_s();
  for (int i = 0; i < 10000000; i++)
    clock_gettime(CLOCK_MONOTONIC, &ts);
  return (now_s() - t0) * 1e9 / 1e7;
}

int main(int argc, char **argv)
{
  int runs = 5;
  bool emit_only = argc > 1 && !strcmp(argv[1], "--emit");
  if (emit_only)
    argc--, argv++;
  if (argc == 3 && !strcmp(argv[1], "--runs"))
    runs = atoi(argv[2]);
  if (runs < 1 || runs > 99) {
    fprintf(stderr, "usage: %s [--emit] [--runs N]\n", argv[0]);
    return 2;
  }
  double pz[99], pt[99];
  if (emit_only) {
    double d[99], f[99], c[99], hi[99];
    for (int r = 0; r < runs; r++) {
      d[r] = disabled_ns();
      f[r] = flight_recorder_ns();
      pz[r] = paused_ns(false);
      pt[r] = paused_ns(true);
      hi[r] = hist_ns();
      c[r] = clock_ns();
    }
    printf("disabled_tracepoint_ns=%.2f\n", median(d, runs));
    printf("flight_recorder_2u64_ns=%.2f\n", median(f, runs));
    printf("paused_tracepoint_2u64_ns=%.2f\n", median(pz, runs));
    printf("paused_trigger_2u64_ns=%.2f\n", median(pt, runs));
    printf("hist_trigger_2u64_ns=%.2f\n", median(hi, runs));
    printf("peer_clock_gettime_ns=%.2f\n", median(c, runs));
    return 0;
  }
  double dis[99], en[99], enl[99], sc[99], tt[99], ttl[99], mb[99], cg[99];
  double anon[99], file[99], ratio[99], fr[99], unused;
  double s_short[99], s_ascii[99], s_utf8[99];
  /* "\xc3\xa9" (U+00E9) at bytes 15..16: a cut at 16 would split it. */
  static const char ascii24[] = "abcdefghijklmnopqrstuvwx", utf8_24[] = "abcdefghijklmno\xc3\xa9qrstuvw";
  _Static_assert(sizeof(utf8_24) == 25 && sizeof(ascii24) == 25, "24 bytes");
  for (int r = 0; r < runs; r++) {
    /* Anonymous and file-backed buffers alternate, first one then the other. */
    for (int k = 0; k < 2; k++) {
      bool file_first = r % 2 == 0, is_file = (k == 0) == file_first;
      buffers = is_file ? NULL : "";
      *(is_file ? &file[r] : &anon[r]) = enabled_ns(&unused);
    }
    buffers = NULL;
    ratio[r] = file[r] / anon[r];
    fr[r] = flight_recorder_ns();
    for (int k = 0; k < 3; k++) {
      int which = (k + r) % 3;
      if (which == 0)
        s_short[r] = str16_ns("abcdefghijk");
      else if (which == 1)
        s_ascii[r] = str16_ns(ascii24);
      else
        s_utf8[r] = str16_ns(utf8_24);
    }
    dis[r] = disabled_ns();
    en[r] = enabled_ns(&enl[r]);
    sc[r] = scope_ns();
    uint64_t landed, bytes, n = 10000000;
    double s = two_threads(n, FXT_MODE_DISCARD, &landed, &bytes);
    tt[r] = (double)landed / s;
    ttl[r] = 1.0 - (double)landed / (double)(2 * n);
    s = two_threads(2000000, FXT_MODE_BLOCK, &landed, &bytes);
    mb[r] = (double)bytes / s / 1e6;
    cg[r] = clock_ns();
    pz[r] = paused_ns(false);
    pt[r] = paused_ns(true);
  }
  printf("disabled_tracepoint_ns=%.2f\n", median(dis, runs));
  printf("enabled_tracepoint_2u64_ns=%.2f\n", median(en, runs));
  printf("enabled_lost_fraction=%.4f\n", median(enl, runs));
  printf("scoped_duration_ns=%.2f\n", median(sc, runs));
  printf("two_thread_events_per_s=%.0f\n", median(tt, runs));
  printf("two_thread_lost_fraction=%.4f\n", median(ttl, runs));
  printf("consumer_file_MBps=%.0f\n", median(mb, runs));
  printf("peer_clock_gettime_ns=%.2f\n", median(cg, runs));
  printf("buffers_anon_2u64_ns=%.2f\n", median(anon, runs));
  printf("buffers_file_2u64_ns=%.2f\n", median(file, runs));
  printf("buffers_file_vs_anon_ratio=%.3f\n", median(ratio, runs));
  printf("flight_recorder_2u64_ns=%.2f\n", median(fr, runs));
  printf("str16_short_ns=%.2f\n", median(s_short, runs));
  printf("str16_cut_ascii_ns=%.2f\n", median(s_ascii, runs));
  printf("str16_cut_utf8_ns=%.2f\n", median(s_utf8, runs));
  printf("paused_tracepoint_2u64_ns=%.2f\n", median(pz, runs));
  printf("paused_trigger_2u64_ns=%.2f\n", median(pt, runs));
  return 0;
}
