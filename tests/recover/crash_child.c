/* crash_child - a traced process for the crash tests (test_recover_kill.c): THREADS threads
 * fire sequence-numbered events (rt:seq, seq = 0, 1, 2, ... per thread) as fast as they can
 * into a session whose buffers and output file live in DIR, until the process is killed.
 *
 *   crash_child DIR MODE THREADS BUFFER_KB SIGNALS [segv|abort MS]
 *
 * MODE: discard | overwrite | block. SIGNALS 1: a thread of its own sends SIGUSR1 to the
 * emitters all along, and the handler fires rt:sig with a sequence of its own (signal
 * context: when it interrupts an emission, the event goes through the companion writer and
 * the ingress ring). With segv or abort, a thread of its own crashes the process that way MS
 * milliseconds after the emitters started (else the parent kills it). Each emitter publishes
 * its progress in DIR/progress (MAP_SHARED, so it survives the death): entry t = { u32 tid,
 * u32 0, u64 done, u64 sig_done, u64 0 }, done (sig_done) = rt:seq (rt:sig) events whose
 * FXT_TRACE returned (one more may have been committed or counted when the thread died inside
 * the emission).
 * Once every emitter has fired its first event, prints "ready SESSION_DIR\n" on stdout.
 * With CRASH_TRIGGER=FILE in the environment (test_snapshot): a flight recorder (no output
 * file) with trigger=FILE, which writes a snapshot when the process crashes.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

FXT_TRACEPOINT(rt, seq, "seq=%llu", (u64, seq));
FXT_TRACEPOINT(rt, sig, "seq=%llu", (u64, seq));

struct progress {
  _Atomic uint32_t tid;
  uint32_t reserved;
  _Atomic uint64_t done;
  _Atomic uint64_t sig_done;
  uint64_t reserved2;
};

static struct progress *prog;
static _Atomic int started;
static _Thread_local struct progress *mine; /* the emitter's entry, for its signal handler */
static pthread_t emitters[64];
static int nemitters;

static void on_usr1(int sig)
{
  (void)sig;
  struct progress *p = mine;
  if (!p)
    return;
  uint64_t k = atomic_load_explicit(&p->sig_done, memory_order_relaxed);
  FXT_TRACE(rt, sig, k);
  atomic_store_explicit(&p->sig_done, k + 1, memory_order_release);
}

static void *signaller(void *arg)
{
  (void)arg;
  for (;;) {
    for (int t = 0; t < nemitters; t++)
      pthread_kill(emitters[t], SIGUSR1);
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
  }
  return NULL;
}

static void *emitter(void *arg)
{
  struct progress *p = arg;
  mine = p;
  atomic_store_explicit(&p->tid, (uint32_t)gettid(), memory_order_release);
  for (uint64_t i = 0;; i++) {
    FXT_TRACE(rt, seq, i);
    atomic_store_explicit(&p->done, i + 1, memory_order_release);
    if (i == 0)
      atomic_fetch_add(&started, 1);
  }
  return NULL;
}

static void *crasher(void *arg)
{
  const char **how = arg;
  struct timespec ts = {0, atol(how[1]) * 1000000L};
  while (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  nanosleep(&ts, NULL);
  if (strcmp(how[0], "abort") == 0)
    abort();
  /* A page nobody may touch (page 0 is mapped in some sandboxes). */
  int *volatile nowhere = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  *nowhere = 1; /* SIGSEGV */
  return NULL;
}

int main(int argc, char **argv)
{
  if (argc != 6 && argc != 8) {
    fprintf(stderr, "usage: crash_child DIR MODE THREADS BUFFER_KB SIGNALS [segv|abort MS]\n");
    return 2;
  }
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core); /* a crash here is the test, not a core file */
  const char *dir = argv[1];
  int threads = atoi(argv[3]);
  if (threads < 1 || threads > 64)
    return 2;
  char path[4200];
  snprintf(path, sizeof(path), "%s/progress", dir);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || ftruncate(fd, 64 * sizeof(struct progress)) != 0)
    return 3;
  prog = mmap(NULL, 64 * sizeof(struct progress), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (prog == MAP_FAILED)
    return 3;
  char out[4200];
  snprintf(out, sizeof(out), "%s/out.fxt", dir);
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "rt:*",
                                   .output = getenv("CRASH_TRIGGER") ? "" : out, .buffers = dir,
                                   .buffer_kb = (uint32_t)atoi(argv[4]),
                                   .total_kb = 64 * 1024, .block_timeout_ms = 1,
                                   .trigger = getenv("CRASH_TRIGGER")}; /* test_snapshot */
  cfg.mode = !strcmp(argv[2], "overwrite") ? FXT_MODE_OVERWRITE
             : !strcmp(argv[2], "block")   ? FXT_MODE_BLOCK
                                           : FXT_MODE_DISCARD;
  if (fxt_session_start(&cfg) != 0)
    return 4;
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_usr1;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);
  pthread_t th;
  for (int t = 0; t < threads; t++)
    pthread_create(&emitters[t], NULL, emitter, &prog[t]);
  nemitters = threads;
  while (atomic_load(&started) < threads)
    sched_yield();
  printf("ready %s\n", fxt_session_buffers());
  fflush(stdout);
  if (atoi(argv[5]))
    pthread_create(&th, NULL, signaller, NULL);
  if (argc == 8)
    pthread_create(&th, NULL, crasher, argv + 6);
  for (;;)
    pause();
}
