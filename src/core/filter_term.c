/* src/core/filter_term.c - one "field op value" term of a filter: the kernel's parse_pred
 * (kernel/trace/trace_events_filter.c), with its field lookup (trace_find_event_field), its
 * checks in its order, and the instruction each form compiles to (filter_int.h). Numbers are
 * read as kstrtoll/kstrtoull read them, CPU lists as bitmap_parselist does (filter_value.c).
 */
#include "filter_int.h"

/* The kernel's filter_type of a field. */
enum ftype { FT_OTHER, FT_STATIC_STRING, FT_DYN_STRING, FT_CPU, FT_COMM, FT_STACKTRACE };

struct finfo {
  uint8_t ftype;    /* enum ftype */
  uint8_t load;     /* enum fxt_filter_load */
  bool is_signed;
  bool is_double;   /* fxtrace extension */
  uint16_t src;     /* field index or enum fxt_filter_src */
  uint32_t size;    /* the kernel's field->size (generic fields: 0) */
  uint32_t strsize; /* strings: array size, or the bound of a STR */
};

static const char *const op_text[FXT_FOP_MAX] = {"~", "!=", "==", "<=", "<", ">=", ">", "&"};

static inline unsigned char at(const struct fxt_filter_parser *p, uint32_t i)
{
  return fxt_filter_at(p, i);
}

static void parse_error(struct fxt_filter_parser *p, int code, uint32_t pos)
{
  p->code = code;
  p->pos = pos;
}

static bool has_prefix(const struct fxt_filter_parser *p, uint32_t i, const char *prefix)
{
  for (; *prefix; prefix++, i++)
    if (at(p, i) != (unsigned char)*prefix)
      return false;
  return true;
}

/* n bytes of pool; returns the offset or 0 when full. */
static size_t alloc_pool(struct fxt_filter_parser *p, size_t n)
{
  if (p->hi - p->lo < n)
    return 0;
  p->hi -= n;
  return p->hi;
}

/* ---- fields ------------------------------------------------------------------------------- */

static bool name_is(const char *name, const struct fxt_filter_parser *p, uint32_t at_, uint32_t len)
{
  if (!name)
    return false;
  for (uint32_t k = 0; k < len; k++)
    if ((unsigned char)name[k] != at(p, at_ + k)) /* a shorter name stops at its NUL */
      return false;
  return name[len] == '\0';
}

static void event_field(const struct fxt_field *f, uint16_t index, struct finfo *fi)
{
  static const uint8_t sizes[] = {0, 1, 2, 4, 8, 1, 2, 4, 8, 1, 8, 8};
  memset(fi, 0, sizeof *fi);
  fi->src = index;
  fi->load = FXT_FLOAD_U;
  switch (f->type) {
  case FXT_TYPE_S8:
  case FXT_TYPE_S16:
  case FXT_TYPE_S32:
  case FXT_TYPE_S64:
    fi->is_signed = true;
    fi->load = FXT_FLOAD_I;
    break;
  case FXT_TYPE_DOUBLE:
    fi->is_signed = true; /* numbers are read as signed */
    fi->is_double = true;
    break;
  case FXT_TYPE_PTR:
    fi->load = FXT_FLOAD_PTR;
    break;
  case FXT_TYPE_STR:
    fi->ftype = FT_DYN_STRING;
    fi->load = FXT_FLOAD_STR;
    fi->size = 4; /* a __data_loc word */
    fi->strsize = f->bound < FXT_STR_MAX_BOUND ? f->bound : FXT_STR_MAX_BOUND;
    return;
  case FXT_TYPE_BYTES:
    fi->ftype = FT_STATIC_STRING;
    fi->load = FXT_FLOAD_ARRAY;
    fi->size = f->bound;
    fi->strsize = f->bound;
    return;
  default:
    break;
  }
  fi->size = sizes[f->type];
}

/* The kernel's trace_find_event_field: the event's fields, then the generic ones, then the
 * common ones. */
static bool find_field(const struct fxt_filter_parser *p, uint32_t name, uint32_t len, struct finfo *fi)
{
  static const struct {
    const char *name;
    uint8_t ftype;
    bool is_signed;
    uint16_t src;
    uint8_t size;
  } builtin[] = {
      {"CPU", FT_CPU, true, FXT_FSRC_CPU, 0},
      {"cpu", FT_CPU, true, FXT_FSRC_CPU, 0},
      {"common_cpu", FT_CPU, true, FXT_FSRC_CPU, 0},
      {"COMM", FT_COMM, false, FXT_FSRC_COMM, 0},
      {"comm", FT_COMM, false, FXT_FSRC_COMM, 0},
      {"stacktrace", FT_STACKTRACE, false, 0, 0},
      {"STACKTRACE", FT_STACKTRACE, false, 0, 0},
      {"common_type", FT_OTHER, false, FXT_FSRC_TYPE, 2},
      {"common_flags", FT_OTHER, false, FXT_FSRC_FLAGS, 1},
      {"common_preempt_count", FT_OTHER, false, FXT_FSRC_PREEMPT, 1},
      {"common_pid", FT_OTHER, true, FXT_FSRC_PID, 4},
  };
  for (uint32_t k = 0; k < p->ev->nfields; k++) {
    if (name_is(p->ev->fields[k].name, p, name, len)) {
      event_field(&p->ev->fields[k], (uint16_t)k, fi);
      return true;
    }
  }
  for (size_t k = 0; k < sizeof builtin / sizeof builtin[0]; k++) {
    if (name_is(builtin[k].name, p, name, len)) {
      memset(fi, 0, sizeof *fi);
      fi->ftype = builtin[k].ftype;
      fi->is_signed = builtin[k].is_signed;
      fi->src = builtin[k].src;
      fi->size = builtin[k].size;
      fi->load = FXT_FLOAD_COMMON;
      fi->strsize = 16; /* comm: TASK_COMM_LEN */
      return true;
    }
  }
  return false;
}

static bool is_string_field(const struct finfo *fi)
{
  return fi->ftype == FT_STATIC_STRING || fi->ftype == FT_DYN_STRING || fi->ftype == FT_COMM;
}

/* ---- instructions --------------------------------------------------------------------------- */

/* The kernel's select_comparison_fn plus its predicate: integer compare on the field's size. */
static void set_num(struct fxt_filter_insn *in, const struct finfo *fi, int op, uint64_t val,
                    bool is_signed)
{
  if (fi->size != 1 && fi->size != 2 && fi->size != 4 && fi->size != 8) {
    in->kind = FXT_FK_FALSE; /* FILTER_PRED_FN_NOP */
    return;
  }
  const uint32_t bits = fi->size * 8;
  const uint64_t mask = bits == 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
  const bool ordered = op == FXT_FOP_LT || op == FXT_FOP_LE || op == FXT_FOP_GT ||
                       op == FXT_FOP_GE;
  in->kind = FXT_FK_NUM;
  in->op = (uint8_t)op;
  in->mask = mask;
  in->bias = is_signed && ordered ? (uint64_t)1 << (bits - 1) : 0;
  in->val = (val ^ in->bias) & mask;
  in->src = fi->src;
  in->load = fi->load;
}

/* The kernel's filter_parse_regex + filter_build_regex: classifies a ~ pattern. *pat and *plen
 * shrink to the part compared; *neg is set for a leading '!'. */
static int classify(const char **pat, uint32_t *plen, bool *neg)
{
  const char *b = *pat;
  uint32_t len = *plen;
  int type = FXT_FMATCH_FULL;
  *neg = false;
  if (len > 0 && b[0] == '!') {
    *neg = true;
    b++;
    len--;
  }
  *pat = b;
  *plen = len;
  if (len > 0 && fxt_filter_isdigit((unsigned char)b[0]))
    return FXT_FMATCH_FULL; /* MATCH_INDEX, matched in full */
  for (uint32_t i = 0; i < len; i++) {
    if (b[i] == '*') {
      if (i == 0) {
        type = FXT_FMATCH_END;
      } else if (i == len - 1) {
        type = type == FXT_FMATCH_END ? FXT_FMATCH_MIDDLE : FXT_FMATCH_FRONT;
        len = i; /* buff[i] = 0 */
        break;
      } else {
        return FXT_FMATCH_GLOB;
      }
    } else if (b[i] == '[' || b[i] == '?' || b[i] == '\\') {
      return FXT_FMATCH_GLOB;
    }
  }
  if (len > 0 && b[0] == '*') {
    b++;
    len--;
  }
  *pat = b;
  *plen = len;
  return type;
}

/* ---- one term ------------------------------------------------------------------------------ */

/* A number's text, as the kernel copies it into its 24-byte buffer: from s (the term's offset
 * of its first character) to the end of the run of letters and digits at *i, which *i is moved
 * past. 0, or FXT_EINVAL with "operand too long" when it does not fit with its terminator. */
#define OPERAND_MAX 24
static int read_operand(struct fxt_filter_parser *p, uint32_t start, uint32_t s, uint32_t *i,
                        char num[OPERAND_MAX])
{
  while (fxt_filter_isalnum(at(p, start + *i)))
    (*i)++;
  if (*i - s >= OPERAND_MAX) {
    parse_error(p, FXT_FILTER_ERR_OPERAND_TOO_LONG, start + 1 + *i);
    return FXT_EINVAL;
  }
  memcpy(num, p->s + start + s, *i - s);
  num[*i - s] = '\0';
  return 0;
}

/* `field.function op value`: user space has no kernel symbols, so every form ends in the
 * kernel's error for an unknown symbol, after its other checks. */
static int parse_function(struct fxt_filter_parser *p, uint32_t start, uint32_t i, const struct finfo *fi,
                          int op)
{
  const uint32_t pos = start + 1, s = i;
  if (fi->size != sizeof(long)) {
    parse_error(p, FXT_FILTER_ERR_ILLEGAL_FIELD_OP, pos + i);
    return FXT_EINVAL;
  }
  if (op != FXT_FOP_NE && op != FXT_FOP_EQ) {
    parse_error(p, FXT_FILTER_ERR_INVALID_OP, pos + i);
    return FXT_EINVAL;
  }
  if (fxt_filter_isdigit(at(p, start + i))) {
    char num[OPERAND_MAX];
    uint64_t ip;
    int rc = read_operand(p, start, s, &i, num);
    if (rc)
      return rc;
    if (fxt_filter_kstrtoull(num, &ip) != 0 ||
        (sizeof(unsigned long) < sizeof(uint64_t) && ip > 0xffffffffu)) { /* kstrtoul */
      parse_error(p, FXT_FILTER_ERR_INVALID_VALUE, pos + i);
      return FXT_EINVAL;
    }
  } else {
    while (at(p, start + i) && !fxt_filter_isspace(at(p, start + i)))
      i++;
  }
  parse_error(p, FXT_FILTER_ERR_NO_FUNCTION, pos + i);
  return FXT_EINVAL;
}

/* `field op CPUS{list}`; i is at "CPUS". */
static int parse_cpus(struct fxt_filter_parser *p, uint32_t start, uint32_t i, const struct finfo *fi,
                      int op, struct fxt_filter_insn *in)
{
  const uint32_t pos = start + 1;
  uint8_t mask[FXT_FILTER_MAX_CPUS / 8];
  uint32_t weight, first;
  if ((fi->ftype != FT_CPU && fi->ftype != FT_OTHER) || fi->is_double) {
    parse_error(p, FXT_FILTER_ERR_ILLEGAL_FIELD_OP, pos + i);
    return FXT_EINVAL;
  }
  if (op != FXT_FOP_EQ && op != FXT_FOP_NE && op != FXT_FOP_BAND) {
    parse_error(p, FXT_FILTER_ERR_ILLEGAL_FIELD_OP, pos + i);
    return FXT_EINVAL;
  }
  i += 4;
  if (at(p, start + i++) != '{') {
    parse_error(p, FXT_FILTER_ERR_MISSING_BRACE_OPEN, pos + i);
    return FXT_EINVAL;
  }
  const uint32_t maskstart = i;
  while (at(p, start + i) && at(p, start + i) != '}')
    i++;
  if (at(p, start + i) != '}') {
    parse_error(p, FXT_FILTER_ERR_MISSING_BRACE_CLOSE, pos + i);
    return FXT_EINVAL;
  }
  if (maskstart == i ||
      !fxt_filter_cpulist(p->s + start + maskstart, i - maskstart, mask, p->nr_cpus)) {
    parse_error(p, FXT_FILTER_ERR_INVALID_CPULIST, pos + i);
    return FXT_EINVAL;
  }
  i++;
  weight = fxt_filter_mask_weight(mask, p->nr_cpus, &first);
  in->src = fi->src;
  in->load = fi->load;
  if (weight == 1) { /* a single CPU is a scalar */
    if (op == FXT_FOP_BAND)
      op = FXT_FOP_EQ;
    if (fi->ftype == FT_CPU) {
      in->kind = FXT_FK_CPU;
      in->op = (uint8_t)op;
      in->val = first;
    } else {
      set_num(in, fi, op, first, false);
    }
    return (int)i;
  }
  const size_t bytes = (p->nr_cpus + 7) / 8;
  const size_t off = alloc_pool(p, bytes);
  if (!off)
    return FXT_ENOSPC;
  memcpy(p->buf + off, mask, bytes);
  in->op = (uint8_t)op;
  in->val = off;
  if (fi->ftype == FT_CPU) {
    in->kind = FXT_FK_CPU_MASK;
  } else {
    set_num(in, fi, op, 0, false);
    if (in->kind == FXT_FK_NUM) {
      in->kind = FXT_FK_NUM_MASK;
      in->val = off;
      in->bias = 0;
    }
  }
  return (int)i;
}

/* `field op "string"`; i is at the quote. */
static int parse_string(struct fxt_filter_parser *p, uint32_t start, uint32_t i, const struct finfo *fi,
                        int op, struct fxt_filter_insn *in)
{
  const uint32_t pos = start + 1;
  const unsigned char q = at(p, start + i);
  bool neg = false;
  uint32_t s = i;
  if (op == FXT_FOP_NE) {
    neg = true;
  } else if (op != FXT_FOP_GLOB && op != FXT_FOP_EQ) {
    parse_error(p, FXT_FILTER_ERR_ILLEGAL_FIELD_OP, pos + i);
    return FXT_EINVAL;
  }
  if (!is_string_field(fi)) {
    parse_error(p, FXT_FILTER_ERR_EXPECT_DIGIT, pos + i);
    return FXT_EINVAL;
  }
  for (i++; at(p, start + i); i++)
    if (at(p, start + i) == q)
      break;
  if (!at(p, start + i)) {
    parse_error(p, FXT_FILTER_ERR_MISSING_QUOTE, pos + i);
    return FXT_EINVAL;
  }
  s++;
  if (i - s > FXT_FILTER_MAX_STR) {
    parse_error(p, FXT_FILTER_ERR_OPERAND_TOO_LONG, pos + i);
    return FXT_EINVAL;
  }
  const char *pat = p->s + start + s;
  uint32_t plen = i - s;
  int type = FXT_FMATCH_FULL;
  if (op == FXT_FOP_GLOB)
    type = classify(&pat, &plen, &neg);
  const size_t off = alloc_pool(p, plen + 1);
  if (!off)
    return FXT_ENOSPC;
  memcpy(p->buf + off, pat, plen);
  p->buf[off + plen] = '\0';
  in->kind = FXT_FK_STR;
  in->op = (uint8_t)type;
  in->val = off;
  in->mask = plen;
  in->size = fi->strsize;
  in->src = fi->src;
  in->load = (uint8_t)(fi->load | (neg ? FXT_FILTER_NEG : 0));
  return (int)(i + 1);
}

/* `field op number`; i is at the digit or '-'. */
static int parse_number(struct fxt_filter_parser *p, uint32_t start, uint32_t i, const struct finfo *fi,
                        int op, struct fxt_filter_insn *in)
{
  const uint32_t pos = start + 1, s = i;
  char num[OPERAND_MAX];
  uint64_t val;
  if (is_string_field(fi)) {
    parse_error(p, FXT_FILTER_ERR_EXPECT_STRING, pos + i);
    return FXT_EINVAL;
  }
  if (op == FXT_FOP_GLOB || (fi->is_double && op == FXT_FOP_BAND)) {
    parse_error(p, FXT_FILTER_ERR_ILLEGAL_FIELD_OP, pos + i);
    return FXT_EINVAL;
  }
  if (at(p, start + i) == '-')
    i++;
  int rc = read_operand(p, start, s, &i, num);
  if (rc)
    return rc;
  if ((fi->is_signed ? fxt_filter_kstrtoll(num, &val) : fxt_filter_kstrtoull(num, &val)) != 0) {
    parse_error(p, FXT_FILTER_ERR_ILLEGAL_INTVAL, pos + s);
    return FXT_EINVAL;
  }
  in->src = fi->src;
  in->load = fi->load;
  in->op = (uint8_t)op;
  if (fi->ftype == FT_CPU) {
    in->kind = op == FXT_FOP_BAND ? FXT_FK_FALSE : FXT_FK_CPU; /* filter_pred_cpu: no & */
    in->val = val;
  } else if (fi->is_double) {
    in->kind = FXT_FK_DOUBLE;
    in->val = val;
  } else {
    set_num(in, fi, op, val, fi->is_signed);
  }
  return (int)i;
}

/* The kernel's parse_pred: one term starting at `start`. Returns its length, or a negative
 * code (FXT_FILTER_EPERM without a message when there is no field name). */
int fxt_filter_parse_pred(struct fxt_filter_parser *p, uint32_t start,
                          struct fxt_filter_insn *in)
{
  const uint32_t pos = start + 1; /* the kernel passes ptr - str after ptr++ */
  uint32_t i = 0, s;
  bool function = false;
  struct finfo fi;
  int op;

  while (fxt_filter_isspace(at(p, start + i)))
    i++;
  s = i;
  while (fxt_filter_isalnum(at(p, start + i)) || at(p, start + i) == '_')
    i++;
  if (i == s)
    return FXT_FILTER_EPERM;
  if (!find_field(p, start + s, i - s, &fi)) {
    parse_error(p, FXT_FILTER_ERR_FIELD_NOT_FOUND, pos + i);
    return FXT_EINVAL;
  }
  if (has_prefix(p, start + i, ".ustring"))
    i += 8; /* user-space strings are all one memory here: no effect */
  if (has_prefix(p, start + i, ".function")) {
    function = true;
    i += 9;
  }
  while (fxt_filter_isspace(at(p, start + i)))
    i++;
  for (op = 0; op < FXT_FOP_MAX; op++)
    if (has_prefix(p, start + i, op_text[op]))
      break;
  if (op == FXT_FOP_MAX) {
    parse_error(p, FXT_FILTER_ERR_INVALID_OP, pos + i);
    return FXT_EINVAL;
  }
  i += op_text[op][1] ? 2 : 1;
  while (fxt_filter_isspace(at(p, start + i)))
    i++;

  const unsigned char c = at(p, start + i);
  if (function)
    return parse_function(p, start, i, &fi, op);
  if (has_prefix(p, start + i, "CPUS"))
    return parse_cpus(p, start, i, &fi, op, in);
  if (c == '\'' || c == '"')
    return parse_string(p, start, i, &fi, op, in);
  if (fxt_filter_isdigit(c) || c == '-')
    return parse_number(p, start, i, &fi, op, in);
  parse_error(p, FXT_FILTER_ERR_INVALID_VALUE, pos + i);
  return FXT_EINVAL;
}
