/* test_dlopen - tracepoints of a library loaded with dlopen during a session follow the
 * session's enabled patterns, are found by id and name while loaded, keep their id when
 * loaded again, and leave nothing behind after dlclose; an ad-hoc event's site in the library
 * adds its arguments to the event's fields for a hist trigger written after it is loaded.
 * Usage: test_dlopen MODULE.so */
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
#include <fxtrace/tracefs.h>
#include <stdio.h>
#include <string.h>
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

static char buf[1 << 16];

static const char *cat(const char *file)
{
  ssize_t n = fxt_fs_cat(file, buf, sizeof(buf));
  assert_true(n >= 0);
  return buf;
}

/* dl:adhoc has a site here (argument j) before the library's (argument i) is loaded: a hist
 * trigger written on j first, then one on i once the library is loaded, counts i's values (the
 * event's fields its hook lays out are made again at the second trigger). */
static void adhoc_fields_of_a_loaded_site(void **state)
{
  (void)state;
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "dl:adhoc",
                                   .output = ""};
  assert_int_equal(fxt_session_start(&cfg), 0);
  assert_int_equal(fxt_fs_echo("tracing_on", "1"), 1);
  const char *t1 = "hist:keys=j", *t2 = "hist:keys=i";
  assert_int_equal(fxt_fs_echo("events/dl/adhoc/trigger", t1), (ssize_t)strlen(t1));
  for (uint64_t j = 0; j < 4; j++)
    FXT_INSTANT("dl", "adhoc", FXT_U64("j", 100 + j));
  void *h = dlopen(module, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(h);
  assert_int_equal(fxt_fs_echo("events/dl/adhoc/trigger", t2), (ssize_t)strlen(t2));
  void (*fire)(uint64_t);
  *(void **)&fire = dlsym(h, "fire_dl");
  assert_non_null(fire);
  fire(3); /* i = 0, 1, 2 */
  /* The newest histogram first: i's, each value once; then j's, and the library's events
   * without a j (0). */
  const char *text = cat("events/dl/adhoc/hist");
  const char *second = strstr(text, "\n\n# event histogram");
  assert_non_null(second);
  for (int i = 0; i < 3; i++) {
    char line[64];
    snprintf(line, sizeof(line), "{ i: %10d } hitcount:          1\n", i);
    const char *at = strstr(text, line);
    if (!at || at > second)
      fail_msg("no '%s' in\n%s", line, text);
  }
  assert_non_null(strstr(second, "{ j:          0 } hitcount:          3\n"));
  assert_non_null(strstr(second, "{ j:        103 } hitcount:          1\n"));
  assert_int_equal(fxt_fs_echo("events/dl/adhoc/trigger", "!hist:keys=i"), 12);
  assert_int_equal(fxt_fs_echo("events/dl/adhoc/trigger", "!hist:keys=j"), 12);
  assert_int_equal(dlclose(h), 0);
  assert_int_equal(fxt_session_stop(), 0);
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODULE.so\n", argv[0]);
    return 2;
  }
  module = argv[1];
  FXT_RUN_TESTS(cmocka_unit_test(load_fire_unload),
                cmocka_unit_test(adhoc_fields_of_a_loaded_site));
}
