/* test_recover_damage - recovery of a damaged session (issue 6): files truncated or overwritten
 * with garbage in the middle. A traced child (crash_child, 4 threads, 64 KiB buffers) is
 * killed; its files are read back privately mapped and damaged in memory, one way per test,
 * and recovered through the library. Each test checks that:
 *  - recovery returns 1 (written, damage reported), and a report line names the damaged file
 *    and an offset (or, for the header, the whole session, returns FXT_EBADMSG);
 *  - the recovered file decodes strictly;
 *  - every thread whose buffer was not touched is recovered exactly as from the intact files
 *    (same events, same last sequence number, same losses), and the damaged one loses no
 *    more than what the damage covers (no more events than its intact recovery).
 * The last test damages the real files (truncation) and runs `fxtrace recover`: the message
 * on stderr is "FILE: offset N: reason". The directory is removed at the end.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fxtrace/errors.h>
#include <fxtrace/fxt.h>
#include <fxtrace/ring.h>
#include <signal.h>
#include <time.h>

#include "base/recover_header.h" /* RF_HEAD, RF_TAIL: the slot layout table's order */
#include "recover_util.h"

static const char *child_path, *fxtrace_path;
static char dir[256], session_dir[4200];

/* Per thread: what a recovery gave. */
struct thr {
  uint64_t tid, events, last, losses;
};
struct result {
  int rc;
  struct thr t[8];
  int n;
  char reports[8192]; /* the damage reports */
  char info[4096];     /* the other lines (per slot: how many records from its buffer) */
};

static struct ru_session ses; /* the intact files, mapped */
static struct result intact;

static void collect(void *ctx, int damage, const char *line)
{
  struct result *r = ctx;
  char *to = damage ? r->reports : r->info;
  size_t cap = damage ? sizeof(r->reports) : sizeof(r->info), n = strlen(to);
  snprintf(to + n, cap - n, "%s\n", line);
}

static bool is(const struct fxt_str_ref *r, const char *s)
{
  return r->len == strlen(s) && memcmp(r->data, s, r->len) == 0;
}

/* Recovers in (the damaged view) and tallies the result. */
/* Counts the events of each thread in an FXT file into r; returns the decoder's result. */
static int count(const unsigned char *buf, size_t len, struct result *r, char *err,
                 size_t err_size)
{
  static struct fxt_str_slot table[FXT_STRING_TABLE_SIZE];
  static struct fxt_record rec;
  struct fxt_decoder d;
  fxt_decoder_init(&d, buf, len, table);
  int rc;
  while ((rc = fxt_decoder_next(&d, &rec, err, err_size)) == 1) {
    if (rec.kind != FXT_KIND_EVENT || rec.u.event.thread.thread_koid == 0)
      continue;
    const struct fxt_event *e = &rec.u.event;
    struct thr *t = NULL;
    for (int i = 0; i < r->n && !t; i++)
      if (r->t[i].tid == e->thread.thread_koid)
        t = &r->t[i];
    if (!t && r->n < 8) {
      t = &r->t[r->n++];
      t->tid = e->thread.thread_koid;
    }
    if (!t)
      continue;
    if (is(&e->category, "kernel:meta")) {
      if ((is(&e->name, "drop_stats") || is(&e->name, "overrun") || is(&e->name, "lost")) &&
          e->num_args)
        t->losses += e->args[0].value.u32;
    } else if (is(&e->name, "seq")) {
      t->events++;
      t->last = e->args[0].value.u64;
    }
  }
  return rc;
}

static void run(const struct fxt_rec_input *in, struct result *r)
{
  memset(r, 0, sizeof(*r));
  struct mem_sink out = {0};
  r->rc = fxt_recover_run(in, mem_sink_write, &out, collect, r, NULL);
  if (r->rc < 0) {
    free(out.buf);
    return;
  }
  char err[256];
  int rc = count(out.buf, out.len, r, err, sizeof(err));
  free(out.buf);
  if (rc != 0)
    fail_msg("the recovered trace does not decode: %s", err);
}

static const struct thr *find(const struct result *r, uint64_t tid)
{
  for (int i = 0; i < r->n; i++)
    if (r->t[i].tid == tid)
      return &r->t[i];
  return NULL;
}

/* Slot i's thread, from the slot table. */
static uint32_t tid_of_slot(uint32_t i)
{
  const unsigned char *sd = ses.in.session.data;
  uint64_t slots_off;
  memcpy(&slots_off, sd + FXT_SH_OFF_SLOTS, 8);
  uint32_t tid;
  memcpy(&tid, sd + slots_off + (uint64_t)i * FXT_SH_SLOT_BYTES + FXT_SLOT_OFF_TID, 4);
  return tid;
}

static uint32_t header_u32(uint32_t off)
{
  uint32_t v;
  memcpy(&v, ses.in.session.data + off, 4);
  return v;
}

/* Every thread but `damaged` (0: none) as in the intact recovery; the damaged one has no more
 * events than that. (Not "a prefix": garbage over an event's argument words, with its header
 * intact, decodes as that event with another value; FXT records carry no checksum.) */
static void expect_others_intact(const struct result *r, uint32_t damaged)
{
  for (int i = 0; i < intact.n; i++) {
    const struct thr *want = &intact.t[i], *got = find(r, want->tid);
    if (want->tid == damaged) {
      if (got && got->events > want->events)
        fail_msg("thread %llu (damaged): %llu events up to %llu, more than intact %llu up to "
                 "%llu",
                 (unsigned long long)want->tid, (unsigned long long)got->events,
                 (unsigned long long)got->last, (unsigned long long)want->events,
                 (unsigned long long)want->last);
      continue;
    }
    if (!got || got->events != want->events || got->last != want->last ||
        got->losses != want->losses)
      fail_msg("thread %llu: %llu events up to %llu, %llu losses; intact: %llu up to %llu, "
               "%llu losses",
               (unsigned long long)want->tid, got ? (unsigned long long)got->events : 0,
               got ? (unsigned long long)got->last : 0,
               got ? (unsigned long long)got->losses : 0, (unsigned long long)want->events,
               (unsigned long long)want->last, (unsigned long long)want->losses);
  }
}

static void expect_report(const struct result *r, const char *file)
{
  if (r->rc != 1)
    fail_msg("recovery returned %d, want 1 (damage reported)", r->rc);
  size_t n = strlen(file) + sizeof(": offset ");
  char *want = malloc(n);
  assert_non_null(want);
  snprintf(want, n, "%s: offset ", file);
  bool found = strstr(r->reports, want) != NULL;
  if (!found)
    fail_msg("no report names %s and an offset; reports:\n%s", want, r->reports);
  free(want);
}

/* What damage to one file gives: a report naming file and an offset, and every thread but
 * `damaged` (0: none) as in the intact recovery. */
static void expect_damage(const struct result *r, const char *file, uint32_t damaged)
{
  expect_report(r, file);
  expect_others_intact(r, damaged);
}

/* A private, writable copy of a mapped file's bytes (copy-on-write). */
static unsigned char *private_copy(const struct fxt_rec_file *f)
{
  unsigned char *p = mmap(NULL, f->size, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(p != MAP_FAILED);
  memcpy(p, f->data, f->size);
  return p;
}

/* Recovers ses.in into r with one of its files, file (&ses.in.pool, &ses.in.session or
 * &ses.in.output), read from copy instead: a damaged private_copy of it, unmapped after. */
static void run_damaged(const struct fxt_rec_file *file, unsigned char *copy, struct result *r)
{
  struct fxt_rec_input in = ses.in;
  struct fxt_rec_file *f = file == &ses.in.pool      ? &in.pool
                           : file == &ses.in.session ? &in.session
                                                     : &in.output;
  f->data = copy;
  run(&in, r);
  munmap(copy, file->size);
}

static void garbage(unsigned char *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char)(rand() >> 7);
}

/* ---- setup: a killed child's session ------------------------------------------------------- */

static int setup(void **state)
{
  (void)state;
  if (!ru_fresh_dir(dir, sizeof(dir), "damage"))
    return -1;
  /* Discard mode: the fast threads fill their buffers, so each holds records at death. */
  const char *argv[] = {child_path, dir, "discard", "4", "64", "0", NULL};
  pid_t pid = ru_spawn_ready(argv, dir, session_dir, sizeof(session_dir));
  if (pid < 0)
    return -1;
  struct timespec ts = {0, 20 * 1000000L};
  nanosleep(&ts, NULL);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  if (!ru_open_session(session_dir, &ses))
    return -1;
  run(&ses.in, &intact);
  if (intact.rc != 0 || intact.n != 4) {
    fprintf(stderr, "intact recovery: rc %d, %d threads\n%s", intact.rc, intact.n,
            intact.reports);
    return -1;
  }
  return 0;
}

static int teardown(void **state)
{
  (void)state;
  ru_close_session(&ses);
  ru_rmtree(dir);
  return 0;
}

/* ---- the damage ------------------------------------------------------------------------------ */

static void buffers_truncated_in_slot_2(void **state)
{
  (void)state;
  uint32_t stride = header_u32(FXT_SH_OFF_STRIDE);
  struct fxt_rec_input in = ses.in;
  in.pool.size = 2 * (uint64_t)stride + stride / 2; /* cut in the middle of slot 2 */
  struct result r;
  run(&in, &r);
  expect_report(&r, ses.ppath);
  /* Slots 0 and 1 intact; 2 and 3 are gone (their records in the output remain). */
  for (int i = 0; i < intact.n; i++) {
    uint32_t tid = (uint32_t)intact.t[i].tid;
    if (tid == tid_of_slot(0) || tid == tid_of_slot(1)) {
      const struct thr *got = find(&r, tid);
      assert_non_null(got);
      assert_int_equal(got->events, intact.t[i].events);
      assert_int_equal(got->last, intact.t[i].last);
      assert_int_equal(got->losses, intact.t[i].losses);
    }
  }
}

static void garbage_in_a_ring(void **state)
{
  (void)state;
  uint32_t stride = header_u32(FXT_SH_OFF_STRIDE);
  uint32_t storage = header_u32(FXT_SH_OFF_RING_STORAGE);
  uint32_t size = header_u32(FXT_SH_OFF_RING_BYTES);
  unsigned char *pool = private_copy(&ses.in.pool);
  /* 256 bytes of garbage in the middle of slot 1's ring storage. */
  garbage(pool + stride + storage + size / 2, 256);
  struct result r;
  run_damaged(&ses.in.pool, pool, &r);
  /* Where the garbage falls in the ring's records decides what is lost; a record that no
   * longer decodes, or a header that breaks the walk, is reported with the buffers file and
   * an offset in slot 1's ring storage. Undamaged rings (the garbage may also fall in the free
   * part of the ring: then nothing is reported). */
  assert_true(r.rc == 0 || r.rc == 1);
  if (r.rc == 1) {
    expect_report(&r, ses.ppath);
    char want[4500];
    snprintf(want, sizeof(want), "%s: offset ", ses.ppath);
    for (const char *at = strstr(r.reports, want); at; at = strstr(at + 1, want)) {
      unsigned long long off = strtoull(at + strlen(want), NULL, 10);
      if (off < (unsigned long long)stride + storage ||
          off >= (unsigned long long)stride + storage + size)
        fail_msg("offset %llu is not in slot 1's ring storage; reports:\n%s", off, r.reports);
    }
  }
  expect_others_intact(&r, tid_of_slot(1));
}

/* A record in a ring turned into a provider info record of the same size (what one damaged
 * header word can do): a file writer's record, which would give the records after it other
 * string and thread tables. It is dropped as a record that does not decode (the recovered
 * trace decodes, every other thread whole); it used to reach the tail and make recovery
 * refuse its own records ("internal: ... string ref 1 not defined", found by fuzz_recover). */
static void a_provider_record_in_a_ring(void **state)
{
  (void)state;
  /* A slot whose buffer gave records to the intact recovery: its last record before the
   * head is among them. */
  uint32_t slot = UINT32_MAX;
  for (uint32_t i = 0; i < 4 && slot == UINT32_MAX; i++) {
    char key[64];
    snprintf(key, sizeof(key), "slot %u: ", i);
    const char *at = strstr(intact.info, key);
    if (at && strtoul(at + strlen(key), NULL, 10) > 0)
      slot = i;
  }
  if (slot == UINT32_MAX)
    skip(); /* the consumer had delivered every record: nothing to damage */
  uint32_t stride = header_u32(FXT_SH_OFF_STRIDE);
  uint32_t storage = header_u32(FXT_SH_OFF_RING_STORAGE);
  uint32_t size = header_u32(FXT_SH_OFF_RING_BYTES);
  uint32_t head_off = header_u32(FXT_SH_OFF_LAYOUT + 4 * RF_HEAD);
  uint32_t tail_off = header_u32(FXT_SH_OFF_LAYOUT + 4 * RF_TAIL);
  unsigned char *pool = private_copy(&ses.in.pool);
  unsigned char *sb = pool + (size_t)slot * stride, *ring = sb + storage;
  uint32_t head, pos, last = 0;
  memcpy(&head, sb + head_off, 4);
  memcpy(&pos, sb + tail_off, 4);
  while (pos != head) {
    uint64_t w;
    memcpy(&w, ring + (pos & (size - 1)), 8);
    uint32_t n = fxt_ring_record_bytes(w);
    assert_true(n != 0 && n <= head - pos);
    last = pos;
    pos += n;
  }
  uint64_t w;
  memcpy(&w, ring + (last & (size - 1)), 8);
  uint32_t words = fxt_ring_record_bytes(w) / 8;
  assert_true(words >= 2 && words <= 32);
  char name[256];
  memset(name, 'p', sizeof(name));
  struct fxt_provider_info pi = {7, (uint8_t)(8 * (words - 1)), name};
  uint64_t rec[32];
  assert_int_equal(fxt_encode_provider_info(rec, sizeof(rec), &pi), 8 * (int64_t)words);
  for (uint32_t k = 0; k < words; k++) /* word by word: a record may wrap the ring's end */
    memcpy(ring + ((last + 8 * k) & (size - 1)), &rec[k], 8);
  struct result r;
  run_damaged(&ses.in.pool, pool, &r); /* fails when the recovered trace does not decode */
  expect_damage(&r, ses.ppath, tid_of_slot(slot));
  if (!strstr(r.reports, "a provider record, which only a file's writer makes"))
    fail_msg("no report of the provider record; reports:\n%s", r.reports);
  const struct thr *got = find(&r, tid_of_slot(slot)), *want = find(&intact, tid_of_slot(slot));
  assert_non_null(got);
  assert_true(got->events + 1 >= want->events); /* that record alone is gone */
}

static void garbage_over_a_slot_header(void **state)
{
  (void)state;
  uint32_t stride = header_u32(FXT_SH_OFF_STRIDE);
  unsigned char *pool = private_copy(&ses.in.pool);
  garbage(pool + 2 * (size_t)stride, 512); /* slot 2's writer and ring positions */
  struct result r;
  run_damaged(&ses.in.pool, pool, &r);
  expect_damage(&r, ses.ppath, tid_of_slot(2));
}

static void garbage_in_the_slot_table(void **state)
{
  (void)state;
  unsigned char *sd = private_copy(&ses.in.session);
  uint64_t slots_off;
  memcpy(&slots_off, sd + FXT_SH_OFF_SLOTS, 8);
  memset(sd + slots_off + 3 * FXT_SH_SLOT_BYTES, 0xa5, FXT_SH_SLOT_BYTES); /* slot 3 */
  struct result r;
  run_damaged(&ses.in.session, sd, &r);
  expect_damage(&r, ses.spath, tid_of_slot(3));
}

static void session_file_truncated_after_the_slot_table(void **state)
{
  (void)state;
  /* The ingress ring, held records, string and tracepoint tables are gone: the output's own
   * strings still name every record, so every buffer is recovered. */
  uint64_t ingress_off;
  memcpy(&ingress_off, ses.in.session.data + FXT_SH_OFF_INGRESS, 8);
  struct fxt_rec_input in = ses.in;
  in.session.size = ingress_off + 100;
  struct result r;
  run(&in, &r);
  expect_damage(&r, ses.spath, 0);
}

static struct result bufonly; /* what the buffers alone give */

static void output_missing(void **state)
{
  (void)state;
  struct fxt_rec_input in = ses.in;
  in.output.size = 0;
  run(&in, &bufonly);
  assert_int_equal(bufonly.rc, 1);
  if (!strstr(bufonly.reports, "missing or empty"))
    fail_msg("reports:\n%s", bufonly.reports);
  /* Each thread's records from its buffer end where its intact recovery ends. */
  for (int i = 0; i < bufonly.n; i++) {
    const struct thr *want = find(&intact, bufonly.t[i].tid);
    assert_non_null(want);
    if (bufonly.t[i].events)
      assert_int_equal(bufonly.t[i].last, want->last);
    assert_true(bufonly.t[i].events <= want->events);
  }
}

static void garbage_in_the_output(void **state)
{
  (void)state;
  unsigned char *out = private_copy(&ses.in.output);
  size_t at = ses.in.output.size / 2;
  garbage(out + at, 64);
  struct result r;
  run_damaged(&ses.in.output, out, &r);
  expect_report(&r, ses.opath);
  /* What the buffers held beyond the output is recovered whole (the output's records past the
   * garbage are lost): a thread whose newest records are in its buffer and not in the output
   * ends where its intact recovery ends. Records the consumer's last write put in the output
   * are still in the buffer until that write is applied (docs/recovery.md): recovery takes
   * them from the output, so they go with its tail. */
  struct result outonly;
  memset(&outonly, 0, sizeof(outonly));
  char err[256];
  (void)count(ses.in.output.data, ses.in.output.size, &outonly, err, sizeof(err));
  for (int i = 0; i < bufonly.n; i++) {
    if (!bufonly.t[i].events)
      continue;
    const struct thr *in_out = find(&outonly, bufonly.t[i].tid);
    if (in_out && in_out->last >= bufonly.t[i].last)
      continue;
    const struct thr *got = find(&r, bufonly.t[i].tid);
    assert_non_null(got);
    assert_int_equal(got->last, bufonly.t[i].last);
    assert_true(got->events >= bufonly.t[i].events);
  }
}

static void header_garbage_is_fatal_and_says_where(void **state)
{
  (void)state;
  unsigned char *sd = private_copy(&ses.in.session);
  garbage(sd + FXT_SH_OFF_NSLOTS, 16);
  struct fxt_rec_input in = ses.in;
  in.session.data = sd;
  struct result r;
  memset(&r, 0, sizeof(r));
  r.rc = fxt_recover_run(&in, mem_sink_write, &(struct mem_sink){0}, collect, &r, NULL);
  munmap(sd, ses.in.session.size);
  assert_int_equal(r.rc, FXT_EBADMSG);
  char want[4600];
  snprintf(want, sizeof(want), "%s: offset 0..%u: header checksum mismatch", ses.spath,
           FXT_SH_OFF_CHECKSUM);
  if (!strstr(r.reports, want))
    fail_msg("want '%s'; reports:\n%s", want, r.reports);
}

/* Runs `fxtrace recover SESSION -o OUT` with its stderr in the file err; its exit status
 * (the test asserts the child exited). */
static int run_recover_tool(const char *session, const char *out, const char *err)
{
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    execl(fxtrace_path, fxtrace_path, "recover", session, "-o", out, (char *)NULL);
    _exit(127);
  }
  int st;
  waitpid(pid, &st, 0);
  assert_true(WIFEXITED(st));
  return WEXITSTATUS(st);
}

static void the_tool_reports_a_truncated_file(void **state)
{
  (void)state;
  uint32_t stride = header_u32(FXT_SH_OFF_STRIDE);
  ru_close_session(&ses); /* the files change under the mapping: unmap first */
  char pool[4400];
  snprintf(pool, sizeof(pool), "%s/%s", session_dir, FXT_SH_POOL_FILE);
  assert_int_equal(truncate(pool, 3 * (off_t)stride + 100), 0);
  char out[300], err[300];
  snprintf(out, sizeof(out), "%s/tool.fxt", dir);
  snprintf(err, sizeof(err), "%s/tool.err", dir);
  assert_int_equal(run_recover_tool(session_dir, out, err), 1);
  char want[4500];
  snprintf(want, sizeof(want), "fxtrace recover: %s: offset %llu: the file ends before slot 3",
           pool, (unsigned long long)(3 * (uint64_t)stride + 100));
  if (!ru_file_has(dir, "tool.err", want)) {
    ru_cat(dir, "tool.err");
    fail_msg("want '%s'", want);
  }
  struct stat sb;
  assert_int_equal(stat(out, &sb), 0); /* written all the same */
  ru_open_session(session_dir, &ses);
}

/* A damaged header: the tool says why it is refused and prints nothing it holds (here, a
 * path in its output field), in a copy of the session's directory. */
static void the_tool_prints_nothing_of_a_bad_header(void **state)
{
  (void)state;
  char copy[300], cmd[5000], spath[400], out[300], err[300];
  snprintf(copy, sizeof(copy), "%s/badheader", dir);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -r '%s' '%s'", copy, session_dir, copy);
  assert_int_equal(system(cmd), 0);
  snprintf(spath, sizeof(spath), "%s/%s", copy, FXT_SH_FILE);
  static const char junk[] = "/no/such/place/JUNK-PATH-FROM-A-BAD-HEADER";
  int fd = open(spath, O_WRONLY);
  assert_true(fd >= 0);
  assert_int_equal(pwrite(fd, junk, sizeof(junk), FXT_SH_OFF_OUTPUT), (ssize_t)sizeof(junk));
  close(fd);
  snprintf(out, sizeof(out), "%s/bad.fxt", dir);
  snprintf(err, sizeof(err), "%s/bad.err", dir);
  assert_int_equal(run_recover_tool(copy, out, err), 1);
  char want[4600];
  snprintf(want, sizeof(want), "%s: offset 0..%u: header checksum mismatch", spath,
           FXT_SH_OFF_CHECKSUM);
  bool said = ru_file_has(dir, "bad.err", want), leaked = ru_file_has(dir, "bad.err", "JUNK");
  if (!said || leaked) {
    ru_cat(dir, "bad.err");
    fail_msg("%s '%s'", said ? "a path from the damaged header was printed, besides" : "want",
             want);
  }
  struct stat sb;
  assert_int_equal(stat(out, &sb), -1); /* nothing written */
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", copy);
  assert_int_equal(system(cmd), 0);
}

int main(int argc, char **argv)
{
  if (!ru_take_paths(argc, argv, "", &child_path, &fxtrace_path))
    return 2;
  srand(12345);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(buffers_truncated_in_slot_2),
      cmocka_unit_test(garbage_in_a_ring),
      cmocka_unit_test(a_provider_record_in_a_ring),
      cmocka_unit_test(garbage_over_a_slot_header),
      cmocka_unit_test(garbage_in_the_slot_table),
      cmocka_unit_test(session_file_truncated_after_the_slot_table),
      cmocka_unit_test(output_missing),
      cmocka_unit_test(garbage_in_the_output),
      cmocka_unit_test(header_garbage_is_fatal_and_says_where),
      cmocka_unit_test(the_tool_reports_a_truncated_file),
      cmocka_unit_test(the_tool_prints_nothing_of_a_bad_header),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
