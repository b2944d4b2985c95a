/* trigger.c - the `trigger` option: a snapshot (fxt_snapshot) written when the process gets a
 * fatal signal, before it dies.
 *
 * The handler runs on the thread's alternate signal stack where it has one (a stack overflow
 * leaves no room on the normal stack): every traced thread gets one when it takes a buffer
 * (fxt_trigger_thread, slots_attach.c) unless it has its own. It writes the snapshot once, through
 * the consumer thread (which has the writers, the string table and the descriptions; the
 * handler only hands it a file and polls, nanosleep and atomics, for at most TRIGGER_WAIT_MS:
 * a consumer stuck on a lock the dying thread held costs that wait, no more). Then it chains
 * to the handler the program had installed, or, when that was the default action, restores
 * the default and re-raises the signal, which is blocked while the handler runs and so is
 * delivered as it returns: the process dies of it as it would have. A crash of the consumer
 * thread itself writes no snapshot (nobody would write it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fxtrace/errors.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "session_int.h"
#include "trigger.h"

#define TRIGGER_WAIT_MS 5000
#define ALT_STACK_BYTES (64u << 10)

static const int k_fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};
#define NFATAL (sizeof(k_fatal) / sizeof(k_fatal[0]))

/* Written by fxt_trigger_install / fxt_trigger_remove (under the session's lock) while no
 * handler of ours is installed; read by the handler. */
static struct sigaction prev[NFATAL];
static char trigger_path[4096];
static _Atomic bool installed;
static _Atomic int fired; /* one snapshot per process: the first fatal signal writes it */

static void chain(int k, int sig, siginfo_t *si, void *uc)
{
  const struct sigaction *p = &prev[k];
  if ((p->sa_flags & SA_SIGINFO) && p->sa_sigaction) {
    p->sa_sigaction(sig, si, uc);
    return;
  }
  if (p->sa_handler == SIG_IGN)
    return;
  if (p->sa_handler != SIG_DFL) {
    p->sa_handler(sig);
    return;
  }
  struct sigaction dfl;
  memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, NULL);
  raise(sig); /* pending until this handler returns: then the default action */
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
  int saved = errno;
  size_t k = 0;
  while (k < NFATAL && k_fatal[k] != sig)
    k++;
  if (k == NFATAL)
    return;
  if (atomic_exchange_explicit(&fired, 1, memory_order_relaxed) == 0 &&
      atomic_load_explicit(&installed, memory_order_acquire))
    fxt_snapshot_in_signal(trigger_path, TRIGGER_WAIT_MS);
  chain((int)k, sig, si, uc);
  errno = saved;
}

int fxt_trigger_install(const char *path)
{
  if (strlen(path) >= sizeof(trigger_path))
    return FXT_EINVAL;
  strcpy(trigger_path, path);
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_fatal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (size_t k = 0; k < NFATAL; k++)
    if (sigaction(k_fatal[k], &sa, &prev[k]) != 0)
      return -errno;
  atomic_store_explicit(&fired, 0, memory_order_relaxed);
  /* Release: a handler that sees installed sees the path. */
  atomic_store_explicit(&installed, true, memory_order_release);
  return 0;
}

void fxt_trigger_set_path(const char *path)
{
  if (strlen(path) < sizeof(trigger_path))
    strcpy(trigger_path, path);
}

void fxt_trigger_remove(void)
{
  if (!atomic_load_explicit(&installed, memory_order_relaxed))
    return;
  atomic_store_explicit(&installed, false, memory_order_relaxed);
  for (size_t k = 0; k < NFATAL; k++) {
    struct sigaction cur;
    /* Only where ours is still there: a handler the program installed since stays. */
    if (sigaction(k_fatal[k], NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
        cur.sa_sigaction == on_fatal)
      sigaction(k_fatal[k], &prev[k], NULL);
  }
}

void fxt_trigger_thread(struct slot_info *info)
{
  if (!atomic_load_explicit(&installed, memory_order_relaxed))
    return;
  stack_t cur;
  if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE))
    return; /* the thread has one of its own */
  if (!info->alt_stack) {
    /* Kept with the slot for its next owners: a slot is taken again only once its thread
     * has exited. */
    void *p = mmap(NULL, ALT_STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED)
      return;
    info->alt_stack = p;
  }
  stack_t ss = {.ss_sp = info->alt_stack, .ss_size = ALT_STACK_BYTES, .ss_flags = 0};
  sigaltstack(&ss, NULL);
}
