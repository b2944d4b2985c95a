/* fn_fork.c - function_graph across fork (without exec), for fn_fork.sh. Built with the
 * function tracer's flags (the patchable-entry engine on x86-64).
 *   fn_fork OUT_PATTERN PARENT_CALLS CHILD_CALLS FORKS
 * OUT_PATTERN has %p (each process's file). The tracer on, PARENT_CALLS calls of fn_leaf
 * (through fn_loop); then FORKS times fn_forker, which forks: the child makes CHILD_CALLS
 * calls, writes a filter (set_ftrace_notrace, emptied: the function tracer's lock must be
 * usable in a child) and its CHILD_CALLS calls again, returns from fn_forker and stops its
 * session; meanwhile a thread of the parent writes set_ftrace_notrace in a loop (its lock
 * held at some forks). The parent waits for each child, makes PARENT_CALLS calls again, stops.
 * Each process prints "pid calls_made cut" (cut: fxt_functions_counts' frames never closed)
 * as its last line; a child that does not end within 30 s is killed (SIGALRM). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fxtrace/functions.h>
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>

#include "../fn_keep.h"

static volatile int sink;
static _Atomic int stop;

KEEP static int fn_leaf(int x)
{
  return x + 1;
}

/* Its store to sink keeps two calls with the same argument two calls (clang folds the second
 * of a function without side effects into the first). */
KEEP static int fn_loop(int n)
{
  int s = 0;
  for (int i = 0; i < n; i++)
    s += fn_leaf(i);
  sink = s;
  return s;
}

/* The child's work inside the call that forked: its return is the child's too. */
KEEP static pid_t fn_forker(int child_calls)
{
  pid_t pid = fork();
  if (pid == 0) {
    alarm(30);
    sink = fn_loop(child_calls);
    if (fxt_fs_echo("set_ftrace_notrace", "") < 0)
      exit(3);
    sink = fn_loop(child_calls);
  }
  return pid;
}

static void *writer(void *arg)
{
  (void)arg;
  while (!atomic_load(&stop))
    if (fxt_fs_echo("set_ftrace_notrace", "main") < 0 || fxt_fs_echo("set_ftrace_notrace", "") < 0)
      break;
  return NULL;
}

static int finish(int calls)
{
  struct fxt_functions_counts c = {.struct_size = sizeof(c)};
  if (fxt_fs_echo("current_tracer", "nop") < 0 || fxt_functions_counts(&c) != 0 ||
      fxt_session_stop() != 0)
    return 1;
  printf("%d %d %llu\n", (int)getpid(), calls, (unsigned long long)c.cut);
  return 0;
}

int main(int argc, char **argv)
{
  if (argc != 5)
    return 2;
  int parent_calls = atoi(argv[2]), child_calls = atoi(argv[3]), forks = atoi(argv[4]);
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "", .output = argv[1]};
  if (fxt_session_start(&cfg) != 0 || fxt_fs_echo("current_tracer", "function_graph") < 0)
    return 1;
  sink = fn_loop(parent_calls);
  pthread_t t;
  if (pthread_create(&t, NULL, writer, NULL) != 0)
    return 1;
  int failed = 0;
  for (int i = 0; i < forks; i++) {
    pid_t pid = fn_forker(child_calls);
    if (pid == 0) { /* _exit: what the parent's writer thread held at the fork (an open
                       tracefs file) is no one's here, which LeakSanitizer would report */
      int rc = finish(2 * child_calls);
      fflush(stdout);
      _exit(rc);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      fprintf(stderr, "fn_fork: child %d: status %d\n", (int)pid, st);
      failed = 1;
    }
  }
  atomic_store(&stop, 1);
  pthread_join(t, NULL);
  sink = fn_loop(parent_calls);
  return finish(2 * parent_calls) || failed;
}
