/* src/core/filter_eval.c - fxt_filter_match: runs a compiled filter on one event's values.
 *
 * The loop is the kernel's filter_match_preds: each instruction runs at most once (every
 * branch goes forward), so a run costs at most ninsn predicates. A predicate is an integer
 * compare, a CPU-mask bit test, an exact double/integer compare, or a string match (prefix,
 * suffix, substring, full or the kernel's glob_match) on the value in place: no copies.
 */
#include "filter_int.h"

static const struct fxt_filter_common zero_common;

/* ---- strings --------------------------------------------------------------------------------- */

/* lib/glob.c glob_match(pat, str) with str = s[0..len) (a NUL ends it, as in the kernel).
 * pat is NUL-terminated. O(strlen(pat) * len): one backtrack point. */
static bool glob_match(const unsigned char *pat, const unsigned char *s, uint32_t len)
{
  const unsigned char *back_pat = NULL;
  uint32_t back_str = 0, i = 0;
  for (;;) {
    unsigned char c = i < len ? s[i] : 0;
    unsigned char d = *pat++;
    i++;
    switch (d) {
    case '?': /* anything but the end */
      if (c == '\0')
        return false;
      break;
    case '*': /* any run, the empty one included */
      if (*pat == '\0')
        return true;
      back_pat = pat;
      back_str = --i;
      break;
    case '[': { /* a class: spans a or a-b; a leading '!' inverts; ']' may come first */
      if (c == '\0') /* no possible match (lib/glob.c since 2024) */
        return false;
      bool match = false;
      const bool inverted = *pat == '!';
      const unsigned char *cls = pat + inverted;
      unsigned char a = *cls++;
      do {
        unsigned char b = a;
        if (a == '\0') /* malformed: '[' is a literal */
          goto literal;
        if (cls[0] == '-' && cls[1] != ']') {
          b = cls[1];
          if (b == '\0')
            goto literal;
          cls += 2;
        }
        match |= a <= c && c <= b;
      } while ((a = *cls++) != ']');
      if (match == inverted)
        goto backtrack;
      pat = cls;
      break;
    }
    case '\\':
      d = *pat++;
      /* fallthrough */
    default:
    literal:
      if (c == d) {
        if (d == '\0')
          return true;
        break;
      }
    backtrack:
      if (c == '\0' || !back_pat)
        return false;
      pat = back_pat;
      i = ++back_str;
      break;
    }
  }
}

static bool contains(const char *s, uint32_t len, const char *pat, uint32_t plen)
{
  if (plen == 0)
    return true;
  for (uint32_t k = 0; k + plen <= len; k++)
    if (s[k] == pat[0] && memcmp(s + k, pat, plen) == 0)
      return true;
  return false;
}

/* The kernel's regex_match_* on s[0..len). array: the field is a char array of `size` bytes
 * (len < size, or len == size without a NUL), whose full compare is strncmp(s, pat, size). */
static bool str_match(const struct fxt_filter_insn *in, const char *pat, const char *s,
                      uint32_t len, bool array)
{
  const uint32_t plen = (uint32_t)in->mask;
  switch (in->op) {
  case FXT_FMATCH_FULL:
    if (array && (in->size == 0 || (len == in->size && plen > len)))
      return memcmp(s, pat, len) == 0; /* strncmp stops after `size` bytes */
    return len == plen && memcmp(s, pat, len) == 0;
  case FXT_FMATCH_FRONT:
    return len >= plen && memcmp(s, pat, plen) == 0;
  case FXT_FMATCH_MIDDLE:
    return contains(s, len, pat, plen);
  case FXT_FMATCH_END:
    return len >= plen && memcmp(s + len - plen, pat, plen) == 0;
  default:
    return glob_match((const unsigned char *)pat, (const unsigned char *)s, len);
  }
}

static bool eval_str(const struct fxt_filter_insn *in, const unsigned char *pool_base,
                     const union fxt_value *values, const uint32_t *str_lens,
                     const struct fxt_filter_common *cm)
{
  const char *pat = (const char *)pool_base + in->val;
  const char *s;
  uint32_t len;
  bool array = true;
  switch (in->load & ~FXT_FILTER_NEG) {
  case FXT_FLOAD_STR:
    s = values[in->src].s;
    array = false;
    if (!s)
      s = "";
    if (str_lens)
      len = str_lens[in->src] < in->size ? str_lens[in->src] : in->size;
    else
      len = (uint32_t)fxt_filter_strnlen(s, in->size);
    break;
  case FXT_FLOAD_ARRAY:
    s = (const char *)values[in->src].p;
    if (!s)
      s = "";
    len = (uint32_t)fxt_filter_strnlen(s, in->size);
    break;
  default: /* comm */
    s = cm->comm ? cm->comm : "";
    len = (uint32_t)fxt_filter_strnlen(s, in->size);
    break;
  }
  return str_match(in, pat, s, len, array) != ((in->load & FXT_FILTER_NEG) != 0);
}

/* ---- numbers ---------------------------------------------------------------------------------- */

static uint64_t load_num(const struct fxt_filter_insn *in, const union fxt_value *values,
                         const struct fxt_filter_common *cm)
{
  switch (in->load) {
  case FXT_FLOAD_U:
    return values[in->src].u;
  case FXT_FLOAD_I:
    return (uint64_t)values[in->src].i;
  case FXT_FLOAD_PTR:
    return (uint64_t)(uintptr_t)values[in->src].p;
  default:
    switch (in->src) {
    case FXT_FSRC_TYPE:
      return cm->type;
    case FXT_FSRC_FLAGS:
      return cm->flags;
    case FXT_FSRC_PREEMPT:
      return cm->preempt_count;
    case FXT_FSRC_PID:
      return (uint32_t)cm->pid;
    default:
      return cm->cpu;
    }
  }
}

static bool cmp_u64(int op, uint64_t a, uint64_t b)
{
  switch (op) {
  case FXT_FOP_EQ:
    return a == b;
  case FXT_FOP_NE:
    return a != b;
  case FXT_FOP_LT:
    return a < b;
  case FXT_FOP_LE:
    return a <= b;
  case FXT_FOP_GT:
    return a > b;
  case FXT_FOP_GE:
    return a >= b;
  case FXT_FOP_BAND:
    return (a & b) != 0;
  default:
    return false;
  }
}

/* Compares |d| = m * 2^e (exact) with the magnitude c: -1, 0 or 1. */
static int cmp_magnitude(uint64_t m, int32_t e, uint64_t c)
{
  if (e >= 0) {
    if (e > 11) /* m >= 2^52 (normal), so |d| >= 2^64 > c */
      return 1;
    const uint64_t v = m << e;
    return v < c ? -1 : v > c;
  }
  const uint32_t sh = (uint32_t)-e;
  const uint64_t ip = sh >= 64 ? 0 : m >> sh;
  const bool frac = sh >= 64 ? m != 0 : (m & (((uint64_t)1 << sh) - 1)) != 0;
  if (ip != c)
    return ip < c ? -1 : 1;
  return frac;
}

/* The sign of d - c, computed exactly from the bits: -1, 0, 1, or 2 when d is NaN. */
static int cmp_double(uint64_t bits, uint64_t c)
{
  const uint32_t exp = (uint32_t)(bits >> 52) & 0x7ff;
  const uint64_t man = bits & (((uint64_t)1 << 52) - 1);
  const bool dneg = bits >> 63, cneg = c >> 63;
  if (exp == 0x7ff)
    return man ? 2 : dneg ? -1 : 1;
  const int ds = exp == 0 && man == 0 ? 0 : dneg ? -1 : 1;
  const int cs = c == 0 ? 0 : cneg ? -1 : 1;
  if (ds != cs)
    return ds < cs ? -1 : 1;
  if (ds == 0)
    return 0;
  const int r = exp ? cmp_magnitude(man | (uint64_t)1 << 52, (int32_t)exp - 1075,
                                    cneg ? (uint64_t)0 - c : c)
                    : cmp_magnitude(man, -1074, cneg ? (uint64_t)0 - c : c);
  return ds > 0 ? r : -r;
}

static bool eval_double(int op, uint64_t bits, uint64_t c)
{
  const int r = cmp_double(bits, c);
  switch (op) {
  case FXT_FOP_EQ:
    return r == 0;
  case FXT_FOP_NE:
    return r != 0;
  case FXT_FOP_LT:
    return r == -1;
  case FXT_FOP_LE:
    return r == -1 || r == 0;
  case FXT_FOP_GT:
    return r == 1;
  case FXT_FOP_GE:
    return r == 1 || r == 0;
  default:
    return false;
  }
}

/* The kernel's do_filter_scalar_cpumask: a mask of >= 2 CPUs never equals one CPU. */
static bool eval_mask(int op, const uint8_t *mask, uint32_t nr_cpus, uint32_t cpu)
{
  switch (op) {
  case FXT_FOP_EQ:
    return false;
  case FXT_FOP_NE:
    return true;
  default:
    return cpu < nr_cpus && (mask[cpu >> 3] >> (cpu & 7) & 1);
  }
}

/* ---- the program ------------------------------------------------------------------------------ */

static bool eval(const struct fxt_filter_prog *h, const struct fxt_filter_insn *in,
                 const union fxt_value *values, const uint32_t *str_lens,
                 const struct fxt_filter_common *cm)
{
  const unsigned char *base = (const unsigned char *)h;
  switch (in->kind) {
  case FXT_FK_NUM: {
    const uint64_t v = load_num(in, values, cm) & in->mask;
    return cmp_u64(in->op, v ^ in->bias, in->val);
  }
  case FXT_FK_CPU: /* as C ints */
    return cmp_u64(in->op, (uint32_t)cm->cpu ^ 0x80000000u,
                   ((uint32_t)in->val ^ 0x80000000u));
  case FXT_FK_NUM_MASK: { /* the field read as an unsigned int CPU number */
    const uint32_t cpu = (uint32_t)(load_num(in, values, cm) & in->mask);
    return cpu < h->nr_cpus && eval_mask(in->op, base + in->val, h->nr_cpus, cpu);
  }
  case FXT_FK_CPU_MASK:
    return eval_mask(in->op, base + in->val, h->nr_cpus, cm->cpu);
  case FXT_FK_STR:
    return eval_str(in, base, values, str_lens, cm);
  case FXT_FK_DOUBLE:
    return eval_double(in->op, values[in->src].u, in->val);
  default:
    return false;
  }
}

bool fxt_filter_match(const void *prog, const union fxt_value *values, const uint32_t *str_lens,
                      const struct fxt_filter_common *common)
{
  const struct fxt_filter_prog *h = (const struct fxt_filter_prog *)prog;
  if (!h)
    return true;
  const struct fxt_filter_insn *in =
      (const struct fxt_filter_insn *)(const void *)((const unsigned char *)prog + sizeof *h);
  const uint32_t n = h->ninsn;
  if (!common)
    common = &zero_common;
  uint32_t i = 0;
  while (i < n) {
    if (eval(h, &in[i], values, str_lens, common) == in[i].when)
      i = (uint32_t)in[i].target + 1;
    else
      i++;
  }
  return i == n;
}
