/* src/formats/tracedat_write_fn.c - the function tracers' records in trace.dat (see
 * tracedat_write_fn.h).
 */
#include "tracedat_write_fn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/fgraph_text.h"
#include "../base/grow.h"

#define SYM_BASE UINT64_C(0xffffffff81000000)
#define SYM_STEP 16u
#define UNCOUNTED UINT32_MAX /* a record's depth until fxt_td_fn_patch counts it */

/* The kernel's formats (Linux 6.18, events/ftrace/<event>/format), "%u" the ID. */
static const char k_common[] =
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
    "\n";
static const char k_call[] =
    "\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
    "\tfield:unsigned long parent_ip;\toffset:16;\tsize:8;\tsigned:0;\n"
    "\tfield:unsigned long args[];\toffset:24;\tsize:0;\tsigned:0;\n"
    "\n"
    "print fmt: \" %ps <-- %ps\", (void *)REC->ip, (void *)REC->parent_ip\n";
static const char k_entry[] =
    "\tfield:unsigned long func;\toffset:8;\tsize:8;\tsigned:0;\n"
    "\tfield:unsigned int depth;\toffset:16;\tsize:4;\tsigned:0;\n"
    "\tfield:unsigned long args[];\toffset:24;\tsize:0;\tsigned:0;\n"
    "\n"
    "print fmt: \"--> %ps (%u)\", (void *)REC->func, REC->depth\n";
static const char k_exit[] =
    "\tfield:unsigned long func;\toffset:8;\tsize:8;\tsigned:0;\n"
    "\tfield:unsigned int depth;\toffset:16;\tsize:4;\tsigned:0;\n"
    "\tfield:unsigned int overrun;\toffset:20;\tsize:4;\tsigned:0;\n"
    "\tfield:unsigned long long calltime;\toffset:24;\tsize:8;\tsigned:0;\n"
    "\tfield:unsigned long long rettime;\toffset:32;\tsize:8;\tsigned:0;\n"
    "\n"
    "print fmt: \"<-- %ps (%u) (start: %llx  end: %llx) over: %u\", (void *)REC->func, "
    "REC->depth, REC->calltime, REC->rettime, REC->depth\n";

static bool is(const struct fxt_str_ref *s, const char *t, uint32_t n) {
  return s->len == n && s->data != NULL && memcmp(s->data, t, n) == 0;
}

enum fxt_td_fn_kind fxt_td_fn_kind_of(const struct fxt_event *ev) {
  if (!is(&ev->category, "function", 8))
    return FXT_TD_FN_NONE;
  if (ev->type == FXT_EVENT_DURATION_COMPLETE)
    return FXT_TD_FN_GRAPH;
  if (ev->type == FXT_EVENT_INSTANT && ev->num_args == 1 &&
      ev->args[0].type == FXT_ARG_STRING && is(&ev->args[0].name, "parent", 6))
    return FXT_TD_FN_CALL; /* as text.c's is_function_call */
  return FXT_TD_FN_NONE;
}

int fxt_td_fn_reserve(struct fxt_td_fn *f, struct fxt_td_ev_table *t) {
  if (fxt_td_ev_take_id(t, 1, &f->id_call) != 0 || fxt_td_ev_take_id(t, 11, &f->id_entry) != 0 ||
      fxt_td_ev_take_id(t, 10, &f->id_exit) != 0)
    return FXT_E2BIG;
  f->on = true;
  return 0;
}

/* ---- names and addresses --------------------------------------------------------------- */

static uint64_t hash_of(const char *p, uint32_t n) { /* FNV-1a */
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (uint32_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)p[i]) * UINT64_C(0x100000001b3);
  return h;
}

/* The address of a name, given one on first use; 0 when memory ran out. */
static uint64_t addr_of(struct fxt_td_fn *f, const struct fxt_str_ref *s) {
  const char *p = s->data ? s->data : "";
  uint64_t *head = fxt_jmap_get(&f->map, hash_of(p, s->len), 0);
  if (head == NULL)
    return 0;
  for (uint64_t i = head[0]; i != 0; i = f->syms[i - 1].next)
    if (f->syms[i - 1].len == s->len && memcmp(f->syms[i - 1].name, p, s->len) == 0)
      return SYM_BASE + SYM_STEP * i;
  char *name = malloc((size_t)s->len + 1);
  if (name == NULL || !fxt_grow((void **)&f->syms, &f->cap_syms, (size_t)f->nsyms + 1,
                                sizeof *f->syms, 64)) {
    free(name);
    return 0;
  }
  memcpy(name, p, s->len);
  name[s->len] = '\0';
  f->syms[f->nsyms] = (struct fxt_td_fn_sym){name, s->len, (uint32_t)head[0]};
  head[0] = ++f->nsyms;
  return SYM_BASE + SYM_STEP * f->nsyms;
}

/* ---- records ------------------------------------------------------------------------------ */

static void put_le(unsigned char *p, uint64_t v, uint32_t bytes) {
  for (uint32_t i = 0; i < bytes; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, uint32_t bytes) {
  uint64_t v = 0;
  for (uint32_t i = 0; i < bytes; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* The common fields (type, flags 0, preempt count 0, pid) and room for the rest, zeroed. */
static unsigned char *start_record(struct fxt_tbuf *out, uint16_t id, int32_t pid,
                                   uint32_t size) {
  out->len = 0;
  if (!fxt_tbuf_reserve(out, size))
    return NULL;
  unsigned char *p = (unsigned char *)out->data;
  memset(p, 0, size);
  put_le(p, id, 2);
  put_le(p + 4, (uint32_t)pid, 4);
  out->len = size;
  return p;
}

int fxt_td_fn_call(struct fxt_td_fn *f, const struct fxt_event *ev, int32_t pid,
                   struct fxt_tbuf *out) {
  uint64_t ip = addr_of(f, &ev->name), parent = addr_of(f, &ev->args[0].value.str);
  unsigned char *p = start_record(out, f->id_call, pid, FXT_TD_FN_CALL_BYTES);
  if (ip == 0 || parent == 0 || p == NULL)
    return FXT_ENOMEM;
  put_le(p + 8, ip, 8);
  put_le(p + 16, parent, 8);
  f->calls++;
  return 0;
}

int fxt_td_fn_graph(struct fxt_td_fn *f, const struct fxt_event *ev, int32_t pid, bool exit,
                    uint64_t start, uint64_t end, struct fxt_tbuf *out) {
  uint64_t func = addr_of(f, &ev->name);
  unsigned char *p = start_record(out, exit ? f->id_exit : f->id_entry, pid,
                                  exit ? FXT_TD_FN_EXIT_BYTES : FXT_TD_FN_ENTRY_BYTES);
  if (func == 0 || p == NULL)
    return FXT_ENOMEM;
  put_le(p + 8, func, 8);
  uint32_t depth;
  put_le(p + 16, fxt_fgraph_depth(ev, &depth) && depth != UNCOUNTED ? depth : UNCOUNTED, 4);
  if (exit) {
    put_le(p + 24, start, 8);
    put_le(p + 32, end, 8);
    f->exits++;
  } else {
    f->entries++;
  }
  return 0;
}

/* ---- depth, as the pages are made ------------------------------------------------------------- */

void fxt_td_fn_restart(struct fxt_td_fn *f) {
  fxt_jmap_free(&f->open);
  memset(&f->open, 0, sizeof f->open);
}

const void *fxt_td_fn_patch(struct fxt_td_fn *f, const void *payload, uint32_t size,
                            unsigned char *buf) {
  const unsigned char *p = payload;
  if (!f->on || size < FXT_TD_FN_ENTRY_BYTES)
    return payload;
  uint16_t type = (uint16_t)get_le(p, 2);
  bool exit = type == f->id_exit && size == FXT_TD_FN_EXIT_BYTES;
  if (!exit && !(type == f->id_entry && size == FXT_TD_FN_ENTRY_BYTES))
    return payload;
  if (get_le(p + 16, 4) != UNCOUNTED)
    return payload; /* the recorded depth */
  uint64_t *open = fxt_jmap_get(&f->open, get_le(p + 4, 4), 0);
  if (open == NULL)
    return NULL;
  /* An entry is at the depth of the calls open before it, and opens one; an exit closes one
   * and is at the depth of the rest. */
  uint64_t depth = exit ? (open[0] > 0 ? --open[0] : 0) : open[0]++;
  memcpy(buf, p, size);
  put_le(buf + 16, depth > UINT32_MAX ? UINT32_MAX : depth, 4);
  return buf;
}

/* ---- the head's sections ------------------------------------------------------------------ */

static void put_u32(struct fxt_tbuf *b, uint32_t v) {
  unsigned char p[4];
  put_le(p, v, 4);
  fxt_tbuf_put(b, (const char *)p, 4);
}

static void put_format(struct fxt_tbuf *b, const char *name, uint16_t id, const char *fields) {
  char head[64];
  int n = snprintf(head, sizeof head, "name: %s\nID: %u\n", name, (unsigned)id);
  size_t size = (size_t)n + strlen(k_common) + strlen(fields);
  unsigned char len[8];
  put_le(len, size, 8);
  fxt_tbuf_put(b, (const char *)len, 8);
  fxt_tbuf_put(b, head, (size_t)n);
  fxt_tbuf_puts(b, k_common);
  fxt_tbuf_puts(b, fields);
}

void fxt_td_fn_formats(const struct fxt_td_fn *f, struct fxt_tbuf *b) {
  if (!f->on) {
    put_u32(b, 0);
    return;
  }
  put_u32(b, 3);
  put_format(b, "function", f->id_call, k_call);
  put_format(b, "funcgraph_entry", f->id_entry, k_entry);
  put_format(b, "funcgraph_exit", f->id_exit, k_exit);
}

void fxt_td_fn_kallsyms(const struct fxt_td_fn *f, struct fxt_tbuf *b) {
  size_t at = b->len;
  put_u32(b, 0);
  for (uint32_t i = 0; i < f->nsyms; i++) {
    char addr[24];
    int n = snprintf(addr, sizeof addr, "%016llx t ",
                     (unsigned long long)(SYM_BASE + SYM_STEP * (i + 1)));
    fxt_tbuf_put(b, addr, (size_t)n);
    /* one line each: a newline in a name would start another */
    for (uint32_t k = 0; k < f->syms[i].len; k++)
      fxt_tbuf_put(b, f->syms[i].name[k] == '\n' ? " " : f->syms[i].name + k, 1);
    fxt_tbuf_put(b, "\n", 1);
  }
  if (!b->oom)
    put_le((unsigned char *)b->data + at, (uint32_t)(b->len - at - 4), 4);
}

void fxt_td_fn_free(struct fxt_td_fn *f) {
  for (uint32_t i = 0; i < f->nsyms; i++)
    free(f->syms[i].name);
  free(f->syms);
  fxt_jmap_free(&f->map);
  fxt_jmap_free(&f->open);
  memset(f, 0, sizeof *f);
}
