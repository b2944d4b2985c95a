/* compare_tp.c - the probes of the bench_lttng provider (compare_tp.h), linked into the LTTng
 * build of compare_work.c. */
#define TRACEPOINT_CREATE_PROBES
#define TRACEPOINT_DEFINE
#include "compare_tp.h"
