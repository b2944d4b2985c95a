/* fn_live.c - function_graph in the live `trace` and `trace_pipe` files (fgraph_live.py): a
 * session with output FILE, current_tracer function_graph, call trees of two threads (one
 * after the other, all pinned to CPU 0, so each line's CPU is known) with events inside
 * them, then `trace` read twice (TRACE, TRACE2) and `trace_pipe` read until empty (PIPE),
 * through the library's tracefs API.
 *
 * With --long, one call whose tree is more than the view holds for a thread (fib(18) inside
 * fn_live_outer: 8361 calls), then `trace` read (TRACE). With --threads, more threads than
 * the view holds at once (FN_THREADS), each inside fn_live_outer with calls returned when the
 * consumer takes their records (they wait, main flushes), then `trace` read (TRACE).
 *
 *   fn_live FILE TRACE TRACE2 PIPE
 *   fn_live --long FILE TRACE
 *   fn_live --threads FILE TRACE
 */
#define _GNU_SOURCE
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fn_live_traced.h"

static void mark(int n)
{
  FXT_INSTANT("demo", "mark", FXT_U32("x", (uint32_t)n));
}

static void *second(void *arg)
{
  (void)arg;
  fn_live_outer(6, mark);
  return NULL;
}

#define FN_THREADS 65 /* live_fgraph.c HOLD_THREADS + 1 */
static pthread_barrier_t held, go;

/* mark, and the first time (inside fn_live_outer(5), fib(5) returned) waits for main. */
static void mark_wait(int n)
{
  mark(n);
  if (n == 5) {
    pthread_barrier_wait(&held);
    pthread_barrier_wait(&go);
  }
}

static void *waiter(void *arg)
{
  (void)arg;
  fn_live_outer(5, mark_wait);
  return NULL;
}

static void die(const char *what, long rc)
{
  fprintf(stderr, "fn_live: %s: %ld\n", what, rc);
  exit(1);
}

static void save(const char *path, const char *text, size_t len)
{
  FILE *f = fopen(path, "w");
  if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0)
    die(path, -1);
}

/* The session on file, function_graph on. */
static void start(const char *file)
{
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "demo:*",
                                   .buffer_kb = 8192, .output = file};
  long rc = fxt_session_start(&cfg);
  if (rc != 0)
    die("fxt_session_start", rc);
  if ((rc = fxt_fs_echo("current_tracer", "function_graph")) < 0)
    die("current_tracer", rc);
}

static void stop(void)
{
  long rc;
  if ((rc = fxt_fs_echo("current_tracer", "nop")) < 0)
    die("current_tracer nop", rc);
  if ((rc = fxt_session_stop()) != 0)
    die("fxt_session_stop", rc);
}

static char text[2][4 << 20];

static void cat_trace(int i, const char *path)
{
  ssize_t n = fxt_fs_cat("trace", text[i], sizeof text[i]); /* the consumer flushed first */
  if (n < 0 || (size_t)n >= sizeof text[i] - 1)
    die("trace", n);
  save(path, text[i], (size_t)n);
}

int main(int argc, char **argv)
{
  if (argc == 4 && strcmp(argv[1], "--long") == 0) {
    start(argv[2]);
    if (fxt_fs_echo("buffer_size_kb", "16384") < 0) /* room for all its lines */
      die("buffer_size_kb", -1);
    fn_live_outer(18, mark);
    cat_trace(0, argv[3]);
    stop();
    return 0;
  }
  if (argc == 4 && strcmp(argv[1], "--threads") == 0) {
    start(argv[2]);
    pthread_t th[FN_THREADS];
    pthread_barrier_init(&held, NULL, FN_THREADS + 1);
    pthread_barrier_init(&go, NULL, FN_THREADS + 1);
    for (int i = 0; i < FN_THREADS; i++)
      if (pthread_create(&th[i], NULL, waiter, NULL) != 0)
        die("pthread_create", i);
    pthread_barrier_wait(&held);
    fxt_session_flush(); /* every thread's records so far: each holds its tree */
    pthread_barrier_wait(&go);
    for (int i = 0; i < FN_THREADS; i++)
      pthread_join(th[i], NULL);
    cat_trace(0, argv[3]);
    stop();
    return 0;
  }
  if (argc != 5)
    die("usage: fn_live FILE TRACE TRACE2 PIPE | --long FILE TRACE | --threads FILE TRACE",
        argc);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0)
    die("sched_setaffinity", -1);
  start(argv[1]);
  /* The view's lines of one CPU are in the order the consumer took the threads' records:
   * taken after each thread's part, they are in time order, as the reference has them. */
  fn_live_outer(8, mark);
  fxt_session_flush();
  pthread_t th; /* inherits the CPU mask */
  if (pthread_create(&th, NULL, second, NULL) != 0 || pthread_join(th, NULL) != 0)
    die("pthread", -1);
  fxt_session_flush();
  fn_live_fib(3);
  mark(0);        /* an event of a thread that holds nothing: a comment, not indented */
  fn_live_fib(1); /* a call with nothing inside, of a thread that holds nothing: a leaf */

  cat_trace(0, argv[2]);
  cat_trace(1, argv[3]);
  struct fxt_fs_file *f;
  long rc;
  if ((rc = fxt_fs_open("trace_pipe", FXT_FS_READ | FXT_FS_NONBLOCK, &f)) != 0)
    die("trace_pipe", rc);
  static char pipe[1 << 20];
  size_t len = 0;
  ssize_t got;
  while ((got = fxt_fs_read(f, pipe + len, 4096 < sizeof pipe - len ? 4096 : sizeof pipe - len)) > 0)
    len += (size_t)got;
  if (got != FXT_EAGAIN)
    die("trace_pipe read", got);
  fxt_fs_close(f);
  save(argv[4], pipe, len);
  stop();
  return 0;
}
