/* test_ingress - the MPSC ingress: argument checks, FIFO order and payload integrity, epoch and
 * producer tag, exact oversize / full counting, wrap-around at every slot index and across
 * 2^32, the batch limit, a pop callback that pushes, and pushes from SIGUSR1 / SIGALRM handlers
 * that interrupt a push on their own thread after each of its steps (once and twice nested,
 * resumed and abandoned), plus a real fault in the middle of a push's copy; then a randomized
 * comparison with a FIFO model.
 *
 * This file compiles src/core/ingress.c itself with FXT_INGRESS_RACE_HOOK defined, so a test
 * can raise a signal right after each observable step of a push; the library's copy (not
 * linked: every symbol is defined here) has no hook. */
#define _DEFAULT_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../sanitizers.h"

static void race_hook(int step);
#define FXT_INGRESS_RACE_HOOK(q, step) race_hook((int)(step))
#include "core/ingress.c"

#define MAX_SLOTS 256u
#define MAX_PAYLOAD 256u

static _Alignas(64) unsigned char qstore[FXT_INGRESS_STORAGE_SIZE(MAX_SLOTS, MAX_PAYLOAD)];
static struct fxt_ingress q;

static void setup(uint32_t slots, uint32_t payload)
{
  assert_true(FXT_INGRESS_STORAGE_SIZE(slots, payload) <= sizeof(qstore));
  assert_int_equal(fxt_ingress_init(&q, qstore, FXT_INGRESS_STORAGE_SIZE(slots, payload),
                                    payload), 0);
}

/* ---- records: id in the first 4 bytes, then a pattern of the id; epoch and tag from the id */

static uint32_t len_of(uint32_t id)
{
  return 4 + id % (q.payload - 3); /* 4 .. payload */
}
static uint32_t epoch_of(uint32_t id) { return id * 2654435761u + 1; }
static uint32_t tag_of(uint32_t id) { return id ^ 0xa5a50000u; }
static unsigned char pattern(uint32_t id, uint32_t i)
{
  return (unsigned char)(id * 131u + i * 7u);
}

static int push_id(uint32_t id)
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

static void collect(void *ctx, const void *rec, uint32_t len, uint32_t epoch, uint32_t tag)
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

static uint32_t pop_all(void)
{
  return fxt_ingress_pop_batch(&q, collect, NULL, UINT32_MAX);
}

static void expect_got(const uint32_t *want, uint32_t n)
{
  assert_int_equal(ngot, n);
  for (uint32_t i = 0; i < n; i++)
    if (got[i] != want[i])
      fail_msg("popped #%u is %u, want %u", i, got[i], want[i]);
}

static struct fxt_ingress_stats stats(void)
{
  struct fxt_ingress_stats st;
  fxt_ingress_stats(&q, &st);
  return st;
}

/* ---- race hooks and signal handlers --------------------------------------------------- */

/* Nesting level of the code running now: 0 = the test, 1 = in the SIGUSR1 handler (or the
 * SIGSEGV one), 2 = in the SIGALRM handler that interrupted it. A push running at level l
 * raises level_signal[l] when it reaches step arm[l], once. */
static volatile sig_atomic_t level;
static int arm[2] = {-1, -1};
static volatile sig_atomic_t fired[2];
static const int level_signal[2] = {SIGUSR1, SIGALRM};
static void (*on_usr1)(void);
static void (*on_alrm)(void);
static sigjmp_buf abandon_env;

/* ThreadSanitizer defers a signal raised inside a signal handler until that handler returns,
 * so under it the second interruption is a direct call of the handler: the same code at the
 * same point of the push, without the kernel. */
#define NESTED_RAISE_DEFERRED FXT_TEST_TSAN

static void handler(int sig);

static void race_hook(int step)
{
  int l = level;
  if (l < 2 && arm[l] == step && !fired[l]) {
    fired[l] = 1;
    if (l > 0 && NESTED_RAISE_DEFERRED)
      handler(level_signal[l]);
    else
      raise(level_signal[l]);
  }
}

static void handler(int sig)
{
  level++;
  if (sig == SIGUSR1)
    on_usr1();
  else
    on_alrm();
  level--;
}

static void install(int sig, void (*fn)(int))
{
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = fn;
  sigemptyset(&sa.sa_mask);
  assert_int_equal(sigaction(sig, &sa, NULL), 0);
}

static void arm_hooks(int step0, int step1)
{
  arm[0] = step0;
  arm[1] = step1;
  fired[0] = fired[1] = 0;
  level = 0;
  install(SIGUSR1, handler);
  install(SIGALRM, handler);
}

static void disarm(void)
{
  arm[0] = arm[1] = -1;
}

static bool holds_slot(int step)
{
  return step == INGRESS_STEP_CLAIMED || step == INGRESS_STEP_FILLED ||
         step == INGRESS_STEP_CELL_LOADED;
}

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

/* Raw copies of what was popped, for records that are not made by push_id. */
struct raw {
  uint32_t n;
  uint32_t len[8], epoch[8], tag[8];
  unsigned char data[8][MAX_PAYLOAD];
};

static void collect_raw(void *ctx, const void *rec, uint32_t len, uint32_t epoch, uint32_t tag)
{
  struct raw *r = ctx;
  assert_true(r->n < 8 && len <= MAX_PAYLOAD);
  r->len[r->n] = len;
  r->epoch[r->n] = epoch;
  r->tag[r->n] = tag;
  memcpy(r->data[r->n], rec, len);
  r->n++;
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

/* ---- a handler that interrupts a push on its own thread -------------------------------- */

static int step_a, step_b;         /* where the level-0 and level-1 pushes are interrupted */
static uint32_t handler_popped[3]; /* records popped inside the handler at level 1 / 2 */
static struct fxt_ingress_stats handler_stats[3];

/* SIGALRM (level 2): push 3 records, pop everything published, look at the counters. */
static void alrm_pushes(void)
{
  for (uint32_t i = 0; i < 3; i++)
    assert_int_equal(push_id(3000 + i), 0);
  handler_stats[2] = stats();
  handler_popped[2] = pop_all();
}

/* SIGUSR1 (level 1): push 3 records (the first may be interrupted by SIGALRM), pop. */
static void usr1_pushes(void)
{
  for (uint32_t i = 0; i < 3; i++)
    assert_int_equal(push_id(2000 + i), 0);
  handler_stats[1] = stats();
  handler_popped[1] = pop_all();
}

/* The interrupted push of the tests below: a queue of n slots of payload bytes whose next
 * slot is index off (off records pushed and popped before), then the push of id 1000 with
 * the handlers armed at steps step0 (level 0) and step1 (level 1; -1: none). */
static void push_interrupted(uint32_t n, uint32_t payload, uint32_t off, int step0, int step1)
{
  setup(n, payload);
  for (uint32_t i = 0; i < off; i++) {
    assert_int_equal(push_id(i), 0);
    assert_int_equal(pop_all(), 1);
  }
  ngot = 0;
  arm_hooks(step0, step1);
  assert_int_equal(push_id(1000), 0);
  disarm();
}

/* One push at level 0 interrupted at step a; its handler pushes 3 and pops all it can while
 * the interrupted push is suspended. Once per step, at every starting slot index. */
static void nested_push_at_every_step(void **state)
{
  (void)state;
  const uint32_t n = 8;
  on_usr1 = usr1_pushes;
  for (int a = 0; a < INGRESS_STEPS; a++) {
    for (uint32_t off = 0; off < n; off++) {
      push_interrupted(n, 48, off, a, -1);
      assert_true(fired[0]);
      /* In the handler: the outer push held its slot (steps CLAIMED..CELL_LOADED) or had none
       * (CLAIM_LOADED) or was already published (PUBLISHED); the consumer got every record
       * published so far all the same. */
      assert_int_equal(handler_stats[1].in_flight, holds_slot(a) ? 1 : 0);
      bool first = a == INGRESS_STEP_PUBLISHED;
      assert_int_equal(handler_popped[1], first ? 4 : 3);
      assert_int_equal(pop_all(), first ? 0 : 1);
      static const uint32_t after[] = {2000, 2001, 2002, 1000};
      static const uint32_t before[] = {1000, 2000, 2001, 2002};
      expect_got(first ? before : after, 4);
      struct fxt_ingress_stats st = stats();
      assert_int_equal(st.free, n);
      assert_int_equal(st.in_flight + st.pending + st.full, 0);
    }
  }
}

/* Twice nested: the level-0 push interrupted at step a by SIGUSR1, whose first push is
 * interrupted at step b by SIGALRM. Every pair of steps. */
static void doubly_nested_push_at_every_step_pair(void **state)
{
  (void)state;
  const uint32_t n = 8;
  on_usr1 = usr1_pushes;
  on_alrm = alrm_pushes;
  for (step_a = 0; step_a < INGRESS_STEPS; step_a++) {
    for (step_b = 0; step_b < INGRESS_STEPS; step_b++) {
      push_interrupted(n, 40, (uint32_t)(step_a * 3 + step_b) % n, step_a, step_b);
      assert_true(fired[0] && fired[1]);
      bool a_first = step_a == INGRESS_STEP_PUBLISHED, b_first = step_b == INGRESS_STEP_PUBLISHED;
      /* Innermost handler: both interrupted pushes suspended; it still pops its own 3 and
       * whatever the suspended ones had published. */
      assert_int_equal(handler_stats[2].in_flight,
                       (holds_slot(step_a) ? 1 : 0) + (holds_slot(step_b) ? 1 : 0));
      assert_int_equal(handler_popped[2], 3 + (a_first ? 1 : 0) + (b_first ? 1 : 0));
      pop_all();
      /* Expected order of publication. */
      uint32_t want[7], k = 0;
      if (a_first)
        want[k++] = 1000;
      if (b_first)
        want[k++] = 2000;
      want[k++] = 3000;
      want[k++] = 3001;
      want[k++] = 3002;
      if (!b_first)
        want[k++] = 2000;
      want[k++] = 2001;
      want[k++] = 2002;
      if (!a_first)
        want[k++] = 1000;
      expect_got(want, 7);
      struct fxt_ingress_stats st = stats();
      assert_int_equal(st.free, n);
      assert_int_equal(st.in_flight + st.pending + st.full, 0);
    }
  }
}

/* The handler pops first, then pushes: after step PUBLISHED the interrupted record is popped
 * and its cell reset for the next lap while ready_tail still points at it; the handler's pushes
 * must move ready_tail on themselves (nobody else will while the handler runs). */
static void usr1_pops_then_pushes(void)
{
  handler_popped[1] = pop_all();
  for (uint32_t i = 0; i < 3; i++)
    assert_int_equal(push_id(2000 + i), 0);
  handler_stats[1] = stats();
}

static void nested_pop_then_push_at_every_step(void **state)
{
  (void)state;
  const uint32_t n = 4;
  on_usr1 = usr1_pops_then_pushes;
  for (int a = 0; a < INGRESS_STEPS; a++) {
    for (uint32_t off = 0; off < 2 * n; off++) {
      push_interrupted(n, 24, off, a, -1);
      bool first = a == INGRESS_STEP_PUBLISHED;
      assert_int_equal(handler_popped[1], first ? 1 : 0);
      assert_int_equal(handler_stats[1].pending, 3);
      assert_int_equal(handler_stats[1].in_flight, holds_slot(a) ? 1 : 0);
      assert_int_equal(pop_all(), first ? 3 : 4);
      static const uint32_t after[] = {2000, 2001, 2002, 1000};
      static const uint32_t before[] = {1000, 2000, 2001, 2002};
      expect_got(first ? before : after, 4);
      assert_int_equal(stats().free, n);
    }
  }
}

/* The interrupted push took the last free slot: the handler's pushes fail as full (no waiting),
 * are counted, and succeed again once the handler pops. */
static int full_rcs[3];
static void usr1_pushes_into_full(void)
{
  full_rcs[0] = push_id(2000);
  full_rcs[1] = push_id(2001);
  handler_popped[1] = pop_all();
  full_rcs[2] = push_id(2002);
}

static void nested_push_when_full(void **state)
{
  (void)state;
  setup(4, 32);
  on_usr1 = usr1_pushes_into_full;
  ngot = 0;
  for (uint32_t id = 0; id < 3; id++)
    assert_int_equal(push_id(id), 0);
  arm_hooks(INGRESS_STEP_FILLED, -1);
  assert_int_equal(push_id(1000), 0);
  disarm();
  assert_int_equal(full_rcs[0], FXT_ENOSPC);
  assert_int_equal(full_rcs[1], FXT_ENOSPC);
  assert_int_equal(handler_popped[1], 3);
  assert_int_equal(full_rcs[2], 0);
  assert_int_equal(stats().full, 2);
  assert_int_equal(pop_all(), 2);
  static const uint32_t want[] = {0, 1, 2, 2002, 1000};
  expect_got(want, 5);
}

/* A push that never finishes: its handler longjmps out. Steps CLAIMED..CELL_LOADED keep one
 * slot for good (in_flight 1, the queue runs on with N - 1); an abandoned PUBLISHED push is
 * delivered; CLAIM_LOADED had taken nothing. */
static void usr1_abandons(void)
{
  siglongjmp(abandon_env, 1);
}

static void abandoned_push_at_every_step(void **state)
{
  (void)state;
  const uint32_t n = 4;
  on_usr1 = usr1_abandons;
  for (volatile int a = 0; a < INGRESS_STEPS; a++) {
    setup(n, 32);
    ngot = 0;
    assert_int_equal(push_id(0), 0);
    arm_hooks(a, -1);
    if (sigsetjmp(abandon_env, 1) == 0) {
      push_id(1000);
      fail_msg("the push at step %d returned", a);
    }
    level = 0;
    disarm();
    uint32_t held = holds_slot(a) ? 1 : 0;
    bool delivered = a == INGRESS_STEP_PUBLISHED;
    struct fxt_ingress_stats st = stats();
    assert_int_equal(st.in_flight, held);
    assert_int_equal(st.pending, delivered ? 2 : 1);
    assert_int_equal(fxt_ingress_pending(&q), delivered ? 2 : 1);
    assert_int_equal(pop_all(), delivered ? 2 : 1);
    assert_int_equal(got[0], 0);
    if (delivered)
      assert_int_equal(got[1], 1000);
    /* Laps over the remaining slots: never stuck, exact capacity, exact full count. */
    uint32_t id = 1, fulls = 0;
    for (int lap = 0; lap < 5; lap++) {
      ngot = 0;
      uint32_t want[4], k = 0;
      for (uint32_t i = 0; i < n - held; i++) {
        want[k++] = id;
        assert_int_equal(push_id(id++), 0);
      }
      assert_int_equal(push_id(id++), FXT_ENOSPC);
      fulls++;
      assert_int_equal(pop_all(), n - held);
      expect_got(want, k);
    }
    st = stats();
    assert_int_equal(st.full, fulls);
    assert_int_equal(st.in_flight, held);
    assert_int_equal(st.free, n - held);
    assert_int_equal(st.pending, 0);
  }
}

/* No hook: a real fault in the middle of a push's copy (the record's page is unreadable), so
 * the SIGSEGV handler runs between claim and publish. Resume: the handler pushes and pops,
 * then makes the page readable and returns; the copy restarts and the record is published
 * after the handler's. Abandon: the handler longjmps out; the slot stays in flight. */
static unsigned char *fault_page;
static size_t page_size;
static bool fault_abandons;
static uint32_t fault_in_flight;

static void segv_handler(int sig)
{
  (void)sig;
  level++;
  fault_in_flight = stats().in_flight;
  if (fault_abandons) {
    level = 0;
    siglongjmp(abandon_env, 1);
  }
  assert_int_equal(push_id(2000), 0);
  assert_int_equal(push_id(2001), 0);
  handler_popped[1] = pop_all();
  mprotect(fault_page, page_size, PROT_READ | PROT_WRITE);
  level--;
}

static void real_fault_inside_push(void **state)
{
  (void)state;
  page_size = (size_t)sysconf(_SC_PAGESIZE);
  fault_page = mmap(NULL, page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(fault_page != MAP_FAILED);
  disarm();
  install(SIGSEGV, segv_handler);
  for (volatile int abandons = 0; abandons < 2; abandons++) {
    fault_abandons = abandons;
    setup(4, 64);
    ngot = 0;
    for (uint32_t i = 0; i < 64; i++)
      fault_page[i] = pattern(7, i);
    assert_int_equal(mprotect(fault_page, page_size, PROT_NONE), 0);
    if (sigsetjmp(abandon_env, 1) == 0) {
      assert_int_equal(fxt_ingress_push(&q, fault_page, 64, 5, 6), 0);
      assert_false(abandons);
    } else {
      assert_true(abandons);
    }
    assert_int_equal(fault_in_flight, 1);
    mprotect(fault_page, page_size, PROT_READ | PROT_WRITE);
    struct raw *r = calloc(1, sizeof(*r));
    if (!abandons) {
      assert_int_equal(handler_popped[1], 2);
      static const uint32_t want[] = {2000, 2001};
      expect_got(want, 2);
      assert_int_equal(fxt_ingress_pop_batch(&q, collect_raw, r, 10), 1);
      assert_int_equal(r->len[0], 64);
      assert_int_equal(r->epoch[0], 5);
      assert_int_equal(r->tag[0], 6);
      assert_memory_equal(r->data[0], fault_page, 64);
      assert_int_equal(stats().free, 4);
    } else {
      assert_int_equal(fxt_ingress_pop_batch(&q, collect_raw, r, 10), 0);
      struct fxt_ingress_stats st = stats();
      assert_int_equal(st.in_flight, 1);
      assert_int_equal(st.free, 3);
      for (uint32_t id = 0; id < 3; id++)
        assert_int_equal(push_id(id), 0);
      assert_int_equal(push_id(3), FXT_ENOSPC);
      assert_int_equal(pop_all(), 3);
    }
    free(r);
  }
  signal(SIGSEGV, SIG_DFL);
  munmap(fault_page, page_size);
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

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(init_checks),
      cmocka_unit_test(fifo_payload_epoch_tag),
      cmocka_unit_test(oversize_and_full_counted_exactly),
      cmocka_unit_test(wrap_at_every_slot_index),
      cmocka_unit_test(positions_wrap_around_2_32),
      cmocka_unit_test(batch_limit_and_pending),
      cmocka_unit_test(callback_may_push),
      cmocka_unit_test(nested_push_at_every_step),
      cmocka_unit_test(doubly_nested_push_at_every_step_pair),
      cmocka_unit_test(nested_pop_then_push_at_every_step),
      cmocka_unit_test(nested_push_when_full),
      cmocka_unit_test(abandoned_push_at_every_step),
      cmocka_unit_test(real_fault_inside_push),
      cmocka_unit_test(randomized_against_model),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
