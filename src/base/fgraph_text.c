/* src/base/fgraph_text.c - the lines of the kernel's function_graph layout (fgraph_text.h). */
#include "fgraph_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "text.h"

static bool is(const struct fxt_str_ref *s, const char *t, uint32_t n) {
  return s->len == n && s->data != NULL && memcmp(s->data, t, n) == 0;
}

bool fxt_fgraph_is_slice_ev(const struct fxt_event *ev) {
  return ev->type == FXT_EVENT_DURATION_COMPLETE && is(&ev->category, "function", 8);
}

bool fxt_fgraph_depth(const struct fxt_event *ev, uint32_t *depth) {
  for (uint32_t i = 0; i < ev->num_args && i < FXT_MAX_ARGS; i++)
    if (ev->args[i].type == FXT_ARG_UINT32 && is(&ev->args[i].name, "depth", 5)) {
      *depth = ev->args[i].value.u32;
      return true;
    }
  return false;
}

/* trace_functions_graph.c's trace_opts (the layout's), by name. */
static const struct fxt_fgraph_option k_options[] = {
    {"funcgraph-abstime", FXT_FGRAPH_ABSTIME, true},
    {"funcgraph-cpu", FXT_FGRAPH_NO_CPU, false},
    {"funcgraph-duration", FXT_FGRAPH_NO_DURATION, false},
    {"funcgraph-overhead", FXT_FGRAPH_NO_OVERHEAD, false},
    {"funcgraph-proc", FXT_FGRAPH_PROC, true},
    {"funcgraph-tail", FXT_FGRAPH_TAIL, true},
};

const struct fxt_fgraph_option *fxt_fgraph_option(size_t i) {
  return i < sizeof k_options / sizeof k_options[0] ? &k_options[i] : NULL;
}

/* trace_set_options: a leading "no" clears. */
bool fxt_fgraph_option_word(const char *word, size_t len, uint32_t *opts) {
  bool on = !(len > 2 && memcmp(word, "no", 2) == 0);
  if (!on) {
    word += 2;
    len -= 2;
  }
  for (size_t i = 0; i < sizeof k_options / sizeof k_options[0]; i++)
    if (strlen(k_options[i].name) == len && memcmp(k_options[i].name, word, len) == 0) {
      *opts = on == k_options[i].set_is_on ? *opts | k_options[i].bit : *opts & ~k_options[i].bit;
      return true;
    }
  return false;
}

/* The kernel's header: trace.c's "# tracer: %s\n#\n", then __print_graph_headers_flags with
 * funcgraph-cpu and funcgraph-duration. */
void fxt_fgraph_header(struct fxt_tbuf *b) {
  fxt_fgraph_header_opts(b, 0);
}

/* __print_graph_headers_flags: each column's title and its bars. */
void fxt_fgraph_header_opts(struct fxt_tbuf *b, uint32_t opts) {
  bool abst = opts & FXT_FGRAPH_ABSTIME, cpu = !(opts & FXT_FGRAPH_NO_CPU),
       proc = opts & FXT_FGRAPH_PROC, dur = !(opts & FXT_FGRAPH_NO_DURATION);
  fxt_tbuf_puts(b, "# tracer: function_graph\n#\n#");
  fxt_tbuf_puts(b, abst ? "     TIME       " : "");
  fxt_tbuf_puts(b, cpu ? " CPU" : "");
  fxt_tbuf_puts(b, proc ? "  TASK/PID       " : "");
  fxt_tbuf_puts(b, dur ? "  DURATION   " : "");
  fxt_tbuf_puts(b, "               FUNCTION CALLS\n#");
  fxt_tbuf_puts(b, abst ? "      |         " : "");
  fxt_tbuf_puts(b, cpu ? " |  " : "");
  fxt_tbuf_puts(b, proc ? "   |    |        " : "");
  fxt_tbuf_puts(b, dur ? "   |   |      " : "");
  fxt_tbuf_puts(b, "               |   |   |   |\n");
}

void fxt_fgraph_cpus_free(struct fxt_fgraph_cpus *s) {
  free(s->cpu);
  s->cpu = NULL;
  s->cap = 0;
}

unsigned fxt_fgraph_cpu_width(uint32_t max_cpu) {
  unsigned w = 1;
  for (uint32_t c = max_cpu; c >= 10; c /= 10)
    w++;
  return w;
}

static void put_udec(struct fxt_tbuf *b, uint64_t v) {
  char buf[24], *p = buf + sizeof buf;
  do {
    *--p = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  fxt_tbuf_put(b, p, (size_t)(buf + sizeof buf - p));
}

static void put_spaces(struct fxt_tbuf *b, size_t n) {
  static const char k_sp[] = "                                                                ";
  for (size_t k; n > 0; n -= k) {
    k = n < sizeof k_sp - 1 ? n : sizeof k_sp - 1;
    fxt_tbuf_put(b, k_sp, k);
  }
}

/* print_graph_cpu: " %*d) ". */
static void put_cpu(struct fxt_tbuf *b, unsigned width, uint32_t cpu) {
  char buf[12], *p = buf + sizeof buf;
  uint32_t v = cpu;
  do {
    *--p = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  size_t len = (size_t)(buf + sizeof buf - p);
  fxt_tbuf_put(b, " ", 1);
  put_spaces(b, len < width ? width - len : 0);
  fxt_tbuf_put(b, p, len);
  fxt_tbuf_put(b, ") ", 2);
}

/* print_graph_proc: "comm-pid" (comm cut to 7 bytes) centred in 14 columns. */
static void put_proc(struct fxt_tbuf *b, const struct fxt_fgraph_cpu *t) {
  const char *comm = t->named ? t->comm : "<...>";
  size_t clen = t->named ? t->comm_len : 5;
  if (clen > 7)
    clen = 7;
  char buf[24], *p = buf + sizeof buf;
  uint64_t v = t->tid;
  do {
    *--p = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  size_t plen = (size_t)(buf + sizeof buf - p), len = clen + plen + 1;
  size_t spaces = len < 14 ? 14 - len : 0;
  put_spaces(b, spaces / 2);
  fxt_tbuf_put(b, comm, clen);
  fxt_tbuf_put(b, "-", 1);
  fxt_tbuf_put(b, p, plen);
  put_spaces(b, spaces - spaces / 2);
}

/* verif_pid's context-switch block when the CPU's lines change thread, then the CPU column. */
void fxt_fgraph_prologue(struct fxt_fgraph_cpus *s, struct fxt_tbuf *b, uint32_t cpu,
                         const struct fxt_fgraph_thread *t) {
  fxt_fgraph_prologue_at(s, b, cpu, t, 0);
}

/* print_graph_abs_time: seconds in 5 columns, microseconds in 6, "|  ". */
static void put_abstime(struct fxt_tbuf *b, uint64_t ns) {
  char buf[48];
  int n = snprintf(buf, sizeof buf, "%5llu.%06llu |  ", (unsigned long long)(ns / 1000000000u),
                   (unsigned long long)(ns % 1000000000u / 1000u));
  fxt_tbuf_put(b, buf, (size_t)n);
}

void fxt_fgraph_prologue_at(struct fxt_fgraph_cpus *s, struct fxt_tbuf *b, uint32_t cpu,
                            const struct fxt_fgraph_thread *t, uint64_t ts_ns) {
  if (cpu >= s->cap) {
    size_t old = s->cap;
    if (!fxt_grow((void **)&s->cpu, &s->cap, (size_t)cpu + 1, sizeof *s->cpu, 8)) {
      b->oom = true;
      return;
    }
    memset(s->cpu + old, 0, (s->cap - old) * sizeof *s->cpu);
  }
  struct fxt_fgraph_cpu *c = &s->cpu[cpu];
  if (!c->seen || c->key != t->key) {
    struct fxt_fgraph_cpu now = {.seen = true, .named = t->comm != NULL, .key = t->key,
                                 .tid = t->tid};
    now.comm_len = (uint8_t)(t->comm_len < sizeof now.comm ? t->comm_len : sizeof now.comm);
    if (t->comm != NULL)
      memcpy(now.comm, t->comm, now.comm_len);
    if (c->seen) {
      size_t at = b->len;
      fxt_tbuf_puts(b, " ------------------------------------------\n");
      put_cpu(b, s->cpu_width, cpu);
      put_proc(b, c);
      fxt_tbuf_puts(b, " => ");
      put_proc(b, &now);
      fxt_tbuf_puts(b, "\n ------------------------------------------\n\n");
      fxt_text_utf8_fix(b, at);
    }
    *c = now;
  }
  if (s->opts & FXT_FGRAPH_ABSTIME)
    put_abstime(b, ts_ns);
  if (!(s->opts & FXT_FGRAPH_NO_CPU))
    put_cpu(b, s->cpu_width, cpu);
  if (s->opts & FXT_FGRAPH_PROC) {
    size_t at = b->len;
    put_proc(b, c);
    fxt_tbuf_puts(b, " | ");
    fxt_text_utf8_fix(b, at);
  }
}

/* trace_find_mark: the first threshold the duration exceeds. */
static char mark_of(uint64_t ns) {
  static const struct {
    uint64_t ns;
    char sym;
  } k_marks[] = {{1000000000u, '$'}, {100000000u, '@'}, {10000000u, '*'},
                 {1000000u, '#'},    {100000u, '!'},    {10000u, '+'}};
  for (size_t i = 0; i < sizeof k_marks / sizeof k_marks[0]; i++)
    if (ns > k_marks[i].ns)
      return k_marks[i].sym;
  return ' ';
}

/* print_graph_duration: the mark, microseconds with the nanoseconds truncated so that the
 * number has at most 7 digits (and its point), " us ", padding to 8, "|  ". */
static void put_duration(struct fxt_tbuf *b, uint32_t opts, uint64_t ns) {
  if (opts & FXT_FGRAPH_NO_DURATION)
    return;
  char head[2] = {opts & FXT_FGRAPH_NO_OVERHEAD ? ' ' : mark_of(ns), ' '};
  fxt_tbuf_put(b, head, 2);
  size_t at = b->len;
  put_udec(b, ns / 1000);
  size_t len = b->len - at;
  if (len < 7) {
    unsigned rem = (unsigned)(ns % 1000);
    char frac[4] = {'.', (char)('0' + rem / 100), (char)('0' + rem / 10 % 10),
                    (char)('0' + rem % 10)};
    size_t digits = 8 - len - 1 < 3 ? 8 - len - 1 : 3; /* snprintf's size min(5, 8 - len) */
    fxt_tbuf_put(b, frac, digits + 1);
    len += digits + 1;
  }
  fxt_tbuf_puts(b, " us ");
  put_spaces(b, len < 8 ? 8 - len : 0);
  fxt_tbuf_puts(b, "|  ");
}

void fxt_fgraph_call(struct fxt_tbuf *b, uint32_t depth, const char *name, size_t len,
                     bool nested, uint64_t dur_ns) {
  fxt_fgraph_call_opts(b, 0, depth, name, len, nested, dur_ns);
}

/* print_graph_duration's FLAGS_FILL_FULL: the empty duration column, when it is printed. */
static void put_no_duration(struct fxt_tbuf *b, uint32_t opts) {
  if (!(opts & FXT_FGRAPH_NO_DURATION))
    fxt_tbuf_puts(b, "              |  ");
}

void fxt_fgraph_call_opts(struct fxt_tbuf *b, uint32_t opts, uint32_t depth, const char *name,
                          size_t len, bool nested, uint64_t dur_ns) {
  size_t at = b->len;
  if (nested)
    put_no_duration(b, opts);
  else
    put_duration(b, opts, dur_ns);
  put_spaces(b, (size_t)depth * 2);
  fxt_tbuf_put(b, name ? name : "", name ? len : 0);
  fxt_tbuf_puts(b, nested ? "() {\n" : "();\n");
  fxt_text_utf8_fix(b, at);
}

void fxt_fgraph_return(struct fxt_tbuf *b, uint32_t depth, uint64_t dur_ns) {
  fxt_fgraph_return_opts(b, 0, depth, NULL, 0, dur_ns);
}

/* print_graph_return: "}", or "} /<star> f <star>/" with funcgraph-tail. */
void fxt_fgraph_return_opts(struct fxt_tbuf *b, uint32_t opts, uint32_t depth,
                            const char *name, size_t len, uint64_t dur_ns) {
  size_t at = b->len;
  put_duration(b, opts, dur_ns);
  put_spaces(b, (size_t)depth * 2);
  if (!(opts & FXT_FGRAPH_TAIL)) {
    fxt_tbuf_puts(b, "}\n");
    return;
  }
  fxt_tbuf_puts(b, "} /* ");
  fxt_tbuf_put(b, name ? name : "", name ? len : 0);
  fxt_tbuf_puts(b, " */\n");
  fxt_text_utf8_fix(b, at);
}

void fxt_fgraph_comment_start(struct fxt_tbuf *b, int64_t depth) {
  fxt_fgraph_comment_start_opts(b, 0, depth);
}

void fxt_fgraph_comment_start_opts(struct fxt_tbuf *b, uint32_t opts, int64_t depth) {
  put_no_duration(b, opts);
  if (depth > 0)
    put_spaces(b, (size_t)(depth + 1) * 2);
  fxt_tbuf_puts(b, "/* ");
}
