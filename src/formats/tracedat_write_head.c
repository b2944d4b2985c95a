/* src/formats/tracedat_write_head.c - everything of a trace.dat before the CPU data (spec
 * tracedat.md §1, version 6): built in memory, since the CPU table at its end needs the data
 * sizes, then handed out at once, padded to the first page boundary.
 */
#include "tracedat_write_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <fxtrace/version.h>

#include "tracedat_write_page.h"

/* The kernel's events/header_page and events/header_event (x86_64, 4 KiB pages; spec
 * ftrace-text.md §3.4): the reader takes the page layout (and the long size) from the first. */
static const char k_header_page[] =
    "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
    "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
    "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
    "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
static const char k_header_event[] = "# compressed entry header\n"
                                     "\ttype_len    :    5 bits\n"
                                     "\ttime_delta  :   27 bits\n"
                                     "\tarray       :   32 bits\n"
                                     "\n"
                                     "\tpadding     : type == 29\n"
                                     "\ttime_extend : type == 30\n"
                                     "\ttime_stamp : type == 31\n"
                                     "\tdata max type_len  == 28\n";
_Static_assert(sizeof k_header_page - 1 == 205 && sizeof k_header_event - 1 == 205,
               "the kernel's texts are 205 bytes each");

/* The trace clock: timestamps are CLOCK_MONOTONIC ns (report shows seconds for mono*). */
static const char k_clock[] = "[mono]";

enum { OPT_CPUSTAT = 2, OPT_TRACECLOCK = 4, OPT_UNAME = 5, OPT_CPUCOUNT = 8, OPT_VERSION = 9 };

static void put_u16(struct fxt_tbuf *b, uint16_t v) {
  unsigned char p[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
  fxt_tbuf_put(b, (const char *)p, 2);
}

static void put_u32(struct fxt_tbuf *b, uint32_t v) {
  unsigned char p[4];
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
  fxt_tbuf_put(b, (const char *)p, 4);
}

static void put_u64(struct fxt_tbuf *b, uint64_t v) {
  unsigned char p[8];
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
  fxt_tbuf_put(b, (const char *)p, 8);
}

/* A u64 size, then the bytes. */
static void put_block64(struct fxt_tbuf *b, const char *p, size_t n) {
  put_u64(b, n);
  fxt_tbuf_put(b, p, n);
}

static void put_option(struct fxt_tbuf *b, uint16_t id, const char *p, size_t n) {
  put_u16(b, id);
  put_u32(b, (uint32_t)n);
  fxt_tbuf_put(b, p, n);
}

static int cmp_variant(const void *pa, const void *pb) {
  const struct fxt_td_ev_variant *a = *(const struct fxt_td_ev_variant *const *)pa;
  const struct fxt_td_ev_variant *b = *(const struct fxt_td_ev_variant *const *)pb;
  int c = strcmp(a->sys_name, b->sys_name);
  return c ? c : (a->id > b->id) - (a->id < b->id);
}

/* Item 10: the event systems and their formats. */
static int put_formats(struct fxt_td_writer *c, struct fxt_tbuf *b) {
  uint32_t n = c->events.n, nsys = 0;
  struct fxt_td_ev_variant **v = malloc((n ? n : 1) * sizeof *v);
  struct fxt_tbuf f;
  fxt_tbuf_init(&f);
  if (v == NULL)
    return FXT_ENOMEM;
  if (n > 0) /* (an input without events has no table: NULL) */
    memcpy(v, c->events.v, n * sizeof *v);
  qsort(v, n, sizeof *v, cmp_variant);
  for (uint32_t i = 0; i < n; i++)
    nsys += i == 0 || strcmp(v[i]->sys_name, v[i - 1]->sys_name) != 0;
  put_u32(b, nsys);
  for (uint32_t i = 0, j; i < n; i = j) {
    for (j = i + 1; j < n && strcmp(v[j]->sys_name, v[i]->sys_name) == 0;)
      j++;
    fxt_tbuf_put(b, v[i]->sys_name, strlen(v[i]->sys_name) + 1);
    put_u32(b, j - i);
    for (uint32_t k = i; k < j; k++) {
      f.len = 0;
      fxt_td_ev_format(&f, v[k]);
      put_block64(b, f.data, f.len);
    }
  }
  bool failed = f.oom;
  fxt_tbuf_free(&f);
  free(v);
  return failed ? FXT_ENOMEM : 0;
}

/* Item 13: "<tid> <comm>\n" per named thread, the first of a tid (trace-cmd keeps one name
 * per pid); comm cut to 15 bytes and kept on its line, as report prints it. */
static int put_cmdlines(struct fxt_td_writer *c, struct fxt_tbuf *b) {
  struct fxt_tbuf t;
  struct fxt_jmap seen = {0};
  fxt_tbuf_init(&t);
  int rc = 0;
  for (uint32_t i = 0; i < c->nthreads && rc == 0; i++) {
    const struct fxt_td_writer_thread *th = &c->threads[i];
    if (!th->named || th->comm.len == 0)
      continue;
    uint64_t *v = fxt_jmap_get(&seen, th->tid & UINT32_MAX, 0); /* the pid as report has it */
    if (v == NULL) {
      rc = FXT_ENOMEM;
      break;
    }
    if (v[0]++ != 0)
      continue;
    char line[64];
    int n = snprintf(line, sizeof line, "%d ", (int)(int32_t)(uint32_t)th->tid); /* = pid */
    for (uint32_t k = 0; k < th->comm.len && k < 15 && n < (int)sizeof line - 1; k++) {
      char ch = th->comm.data[k];
      line[n++] = ch == '\n' || ch == '\0' ? ' ' : ch;
    }
    line[n++] = '\n';
    fxt_tbuf_put(&t, line, (size_t)n);
    c->st.cmdlines++;
  }
  put_block64(b, t.data, t.len);
  rc = rc ? rc : t.oom ? FXT_ENOMEM : 0;
  fxt_tbuf_free(&t);
  fxt_jmap_free(&seen);
  return rc;
}

/* "%5llu.%06llu" of ns rounded to microseconds, as the kernel prints stats times. */
static int put_secs(char *p, size_t n, const char *label, uint64_t ns) {
  uint64_t us = ns / 1000 + (ns % 1000 >= 500);
  return snprintf(p, n, "%s%5llu.%06llu\n", label, (unsigned long long)(us / 1000000),
                  (unsigned long long)(us % 1000000));
}

/* Item 15a: options, ended by a bare u16 0. */
static void put_options(struct fxt_td_writer *c, struct fxt_tbuf *b) {
  char text[512];
  int n = snprintf(text, sizeof text, "%s\n", k_clock);
  put_option(b, OPT_TRACECLOCK, text, (size_t)n + 1);
  if (c->opt->uname != NULL) {
    put_option(b, OPT_UNAME, c->opt->uname, strlen(c->opt->uname) + 1);
  } else {
    struct utsname u;
    if (uname(&u) == 0) {
      n = snprintf(text, sizeof text, "%s %s %s %s", u.sysname, u.nodename, u.release,
                   u.machine);
      put_option(b, OPT_UNAME, text, (size_t)(n < (int)sizeof text ? n : (int)sizeof text - 1) + 1);
    }
  }
  n = snprintf(text, sizeof text, "fxtrace %s", fxt_version_string());
  put_option(b, OPT_VERSION, text, (size_t)n + 1);
  unsigned char cpus[4];
  for (int i = 0; i < 4; i++)
    cpus[i] = (unsigned char)(c->ncpus >> (8 * i));
  put_option(b, OPT_CPUCOUNT, (const char *)cpus, 4);
  for (uint32_t i = 0; i < c->ncpus; i++) {
    const struct fxt_td_writer_cpu *cpu = &c->cpus[i];
    /* As trace-cmd records them after reading the buffers out: nothing left (entries,
     * bytes), everything read (read events). */
    n = snprintf(text, sizeof text,
                 "CPU: %u\nentries: 0\noverrun: %llu\ncommit overrun: 0\nbytes: 0\n", i,
                 (unsigned long long)cpu->overrun);
    n += put_secs(text + n, sizeof text - (size_t)n, "oldest event ts: ", cpu->oldest_ns);
    n += put_secs(text + n, sizeof text - (size_t)n, "now ts: ", c->end_ns);
    n += snprintf(text + n, sizeof text - (size_t)n, "dropped events: %llu\nread events: %llu\n",
                  (unsigned long long)cpu->dropped, (unsigned long long)cpu->events);
    put_option(b, OPT_CPUSTAT, text, (size_t)n + 1);
  }
  put_u16(b, 0);
}

int fxt_td_write_head(struct fxt_td_writer *c) {
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  fxt_tbuf_put(&b, "\x17\x08\x44tracing6", 11);
  fxt_tbuf_put(&b, "", 1); /* the version's NUL */
  fxt_tbuf_put(&b, "\0\x08", 2); /* little-endian, long size 8 */
  put_u32(&b, FXT_TD_WPAGE_BYTES);
  fxt_tbuf_put(&b, "header_page", 12);
  put_block64(&b, k_header_page, sizeof k_header_page - 1);
  fxt_tbuf_put(&b, "header_event", 13);
  put_block64(&b, k_header_event, sizeof k_header_event - 1);
  fxt_td_fn_formats(&c->fn, &b); /* ftrace formats: the function tracers' */
  int rc = put_formats(c, &b);
  fxt_td_fn_kallsyms(&c->fn, &b); /* their functions' made-up addresses */
  put_u32(&b, 0); /* printk formats */
  if (rc == 0)
    rc = put_cmdlines(c, &b);
  put_u32(&b, c->ncpus);
  fxt_tbuf_put(&b, "options  ", 10);
  put_options(c, &b);
  fxt_tbuf_put(&b, "flyrecord", 10);
  size_t table = b.len;
  for (uint32_t i = 0; i < c->ncpus; i++) {
    put_u64(&b, 0);
    put_u64(&b, 0);
  }
  put_block64(&b, k_clock, sizeof k_clock - 1);
  size_t start = (b.len + FXT_TD_WPAGE_BYTES - 1) / FXT_TD_WPAGE_BYTES * FXT_TD_WPAGE_BYTES;
  if (fxt_tbuf_reserve(&b, start - b.len)) {
    memset(b.data + b.len, 0, start - b.len);
    b.len = start;
  }
  if (rc == 0 && b.oom)
    rc = FXT_ENOMEM;
  uint64_t at = start;
  for (uint32_t i = 0; rc == 0 && i < c->ncpus; i++) { /* the CPU table: offset, size */
    struct fxt_td_writer_cpu *cpu = &c->cpus[i];
    uint64_t size = cpu->pages * FXT_TD_WPAGE_BYTES;
    cpu->offset = size ? at : 0;
    for (int k = 0; k < 8; k++) {
      b.data[table + 16 * i + (size_t)k] = (char)(cpu->offset >> (8 * k));
      b.data[table + 16 * i + 8 + (size_t)k] = (char)(size >> (8 * k));
    }
    at += size;
  }
  if (rc == FXT_ENOMEM)
    rc = fxt_td_writer_fail(c, rc, UINT64_MAX, "out of memory");
  else if (rc == 0)
    rc = fxt_td_write(c, b.data, b.len);
  fxt_tbuf_free(&b);
  return rc;
}
