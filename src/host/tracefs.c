/* tracefs.c - the ftrace control surface as files (fxtrace/tracefs.h).
 *
 * A path resolves to a node; an open file keeps its node, a text snapshot for files whose
 * content is read (made at open, as the kernel's seq files make theirs on first read; `trace`
 * a read at a time: its header at open, its lines from where the last read left, live.h), and,
 * for trace_pipe, the rest of a line that did not fit the reader's buffer (the Starry seed's
 * TextDrain): no byte is lost or duplicated whatever the read sizes. Writes take the whole
 * value at once and either apply it or fail with the kernel's errno, changing nothing. This
 * file is the tree (its paths, which node each names, its listings) and the open files; what
 * each node reads and what a write to it does are tracefs_nodes.c's (tracefs_int.h).
 */
#define _GNU_SOURCE
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "filters.h"
#include "functions.h"
#include "live.h"
#include "registry.h"
#include "tracefs_int.h"


#define RD 1u
#define WR 2u

static const struct {
  const char *name;
  enum node node;
  uint32_t mode;
  int fn_file; /* N_FUNCTIONS: which (functions.h) */
} root_files[] = {
    {"set_event", N_SET_EVENT, RD | WR, 0},
    {"available_events", N_AVAILABLE_EVENTS, RD, 0},
    {"set_event_pid", N_SET_EVENT_PID, RD | WR, 0},
    {"set_event_notrace_pid", N_SET_EVENT_NOTRACE_PID, RD | WR, 0},
    {"trace", N_TRACE, RD | WR, 0},
    {"trace_pipe", N_TRACE_PIPE, RD, 0},
    {"trace_marker", N_TRACE_MARKER, WR, 0},
    {"saved_cmdlines", N_SAVED_CMDLINES, RD, 0},
    {"saved_cmdlines_size", N_SAVED_CMDLINES_SIZE, RD | WR, 0},
    {"tracing_on", N_TRACING_ON, RD | WR, 0},
    {"buffer_size_kb", N_BUFFER_SIZE_KB, RD | WR, 0},
    {"buffer_total_size_kb", N_BUFFER_TOTAL_SIZE_KB, RD, 0},
    {"trace_clock", N_TRACE_CLOCK, RD, 0},
    {"error_log", N_ERROR_LOG, RD | WR, 0},
    {"available_tracers", N_FUNCTIONS, RD, FXT_FN_AVAILABLE_TRACERS},
    {"current_tracer", N_FUNCTIONS, RD | WR, FXT_FN_CURRENT_TRACER},
    {"available_filter_functions", N_FUNCTIONS, RD, FXT_FN_AVAILABLE_FILTER_FUNCTIONS},
    {"set_ftrace_filter", N_FUNCTIONS, RD | WR, FXT_FN_SET_FTRACE_FILTER},
    {"set_ftrace_notrace", N_FUNCTIONS, RD | WR, FXT_FN_SET_FTRACE_NOTRACE},
    {"set_graph_function", N_FUNCTIONS, RD | WR, FXT_FN_SET_GRAPH_FUNCTION},
    {"set_graph_notrace", N_FUNCTIONS, RD | WR, FXT_FN_SET_GRAPH_NOTRACE},
    {"max_graph_depth", N_FUNCTIONS, RD | WR, FXT_FN_MAX_GRAPH_DEPTH},
    {"tracing_thresh", N_FUNCTIONS, RD | WR, FXT_FN_TRACING_THRESH},
    {"function_profile_enabled", N_FUNCTIONS, RD | WR, FXT_FN_FUNCTION_PROFILE_ENABLED},
};
static const char *const root_dirs[] = {"events", "options", "per_cpu", "per_thread",
                                        "trace_stat"};

/* ---- paths ----------------------------------------------------------------------------- */

/* Splits path into at most 4 components; returns their number, or -1 if too deep/long. */
static int split(const char *path, char comp[4][512])
{
  int n = 0;
  while (*path == '/')
    path++;
  while (*path) {
    if (n == 4)
      return -1;
    size_t len = strcspn(path, "/");
    if (len >= 512)
      return -1;
    memcpy(comp[n], path, len);
    comp[n][len] = 0;
    n++;
    path += len;
    while (*path == '/')
      path++;
  }
  return n;
}

int fxt_tfs_kstrtoul(const char *v, unsigned long *out)
{
  /* kstrtoul_from_user reads 66 bytes at most: a sign, 64 digits, a newline. */
  const char *end = v + strnlen(v, 66), *p = v + (*v == '+'), *digits = p;
  unsigned long n = 0;
  bool overflow = false;
  for (; p < end && *p >= '0' && *p <= '9'; p++) {
    unsigned digit = (unsigned)(*p - '0');
    overflow |= n > (~0ul - digit) / 10;
    n = n * 10 + digit;
  }
  if (overflow) /* checked first, as _kstrtoull does */
    return FXT_ERANGE;
  if (p == digits || p != end)
    return FXT_EINVAL;
  *out = n;
  return 0;
}

int fxt_tfs_kstrto01(const char *v, bool *on)
{
  unsigned long n;
  int rc = fxt_tfs_kstrtoul(v, &n);
  if (rc == 0 && n > 1)
    rc = FXT_EINVAL;
  if (rc == 0)
    *on = n == 1;
  return rc;
}

bool fxt_tfs_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
  if (*s < '0' || *s > '9')
    return false;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (*end || v > max)
    return false;
  *out = v;
  return true;
}

/* What is inside per_cpu/cpuN and per_thread/TID (path components c, n of them): the
 * directory itself, or its one file, stats (node stats). As resolve() returns. */
static int stats_dir(char c[4][512], int n, struct fxt_fs_file *f, enum node stats)
{
  if (n == 2)
    return 1;
  if (n == 3 && strcmp(c[2], "stats") == 0) {
    f->node = stats;
    return 0;
  }
  return FXT_ENOENT;
}

/* Resolves path into f (node, sys/ev/cpu/tid); returns 0, 1 for a directory, or FXT_ENOENT. */
static int resolve(const char *path, struct fxt_fs_file *f)
{
  char c[4][512];
  int n = split(path, c);
  uint64_t v;
  if (n < 0)
    return FXT_ENOENT;
  if (n == 0)
    return 1;
  if (n == 1) {
    for (size_t i = 0; i < sizeof(root_files) / sizeof(root_files[0]); i++)
      if (strcmp(c[0], root_files[i].name) == 0) {
        f->node = root_files[i].node;
        f->fn_file = root_files[i].fn_file;
        return 0;
      }
    for (size_t i = 0; i < sizeof(root_dirs) / sizeof(root_dirs[0]); i++)
      if (strcmp(c[0], root_dirs[i]) == 0)
        return 1;
    return FXT_ENOENT;
  }
  if (strcmp(c[0], "events") == 0) {
    if (n == 2 && strcmp(c[1], "enable") == 0) {
      f->node = N_EVENTS_ENABLE;
      return 0;
    }
    if (strlen(c[1]) >= sizeof(f->sys) || !fxt_tfs_find(c[1], NULL).tp)
      return FXT_ENOENT;
    strcpy(f->sys, c[1]);
    if (n == 2)
      return 1;
    if (n == 3 && strcmp(c[2], "enable") == 0) {
      f->node = N_SYS_ENABLE;
      return 0;
    }
    if (n == 3 && strcmp(c[2], "filter") == 0) {
      f->node = N_SYS_FILTER;
      return 0;
    }
    if (strlen(c[2]) >= sizeof(f->ev) || !fxt_tfs_find(c[1], c[2]).tp)
      return FXT_ENOENT;
    strcpy(f->ev, c[2]);
    if (n == 3)
      return 1;
    if (strcmp(c[3], "enable") == 0)
      f->node = N_EV_ENABLE;
    else if (strcmp(c[3], "id") == 0)
      f->node = N_EV_ID;
    else if (strcmp(c[3], "format") == 0)
      f->node = N_EV_FORMAT;
    else if (strcmp(c[3], "filter") == 0)
      f->node = N_EV_FILTER;
    else if (strcmp(c[3], "trigger") == 0)
      f->node = N_EV_TRIGGER;
    else if (strcmp(c[3], "hist") == 0)
      f->node = N_EV_HIST;
    else
      return FXT_ENOENT;
    return 0;
  }
  if (strcmp(c[0], "per_cpu") == 0) {
    if (strncmp(c[1], "cpu", 3) != 0 || !fxt_tfs_parse_uint(c[1] + 3, UINT32_MAX, &v) ||
        v >= live_ncpus())
      return FXT_ENOENT;
    f->cpu = (uint32_t)v;
    return stats_dir(c, n, f, N_CPU_STATS);
  }
  if (strcmp(c[0], "options") == 0) { /* the layout's, graph-time (tracefs_nodes.c) */
    for (int i = 0; n == 2 && fxt_tfs_option_name(i); i++)
      if (strcmp(c[1], fxt_tfs_option_name(i)) == 0) {
        f->node = N_OPTION;
        f->option = i;
        return 0;
      }
    return FXT_ENOENT;
  }
  if (strcmp(c[0], "trace_stat") == 0) { /* function<cpu>: the function profiler's tables */
    if (n != 2 || strncmp(c[1], "function", 8) != 0 ||
        !fxt_tfs_parse_uint(c[1] + 8, UINT32_MAX, &v) || v >= live_ncpus())
      return FXT_ENOENT;
    f->cpu = (uint32_t)v;
    f->node = N_FN_STAT;
    return 0;
  }
  if (strcmp(c[0], "per_thread") == 0) {
    struct fxt_thread_stats st;
    if (!fxt_tfs_parse_uint(c[1], 0x3fffffff, &v) || fxt_control_thread_stats((pid_t)v, &st) != 0)
      return FXT_ENOENT;
    f->tid = (pid_t)v;
    return stats_dir(c, n, f, N_THREAD_STATS);
  }
  return FXT_ENOENT;
}

static uint32_t mode_of(const struct fxt_fs_file *f)
{
  switch (f->node) {
  case N_EVENTS_ENABLE:
  case N_SYS_ENABLE:
  case N_EV_ENABLE:
  case N_EV_FILTER:
  case N_SYS_FILTER:
  case N_EV_TRIGGER:
  case N_OPTION:
    return RD | WR;
  case N_EV_ID:
  case N_EV_FORMAT:
  case N_EV_HIST:
  case N_CPU_STATS:
  case N_THREAD_STATS:
  case N_FN_STAT:
    return RD;
  default:
    for (size_t i = 0; i < sizeof(root_files) / sizeof(root_files[0]); i++)
      if (root_files[i].node == f->node &&
          (f->node != N_FUNCTIONS || root_files[i].fn_file == f->fn_file))
        return root_files[i].mode;
    return 0;
  }
}

/* ---- the API --------------------------------------------------------------------------- */

/* The value of a write without one trailing newline (as `echo` adds). */
static char *value_of(const void *buf, size_t len)
{
  char *v = malloc(len + 1);
  if (!v)
    return NULL;
  memcpy(v, buf, len);
  v[len] = 0;
  if (len && v[len - 1] == '\n')
    v[len - 1] = 0;
  return v;
}

int fxt_fs_open(const char *path, uint32_t flags, struct fxt_fs_file **out)
{
  struct fxt_fs_file *f = calloc(1, sizeof(*f));
  if (!f)
    return FXT_ENOMEM;
  int rc = resolve(path, f);
  uint32_t mode = rc == 0 ? mode_of(f) : 0;
  if (rc == 0 && (((flags & FXT_FS_READ) && !(mode & RD)) || ((flags & FXT_FS_WRITE) && !(mode & WR))))
    rc = FXT_EINVAL;
  if (rc != 0) {
    free(f);
    return rc == 1 ? FXT_EINVAL : rc;
  }
  f->flags = flags;
  fxt_tbuf_init(&f->text);
  if ((flags & FXT_FS_WRITE) && (flags & FXT_FS_TRUNC)) {
    if (f->node == N_TRACE)
      live_clear();
    else if (f->node == N_SET_EVENT)
      fxt_tfs_set_glob("*:*", false);
    else if (f->node == N_ERROR_LOG)
      fxt_filters_clear_error_log();
    else if (f->node == N_SET_EVENT_PID || f->node == N_SET_EVENT_NOTRACE_PID)
      fxt_control_set_pids(f->node == N_SET_EVENT_NOTRACE_PID, "", false);
    else if (f->node == N_FUNCTIONS)
      fxt_fn_file_truncate((enum fxt_fn_file)f->fn_file);
  }
  if ((flags & FXT_FS_READ) && f->node == N_TRACE_PIPE) {
    fxt_control_pipe_open();
    f->pipe_reader = true;
  } else if (flags & FXT_FS_READ) {
    fxt_tfs_fill(f);
  }
  *out = f;
  return 0;
}

ssize_t fxt_fs_read(struct fxt_fs_file *f, void *buf, size_t len)
{
  if (!(f->flags & FXT_FS_READ))
    return FXT_EINVAL;
  if (f->node == N_TRACE_PIPE && f->pos == f->text.len) {
    /* Whole lines from the live view; what does not fit stays for the next read. */
    f->text.len = f->pos = 0;
    while (live_consume(&f->text, len) == 0) {
      if (f->flags & FXT_FS_NONBLOCK)
        return FXT_EAGAIN;
      if (!live_wait(-1) && !live_on())
        return 0; /* tracing is off and nothing is left */
    }
  } else if (f->iter && f->pos == f->text.len) {
    /* `trace`: the next lines, formatted for this read (the lock is the view's meanwhile). */
    f->text.len = f->pos = 0;
    live_iter_next(f->iter, &f->text, len);
  }
  size_t n = f->text.len - f->pos < len ? f->text.len - f->pos : len;
  if (n) /* (an empty file may have no buffer at all) */
    memcpy(buf, f->text.data + f->pos, n);
  f->pos += n;
  return (ssize_t)n;
}

ssize_t fxt_fs_write(struct fxt_fs_file *f, const void *buf, size_t len)
{
  if (!(f->flags & FXT_FS_WRITE))
    return FXT_EINVAL;
  /* A trigger write, as the kernel's event_trigger_regex_write: nothing does nothing, a
   * blank line is no command (EINVAL), where the other files take an empty value. */
  if (len == 0 && f->node == N_EV_TRIGGER)
    return 0;
  char *v = value_of(buf, len);
  if (!v)
    return FXT_ENOMEM;
  int rc = f->node == N_EV_TRIGGER && v[0] == 0 ? FXT_EINVAL : fxt_tfs_apply(f, v);
  free(v);
  return rc < 0 ? rc : (ssize_t)len;
}

size_t fxt_fs_held_bytes(const struct fxt_fs_file *f)
{
  return f->text.cap;
}

bool fxt_fs_is_view(const char *path)
{
  struct fxt_fs_file f;
  memset(&f, 0, sizeof(f));
  return resolve(path, &f) == 0 && f.node == N_TRACE;
}

int fxt_fs_poll(struct fxt_fs_file *f, int timeout_ms)
{
  if (f->node != N_TRACE_PIPE || f->pos < f->text.len)
    return FXT_FS_POLLIN;
  return live_wait(timeout_ms) ? FXT_FS_POLLIN : 0;
}

void fxt_fs_close(struct fxt_fs_file *f)
{
  if (!f)
    return;
  if (f->pipe_reader)
    fxt_control_pipe_close();
  live_iter_close(f->iter);
  fxt_tbuf_free(&f->text);
  free(f);
}

int fxt_fs_stat(const char *path)
{
  struct fxt_fs_file f;
  memset(&f, 0, sizeof(f));
  int rc = resolve(path, &f);
  return rc < 0 ? rc : rc == 1;
}

static int add(struct fxt_fs_dirent *out, int max, int n, const char *name, int is_dir)
{
  if (n < max) {
    snprintf(out[n].name, sizeof(out[n].name), "%s", name);
    out[n].is_dir = is_dir;
  }
  return n + 1;
}

int fxt_fs_list(const char *dir, struct fxt_fs_dirent *out, int max)
{
  struct fxt_fs_file f;
  memset(&f, 0, sizeof(f));
  int rc = resolve(dir, &f);
  if (rc < 0)
    return rc;
  if (rc == 0)
    return FXT_EINVAL;
  char c[4][512];
  int depth = split(dir, c), n = 0;
  if (depth == 0) {
    for (size_t i = 0; i < sizeof(root_dirs) / sizeof(root_dirs[0]); i++)
      n = add(out, max, n, root_dirs[i], 1);
    for (size_t i = 0; i < sizeof(root_files) / sizeof(root_files[0]); i++)
      n = add(out, max, n, root_files[i].name, 0);
  } else if (strcmp(c[0], "events") == 0 && depth <= 2) {
    n = add(out, max, n, "enable", 0);
    if (depth == 2)
      n = add(out, max, n, "filter", 0);
    struct fxt_tbuf b;
    fxt_tbuf_init(&b);
    struct fxt_tfs_names nm = {&b, depth == 2 ? f.sys : NULL, depth == 1, false, false};
    fxt_tracepoint_foreach(fxt_tfs_names_fn, &nm);
    for (size_t i = 0; i < b.len; i += strlen(b.data + i) + 1)
      n = add(out, max, n, b.data + i, 1);
    fxt_tbuf_free(&b);
  } else if (strcmp(c[0], "events") == 0) {
    n = add(out, max, n, "enable", 0);
    n = add(out, max, n, "filter", 0);
    n = add(out, max, n, "format", 0);
    n = add(out, max, n, "id", 0);
    n = add(out, max, n, "trigger", 0);
    n = add(out, max, n, "hist", 0);
  } else if ((strcmp(c[0], "per_cpu") == 0 || strcmp(c[0], "trace_stat") == 0) && depth == 1) {
    bool stat = c[0][0] == 't';
    for (uint32_t i = 0; i < live_ncpus(); i++) {
      char name[32];
      snprintf(name, sizeof(name), "%s%u", stat ? "function" : "cpu", i);
      n = add(out, max, n, name, !stat);
    }
  } else if (strcmp(c[0], "options") == 0) {
    for (int i = 0; fxt_tfs_option_name(i); i++)
      n = add(out, max, n, fxt_tfs_option_name(i), 0);
  } else if (strcmp(c[0], "per_thread") == 0 && depth == 1) {
    pid_t tids[4096];
    int k = fxt_control_threads(tids, 4096);
    for (int i = 0; i < k; i++) {
      char name[32];
      snprintf(name, sizeof(name), "%d", (int)tids[i]);
      n = add(out, max, n, name, 1);
    }
  } else {
    n = add(out, max, n, "stats", 0);
  }
  return n;
}

ssize_t fxt_fs_cat(const char *path, char *buf, size_t size)
{
  struct fxt_fs_file *f;
  int rc = fxt_fs_open(path, FXT_FS_READ, &f);
  if (rc < 0)
    return rc;
  if (f->node == N_TRACE_PIPE) {
    fxt_fs_close(f);
    return FXT_EINVAL;
  }
  size_t n = 0;
  ssize_t k;
  while (size && n < size - 1 && (k = fxt_fs_read(f, buf + n, size - 1 - n)) > 0)
    n += (size_t)k;
  if (size)
    buf[n] = 0;
  fxt_fs_close(f);
  return (ssize_t)n;
}

ssize_t fxt_fs_echo(const char *path, const char *value)
{
  struct fxt_fs_file *f;
  int rc = fxt_fs_open(path, FXT_FS_WRITE | FXT_FS_TRUNC, &f);
  if (rc < 0)
    return rc;
  ssize_t n = fxt_fs_write(f, value, strlen(value));
  fxt_fs_close(f);
  return n;
}
