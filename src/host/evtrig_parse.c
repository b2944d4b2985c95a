/* evtrig_parse.c - the text of event triggers, as the kernel's trace_events_trigger.c reads
 * and prints it: a write is "[!]cmd[:sys:ev][:count] [if FILTER]" (the command ends at the
 * first ':', blank or tab; a count only where the parameter starts with a digit, a target
 * where the command takes one; hist's attributes up to a blank, evtrig_hist.c reads them), a
 * read prints one line per trigger. No state: the fuzz
 * target (fuzz/fuzz_evtrig.c) runs it alone.
 */
#include <ctype.h>
#include <fxtrace/errors.h>
#include <string.h>

#include "../base/tbuf.h"
#include "evtrig.h"

static const char *const k_names[] = {
    "traceon",      "traceoff",    "snapshot",     "stacktrace", "enable_event",
    "disable_event", "enable_hist", "disable_hist", "hist",
};
#define NCMDS (sizeof(k_names) / sizeof(k_names[0]))

const char *fxt_evtrig_name(int cmd)
{
  return cmd >= 0 && (size_t)cmd < NCMDS ? k_names[cmd] : "";
}

static bool is_blank(char c)
{
  return c == ' ' || c == '\t';
}

/* The kernel's isspace (strim, skip_spaces): its _ctype table also counts 0xa0 as space. */
static bool is_space(char c)
{
  return c == ' ' || (c >= '\t' && c <= '\r') || (unsigned char)c == 0xa0;
}

/* kstrtoul(s, 0): an optional '+', then 0x hex, 0 octal or decimal, nothing after.
 * FXT_EINVAL or FXT_ERANGE as it returns them. */
static int kstrtoul(const char *s, size_t n, uint64_t *out)
{
  size_t i = 0;
  unsigned base = 10;
  if (i < n && s[i] == '+')
    i++;
  if (i + 1 < n && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X') && i + 2 < n &&
      isxdigit((unsigned char)s[i + 2])) {
    base = 16;
    i += 2;
  } else if (i < n && s[i] == '0') {
    base = 8;
  }
  if (i == n)
    return FXT_EINVAL;
  uint64_t v = 0;
  bool range = false;
  for (; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    unsigned d = isdigit(c) ? (unsigned)(c - '0')
                 : isxdigit(c) ? (unsigned)(tolower(c) - 'a' + 10)
                               : 99u;
    if (d >= base)
      return FXT_EINVAL;
    if (v > (UINT64_MAX - d) / base)
      range = true;
    v = v * base + d;
  }
  if (range)
    return FXT_ERANGE;
  *out = v;
  return 0;
}

/* The filter part f[0..n) (the kernel's set_trigger_filter): "if", one blank or tab, the
 * filter. Empty (n 0): no filter. */
static int take_filter(const char *base, size_t f, size_t n, struct fxt_evtrig_spec *spec)
{
  if (n == 0)
    return 0;
  size_t w = 0;
  while (w < n && !is_blank(base[f + w]))
    w++;
  if (w != 2 || memcmp(base + f, "if", 2) != 0 || w == n)
    return FXT_EINVAL;
  spec->filter_at = f + w + 1;
  spec->filter_len = n - w - 1;
  return spec->filter_len ? 0 : FXT_EINVAL;
}

/* Skips blanks from i (the kernel's skip_spaces) within n. */
static size_t skip(const char *s, size_t i, size_t n)
{
  while (i < n && is_space(s[i]))
    i++;
  return i;
}

int fxt_evtrig_parse(char *text, size_t len, size_t *start, struct fxt_evtrig_spec *spec)
{
  memset(spec, 0, sizeof(*spec));
  spec->count = FXT_EVTRIG_UNLIMITED;
  if (len > FXT_EVTRIG_MAX_WRITE)
    return FXT_EINVAL;
  size_t a = 0, n = len;
  while (a < n && is_space(text[a]))
    a++;
  while (n > a && is_space(text[n - 1]))
    n--;
  *start = a;
  const char *s = text + a;
  n -= a;
  /* The command: up to ':', ' ' or '\t' (strsep); the rest, blanks skipped, or none. */
  size_t c = 0;
  while (c < n && s[c] != ':' && !is_blank(s[c]))
    c++;
  size_t p = c < n ? skip(s, c + 1, n) : n; /* the parameter and filter start here */
  spec->remove = c > 0 && s[0] == '!';
  size_t name = spec->remove, name_len = c - name;
  spec->cmd = -1;
  for (size_t i = 0; i < NCMDS; i++)
    if (strlen(k_names[i]) == name_len && memcmp(s + name, k_names[i], name_len) == 0)
      spec->cmd = (int)i;
  if (spec->cmd < 0)
    return FXT_EINVAL;
  if (spec->cmd == FXT_EVTRIG_HIST) { /* "hist:ATTRS [if FILTER]": the attributes needed */
    size_t plen = 0;
    while (p + plen < n && !is_blank(s[p + plen]))
      plen++;
    if (plen == 0)
      return FXT_EINVAL;
    spec->param_at = a + p;
    spec->param_len = plen;
    if (spec->remove)
      return 0;
    size_t f = skip(s, p + plen, n);
    return take_filter(text, a + f, n - f, spec);
  }
  bool target = fxt_evtrig_has_target(spec->cmd);
  size_t param = p, param_len = 0, filter = n;
  bool has_count = false;
  if (target || (p < n && isdigit((unsigned char)s[p]))) {
    /* The parameter, up to a blank or tab; the filter after it, blanks skipped. */
    while (param + param_len < n && !is_blank(s[param + param_len]))
      param_len++;
    filter = skip(s, param + param_len, n);
    has_count = !target;
  } else {
    filter = p;
  }
  if (target) { /* "sys:ev[:count]": both names needed */
    if (param_len == 0)
      return FXT_EINVAL;
    const char *c1 = memchr(s + param, ':', param_len);
    if (!c1)
      return FXT_EINVAL;
    spec->sys_at = a + param;
    spec->sys_len = (size_t)(c1 - (s + param));
    size_t rest = param + spec->sys_len + 1, rest_len = param_len - spec->sys_len - 1;
    const char *c2 = memchr(s + rest, ':', rest_len);
    spec->ev_at = a + rest;
    spec->ev_len = c2 ? (size_t)(c2 - (s + rest)) : rest_len;
    param = c2 ? rest + spec->ev_len + 1 : n;
    param_len = c2 ? rest_len - spec->ev_len - 1 : 0;
    has_count = c2 != NULL; /* "sys:ev:" has an empty one */
  }
  if (spec->remove) /* removal looks at nothing after the target */
    return 0;
  if (has_count) { /* the count: up to the next ':' */
    const char *colon = memchr(s + param, ':', param_len);
    size_t num = colon ? (size_t)(colon - (s + param)) : param_len;
    if (num == 0)
      return FXT_EINVAL;
    int rc = kstrtoul(s + param, num, &spec->count);
    if (rc < 0)
      return rc;
  }
  return take_filter(text, a + filter, n - filter, spec);
}

void fxt_evtrig_print(struct fxt_tbuf *b, int cmd, const char *target, uint64_t count,
                      const char *filter)
{
  fxt_tbuf_puts(b, fxt_evtrig_name(cmd));
  if (target) {
    fxt_tbuf_puts(b, ":");
    fxt_tbuf_puts(b, target);
  }
  if (count == FXT_EVTRIG_UNLIMITED) {
    fxt_tbuf_puts(b, ":unlimited");
  } else {
    char num[32];
    char *e = num + sizeof(num), *d = e;
    long v = (long)count; /* printed as the kernel's %ld of its unsigned long */
    unsigned long m = v < 0 ? 0ul - (unsigned long)v : (unsigned long)v;
    do
      *--d = (char)('0' + m % 10);
    while ((m /= 10) != 0);
    if (v < 0)
      *--d = '-';
    fxt_tbuf_puts(b, ":count=");
    fxt_tbuf_put(b, d, (size_t)(e - d));
  }
  if (filter) {
    fxt_tbuf_puts(b, " if ");
    fxt_tbuf_puts(b, filter);
  }
  fxt_tbuf_puts(b, "\n");
}

void fxt_evtrig_print_available(struct fxt_tbuf *b)
{
  fxt_tbuf_puts(b, "# Available triggers:\n#");
  for (size_t i = 0; i < NCMDS; i++) {
    fxt_tbuf_puts(b, " ");
    fxt_tbuf_puts(b, k_names[i]);
  }
  fxt_tbuf_puts(b, "\n");
}
