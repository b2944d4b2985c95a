/* tests/unit/tracedat_test.h - for the tests of the trace.dat writer (test_tracedat.c,
 * tests/tep/test_tracedat_tep.c): tracepoint descriptions and the events both write for their
 * FXT input (fxt_build.h, included first), an output sink, and reading a trace.dat (version 6)
 * back: a walker over the file's items and the records of ring-buffer pages, written from the
 * spec (tracedat.md §1, §4) and independent of the writer's code, asserting (cmocka) what the
 * spec requires.
 */
#ifndef FXTRACE_TEST_TRACEDAT_TEST_H
#define FXTRACE_TEST_TRACEDAT_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <fxtrace/tracepoint.h>

#include "base/text.h"
#include "base/tpdesc.h"

/* A tracepoint description blob (docs/fxt-conventions.md): fields are (name ref, type,
 * bound). */
static inline void desc(uint32_t id, uint16_t sys, uint16_t name, uint16_t kind,
                        const char *fmt, uint16_t nfields, const uint16_t (*fields)[3]) {
  uint8_t p[512] = {0};
  uint16_t fl = (uint16_t)strlen(fmt);
  size_t n = fxt_tpdesc_head(p, id, sys, name, kind, nfields, fl);
  memcpy(p + n, fmt, fl), n += fl;
  for (uint16_t i = 0; i < nfields; i++)
    n += fxt_tpdesc_field(p + n, fields[i][0], (uint8_t)fields[i][1], fields[i][2]);
  struct fxt_blob b = {sref(FXT_STR_TRACEPOINT), FXT_BLOB_DATA, (uint16_t)n, p};
  emit(fxt_encode_blob(ROOM, &b));
}

/* The string refs of the events both tests write (each test numbers its strings its own
 * way): demo:all and its fields, the counter q, the duration io, the async req, printk. */
struct tdt_refs {
  uint16_t demo, all, u, s, name, mac, d, p, ok, seq;
  uint16_t q, depth, ratio, io, req;
  uint16_t printk, fmt, a0, a1;
};

/* demo:all at ns (typed: u 200, s -2, name "ab", mac "0a0b0c", d 0.25, p 0x7f00, ok true,
 * seq -3), written and returned (for a variant of it). */
static inline struct fxt_event put_all(const struct tdt_refs *r, struct fxt_thread_ref t,
                                       uint64_t ns) {
  struct fxt_event e = event(FXT_EVENT_INSTANT, t, sref(r->demo), sref(r->all), ns);
  arg(&e, FXT_ARG_UINT32, sref(r->u))->value.u32 = 200;
  arg(&e, FXT_ARG_INT32, sref(r->s))->value.i32 = -2;
  arg(&e, FXT_ARG_STRING, sref(r->name))->value.str = inl("ab");
  arg(&e, FXT_ARG_STRING, sref(r->mac))->value.str = inl("0a0b0c");
  arg(&e, FXT_ARG_DOUBLE, sref(r->d))->value.f64 = 0.25;
  arg(&e, FXT_ARG_POINTER, sref(r->p))->value.pointer = 0x7f00;
  arg(&e, FXT_ARG_BOOL, sref(r->ok))->value.b = true;
  arg(&e, FXT_ARG_INT64, sref(r->seq))->value.i64 = -3;
  put(&e);
  return e;
}

/* At ns the counter q (id 3: depth 4, ratio 0.5), at ns + 1 the complete duration io
 * (2500 ns), at ns + 2 the async begin req (id 0x2a: x-y -1, a name that is no identifier,
 * and nil, a null argument). */
static inline void put_q_io_req(const struct tdt_refs *r, struct fxt_thread_ref t,
                                uint64_t ns) {
  struct fxt_event e = event(FXT_EVENT_COUNTER, t, sref(r->demo), sref(r->q), ns);
  e.trailer = 3;
  arg(&e, FXT_ARG_UINT32, sref(r->depth))->value.u32 = 4;
  arg(&e, FXT_ARG_DOUBLE, sref(r->ratio))->value.f64 = 0.5;
  put(&e);
  e = event(FXT_EVENT_DURATION_COMPLETE, t, sref(r->demo), sref(r->io), ns + 1);
  e.trailer = ns + 1 + 2500;
  put(&e);
  e = event(FXT_EVENT_ASYNC_BEGIN, t, sref(r->demo), sref(r->req), ns + 2);
  e.trailer = 0x2a;
  arg(&e, FXT_ARG_INT32, inl("x-y"))->value.i32 = -1;
  arg(&e, FXT_ARG_NULL, inl("nil"));
  put(&e);
}

/* printk at ns: the format "got %d, %.1f%%\n" with a0 -5 and a1 2.25. */
static inline void put_printk(const struct tdt_refs *r, struct fxt_thread_ref t, uint64_t ns) {
  struct fxt_event e = event(FXT_EVENT_INSTANT, t, sref(r->printk), sref(r->fmt), ns);
  arg(&e, FXT_ARG_INT32, sref(r->a0))->value.i32 = -5;
  arg(&e, FXT_ARG_DOUBLE, sref(r->a1))->value.f64 = 2.25;
  put(&e);
}

/* The output in memory; a write fails (-5, EIO) at call fail_at_call (0: never). */
struct sink {
  struct fxt_tbuf out;
  size_t calls;
  size_t fail_at_call;
};

static inline int sink_write(void *ctx, const void *data, size_t n) {
  struct sink *s = ctx;
  if (++s->calls == s->fail_at_call)
    return -5;
  fxt_tbuf_put(&s->out, data, n);
  return 0;
}

struct dat {
  const unsigned char *p;
  size_t len, pos;
  uint32_t nsystems;
  uint32_t nformats; /* of every system, in file order (the first 64) */
  const char *fmt_system[64], *formats[64];
  size_t format_len[64];
  const char *cmdlines;
  size_t cmdlines_len;
  uint32_t cpus;
  const char *options[32]; /* payloads by option id (the last of an id), CPUSTATs apart */
  uint32_t option_len[32];
  const char *cpustat[8];
  uint32_t ncpustat;
  uint64_t cpu_offset[8], cpu_size[8];
};

static inline uint64_t rd(struct dat *d, unsigned n) {
  assert_true(d->pos + n <= d->len);
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++)
    v |= (uint64_t)d->p[d->pos + i] << (8 * i);
  d->pos += n;
  return v;
}

static inline const char *rd_bytes(struct dat *d, size_t n) {
  assert_true(d->pos + n <= d->len);
  const char *s = (const char *)d->p + d->pos;
  d->pos += n;
  return s;
}

static inline void expect(struct dat *d, const void *bytes, size_t n) {
  assert_memory_equal(rd_bytes(d, n), bytes, n);
}

/* A section of the head: its name and a 0, the text's size (8 bytes), the text. */
static inline void expect_section(struct dat *d, const char *name, const char *text) {
  expect(d, name, strlen(name) + 1);
  assert_int_equal(rd(d, 8), strlen(text));
  expect(d, text, strlen(text));
}

static inline void walk(struct dat *d, const struct fxt_tbuf *out) {
  memset(d, 0, sizeof *d);
  d->p = (const unsigned char *)out->data;
  d->len = out->len;
  expect(d, "\x17\x08\x44tracing6\0\0\x08", 14); /* magic, "6\0", little-endian, long 8 */
  assert_int_equal(rd(d, 4), 4096);                /* page size */
  expect_section(d, "header_page", /* 205 bytes */
                 "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
                 "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
                 "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
                 "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n");
  expect_section(d, "header_event", /* 205 bytes */
                 "# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n"
                 "\tarray       :   32 bits\n\n\tpadding     : type == 29\n"
                 "\ttime_extend : type == 30\n\ttime_stamp : type == 31\n"
                 "\tdata max type_len  == 28\n");
  assert_int_equal(rd(d, 4), 0); /* ftrace formats */
  d->nsystems = (uint32_t)rd(d, 4);
  for (uint32_t s = 0; s < d->nsystems; s++) {
    const char *name = (const char *)d->p + d->pos;
    rd_bytes(d, strlen(name) + 1);
    uint32_t count = (uint32_t)rd(d, 4);
    for (uint32_t i = 0; i < count; i++) {
      size_t len = (size_t)rd(d, 8);
      const char *text = rd_bytes(d, len);
      if (d->nformats < 64) {
        d->fmt_system[d->nformats] = name;
        d->formats[d->nformats] = text;
        d->format_len[d->nformats] = len;
      }
      d->nformats++;
    }
  }
  assert_int_equal(rd(d, 4), 0); /* kallsyms */
  assert_int_equal(rd(d, 4), 0); /* printk formats */
  d->cmdlines_len = (size_t)rd(d, 8);
  d->cmdlines = rd_bytes(d, d->cmdlines_len);
  d->cpus = (uint32_t)rd(d, 4);
  expect(d, "options  \0", 10);
  for (;;) {
    uint16_t id = (uint16_t)rd(d, 2);
    if (id == 0)
      break;
    uint32_t size = (uint32_t)rd(d, 4);
    const char *payload = rd_bytes(d, size);
    assert_true(id < 32);
    if (id == 2 && d->ncpustat < 8)
      d->cpustat[d->ncpustat++] = payload;
    d->options[id] = payload;
    d->option_len[id] = size;
  }
  expect(d, "flyrecord\0", 10);
  for (uint32_t i = 0; i < d->cpus; i++) {
    uint64_t off = rd(d, 8), size = rd(d, 8);
    if (i < 8) {
      d->cpu_offset[i] = off;
      d->cpu_size[i] = size;
    }
    assert_true(size == 0 || (off % 4096 == 0 && off + size <= d->len));
    assert_int_equal(size % 4096, 0);
  }
  assert_int_equal(rd(d, 8), 6);
  expect(d, "[mono]", 6);
  while (d->pos % 4096)
    assert_int_equal(rd(d, 1), 0); /* zero padding to the first page */
}

/* One record of a page: its time and payload. */
struct rec {
  uint64_t ts;
  const unsigned char *data;
  uint32_t len;
};

/* The records of one page, by the spec's rules (§4.1), as libtraceevent's kbuffer reads them;
 * returns their number, *missed the page's count (-1: flagged, not stored). */
static inline int page_records(const unsigned char *pg, struct rec *out, int max, int64_t *missed) {
  uint64_t ts = 0, commit = 0;
  for (int i = 0; i < 8; i++) {
    ts |= (uint64_t)pg[i] << (8 * i);
    commit |= (uint64_t)pg[8 + i] << (8 * i);
  }
  uint32_t len = (uint32_t)(commit & 0x7ffffff);
  const unsigned char *d = pg + 16;
  *missed = 0;
  if (commit & (1u << 31)) {
    *missed = -1;
    if (commit & (1u << 30)) {
      memcpy(missed, d + len, 8);
    }
  }
  int n = 0;
  for (uint32_t at = 0; at < len;) {
    uint32_t w = (uint32_t)d[at] | (uint32_t)d[at + 1] << 8 | (uint32_t)d[at + 2] << 16 |
                 (uint32_t)d[at + 3] << 24;
    uint32_t type_len = w & 31, delta = w >> 5;
    uint32_t array0 = (uint32_t)d[at + 4] | (uint32_t)d[at + 5] << 8 |
                      (uint32_t)d[at + 6] << 16 | (uint32_t)d[at + 7] << 24;
    if (type_len == 30) { /* TIME_EXTEND */
      ts += ((uint64_t)array0 << 27) + delta;
      at += 8;
      continue;
    }
    assert_true(type_len != 29 && type_len != 31); /* the writer writes neither */
    ts += delta;
    assert_true(n < max);
    out[n].ts = ts;
    if (type_len == 0) {
      out[n].data = d + at + 8;
      out[n].len = array0 - 4;
      at += 4 + array0;
    } else {
      out[n].data = d + at + 4;
      out[n].len = type_len * 4;
      at += 4 + type_len * 4;
    }
    n++;
  }
  return n;
}

/* All records of one CPU's data, in order; returns their number. missed[i]: the count of the
 * page record i starts (0 when it does not start one or none was lost). */
static inline int cpu_records(const struct fxt_tbuf *out, const struct dat *d, uint32_t cpu,
                       struct rec *r, int64_t *missed, int max) {
  int n = 0;
  for (uint64_t at = 0; at < d->cpu_size[cpu]; at += 4096) {
    int64_t m;
    int k = page_records((const unsigned char *)out->data + d->cpu_offset[cpu] + at, r + n,
                         max - n, &m);
    assert_true(k > 0); /* no empty page */
    for (int i = 0; i < k; i++)
      missed[n + i] = i == 0 ? m : 0;
    n += k;
  }
  return n;
}

#endif
