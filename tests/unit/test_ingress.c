/* test_ingress - the MPSC ingress: argument checks, FIFO order and payload integrity, epoch and
 * producer tag, exact oversize / full counting, wrap-around at every slot index and across
 * 2^32, the batch limit, a pop callback that pushes; then a randomized comparison with a FIFO
 * model. Pushes interrupted by signal handlers: test_ingress_nested.c.
 *
 * This file compiles src/core/ingress.c itself (ingress_test.h), without the race hook, to see
 * the queue's internals. */
#define _DEFAULT_SOURCE
#include "ingress_test.h"
#include "../test_main.h"

/* ---- plain behaviour ------------------------------------------------------------------ */

static void init_checks(void **state)
{
  (void)state;
  size_t s8 = FXT_INGRESS_STORAGE_SIZE(8, 64);
  assert_int_equal(s8, 8 * (16 + 64 + 8));
  assert_int_equal(FXT_INGRESS_STORAGE_SIZE(2, 13), 2 * (16 + 16 + 8));
  assert_int_equal(fxt_ingress_init(&q, NULL, s8, 64), FXT_EINVAL);
  assert_int_equal(fxt_ingress_init(&q, qstore + 4, s8, 64), FXT_EINVAL);
  assert_int_equal(fxt_ingress_init(&q, qstore, s8, 0), FXT_EINVAL);
  assert_int_equal(fxt_ingress_init(&q, qstore, FXT_INGRESS_STORAGE_SIZE(1, 65537), 65537),
                   FXT_EINVAL);
  assert_int_equal(fxt_ingress_init(&q, qstore, 0, 64), FXT_EINVAL);
  assert_int_equal(fxt_ingress_init(&q, qstore, s8 - 1, 64), FXT_EINVAL);
  assert_int_equal(fxt_ingress_init(&q, qstore, s8 + 8, 64), FXT_EINVAL);
  assert_int_equal(fxt_ingress_init(&q, qstore, FXT_INGRESS_STORAGE_SIZE(3, 64), 64),
                   FXT_EINVAL);
  assert_int_equal(fxt_ingress_init(&q, qstore, FXT_INGRESS_STORAGE_SIZE(6, 64), 64),
                   FXT_EINVAL);
  /* Too many slots: rejected before the storage is touched. */
  assert_int_equal(fxt_ingress_init(&q, qstore, FXT_INGRESS_STORAGE_SIZE(131072, 8), 8),
                   FXT_EINVAL);
  assert_int_equal(fxt_ingress_init(&q, qstore, FXT_INGRESS_STORAGE_SIZE(1, 64), 64), 0);
  assert_int_equal(fxt_ingress_init(&q, qstore, s8, 64), 0);
  struct fxt_ingress_stats st = stats();
  assert_int_equal(st.slots, 8);
  assert_int_equal(st.slot_payload, 64);
  assert_int_equal(st.free, 8);
  assert_int_equal(st.in_flight + st.pending + st.popped + st.oversize + st.full, 0);
  assert_int_equal(fxt_ingress_pending(&q), 0);
  /* The control block holds no pointer, only the storage's offset. */
  _Static_assert(sizeof(q.storage_off) == 8, "offset, not pointer");
}

static void fifo_payload_epoch_tag(void **state)
{
  (void)state;
  static struct raw r;
  unsigned char a[256], b[1] = {0x5a};
  for (int i = 0; i < 256; i++)
    a[i] = (unsigned char)(255 - i);
  setup(8, 256);
  assert_int_equal(fxt_ingress_push(&q, a, 256, 0, 0), 0);           /* full payload */
  assert_int_equal(fxt_ingress_push(&q, NULL, 0, 7, 9), 0);          /* empty record */
  assert_int_equal(fxt_ingress_push(&q, b, 1, UINT32_MAX, UINT32_MAX), 0);
  assert_int_equal(fxt_ingress_push(&q, a + 3, 13, 0x80000000u, 0x12345678u), 0);
  assert_int_equal(fxt_ingress_pending(&q), 4);
  memset(&r, 0, sizeof(r));
  assert_int_equal(fxt_ingress_pop_batch(&q, collect_raw, &r, 100), 4);
  assert_int_equal(r.n, 4);
  assert_int_equal(r.len[0], 256);
  assert_memory_equal(r.data[0], a, 256);
  assert_int_equal(r.epoch[0], 0);
  assert_int_equal(r.tag[0], 0);
  assert_int_equal(r.len[1], 0);
  assert_int_equal(r.epoch[1], 7);
  assert_int_equal(r.tag[1], 9);
  assert_int_equal(r.len[2], 1);
  assert_int_equal(r.data[2][0], 0x5a);
  assert_int_equal(r.epoch[2], UINT32_MAX);
  assert_int_equal(r.tag[2], UINT32_MAX);
  assert_int_equal(r.len[3], 13);
  assert_memory_equal(r.data[3], a + 3, 13);
  assert_int_equal(r.epoch[3], 0x80000000u);
  assert_int_equal(r.tag[3], 0x12345678u);
  assert_int_equal(fxt_ingress_pending(&q), 0);
  assert_int_equal(fxt_ingress_pop_batch(&q, collect_raw, &r, 100), 0);
  assert_int_equal(stats().popped, 4);
}

static void oversize_and_full_counted_exactly(void **state)
{
  (void)state;
  static unsigned char big[MAX_PAYLOAD + 1];
  setup(4, 64);
  ngot = 0;
  for (int i = 0; i < 3; i++)
    assert_int_equal(fxt_ingress_push(&q, big, 65 + (uint32_t)i * 1000, 0, 0), FXT_EMSGSIZE);
  assert_int_equal(fxt_ingress_push(&q, NULL, 5, 0, 0), FXT_EINVAL); /* not counted */
  for (uint32_t id = 0; id < 4; id++)
    assert_int_equal(push_id(id), 0);
  for (uint32_t id = 4; id < 11; id++)
    assert_int_equal(push_id(id), FXT_ENOSPC);
  struct fxt_ingress_stats st = stats();
  assert_int_equal(st.oversize, 3);
  assert_int_equal(st.full, 7);
  assert_int_equal(st.free, 0);
  assert_int_equal(st.pending, 4);
  assert_int_equal(st.in_flight, 0);
  assert_int_equal(pop_all(), 4);
  static const uint32_t want[] = {0, 1, 2, 3};
  expect_got(want, 4);
  st = stats();
  assert_int_equal(st.oversize, 3);
  assert_int_equal(st.full, 7);
  assert_int_equal(st.free, 4);
  assert_int_equal(st.pending, 0);
  assert_int_equal(st.popped, 4);
  /* A payload of exactly the slot size fits; one byte more is oversize. */
  assert_int_equal(fxt_ingress_push(&q, big, 64, 0, 0), 0);
  assert_int_equal(fxt_ingress_push(&q, big, 65, 0, 0), FXT_EMSGSIZE);
  assert_int_equal(stats().oversize, 4);
}

/* Fills the queue of n slots: n pushes from id *id on (their ids in want), then one more is
 * refused as full; n pending. */
static void fill_to_full(uint32_t n, uint32_t *want, uint32_t *id)
{
  for (uint32_t i = 0; i < n; i++) {
    want[i] = *id;
    assert_int_equal(push_id((*id)++), 0);
  }
  assert_int_equal(push_id((*id)++), FXT_ENOSPC);
  assert_int_equal(fxt_ingress_pending(&q), n);
}

/* Every slot count, starting at every position of two laps: fill to exactly N, one more is
 * full, then pop in order; then single push/pop steps across the laps. */
static void wrap_at_every_slot_index(void **state)
{
  (void)state;
  for (uint32_t n = 1; n <= 16; n *= 2) {
    for (uint32_t off = 0; off <= 2 * n + 1; off++) {
      setup(n, 32);
      uint32_t id = 0;
      for (uint32_t i = 0; i < off; i++) {
        assert_int_equal(push_id(id++), 0);
        ngot = 0;
        assert_int_equal(pop_all(), 1);
        assert_int_equal(got[0], id - 1);
      }
      uint32_t want[16], first = id;
      fill_to_full(n, want, &id);
      ngot = 0;
      assert_int_equal(pop_all(), n);
      expect_got(want, n);
      assert_int_equal(got[0], first);
      assert_int_equal(stats().full, 1);
      assert_int_equal(stats().free, n);
    }
  }
}

/* The same across the 2^32 wrap of every position: the state after 2^32 - 5 pushes and pops,
 * built directly (the test sees the internals). */
static void positions_wrap_around_2_32(void **state)
{
  (void)state;
  const uint32_t n = 8, start = UINT32_MAX - 4;
  setup(n, 32);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t p = start + i;
    atomic_store(&ready_cells(&q)[p & (n - 1)], cell_empty(&q, p));
    atomic_store(&free_cells(&q)[p & (n - 1)], i);
  }
  atomic_store(&q.free_head, start);
  atomic_store(&q.free_tail, start + n);
  atomic_store(&q.ready_tail, start);
  atomic_store(&q.ready_head, start);
  uint32_t id = 0, want[8];
  for (int lap = 0; lap < 4; lap++) {
    fill_to_full(n, want, &id);
    ngot = 0;
    assert_int_equal(fxt_ingress_pop_batch(&q, collect, NULL, 3), 3);
    assert_int_equal(fxt_ingress_pending(&q), n - 3);
    assert_int_equal(pop_all(), n - 3);
    expect_got(want, n);
    struct fxt_ingress_stats st = stats();
    assert_int_equal(st.free, n);
    assert_int_equal(st.pending, 0);
    assert_int_equal(st.in_flight, 0);
  }
  assert_int_equal(stats().full, 4);
  assert_int_equal(stats().popped, start + 4 * n);
}

static void batch_limit_and_pending(void **state)
{
  (void)state;
  setup(256, 16);
  ngot = 0;
  for (uint32_t id = 0; id < 200; id++)
    assert_int_equal(push_id(id), 0);
  assert_int_equal(fxt_ingress_pending(&q), 200);
  assert_int_equal(fxt_ingress_pop_batch(&q, collect, NULL, 0), 0);
  assert_int_equal(fxt_ingress_pop_batch(&q, collect, NULL, 128), 128);
  assert_int_equal(ngot, 128);
  assert_int_equal(fxt_ingress_pending(&q), 72);
  assert_int_equal(fxt_ingress_pop_batch(&q, collect, NULL, 50), 50);
  assert_int_equal(fxt_ingress_pending(&q), 22);
  assert_int_equal(fxt_ingress_pop_batch(&q, collect, NULL, 128), 22);
  assert_int_equal(fxt_ingress_pop_batch(&q, collect, NULL, 128), 0);
  assert_int_equal(fxt_ingress_pending(&q), 0);
  for (uint32_t i = 0; i < 200; i++)
    assert_int_equal(got[i], i);
}

/* A pop callback may push: the slot being popped is not free yet (a full queue stays full
 * during the callback), the one popped before it is. */
static void push_from_callback(void *ctx, const void *rec, uint32_t len, uint32_t epoch,
                               uint32_t tag)
{
  int *rcs = ctx;
  uint32_t id;
  collect(NULL, rec, len, epoch, tag);
  memcpy(&id, rec, 4);
  if (id < 100)
    rcs[id] = push_id(id + 100);
}

static void callback_may_push(void **state)
{
  (void)state;
  int rcs[4] = {1, 1, 1, 1};
  setup(4, 32);
  ngot = 0;
  for (uint32_t id = 0; id < 4; id++)
    assert_int_equal(push_id(id), 0);
  assert_int_equal(fxt_ingress_pop_batch(&q, push_from_callback, rcs, 1), 1);
  assert_int_equal(rcs[0], FXT_ENOSPC);
  assert_int_equal(stats().full, 1);
  assert_int_equal(fxt_ingress_pop_batch(&q, push_from_callback, rcs, 10), 6);
  assert_int_equal(rcs[1], 0);
  assert_int_equal(rcs[2], 0);
  assert_int_equal(rcs[3], 0);
  static const uint32_t want[] = {0, 1, 2, 3, 101, 102, 103};
  expect_got(want, 7);
  assert_int_equal(stats().free, 4);
}

/* ---- randomized against a FIFO model --------------------------------------------------- */

static uint64_t rng_state;
static uint32_t rnd(uint32_t n)
{
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 33) % n;
}

static void randomized_against_model(void **state)
{
  (void)state;
  rng_state = 0x19e55;
  for (uint32_t seq = 0; seq < 2000; seq++) {
    uint32_t n = 1u << rnd(5), payload = 4 + rnd(60);
    setup(n, payload);
    uint32_t model[16], mhead = 0, mtail = 0; /* ids pushed and not popped */
    uint32_t id = 0, oversize = 0, full = 0, popped = 0;
    for (uint32_t op = 0; op < 200; op++) {
      uint32_t r = rnd(10);
      if (r < 6) {
        if (rnd(8) == 0) {
          assert_int_equal(fxt_ingress_push(&q, got, payload + 1 + rnd(10), 0, 0),
                           FXT_EMSGSIZE);
          oversize++;
        } else if (mtail - mhead == n) {
          assert_int_equal(push_id(id++), FXT_ENOSPC);
          full++;
        } else {
          model[mtail++ % 16] = id;
          assert_int_equal(push_id(id++), 0);
        }
      } else {
        uint32_t max = rnd(n + 2);
        uint32_t want = mtail - mhead < max ? mtail - mhead : max;
        ngot = 0;
        assert_int_equal(fxt_ingress_pop_batch(&q, collect, NULL, max), want);
        for (uint32_t i = 0; i < want; i++)
          assert_int_equal(got[i], model[mhead++ % 16]);
        popped += want;
      }
      assert_int_equal(fxt_ingress_pending(&q), mtail - mhead);
    }
    struct fxt_ingress_stats st = stats();
    assert_int_equal(st.oversize, oversize);
    assert_int_equal(st.full, full);
    assert_int_equal(st.popped, popped);
    assert_int_equal(st.free, n - (mtail - mhead));
    assert_int_equal(st.in_flight, 0);
  }
}

FXT_TEST_MAIN(
    cmocka_unit_test(init_checks), cmocka_unit_test(fifo_payload_epoch_tag),
    cmocka_unit_test(oversize_and_full_counted_exactly), cmocka_unit_test(wrap_at_every_slot_index),
    cmocka_unit_test(positions_wrap_around_2_32), cmocka_unit_test(batch_limit_and_pending),
    cmocka_unit_test(callback_may_push), cmocka_unit_test(randomized_against_model))
