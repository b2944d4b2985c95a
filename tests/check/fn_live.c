/* fn_live.c - function_graph in the live `trace` and `trace_pipe` files (fgraph_live.py): a
 * session with output FILE, current_tracer function_graph, call trees of two threads (one
 * after the other, all pinned to CPU 0, so each line's CPU is known) with events inside
 * them, then `trace` read twice (TRACE, TRACE2) and `trace_pipe` read until empty (PIPE),
 * through the library's tracefs API.
 *
 *   fn_live FILE TRACE TRACE2 PIPE
 */
#define _GNU_SOURCE
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

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

int main(int argc, char **argv)
{
  if (argc != 5)
    die("usage: fn_live FILE TRACE TRACE2 PIPE", argc);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0)
    die("sched_setaffinity", -1);
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "demo:*",
                                   .buffer_kb = 8192, .output = argv[1]};
  long rc = fxt_session_start(&cfg);
  if (rc != 0)
    die("fxt_session_start", rc);
  if ((rc = fxt_fs_echo("current_tracer", "function_graph")) < 0)
    die("current_tracer", rc);
  /* The view's lines of one CPU are in the order the consumer took the threads' records:
   * taken after each thread's part, they are in time order, as the reference has them. */
  fn_live_outer(8, mark);
  fxt_session_flush();
  pthread_t th; /* inherits the CPU mask */
  if (pthread_create(&th, NULL, second, NULL) != 0 || pthread_join(th, NULL) != 0)
    die("pthread", -1);
  fxt_session_flush();
  fn_live_fib(3);
  mark(0); /* an event of a thread that holds nothing: a comment, not indented */

  static char text[2][1 << 20];
  ssize_t n[2];
  for (int i = 0; i < 2; i++) /* each read flushes the consumer first */
    if ((n[i] = fxt_fs_cat("trace", text[i], sizeof text[i])) < 0 ||
        (size_t)n[i] >= sizeof text[i] - 1)
      die("trace", n[i]);
  save(argv[2], text[0], (size_t)n[0]);
  save(argv[3], text[1], (size_t)n[1]);
  struct fxt_fs_file *f;
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
  if ((rc = fxt_fs_echo("current_tracer", "nop")) < 0)
    die("current_tracer nop", rc);
  if ((rc = fxt_session_stop()) != 0)
    die("fxt_session_stop", rc);
  return 0;
}
