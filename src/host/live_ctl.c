/* live_ctl.c - the live view's control side (see live.h): its rings' size (buffer_size_kb),
 * clearing (`echo > trace`), recording on and off, fork, the cmdlines' table and its size,
 * a flight recorder's copies set up and emptied, the function_graph options' word, trace_pipe's
 * readers counted. Compiled for size (CMakeLists.txt, FXT_COLD_SOURCES): a file written, a
 * reader opened, a fork; the consumer's feeding is live.c's. Everything under fxt_live.lock
 * (live_int.h). */
#define _GNU_SOURCE
#include "live_int.h"

int live_set_buffer_kb(uint64_t kb)
{
  if (kb == 0 || kb > (1u << 22))
    return FXT_EINVAL;
  if (live_init() != 0)
    return FXT_ENOMEM;
  uint32_t back;
  size_t cap = fxt_live_capacity_of(kb, &back);
  /* The CPUs' new rings are allocated and written once here, by the writer of the file and
   * outside the lock: filled for the first time by the consumer, 32 MiB of fresh memory
   * (16 MiB a CPU) cost a program firing 5 M events a second 2-41 k dropped events on a VM
   * where a first touch of a page costs ~10 us (0 after). Nothing changes when one cannot
   * be had. */
  unsigned char **fresh = calloc(fxt_live.ncpus, sizeof(*fresh));
  bool got = fresh != NULL;
  for (uint32_t i = 0; got && i < fxt_live.ncpus; i++) {
    got = (fresh[i] = malloc(fxt_live_ring_bytes(cap))) != NULL;
    if (got)
      fxt_write_pages(fresh[i], fxt_live_ring_bytes(cap));
  }
  if (!got) {
    for (uint32_t i = 0; fresh && i < fxt_live.ncpus; i++)
      free(fresh[i]);
    free(fresh);
    return FXT_ENOMEM;
  }
  int rc = 0;
  pthread_mutex_lock(&fxt_live.lock);
  for (uint32_t i = 0; i < fxt_live.ncpus; i++)
    fxt_live_ring_adopt(&fxt_live.cpu[i], fresh[i], cap, true);
  free(fresh);
  for (uint32_t i = 0; fxt_live.copy && i < fxt_live.ncpus && rc == 0; i++)
    rc = fxt_live_ring_alloc(&fxt_live.copy[i], cap);
  if (rc == 0)
    fxt_live.buffer_kb = back;
  fxt_live.gen++;
  pthread_mutex_unlock(&fxt_live.lock);
  return rc ? rc : (int)back;
}

uint32_t live_buffer_kb(void)
{
  live_init();
  return fxt_live.buffer_kb;
}

uint32_t live_ncpus(void)
{
  live_init();
  return fxt_live.ncpus;
}

void live_set_on(bool on)
{
  live_init();
  pthread_mutex_lock(&fxt_live.lock);
  fxt_live.on = on;
  pthread_cond_broadcast(&fxt_live.cond); /* trace_pipe readers return when tracing stops */
  pthread_mutex_unlock(&fxt_live.lock);
}

bool live_on(void)
{
  live_init();
  return fxt_live.on;
}

void live_clear(void)
{
  live_init();
  pthread_mutex_lock(&fxt_live.lock);
  for (uint32_t i = 0; i < fxt_live.ncpus; i++) {
    fxt_live_ring_empty(&fxt_live.cpu[i]);
    fxt_live.cpu[i].overrun = fxt_live.cpu[i].lost_pending = fxt_live.cpu[i].pipe_lost = 0;
  }
  fxt_live_fg_drop(fxt_live.cpu); /* and what the threads held for their lines */
  /* Everything emitted until now is old: what is still on its way is discarded. */
  fxt_live.clear_ticks = fxt_ticks();
  fxt_live.gen++;
  pthread_mutex_unlock(&fxt_live.lock);
}

/* Under lock: the copies empty, their counts gone with them. */
static void copy_empty(void)
{
  fxt_live.gen++;
  if (fxt_live.copy)
    fxt_live_fg_drop(fxt_live.copy);
  for (uint32_t i = 0; fxt_live.copy && i < fxt_live.ncpus; i++) {
    fxt_live_ring_empty(&fxt_live.copy[i]);
    struct cpu_ring *c = &fxt_live.copy[i];
    c->overrun = c->dropped = c->lost_pending = c->pipe_lost = 0;
  }
}

/* ---- fork: the lock must not be held by another thread at the fork ------------------------ */

void live_atfork_prepare(void)
{
  pthread_mutex_lock(&fxt_live.lock);
}

void live_atfork_parent(void)
{
  pthread_mutex_unlock(&fxt_live.lock);
}

/* The child starts with an empty view: the parent's records stay the parent's. */
void live_atfork_child(void)
{
  pthread_mutex_init(&fxt_live.lock, NULL);
  pthread_cond_init(&fxt_live.cond, NULL);
  for (uint32_t i = 0; fxt_live.ready && i < fxt_live.ncpus; i++) {
    fxt_live_ring_empty(&fxt_live.cpu[i]);
    fxt_live.cpu[i].overrun = fxt_live.cpu[i].dropped = fxt_live.cpu[i].read = 0;
    fxt_live.cpu[i].lost_pending = fxt_live.cpu[i].pipe_lost = 0;
  }
  copy_empty(); /* (fxt_live.gen moves: the parent's readers' places are gone) */
  fxt_live_fg_drop(fxt_live.cpu);
  atomic_store_explicit(&fxt_live_pipe_readers, 0, memory_order_relaxed); /* the parent's files */
}

void live_cmdlines(struct fxt_tbuf *b)
{
  live_init();
  pthread_mutex_lock(&fxt_live.lock);
  for (uint32_t i = 0; i < fxt_live.cmdlines_size; i++) {
    if (fxt_live.cmdlines[i].pid == 0)
      continue;
    char line[64];
    int n = snprintf(line, sizeof(line), "%u %.15s\n", fxt_live.cmdlines[i].pid,
                     fxt_live.cmdlines[i].comm);
    fxt_tbuf_put(b, line, (size_t)n);
  }
  pthread_mutex_unlock(&fxt_live.lock);
}

int live_set_cmdlines_size(uint64_t n)
{
  if (n == 0 || n > MAX_CMDLINES)
    return FXT_EINVAL;
  live_init();
  void *fresh = calloc((size_t)n, sizeof(*fxt_live.cmdlines));
  if (!fresh)
    return FXT_ENOMEM;
  pthread_mutex_lock(&fxt_live.lock);
  free(fxt_live.cmdlines);
  fxt_live.cmdlines = fresh;
  fxt_live.cmdlines_size = (uint32_t)n;
  fxt_live.cmdlines_next = 0;
  pthread_mutex_unlock(&fxt_live.lock);
  return 0;
}

uint32_t live_cmdlines_size(void)
{
  live_init();
  return fxt_live.cmdlines_size;
}

int live_copy_begin(void)
{
  if (live_init() != 0)
    return FXT_ENOMEM;
  int rc = 0;
  pthread_mutex_lock(&fxt_live.lock);
  if (!fxt_live.copy) {
    uint32_t kb;
    size_t cap = fxt_live_capacity_of(fxt_live.buffer_kb, &kb);
    struct cpu_ring *c = calloc(fxt_live.ncpus, sizeof(*c));
    for (uint32_t i = 0; c && i < fxt_live.ncpus && rc == 0; i++)
      rc = fxt_live_ring_alloc(&c[i], cap);
    if (!c || rc != 0) {
      for (uint32_t i = 0; c && i < fxt_live.ncpus; i++)
        free(c[i].buf);
      free(c);
      rc = FXT_ENOMEM;
    } else {
      fxt_live.copy = c;
    }
  }
  copy_empty();
  pthread_mutex_unlock(&fxt_live.lock);
  return rc;
}

void live_copy_clear(void)
{
  pthread_mutex_lock(&fxt_live.lock);
  copy_empty();
  pthread_mutex_unlock(&fxt_live.lock);
}

/* The options' word: written by the options files' writers, read by the view's readers.
 * Relaxed: a word of bits that publishes nothing else; a read sees the last write or the one
 * before (as a `trace` opened while the option is written). */
static atomic_uint fg_options;

uint32_t live_fg_options(void)
{
  return atomic_load_explicit(&fg_options, memory_order_relaxed);
}

void live_set_fg_option(uint32_t bit, bool on)
{
  if (on)
    atomic_fetch_or_explicit(&fg_options, bit, memory_order_relaxed);
  else
    atomic_fetch_and_explicit(&fg_options, ~bit, memory_order_relaxed);
}

void live_pipe_open(void)
{
  atomic_fetch_add_explicit(&fxt_live_pipe_readers, 1, memory_order_relaxed);
  if (live_init() != 0)
    return;
  pthread_mutex_lock(&fxt_live.lock);
  fxt_fgraph_cpus_free(&fxt_live.pipe_fg); /* a new reader's lines start without a block */
  memset(&fxt_live.pipe_fg, 0, sizeof fxt_live.pipe_fg);
  pthread_mutex_unlock(&fxt_live.lock);
}

void live_pipe_close(void)
{
  atomic_fetch_sub_explicit(&fxt_live_pipe_readers, 1, memory_order_relaxed);
}
