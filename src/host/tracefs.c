/* tracefs.c - the ftrace control surface as files (fxtrace/tracefs.h).
 *
 * A path resolves to a node; an open file keeps its node, a text snapshot for files whose
 * content is read (made at open, as the kernel's seq files make theirs on first read; `trace`
 * a read at a time: its header at open, its lines from where the last read left, live.h), and,
 * for trace_pipe, the rest of a line that did not fit the reader's buffer (the Starry seed's
 * TextDrain): no byte is lost or duplicated whatever the read sizes. Writes take the whole
 * value at once and either apply it or fail with the kernel's errno, changing nothing.
 */
#define _GNU_SOURCE
#include <fxtrace/filter.h>
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/ftrace_format.h"
#include "../base/tbuf.h"
#include "control.h"
#include "filters.h"
#include "live.h"
#include "registry.h"
#include "server.h"

/* The kernel's events/ftrace/print, written by trace_marker (printed "tracing_mark_write"). */
FXT_TRACEPOINT(ftrace, print, "%s", (str, buf, 1024));

enum node {
  N_DIR,
  N_EVENTS_ENABLE, /* events/enable */
  N_SYS_ENABLE,    /* events/<sys>/enable */
  N_EV_ENABLE,     /* events/<sys>/<ev>/enable */
  N_EV_ID,
  N_EV_FORMAT,
  N_EV_FILTER,     /* events/<sys>/<ev>/filter */
  N_SYS_FILTER,    /* events/<sys>/filter */
  N_ERROR_LOG,
  N_SET_EVENT,
  N_AVAILABLE_EVENTS,
  N_SET_EVENT_PID,
  N_SET_EVENT_NOTRACE_PID,
  N_TRACE,
  N_TRACE_PIPE,
  N_TRACE_MARKER,
  N_SAVED_CMDLINES,
  N_SAVED_CMDLINES_SIZE,
  N_TRACING_ON,
  N_BUFFER_SIZE_KB,
  N_BUFFER_TOTAL_SIZE_KB,
  N_TRACE_CLOCK,
  N_CPU_STATS,
  N_THREAD_STATS,
};

#define RD 1u
#define WR 2u

static const struct {
  const char *name;
  enum node node;
  uint32_t mode;
} root_files[] = {
    {"set_event", N_SET_EVENT, RD | WR},
    {"available_events", N_AVAILABLE_EVENTS, RD},
    {"set_event_pid", N_SET_EVENT_PID, RD | WR},
    {"set_event_notrace_pid", N_SET_EVENT_NOTRACE_PID, RD | WR},
    {"trace", N_TRACE, RD | WR},
    {"trace_pipe", N_TRACE_PIPE, RD},
    {"trace_marker", N_TRACE_MARKER, WR},
    {"saved_cmdlines", N_SAVED_CMDLINES, RD},
    {"saved_cmdlines_size", N_SAVED_CMDLINES_SIZE, RD | WR},
    {"tracing_on", N_TRACING_ON, RD | WR},
    {"buffer_size_kb", N_BUFFER_SIZE_KB, RD | WR},
    {"buffer_total_size_kb", N_BUFFER_TOTAL_SIZE_KB, RD},
    {"trace_clock", N_TRACE_CLOCK, RD},
    {"error_log", N_ERROR_LOG, RD | WR},
};
static const char *const root_dirs[] = {"events", "per_cpu", "per_thread"};

struct fxt_fs_file {
  enum node node;
  uint32_t flags;
  char sys[128], ev[512];
  uint32_t cpu;
  pid_t tid;
  struct fxt_tbuf text; /* read content (snapshot) or trace_pipe's carry-over */
  size_t pos;           /* read position in text */
  bool filled;
  bool pipe_reader;     /* trace_pipe open for reading (fxt_control_pipe_open) */
  struct live_iter *iter; /* `trace`: where the reads are in the view (live.h) */
};

/* ---- the events of the registry ------------------------------------------------------ */

struct find {
  const char *sys, *ev; /* ev NULL: any event of sys; sys NULL: any */
  struct fxt_tracepoint *tp;
  int on, off; /* enabled and disabled tracepoints matched */
};

static int find_fn(void *ctx, struct fxt_tracepoint *tp)
{
  struct find *f = ctx;
  if ((f->sys && strcmp(tp->system, f->sys) != 0) || (f->ev && strcmp(tp->name, f->ev) != 0))
    return 0;
  if (!f->tp)
    f->tp = tp;
  if (atomic_load_explicit(&tp->enabled, memory_order_relaxed))
    f->on++;
  else
    f->off++;
  return 0;
}

static struct find find(const char *sys, const char *ev)
{
  struct find f = {sys, ev, NULL, 0, 0};
  fxt_tracepoint_foreach(find_fn, &f);
  return f;
}

/* Unique "sys:ev" (or "sys" when only_systems) names, in registration order, into b. */
struct names {
  struct fxt_tbuf *b;
  const char *sys;  /* only events of this system (events of a system directory) */
  bool systems;     /* list systems, not events */
  bool enabled;     /* only enabled events (set_event) */
  bool lines;       /* "name\n" (else "name\0" for directory listings) */
};

static bool seen(struct fxt_tbuf *b, const char *name, char sep)
{
  size_t n = strlen(name);
  for (size_t i = 0; i + n <= b->len; i++) {
    if ((i == 0 || b->data[i - 1] == sep) && memcmp(b->data + i, name, n) == 0 &&
        (i + n == b->len || b->data[i + n] == sep))
      return true;
    while (i < b->len && b->data[i] != sep)
      i++;
  }
  return false;
}

static int names_fn(void *ctx, struct fxt_tracepoint *tp)
{
  struct names *n = ctx;
  if (n->sys && strcmp(tp->system, n->sys) != 0)
    return 0;
  if (n->enabled && !atomic_load_explicit(&tp->enabled, memory_order_relaxed))
    return 0;
  char name[700];
  if (n->systems)
    snprintf(name, sizeof(name), "%s", tp->system);
  else if (n->sys)
    snprintf(name, sizeof(name), "%s", tp->name);
  else
    snprintf(name, sizeof(name), "%s:%s", tp->system, tp->name);
  char sep = n->lines ? '\n' : '\0';
  if (!seen(n->b, name, sep)) {
    fxt_tbuf_puts(n->b, name);
    fxt_tbuf_put(n->b, &sep, 1);
  }
  return 0;
}

/* ---- content of read files ------------------------------------------------------------- */

static void put_num(struct fxt_tbuf *b, const char *fmt, uint64_t v)
{
  char line[64];
  int n = snprintf(line, sizeof(line), fmt, (unsigned long long)v);
  fxt_tbuf_put(b, line, (size_t)n);
}

static void put_ts(struct fxt_tbuf *b, const char *label, uint64_t ns)
{
  char line[96];
  uint64_t us = (ns + 500) / 1000;
  int n = snprintf(line, sizeof(line), "%s%5llu.%06llu\n", label,
                   (unsigned long long)(us / 1000000), (unsigned long long)(us % 1000000));
  fxt_tbuf_put(b, line, (size_t)n);
}

/* "0", "1", "X" (mixed) or "?" (no event). */
static void put_enable(struct fxt_tbuf *b, const struct find *f)
{
  fxt_tbuf_puts(b, f->on + f->off == 0 ? "?\n" : f->off == 0 ? "1\n" : f->on == 0 ? "0\n" : "X\n");
}

/* The kernel's format file (spec ftrace-text.md 3): common fields, then the event's fields
 * laid out as a C struct after them (src/base/ftrace_format.h), then the print format with
 * its arguments. */
static void format_file(struct fxt_tbuf *b, const struct fxt_tracepoint *tp)
{
  char line[1024];
  int n;
  struct fxt_ff_field fields[FXT_MAX_FIELDS];
  uint32_t nf = tp->kind == FXT_TP_TYPED ? tp->nfields : 0;
  for (uint32_t i = 0; i < nf; i++)
    fields[i] = (struct fxt_ff_field){tp->fields[i].name, strlen(tp->fields[i].name),
                                      (uint8_t)tp->fields[i].type, tp->fields[i].bound};
  fxt_ff_head(b, tp->name, strlen(tp->name), tp->id, fields, nf);
  char fmt[2048];
  fxt_tbuf_puts(b, "\"");
  fxt_tbuf_puts(b, tp->kind == FXT_TP_TYPED ? fxt_tracepoint_print_fmt(tp, fmt, sizeof(fmt)) : "");
  fxt_tbuf_puts(b, "\"");
  for (uint32_t i = 0; tp->kind == FXT_TP_TYPED && i < tp->nfields; i++) {
    const struct fxt_field *f = &tp->fields[i];
    if (f->type == FXT_TYPE_STR)
      n = snprintf(line, sizeof(line), ", __get_str(%s)", f->name);
    else if (f->type == FXT_TYPE_BYTES)
      n = snprintf(line, sizeof(line), ", __print_hex(REC->%s, %u)", f->name, f->bound);
    else
      n = snprintf(line, sizeof(line), ", REC->%s", f->name);
    fxt_tbuf_put(b, line, (size_t)n);
  }
  fxt_tbuf_puts(b, "\n");
}

static void stats_text(struct fxt_tbuf *b, uint64_t entries, uint64_t overrun, uint64_t bytes,
                       uint64_t oldest_ns, uint64_t dropped, uint64_t read)
{
  put_num(b, "entries: %llu\n", entries);
  put_num(b, "overrun: %llu\n", overrun);
  put_num(b, "commit overrun: %llu\n", 0);
  put_num(b, "bytes: %llu\n", bytes);
  put_ts(b, "oldest event ts: ", oldest_ns);
  put_ts(b, "now ts: ", live_now_ns());
  put_num(b, "dropped events: %llu\n", dropped);
  put_num(b, "read events: %llu\n", read);
}

/* Makes the content of a read file (not trace_pipe). */
static void fill(struct fxt_fs_file *f)
{
  struct fxt_tbuf *b = &f->text;
  char tmp[65536];
  switch (f->node) {
  case N_EVENTS_ENABLE: {
    struct find x = find(NULL, NULL);
    put_enable(b, &x);
    break;
  }
  case N_SYS_ENABLE: {
    struct find x = find(f->sys, NULL);
    put_enable(b, &x);
    break;
  }
  case N_EV_ENABLE: {
    struct find x = find(f->sys, f->ev);
    put_enable(b, &x);
    break;
  }
  case N_EV_ID: {
    struct find x = find(f->sys, f->ev);
    if (x.tp)
      put_num(b, "%llu\n", x.tp->id);
    break;
  }
  case N_EV_FORMAT: {
    struct find x = find(f->sys, f->ev);
    if (x.tp)
      format_file(b, x.tp);
    break;
  }
  case N_EV_FILTER:
    fxt_filters_read_event(f->sys, f->ev, b);
    break;
  case N_SYS_FILTER:
    fxt_tbuf_puts(b, FXT_FILTER_SYSTEM_DEFAULT);
    break;
  case N_ERROR_LOG:
    fxt_filters_error_log(b);
    break;
  case N_SET_EVENT:
  case N_AVAILABLE_EVENTS: {
    struct names n = {b, NULL, false, f->node == N_SET_EVENT, true};
    fxt_tracepoint_foreach(names_fn, &n);
    break;
  }
  case N_SET_EVENT_PID:
  case N_SET_EVENT_NOTRACE_PID:
    fxt_control_pids(f->node == N_SET_EVENT_NOTRACE_PID, tmp, sizeof(tmp));
    fxt_tbuf_puts(b, tmp);
    break;
  case N_TRACE: {
    /* What the threads emitted until now, as the kernel's shows: a flight recorder's buffers
     * copied as they are (they keep it all), another session's drained into the view. */
    bool held = fxt_control_view_hold();
    if (!held)
      fxt_session_flush();
    f->iter = live_iter_open(b);
    if (held) { /* the copies are the consumer's again at the release: all of them now */
      while (f->iter && live_iter_next(f->iter, b, SIZE_MAX))
        ;
      fxt_control_view_release();
    }
    break;
  }
  case N_SAVED_CMDLINES:
    live_cmdlines(b);
    break;
  case N_SAVED_CMDLINES_SIZE:
    put_num(b, "%llu\n", live_cmdlines_size());
    break;
  case N_TRACING_ON:
    fxt_tbuf_puts(b, fxt_control_recording() ? "1\n" : "0\n");
    break;
  case N_BUFFER_SIZE_KB:
    put_num(b, "%llu\n", live_buffer_kb());
    break;
  case N_BUFFER_TOTAL_SIZE_KB:
    put_num(b, "%llu\n", (uint64_t)live_buffer_kb() * live_ncpus());
    break;
  case N_TRACE_CLOCK:
    /* Timestamps are shown in CLOCK_MONOTONIC seconds, whatever the recording clock. */
    fxt_tbuf_puts(b, "[mono]\n");
    break;
  case N_CPU_STATS: {
    /* A flight recorder's counts are of the view with the copies, as `trace` shows it. */
    struct live_cpu_stats st;
    bool held = fxt_control_view_hold();
    live_cpu_stats(f->cpu, &st);
    if (held)
      fxt_control_view_release();
    stats_text(b, st.entries, st.overrun, st.bytes, st.oldest_ns, st.dropped, st.read);
    break;
  }
  case N_THREAD_STATS: {
    struct fxt_thread_stats st;
    if (fxt_control_thread_stats(f->tid, &st) == 0)
      stats_text(b, st.entries, st.overrun, st.bytes, 0, st.dropped + st.lost, st.read);
    break;
  }
  default:
    break;
  }
  f->filled = true;
}

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

static bool parse_uint(const char *s, uint64_t max, uint64_t *out)
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
    if (strlen(c[1]) >= sizeof(f->sys) || !find(c[1], NULL).tp)
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
    if (strlen(c[2]) >= sizeof(f->ev) || !find(c[1], c[2]).tp)
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
    else
      return FXT_ENOENT;
    return 0;
  }
  if (strcmp(c[0], "per_cpu") == 0) {
    if (strncmp(c[1], "cpu", 3) != 0 || !parse_uint(c[1] + 3, UINT32_MAX, &v) ||
        v >= live_ncpus())
      return FXT_ENOENT;
    f->cpu = (uint32_t)v;
    if (n == 2)
      return 1;
    if (n == 3 && strcmp(c[2], "stats") == 0) {
      f->node = N_CPU_STATS;
      return 0;
    }
    return FXT_ENOENT;
  }
  if (strcmp(c[0], "per_thread") == 0) {
    struct fxt_thread_stats st;
    if (!parse_uint(c[1], 0x3fffffff, &v) || fxt_control_thread_stats((pid_t)v, &st) != 0)
      return FXT_ENOENT;
    f->tid = (pid_t)v;
    if (n == 2)
      return 1;
    if (n == 3 && strcmp(c[2], "stats") == 0) {
      f->node = N_THREAD_STATS;
      return 0;
    }
  }
  return FXT_ENOENT;
}

static uint32_t mode_of(enum node node)
{
  switch (node) {
  case N_EVENTS_ENABLE:
  case N_SYS_ENABLE:
  case N_EV_ENABLE:
  case N_EV_FILTER:
  case N_SYS_FILTER:
    return RD | WR;
  case N_EV_ID:
  case N_EV_FORMAT:
  case N_CPU_STATS:
  case N_THREAD_STATS:
    return RD;
  default:
    for (size_t i = 0; i < sizeof(root_files) / sizeof(root_files[0]); i++)
      if (root_files[i].node == node)
        return root_files[i].mode;
    return 0;
  }
}

/* ---- writes ---------------------------------------------------------------------------- */

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

static int set_enabled(const char *glob, bool on)
{
  if (on) {
    int rc = fxt_control_ensure_session();
    if (rc < 0)
      return rc;
  }
  int rc = fxt_registry_set_glob(glob, on);
  return rc < 0 ? rc : 0;
}

/* set_event: tokens "sys:event", "sys:*", "event" (any system), "sys:" ; "!" disables. */
static int write_set_event(const char *v)
{
  char *copy = strdup(v), *save = NULL;
  int rc = copy ? 0 : FXT_ENOMEM;
  for (char *tok = copy ? strtok_r(copy, " \t\n", &save) : NULL; tok && rc == 0;
       tok = strtok_r(NULL, " \t\n", &save)) {
    bool on = tok[0] != '!';
    char *name = tok + !on, glob[700];
    char *colon = strchr(name, ':');
    if (!colon)
      snprintf(glob, sizeof(glob), "*:%s", name);
    else if (colon[1] == 0)
      snprintf(glob, sizeof(glob), "%s*", name);
    else
      snprintf(glob, sizeof(glob), "%s", name);
    if (find(NULL, NULL).tp == NULL || name[0] == 0) {
      rc = FXT_EINVAL;
      break;
    }
    struct fxt_tbuf probe;
    fxt_tbuf_init(&probe);
    struct names all = {&probe, NULL, false, false, true};
    fxt_tracepoint_foreach(names_fn, &all);
    bool any = false;
    for (char *p = fxt_tbuf_str(&probe) ? probe.data : NULL; p && *p;) {
      char *nl = strchr(p, '\n');
      if (nl)
        *nl = 0;
      any |= fxt_glob_match(glob, p);
      p = nl ? nl + 1 : p + strlen(p);
    }
    fxt_tbuf_free(&probe);
    rc = any ? set_enabled(glob, on) : FXT_EINVAL; /* the kernel: EINVAL for no such event */
  }
  free(copy);
  return rc;
}

static int do_write(struct fxt_fs_file *f, const char *v)
{
  uint64_t n;
  char glob[700];
  switch (f->node) {
  case N_EVENTS_ENABLE:
  case N_SYS_ENABLE:
  case N_EV_ENABLE:
    /* Exactly "0" or "1" (one trailing newline allowed): anything else is EINVAL. */
    if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
      return FXT_EINVAL;
    if (f->node == N_EVENTS_ENABLE)
      snprintf(glob, sizeof(glob), "*:*");
    else if (f->node == N_SYS_ENABLE)
      snprintf(glob, sizeof(glob), "%s:*", f->sys);
    else
      snprintf(glob, sizeof(glob), "%s:%s", f->sys, f->ev);
    return set_enabled(glob, v[0] == '1');
  case N_SET_EVENT:
    return write_set_event(v);
  case N_EV_FILTER:
    return fxt_filters_write_event(f->sys, f->ev, v, strlen(v));
  case N_SYS_FILTER:
    return fxt_filters_write_system(f->sys, v, strlen(v));
  case N_ERROR_LOG:
    return 0; /* only a truncating open changes it (`echo > error_log` clears) */
  case N_SET_EVENT_PID:
  case N_SET_EVENT_NOTRACE_PID:
    return fxt_control_set_pids(f->node == N_SET_EVENT_NOTRACE_PID, v,
                                !(f->flags & FXT_FS_TRUNC));
  case N_TRACE:
    /* Only a truncating open changes trace (`echo > trace`); its content is ignored. */
    return 0;
  case N_TRACE_MARKER:
    if (fxt_control_ensure_session() < 0)
      return FXT_EINVAL;
    fxt_fire_ftrace_print(0, v); /* always recorded, like the kernel's marker */
    return 0;
  case N_SAVED_CMDLINES_SIZE:
    if (!parse_uint(v, UINT32_MAX, &n))
      return FXT_EINVAL;
    return live_set_cmdlines_size(n);
  case N_TRACING_ON:
    if (!parse_uint(v, UINT64_MAX, &n))
      return FXT_EINVAL;
    fxt_control_set_recording(n != 0);
    return 0;
  case N_BUFFER_SIZE_KB: {
    if (!parse_uint(v, UINT64_MAX, &n) || n == 0)
      return FXT_EINVAL;
    int rc = live_set_buffer_kb(n);
    return rc < 0 ? rc : 0;
  }
  default:
    return FXT_EINVAL;
  }
}

/* ---- the API --------------------------------------------------------------------------- */

int fxt_fs_open(const char *path, uint32_t flags, struct fxt_fs_file **out)
{
  struct fxt_fs_file *f = calloc(1, sizeof(*f));
  if (!f)
    return FXT_ENOMEM;
  int rc = resolve(path, f);
  uint32_t mode = rc == 0 ? mode_of(f->node) : 0;
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
      fxt_registry_set_glob("*:*", false);
    else if (f->node == N_ERROR_LOG)
      fxt_filters_clear_error_log();
    else if (f->node == N_SET_EVENT_PID || f->node == N_SET_EVENT_NOTRACE_PID)
      fxt_control_set_pids(f->node == N_SET_EVENT_NOTRACE_PID, "", false);
  }
  if ((flags & FXT_FS_READ) && f->node == N_TRACE_PIPE) {
    fxt_control_pipe_open();
    f->pipe_reader = true;
  } else if (flags & FXT_FS_READ) {
    fill(f);
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
  char *v = value_of(buf, len);
  if (!v)
    return FXT_ENOMEM;
  int rc = do_write(f, v);
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
    struct names nm = {&b, depth == 2 ? f.sys : NULL, depth == 1, false, false};
    fxt_tracepoint_foreach(names_fn, &nm);
    for (size_t i = 0; i < b.len; i += strlen(b.data + i) + 1)
      n = add(out, max, n, b.data + i, 1);
    fxt_tbuf_free(&b);
  } else if (strcmp(c[0], "events") == 0) {
    n = add(out, max, n, "enable", 0);
    n = add(out, max, n, "filter", 0);
    n = add(out, max, n, "format", 0);
    n = add(out, max, n, "id", 0);
  } else if (strcmp(c[0], "per_cpu") == 0 && depth == 1) {
    for (uint32_t i = 0; i < live_ncpus(); i++) {
      char name[32];
      snprintf(name, sizeof(name), "cpu%u", i);
      n = add(out, max, n, name, 1);
    }
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
