/* fuzz/fuzz_config.c - libFuzzer target for fxt_config_parse().
 *
 * The input, NUL-terminated (a NUL inside it ends the text early, as it would in the
 * environment), is parsed into heap buffers of exactly the sizes given, so ASan sees any
 * byte written past strbuf or err. Properties checked (abort() on any violation, on top of
 * ASan/UBSan):
 *  - the result is 0, FXT_EINVAL or FXT_ENOBUFS; with a strbuf of 2 * size + 16 bytes
 *    (normalizing "a" to "a:*" at most doubles the events text) never FXT_ENOBUFS;
 *  - on 0: err is ""; every field is in its documented range; events and output are either
 *    the default literals (same pointers as parsing ""; buffers, trigger: NULL) or NUL-terminated
 *    strings inside strbuf, never pointers into the input; events globs are normalized (one ':' each, no
 *    blank) and every '%' of output is followed by 'p' or '%';
 *  - on an error: err is "FXTRACE: ..." NUL-terminated, and *cfg equals the defaults;
 *  - the strbuf size reported by success is exact: one byte less gives FXT_ENOBUFS, the exact
 *    size gives the same strings;
 *  - a short err buffer gets a NUL-terminated prefix of the full message; err == NULL gives
 *    the same result.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fxtrace/session.h>

#define BIG_ERR 1024

static struct fxt_session_config g_defaults;

static void check(int ok) {
  if (!ok)
    abort();
}

/* Both NULL (the default), or equal strings. */
static int same_string(const char *a, const char *b) {
  return a == b || (a && b && strcmp(a, b) == 0);
}

static int same_config(const struct fxt_session_config *a, const struct fxt_session_config *b) {
  return a->struct_size == b->struct_size && a->mode == b->mode &&
         a->block_timeout_ms == b->block_timeout_ms && a->clock == b->clock &&
         a->buffer_kb == b->buffer_kb && a->total_kb == b->total_kb &&
         a->max_file_kb == b->max_file_kb && strcmp(a->events, b->events) == 0 &&
         strcmp(a->output, b->output) == 0 &&
         same_string(a->buffers, b->buffers) && same_string(a->trigger, b->trigger);
}

static int inside(const void *p, const void *base, size_t size) {
  uintptr_t a = (uintptr_t)p, b = (uintptr_t)base;
  return a >= b && a - b < size;
}

/* A string of the result: the default literal, or NUL-terminated inside strbuf. Returns the
 * bytes it takes in strbuf. */
static size_t check_string(const char *s, const char *dflt, const char *strbuf, size_t size,
                           const char *text, size_t text_size) {
  check(!inside(s, text, text_size));
  if (s == dflt)
    return 0;
  check(inside(s, strbuf, size));
  const char *nul = memchr(s, '\0', size - (size_t)(s - strbuf));
  check(nul != NULL);
  return (size_t)(nul - s) + 1;
}

static void check_events(const char *ev) {
  size_t colons = 0, len = 0;
  for (const char *p = ev;; p++) {
    if (*p == ',' || *p == '\0') {
      check(len > 0 || (p == ev && *p == '\0')); /* no empty glob; "" is allowed */
      check(len == 0 || colons == 1);
      if (*p == '\0')
        return;
      colons = len = 0;
      continue;
    }
    check(*p != ' ' && *p != '\t' && *p != ';' && *p != '=');
    colons += *p == ':';
    len++;
  }
}

static void check_output(const char *out) {
  check(strlen(out) <= 4095);
  for (const char *p = out; *p; p++) {
    if (*p == '%') {
      check(p[1] == 'p' || p[1] == '%');
      p++;
    }
  }
}

static void check_ok(const struct fxt_session_config *c) {
  check(c->struct_size == sizeof *c);
  check(c->mode <= FXT_MODE_BLOCK && c->clock <= FXT_CLOCK_MONOTONIC);
  check(c->block_timeout_ms >= 1 && c->block_timeout_ms <= 3600000);
  check(c->buffer_kb >= 1 && c->buffer_kb <= 2097152 && c->total_kb >= 1);
  check(c->max_file_kb <= (UINT64_C(1) << 54));
  check_events(c->events);
  check_output(c->output);
}

/* Parses with a heap strbuf and err of exactly these sizes (NULL when 0). */
static int parse(const char *text, struct fxt_session_config *cfg, char **strbuf, size_t sb_size,
                 char **err, size_t err_size) {
  *strbuf = sb_size ? malloc(sb_size) : NULL;
  *err = err_size ? malloc(err_size) : NULL;
  check((sb_size == 0 || *strbuf) && (err_size == 0 || *err));
  if (*err)
    memset(*err, 0x7E, err_size);
  return fxt_config_parse(text, cfg, *strbuf, sb_size, *err, err_size);
}

/* Same text with exactly `need` bytes of strbuf: same strings; one byte less: ENOBUFS. */
static void check_exact_size(const char *text, const struct fxt_session_config *want,
                             size_t need) {
  struct fxt_session_config cfg;
  char *sb, *err;
  check(parse(text, &cfg, &sb, need, &err, 64) == 0);
  check(same_config(&cfg, want));
  free(sb);
  free(err);
  if (need == 0)
    return;
  check(parse(text, &cfg, &sb, need - 1, &err, 64) == FXT_ENOBUFS);
  check(strncmp(err, "FXTRACE: ", 9) == 0 && memchr(err, '\0', 64) != NULL);
  check(same_config(&cfg, &g_defaults));
  free(sb);
  free(err);
}

/* An error again with a short err buffer: a NUL-terminated prefix of the full message; and
 * again with err == NULL: the same result. */
static void check_short_err(const char *text, int rc, const char *full, size_t err_size) {
  struct fxt_session_config cfg;
  char *sb, *err;
  size_t full_len = strlen(full), len;
  check(parse(text, &cfg, &sb, 0, &err, err_size) == rc); /* FXT_EINVAL before FXT_ENOBUFS */
  check(memchr(err, '\0', err_size) != NULL);
  len = strlen(err);
  check(len == (full_len < err_size - 1 ? full_len : err_size - 1));
  check(memcmp(err, full, len) == 0);
  free(sb);
  free(err);
  check(fxt_config_parse(text, &cfg, NULL, 0, NULL, 0) == rc);
  check(same_config(&cfg, &g_defaults));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1), *sb, *err;
  check(text != NULL);
  memcpy(text, data, size);
  text[size] = '\0';
  if (g_defaults.struct_size == 0)
    check(fxt_config_parse("", &g_defaults, NULL, 0, NULL, 0) == 0);

  struct fxt_session_config cfg;
  size_t sb_size = 2 * size + 16;
  int rc = parse(text, &cfg, &sb, sb_size, &err, BIG_ERR);
  check(rc == 0 || rc == FXT_EINVAL);
  check(memchr(err, '\0', BIG_ERR) != NULL);
  if (rc == 0) {
    check(err[0] == '\0');
    check_ok(&cfg);
    size_t need = check_string(cfg.events, g_defaults.events, sb, sb_size, text, size + 1) +
                  check_string(cfg.output, g_defaults.output, sb, sb_size, text, size + 1) +
                  check_string(cfg.buffers, g_defaults.buffers, sb, sb_size, text, size + 1) +
                  check_string(cfg.trigger, g_defaults.trigger, sb, sb_size, text, size + 1);
    check_exact_size(text, &cfg, need);
  } else {
    check(strncmp(err, "FXTRACE: at ", 12) == 0 && strlen(err) > 12);
    check(same_config(&cfg, &g_defaults) && cfg.events == g_defaults.events &&
          cfg.output == g_defaults.output && cfg.buffers == g_defaults.buffers &&
          cfg.trigger == g_defaults.trigger);
    check_short_err(text, rc, err, 1 + size % 40);
  }
  free(sb);
  free(err);
  free(text);
  return 0;
}
