/* src/core/filter_parse.c - fxt_filter_compile: the kernel's filter parser, step for step.
 *
 * Linux (kernel/trace/trace_events_filter.c) parses in two passes over the text, and so does
 * this file, with the same functions and the same order of checks, because the order decides
 * which error a bad text reports and where:
 *   calc_stack       counts terms and parenthesis depth; finds unbalanced quotes and parens;
 *   predicate_parse  walks the text: "(", "!", a term (parse_pred, filter_term.c), then "&&",
 *                    "||", ")" or the end, building the branch program (see filter_int.h) in
 *                    three passes.
 *
 * Memory: the caller's buffer holds the header, the instructions (growing up from the header),
 * the pool (growing down from below the parenthesis stack) and the parenthesis stack (the last
 * bytes: one per nesting level). At the end the pool moves down behind the instructions.
 */
#include "filter_int.h"

/* Parenthesis stack flags (the kernel's). */
enum { INVERT = 1, PROCESS_AND = 2, PROCESS_OR = 4 };

static inline unsigned char at(const struct fxt_filter_parser *p, uint32_t i)
{
  return fxt_filter_at(p, i);
}

static void parse_error(struct fxt_filter_parser *p, int code, uint32_t pos)
{
  p->code = code;
  p->pos = pos;
}

static struct fxt_filter_insn *insns(const struct fxt_filter_parser *p)
{
  return (struct fxt_filter_insn *)(void *)(p->buf + sizeof(struct fxt_filter_prog));
}

static struct fxt_filter_insn *alloc_insn(struct fxt_filter_parser *p)
{
  if (p->hi - p->lo < sizeof(struct fxt_filter_insn))
    return NULL;
  struct fxt_filter_insn *in = (struct fxt_filter_insn *)(void *)(p->buf + p->lo);
  p->lo += sizeof *in;
  memset(in, 0, sizeof *in);
  return in;
}

/* ---- the expression -------------------------------------------------------------------------- */

enum { TOO_MANY_CLOSE = -1, TOO_MANY_OPEN = -2, MISSING_QUOTE = -3 };

/* The kernel's calc_stack: counts terms and the deepest nesting (the whole text counts as one
 * level); finds an unmatched quote or parenthesis. */
static int calc_stack(const struct fxt_filter_parser *p, uint32_t *parens, uint32_t *preds, uint32_t *err)
{
  bool is_pred = false;
  uint32_t nr_preds = 0, open = 1, max_open = 1, last_quote = 0, i;
  unsigned char quote = 0;
  for (i = 0; i < p->n; i++) {
    const unsigned char c = at(p, i);
    if (fxt_filter_isspace(c))
      continue;
    if (quote) {
      if (c == quote)
        quote = 0;
      continue;
    }
    switch (c) {
    case '\'':
    case '"':
      quote = c;
      last_quote = i;
      break;
    case '|':
    case '&':
      if (at(p, i + 1) != c)
        break;
      is_pred = false;
      continue;
    case '(':
      is_pred = false;
      if (++open > max_open)
        max_open = open;
      continue;
    case ')':
      is_pred = false;
      if (open == 1) {
        *err = i;
        return TOO_MANY_CLOSE;
      }
      open--;
      continue;
    default:
      break;
    }
    if (!is_pred) {
      nr_preds++;
      is_pred = true;
    }
  }
  if (quote) {
    *err = last_quote;
    return MISSING_QUOTE;
  }
  if (open != 1) {
    uint32_t level = open;
    for (i--; i; i--) { /* find the bad open, backwards (index 0 is never looked at) */
      const unsigned char c = at(p, i);
      if (quote) {
        if (c == quote)
          quote = 0;
        continue;
      }
      if (c == '(') {
        if (level == open) {
          *err = i;
          return TOO_MANY_OPEN;
        }
        level--;
      } else if (c == ')') {
        level++;
      } else if (c == '\'' || c == '"') {
        quote = c;
      }
    }
    *err = 0;
    return TOO_MANY_OPEN;
  }
  *parens = max_open;
  *preds = nr_preds;
  return 0;
}

#define NO_TARGET 0xffffu /* the kernel's -1 */

/* The kernel's update_preds; false if the program is not what it expects. */
static bool update_preds(struct fxt_filter_insn *prog, uint32_t n, uint8_t invert)
{
  const uint32_t t = prog[n].target;
  if (t == NO_TARGET || t >= n)
    return false;
  const uint16_t s = prog[t].target;
  prog[t].when = invert;
  prog[t].target = (uint16_t)n;
  prog[n].target = s;
  return true;
}

/* The kernel's predicate_parse. Returns the number of instructions or a negative code. */
static int predicate_parse(struct fxt_filter_parser *p, uint32_t nr_parens, uint32_t nr_preds)
{
  uint8_t *const stack = p->buf + p->stack_at;
  struct fxt_filter_insn *const prog = insns(p);
  uint32_t top = 0, ptr = 0, n = 0;
  uint8_t invert = 0;
  int ret = FXT_ENOMEM;

  nr_preds += 2; /* for TRUE and FALSE */
  stack[0] = 0;
  while (at(p, ptr)) {
    uint32_t next = ptr++;
    unsigned char c = at(p, next);
    if (fxt_filter_isspace(c))
      continue;
    if (c == '(') {
      if (top + 1 >= nr_parens)
        return FXT_EINVAL;
      stack[++top] = invert;
      continue;
    }
    if (c == '!' && at(p, next + 1) != '=' && at(p, next + 1) != '~') {
      invert = !invert;
      continue;
    }
    if (n >= nr_preds) {
      parse_error(p, FXT_FILTER_ERR_TOO_MANY_PREDS, next);
      return ret;
    }
    struct fxt_filter_insn *in = alloc_insn(p);
    if (!in)
      return FXT_ENOSPC;
    in->pad = invert;
    in->target = n ? (uint16_t)(n - 1) : NO_TARGET;
    const int len = fxt_filter_parse_pred(p, next, in);
    if (len < 0)
      return len;
    ptr = next + (uint32_t)len;
    n++;
    ret = FXT_FILTER_EPERM;
    for (;;) {
      next = ptr++;
      c = at(p, next);
      if (fxt_filter_isspace(c))
        continue;
      if (c == '&' || c == '|') {
        if (at(p, next + 1) != c) {
          parse_error(p, FXT_FILTER_ERR_TOO_MANY_PREDS, next);
          return ret;
        }
        ptr++;
      } else if (c != ')' && c != '\0') {
        parse_error(p, FXT_FILTER_ERR_TOO_MANY_PREDS, next);
        return ret;
      }
      invert = stack[top] & INVERT;
      if (stack[top] & PROCESS_AND) {
        if (!update_preds(prog, n - 1, invert))
          return FXT_EINVAL;
        stack[top] &= (uint8_t)~PROCESS_AND;
      }
      if (c == '&') {
        stack[top] |= PROCESS_AND;
        break;
      }
      if (stack[top] & PROCESS_OR) {
        if (!update_preds(prog, n - 1, !invert))
          return FXT_EINVAL;
        stack[top] &= (uint8_t)~PROCESS_OR;
      }
      if (c == '|') {
        stack[top] |= PROCESS_OR;
        break;
      }
      if (!c)
        goto out;
      if (top == 0) {
        parse_error(p, FXT_FILTER_ERR_TOO_MANY_CLOSE, ptr);
        return ret;
      }
      top--;
    }
  }
out:
  if (top != 0) {
    parse_error(p, FXT_FILTER_ERR_TOO_MANY_OPEN, ptr);
    return ret;
  }
  if (!n) {
    parse_error(p, FXT_FILTER_ERR_NO_FILTER, ptr);
    return FXT_EINVAL;
  }
  /* fxtrace, as newer kernels: "a &&" or "a || !" leaves an operator without its operand. */
  if (stack[0] & (PROCESS_AND | PROCESS_OR)) {
    parse_error(p, FXT_FILTER_ERR_INVALID_FILTER, ptr);
    return FXT_EINVAL;
  }

  /* #13: the last entry; entries n and n + 1 are TRUE {when 0, target 1} and FALSE
   * {when 0, target 0}. */
  prog[n - 1].target = (uint16_t)n;
  prog[n - 1].when = 0;
  /* Second pass: a jump to a label of the same condition takes that label's jump. */
  for (uint32_t i = n - 1; i--;) {
    const uint32_t t = prog[i].target;
    uint8_t twhen;
    uint32_t ttarget;
    if (t == NO_TARGET || t > n + 1)
      return FXT_EINVAL;
    twhen = t < n ? prog[t].when : 0;
    ttarget = t < n ? prog[t].target : t == n ? 1 : 0;
    if (prog[i].when == twhen)
      prog[i].target = (uint16_t)ttarget;
  }
  /* Third pass: fold the inverts into the branch conditions; the program must move forward. */
  for (uint32_t i = 0; i < n; i++) {
    prog[i].when ^= (uint8_t)prog[i].pad;
    prog[i].pad = 0;
    if (prog[i].target <= i || prog[i].target > n)
      return FXT_EINVAL;
  }
  return (int)n;
}

/* ---- entry points ------------------------------------------------------------------------------ */

static int fail(struct fxt_filter_error *err, int result, int code, uint32_t pos)
{
  if (err) {
    err->result = result;
    err->code = code;
    err->pos = pos;
    err->msg = fxt_filter_strerror(code);
  }
  return result;
}

static bool fields_ok(const struct fxt_filter_event *ev)
{
  if (ev->nfields > 4096 || (ev->nfields && !ev->fields))
    return false;
  for (uint32_t k = 0; k < ev->nfields; k++)
    if (ev->fields[k].type < FXT_TYPE_U8 || ev->fields[k].type > FXT_TYPE_BYTES)
      return false;
  return true;
}

int fxt_filter_compile(const char *text, size_t len, const struct fxt_filter_event *ev,
                       void *prog, size_t prog_size, struct fxt_filter_error *err)
{
  struct fxt_filter_parser p;
  uint32_t nr_parens = 0, nr_preds = 0, where = 0;
  size_t b = 0;
  int r;

  if (!ev || (!text && len) || !prog || ((uintptr_t)prog & (FXT_FILTER_ALIGN - 1)) ||
      !fields_ok(ev))
    return fail(err, FXT_EINVAL, FXT_FILTER_ERR_ARGUMENT, 0);
  if (len > FXT_FILTER_MAX_WRITE)
    return fail(err, FXT_EINVAL, FXT_FILTER_ERR_WRITE_TOO_LONG, 0);
  memset(&p, 0, sizeof p);
  p.s = text;
  p.n = (uint32_t)fxt_filter_text_len(text, len);
  p.ev = ev;
  p.nr_cpus = ev->nr_cpus && ev->nr_cpus < FXT_FILTER_MAX_CPUS ? ev->nr_cpus
                                                                : FXT_FILTER_MAX_CPUS;
  /* "0" (whitespace aside) clears. */
  while (b < p.n && fxt_filter_isspace((unsigned char)text[b]))
    b++;
  if (p.n - b == 1 && text[b] == '0')
    return fail(err, 0, FXT_FILTER_ERR_NONE, 0);

  r = calc_stack(&p, &nr_parens, &nr_preds, &where);
  if (r == MISSING_QUOTE)
    return fail(err, FXT_FILTER_ESRCH, FXT_FILTER_ERR_MISSING_QUOTE, where);
  if (r == TOO_MANY_OPEN)
    return fail(err, FXT_ENOENT, FXT_FILTER_ERR_TOO_MANY_OPEN, where);
  if (r == TOO_MANY_CLOSE)
    return fail(err, FXT_FILTER_EPERM, FXT_FILTER_ERR_TOO_MANY_CLOSE, where);
  if (!nr_preds)
    return fail(err, FXT_EINVAL, FXT_FILTER_ERR_ERRNO, 0);

  if (prog_size < sizeof(struct fxt_filter_prog) + nr_parens)
    return fail(err, FXT_ENOSPC, FXT_FILTER_ERR_NO_SPACE, 0);
  p.buf = (unsigned char *)prog;
  p.lo = sizeof(struct fxt_filter_prog);
  p.stack_at = prog_size - nr_parens;
  p.hi = p.stack_at;
  p.code = FXT_FILTER_ERR_ERRNO;

  r = predicate_parse(&p, nr_parens, nr_preds);
  if (r == FXT_ENOSPC)
    return fail(err, FXT_ENOSPC, FXT_FILTER_ERR_NO_SPACE, 0);
  if (r < 0)
    return fail(err, r, p.code, p.code == FXT_FILTER_ERR_ERRNO ? 0 : p.pos);

  /* Move the pool behind the instructions. */
  struct fxt_filter_insn *in = insns(&p);
  const size_t pool_len = p.stack_at - p.hi, delta = p.hi - p.lo;
  memmove(p.buf + p.lo, p.buf + p.hi, pool_len);
  for (int k = 0; k < r; k++)
    if (in[k].kind == FXT_FK_STR || in[k].kind == FXT_FK_NUM_MASK ||
        in[k].kind == FXT_FK_CPU_MASK)
      in[k].val -= delta;
  struct fxt_filter_prog *h = (struct fxt_filter_prog *)prog;
  h->magic = FXT_FILTER_MAGIC;
  h->size = (uint32_t)(p.lo + pool_len);
  h->ninsn = (uint16_t)r;
  h->nr_cpus = (uint16_t)p.nr_cpus;
  h->pool = (uint32_t)p.lo;
  return fail(err, (int)h->size, FXT_FILTER_ERR_NONE, 0);
}

int fxt_filter_compile_system(const char *text, size_t len, struct fxt_filter_slot *slots,
                              uint32_t nslots)
{
  if ((!text && len) || len > FXT_FILTER_MAX_WRITE)
    return FXT_EINVAL;
  if (!nslots)
    return FXT_FILTER_ENODEV;
  if (!slots)
    return FXT_EINVAL;
  for (uint32_t k = 0; k < nslots; k++) {
    struct fxt_filter_slot *sl = &slots[k];
    sl->result = fxt_filter_compile(text, len, sl->event, sl->prog, sl->prog_size, &sl->err);
    if (sl->result < 0 && sl->err.code < FXT_FILTER_ERR_WRITE_TOO_LONG) {
      sl->err.code = FXT_FILTER_ERR_BAD_SUBSYS_FILTER;
      sl->err.pos = 0;
      sl->err.msg = fxt_filter_strerror(sl->err.code);
    }
  }
  return 0;
}
