/* queue.c - a bounded blocking queue: one mutex, a condition variable per direction.
 *
 * Traced: the depth after every change ("queue_depth" counter, the queue's id as counter id),
 * and every time a caller had to block, a duration for the wait plus a demo:queue_wait
 * tracepoint with its length. Both are emitted under the lock: the counter's values then appear
 * in the order the changes happened, whichever thread made them, and the wait's depth is the
 * one the caller saw. Tracing adds a few tens of nanoseconds there, and nothing when off.
 */
#define _GNU_SOURCE
#include "demo.h"

#include <errno.h>
#include <stdlib.h>

FXT_TRACEPOINT(demo, queue_wait, "queue=%u full=%d waited_ns=%llu depth=%u", (u32, queue),
               (bool, full), (u64, waited_ns), (u32, depth));

int queue_init(struct queue *q, uint32_t id, uint32_t capacity)
{
  *q = (struct queue){.cap = capacity, .id = id};
  q->items = calloc(capacity, sizeof(*q->items));
  if (!q->items)
    return -ENOMEM;
  pthread_mutex_init(&q->lock, NULL);
  pthread_cond_init(&q->not_empty, NULL);
  pthread_cond_init(&q->not_full, NULL);
  return 0;
}

void queue_destroy(struct queue *q)
{
  pthread_cond_destroy(&q->not_full);
  pthread_cond_destroy(&q->not_empty);
  pthread_mutex_destroy(&q->lock);
  free(q->items);
  q->items = NULL;
}

bool queue_push(struct queue *q, void *item)
{
  pthread_mutex_lock(&q->lock);
  if (q->count == q->cap && !q->closed) {
    /* Only now do we know this is a wait worth a slice: FXT_COMPLETE takes its start from
     * here and writes one record when the wait is over. */
    uint64_t trace_start = fxt_now();
    uint64_t t0 = now_ns();
    while (q->count == q->cap && !q->closed)
      pthread_cond_wait(&q->not_full, &q->lock);
    uint64_t waited = now_ns() - t0;
    q->push_wait_ns += waited;
    FXT_COMPLETE("demo", "wait_not_full", trace_start, FXT_U32("queue", q->id));
    FXT_TRACE(demo, queue_wait, q->id, true, waited, q->count);
  }
  bool ok = !q->closed;
  if (ok) {
    q->items[(q->head + q->count) % q->cap] = item;
    q->count++;
    FXT_COUNTER("demo", "queue_depth", q->id, FXT_U32("depth", q->count));
    pthread_cond_signal(&q->not_empty);
  }
  pthread_mutex_unlock(&q->lock);
  return ok;
}

void *queue_pop(struct queue *q)
{
  pthread_mutex_lock(&q->lock);
  if (q->count == 0 && !q->closed) {
    uint64_t trace_start = fxt_now();
    uint64_t t0 = now_ns();
    while (q->count == 0 && !q->closed)
      pthread_cond_wait(&q->not_empty, &q->lock);
    uint64_t waited = now_ns() - t0;
    q->pop_wait_ns += waited;
    FXT_COMPLETE("demo", "wait_not_empty", trace_start, FXT_U32("queue", q->id));
    FXT_TRACE(demo, queue_wait, q->id, false, waited, q->count);
  }
  void *item = NULL;
  if (q->count > 0) {
    item = q->items[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    FXT_COUNTER("demo", "queue_depth", q->id, FXT_U32("depth", q->count));
    pthread_cond_signal(&q->not_full);
  }
  pthread_mutex_unlock(&q->lock);
  return item;
}

void queue_close(struct queue *q)
{
  pthread_mutex_lock(&q->lock);
  q->closed = true;
  pthread_cond_broadcast(&q->not_empty);
  pthread_cond_broadcast(&q->not_full);
  pthread_mutex_unlock(&q->lock);
}
