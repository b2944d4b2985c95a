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
 * With --split, the layout made as the files are read (live_fgraph.c fxt_live_fg_arrange)
 * across its edges, on CPU 0: a tree of main; a thread "fn_open" inside its outermost call
 * when `trace` is opened (read after the call returned: TRACE, main's tree only); a thread
 * "fn_split" inside its outermost call at a trace_pipe read (PIPE1: the trees before it) and
 * out of it at the next; a thread "fn_clear" inside its call at a trace_pipe read and when
 * `trace` is emptied (`echo > trace`: what it held is gone), then a tree of its own, then one
 * of main; then a tree of main that a `trace` reader in the plain layout is inside when
 * trace_pipe arranges it (plain_reader_ends). PIPE: every trace_pipe read, PIPE1 its first.
 *
 *   fn_live FILE TRACE TRACE2 PIPE
 *   fn_live --long FILE TRACE
 *   fn_live --threads FILE TRACE
 *   fn_live --split FILE TRACE PIPE1 PIPE
 *
 * With --options, main's tree and a second thread's, then `trace` read (OUT.K) with each
 * set K of options/funcgraph-* (OPTS: "abstime=1,cpu=0", every other option at the
 * kernel's default), and trace_pipe (OUT.pipe) with the last.
 *
 *   fn_live --options FILE OUT OPTS...
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
#include <time.h>

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

/* --split's threads: each named, inside fn_live_outer(4) until main lets it go (at mark(at));
 * with again, then a tree of fn_live_outer(2). */
struct held_call {
  const char *name;
  int at;
  bool again;
  pthread_barrier_t in, out;
  pthread_t th;
};
static struct held_call *holding;

static void mark_hold(int n)
{
  mark(n);
  if (n == holding->at) {
    pthread_barrier_wait(&holding->in);
    pthread_barrier_wait(&holding->out);
  }
}

static void *hold_call(void *arg)
{
  struct held_call *h = arg;
  pthread_setname_np(pthread_self(), h->name); /* before its first record */
  fn_live_outer(4, mark_hold);
  if (h->again)
    fn_live_outer(2, mark);
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

/* The thread of h started and inside its call (its records so far taken by the consumer). */
static void hold_start(struct held_call *h)
{
  holding = h;
  pthread_barrier_init(&h->in, NULL, 2);
  pthread_barrier_init(&h->out, NULL, 2);
  if (pthread_create(&h->th, NULL, hold_call, h) != 0)
    die("pthread_create", -1);
  pthread_barrier_wait(&h->in);
  fxt_session_flush();
}

static void hold_end(struct held_call *h)
{
  pthread_barrier_wait(&h->out);
  if (pthread_join(h->th, NULL) != 0)
    die("pthread_join", -1);
  fxt_session_flush();
}

/* What trace_pipe (f) has now, appended to pipe (*len of it). */
static void pipe_read(struct fxt_fs_file *f, char *pipe, size_t cap, size_t *len)
{
  ssize_t got;
  while ((got = fxt_fs_read(f, pipe + *len, 4096 < cap - *len ? 4096 : cap - *len)) > 0)
    *len += (size_t)got;
  if (got != FXT_EAGAIN)
    die("trace_pipe read", got);
}

static void pin_cpu0(void)
{
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0)
    die("sched_setaffinity", -1);
}

/* A `trace` reader in the plain layout (current_tracer nop), its place in a tree not arranged
 * yet, when `trace` opened in the function_graph layout arranges the tree: the entries
 * under its place are taken out and put back as lines, so it reads no further than the
 * 4096 bytes it had (of its last line, what that read left: under 256 bytes), not the rest
 * of the tree (about 8 KiB of fib(10)'s 177 calls), nor what took their place. */
static void plain_reader_ends(struct fxt_fs_file *p, char *pipe, size_t cap, size_t *len)
{
  fn_live_outer(10, mark);
  fxt_session_flush();
  long rc;
  struct fxt_fs_file *t;
  if ((rc = fxt_fs_echo("current_tracer", "nop")) < 0)
    die("current_tracer nop", rc);
  if ((rc = fxt_fs_open("trace", FXT_FS_READ, &t)) != 0)
    die("trace", rc);
  ssize_t got = fxt_fs_read(t, text[0], 4096); /* the header */
  if (got <= 0 || (got = fxt_fs_read(t, text[0], 4096)) != 4096)
    die("trace (plain) read", got);
  if ((rc = fxt_fs_echo("current_tracer", "function_graph")) < 0)
    die("current_tracer", rc);
  struct fxt_fs_file *arrange; /* opened in the layout: arranges, consumes nothing */
  if ((rc = fxt_fs_open("trace", FXT_FS_READ, &arrange)) != 0)
    die("trace", rc);
  fxt_fs_close(arrange);
  size_t after = 0;
  while ((got = fxt_fs_read(t, text[0], sizeof text[0])) > 0)
    after += (size_t)got;
  if (got < 0)
    die("trace (plain) read after", got);
  fxt_fs_close(t);
  pipe_read(p, pipe, cap, len);
  if (after >= 256)
    die("a plain trace reader read on after an arrangement, bytes", (long)after);
}

static int split(const char *file, const char *trace, const char *pipe1, const char *pipe)
{
  static char text_pipe[1 << 20];
  size_t len = 0;
  pin_cpu0();
  start(file);
  struct fxt_fs_file *p, *t;
  long rc;
  if ((rc = fxt_fs_open("trace_pipe", FXT_FS_READ | FXT_FS_NONBLOCK, &p)) != 0)
    die("trace_pipe", rc);
  fn_live_outer(3, mark);
  fxt_session_flush();
  struct held_call open = {.name = "fn_open", .at = 4};
  hold_start(&open);
  if ((rc = fxt_fs_open("trace", FXT_FS_READ, &t)) != 0) /* fn_open inside its call */
    die("trace", rc);
  hold_end(&open);
  size_t n = 0;
  ssize_t got;
  while ((got = fxt_fs_read(t, text[0] + n, 4096 < sizeof text[0] - n ? 4096 : sizeof text[0] - n)) > 0)
    n += (size_t)got;
  if (got < 0)
    die("trace read", got);
  fxt_fs_close(t);
  save(trace, text[0], n);
  struct held_call spl = {.name = "fn_split", .at = 4};
  hold_start(&spl);
  pipe_read(p, text_pipe, sizeof text_pipe, &len); /* fn_split inside its call */
  save(pipe1, text_pipe, len);
  hold_end(&spl);
  pipe_read(p, text_pipe, sizeof text_pipe, &len);
  /* at its last mark: then it returns, and makes a tree whose flush would print what it held */
  struct held_call clr = {.name = "fn_clear", .at = 5, .again = true};
  hold_start(&clr);
  pipe_read(p, text_pipe, sizeof text_pipe, &len); /* it holds its call's records */
  if ((rc = fxt_fs_echo("trace", "")) < 0)
    die("echo > trace", rc);
  hold_end(&clr);
  fn_live_outer(2, mark);
  fxt_session_flush();
  pipe_read(p, text_pipe, sizeof text_pipe, &len);
  plain_reader_ends(p, text_pipe, sizeof text_pipe, &len);
  fxt_fs_close(p);
  save(pipe, text_pipe, len);
  stop();
  return 0;
}

static const char *const k_opts[] = {"abstime", "cpu", "duration", "overhead", "proc", "tail"};

/* options/funcgraph-* as the kernel's defaults, then as set says ("name=v,..."). */
static void set_options(const char *set)
{
  long rc;
  char path[128], item[64];
  for (size_t i = 0; i < sizeof k_opts / sizeof k_opts[0]; i++) {
    bool on = strcmp(k_opts[i], "cpu") == 0 || strcmp(k_opts[i], "duration") == 0 ||
              strcmp(k_opts[i], "overhead") == 0;
    snprintf(path, sizeof path, "options/funcgraph-%s", k_opts[i]);
    if ((rc = fxt_fs_echo(path, on ? "1" : "0")) < 0)
      die(path, rc);
  }
  for (const char *p = set; *p;) {
    size_t n = strcspn(p, ",");
    snprintf(item, sizeof item, "%.*s", (int)n, p);
    char *eq = strchr(item, '=');
    if (!eq)
      die("option without =", -1);
    *eq = 0;
    snprintf(path, sizeof path, "options/funcgraph-%s", item);
    if ((rc = fxt_fs_echo(path, eq + 1)) < 0)
      die(path, rc);
    char back[8];
    if (fxt_fs_cat(path, back, sizeof back) != 2 || back[0] != eq[1])
      die("an option read back", -1);
    p += n + (p[n] == ',');
  }
}

/* mark, then 50 us at least: the call around it takes over 10 us (a duration with a mark) */
static void mark_slow(int n)
{
  mark(n);
  struct timespec t = {0, 50000};
  while (nanosleep(&t, &t) != 0)
    ;
}

static int options(const char *file, const char *out, int n, char **sets)
{
  pin_cpu0();
  start(file);
  char back[8], path[512];
  if (fxt_fs_cat("options/funcgraph-cpu", back, sizeof back) != 2 || strcmp(back, "1\n") != 0)
    die("options/funcgraph-cpu is not 1 by default", -1);
  if (fxt_fs_echo("options/funcgraph-tail", "2") != FXT_EINVAL)
    die("options/funcgraph-tail took 2", -1);
  fn_live_outer(4, mark_slow);
  fxt_session_flush();
  pthread_t th;
  if (pthread_create(&th, NULL, second, NULL) != 0 || pthread_join(th, NULL) != 0)
    die("pthread", -1);
  fxt_session_flush();
  for (int i = 0; i < n; i++) {
    set_options(sets[i]);
    snprintf(path, sizeof path, "%s.%d", out, i);
    cat_trace(0, path);
  }
  struct fxt_fs_file *f;
  long rc;
  if ((rc = fxt_fs_open("trace_pipe", FXT_FS_READ | FXT_FS_NONBLOCK, &f)) != 0)
    die("trace_pipe", rc);
  size_t len = 0;
  pipe_read(f, text[1], sizeof text[1], &len);
  fxt_fs_close(f);
  snprintf(path, sizeof path, "%s.pipe", out);
  save(path, text[1], len);
  set_options("");
  stop();
  return 0;
}

int main(int argc, char **argv)
{
  if (argc >= 5 && strcmp(argv[1], "--options") == 0)
    return options(argv[2], argv[3], argc - 4, argv + 4);
  if (argc == 6 && strcmp(argv[1], "--split") == 0)
    return split(argv[2], argv[3], argv[4], argv[5]);
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
  pin_cpu0();
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
  pipe_read(f, pipe, sizeof pipe, &len);
  fxt_fs_close(f);
  save(argv[4], pipe, len);
  stop();
  return 0;
}
