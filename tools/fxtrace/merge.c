/* tools/fxtrace/merge.c - `fxtrace merge INPUT... -o OUT`: kernel and user-space traces on one
 * CLOCK_MONOTONIC timeline, in one FXT file.
 *
 * Inputs are fxtrace FXT files (a user program's trace, a `fxtrace record` tree, a kernel
 * trace converted from trace.dat) or trace.dat files (converted on the fly, tracedat_import.h).
  * Each
 * provider of each input is placed on CLOCK_MONOTONIC:
 *  - by its clock_sync records (ticks <-> CLOCK_MONOTONIC: fxtrace files; a kernel trace
 *    recorded with `trace-cmd record -C mono`, whose ticks are CLOCK_MONOTONIC already);
 *  - else, for a kernel trace, by trace-cmd's DATE offset (`trace-cmd record --date`: trace
 *    clock -> CLOCK_REALTIME, in microseconds) and the realtime/monotonic pair of another
 *    input's clock_sync;
 *  - else the merge is refused, saying to record with `-C mono`.
 * Then every timestamp (events, their duration-complete ends, scheduling and log records) is
 * rewritten to CLOCK_MONOTONIC ns, the initialization records say 1e9 ticks per second and
 * clock_sync records say ticks = their CLOCK_MONOTONIC value, so Perfetto (which ignores
 * clock_sync) and fxtrace's readers show the same timeline. The inputs are concatenated as
 * `fxtrace record` does (record_merge.h: the first keeps its magic record; a part that stops
 * decoding keeps its good records, with a warning).
 * A kernel trace knows tasks, not processes: its events carry process koid = tid. Where a user
 * input names the process of that tid, the kernel's records take it, so in Perfetto the
 * kernel's events of a traced thread land on the same thread as its own events.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fxtf_clock.h"
#include "base/grow.h"
#include <fxtrace/meta.h>

#include "formats/tracedat_import.h"
#include "record_merge.h"
#include "tool_io.h"

static const char k_usage[] =
    "usage: fxtrace merge [--help] INPUT... -o OUT.fxt [-q] [--strict]\n"
    "\n"
    "Puts kernel and user-space traces on one CLOCK_MONOTONIC timeline in one FXT file.\n"
    "INPUT: an fxtrace FXT file (fxtrace record/FXTRACE output, or `fxtrace convert X.dat\n"
    "--to fxt`), or a trace-cmd trace.dat. fxtrace files map their ticks with their\n"
    "clock_sync records; a kernel trace must be recorded on CLOCK_MONOTONIC\n"
    "(`trace-cmd record -C mono ...`), or with --date next to a user trace. Every timestamp\n"
    "of OUT is CLOCK_MONOTONIC ns. A summary goes to stderr unless -q.\n"
    "INPUT \"-\" is stdin (a pipe too); OUT \"-\" is stdout (not a terminal).\n"
    "An input that ends inside a record (a write cut short: a full disk, a crash) is merged\n"
    "up to that record, with a warning naming its offset; --strict refuses it (exit 1).\n";

#define OUT_CAP (256u * 1024u)
#define NS_PER_S UINT64_C(1000000000)

enum map_mode { MAP_NONE, MAP_SYNC, MAP_DATE };

struct prov {
  bool kernel; /* has a kernel:meta trace_clock record (tracedat_import.h) */
  char clock[32];
  bool has_date;
  int64_t date_ns;
  enum map_mode mode;
  struct fxtf_clockmap map; /* MAP_SYNC */
  long double ns_per_tick;  /* MAP_DATE */
  long double date_to_mono; /* MAP_DATE: date_ns - (realtime - monotonic) */
};

struct input {
  const char *path;
  bool converted;         /* from trace.dat */
  struct fxt_fio_in file; /* mapped: the file, or its conversion to FXT */
  uint64_t valid;
  struct fxtf_file *f;
  uint32_t nprov;
  struct prov *prov;
};

struct tidmap {
  uint64_t tid, pid;
};

struct merge {
  struct input *in;
  int nin;
  bool strict; /* --strict: an input with a torn tail is refused */
  const char *out_path;
  int out_fd;
  unsigned char *buf;
  size_t len;
  struct tidmap *tids;
  size_t ntids;
  bool have_rt;
  int64_t rt_minus_mono;
  /* the rewrite pass */
  struct input *cur;
  bool keep_magic;
  uint32_t date_prov; /* provider of cur placed by DATE whose closing clock_sync is due */
  uint64_t date_last; /* its latest CLOCK_MONOTONIC timestamp */
  struct fxt_record rec;
  uint64_t records, rewritten, attached;
};

/* ---- inputs --------------------------------------------------------------------------------- */

/* Maps an input; a trace.dat is converted into an unlinked temporary file first. */
static int load(struct input *in) {
  struct fxt_fio_in dat;
  if (tool_map("merge", in->path, &dat) != 0)
    return -1;
  if (!fxt_td_is_tracedat(dat.data, dat.len)) {
    in->file = dat;
    return 0;
  }
  FILE *tmp = tmpfile();
  int fd = tmp ? fileno(tmp) : -1;
  char err[FXT_TD_ERR_SIZE] = "";
  int rc = fd < 0 ? FXT_ENOSPC
                  : fxt_td_to_fxt(dat.data, dat.len, tool_write_fd, &fd, NULL, err, sizeof err);
  fxt_fio_unmap(&dat);
  if (rc == 0 && fxt_fio_map_fd(&in->file, fd, NULL, 0) == 0 && in->file.len > 0)
    in->converted = true;
  if (tmp)
    fclose(tmp); /* the mapping stays; the file goes */
  if (!in->converted) {
    cli_file_error("merge", in->path,
                   rc ? (err[0] ? err : fxt_strerror(rc)) : "converting it failed");
    return -1;
  }
  return 0;
}

/* Finds kernel:meta trace_clock records (tracedat_import.h): which providers are kernel traces. */
static int find_clocks(void *ctx, const struct fxt_decoder *d, const struct fxt_record *rec) {
  (void)d;
  struct input *in = ctx;
  if (rec->kind != FXT_KIND_EVENT || !fxtf_str_is(&rec->u.event.category, "kernel:meta") ||
      !fxtf_str_is(&rec->u.event.name, "trace_clock"))
    return 0;
  uint32_t p = fxtf_provider_at(in->f, rec->offset);
  if (p >= in->nprov)
    return 0;
  struct prov *pr = &in->prov[p];
  pr->kernel = true;
  for (uint32_t i = 0; i < rec->u.event.num_args; i++) {
    const struct fxt_arg *a = &rec->u.event.args[i];
    if (a->type == FXT_ARG_STRING && fxtf_str_is(&a->name, "clock"))
      snprintf(pr->clock, sizeof pr->clock, "%.*s", (int)a->value.str.len, a->value.str.data);
    if (a->type == FXT_ARG_INT64 && fxtf_str_is(&a->name, "date_offset_ns")) {
      pr->has_date = true;
      pr->date_ns = a->value.i64;
    }
  }
  return 0;
}

static int open_input(struct merge *m, struct input *in) {
  if (load(in) != 0)
    return -1;
  int rc = fxt_part_walk("merge", in->path, in->file.data, in->file.len, m->strict, NULL, NULL,
                         &in->valid);
  if (rc == FXT_EBADMSG)
    return -1; /* a torn tail under --strict, said */
  if (rc != 0 || in->valid <= FXT_WORD_BYTES) {
    cli_file_error("merge", in->path, "not an FXT file or trace.dat (nothing decodes)");
    return -1;
  }
  char err[FXTF_ERR_SIZE];
  if (fxtf_load(in->file.data, (size_t)in->valid, &in->f, err, sizeof err) != 0) {
    cli_file_error("merge", in->path, err);
    return -1;
  }
  in->nprov = fxtf_provider_count(in->f);
  in->prov = calloc(in->nprov + 1, sizeof *in->prov);
  if (in->prov == NULL || fxt_part_walk("merge", in->path, in->file.data, (size_t)in->valid,
                                        false, find_clocks, in, &in->valid) != 0) {
    fprintf(stderr, "fxtrace merge: out of memory\n");
    return -1;
  }
  for (uint32_t i = 0; i < in->nprov; i++) { /* a realtime anchor for DATE offsets */
    const struct fxtf_provider *p = fxtf_provider(in->f, i);
    if (!m->have_rt && p->nsyncs > 0 && p->first_sync.realtime_ns != 0) {
      m->have_rt = true;
      m->rt_minus_mono = (int64_t)(p->first_sync.realtime_ns - p->first_sync.monotonic_ns);
    }
  }
  return 0;
}

/* How each provider's ticks become CLOCK_MONOTONIC ns; -1 (printed) when one cannot. */
static int place(struct merge *m, struct input *in) {
  for (uint32_t i = 0; i < in->nprov; i++) {
    const struct fxtf_provider *p = fxtf_provider(in->f, i);
    struct prov *pr = &in->prov[i];
    if (p->nsyncs > 0) {
      pr->mode = MAP_SYNC;
      pr->map = fxtf_clockmap_of(p);
    } else if (pr->kernel && pr->has_date && m->have_rt) {
      pr->mode = MAP_DATE;
      pr->ns_per_tick = p->ticks_per_second ? 1e9L / p->ticks_per_second : 1.0L;
      pr->date_to_mono = (long double)pr->date_ns - (long double)m->rt_minus_mono;
    } else if (p->events == 0 && !pr->kernel) {
      pr->mode = MAP_NONE; /* nothing timed to place */
    } else {
      char msg[400];
      if (pr->kernel)
        snprintf(msg, sizeof msg,
                 "kernel trace on clock '%s', not CLOCK_MONOTONIC%s: record it with "
                 "`trace-cmd record -C mono ...`",
                 pr->clock,
                 pr->has_date ? " (its --date offset needs a user trace with "
                                "clock_sync records next to it)"
                              : ", and it stores no offset to it");
      else
        snprintf(msg, sizeof msg,
                 "process %" PRIu32 " has no clock_sync records: its ticks cannot be placed "
                 "on CLOCK_MONOTONIC",
                 p->id);
      cli_file_error("merge", in->path, msg);
      return -1;
    }
  }
  return 0;
}

static int by_tid(const void *a, const void *b) {
  const struct tidmap *x = a, *y = b;
  if (x->tid != y->tid)
    return x->tid < y->tid ? -1 : 1;
  return (x->pid > y->pid) - (x->pid < y->pid);
}

/* tid -> process of the user inputs' threads; a tid two processes claim is left out. */
static int collect_tids(struct merge *m) {
  size_t cap = 0;
  for (int k = 0; k < m->nin; k++) {
    uint32_t nt;
    const struct fxtf_thread *t = fxtf_threads(m->in[k].f, &nt);
    for (uint32_t i = 0; i < nt; i++) {
      if (m->in[k].prov[t[i].provider].kernel || t[i].pid == t[i].tid)
        continue;
      if (!fxt_grow((void **)&m->tids, &cap, m->ntids + 1, sizeof *m->tids, 64))
        return -1;
      m->tids[m->ntids++] = (struct tidmap){t[i].tid, t[i].pid};
    }
  }
  if (m->ntids)
    qsort(m->tids, m->ntids, sizeof *m->tids, by_tid);
  size_t w = 0;
  for (size_t i = 0; i < m->ntids;) {
    size_t j = i;
    bool clash = false;
    while (j < m->ntids && m->tids[j].tid == m->tids[i].tid)
      clash |= m->tids[j++].pid != m->tids[i].pid;
    if (!clash)
      m->tids[w++] = m->tids[i];
    i = j;
  }
  m->ntids = w;
  return 0;
}

static bool user_pid(const struct merge *m, uint64_t tid, uint64_t *pid) {
  struct tidmap key = {tid, 0};
  size_t lo = 0, hi = m->ntids;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (m->tids[mid].tid < key.tid)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < m->ntids && m->tids[lo].tid == tid) {
    *pid = m->tids[lo].pid;
    return true;
  }
  return false;
}

/* ---- the rewrite pass --------------------------------------------------------------------- */

static uint64_t to_mono(const struct prov *p, uint64_t t) {
  if (p->mode == MAP_SYNC)
    return fxtf_clockmap_apply(&p->map, t);
  if (p->mode == MAP_DATE) {
    long double ns = (long double)t * p->ns_per_tick + p->date_to_mono;
    return ns <= 0 ? 0 : ns >= 18446744073709551615.0L ? UINT64_MAX : (uint64_t)ns;
  }
  return t;
}

static int flush(struct merge *m) {
  if (m->len > 0 && !fxt_fio_write_all(m->out_fd, m->buf, m->len))
    return -1;
  m->len = 0;
  return 0;
}

static int emit(struct merge *m, const void *bytes, size_t n) {
  if (OUT_CAP - m->len < n && flush(m) != 0)
    return -1;
  memcpy(m->buf + m->len, bytes, n);
  m->len += n;
  return 0;
}

/* The kernel's process koid for a task: the user trace's process of that tid, if known. */
static void attach(struct merge *m, uint64_t *process, uint64_t tid, bool *changed) {
  uint64_t pid;
  if (*process == tid && user_pid(m, tid, &pid)) {
    *process = pid;
    *changed = true;
    m->attached++;
  }
}

/* The one time of a record that has a timestamp and no other time (scheduling, log, large
 * blob event); NULL for the others, events included (a duration-complete has two). */
static uint64_t *only_time(struct fxt_record *r) {
  switch (r->kind) {
  case FXT_KIND_CONTEXT_SWITCH:
    return &r->u.context_switch.timestamp;
  case FXT_KIND_WAKEUP:
    return &r->u.wakeup.timestamp;
  case FXT_KIND_LEGACY_CONTEXT_SWITCH:
    return &r->u.legacy_context_switch.timestamp;
  case FXT_KIND_LOG:
    return &r->u.log.timestamp;
  case FXT_KIND_LARGE_BLOB_EVENT:
    return &r->u.large_blob_event.timestamp;
  default:
    return NULL;
  }
}

/* The time of a timed record (the end of a duration-complete event); 0 for others. */
static uint64_t record_time(struct fxt_record *r) {
  if (r->kind == FXT_KIND_EVENT)
    return r->u.event.type == FXT_EVENT_DURATION_COMPLETE ? r->u.event.trailer
                                                          : r->u.event.timestamp;
  uint64_t *ts = only_time(r);
  return ts != NULL ? *ts : 0;
}

/* A clock_sync record for a provider placed by DATE: its ticks are CLOCK_MONOTONIC now. */
static int date_sync(struct merge *m, uint64_t mono) {
  struct fxt_event *e = &m->rec.u.event;
  memset(e, 0, sizeof *e);
  e->type = FXT_EVENT_INSTANT;
  e->timestamp = mono;
  e->thread = fxt_thread_inline(0, 0);
  e->category = fxt_str_index(FXT_STR_KERNEL_META);
  e->name = fxt_str_index(FXT_STR_CLOCK_SYNC);
  uint16_t names[3] = {FXT_STR_TICKS, FXT_STR_MONOTONIC_NS, FXT_STR_REALTIME_NS};
  uint64_t values[3] = {mono, mono, mono + (uint64_t)m->rt_minus_mono};
  for (int i = 0; i < 3; i++) {
    e->args[i].type = FXT_ARG_UINT64;
    e->args[i].name = fxt_str_index(names[i]);
    e->args[i].value.u64 = values[i];
  }
  e->num_args = 3;
  if (OUT_CAP - m->len < FXT_MAX_RECORD_BYTES && flush(m) != 0)
    return -1;
  int64_t n = fxt_encode_event(m->buf + m->len, OUT_CAP - m->len, e);
  m->len += n > 0 ? (size_t)n : 0;
  return n > 0 ? 0 : -2;
}

/* Ends the DATE-placed provider in progress with its closing clock_sync. */
static int close_date(struct merge *m) {
  if (m->date_prov == UINT32_MAX)
    return 0;
  m->date_prov = UINT32_MAX;
  return date_sync(m, m->date_last);
}

/* A record of the current input, rewritten into the output. */
static int rewrite(void *ctx, const struct fxt_decoder *d, const struct fxt_record *rec) {
  (void)d;
  struct merge *m = ctx;
  struct input *in = m->cur;
  m->records++;
  if (rec->kind == FXT_KIND_MAGIC && !m->keep_magic)
    return 0;
  m->keep_magic = false; /* only the very first record of the output */
  uint32_t pi = fxtf_provider_at(in->f, rec->offset);
  const struct prov *p = pi < in->nprov ? &in->prov[pi] : NULL;
  if (pi != m->date_prov && close_date(m) != 0)
    return -1;
  struct fxt_record *r = &m->rec;
  bool changed = false;
  uint64_t *ts = NULL;
  if (p != NULL && p->mode != MAP_NONE) {
    *r = *rec;
    switch (rec->kind) {
    case FXT_KIND_INIT:
      r->u.init.ticks_per_second = NS_PER_S;
      changed = rec->u.init.ticks_per_second != NS_PER_S;
      break;
    case FXT_KIND_EVENT: {
      struct fxt_event *e = &r->u.event;
      e->timestamp = to_mono(p, e->timestamp);
      if (e->type == FXT_EVENT_DURATION_COMPLETE)
        e->trailer = to_mono(p, e->trailer);
      if (fxtf_str_is(&e->category, "kernel:meta") && fxtf_str_is(&e->name, "clock_sync"))
        for (uint32_t i = 0; i < e->num_args; i++)
          if (e->args[i].type == FXT_ARG_UINT64 && fxtf_str_is(&e->args[i].name, "ticks"))
            e->args[i].value.u64 = to_mono(p, e->args[i].value.u64);
      if (p->kernel && e->thread.index == 0)
        attach(m, &e->thread.process_koid, e->thread.thread_koid, &changed);
      changed = true;
      break;
    }
    case FXT_KIND_KERNEL_OBJECT:
      if (p->kernel && r->u.kernel_object.obj_type == FXT_KOBJ_THREAD)
        for (uint32_t i = 0; i < r->u.kernel_object.num_args; i++)
          if (r->u.kernel_object.args[i].type == FXT_ARG_KOID &&
              fxtf_str_is(&r->u.kernel_object.args[i].name, "process"))
            attach(m, &r->u.kernel_object.args[i].value.koid, r->u.kernel_object.koid, &changed);
      break;
    default:
      ts = only_time(r);
      break;
    }
  }
  if (ts != NULL) { /* a record whose one time is its timestamp */
    *ts = to_mono(p, *ts);
    changed = true;
  }
  if (!changed)
    return emit(m, in->file.data + rec->offset, (size_t)rec->size);
  m->rewritten++;
  if (OUT_CAP - m->len < FXT_MAX_RECORD_BYTES && flush(m) != 0)
    return -1;
  int64_t n = fxt_encode_record(m->buf + m->len, OUT_CAP - m->len, r);
  if (n < 0) {
    fprintf(stderr, "fxtrace merge: %s: offset %" PRIu64 ": cannot re-encode the record: %s\n",
            in->path, rec->offset, fxt_strerror((int)n));
    return -2;
  }
  m->len += (size_t)n;
  if (p->mode == MAP_DATE) { /* clock_syncs around its timed records, which are mono now */
    uint64_t ts = record_time(r);
    if (m->date_prov != pi && r->kind == FXT_KIND_EVENT) { /* the trace_clock record */
      m->date_prov = pi;
      m->date_last = ts;
      return date_sync(m, ts);
    }
    if (m->date_prov == pi && ts > m->date_last)
      m->date_last = ts;
  }
  return 0;
}

/* ---- the command ---------------------------------------------------------------------------- */

static int parse_args(int argc, char **argv, struct merge *m, bool *quiet) {
  m->in = calloc((size_t)argc, sizeof *m->in);
  if (m->in == NULL)
    return CLI_EXIT_FAIL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(k_usage, stdout);
      return CLI_EXIT_OK;
    }
    if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
      if (i + 1 >= argc)
        return cli_usage_error("merge", k_usage, "option '-o' needs a value");
      m->out_path = argv[++i];
    } else if (strncmp(a, "-o", 2) == 0 && a[2] != '\0') {
      m->out_path = a + 2;
    } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
      *quiet = true;
    } else if (strcmp(a, "--strict") == 0) {
      m->strict = true;
    } else if (a[0] == '-' && a[1] != '\0') {
      char msg[300];
      snprintf(msg, sizeof msg, "unknown option '%s'", a);
      return cli_usage_error("merge", k_usage, msg);
    } else {
      for (int k = 0; k < m->nin && strcmp(a, "-") == 0; k++)
        if (strcmp(m->in[k].path, "-") == 0) /* (the second would read an empty stdin) */
          return cli_usage_error("merge", k_usage, "INPUT '-' (stdin) given twice");
      m->in[m->nin++].path = a;
    }
  }
  if (m->nin == 0)
    return cli_usage_error("merge", k_usage, "missing INPUT");
  if (m->out_path == NULL || m->out_path[0] == '\0')
    return cli_usage_error("merge", k_usage, "missing -o OUT");
  if (strcmp(m->out_path, "-") == 0)
    return cli_refuse_tty("merge") ? CLI_EXIT_USAGE : -1;
  struct stat os, is;
  if (stat(m->out_path, &os) == 0)
    for (int k = 0; k < m->nin; k++)
      if (stat(m->in[k].path, &is) == 0 && is.st_dev == os.st_dev && is.st_ino == os.st_ino)
        return cli_usage_error("merge", k_usage, "OUT is one of the INPUTs");
  return -1;
}

static int write_output(struct merge *m) {
  bool to_stdout = strcmp(m->out_path, "-") == 0;
  m->out_fd = to_stdout ? STDOUT_FILENO
                        : open(m->out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (m->out_fd < 0) {
    cli_file_error("merge", m->out_path, strerror(errno));
    return -1;
  }
  int rc = 0;
  m->keep_magic = true;
  for (int k = 0; k < m->nin && rc == 0; k++) {
    uint64_t valid;
    m->cur = &m->in[k];
    m->date_prov = UINT32_MAX;
    rc = fxt_part_walk("merge", m->cur->path, m->cur->file.data, (size_t)m->cur->valid, false,
                       rewrite, m, &valid);
    if (rc == 0)
      rc = close_date(m);
  }
  if (rc == 0)
    rc = flush(m);
  if (rc == -1 || (!to_stdout && close(m->out_fd) != 0 && rc == 0)) {
    cli_file_error("merge", to_stdout ? "standard output" : m->out_path, strerror(errno));
    rc = -1;
  }
  if (rc != 0 && !to_stdout)
    unlink(m->out_path);
  return rc;
}

static void summary(const struct merge *m) {
  fprintf(stderr, "fxtrace merge:");
  for (int k = 0; k < m->nin; k++) {
    const struct input *in = &m->in[k];
    uint32_t kernels = 0;
    const char *clock = "";
    for (uint32_t i = 0; i < in->nprov; i++)
      if (in->prov[i].kernel) {
        kernels++;
        clock = in->prov[i].clock;
      }
    fprintf(stderr, "%s %s (%s%" PRIu32 " provider%s%s%s%s)", k ? " +" : "", in->path,
            in->converted ? "trace.dat, " : "", in->nprov, in->nprov == 1 ? "" : "s",
            kernels ? ", kernel clock " : "", clock,
            kernels && in->prov[0].mode == MAP_DATE ? " via --date" : "");
  }
  fprintf(stderr,
          " -> %s: %" PRIu64 " records, %" PRIu64 " timestamps rewritten to "
          "CLOCK_MONOTONIC, %" PRIu64 " kernel records of %zu user threads given their "
          "process\n",
          m->out_path, m->records, m->rewritten, m->attached, m->ntids);
}

int cmd_merge(int argc, char **argv) {
  struct merge *m = calloc(1, sizeof *m);
  if (m == NULL) {
    fprintf(stderr, "fxtrace merge: out of memory\n");
    return CLI_EXIT_FAIL;
  }
  bool quiet = false;
  int rc = parse_args(argc, argv, m, &quiet);
  if (rc < 0) {
    rc = CLI_EXIT_FAIL;
    m->buf = malloc(OUT_CAP);
    bool ok = m->buf != NULL;
    for (int k = 0; k < m->nin && ok; k++)
      ok = open_input(m, &m->in[k]) == 0;
    for (int k = 0; k < m->nin && ok; k++)
      ok = place(m, &m->in[k]) == 0;
    if (ok && collect_tids(m) != 0) {
      fprintf(stderr, "fxtrace merge: out of memory\n");
      ok = false;
    }
    if (ok && write_output(m) == 0) {
      rc = CLI_EXIT_OK;
      if (!quiet)
        summary(m);
    }
  }
  for (int k = 0; m->in != NULL && k < m->nin; k++) {
    fxtf_close(m->in[k].f);
    free(m->in[k].prov);
    fxt_fio_unmap(&m->in[k].file);
  }
  free(m->in);
  free(m->tids);
  free(m->buf);
  free(m);
  return rc;
}
