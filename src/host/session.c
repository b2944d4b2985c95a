/* session.c - session lifecycle: start, stop, FXTRACE at load time, exit, fork.
 *
 * One session per process at a time. `lifecycle` serializes start, stop and fork; the emit
 * path never takes it. A forked child keeps tracing into a file of its own (its pid in the
 * name) with a consumer of its own; the parent's unread records stay the parent's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "buffers.h"
#include "clock.h"
#include "consumer.h"
#include "control.h"
#include "functions.h"
#include "harvest.h"
#include "live.h"
#include "registry.h"
#include "server.h"
#include "session_int.h"
#include "slots.h"
#include "trigger.h"

struct session fxt_session = {.pool_lock = PTHREAD_MUTEX_INITIALIZER};
static pthread_mutex_t lifecycle = PTHREAD_MUTEX_INITIALIZER;
static bool running;

/* The running session's gen while its recording is off (tracing_on 0: a write, or a traceoff
 * event trigger), else 0: an event with triggers refused at its fire site runs them while
 * this is its slot's gen (fxt_filter_off, filters.c), so that a traceon trigger can turn
 * recording back on. Written by fxt_session_pause (under lifecycle), by the traceoff and
 * traceon triggers (emit path: evtrig_fire.c, a store after traceoff's compare-and-swap of
 * fxt_session_active, a compare-and-swap before traceon's store of it) and cleared by
 * fxt_session_stop before its quiesce and again after it. Read relaxed by emissions, inside
 * their depth window (the stop's membarrier orders it as fxt_session_active). */
_Atomic uint32_t fxt_session_off_gen;
static uint32_t last_gen;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* Expands %p (pid) and %% in pattern. A child of fork whose pattern has no %p would write over
 * its parent's file, so then (force_pid) ".<pid>" is appended. */
static int expand_output(const char *pattern, pid_t pid, bool force_pid, char *out, size_t size)
{
  size_t n = 0;
  bool had_pid = false;
  for (const char *p = pattern; *p; p++) {
    char piece[24] = {*p, 0};
    if (p[0] == '%' && p[1] == 'p') {
      snprintf(piece, sizeof(piece), "%d", (int)pid);
      had_pid = true;
      p++;
    } else if (p[0] == '%' && p[1] == '%') {
      p++;
    }
    size_t k = strlen(piece);
    if (n + k + 1 > size)
      return FXT_E2BIG;
    memcpy(out + n, piece, k + 1);
    n += k;
  }
  out[n] = 0;
  if (force_pid && !had_pid && n && fxt_outfile_fd(out) < 0) { /* (fd:N: shared, as stdout) */
    int k = snprintf(out + n, size - n, ".%d", (int)pid);
    if (k < 0 || (size_t)k >= size - n)
      return FXT_E2BIG;
  }
  return 0;
}

static uint32_t round_pow2(uint64_t bytes)
{
  uint64_t p = FXT_RING_MIN_SIZE;
  while (p < bytes && p < FXT_RING_MAX_SIZE)
    p <<= 1;
  return (uint32_t)p;
}

/* fork: no lock of ours may be held by another thread at the moment of the fork. They are
 * taken in the order the rest of the code nests them: lifecycle, pool_lock (attach asks the
 * control lock whether a thread is muted), control, live (formatting looks descriptions up in
 * the registry), registry, the function tracer's (FXTRACE's keys are applied under
 * lifecycle). */
static void atfork_prepare(void)
{
  fxt_server_fork_prepare(); /* first: the server thread may need lifecycle to finish */
  pthread_mutex_lock(&lifecycle);
  if (running)
    pthread_mutex_lock(&fxt_session.pool_lock);
  fxt_control_atfork_prepare();
  live_atfork_prepare();
  fxt_registry_lock();
  fxt_fn_atfork_prepare(); /* last: the function tracer's lock nests inside all of these */
}

static void atfork_parent(void)
{
  fxt_fn_atfork_parent();
  fxt_registry_unlock();
  live_atfork_parent();
  fxt_control_atfork_parent();
  if (running)
    pthread_mutex_unlock(&fxt_session.pool_lock);
  pthread_mutex_unlock(&lifecycle);
  fxt_server_fork_parent();
}

static void atfork_child(void)
{
  struct session *s = &fxt_session;
  fxt_fn_atfork_child();
  live_atfork_child();
  fxt_registry_unlock();
  fxt_control_atfork_child();
  if (running) {
    pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
    s->pid = pid;
    int rc = expand_output(s->cfg.output, pid, true, s->output, sizeof(s->output));
    /* The child's crash snapshot goes to a file of its own too (its pid, or ".<pid>"). */
    if (s->trigger[0] &&
        expand_output(s->trigger_pattern, pid, true, s->trigger, sizeof(s->trigger)) == 0)
      fxt_trigger_set_path(s->trigger);
    fxt_harvest_in_fork_child(true); /* no dlopen before exec (harvest.h) */
    fxt_slots_reset_after_fork(s, fxt_tls_slot, pid, tid); /* the child's own buffers */
    fxt_harvest_in_fork_child(false);
    s->consumer_running = false; /* the parent's consumer thread does not exist here */
    atomic_store_explicit(&s->wake, 0, memory_order_relaxed);
    if (rc != 0 || fxt_consumer_start(s) != 0) {
      atomic_store_explicit(&fxt_session_active, 0, memory_order_release);
      fxt_buffers_stop(s, true);
      running = false;
    } else {
      fxt_buffers_publish(s);
    }
  }
  pthread_mutex_init(&lifecycle, NULL);
  fxt_server_after_fork();
}

static void register_atfork(void)
{
  pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* Set while a consumer runs that can write snapshots (see fxt_snapshot_in_signal). */
static _Atomic bool snapshots_on;

/* The trigger option: a failure is reported and tracing goes on without it. */
static void start_trigger(struct session *s, const char *pattern)
{
  snprintf(s->trigger_pattern, sizeof(s->trigger_pattern), "%s", pattern);
  int rc = expand_output(pattern, s->pid, false, s->trigger, sizeof(s->trigger));
  if (rc == 0)
    rc = fxt_trigger_install(s->trigger);
  if (rc != 0)
    fprintf(stderr, "fxtrace: trigger=%s: %s (no snapshot on a crash)\n", pattern,
            fxt_strerror(rc));
}

int fxt_session_start(const struct fxt_session_config *user)
{
  struct session *s = &fxt_session;
  struct fxt_session_config cfg = {
      .struct_size = sizeof(cfg),
      .mode = FXT_MODE_DISCARD,
      .block_timeout_ms = 10,
      .clock = FXT_CLOCK_AUTO,
      .buffer_kb = 4096,
      .total_kb = 1048576,
      .events = "*:*",
      .output = "fxtrace-%p.fxt",
      .buffers = NULL,
  };
  if (user) {
    size_t n = user->struct_size < sizeof(cfg) ? user->struct_size : sizeof(cfg);
    uint32_t own = cfg.struct_size;
    struct fxt_session_config defaults = cfg;
    memcpy(&cfg, user, n);
    cfg.struct_size = own;
    /* Zero means "default". */
    if (!cfg.buffer_kb)
      cfg.buffer_kb = defaults.buffer_kb;
    if (!cfg.total_kb)
      cfg.total_kb = defaults.total_kb;
    if (!cfg.block_timeout_ms)
      cfg.block_timeout_ms = defaults.block_timeout_ms;
    if (!cfg.events)
      cfg.events = defaults.events;
    if (!cfg.output)
      cfg.output = defaults.output;
  }
  if (user && user->struct_size < offsetof(struct fxt_session_config, buffers) + sizeof(cfg.buffers))
    cfg.buffers = NULL; /* a caller built before the field existed: the default */
  if (user && user->struct_size < offsetof(struct fxt_session_config, trigger) + sizeof(cfg.trigger))
    cfg.trigger = NULL;
  if (cfg.mode > FXT_MODE_BLOCK || cfg.clock > FXT_CLOCK_MONOTONIC ||
      cfg.buffer_kb > FXT_RING_MAX_SIZE / 1024 || strlen(cfg.events) >= sizeof(s->events) ||
      strlen(cfg.output) >= sizeof(s->output) ||
      (cfg.buffers && strlen(cfg.buffers) >= sizeof(s->buffers_base) - 32) ||
      (cfg.trigger && strlen(cfg.trigger) >= sizeof(s->trigger) - 32))
    return FXT_EINVAL;

  pthread_once(&atfork_once, register_atfork);
  pthread_mutex_lock(&lifecycle);
  if (running) {
    pthread_mutex_unlock(&lifecycle);
    return FXT_EBUSY;
  }
  s->cfg = cfg;
  strcpy(s->events, cfg.events);
  s->cfg.events = s->events;
  strcpy(s->output_pattern, cfg.output);
  s->cfg.output = s->output_pattern;
  s->pid = getpid();
  int rc = expand_output(s->output_pattern, s->pid, false, s->output, sizeof(s->output));
  s->buffer_bytes = round_pow2((uint64_t)cfg.buffer_kb * 1024);
  s->gen = ++last_gen;
  s->buffers_explicit = cfg.buffers != NULL;
  if (cfg.buffers)
    strcpy(s->buffers_base, cfg.buffers);
  else if (fxt_buffers_default_dir(s->buffers_base, sizeof(s->buffers_base)) != 0)
    s->buffers_base[0] = 0;
  s->cfg.buffers = s->buffers_base;
  if (rc == 0)
    rc = fxt_clock_setup(cfg.clock, s->buffers_base, &s->ticks_per_second);
  if (rc == 0)
    fxt_fn_set_rate(s->ticks_per_second); /* tracing_thresh in this clock's ticks */
  if (rc == 0)
    rc = fxt_slots_setup(s);
  if (rc == 0) {
    /* Before any event (the string table is complete from here) and before the consumer
     * thread exists (it reads the mirror's geometry: pthread_create orders the two). */
    fxt_buffers_publish(s);
    rc = fxt_consumer_start(s);
    if (rc != 0)
      fxt_buffers_stop(s, true);
  }
  if (rc == 0 && cfg.trigger && cfg.trigger[0])
    start_trigger(s, cfg.trigger);
  if (rc == 0) {
    atomic_store_explicit(&snapshots_on, true, memory_order_release);
    /* Release pairs with the acquire in fxt_emit_enter_slow: the session is set up. */
    atomic_store_explicit(&fxt_session_active, s->gen, memory_order_release);
    running = true;
    rc = fxt_tracepoint_enable_patterns(s->events);
    rc = rc < 0 ? rc : 0;
  }
  pthread_mutex_unlock(&lifecycle);
  if (rc == 0)
    fxt_server_start(); /* outside lifecycle; a refused directory leaves tracing on */
  return rc;
}

int fxt_session_stop(void)
{
  struct session *s = &fxt_session;
  fxt_server_stop(); /* before lifecycle: the server thread may be waiting for it */
  pthread_mutex_lock(&lifecycle);
  if (!running) {
    pthread_mutex_unlock(&lifecycle);
    return FXT_ENOENT;
  }
  fxt_tracepoint_enable_patterns(""); /* fire sites back to one load and a branch */
  atomic_store_explicit(&fxt_session_off_gen, 0, memory_order_relaxed); /* no traceon now */
  atomic_store_explicit(&fxt_session_active, 0, memory_order_release); /* (paused or not) */
  fxt_trigger_remove();
  s->trigger[0] = 0;
  atomic_store_explicit(&snapshots_on, false, memory_order_relaxed);
  fxt_slots_quiesce(s); /* no thread is inside emit, nor will enter it */
  /* A traceon trigger that read off_gen before its clearing may have stored the gen back
   * (its emission was waited for): off again, and the threads that saw it waited for too. */
  atomic_store_explicit(&fxt_session_off_gen, 0, memory_order_relaxed);
  if (atomic_exchange_explicit(&fxt_session_active, 0, memory_order_acq_rel) != 0)
    fxt_slots_quiesce(s);
  fxt_consumer_stop(s); /* last pass as every writer's producer, then the file is closed */
  fxt_buffers_stop(s, true); /* everything is in the file: the buffers' files go */
  running = false;
  pthread_mutex_unlock(&lifecycle);
  return 0;
}

int fxt_session_flush(void)
{
  pthread_mutex_lock(&lifecycle);
  bool r = running;
  pthread_mutex_unlock(&lifecycle);
  return r ? fxt_consumer_flush(&fxt_session) : FXT_ENOENT;
}

int fxt_session_running(void)
{
  pthread_mutex_lock(&lifecycle);
  int r = running;
  pthread_mutex_unlock(&lifecycle);
  return r;
}

/* tracing_on: pausing makes every emission refuse (as with no session, not counted) while the
 * consumer goes on draining; resuming restores the session's generation. */
void fxt_session_pause(bool paused)
{
  pthread_mutex_lock(&lifecycle);
  if (running) {
    atomic_store_explicit(&fxt_session_off_gen, paused ? fxt_session.gen : 0,
                          memory_order_relaxed);
    atomic_store_explicit(&fxt_session_active, paused ? 0 : fxt_session.gen,
                          memory_order_release);
  }
  pthread_mutex_unlock(&lifecycle);
}

const char *fxt_session_output(void)
{
  return fxt_session.output;
}

const char *fxt_session_buffers(void)
{
  return fxt_session.buffers_dir;
}

/* ---- snapshots ----------------------------------------------------------------------------- */

/* Opens path and has the consumer write the snapshot into it (it closes it). Only a regular
 * file (created, or truncated once it is known to be one): the open never waits (O_NONBLOCK:
 * a FIFO's open waits for a reader, with the session's lock held here), and anything else (a
 * FIFO, a socket, a device) could block the consumer's writes: FXT_EINVAL. Async-signal-safe
 * (fxt_snapshot_in_signal). */
static int snapshot(const char *path, uint32_t timeout_ms)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0644);
  if (fd < 0)
    return errno == ENXIO ? FXT_EINVAL : -errno; /* a FIFO without reader, a socket */
  struct stat st;
  int rc = fstat(fd, &st) != 0 ? -errno : !S_ISREG(st.st_mode) ? FXT_EINVAL : 0;
  if (rc == 0 && (ftruncate(fd, 0) != 0 || fcntl(fd, F_SETFL, 0) != 0))
    rc = -errno;
  if (rc != 0) {
    close(fd);
    return rc;
  }
  rc = fxt_consumer_snapshot(&fxt_session, fd, timeout_ms);
  if (rc == FXT_EBUSY)
    close(fd);
  return rc;
}

int fxt_snapshot(const char *path)
{
  if (!path || !path[0])
    return FXT_EINVAL;
  pthread_mutex_lock(&lifecycle); /* the consumer runs until this returns */
  int rc = running ? snapshot(path, 10000) : FXT_ENOENT;
  pthread_mutex_unlock(&lifecycle);
  return rc;
}

/* ---- a flight recorder's live view (control.h) ------------------------------------------ */

bool fxt_control_view_hold(void)
{
  pthread_mutex_lock(&lifecycle);
  /* Held until fxt_control_view_release on success: one reader at a time, and the consumer
   * runs until the reader is done. */
  if (running && fxt_flight_recorder(&fxt_session) &&
      fxt_consumer_view_hold(&fxt_session, 10000) == 0)
    return true;
  pthread_mutex_unlock(&lifecycle);
  return false;
}

void fxt_control_view_release(void)
{
  fxt_consumer_view_release();
  pthread_mutex_unlock(&lifecycle);
}

void fxt_control_pipe_open(void)
{
  live_pipe_open(); /* before the flush's wake: its passes see it (live.c pipe_readers) */
  pthread_mutex_lock(&lifecycle);
  bool flight = running && fxt_flight_recorder(&fxt_session);
  pthread_mutex_unlock(&lifecycle);
  if (flight)
    fxt_session_flush();
}

void fxt_control_pipe_close(void)
{
  live_pipe_close();
}

void fxt_snapshot_in_signal(const char *path, uint32_t timeout_ms)
{
  /* Acquire pairs with the release at start: the consumer runs (set after it started,
   * cleared before it stops; a stop racing a crash is not served). */
  if (!atomic_load_explicit(&snapshots_on, memory_order_acquire) ||
      pthread_equal(pthread_self(), fxt_session.consumer))
    return;
  (void)snapshot(path, timeout_ms);
}

/* FXTRACE: a session with no code change, started when the library loads, stopped at exit. */
static void stop_at_exit(void)
{
  fxt_session_stop();
}

__attribute__((constructor)) static void start_from_environment(void)
{
  const char *text = getenv("FXTRACE");
  if (!text)
    return;
  static char strings[8192];
  char err[256];
  struct fxt_session_config cfg;
  if (fxt_config_parse(text, &cfg, strings, sizeof(strings), err, sizeof(err)) != 0) {
    fprintf(stderr, "%s; tracing is off\n", err); /* err starts with "FXTRACE: " */
    return;
  }
  int rc = fxt_session_start(&cfg);
  if (rc != 0) {
    fprintf(stderr, "fxtrace: cannot start the session from FXTRACE: %s\n", fxt_strerror(rc));
    return;
  }
  atexit(stop_at_exit);
  fxt_fn_apply_config(text); /* tracer=...: the session runs to take its records */
}
