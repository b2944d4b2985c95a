/* src/formats/tracedat_read.c - the structure of a trace.dat file (tracedat_read.h): v6 read top
 * to bottom, v7 through its options sections (spec tracedat.md §1, §6). The time-ordered
 * iterator over every CPU's pages is tracedat_read_iter.c.
 *
 * Where the spec is silent this follows trace-cmd's lib/trace-cmd/trace-input.c: the DATE
 * option is a string "0x..." of microseconds (strtoll base 0, then x1000), OFFSET a string of
 * nanoseconds, TSC2NSEC u32 mult, u32 shift, u64 offset; a v6 BUFFER option points at the
 * instance's own "flyrecord\0" tag (or "options  \0" first), followed by a CPU table as long
 * as the top one; a v7 BUFFER option holds offset, name, clock, page size, CPU count and per
 * CPU (u32 id, u64 offset, u64 size).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "../base/grow.h"
#include "tracedat_read_int.h"
#include "tracedat_read.h"

/* Bounds on counts read from the file, beyond the bytes-present checks: */
#define MAX_EVENT_ID 0xffffu /* common_type is a u16 */
#define MIN_PAGE_SIZE 64u
#define MAX_PAGE_SIZE (1u << 28)
#define MAX_OPTION_SECTIONS 4096u /* v7 chained options sections (cycles are refused too) */

/* Option ids (spec §1.1). */
enum {
  OPT_DONE = 0,
  OPT_DATE = 1,
  OPT_CPUSTAT = 2,
  OPT_BUFFER = 3,
  OPT_TRACECLOCK = 4,
  OPT_UNAME = 5,
  OPT_OFFSET = 7,
  OPT_CPUCOUNT = 8,
  OPT_VERSION = 9,
  OPT_TSC2NSEC = 14,
  OPT_HEADER_INFO = 16,
  OPT_FTRACE_EVENTS = 17,
  OPT_EVENT_FORMATS = 18,
  OPT_KALLSYMS = 19,
  OPT_PRINTK = 20,
  OPT_CMDLINES = 21,
  OPT_BUFFER_TEXT = 22
};

bool fxt_td_is_tracedat(const void *buf, size_t len) {
  return buf != NULL && len >= FXT_TD_MAGIC_LEN && memcmp(buf, FXT_TD_MAGIC, FXT_TD_MAGIC_LEN) == 0;
}

/* ---- a cursor over the file ---------------------------------------------------------------- */

struct cur {
  const unsigned char *buf;
  size_t len, pos;
  bool big;
  char *err;
  size_t err_size;
};

static int need(struct cur *c, uint64_t n, const char *what) {
  if (c->pos <= c->len && n <= c->len - c->pos)
    return 0;
  return fxt_fail_at(c->err, c->err_size, FXT_EBADMSG, c->pos,
                     "file ends inside %s (%llu bytes needed, %llu left)", what,
                     (unsigned long long)n,
                     (unsigned long long)(c->pos <= c->len ? c->len - c->pos : 0));
}

static int get(struct cur *c, unsigned n, uint64_t *v, const char *what) {
  int rc = need(c, n, what);
  if (rc == 0) {
    *v = fxt_td_rd(c->buf + c->pos, n, c->big);
    c->pos += n;
  }
  return rc;
}

/* A NUL-terminated string at the cursor (the NUL is consumed, not part of *t). */
static int cstr(struct cur *c, struct fxt_td_text *t, const char *what) {
  int rc = need(c, 1, what);
  if (rc)
    return rc;
  const unsigned char *nul = memchr(c->buf + c->pos, 0, c->len - c->pos);
  if (nul == NULL)
    return fxt_fail_at(c->err, c->err_size, FXT_EBADMSG, c->pos,
                       "%s is not NUL-terminated before the end of the file", what);
  t->data = (const char *)c->buf + c->pos;
  t->len = (uint32_t)(nul - (c->buf + c->pos));
  c->pos += (size_t)t->len + 1;
  return 0;
}

/* A size word of `width` bytes, then that many bytes: *at and *n describe them. */
static int sized(struct cur *c, unsigned width, uint64_t *at, uint64_t *n, const char *what) {
  int rc = get(c, width, n, what);
  if (rc == 0)
    rc = need(c, *n, what);
  if (rc == 0) {
    *at = c->pos;
    c->pos += (size_t)*n;
  }
  return rc;
}

static int expect_tag(struct cur *c, const char *tag, size_t n) {
  int rc = need(c, n, tag);
  if (rc == 0 && memcmp(c->buf + c->pos, tag, n) != 0)
    return fxt_fail_at(c->err, c->err_size, FXT_EBADMSG, c->pos, "expected \"%s\"", tag);
  c->pos += n;
  return rc;
}

static bool text_is(struct fxt_td_text t, const char *s) {
  return t.len == strlen(s) && memcmp(t.data, s, t.len) == 0;
}

/* ---- building the fxt_td_file ---------------------------------------------------------------- */

static int grow(void **p, uint32_t *cap, uint32_t need_n, size_t elem) {
  size_t c = *cap;
  if (!fxt_grow(p, &c, need_n, elem, 8))
    return FXT_ENOMEM;
  *cap = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c; /* need_n fits: the rest is unused room */
  return 0;
}

struct builder {
  struct fxt_td_file *f;
  struct cur c;
  uint32_t cap_events, cap_buffers, cap_cmdlines, cap_cpustats;
  bool have_header, have_traceclock;
  uint64_t table_bytes, data_bytes; /* CPU tables and CPU data of all buffers: each at most the
                                       file, so instances cannot multiply one table or range */
  /* v7: where the metadata sections are (0 = not given) */
  uint64_t sec_header, sec_ftrace, sec_formats, sec_cmdlines;
  uint64_t sec_from[OPT_CMDLINES - OPT_HEADER_INFO + 1]; /* where each offset was read */
};

static int oom(struct builder *b) {
  return fxt_fail_at(b->c.err, b->c.err_size, FXT_ENOMEM, b->c.pos, "out of memory");
}

/* header_page and header_event blocks ("header_page\0", u64 n, text; same for header_event). */
static int read_headers(struct builder *b) {
  struct cur *c = &b->c;
  struct fxt_td_text tag;
  uint64_t at, n;
  int rc = cstr(c, &tag, "the header_page tag");
  if (rc)
    return rc;
  if (!text_is(tag, "header_page"))
    return fxt_fail_at(c->err, c->err_size, FXT_EBADMSG, c->pos - tag.len - 1,
                       "expected \"header_page\"");
  if ((rc = sized(c, 8, &at, &n, "header_page")) != 0)
    return rc;
  if (n == 0)
    return fxt_fail_at(c->err, c->err_size, FXT_ENOSYS, at - 8,
                       "empty header_page: the pre-2.6.31 ring buffer is not supported");
  struct fxt_td_event hp;
  rc = fxt_td_parse_text((const char *)c->buf + at, (size_t)n, at, false, &hp, c->err, c->err_size);
  if (rc)
    return rc;
  const struct fxt_td_field *ts = NULL, *commit = NULL, *data = NULL;
  for (uint32_t i = 0; i < hp.nfields; i++) {
    if (text_is(hp.fields[i].name, "timestamp"))
      ts = &hp.fields[i];
    else if (text_is(hp.fields[i].name, "commit"))
      commit = &hp.fields[i];
    else if (text_is(hp.fields[i].name, "data"))
      data = &hp.fields[i];
  }
  struct fxt_td_layout *l = &b->f->lay;
  if (ts && commit && data && ts->size == 8 && (commit->size == 4 || commit->size == 8) &&
      ts->offset + 8u <= data->offset && commit->offset + commit->size <= data->offset) {
    l->ts_offset = ts->offset;
    l->commit_offset = commit->offset;
    l->long_size = (uint8_t)commit->size;
    l->data_offset = data->offset;
    rc = 0;
  } else {
    rc = fxt_fail_at(c->err, c->err_size, FXT_EBADMSG, at,
                     "header_page lacks an 8-byte timestamp, a 4- or 8-byte commit and a data "
                     "field after them");
  }
  fxt_td_event_free(&hp);
  if (rc)
    return rc;
  if (l->data_offset >= b->f->page_size)
    return fxt_fail_at(c->err, c->err_size, FXT_EBADMSG, at,
                       "page header of %u bytes in pages of %u", l->data_offset, b->f->page_size);
  if ((rc = cstr(c, &tag, "the header_event tag")) != 0)
    return rc;
  if (!text_is(tag, "header_event"))
    return fxt_fail_at(c->err, c->err_size, FXT_EBADMSG, c->pos - tag.len - 1,
                       "expected \"header_event\"");
  b->have_header = true;
  return sized(c, 8, &at, &n, "header_event"); /* trace-cmd ignores it, so do we */
}

static int add_format(struct builder *b, struct fxt_td_text system, uint64_t at, uint64_t n) {
  struct fxt_td_file *f = b->f;
  if (grow((void **)&f->events, &b->cap_events, f->nevents + 1, sizeof *f->events))
    return oom(b);
  struct fxt_td_event *ev = &f->events[f->nevents];
  int rc = fxt_td_parse_format((const char *)b->c.buf + at, (size_t)n, at, system, ev, b->c.err,
                               b->c.err_size);
  if (rc)
    return rc;
  if (f->by_id[ev->id] >= 0) {
    const struct fxt_td_event *old = &f->events[f->by_id[ev->id]];
    rc = fxt_fail_at(b->c.err, b->c.err_size, FXT_EBADMSG, at,
                     "event %.*s:%.*s has ID %u, as %.*s:%.*s before it", (int)system.len,
                     system.data, (int)ev->name.len, ev->name.data, ev->id, (int)old->system.len,
                     old->system.data, (int)old->name.len, old->name.data);
    fxt_td_event_free(ev);
    return rc;
  }
  f->by_id[ev->id] = (int32_t)f->nevents++;
  return 0;
}

/* u32 count, then count x (u64 n, n bytes of a format), all of system "ftrace". */
static int read_ftrace_formats(struct builder *b) {
  uint64_t count, at, n;
  int rc = get(&b->c, 4, &count, "the ftrace format count");
  for (uint64_t i = 0; rc == 0 && i < count; i++) {
    rc = sized(&b->c, 8, &at, &n, "an ftrace format");
    if (rc == 0)
      rc = add_format(b, (struct fxt_td_text){"ftrace", 6}, at, n);
  }
  return rc;
}

/* u32 systems; per system: name\0, u32 events, events x (u64 n, n bytes). */
static int read_event_formats(struct builder *b) {
  uint64_t nsys, nev, at, n;
  int rc = get(&b->c, 4, &nsys, "the event system count");
  for (uint64_t s = 0; rc == 0 && s < nsys; s++) {
    struct fxt_td_text system;
    rc = cstr(&b->c, &system, "an event system name");
    if (rc == 0)
      rc = get(&b->c, 4, &nev, "an event count");
    for (uint64_t e = 0; rc == 0 && e < nev; e++) {
      rc = sized(&b->c, 8, &at, &n, "an event format");
      if (rc == 0)
        rc = add_format(b, system, at, n);
    }
  }
  return rc;
}

/* "<pid> <comm>\n" lines; lines that do not read so are skipped. */
static int read_cmdlines_text(struct builder *b, const char *p, const char *end) {
  struct fxt_td_file *f = b->f;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end;
    int64_t pid = 0;
    const char *q = p;
    bool neg = q < le && *q == '-';
    q += neg;
    const char *digits = q;
    while (q < le && *q >= '0' && *q <= '9' && pid < INT32_MAX)
      pid = pid * 10 + (*q++ - '0');
    if (q > digits && q < le && *q == ' ' && pid <= INT32_MAX) {
      if (grow((void **)&f->cmdlines, &b->cap_cmdlines, f->ncmdlines + 1, sizeof *f->cmdlines))
        return oom(b);
      struct fxt_td_cmdline *cl = &f->cmdlines[f->ncmdlines++];
      cl->pid = (int32_t)(neg ? -pid : pid);
      cl->comm.data = q + 1;
      cl->comm.len = (uint32_t)(le - (q + 1));
    }
    p = nl ? nl + 1 : end;
  }
  return 0;
}

static int read_cmdlines(struct builder *b) {
  uint64_t at, n;
  int rc = sized(&b->c, 8, &at, &n, "saved cmdlines");
  if (rc == 0)
    rc = read_cmdlines_text(b, (const char *)b->c.buf + at, (const char *)b->c.buf + at + n);
  return rc;
}

static int add_cpustat(struct builder *b, const char *p, size_t n) {
  struct fxt_td_file *f = b->f;
  uint64_t cpu = fxt_td_stat_line(p, n, "CPU:");
  if (cpu == UINT64_MAX || cpu > UINT32_MAX)
    return 0; /* not ours to judge: trace-cmd shows it as text */
  if (grow((void **)&f->cpustats, &b->cap_cpustats, f->ncpustats + 1, sizeof *f->cpustats))
    return oom(b);
  struct fxt_td_cpustat *s = &f->cpustats[f->ncpustats++];
  s->cpu = (uint32_t)cpu;
  s->entries = fxt_td_stat_line(p, n, "entries:");
  s->overrun = fxt_td_stat_line(p, n, "overrun:");
  s->commit_overrun = fxt_td_stat_line(p, n, "commit overrun:");
  s->dropped = fxt_td_stat_line(p, n, "dropped events:");
  return 0;
}

static int add_buffer(struct builder *b, struct fxt_td_buffer **out) {
  struct fxt_td_file *f = b->f;
  if (grow((void **)&f->buffers, &b->cap_buffers, f->nbuffers + 1, sizeof *f->buffers))
    return oom(b);
  *out = &f->buffers[f->nbuffers++];
  memset(*out, 0, sizeof **out);
  return 0;
}

/* A CPU data range: inside the file, and (for trace-cmd's mmap) page-aligned. */
static int check_cpu_data(struct builder *b, const struct fxt_td_cpu_data *d, uint64_t at) {
  if (d->size == 0)
    return 0;
  b->data_bytes += d->size;
  if (d->size > b->f->len || b->data_bytes > b->f->len)
    return fxt_fail_at(b->c.err, b->c.err_size, FXT_EBADMSG, at,
                       "CPU data of all buffers adds up to more than the file: ranges overlap");
  if (d->offset > b->f->len || d->size > b->f->len - d->offset)
    return fxt_fail_at(b->c.err, b->c.err_size, FXT_EBADMSG, at,
                       "CPU %u data [%llu, +%llu) runs past the end of the file (%zu bytes): "
                    "truncated?",
                    d->cpu, (unsigned long long)d->offset, (unsigned long long)d->size, b->f->len);
  return 0;
}

/* v7 BUFFER option: u64 offset, name\0, clock\0, u32 page size, u32 cpus, cpus x (u32 cpu,
 * u64 offset, u64 size). */
static int buffer_option_v7(struct builder *b, uint64_t at, uint64_t size) {
  struct cur c = b->c;
  c.pos = (size_t)at;
  c.len = (size_t)(at + size);
  struct fxt_td_buffer *buf;
  uint64_t v, page, ncpus;
  int rc = get(&c, 8, &v, "a BUFFER option");
  if (rc == 0 && (rc = add_buffer(b, &buf)) == 0 &&
      (rc = cstr(&c, &buf->name, "a BUFFER option's name")) == 0 &&
      (rc = cstr(&c, &buf->clock, "a BUFFER option's clock")) == 0 &&
      (rc = get(&c, 4, &page, "a BUFFER option")) == 0 &&
      (rc = get(&c, 4, &ncpus, "a BUFFER option")) == 0 && ncpus > 0)
    rc = need(&c, ncpus * 20, "a BUFFER option's CPU table");
  if (rc == 0 && page != b->f->page_size && ncpus > 0)
    rc = fxt_fail_at(c.err, c.err_size, FXT_ENOSYS, at,
                     "buffer '%.*s' has pages of %llu bytes, the file %u", (int)buf->name.len,
                     buf->name.data, (unsigned long long)page, b->f->page_size);
  if (rc == 0 && ncpus > 0 && (buf->cpus = calloc(ncpus, sizeof *buf->cpus)) == NULL)
    rc = oom(b);
  for (uint64_t i = 0; rc == 0 && i < ncpus; i++) {
    struct fxt_td_cpu_data *d = &buf->cpus[i];
    uint64_t cpu, entry = c.pos;
    get(&c, 4, &cpu, "");
    get(&c, 8, &d->offset, "");
    get(&c, 8, &d->size, "");
    d->cpu = (uint32_t)cpu;
    buf->ncpus++;
    if (cpu > UINT32_MAX - 1)
      rc = fxt_fail_at(c.err, c.err_size, FXT_EBADMSG, entry, "CPU number %llu",
                       (unsigned long long)cpu);
    else
      rc = check_cpu_data(b, d, entry);
    if (rc == 0 && cpu + 1 > b->f->cpus)
      b->f->cpus = (uint32_t)cpu + 1;
  }
  return rc;
}

static int v6_flyrecord(struct builder *b, uint32_t index, bool top);

/* v6 BUFFER option: u64 offset of the instance's tag, then its name. */
static int buffer_option_v6(struct builder *b, uint64_t at, uint64_t size) {
  struct cur c = b->c;
  c.pos = (size_t)at;
  c.len = (size_t)(at + size);
  uint64_t offset;
  struct fxt_td_buffer *buf;
  int rc = get(&c, 8, &offset, "a BUFFER option");
  if (rc == 0 && (rc = add_buffer(b, &buf)) == 0)
    rc = cstr(&c, &buf->name, "a BUFFER option's name");
  if (rc)
    return rc;
  if (offset >= b->f->len)
    return fxt_fail_at(c.err, c.err_size, FXT_EBADMSG, at,
                       "buffer '%.*s' at offset %llu, past "
                       "the end of the file",
                       (int)buf->name.len, buf->name.data, (unsigned long long)offset);
  size_t save = b->c.pos;
  b->c.pos = (size_t)offset;
  rc = v6_flyrecord(b, b->f->nbuffers - 1, false);
  b->c.pos = save;
  return rc;
}

/* One option's payload (at, size), by id. v6 BUFFER options are read after the top buffer. */
static int option(struct builder *b, uint64_t id, uint64_t at, uint64_t size, uint64_t hdr) {
  struct fxt_td_file *f = b->f;
  const char *p = (const char *)b->c.buf + at;
  uint64_t v;
  switch (id) {
  case OPT_DATE:
    if (fxt_td_parse_ll(p, (size_t)size, &f->date_offset_ns) && f->date_offset_ns <= INT64_MAX / 1000 &&
        f->date_offset_ns >= -(INT64_MAX / 1000)) {
      f->has_date = true;
      f->date_offset_ns *= 1000; /* microseconds in the file */
    } /* else: not a time offset: ignored, as trace-cmd would misread it */
    return 0;
  case OPT_OFFSET:
    f->has_offset = fxt_td_parse_ll(p, (size_t)size, &f->ts_offset_ns);
    return 0;
  case OPT_CPUSTAT:
    return add_cpustat(b, p, (size_t)size);
  case OPT_TRACECLOCK: {
    struct fxt_td_text t = fxt_td_bracketed(p, (size_t)size);
    b->have_traceclock = true;
    if (t.len)
      f->clock = t;
    return 0;
  }
  case OPT_UNAME:
    f->uname = (struct fxt_td_text){p, (uint32_t)strnlen(p, (size_t)size)};
    return 0;
  case OPT_VERSION:
    f->tc_version = (struct fxt_td_text){p, (uint32_t)strnlen(p, (size_t)size)};
    return 0;
  case OPT_TSC2NSEC:
    if (size >= 16) {
      f->tsc_mult = (uint32_t)fxt_td_rd(b->c.buf + at, 4, b->c.big);
      f->tsc_shift = (uint32_t)fxt_td_rd(b->c.buf + at + 4, 4, b->c.big);
      f->tsc_offset = fxt_td_rd(b->c.buf + at + 8, 8, b->c.big);
      f->has_tsc2nsec = f->tsc_mult != 0 && f->tsc_shift < 64;
    }
    return 0;
  case OPT_BUFFER:
    return f->version == 7 ? buffer_option_v7(b, at, size) : 0;
  case OPT_BUFFER_TEXT:
    return fxt_fail_at(b->c.err, b->c.err_size, FXT_ENOSYS, hdr,
                       "latency (text) buffer: only flyrecord data is read");
  case OPT_HEADER_INFO:
  case OPT_FTRACE_EVENTS:
  case OPT_EVENT_FORMATS:
  case OPT_CMDLINES:
    if (size < 8)
      return fxt_fail_at(b->c.err, b->c.err_size, FXT_EBADMSG, hdr,
                         "option %llu of %llu bytes (a section offset is 8)",
                         (unsigned long long)id, (unsigned long long)size);
    v = fxt_td_rd(b->c.buf + at, 8, b->c.big);
    b->sec_from[id - OPT_HEADER_INFO] = at;
    *(id == OPT_HEADER_INFO     ? &b->sec_header
      : id == OPT_FTRACE_EVENTS ? &b->sec_ftrace
      : id == OPT_EVENT_FORMATS ? &b->sec_formats
                                : &b->sec_cmdlines) = v;
    return 0;
  default: /* CPUCOUNT, TRACEID, KALLSYMS, PRINTK, ...: not needed */
    return 0;
  }
}

/* v6 options: {u16 id, u32 size, payload} until a u16 0 with no size. The v6 BUFFER options
 * are kept for after the top buffer's table (their data is read then). */
static int options_v6(struct builder *b, uint64_t *buffers_at, uint32_t *nbuffer_opts) {
  struct cur *c = &b->c;
  *nbuffer_opts = 0;
  for (;;) {
    uint64_t id, size, at, hdr = c->pos;
    int rc = get(c, 2, &id, "an option id");
    if (rc || id == OPT_DONE)
      return rc;
    if ((rc = sized(c, 4, &at, &size, "an option")) != 0)
      return rc;
    if (id == OPT_BUFFER) {
      if ((*nbuffer_opts)++ == 0)
        *buffers_at = hdr;
      continue;
    }
    if ((rc = option(b, id, at, size, hdr)) != 0)
      return rc;
  }
}

/* At the cursor: optional "options  \0" + options, then "flyrecord\0" (or latency), then the
 * CPU table of f->cpus entries into buffers[index], then (top buffer, TRACECLOCK present) the
 * clock. Only the top buffer's options may name instances (no recursion through them). */
static int v6_flyrecord(struct builder *b, uint32_t index, bool top) {
  struct cur *c = &b->c;
  int rc = need(c, 10, "the flyrecord tag");
  if (rc)
    return rc;
  uint64_t buffers_at = 0;
  uint32_t nbuffer_opts = 0;
  if (memcmp(c->buf + c->pos, "options  \0", 10) == 0) {
    c->pos += 10;
    if ((rc = options_v6(b, &buffers_at, &nbuffer_opts)) != 0)
      return rc;
    if ((rc = need(c, 10, "the flyrecord tag")) != 0)
      return rc;
  }
  if (memcmp(c->buf + c->pos, "latency  \0", 10) == 0)
    return fxt_fail_at(c->err, c->err_size, FXT_ENOSYS, c->pos,
                       "latency format (text): only flyrecord data is read");
  if ((rc = expect_tag(c, "flyrecord", 10)) != 0)
    return rc;
  uint32_t ncpus = b->f->cpus;
  struct fxt_td_buffer *buf = &b->f->buffers[index];
  if ((rc = need(c, (uint64_t)ncpus * 16, "the CPU table")) != 0)
    return rc;
  b->table_bytes += (uint64_t)ncpus * 16;
  if (buf->cpus != NULL || b->table_bytes > b->f->len)
    return fxt_fail_at(c->err, c->err_size, FXT_EBADMSG, c->pos,
                       "CPU table of buffer '%.*s' read "
                       "twice",
                       (int)buf->name.len, buf->name.data);
  if (ncpus > 0 && (buf->cpus = calloc(ncpus, sizeof *buf->cpus)) == NULL)
    return oom(b);
  for (uint32_t i = 0; i < ncpus && rc == 0; i++) {
    struct fxt_td_cpu_data *d = &buf->cpus[buf->ncpus++];
    uint64_t entry = c->pos;
    d->cpu = i;
    get(c, 8, &d->offset, "");
    get(c, 8, &d->size, "");
    rc = check_cpu_data(b, d, entry);
  }
  if (rc)
    return rc;
  if (top && b->have_traceclock) { /* u64 n + "[local] global ..." */
    uint64_t at, n;
    if (sized(c, 8, &at, &n, "the trace clock") == 0 && b->f->clock.len == 0)
      b->f->clock = fxt_td_bracketed((const char *)c->buf + at, (size_t)n);
  }
  if (!top)
    return 0;
  /* Instances: each BUFFER option, now that the top buffer is in f->buffers[0]. The options
   * were walked once already, so they read again. */
  struct cur save = *c;
  c->pos = (size_t)buffers_at;
  for (uint32_t i = 0; i < nbuffer_opts && rc == 0; i++) {
    uint64_t id = 0, size = 0, at = 0;
    do {
      get(c, 2, &id, "");
      sized(c, 4, &at, &size, "");
    } while (id != OPT_BUFFER);
    rc = buffer_option_v6(b, at, size);
  }
  *c = save;
  return rc;
}

static int open_v6(struct builder *b) {
  struct fxt_td_file *f = b->f;
  struct cur *c = &b->c;
  uint64_t at, n, cpus;
  struct fxt_td_buffer *top;
  int rc = read_headers(b);
  if (rc == 0)
    rc = read_ftrace_formats(b);
  if (rc == 0)
    rc = read_event_formats(b);
  if (rc == 0)
    rc = sized(c, 4, &at, &n, "kallsyms");
  if (rc == 0)
    rc = sized(c, 4, &at, &n, "printk formats");
  if (rc == 0)
    rc = read_cmdlines(b);
  if (rc == 0)
    rc = get(c, 4, &cpus, "the CPU count");
  if (rc == 0 && cpus > (c->len - c->pos) / 16)
    rc = fxt_fail_at(c->err, c->err_size, FXT_EBADMSG, c->pos - 4,
                     "%llu CPUs: their table cannot fit in the rest of the file",
                     (unsigned long long)cpus);
  if (rc == 0) {
    f->cpus = (uint32_t)cpus;
    rc = add_buffer(b, &top);
  }
  if (rc == 0)
    rc = v6_flyrecord(b, 0, true);
  return rc;
}

/* ---- v7: sections -------------------------------------------------------------------------- */

/* The section header at offset (u16 id, u16 flags, u32 string, u64 size): *at and *size of
 * its payload. Compressed sections are refused. */
static int section(struct builder *b, uint64_t offset, uint64_t from, uint64_t want_id,
                   uint64_t *at, uint64_t *size, const char *what) {
  struct cur c = b->c;
  if (offset >= c.len)
    return fxt_fail_at(c.err, c.err_size, FXT_EBADMSG, from,
                       "%s section at %llu, past the end "
                       "of the file (%zu bytes)",
                       what, (unsigned long long)offset, c.len);
  c.pos = (size_t)offset;
  uint64_t id, flags, desc;
  int rc = get(&c, 2, &id, what);
  if (rc == 0)
    rc = get(&c, 2, &flags, what);
  if (rc == 0)
    rc = get(&c, 4, &desc, what);
  if (rc == 0)
    rc = sized(&c, 8, at, size, what);
  if (rc)
    return rc;
  if (id != want_id)
    return fxt_fail_at(c.err, c.err_size, FXT_EBADMSG, offset, "%s section has id %llu (want %llu)",
                       what, (unsigned long long)id, (unsigned long long)want_id);
  if (flags & 1u)
    return fxt_fail_at(c.err, c.err_size, FXT_ENOSYS, offset, "compressed %s section", what);
  return 0;
}

/* Runs fn over the payload of a metadata section. */
static int in_section(struct builder *b, uint64_t offset, uint64_t id, const char *what,
                      int (*fn)(struct builder *)) {
  uint64_t at = 0, size = 0; /* set by section() when it returns 0 */
  int rc = section(b, offset, b->sec_from[id - OPT_HEADER_INFO], id, &at, &size, what);
  if (rc)
    return rc;
  struct cur save = b->c;
  b->c.pos = (size_t)at;
  b->c.len = (size_t)(at + size);
  rc = fn(b);
  b->c.pos = save.pos;
  b->c.len = save.len;
  return rc;
}

/* The chain of options sections from offset: each is {id, size, payload}... ending with
 * DONE(8 bytes: offset of the next section, 0 = last). */
static int options_v7(struct builder *b, uint64_t offset, uint64_t from) {
  for (uint32_t n = 0; offset != 0; n++) {
    uint64_t at = 0, size = 0; /* set by section() when it returns 0 */
    if (n == MAX_OPTION_SECTIONS)
      return fxt_fail_at(b->c.err, b->c.err_size, FXT_EBADMSG, offset,
                         "more than %u chained options sections (a cycle?)", MAX_OPTION_SECTIONS);
    int rc = section(b, offset, from, OPT_DONE, &at, &size, "options");
    if (rc)
      return rc;
    struct cur c = b->c;
    c.pos = (size_t)at;
    c.len = (size_t)(at + size);
    uint64_t next = 0;
    bool done = false;
    while (!done) {
      uint64_t id, osize, oat, hdr = c.pos;
      if ((rc = get(&c, 2, &id, "an option id")) != 0 ||
          (rc = sized(&c, 4, &oat, &osize, "an option")) != 0)
        return rc;
      if (id == OPT_DONE) {
        if (osize < 8)
          return fxt_fail_at(c.err, c.err_size, FXT_EBADMSG, hdr,
                             "DONE option of %llu bytes "
                             "(the next section's offset is 8)",
                             (unsigned long long)osize);
        next = fxt_td_rd(c.buf + oat, 8, c.big);
        from = oat;
        done = true;
      } else if ((rc = option(b, id, oat, osize, hdr)) != 0) {
        return rc;
      }
    }
    if (next != 0 && next <= offset)
      return fxt_fail_at(b->c.err, b->c.err_size, FXT_EBADMSG, at,
                         "options section points back to offset %llu", (unsigned long long)next);
    offset = next;
  }
  return 0;
}

static int open_v7(struct builder *b) {
  struct cur *c = &b->c;
  struct fxt_td_text name, version;
  uint64_t options;
  int rc = cstr(c, &name, "the compression name");
  if (rc == 0)
    rc = cstr(c, &version, "the compression version");
  if (rc)
    return rc;
  if (!text_is(name, "none") && name.len != 0)
    return fxt_fail_at(c->err, c->err_size, FXT_ENOSYS, c->pos - version.len - name.len - 2,
                       "compressed trace.dat (%.*s %.*s): fxtrace reads uncompressed files; "
                       "record with `trace-cmd record --compression none` (or --file-version 6), "
                       "or convert with `trace-cmd convert --file-version 6`",
                       (int)name.len, name.data, (int)version.len, version.data);
  if ((rc = get(c, 8, &options, "the options offset")) != 0)
    return rc;
  if (options == 0)
    return fxt_fail_at(c->err, c->err_size, FXT_EBADMSG, c->pos - 8, "no options section");
  if ((rc = options_v7(b, options, c->pos - 8)) != 0)
    return rc;
  if (b->sec_header == 0 || b->sec_formats == 0)
    return fxt_fail_at(c->err, c->err_size, FXT_EBADMSG, options, "options name no %s section",
                       b->sec_header ? "event formats" : "headers");
  rc = in_section(b, b->sec_header, OPT_HEADER_INFO, "headers", read_headers);
  if (rc == 0 && b->sec_ftrace)
    rc = in_section(b, b->sec_ftrace, OPT_FTRACE_EVENTS, "ftrace events", read_ftrace_formats);
  if (rc == 0)
    rc = in_section(b, b->sec_formats, OPT_EVENT_FORMATS, "events format", read_event_formats);
  if (rc == 0 && b->sec_cmdlines)
    rc = in_section(b, b->sec_cmdlines, OPT_CMDLINES, "command lines", read_cmdlines);
  return rc;
}

/* ---- open / close --------------------------------------------------------------------------- */

int fxt_td_open(const void *buf, size_t len, struct fxt_td_file **out, char *err, size_t err_size) {
  if (out != NULL)
    *out = NULL;
  if (out == NULL || (buf == NULL && len > 0))
    return FXT_EINVAL;
  if (!fxt_td_is_tracedat(buf, len))
    return fxt_fail_at(err, err_size, FXT_EBADMSG, 0,
                       "not a trace.dat file (no \\x17\\x08D"
                       "tracing magic)");
  struct builder b;
  memset(&b, 0, sizeof b);
  struct fxt_td_file *f = calloc(1, sizeof *f);
  if (f == NULL || (f->by_id = malloc((MAX_EVENT_ID + 1) * sizeof *f->by_id)) == NULL) {
    free(f);
    return fxt_fail_at(err, err_size, FXT_ENOMEM, 0, "out of memory");
  }
  memset(f->by_id, 0xff, (MAX_EVENT_ID + 1) * sizeof *f->by_id);
  f->buf = buf;
  f->len = len;
  b.f = f;
  b.c = (struct cur){buf, len, FXT_TD_MAGIC_LEN, false, err, err_size};
  struct fxt_td_text version;
  uint64_t endian = 0, lsize = 0, page = 0;
  int rc = cstr(&b.c, &version, "the version");
  if (rc == 0) {
    int64_t v = 0;
    if (!fxt_td_parse_ll(version.data, version.len, &v) || (v != 6 && v != 7))
      rc = fxt_fail_at(err, err_size, FXT_ENOSYS, FXT_TD_MAGIC_LEN,
                       "trace.dat version '%.*s' (this reader reads 6 and 7)",
                       (int)(version.len > 16 ? 16 : version.len), version.data);
    f->version = (uint32_t)v;
  }
  if (rc == 0)
    rc = get(&b.c, 1, &endian, "the endianness");
  if (rc == 0)
    rc = get(&b.c, 1, &lsize, "the long size");
  b.c.big = endian != 0;
  f->lay.big_endian = b.c.big;
  if (rc == 0)
    rc = get(&b.c, 4, &page, "the page size");
  if (rc == 0 && (page < MIN_PAGE_SIZE || page > MAX_PAGE_SIZE))
    rc = fxt_fail_at(err, err_size, FXT_EBADMSG, b.c.pos - 4, "page size %llu (%u..%u)",
                     (unsigned long long)page, MIN_PAGE_SIZE, MAX_PAGE_SIZE);
  f->page_size = (uint32_t)page;
  if (rc == 0)
    rc = f->version == 6 ? open_v6(&b) : open_v7(&b);
  if (rc == 0 && !b.have_header)
    rc = fxt_fail_at(err, err_size, FXT_EBADMSG, 0, "no header_page");
  if (rc) {
    fxt_td_close(f);
    return rc;
  }
  if (f->clock.len == 0 && f->nbuffers > 0 && f->buffers[0].clock.len > 0)
    f->clock = f->buffers[0].clock;
  if (f->clock.len == 0)
    f->clock = (struct fxt_td_text){"local", 5};
  for (uint32_t i = 0; i < f->nbuffers; i++)
    if (f->buffers[i].clock.len == 0)
      f->buffers[i].clock = f->clock;
  *out = f;
  return 0;
}

void fxt_td_close(struct fxt_td_file *f) {
  if (f == NULL)
    return;
  for (uint32_t i = 0; i < f->nevents; i++)
    fxt_td_event_free(&f->events[i]);
  for (uint32_t i = 0; i < f->nbuffers; i++)
    free(f->buffers[i].cpus);
  FXT_FREE_ALL(f->events, f->by_id, f->cmdlines, f->buffers, f->cpustats, f);
}

const struct fxt_td_event *fxt_td_event_by_id(const struct fxt_td_file *f, uint32_t id) {
  if (id > MAX_EVENT_ID || f->by_id[id] < 0)
    return NULL;
  return &f->events[f->by_id[id]];
}
