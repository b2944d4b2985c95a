/* src/core/filter_int.h - the compiled filter program and what filter_parse.c, filter_eval.c
 * and filter_render.c share. Private to src/core.
 *
 * A program is one buffer, position-independent (offsets only), aligned to 8:
 *
 *   struct fxt_filter_prog   header
 *   struct fxt_filter_insn   insn[ninsn]
 *   pool                     NUL-terminated patterns and CPU masks, addressed by offset
 *
 * The instructions are the kernel's "prog_entry" list after its three passes: insn i
 * evaluates one predicate to r (0 or 1); if r == when, execution continues at target + 1,
 * otherwise at i + 1. Reaching index ninsn means true, ninsn + 1 false. Every target lies in
 * (i, ninsn], so a run executes each instruction at most once.
 */
#ifndef FXTRACE_CORE_FILTER_INT_H
#define FXTRACE_CORE_FILTER_INT_H

#include <fxtrace/filter.h>

#include "mem.h"

#define FXT_FILTER_MAGIC 0x504c5446u /* "FTLP" */

struct fxt_filter_prog {
  uint32_t magic;
  uint32_t size;    /* bytes of the whole program */
  uint16_t ninsn;   /* >= 1 */
  uint16_t nr_cpus; /* CPUs the masks span */
  uint32_t pool;    /* offset of the pool */
};

/* Operators, in the kernel's matching order (its "ops" table). */
enum fxt_filter_op {
  FXT_FOP_GLOB, /* ~  */
  FXT_FOP_NE,   /* != */
  FXT_FOP_EQ,   /* == */
  FXT_FOP_LE,   /* <= */
  FXT_FOP_LT,   /* <  */
  FXT_FOP_GE,   /* >= */
  FXT_FOP_GT,   /* >  */
  FXT_FOP_BAND, /* &  */
  FXT_FOP_MAX
};

/* String match classes (the kernel's regex types). */
enum fxt_filter_match_class {
  FXT_FMATCH_FULL,   /* whole string (also the kernel's MATCH_INDEX) */
  FXT_FMATCH_FRONT,  /* abc* */
  FXT_FMATCH_MIDDLE, /* *abc* */
  FXT_FMATCH_END,    /* *abc */
  FXT_FMATCH_GLOB,   /* anything else with * ? [ \ */
};

/* Instruction kinds. */
enum fxt_filter_kind {
  FXT_FK_FALSE,    /* always 0 (the kernel's no-op predicate: stacktrace, cpu & N) */
  FXT_FK_NUM,      /* integer field vs constant */
  FXT_FK_CPU,      /* the recording CPU vs constant, as a C int */
  FXT_FK_NUM_MASK, /* integer field, read as a CPU number, vs a CPU mask of >= 2 CPUs */
  FXT_FK_CPU_MASK, /* the recording CPU vs a CPU mask of >= 2 CPUs */
  FXT_FK_STR,      /* string field vs pattern */
  FXT_FK_DOUBLE,   /* double field vs integer constant (fxtrace extension) */
};

/* Value sources beyond the event's fields (insn.src). */
enum fxt_filter_src {
  FXT_FSRC_TYPE = 0xff00, /* common_type */
  FXT_FSRC_FLAGS,         /* common_flags */
  FXT_FSRC_PREEMPT,       /* common_preempt_count */
  FXT_FSRC_PID,           /* common_pid */
  FXT_FSRC_CPU,           /* CPU, cpu, common_cpu */
  FXT_FSRC_COMM,          /* COMM, comm */
};

/* How a field's value is read (insn.load). */
enum fxt_filter_load {
  FXT_FLOAD_U,     /* fxt_value.u */
  FXT_FLOAD_I,     /* fxt_value.i */
  FXT_FLOAD_PTR,   /* fxt_value.p */
  FXT_FLOAD_STR,   /* fxt_value.s, with a length: compared like the kernel's dynamic strings */
  FXT_FLOAD_ARRAY, /* fxt_value.p, `size` bytes: compared like the kernel's char arrays */
  FXT_FLOAD_COMMON /* from struct fxt_filter_common (src says which) */
};

struct fxt_filter_insn {
  uint64_t val;    /* FK_NUM: ((constant ^ bias) & mask); FK_CPU: constant (int);
                      FK_DOUBLE: constant (int64); FK_STR, FK_*_MASK: pool offset */
  uint64_t bias;   /* FK_NUM: the sign bit of the size for a signed < <= > >=, else 0 */
  uint64_t mask;   /* FK_NUM, FK_NUM_MASK: all ones over the field's size;
                      FK_STR: pattern length */
  uint32_t size;   /* FK_STR: array size (LOAD_ARRAY, comm: 16) or bound (LOAD_STR) */
  uint16_t src;    /* field index or enum fxt_filter_src */
  uint16_t target; /* see the file comment */
  uint8_t kind;    /* enum fxt_filter_kind */
  uint8_t op;      /* enum fxt_filter_op; FK_STR: enum fxt_filter_match_class */
  uint8_t when;    /* branch when the result equals this */
  uint8_t load;    /* enum fxt_filter_load (FK_STR: bit 7 = negate the match) */
  uint32_t pad;
};

#define FXT_FILTER_NEG 0x80u

/* ---- the kernel's ctype (lib/ctype.c: Latin-1, so 0xa0 is a space, 0xc0-0xff letters) ----- */

static inline bool fxt_filter_isspace(unsigned char c)
{
  return c == ' ' || (c >= 9 && c <= 13) || c == 0xa0;
}

static inline bool fxt_filter_isdigit(unsigned char c)
{
  return c >= '0' && c <= '9';
}

static inline bool fxt_filter_isalnum(unsigned char c)
{
  if (c < 0x80)
    return fxt_filter_isdigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  return c >= 0xc0 && c != 0xd7 && c != 0xf7;
}

/* ---- the parser (filter_parse.c, filter_term.c) ------------------------------------------ */

struct fxt_filter_parser {
  const char *s; /* the text, ending at n (the kernel's NUL after strstrip) */
  uint32_t n;
  const struct fxt_filter_event *ev;
  uint32_t nr_cpus;
  unsigned char *buf; /* the program buffer */
  size_t lo;          /* end of the instructions */
  size_t hi;          /* start of the pool */
  size_t stack_at;    /* the parenthesis stack: [stack_at, size) */
  int code;           /* parse error: enum fxt_filter_errcode */
  uint32_t pos;       /* and its position */
};

/* Character i of the text; 0 past its end, like the kernel's NUL. */
static inline unsigned char fxt_filter_at(const struct fxt_filter_parser *p, uint32_t i)
{
  return i < p->n ? (unsigned char)p->s[i] : 0;
}

/* The kernel's parse_pred: the term starting at text index start into in. Returns its length,
 * FXT_FILTER_EPERM (no message) when it does not start with a field name, FXT_EINVAL with
 * p->code and p->pos set, or FXT_ENOSPC when the pool is full. */
int fxt_filter_parse_pred(struct fxt_filter_parser *p, uint32_t start, struct fxt_filter_insn *in);

/* ---- filter_value.c ---------------------------------------------------------------------- */

/* The kernel's kstrtoull(s, 0, res) / kstrtoll(s, 0, res) on a NUL-terminated token: 0, or
 * non-zero when it is not a number or overflows. kstrtoll stores the two's complement. */
int fxt_filter_kstrtoull(const char *s, uint64_t *res);
int fxt_filter_kstrtoll(const char *s, uint64_t *res);

/* The kernel's cpulist_parse (bitmap_parselist) of s[0..n) into mask (nbits bits, nbits <=
 * FXT_FILTER_MAX_CPUS): true on success. */
bool fxt_filter_cpulist(const char *s, uint32_t n, uint8_t *mask, uint32_t nbits);

/* Bits set in mask[0..nbits); *first = the lowest one (nbits when none). */
uint32_t fxt_filter_mask_weight(const uint8_t *mask, uint32_t nbits, uint32_t *first);

/* Length to the first NUL, at most n. */
static inline size_t fxt_filter_strnlen(const char *s, size_t n)
{
  size_t i = 0;
  while (i < n && s[i])
    i++;
  return i;
}

#endif /* FXTRACE_CORE_FILTER_INT_H */
