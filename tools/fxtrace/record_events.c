/* tools/fxtrace/record_events.c - `fxtrace record -e GLOBS` checked against the events the
 * program registered (record_events.h). */
#define _POSIX_C_SOURCE 200809L
#include "record_events.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/globs.h"
#include "base/grow.h"
#include "cli.h"
#include "formats/fileio.h"
#include "record_merge.h"

/* The distinct "system:event" names of the file's descriptions. */
struct names {
  char **v;
  size_t n, cap;
  bool oom;
};

static int collect(void *ctx, const struct fxt_decoder *d, const struct fxt_record *rec) {
  struct names *s = ctx;
  struct fxtf_desc *desc;
  if (!fxtf_is_desc(rec) || (desc = malloc(sizeof *desc)) == NULL)
    return 0;
  char err[FXTF_ERR_SIZE], *name = NULL;
  if (fxtf_parse_desc(d, rec, desc, err, sizeof err) == 0) {
    size_t len = desc->system.len + 1 + desc->name.len;
    if ((name = malloc(len + 1)) != NULL)
      snprintf(name, len + 1, "%.*s:%.*s", (int)desc->system.len, desc->system.data,
               (int)desc->name.len, desc->name.data);
  }
  free(desc);
  for (size_t i = 0; name != NULL && i < s->n; i++)
    if (strcmp(s->v[i], name) == 0) {
      free(name);
      return 0;
    }
  if (name != NULL && fxt_grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v, 32))
    s->v[s->n++] = name;
  else if (name != NULL) {
    free(name);
    s->oom = true;
  }
  return 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether glob (NUL-terminated) matches a name, as the tracer's registry matches it. */
static bool matches(const struct names *s, const char *glob) {
  for (size_t i = 0; i < s->n; i++)
    if (fnmatch(glob, s->v[i], 0) == 0)
      return true;
  return false;
}

/* Says the globs of events (record -e's list, normalized as the tracer's registry does:
 * src/base/globs.h) that match no name; false when there was one. */
static bool check(const struct names *s, const char *events) {
  char *norm = fxt_globs_normalize(events);
  bool ok = true;
  for (char *p = norm, *next; p != NULL && *p; p = next) {
    next = p + strcspn(p, ",");
    if (*next)
      *next++ = 0;
    if (p[0] != '!' && !matches(s, p)) {
      fprintf(stderr, "fxtrace record: -e '%s' matches no event of the program\n", p);
      ok = false;
    }
  }
  free(norm);
  return ok;
}

bool record_events_check(const char *fxt, const char *events) {
  struct fxt_fio_in in;
  if (events == NULL || fxt_fio_map(&in, fxt, NULL, 0) != 0)
    return true; /* nothing asked, or nothing to tell: record said why */
  struct names s = {0};
  uint64_t valid;
  fxt_part_walk("record", fxt, in.data, in.len, false, collect, &s, &valid);
  fxt_fio_unmap(&in);
  bool ok = s.oom || check(&s, events);
  if (!ok) {
    qsort(s.v, s.n, sizeof *s.v, by_name);
    /* FXT_PRINTK's call sites are events named by their format: shown as one, printk:*. */
    size_t shown_n = 0, printk = 0;
    for (size_t i = 0; i < s.n; i++)
      printk += strncmp(s.v[i], "printk:", 7) == 0;
    fprintf(stderr, "fxtrace record: the program has %zu event%s%s", s.n, s.n == 1 ? "" : "s",
            s.n ? ":" : " (it registered no tracepoint)");
    for (size_t i = 0; i < s.n; i++) {
      bool pk = strncmp(s.v[i], "printk:", 7) == 0;
      if (pk && i > 0 && strncmp(s.v[i - 1], "printk:", 7) == 0)
        continue;
      char shown[600]; /* names come from the file: never raw */
      fprintf(stderr, "%s%s", shown_n++ % 4 ? ", " : "\n  ",
              pk ? "printk:*" : cli_printable(s.v[i], strlen(s.v[i]), shown, sizeof shown));
      if (pk)
        fprintf(stderr, " (%zu format%s)", printk, printk == 1 ? "" : "s");
    }
    fputc('\n', stderr);
  }
  for (size_t i = 0; i < s.n; i++)
    free(s.v[i]);
  free(s.v);
  return ok;
}
