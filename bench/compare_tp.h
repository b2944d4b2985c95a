/* compare_tp.h - LTTng-UST tracepoint provider `bench_lttng` for bench/compare: the peer's side
 * of the workloads of bench/compare_work.c, written with lttng-ust's public TRACEPOINT_* API
 * (LTTng-UST 2.13, Debian 12's liblttng-ust-dev). Compiled only by bench/compare.
 *
 *   bench_lttng:two_u64      two u64 fields (fxtrace: bench:two, (u64, a), (u64, b))
 *   bench_lttng:str32        one NUL-terminated string (fxtrace: bench:str32, (str, s, 32))
 *   bench_lttng:scope_begin  no field; with scope_end, one scoped duration
 *   bench_lttng:scope_end    (fxtrace: one FXT_SCOPE, a single duration-complete event)
 *   bench_lttng:off          one u64 field, never enabled (the disabled check)
 *   bench_lttng:warm         one u64 field, fired once per thread before the timed loop
 */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER bench_lttng

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "./compare_tp.h"

#if !defined(BENCH_COMPARE_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define BENCH_COMPARE_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

TRACEPOINT_EVENT(bench_lttng, two_u64,
                 TP_ARGS(uint64_t, a, uint64_t, b),
                 TP_FIELDS(ctf_integer(uint64_t, a, a) ctf_integer(uint64_t, b, b)))

TRACEPOINT_EVENT(bench_lttng, str32,
                 TP_ARGS(const char *, s),
                 TP_FIELDS(ctf_string(s, s)))

TRACEPOINT_EVENT(bench_lttng, scope_begin, TP_ARGS(), TP_FIELDS())
TRACEPOINT_EVENT(bench_lttng, scope_end, TP_ARGS(), TP_FIELDS())

TRACEPOINT_EVENT(bench_lttng, off,
                 TP_ARGS(uint64_t, a),
                 TP_FIELDS(ctf_integer(uint64_t, a, a)))

TRACEPOINT_EVENT(bench_lttng, warm,
                 TP_ARGS(uint64_t, a),
                 TP_FIELDS(ctf_integer(uint64_t, a, a)))

#endif /* BENCH_COMPARE_TP_H */

#include <lttng/tracepoint-event.h>
