/* config.c - fxt_config_parse(): an FXTRACE string to a struct fxt_session_config.
 *
 * Grammar (keys in session.h): "key=value" entries separated by ';'; spaces and tabs around
 * keys and values are ignored, empty entries skipped; keys and words are case-sensitive. A key
 * given twice: the last entry wins (as with environment variables), but every one must be
 * valid. The text is read once, left to right, up to its NUL; no recursion, no allocation.
 *
 * Strings: the default events and output are string literals (valid forever; a reset to
 * defaults needs no strbuf; the default buffers and trigger are NULL). Only events=, output=,
 * buffers= and trigger= given in the text go to strbuf, in that order, copied once after the
 * whole text is valid: a repeated key costs no space, and a malformed text is FXT_EINVAL
 * whatever strbuf's size. events is stored normalized: globs
 * without blanks, joined by ',', "demo" completed to "demo:*".
 *
 * Errors: *cfg is reset to all defaults. err (unless NULL or err_size 0) gets "FXTRACE: at N:
 * reason", N the 0-based offset in text of the culprit (a value's first non-blank byte, or
 * where it would be if empty); values are quoted, cut at CFG_ECHO_MAX bytes + "...". On
 * success err is set to "".
 */
#include <fxtrace/session.h>

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config.h"

#define CFG_ECHO_MAX 40           /* bytes of a bad value quoted in a message */
#define CFG_OUTPUT_MAX 4095u      /* PATH_MAX - 1: longer paths cannot be opened anyway */
#define CFG_BLOCK_MS_MAX 3600000u /* an hour: longer is a hang, not a timeout */
#define CFG_VALUE_MAX 4096u       /* bytes of a function tracer's glob list, with its NUL */

struct span { size_t pos, len; }; /* a piece of the text: [pos, pos + len) */

struct parser {
  const char *text;
  struct fxt_session_config *cfg;
  struct span events, output, buffers, trigger; /* the last value of each */
  int has_events, has_output, has_buffers, has_trigger;
  char *err; /* NULL, or err_size bytes */
  size_t err_size;
  const char *key; /* the key whose value is being parsed (its k_keys name) */
};

/* Where strings go; counts what they need even past the end, so one walk sizes and copies. */
struct sink { char *buf; size_t size, used; };

/* Arguments for "'%.*s%s'": a value quoted, cut at CFG_ECHO_MAX bytes. */
#define ECHO(p, s)                                                                        \
  (int)((s).len > CFG_ECHO_MAX ? CFG_ECHO_MAX : (s).len), (p)->text + (s).pos,            \
      (s).len > CFG_ECHO_MAX ? "..." : ""

static const struct fxt_session_config k_defaults = {
    .struct_size = sizeof k_defaults, .mode = FXT_MODE_DISCARD, .block_timeout_ms = 10,
    .clock = FXT_CLOCK_AUTO, .buffer_kb = 4096, .total_kb = 1048576, .max_file_kb = 0,
    .events = "*:*", .output = "fxtrace-%p.fxt", .buffers = NULL, .trigger = NULL};

/* "FXTRACE: at pos: " and the reason into err; returns FXT_EINVAL. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4))) /* checks every message's arguments */
#endif
static int fail(struct parser *p, size_t pos, const char *fmt, ...) {
  if (p->err == NULL || p->err_size == 0)
    return FXT_EINVAL;
  int n = snprintf(p->err, p->err_size, "FXTRACE: at %zu: ", pos);
  if (n >= 0 && (size_t)n < p->err_size) { /* else the prefix alone filled err */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + n, p->err_size - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return FXT_EINVAL;
}

/* [b, e) without the blanks at both ends; an all-blank piece is empty at e. */
static struct span trim(const char *t, size_t b, size_t e) {
  while (b < e && (t[b] == ' ' || t[b] == '\t'))
    b++;
  while (e > b && (t[e - 1] == ' ' || t[e - 1] == '\t'))
    e--;
  return (struct span){b, e - b};
}

static int span_is(const struct parser *p, struct span s, const char *word) {
  size_t n = strlen(word);
  return s.len == n && memcmp(p->text + s.pos, word, n) == 0;
}

/* Decimal digits only (no sign, no suffix, no blank), min <= value <= max < 2^60. May set
 * *out even when it fails. */
static int parse_u64(const char *s, size_t len, uint64_t min, uint64_t max, uint64_t *out) {
  uint64_t v = 0;
  for (size_t i = 0; i < len; i++)
    if (s[i] < '0' || s[i] > '9' || (v = v * 10 + (uint64_t)(s[i] - '0')) > max)
      return 0; /* v <= max < 2^60 before the step, so it cannot wrap */
  *out = v;
  return len > 0 && v >= min;
}

/* On error *cfg is reset to defaults: storing a value that failed is harmless. */
static int parse_kib(struct parser *p, struct span v, const char *key, uint64_t min,
                     uint64_t max, uint64_t *out) {
  if (parse_u64(p->text + v.pos, v.len, min, max, out))
    return 0;
  return fail(p, v.pos, "%s: '%.*s%s' is not a number of KiB (%" PRIu64 "..%" PRIu64 ")", key,
              ECHO(p, v), min, max);
}

static int parse_kib32(struct parser *p, struct span v, const char *key, uint32_t max,
                       uint32_t *out) {
  uint64_t n = 0;
  int rc = parse_kib(p, v, key, 1, max, &n);
  *out = (uint32_t)n;
  return rc;
}

static int key_buffer_kb(struct parser *p, struct span v) {
  return parse_kib32(p, v, "buffer_kb", 2097152, &p->cfg->buffer_kb); /* 2 GiB */
}

static int key_total_kb(struct parser *p, struct span v) {
  return parse_kib32(p, v, "total_kb", UINT32_MAX, &p->cfg->total_kb);
}

static int key_max_file_kb(struct parser *p, struct span v) {
  /* 2^54 KiB = 2^64 bytes: the largest byte count a uint64_t counter can reach. */
  return parse_kib(p, v, "max_file_kb", 0, UINT64_C(1) << 54, &p->cfg->max_file_kb);
}

/* Index of v in words[0..n), whose order is the enum's, or -1. */
static int word_index(const struct parser *p, struct span v, const char *const *words, int n) {
  for (int i = 0; i < n; i++)
    if (span_is(p, v, words[i]))
      return i;
  return -1;
}

static int key_mode(struct parser *p, struct span v) {
  static const char *const modes[] = {"discard", "overwrite", "block"}; /* enum order */
  const size_t bl = strlen("block:");
  uint64_t ms = 10; /* every mode entry sets the timeout too: the last entry wins whole */
  int mode = word_index(p, v, modes, 3);
  if (mode < 0 && v.len > bl && memcmp(p->text + v.pos, "block:", bl) == 0 &&
      parse_u64(p->text + v.pos + bl, v.len - bl, 1, CFG_BLOCK_MS_MAX, &ms))
    mode = FXT_MODE_BLOCK;
  if (mode < 0)
    return fail(p, v.pos,
                "mode: '%.*s%s' is not discard, overwrite, block or block:MS (MS 1..3600000)",
                ECHO(p, v));
  p->cfg->mode = (uint32_t)mode;
  p->cfg->block_timeout_ms = (uint32_t)ms;
  return 0;
}

static int key_clock(struct parser *p, struct span v) {
  static const char *const clocks[] = {"auto", "tsc", "monotonic"}; /* enum order */
  int clock = word_index(p, v, clocks, 3);
  if (clock < 0)
    return fail(p, v.pos, "clock: '%.*s%s' is not auto, tsc or monotonic", ECHO(p, v));
  p->cfg->clock = (uint32_t)clock;
  return 0;
}

/* Tracepoint systems and events are C identifiers; the rest are glob syntax ('-' for [a-z]
 * ranges, '!' for [!x]) and '.' for dotted provider names. Nothing else is accepted, so that
 * ';', ',', '=', blanks and quotes never need escaping, and a pasted path or quoted string is
 * reported rather than silently matching nothing. */
static int is_glob_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         (c != '\0' && strchr("_*?[]!:-.", c) != NULL);
}

/* The ']' closing the class opened at t[i] (POSIX: a ']' right after "[" or "[!" is a
 * member), or 0 if none before e. A class never spans the ':' separator. */
static size_t class_end(const char *t, size_t i, size_t e) {
  size_t j = i + 1;
  j += j < e && t[j] == '!';
  j += j < e && t[j] == ']';
  while (j < e && t[j] != ']' && t[j] != ':')
    j++;
  return j < e && t[j] == ']' ? j : 0;
}

/* One glob, g non-empty: characters first, then structure, left to right. */
static int check_glob(struct parser *p, struct span g) {
  const char *t = p->text;
  size_t e = g.pos + g.len, colon = 0;
  for (size_t i = g.pos; i < e; i++) {
    if (is_glob_char(t[i]))
      continue;
    char shown[8];
    snprintf(shown, sizeof shown, t[i] > ' ' && t[i] < 0x7f ? "%c" : "\\x%02x",
             (unsigned char)t[i]);
    return fail(p, i, "events: '%.*s%s' has '%s', not allowed in a glob (allowed: A-Z a-z "
                      "0-9 _ * ? [ ] ! : - .)", ECHO(p, g), shown);
  }
  for (size_t i = g.pos; i < e; i++) {
    if (t[i] == '[') {
      size_t close = class_end(t, i, e);
      if (close == 0)
        return fail(p, i, "events: '%.*s%s' has an unclosed '['", ECHO(p, g));
      i = close;
    } else if (t[i] == ']') {
      return fail(p, i, "events: '%.*s%s' has a ']' without '['", ECHO(p, g));
    } else if (t[i] == ':' && colon != 0) {
      return fail(p, i, "events: '%.*s%s' has more than one ':'", ECHO(p, g));
    } else if (t[i] == ':') {
      colon = i + 1; /* + 1: 0 means none */
    }
  }
  if (colon != 0 && (colon - 1 == g.pos || colon == e))
    return fail(p, colon - 1, "events: '%.*s%s' has an empty name beside ':'", ECHO(p, g));
  return 0;
}

static void put(struct sink *s, const char *src, size_t n) {
  if (s->buf != NULL && n <= s->size && s->used <= s->size - n)
    memcpy(s->buf + s->used, src, n);
  s->used += n;
}

/* Checks every glob of an events value and writes the normalized list (no NUL) to out. */
static int walk_events(struct parser *p, struct span v, struct sink *out) {
  size_t b = v.pos, e = v.pos + v.len;
  if (v.len == 0)
    return 0; /* "events=": no events */
  for (;;) {
    size_t c = b;
    while (c < e && p->text[c] != ',')
      c++;
    struct span g = trim(p->text, b, c);
    if (g.len == 0)
      return fail(p, g.pos, "events: empty glob (globs are separated by ',')");
    int rc = check_glob(p, g);
    if (rc != 0)
      return rc;
    if (b != v.pos)
      put(out, ",", 1);
    put(out, p->text + g.pos, g.len);
    if (memchr(p->text + g.pos, ':', g.len) == NULL)
      put(out, ":*", 2); /* "demo" means "demo:*" */
    if (c == e)
      return 0;
    b = c + 1;
  }
}

static int key_events(struct parser *p, struct span v) {
  p->events = v; /* used only if the whole text parses */
  p->has_events = 1;
  return walk_events(p, v, &(struct sink){NULL, 0, 0}); /* checks and counts only */
}

static int key_output(struct parser *p, struct span v) {
  const char *t = p->text;
  if (v.len > CFG_OUTPUT_MAX)
    return fail(p, v.pos, "output: %zu bytes is longer than the limit of %u", v.len,
                CFG_OUTPUT_MAX);
  p->output = v; /* used only if the whole text parses */
  p->has_output = 1;
  /* Standard output is the program's: a trace there would be mixed with what it prints. The
   * trace goes to another descriptor the program inherits instead (a shell's 3>FILE). */
  if (span_is(p, v, "-"))
    return fail(p, v.pos, "output=-: the trace would be mixed with the program's own "
                          "stdout: give output=fd:N, a descriptor it inherits (as in "
                          "FXTRACE=output=fd:3 ./app 3>trace.fxt), or a file");
  if (v.len >= 3 && memcmp(t + v.pos, "fd:", 3) == 0) {
    uint64_t fd;
    if (!parse_u64(t + v.pos + 3, v.len - 3, 0, INT_MAX, &fd))
      return fail(p, v.pos, "output: '%.*s%s' is not fd:N, a descriptor number", ECHO(p, v));
    return 0;
  }
  for (size_t i = v.pos; i < v.pos + v.len; i++) {
    if (t[i] == '%' && i + 1 < v.pos + v.len && (t[i + 1] == 'p' || t[i + 1] == '%'))
      i++; /* "%%" is one escaped '%': its second '%' starts nothing */
    else if (t[i] == '%')
      return fail(p, i, "output: '%.*s%s' has a '%%' not followed by 'p' or '%%'",
                  ECHO(p, v));
  }
  return 0;
}

/* A path taken as given (buffers=, trigger=: session.h); "" is allowed (anonymous memory,
 * no trigger). Used only if the whole text parses. */
static int path_value(struct parser *p, struct span v, const char *key, struct span *out,
                      int *has) {
  if (v.len > CFG_OUTPUT_MAX - 32)
    return fail(p, v.pos, "%s: %zu bytes is longer than the limit of %u", key, v.len,
                CFG_OUTPUT_MAX - 32);
  *out = v;
  *has = 1;
  return 0;
}

static int key_buffers(struct parser *p, struct span v) {
  return path_value(p, v, "buffers", &p->buffers, &p->has_buffers);
}

static int key_trigger(struct parser *p, struct span v) {
  return path_value(p, v, "trigger", &p->trigger, &p->has_trigger);
}

/* The function tracer's keys are checked here and applied by functions_ctl.c at the session's
 * start (fxt_config_value): a glob list may name functions of any object. */
static int key_tracer(struct parser *p, struct span v) {
  static const char *const tracers[] = {"nop", "function", "function_graph"};
  if (word_index(p, v, tracers, 3) < 0)
    return fail(p, v.pos, "tracer: '%.*s%s' is not nop, function or function_graph",
                ECHO(p, v));
  return 0;
}

/* ftrace_filter, ftrace_notrace, graph_function, graph_notrace: a glob list. */
static int key_globs(struct parser *p, struct span v) {
  if (v.len >= CFG_VALUE_MAX)
    return fail(p, v.pos, "%s: %zu bytes is longer than the limit of %u", p->key, v.len,
                CFG_VALUE_MAX - 1);
  return 0;
}

/* max_graph_depth, tracing_thresh: a count. */
static int key_count(struct parser *p, struct span v) {
  uint64_t n;
  if (!parse_u64(p->text + v.pos, v.len, 0, UINT32_MAX, &n))
    return fail(p, v.pos, "%s: '%.*s%s' is not a number (0..4294967295)", p->key, ECHO(p, v));
  return 0;
}
/* function_profile, graph_time: 0 or 1. */
static int key_bool(struct parser *p, struct span v) {
  static const char *const values[] = {"0", "1"};
  if (word_index(p, v, values, 2) < 0)
    return fail(p, v.pos, "%s: '%.*s%s' is not 0 or 1", p->key, ECHO(p, v));
  return 0;
}

static const struct {
  const char *name;
  int (*parse)(struct parser *p, struct span value);
} k_keys[] = {
    {"events", key_events}, {"buffer_kb", key_buffer_kb}, {"total_kb", key_total_kb},
    {"mode", key_mode},     {"output", key_output},       {"max_file_kb", key_max_file_kb},
    {"clock", key_clock},       {"buffers", key_buffers},     {"trigger", key_trigger},
    {"tracer", key_tracer},
    {"ftrace_filter", key_globs},   {"ftrace_notrace", key_globs},
    {"graph_function", key_globs},  {"graph_notrace", key_globs},
    {"max_graph_depth", key_count}, {"tracing_thresh", key_count},
    {"function_profile", key_bool}, {"graph_time", key_bool},
};

/* The entry [b, e) of the text (without its ';'). */
static int parse_entry(struct parser *p, size_t b, size_t e) {
  struct span all = trim(p->text, b, e);
  if (all.len == 0)
    return 0;
  const char *eq = memchr(p->text + all.pos, '=', all.len);
  if (eq == NULL)
    return fail(p, all.pos, "expected key=value, got '%.*s%s'", ECHO(p, all));
  size_t eq_pos = (size_t)(eq - p->text);
  struct span key = trim(p->text, all.pos, eq_pos);
  struct span value = trim(p->text, eq_pos + 1, e);
  for (size_t i = 0; i < sizeof k_keys / sizeof k_keys[0]; i++)
    if (span_is(p, key, k_keys[i].name)) {
      p->key = k_keys[i].name;
      return k_keys[i].parse(p, value);
    }
  return fail(p, key.pos, "unknown key '%.*s%s' (keys: events, buffer_kb, total_kb, mode, "
                          "output, max_file_kb, clock, buffers, trigger, tracer, "
                          "ftrace_filter, ftrace_notrace, graph_function, graph_notrace, "
                          "max_graph_depth, tracing_thresh, function_profile, graph_time)",
              ECHO(p, key));
}

static int parse_entries(struct parser *p) {
  size_t b = 0;
  for (;;) {
    size_t e = b;
    while (p->text[e] != '\0' && p->text[e] != ';')
      e++;
    int rc = parse_entry(p, b, e);
    if (rc != 0 || p->text[e] == '\0')
      return rc;
    b = e + 1;
  }
}

/* A value as given and its NUL into the sink; returns where it starts. */
static size_t put_span(struct parser *p, struct sink *s, struct span v) {
  size_t at = s->used;
  put(s, p->text + v.pos, v.len);
  put(s, "", 1);
  return at;
}

/* Copies the given strings into strbuf, events first; pointers are set only once all fit. */
static int store_strings(struct parser *p, char *strbuf, size_t strbuf_size) {
  struct sink s = {strbuf, strbuf != NULL ? strbuf_size : 0, 0};
  size_t output_at = 0, buffers_at = 0, trigger_at = 0;
  if (p->has_events) { /* at strbuf + 0 */
    walk_events(p, p->events, &s); /* validated already: cannot fail */
    put(&s, "", 1);
  }
  if (p->has_output)
    output_at = put_span(p, &s, p->output);
  if (p->has_buffers)
    buffers_at = put_span(p, &s, p->buffers);
  if (p->has_trigger)
    trigger_at = put_span(p, &s, p->trigger);
  if (s.used > s.size) {
    if (p->err != NULL && p->err_size > 0)
      snprintf(p->err, p->err_size, "FXTRACE: strbuf has %zu bytes, the events%s strings need %zu",
               s.size, p->has_buffers ? ", output and buffers" : " and output", s.used);
    return FXT_ENOBUFS;
  }
  if (p->has_events)
    p->cfg->events = strbuf;
  if (p->has_output)
    p->cfg->output = strbuf + output_at;
  if (p->has_buffers)
    p->cfg->buffers = strbuf + buffers_at;
  if (p->has_trigger)
    p->cfg->trigger = strbuf + trigger_at;
  return 0;
}

/* text NULL (getenv of an unset variable) is the empty text: all defaults. */
FXT_API int fxt_config_parse(const char *text, struct fxt_session_config *cfg, char *strbuf,
                             size_t strbuf_size, char *err, size_t err_size) {
  struct parser p = {.text = text ? text : "", .cfg = cfg, .err = err, .err_size = err_size};
  if (cfg == NULL)
    return fail(&p, 0, "cfg is NULL");
  *cfg = k_defaults;
  int rc = parse_entries(&p);
  if (rc == 0)
    rc = store_strings(&p, strbuf, strbuf_size);
  if (rc != 0)
    *cfg = k_defaults;
  else if (err != NULL && err_size > 0)
    err[0] = '\0';
  return rc;
}

int fxt_config_value(const char *text, const char *key, char *out, size_t size) {
  int found = 0;
  for (size_t b = 0; text != NULL;) {
    size_t e = b;
    while (text[e] != '\0' && text[e] != ';')
      e++;
    struct span all = trim(text, b, e);
    const char *eq = memchr(text + all.pos, '=', all.len);
    if (eq != NULL) {
      struct span k = trim(text, all.pos, (size_t)(eq - text));
      struct span v = trim(text, (size_t)(eq - text) + 1, e);
      if (k.len == strlen(key) && memcmp(text + k.pos, key, k.len) == 0) {
        if (v.len >= size)
          return FXT_E2BIG;
        memcpy(out, text + v.pos, v.len);
        out[v.len] = '\0';
        found = 1;
      }
    }
    if (text[e] == '\0')
      break;
    b = e + 1;
  }
  return found;
}
