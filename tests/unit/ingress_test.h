/* tests/unit/ingress_test.h - the fixture of the ingress tests (test_ingress.c,
 * test_ingress_nested.c): src/core/ingress.c compiled into the test itself (an includer that
 * wants the race hook defines FXT_INGRESS_RACE_HOOK first), one queue in static storage, and
 * records whose id, payload, epoch and tag check each other when popped. */
#ifndef FXTRACE_TEST_INGRESS_H
#define FXTRACE_TEST_INGRESS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/ingress.c"

#define MAX_SLOTS 256u
#define MAX_PAYLOAD 256u

static _Alignas(64) unsigned char qstore[FXT_INGRESS_STORAGE_SIZE(MAX_SLOTS, MAX_PAYLOAD)];
static struct fxt_ingress q;

static inline void setup(uint32_t slots, uint32_t payload)
{
  assert_true(FXT_INGRESS_STORAGE_SIZE(slots, payload) <= sizeof(qstore));
  assert_int_equal(fxt_ingress_init(&q, qstore, FXT_INGRESS_STORAGE_SIZE(slots, payload),
                                    payload), 0);
}

/* ---- records: id in the first 4 bytes, then a pattern of the id; epoch and tag from the id */

static inline uint32_t len_of(uint32_t id)
{
  return 4 + id % (q.payload - 3); /* 4 .. payload */
}
static inline uint32_t epoch_of(uint32_t id) { return id * 2654435761u + 1; }
static inline uint32_t tag_of(uint32_t id) { return id ^ 0xa5a50000u; }
static inline unsigned char pattern(uint32_t id, uint32_t i)
{
  return (unsigned char)(id * 131u + i * 7u);
}

static inline int push_id(uint32_t id)
{
  unsigned char b[MAX_PAYLOAD + 8];
  uint32_t len = len_of(id);
  memcpy(b, &id, 4);
  for (uint32_t i = 4; i < len; i++)
    b[i] = pattern(id, i);
  return fxt_ingress_push(&q, b, len, epoch_of(id), tag_of(id));
}

/* Everything popped, in order, checked record by record. */
static uint32_t got[1 << 16];
static uint32_t ngot;

static inline void collect(void *ctx, const void *rec, uint32_t len, uint32_t epoch,
                           uint32_t tag)
{
  const unsigned char *r = rec;
  uint32_t id;
  (void)ctx;
  assert_int_equal((uintptr_t)rec & 7, 0);
  assert_true(len >= 4);
  memcpy(&id, r, 4);
  assert_int_equal(len, len_of(id));
  assert_int_equal(epoch, epoch_of(id));
  assert_int_equal(tag, tag_of(id));
  for (uint32_t i = 4; i < len; i++)
    if (r[i] != pattern(id, i))
      fail_msg("record %u: payload byte %u is 0x%02x", id, i, r[i]);
  assert_true(ngot < sizeof(got) / sizeof(got[0]));
  got[ngot++] = id;
}

static inline uint32_t pop_all(void)
{
  return fxt_ingress_pop_batch(&q, collect, NULL, UINT32_MAX);
}

static inline void expect_got(const uint32_t *want, uint32_t n)
{
  assert_int_equal(ngot, n);
  for (uint32_t i = 0; i < n; i++)
    if (got[i] != want[i])
      fail_msg("popped #%u is %u, want %u", i, got[i], want[i]);
}

static inline struct fxt_ingress_stats stats(void)
{
  struct fxt_ingress_stats st;
  fxt_ingress_stats(&q, &st);
  return st;
}

/* Raw copies of what was popped, for records that are not made by push_id. */
struct raw {
  uint32_t n;
  uint32_t len[8], epoch[8], tag[8];
  unsigned char data[8][MAX_PAYLOAD];
};

static inline void collect_raw(void *ctx, const void *rec, uint32_t len, uint32_t epoch,
                               uint32_t tag)
{
  struct raw *r = ctx;
  assert_true(r->n < 8 && len <= MAX_PAYLOAD);
  r->len[r->n] = len;
  r->epoch[r->n] = epoch;
  r->tag[r->n] = tag;
  memcpy(r->data[r->n], rec, len);
  r->n++;
}

#endif
