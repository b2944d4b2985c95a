/* test_ingress_nested - the MPSC ingress under pushes from SIGUSR1 / SIGALRM handlers that
 * interrupt a push on their own thread after each of its steps (once and twice nested, resumed
 * and abandoned, into a full queue), plus a real fault in the middle of a push's copy.
 *
 * This file compiles src/core/ingress.c itself (ingress_test.h) with FXT_INGRESS_RACE_HOOK
 * defined, so a test can raise a signal right after each observable step of a push; the
 * library's copy (not linked: every symbol is defined here) has no hook. */
#define _DEFAULT_SOURCE
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../sanitizers.h"

static void race_hook(int step);
#define FXT_INGRESS_RACE_HOOK(q, step) race_hook((int)(step))
#include "ingress_test.h"
#include "../test_main.h"

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

FXT_TEST_MAIN(
    cmocka_unit_test(nested_push_at_every_step),
    cmocka_unit_test(doubly_nested_push_at_every_step_pair),
    cmocka_unit_test(nested_pop_then_push_at_every_step), cmocka_unit_test(nested_push_when_full),
    cmocka_unit_test(abandoned_push_at_every_step), cmocka_unit_test(real_fault_inside_push))
