/* core_ops.c - the measured operations, in C so that they use the inline fast paths of the
 * public headers exactly as a C caller does (C++ sees only the out-of-line definitions).
 * Each function performs n operations; the C++ driver times batches of them. */
#include "core_ops.h"

#include <pthread.h>
#include <string.h>

#define RECORD_WORDS 6u
static const uint64_t header = 4u | (uint64_t)RECORD_WORDS << 4; /* FXT event record, 6 words */

void bench_writer_ops(struct fxt_writer *w, uint32_t n)
{
  for (uint32_t i = 0; i < n; i++) {
    struct fxt_reservation res;
    if (fxt_writer_reserve(w, header, &res) != 0) {
      fxt_writer_drain(w);
      continue;
    }
    fxt_res_write_word(&res, i);
    fxt_res_write_word(&res, 2);
    fxt_res_write_word(&res, 3);
    fxt_res_write_word(&res, 4);
    fxt_res_write_word(&res, 5);
    fxt_res_commit(&res);
  }
}

void bench_ring_ops(struct fxt_ring *r, uint32_t n)
{
  uint64_t rec[RECORD_WORDS] = {header, 1, 2, 3, 4, 5};
  for (uint32_t i = 0; i < n; i++) {
    struct fxt_ring_res res;
    if (fxt_ring_reserve(r, sizeof(rec), &res) != 0) {
      fxt_ring_drain(r);
      continue;
    }
    rec[1] = i;
    fxt_ring_res_write(&res, rec, sizeof(rec));
    fxt_ring_res_commit(&res);
  }
}

void bench_peer_ops(uint32_t n)
{
  static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  static uint64_t slots[1 << 14][RECORD_WORDS];
  static uint32_t next;
  uint64_t rec[RECORD_WORDS] = {header, 1, 2, 3, 4, 5};
  for (uint32_t i = 0; i < n; i++) {
    pthread_mutex_lock(&mu);
    rec[1] = i;
    memcpy(slots[next++ & ((1 << 14) - 1)], rec, sizeof(rec));
    pthread_mutex_unlock(&mu);
  }
}

void bench_fill(struct fxt_ring *r)
{
  uint64_t rec[RECORD_WORDS] = {header, 1, 2, 3, 4, 5};
  struct fxt_ring_res res;
  while (fxt_ring_reserve(r, sizeof(rec), &res) == 0) {
    fxt_ring_res_write(&res, rec, sizeof(rec));
    fxt_ring_res_commit(&res);
    struct fxt_ring_stats st;
    fxt_ring_stats(r, &st);
    if (st.size - st.used < sizeof(rec))
      break; /* full (overwrite mode would go on forever) */
  }
}
