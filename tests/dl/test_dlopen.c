/* test_dlopen - tracepoints of a library loaded with dlopen during a session follow the
 * session's enabled patterns, are found by id and name while loaded, keep their id when
 * loaded again, and leave nothing behind after dlclose. Usage: test_dlopen MODULE.so */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../test_main.h"

#include <dlfcn.h>
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <stdio.h>
#include <unistd.h>

#include "../fxtcount.h"

static const char *module;
static char path[256];

static void load_fire_unload(void **state)
{
  (void)state;
  snprintf(path, sizeof(path), "/dev/shm/fxtrace-test-dlopen-%d.fxt", (int)getpid());
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "dl:ev",
                                   .output = path};
  assert_int_equal(fxt_session_start(&cfg), 0);
  assert_null(fxt_tracepoint_by_name("dl", "ev"));

  void *h = dlopen(module, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(h);
  struct fxt_tracepoint *tp = fxt_tracepoint_by_name("dl", "ev");
  assert_non_null(tp);
  assert_true(atomic_load(&tp->enabled));               /* the session's pattern applies */
  uint32_t id = tp->id;
  assert_ptr_equal(fxt_tracepoint_by_id(id), tp);
  struct fxt_tracepoint *adhoc = fxt_tracepoint_by_name("dl", "adhoc");
  assert_non_null(adhoc);
  assert_false(atomic_load(&adhoc->enabled));           /* not matched by "dl:ev" */
  void (*fire)(uint64_t);
  *(void **)&fire = dlsym(h, "fire_dl"); /* POSIX's way around ISO C's pointer rules */
  assert_non_null(fire);
  fire(1000);
  assert_int_equal(dlclose(h), 0);
  /* Unloaded: no name, no id, nothing dangling. */
  assert_null(fxt_tracepoint_by_name("dl", "ev"));
  assert_null(fxt_tracepoint_by_id(id));

  /* Loaded again: the same id, enabled again. */
  h = dlopen(module, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(h);
  tp = fxt_tracepoint_by_name("dl", "ev");
  assert_non_null(tp);
  assert_int_equal(tp->id, id);
  assert_true(atomic_load(&tp->enabled));
  *(void **)&fire = dlsym(h, "fire_dl");
  assert_non_null(fire);
  fire(500);
  assert_int_equal(dlclose(h), 0);

  assert_int_equal(fxt_session_stop(), 0);
  static struct fxtcount c;
  if (fxtcount_file(path, "ev", &c) != 0)
    fail_msg("decoding %s: %s", path, c.err);
  unlink(path);
  uint64_t events = 0, other = 0;
  for (int i = 0; i < c.nthreads; i++) {
    events += c.t[i].events + c.t[i].dropped;
    other += c.t[i].other;
  }
  assert_int_equal(events, 1500);
  assert_int_equal(other, 0); /* dl:adhoc stayed off */
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODULE.so\n", argv[0]);
    return 2;
  }
  module = argv[1];
  FXT_RUN_TESTS(
      cmocka_unit_test(load_fire_unload));
}
