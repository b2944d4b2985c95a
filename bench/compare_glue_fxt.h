/* compare_glue_fxt.h - fxtrace's side of bench/compare_work.c: the fire sites, and a session
 * per run whose file (in $CMP_DIR, default /dev/shm) is read back with the strict decoder to
 * count the events that landed (as bench/bench_emit.c does). Included once, by
 * compare_work.c. */
#include <fxtrace/fxt.h>
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <sys/stat.h>

#define CMP_TRACER "fxtrace"

FXT_TRACEPOINT(bench, two, "a=%llu b=%llu", (u64, a), (u64, b));
FXT_TRACEPOINT(bench, str32, "s=%s", (str, s, 32));
FXT_TRACEPOINT(bench, off, "a=%llu", (u64, a));
FXT_TRACEPOINT(bench, warm, "a=%llu", (u64, a));

#define CMP_TWO(a, b) FXT_TRACE(bench, two, (a), (b))
#define CMP_STR(s) FXT_TRACE(bench, str32, (s))
#define CMP_OFF(a) FXT_TRACE(bench, off, (a))
#define CMP_WARM(a) FXT_TRACE(bench, warm, (a))
/* One complete event when the block closes. */
#define CMP_SCOPE_BEGIN {FXT_SCOPE("bench", "scope");
#define CMP_SCOPE_END }

static char cmp_path[256];

/* Starts the session for a workload: events = bench:<event> and bench:warm (event may go on
 * as "two,bench:str32"); buffer_kb 0
 * = fxtrace's default (4 MiB per thread); block = producers wait for the consumer instead of
 * dropping. */
static void cmp_tracer_begin(const char *event, uint32_t buffer_kb, int block)
{
  static char events[128];
  snprintf(events, sizeof(events), "bench:%s,bench:warm", event);
  const char *dir = getenv("CMP_DIR"); /* bench/compare's scratch directory on /dev/shm */
  snprintf(cmp_path, sizeof(cmp_path), "%s/cmp-fxtrace-%d.fxt", dir ? dir : "/dev/shm",
           (int)getpid());
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = events,
                                   .output = cmp_path, .buffer_kb = buffer_kb};
  cfg.buffers = getenv("CMP_BUFFERS"); /* unset: the default (files on /dev/shm); "": anonymous */
  if (buffer_kb != 0)
    cfg.total_kb = buffer_kb * 4 > 65536 ? buffer_kb * 4 : 65536; /* room for 3 threads */
  if (block) {
    cfg.mode = FXT_MODE_BLOCK;
    cfg.block_timeout_ms = 60000;
  }
  if (fxt_session_start(&cfg) != 0) {
    fprintf(stderr, "compare: cannot start an fxtrace session\n");
    exit(1);
  }
}

/* Under valgrind (no rseq): point fxtrace at glibc's rseq area anyway, so that callgrind counts
 * the instructions of the rseq CPU read rather than of sched_getcpu(). The area is there, only
 * unregistered: its cpu_id reads as a constant. Only for instruction counts. */
static void cmp_force_rseq_path(void)
{
  if (fxt_rseq_offset == 0)
    fxt_rseq_offset = __rseq_offset;
  if (fxt_clock_is_tsc)
    fxt_fast_cpu_at = fxt_rseq_offset + 4;
  else
    fxt_clk_cpu_at = fxt_rseq_offset + 4;
}

/* Stops the session (the consumer's last pass, the file closed). */
static void cmp_tracer_stop(void)
{
  fxt_session_stop();
}

/* Prints what landed in the stopped session's file: landed= (events named `name`),
 * event_bytes= (their records' bytes), meta_drops= (records that drop_stats / lost / overrun
 * records report), file_bytes=. keep != 0 leaves the file (for `fxtrace report`). */
static void cmp_tracer_count(const char *name, int keep)
{
  static struct fxt_str_slot table[FXT_STRING_TABLE_SIZE];
  static struct fxt_decoder d;
  static struct fxt_record r;
  struct stat st;
  int fd = open(cmp_path, O_RDONLY);
  if (fd < 0 || fstat(fd, &st) != 0) {
    fprintf(stderr, "compare: no fxtrace file %s\n", cmp_path);
    exit(1);
  }
  const unsigned char *buf = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (buf == MAP_FAILED) {
    fprintf(stderr, "compare: cannot map %s\n", cmp_path);
    exit(1);
  }
  char err[256];
  uint64_t landed = 0, bytes = 0, drops = 0;
  char clock[32] = "unknown", reason[256] = "";
  size_t len = strlen(name);
  fxt_decoder_init(&d, buf, (size_t)st.st_size, table);
  int rc;
  while ((rc = fxt_decoder_next(&d, &r, err, sizeof(err))) == 1) {
    if (r.kind != FXT_KIND_EVENT)
      continue;
    const struct fxt_event *e = &r.u.event;
    if (e->name.len == 5 && memcmp(e->name.data, "clock", 5) == 0 && e->num_args == 2 &&
        e->args[0].type == FXT_ARG_STRING && e->args[1].type == FXT_ARG_STRING) {
      /* kernel:meta clock: the trace clock fxtrace chose, and why */
      snprintf(clock, sizeof clock, "%.*s", (int)e->args[0].value.str.len,
               e->args[0].value.str.data);
      snprintf(reason, sizeof reason, "%.*s", (int)e->args[1].value.str.len,
               e->args[1].value.str.data);
      for (char *c = reason; *c; c++)
        *c = *c == ' ' ? '_' : *c; /* one word: bench/compare's name=value lines */
      continue;
    }
    if (e->name.len == len && memcmp(e->name.data, name, len) == 0) {
      landed++;
      bytes += r.size;
    } else if (e->category.len == 11 && memcmp(e->category.data, "kernel:meta", 11) == 0 &&
               ((e->name.len == 10 && memcmp(e->name.data, "drop_stats", 10) == 0) ||
                (e->name.len == 7 && memcmp(e->name.data, "overrun", 7) == 0) ||
                (e->name.len == 4 && memcmp(e->name.data, "lost", 4) == 0))) {
      for (uint32_t i = 0; i < e->num_args; i++)
        if (e->args[i].name.len == 11 && memcmp(e->args[i].name.data, "num_records", 11) == 0)
          drops += e->args[i].value.u32;
    }
  }
  if (rc < 0)
    fprintf(stderr, "compare: %s: decoder stopped: %s\n", cmp_path, err);
  munmap((void *)buf, (size_t)st.st_size);
  close(fd);
  printf("landed=%llu\nevent_bytes=%llu\nmeta_drops=%llu\nfile_bytes=%lld\nclock=%s\n"
         "clock_reason=%s\n",
         (unsigned long long)landed, (unsigned long long)bytes, (unsigned long long)drops,
         (long long)st.st_size, clock, reason);
  if (keep)
    printf("file=%s\n", cmp_path);
  else
    unlink(cmp_path);
}
