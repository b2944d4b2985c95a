/* test_registry_race - tracepoints registered while the consumer writes the file's metadata
 * (as a dlopen'ed library's, or printk's first use, would be): every tracepoint description
 * must come after the strings it names, so the strict reader (fxtfile.h, what convert, report
 * and check use) accepts the file. A thread registers 300 tracepoints with names never seen
 * before, one section at a time, while another keeps the consumer passing (flush); then the
 * file is loaded strictly and every description is in it. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../test_main.h"

#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <fxtrace/tracepoint.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/fxtfile.h"

#define TPS 300

static struct fxt_tracepoint tps[TPS];
static struct fxt_tracepoint *sections[TPS];
static struct fxt_field fields[TPS];
static char names[TPS][3][32];
static atomic_bool registering;

static void *registrar(void *arg)
{
  (void)arg;
  for (int k = 0; k < TPS; k++) {
    snprintf(names[k][0], sizeof(names[k][0]), "race%d", k % 7);
    snprintf(names[k][1], sizeof(names[k][1]), "tp_%d_%d", (int)getpid(), k);
    snprintf(names[k][2], sizeof(names[k][2]), "field_%d", k);
    fields[k] = (struct fxt_field){.name = names[k][2], .type = FXT_TYPE_U64};
    tps[k] = (struct fxt_tracepoint){.kind = FXT_TP_TYPED, .nfields = 1,
                                     .system = names[k][0], .name = names[k][1],
                                     .fields = &fields[k], .file = __FILE__, .line = __LINE__};
    sections[k] = &tps[k];
    fxt_register_section(&sections[k], &sections[k] + 1);
    if (k % 16 == 0)
      usleep(200);
  }
  atomic_store(&registering, false);
  return NULL;
}

static void descriptions_follow_their_strings(void **state)
{
  (void)state;
  char path[128];
  snprintf(path, sizeof(path), "/dev/shm/fxtrace-test-regrace-%d.fxt", (int)getpid());
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "*", .output = path};
  assert_int_equal(fxt_session_start(&cfg), 0);
  atomic_store(&registering, true);
  pthread_t th;
  pthread_create(&th, NULL, registrar, NULL);
  int passes = 0;
  while (atomic_load(&registering)) {
    assert_int_equal(fxt_session_flush(), 0); /* write_metadata runs at every pass */
    passes++;
  }
  pthread_join(th, NULL);
  assert_int_equal(fxt_session_stop(), 0);
  for (int k = 0; k < TPS; k++)
    fxt_unregister_section(&sections[k], &sections[k] + 1);
  struct fxtf_file *f = NULL;
  char err[512] = "";
  int rc = fxtf_open(path, &f, err, sizeof(err));
  unlink(path);
  if (rc != 0)
    fail_msg("%s: %s (after %d passes)", path, err, passes);
  fxtf_close(f);
  printf("# %d tracepoints registered over %d consumer passes\n", TPS, passes);
}

FXT_TEST_MAIN(
    cmocka_unit_test(descriptions_follow_their_strings))
