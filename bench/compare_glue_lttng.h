/* compare_glue_lttng.h - LTTng-UST's side of bench/compare_work.c: the fire sites of the
 * bench_lttng provider (compare_tp.h). bench/compare sets up the lttng session around the
 * process and counts what landed with babeltrace2 and the packet indexes; this side only waits
 * until the session daemon has enabled the events. Included once, by compare_work.c. */
#include "compare_tp.h"

#define CMP_TRACER "lttng"

#define CMP_TWO(a, b) tracepoint(bench_lttng, two_u64, (a), (b))
#define CMP_STR(s) tracepoint(bench_lttng, str32, (s))
#define CMP_OFF(a) tracepoint(bench_lttng, off, (a))
#define CMP_WARM(a) tracepoint(bench_lttng, warm, (a))
#define CMP_SCOPE_BEGIN {tracepoint(bench_lttng, scope_begin);
#define CMP_SCOPE_END tracepoint(bench_lttng, scope_end);}

/* The session (made by bench/compare) enables bench_lttng:warm with the measured event: wait
 * until the registration with the session daemon has enabled it (the constructor usually has
 * already), up to 10 s. */
static void cmp_tracer_begin(const char *event, uint32_t buffer_kb, int block)
{
  (void)event;
  (void)buffer_kb;
  (void)block;
  for (int i = 0; i < 10000 && !tracepoint_enabled(bench_lttng, warm); i++)
    usleep(1000);
  if (!tracepoint_enabled(bench_lttng, warm)) {
    fprintf(stderr, "compare: bench_lttng:warm never got enabled (no session?)\n");
    exit(1);
  }
}

/* LTTng-UST 2.13 reads the CPU through glibc's sched_getcpu(): nothing to force. */
static void cmp_force_rseq_path(void)
{
}

static void cmp_tracer_stop(void)
{
}

static void cmp_tracer_count(const char *name, int keep)
{
  (void)name;
  (void)keep;
}
