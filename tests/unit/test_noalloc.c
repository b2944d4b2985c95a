/* test_noalloc - no heap allocation on the emit path after a thread's first event, including
 * the drop path, string and byte fields, flows, async, scopes, printk, disabled tracepoints and
 * a hist trigger's counting:
 * malloc/calloc/realloc/free are interposed and counted while the emitting thread audits (the
 * Starry seed's audit allocator). Not run under ASan/TSan, which bring their own allocator. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../test_main.h"

#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SESSION_TEST_MAX_FILE_KB 0 /* no file limit */
#include "session_test.h"

FXT_TRACEPOINT(t, seq, "seq=%llu", (u64, seq));
FXT_TRACEPOINT(t, rich, "seq=%llu name=%s ok=%d ratio=%g p=%p d=%s", (u64, seq), (str, name, 24),
               (bool, ok), (f64, ratio), (ptr, p), (bytes, digest, 4));
FXT_TRACEPOINT(t, off, "never enabled %u", (u32, x));
FXT_TRACEPOINT(t, filtered, "x=%u s=%s", (u32, x), (str, s, 16)); /* enabled, filtered out */

/* ---- malloc interposition: counts allocations made by a thread while it audits --------- */

void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void __libc_free(void *);
static _Thread_local int auditing;
static atomic_ulong audited_calls;

void *malloc(size_t n)
{
  if (auditing)
    atomic_fetch_add(&audited_calls, 1);
  return __libc_malloc(n);
}
void *calloc(size_t a, size_t b)
{
  if (auditing)
    atomic_fetch_add(&audited_calls, 1);
  return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
  if (auditing)
    atomic_fetch_add(&audited_calls, 1);
  return __libc_realloc(p, n);
}
void free(void *p)
{
  if (auditing && p)
    atomic_fetch_add(&audited_calls, 1);
  __libc_free(p);
}



/* ---- no heap allocation on the emit path ------------------------------------------------ */

static void *emit_audited(void *arg)
{
  (void)arg;
  /* (every loop iteration below: 14 recorded events; the filtered one records nothing) */
  unsigned char digest[4] = {0xde, 0xad, 0xbe, 0xef};
  FXT_TRACE(t, seq, 0); /* the thread's first event may attach (and allocate) */
  auditing = 1;
  for (uint64_t i = 1; i < 20000; i++) {
    FXT_TRACE(t, seq, i);
    FXT_TRACE(t, rich, i, "a string of some length", i & 1, 0.5, &i, digest);
    FXT_TRACE(t, off, 1); /* disabled */
    FXT_TRACE(t, filtered, (uint32_t)i, "filtered"); /* the filter says no: nothing reserved */
    FXT_INSTANT("t", "inst", FXT_U64("i", i), FXT_STR("s", "text"), FXT_ARG("d", 1.5));
    FXT_COUNTER("t", "ctr", 3, FXT_U64("v", i));
    FXT_FLOW_BEGIN("t", "flow", i);
    FXT_FLOW_STEP("t", "flow", i);
    FXT_FLOW_END("t", "flow", i);
    FXT_ASYNC_BEGIN("t", "async", i, FXT_I32("x", -1));
    FXT_ASYNC_END("t", "async", i);
    {
      FXT_SCOPE("t", "scope");
    }
    FXT_BEGIN("t", "dur");
    FXT_END("t", "dur");
    FXT_COMPLETE("t", "complete", fxt_now());
    FXT_PRINTK("printk %d %s", (int)i, "x");
  }
  auditing = 0;
  return NULL;
}

static void no_allocation_on_emit_path(void **state)
{
  (void)state;
  /* A 4 KiB buffer overflows at once: the drop path is audited too. */
  start("t:seq,t:rich,t:inst,t:ctr,t:flow,t:async,t:scope,t:dur,t:complete,t:filtered,printk:*",
        4, 0, FXT_MODE_DISCARD);
  assert_int_equal(fxt_fs_echo("events/t/filtered/filter", "x > 4000000000 && s == \"nope\""),
                   (ssize_t)strlen("x > 4000000000 && s == \"nope\""));
  /* A hist trigger on it (a string key, a log2 key, a value): counted on the emit path,
   * whatever the event's filter says, into its table made here. */
  static const char hist[] = "hist:keys=s,x.log2:vals=x";
  assert_int_equal(fxt_fs_echo("events/t/filtered/trigger", hist), (ssize_t)strlen(hist));
  atomic_store(&audited_calls, 0);
  pthread_t th;
  pthread_create(&th, NULL, emit_audited, NULL);
  pthread_join(th, NULL);
  static char text[1 << 16];
  assert_true(fxt_fs_cat("events/t/filtered/hist", text, sizeof(text)) > 0);
  assert_non_null(strstr(text, "Totals:\n    Hits: 19999\n"));
  assert_int_equal(fxt_fs_echo("events/t/filtered/trigger", "!hist:keys=s,x.log2:vals=x"),
                   (ssize_t)strlen("!hist:keys=s,x.log2:vals=x"));
  stop_and_count(NULL);
  assert_int_equal(atomic_load(&audited_calls), 0);
  /* It did emit, and it did drop. */
  uint64_t events = 0, dropped = 0;
  for (int i = 0; i < counts.nthreads; i++) {
    events += counts.t[i].events;
    dropped += counts.t[i].dropped;
  }
  assert_true(events > 0);
  assert_true(dropped > 0);
  /* Every event accounted for: 14 enabled events per iteration, plus the first. */
  assert_int_equal(events + dropped, 19999 * 14 + 1);
}

FXT_TEST_MAIN(
    cmocka_unit_test(no_allocation_on_emit_path))
