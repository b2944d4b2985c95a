/* tests/unit/test_filter_kernel.c - fxtrace's filters against the running kernel's.
 *
 * As root with tracefs (mounted here if it is not), each expression below is written to
 * events/sched/sched_switch/filter of a private tracefs instance, and the kernel's write
 * result, the `filter` file read back and the error_log entry are compared with what
 * fxt_filter_compile / fxt_filter_render / fxt_filter_render_error_log give for the field list
 * parsed from the same event's `format` file. Timestamps of error_log lines are compared by
 * shape only. The documented divergences (filter.h) are checked as divergences.
 *
 * The instance is removed in the teardown, which first writes "0" to the filters it used and
 * truncates its error_log, even when a test failed. Without root, tracefs or the event, every
 * test is skipped.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fxtrace/filter.h>

#define MAXF 32

struct kevent {
  char names[MAXF][64];
  struct fxt_field fields[MAXF];
  struct fxt_filter_event ev;
};

struct kstate {
  bool ok;
  char top[200]; /* tracefs mount */
  char inst[512]; /* the instance (or top when instances are unavailable) */
  bool own_instance;
  struct kevent sw, wk; /* sched_switch, sched_wakeup */
  char why[256];
};

static struct kstate g;

/* ---- files ---------------------------------------------------------------------------------- */

static ssize_t read_file(const char *path, char *buf, size_t size)
{
  int fd = open(path, O_RDONLY);
  if (fd < 0)
    return -1;
  size_t n = 0;
  for (;;) {
    ssize_t r = read(fd, buf + n, size - 1 - n);
    if (r <= 0)
      break;
    n += (size_t)r;
  }
  close(fd);
  buf[n] = '\0';
  return (ssize_t)n;
}

/* write() of exactly len bytes: 0 or the errno. */
static int write_file(const char *path, const char *text, size_t len, int flags)
{
  int fd = open(path, O_WRONLY | flags);
  if (fd < 0)
    return errno;
  int e = 0;
  if (write(fd, text, len) < 0)
    e = errno;
  close(fd);
  return e;
}

static void path_of(char *out, size_t size, const char *rel)
{
  snprintf(out, size, "%s/%s", g.inst, rel);
}

/* ---- the event's format ---------------------------------------------------------------------- */

/* "\tfield:<type> <name>;\toffset:N;\tsize:N;\tsigned:N;" after the common block. */
static bool parse_format(const char *event, struct kevent *k)
{
  char path[600], buf[16384];
  snprintf(path, sizeof path, "%s/events/sched/%s/format", g.inst, event);
  if (read_file(path, buf, sizeof buf) <= 0)
    return false;
  char *p = strstr(buf, "\n\n"); /* end of the common fields */
  if (!p)
    return false;
  uint32_t n = 0;
  for (char *line = p + 2; *line && *line != '\n' && n < MAXF;) {
    char *end = strchr(line, '\n');
    if (!end)
      break;
    *end = '\0';
    char *f = strstr(line, "field:"), *semi = f ? strchr(f, ';') : NULL;
    char *sz = strstr(line, "size:"), *sg = strstr(line, "signed:");
    if (!f || !semi || !sz || !sg)
      return false;
    *semi = '\0';
    char *decl = f + 6, *name = strrchr(decl, ' ');
    if (!name)
      return false;
    *name++ = '\0';
    char *br = strchr(name, '[');
    const bool array = br != NULL;
    if (br)
      *br = '\0';
    const unsigned size = (unsigned)atoi(sz + 5);
    const bool is_signed = atoi(sg + 7) != 0;
    snprintf(k->names[n], sizeof k->names[n], "%s", name);
    struct fxt_field *fl = &k->fields[n];
    fl->name = k->names[n];
    fl->bound = 0;
    if (strstr(decl, "__data_loc") || strstr(decl, "__rel_loc") || !strcmp(decl, "char *") ||
        !strcmp(decl, "const char *")) {
      fl->type = FXT_TYPE_STR;
      fl->bound = FXT_STR_MAX_BOUND;
    } else if (array && strstr(decl, "char")) {
      fl->type = FXT_TYPE_BYTES;
      fl->bound = (uint16_t)size;
    } else {
      static const uint16_t u[] = {0, FXT_TYPE_U8, FXT_TYPE_U16, 0, FXT_TYPE_U32,
                                   0, 0, 0, FXT_TYPE_U64};
      static const uint16_t s[] = {0, FXT_TYPE_S8, FXT_TYPE_S16, 0, FXT_TYPE_S32,
                                   0, 0, 0, FXT_TYPE_S64};
      if (size > 8 || !u[size])
        return false;
      fl->type = is_signed ? s[size] : u[size];
    }
    n++;
    line = end + 1;
  }
  k->ev.fields = k->fields;
  k->ev.nfields = n;
  return n > 0;
}

/* nr_cpu_ids: the highest possible CPU + 1. */
static uint32_t possible_cpus(void)
{
  char buf[256];
  if (read_file("/sys/devices/system/cpu/possible", buf, sizeof buf) <= 0)
    return 0;
  unsigned last = 0;
  for (char *p = buf; *p;) {
    if (isdigit((unsigned char)*p)) {
      last = (unsigned)strtoul(p, &p, 10);
    } else {
      p++;
    }
  }
  return last + 1;
}

/* ---- setup / teardown ------------------------------------------------------------------------- */

static void clean_instance(void)
{
  char path[600];
  path_of(path, sizeof path, "events/sched/sched_switch/filter");
  write_file(path, "0", 1, O_TRUNC);
  path_of(path, sizeof path, "events/sched/filter");
  write_file(path, "0", 1, O_TRUNC);
  path_of(path, sizeof path, "error_log");
  write_file(path, "", 0, O_TRUNC);
}

static int setup(void **state)
{
  (void)state;
  struct stat st;
  memset(&g, 0, sizeof g);
  if (geteuid() != 0) {
    snprintf(g.why, sizeof g.why, "not root");
    return 0;
  }
  snprintf(g.top, sizeof g.top, "/sys/kernel/tracing");
  char probe[600];
  snprintf(probe, sizeof probe, "%s/events", g.top);
  if (stat(probe, &st) != 0 && mount("nodev", g.top, "tracefs", 0, NULL) != 0) {
    snprintf(g.why, sizeof g.why, "no tracefs at %s", g.top);
    return 0;
  }
  snprintf(g.inst, sizeof g.inst, "%s/instances/fxt-filter-test-%d", g.top, (int)getpid());
  if (mkdir(g.inst, 0755) == 0) {
    g.own_instance = true;
  } else {
    snprintf(g.inst, sizeof g.inst, "%s", g.top); /* no instances: the top level */
  }
  snprintf(probe, sizeof probe, "%s/events/sched/sched_switch/filter", g.inst);
  if (stat(probe, &st) != 0 || !parse_format("sched_switch", &g.sw) ||
      !parse_format("sched_wakeup", &g.wk)) {
    snprintf(g.why, sizeof g.why, "no sched/sched_switch and sched_wakeup events");
    if (g.own_instance)
      rmdir(g.inst);
    return 0;
  }
  g.sw.ev.nr_cpus = g.wk.ev.nr_cpus = possible_cpus();
  g.ok = true;
  return 0;
}

static int teardown(void **state)
{
  (void)state;
  if (!g.ok)
    return 0;
  clean_instance();
  if (g.own_instance && rmdir(g.inst) != 0)
    fprintf(stderr, "rmdir %s: %s\n", g.inst, strerror(errno));
  return 0;
}

/* ---- one expression ----------------------------------------------------------------------------- */

/* SAME: errno, filter file and error_log identical to this kernel's.
 * FXT_REJECTS_KERNEL_ACCEPTS: a documented divergence, on every kernel seen so far.
 * KERNELS_DIFFER: some kernels accept it (fxtrace rejects it, a documented divergence) and
 * newer ones reject it as fxtrace does; compared as SAME where this kernel rejects it
 * ("prev_pid == 1 &&": accepted by 6.1 and some 6.18 builds, "Meaningless filter
 * expression" from a 6.18.44 build). */
enum expect { SAME, FXT_REJECTS_KERNEL_ACCEPTS, KERNELS_DIFFER };

struct kcase {
  const char *text;
  enum expect how;
};

static const struct kcase kcases[] = {
    {"prev_pid == 0", SAME},
    {"prev_pid==0", SAME},
    {"common_pid != 1 && next_prio < 100", SAME},
    {"(prev_pid == 0 || next_pid == 0) && !(prev_prio > 120)", SAME},
    {"next_prio >= 100 && next_prio <= 139 || prev_prio == 0 && prev_pid != 0", SAME},
    {"!prev_pid == 1", SAME},
    {"!!(prev_pid == 1)", SAME},
    {"prev_state & 2", SAME},
    {"common_preempt_count & 0xf0", SAME},
    {"prev_pid == -1", SAME},
    {"common_type == -1", SAME},
    {"prev_pid == 0x10", SAME},
    {"prev_pid == 010", SAME},
    {"prev_pid == 12abc", SAME},
    {"prev_pid == 99999999999999999999", SAME},
    {"prev_pid == 4294967297", SAME},
    {"prev_pid == 000000000000000000000001", SAME},
    {"prev_comm == \"bash\"", SAME},
    {"prev_comm == 'bash'", SAME},
    {"prev_comm == \"\"", SAME},
    {"prev_comm == bash", SAME},
    {"prev_comm ~ \"*sh\"", SAME},
    {"prev_comm ~ \"[bz]ash\"", SAME},
    {"prev_comm ~ \"ba\\*\"", SAME},
    {"prev_comm ~ \"!bash\"", SAME},
    {"prev_comm ~ \"2*\"", SAME},
    {"prev_comm < \"bash\"", SAME},
    {"prev_comm !~ \"bash\"", SAME},
    {"prev_pid ~ \"1\"", SAME},
    {"prev_pid == \"1\"", SAME},
    {"prev_pid ~ 1", SAME},
    {"prev_comm == 1", SAME},
    {"dsig == 17", SAME},
    {"((sig >= 10 && sig < 15) || dsig == 17) && comm != bash", SAME},
    {"prev_pid = 1", SAME},
    {"prev_pid <> 1", SAME},
    {"prev_pid", SAME},
    {"prev_pid ==", SAME},
    {"prev_pid == 1 next_pid == 2", SAME},
    {"prev_pid == 1 & next_pid == 2", SAME},
    {"prev_pid == 1 | next_pid == 2", SAME},
    {"(prev_pid == 1", SAME},
    {"(prev_pid == 1) && (next_pid == 2", SAME},
    {"prev_pid == 1)", SAME},
    {"prev_comm == \"bash", SAME},
    {"== 1", SAME},
    {"&& prev_pid == 1", SAME},
    {"(prev_pid == 1 &&)", SAME},
    {"()", SAME},
    {"( )", SAME},
    {"", SAME},
    {"   ", SAME},
    {"!", SAME},
    {" 0 ", SAME},
    {"\t0\n", SAME},
    {"00", SAME},
    {"comm == \"bash\"", SAME},
    {"COMM ~ \"ba*\"", SAME},
    {"cpu == 1", SAME},
    {"CPU < 2", SAME},
    {"common_cpu == 0", SAME},
    {"cpu & 1", SAME},
    {"cpu & CPUS{0-1}", SAME},
    {"cpu & CPUS{N}", SAME},
    {"cpu & CPUS{all}", SAME},
    {"cpu & CPUS{,}", SAME},
    {"cpu & CPUS{ 1 }", SAME},
    {"cpu & CPUS{1\n}", SAME},
    {"cpu & CPUS{0-1:1/2}", SAME},
    {"cpu & CPUS{100}", SAME},
    {"cpu & CPUS{}", SAME},
    {"cpu & CPUS1", SAME},
    {"cpu & CPUS{1", SAME},
    {"cpu < CPUS{0}", SAME},
    {"cpu ~ CPUS{0}", SAME},
    {"prev_pid & CPUS{0}", SAME},
    {"prev_comm & CPUS{1}", SAME},
    {"prev_state.function == 0x10", SAME},
    {"prev_state.function == 0x", SAME},
    {"prev_state.function == 123456789012345678901234", SAME},
    {"prev_state.function < x", SAME},
    {"prev_state.function ==", SAME},
    {"prev_pid.function == x", SAME},
    {"next_comm.function == \"x\"", SAME},
    {"next_comm.ustring == \"x\"", SAME},
    {"prev_comm.ustring.function == x", SAME},
    {"prev_pid == 1.5", SAME},
    {"stacktrace == 1", SAME},
    {"STACKTRACE == \"x\"", SAME},
    {"  prev_pid\t==\n0  ", SAME},
    {"prev_pid\xa0== 0", SAME},
    {"prev_pid\xe9 == 0", SAME},
    {"prev_pid\xd7 == 0", SAME},
    {"prev_pid == 0\xe9", SAME},
    {"prev_pid == +1", SAME},
    {"prev_pid == --1", SAME},
    {"prev_pid == -", SAME},
    {"prev_pid == 0x", SAME},
    {"prev_pid == 08", SAME},
    {"prev_state == 9223372036854775808", SAME},
    {"prev_state == -9223372036854775808", SAME},
    {"common_type == 18446744073709551615", SAME},
    {"common_type == 18446744073709551616", SAME},
    {"prev_comm == 'a\"b'", SAME},
    {"prev_comm ~ \"[!ab]*\"", SAME},
    {"prev_pid == 1 && ( next_pid == 2 || !(prev_prio < 3 && next_prio > 4))", SAME},
    {"(((prev_pid == 1)))", SAME},
    {"((prev_pid == 1) || (", SAME},
    {"prev_pid == 1 || 'x", SAME},
    {"prev_pid == 1 && next_comm ~ \"*\" || prev_comm == \"x)\"", SAME},
    /* documented divergences */
    {"prev_pid == 1 &&", KERNELS_DIFFER},
    {"prev_pid == 1 || !", KERNELS_DIFFER},
    {"prev_state.function == schedule", FXT_REJECTS_KERNEL_ACCEPTS},
};

static size_t g_compared, g_diverged;

/* Drops the "[%5llu.%06u]" timestamps of error_log text, after checking their shape. */
static void strip_ts(char *s)
{
  char *out = s;
  for (char *line = s; *line;) {
    char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line + 1) : strlen(line);
    if (line[0] == '[') {
      char *close = memchr(line, ']', len);
      assert_non_null(close);
      assert_true(close - line >= 13); /* "[" + >= 5 + "." + 6 */
      assert_int_equal(close[-7], '.');
      for (char *d = close - 6; d < close; d++)
        assert_true(isdigit((unsigned char)*d));
      const size_t skip = (size_t)(close + 1 - line);
      memmove(out, "[TS]", 4);
      memmove(out + 4, line + skip, len - skip);
      out += 4 + len - skip;
    } else {
      memmove(out, line, len);
      out += len;
    }
    line += len;
  }
  *out = '\0';
}

static void check_one(const struct kcase *c)
{
  static _Alignas(8) unsigned char prog[FXT_FILTER_PROG_MAX(FXT_FILTER_MAX_WRITE)];
  static char kfile[16384], klog[16384], ffile[16384], flog[16384];
  char fpath[600], lpath[600];
  const size_t len = strlen(c->text);
  path_of(fpath, sizeof fpath, "events/sched/sched_switch/filter");
  path_of(lpath, sizeof lpath, "error_log");

  assert_int_equal(write_file(fpath, "0", 1, O_TRUNC), 0);
  assert_int_equal(write_file(lpath, "", 0, O_TRUNC), 0);
  const int kerr = write_file(fpath, c->text, len, O_TRUNC);
  assert_true(read_file(fpath, kfile, sizeof kfile) >= 0);
  assert_true(read_file(lpath, klog, sizeof klog) >= 0);

  struct fxt_filter_error err;
  const int r = fxt_filter_compile(c->text, len, &g.sw.ev, prog, sizeof prog, &err);
  const int ferr = r < 0 ? -r : 0;
  fxt_filter_render(ffile, sizeof ffile, c->text, len, r, &err);
  fxt_filter_render_error_log(flog, sizeof flog, c->text, len, &err, 0);
  strip_ts(klog);
  strip_ts(flog);

  if (c->how == FXT_REJECTS_KERNEL_ACCEPTS || (c->how == KERNELS_DIFFER && kerr == 0)) {
    if (kerr != 0 || r >= 0)
      fail_msg("'%s': expected the documented divergence (kernel accepts, fxtrace rejects); "
               "kernel errno %d, fxtrace %d", c->text, kerr, r);
    g_diverged++;
    return;
  }
  if (kerr != ferr || strcmp(kfile, ffile) != 0 || strcmp(klog, flog) != 0)
    fail_msg("'%s':\n kernel errno %d, filter:\n%s\n error_log:\n%s\n fxtrace errno %d, "
             "filter:\n%s\n error_log:\n%s", c->text, kerr, kfile, klog, ferr, ffile, flog);
  g_compared++;
}

static void test_expressions(void **state)
{
  (void)state;
  if (!g.ok)
    skip();
  for (size_t k = 0; k < sizeof kcases / sizeof kcases[0]; k++)
    check_one(&kcases[k]);
  print_message("%zu expressions identical to the kernel's, %zu documented divergences\n",
                g_compared, g_diverged);
}

/* Long texts: caret past 255 (the log's position is 16 bits), the trace_seq limit, the
 * 4096-byte refusal that keeps the old filter. */
static void test_long(void **state)
{
  (void)state;
  if (!g.ok)
    skip();
  static char text[4200];
  struct kcase c = {text, SAME};
  size_t n = 0;
  while (n < 289) {
    memcpy(text + n, "prev_pid == 1 && ", 17);
    n += 17;
  }
  strcpy(text + n, "zz == 1");
  check_one(&c);
  for (size_t T = 4058; T <= 4064; T++) { /* around the trace_seq limit */
    memset(text, ' ', T - 8);
    memcpy(text + T - 8, "prev_pid", 9);
    check_one(&c);
  }
  memset(text, ' ', 4095);
  memcpy(text, "prev_pid == 3", 13);
  text[4095] = '\0';
  check_one(&c); /* 4095 bytes: accepted */

  /* 4096 bytes: EINVAL before parsing, the old filter stays */
  char fpath[600], buf[8192];
  path_of(fpath, sizeof fpath, "events/sched/sched_switch/filter");
  assert_int_equal(write_file(fpath, "prev_pid == 5", 13, O_TRUNC), 0);
  memset(text, 'x', 4096);
  assert_int_equal(write_file(fpath, text, 4096, O_TRUNC), EINVAL);
  read_file(fpath, buf, sizeof buf);
  assert_string_equal(buf, "prev_pid == 5\n");
  static _Alignas(8) unsigned char prog[256];
  struct fxt_filter_error err;
  const int r = fxt_filter_compile(text, 4096, &g.sw.ev, prog, sizeof prog, &err);
  assert_int_equal(r, -EINVAL);
  assert_int_equal(fxt_filter_render(buf, sizeof buf, text, 4096, r, &err), 0); /* keep */
}

/* events/sched/filter: the same text per event; events lacking the field get the error
 * filter; the system file shows the default block. */
static void test_system(void **state)
{
  (void)state;
  if (!g.ok)
    skip();
  static const char *const texts[] = {"prev_pid == 0", "common_pid == 1", "nope == 1",
                                      "== 1", "(prev_pid == 1", "pid == 1 &&", " 0\n"};
  char spath[600], swpath[600], wkpath[600], lpath[600];
  static char ks[8192], ksw[8192], kwk[8192], klog[16384], f[8192];
  static _Alignas(8) unsigned char p1[16384], p2[16384];
  path_of(spath, sizeof spath, "events/sched/filter");
  path_of(swpath, sizeof swpath, "events/sched/sched_switch/filter");
  path_of(wkpath, sizeof wkpath, "events/sched/sched_wakeup/filter");
  path_of(lpath, sizeof lpath, "error_log");
  for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
    const char *t = texts[k];
    struct fxt_filter_slot slots[2] = {{&g.sw.ev, p1, sizeof p1, 0, {0}},
                                       {&g.wk.ev, p2, sizeof p2, 0, {0}}};
    write_file(lpath, "", 0, O_TRUNC);
    const int kerr = write_file(spath, t, strlen(t), O_TRUNC);
    const int r = fxt_filter_compile_system(t, strlen(t), slots, 2);
    if (strcmp(t, "pid == 1 &&") == 0) { /* the documented divergence, per event */
      assert_int_equal(kerr, 0);
      assert_true(slots[1].result < 0);
      continue;
    }
    assert_int_equal(kerr, -r);
    read_file(spath, ks, sizeof ks);
    assert_string_equal(ks, FXT_FILTER_SYSTEM_DEFAULT);
    read_file(swpath, ksw, sizeof ksw);
    fxt_filter_render(f, sizeof f, t, strlen(t), slots[0].result, &slots[0].err);
    assert_string_equal(ksw, f);
    read_file(wkpath, kwk, sizeof kwk);
    fxt_filter_render(f, sizeof f, t, strlen(t), slots[1].result, &slots[1].err);
    assert_string_equal(kwk, f);
    /* one log entry per failing event of the system: at least ours must be there */
    read_file(lpath, klog, sizeof klog);
    strip_ts(klog);
    for (int s = 0; s < 2; s++) {
      if (slots[s].result >= 0)
        continue;
      fxt_filter_render_error_log(f, sizeof f, t, strlen(t), &slots[s].err, 0);
      strip_ts(f);
      assert_non_null(strstr(klog, f));
    }
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_expressions),
      cmocka_unit_test(test_long),
      cmocka_unit_test(test_system),
  };
  const int r = cmocka_run_group_tests(tests, setup, teardown);
  if (!g.ok)
    fprintf(stderr, "test_filter_kernel: skipped (%s)\n", g.why);
  return r;
}
