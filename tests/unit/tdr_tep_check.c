/* tests/unit/tdr_tep_check.c - the trace.dat format parser (src/formats/tracedat_read_format.c)
 * against libtraceevent, the library trace-cmd and perf parse the same texts with, over every event
 * format of the running kernel (events/<sys>/<event>/format under tracefs).
 *
 * For each format both parse, and per field they agree on the name, offset, size, signedness,
 * and on what the field is: array, dynamic (__data_loc / __rel_loc, and relative), pointer.
 * (Text: libtraceevent also calls u8 and s8 arrays strings; fxtrace keeps them bytes, so only
 * char arrays are compared as text.) Exit 0 with a count, 1 on a disagreement, 77 when there
 * is no tracefs to read. cmocka is not used: this program is an oracle run, not unit cases.
 *   tdr_tep_check [TRACEFS_DIR]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/tracedat_read.h"

/* libtraceevent's header has an enumerator beyond int (TEP_EVENT_FL_FAILED): not -pedantic. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#endif
#include <event-parse.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

static int g_bad, g_fields;

static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return NULL;
  size_t cap = 1 << 16;
  char *buf = malloc(cap);
  *n = buf ? fread(buf, 1, cap, f) : 0;
  fclose(f);
  return buf;
}

static bool same(struct fxt_td_text t, const char *s) {
  return t.len == strlen(s) && memcmp(t.data, s, t.len) == 0;
}

static void compare(const char *sys, const char *path, struct tep_handle *tep) {
  size_t n;
  char *text = slurp(path, &n);
  if (text == NULL || n == 0) {
    free(text);
    return;
  }
  struct tep_event *te = NULL;
  if (tep_parse_format(tep, &te, text, n, sys) != 0 || te == NULL) {
    free(text); /* libtraceevent refuses it: nothing to compare */
    return;
  }
  struct fxt_td_event ev;
  char err[FXT_TD_ERR_SIZE];
  if (fxt_td_parse_format(text, n, 0, (struct fxt_td_text){sys, (uint32_t)strlen(sys)}, &ev, err,
                          sizeof err) != 0) {
    printf("%s: libtraceevent reads it, fxtrace does not: %s\n", path, err);
    g_bad++;
    free(text);
    return;
  }
  struct tep_format_field **common = tep_event_common_fields(te), **own = tep_event_fields(te);
  uint32_t k = 0;
  for (int pass = 0; pass < 2; pass++) {
    struct tep_format_field **list = pass ? own : common;
    for (size_t i = 0; list != NULL && list[i] != NULL; i++, k++) {
      const struct tep_format_field *tf = list[i];
      if (k >= ev.nfields) {
        printf("%s: fxtrace has %u fields, libtraceevent more\n", path, ev.nfields);
        g_bad++;
        break;
      }
      const struct fxt_td_field *f = &ev.fields[k];
      bool array = f->kind == FXT_TD_FIELD_STR || f->kind == FXT_TD_FIELD_BYTES;
      bool dyn = f->kind == FXT_TD_FIELD_DSTR || f->kind == FXT_TD_FIELD_DBYTES;
      bool tarray = (tf->flags & TEP_FIELD_IS_ARRAY) && !(tf->flags & TEP_FIELD_IS_DYNAMIC);
      bool tdyn = (tf->flags & TEP_FIELD_IS_DYNAMIC) != 0;
      bool text_ok = f->kind != FXT_TD_FIELD_STR && f->kind != FXT_TD_FIELD_DSTR
                         ? true
                         : (tf->flags & TEP_FIELD_IS_STRING) != 0;
      /* fxtrace calls a non-array field of an odd size bytes: libtraceevent a plain field */
      bool odd = f->kind == FXT_TD_FIELD_BYTES && !tarray;
      if (!same(f->name, tf->name) || f->offset != (uint32_t)tf->offset ||
          f->size != (uint32_t)tf->size ||
          f->is_signed != ((tf->flags & TEP_FIELD_IS_SIGNED) != 0) || (!odd && array != tarray) ||
          dyn != tdyn || (dyn && f->rel != ((tf->flags & TEP_FIELD_IS_RELATIVE) != 0)) ||
          (f->kind == FXT_TD_FIELD_PTR) != ((tf->flags & TEP_FIELD_IS_POINTER) != 0) || !text_ok) {
        printf("%s: field %u: fxtrace %.*s off %u size %u signed %d kind %u rel %d; "
               "libtraceevent %s off %d size %d flags 0x%lx\n",
               path, k, (int)f->name.len, f->name.data, f->offset, f->size, f->is_signed, f->kind,
               f->rel, tf->name, tf->offset, tf->size, tf->flags);
        g_bad++;
      }
      g_fields++;
    }
  }
  if (k != ev.nfields) {
    printf("%s: fxtrace has %u fields, libtraceevent %u\n", path, ev.nfields, k);
    g_bad++;
  }
  free(common);
  free(own);
  fxt_td_event_free(&ev);
  free(text);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : "/sys/kernel/tracing";
  char path[4096];
  snprintf(path, sizeof path, "%s/events", root);
  DIR *d = opendir(path);
  if (d == NULL) {
    printf("SKIP: no %s\n", path);
    return 77;
  }
  tep_set_loglevel(TEP_LOG_NONE);
  struct tep_handle *tep = tep_alloc();
  tep_set_long_size(tep, 8);
  int formats = 0;
  struct dirent *s;
  while ((s = readdir(d)) != NULL) {
    if (s->d_name[0] == '.')
      continue;
    snprintf(path, sizeof path, "%s/events/%s", root, s->d_name);
    DIR *e = opendir(path);
    struct dirent *ev;
    while (e != NULL && (ev = readdir(e)) != NULL) {
      if (ev->d_name[0] == '.')
        continue;
      snprintf(path, sizeof path, "%s/events/%s/%s/format", root, s->d_name, ev->d_name);
      int before = g_fields;
      compare(s->d_name, path, tep);
      formats += g_fields > before;
    }
    if (e)
      closedir(e);
  }
  closedir(d);
  tep_free(tep);
  if (formats == 0) {
    printf("SKIP: no readable event formats under %s\n", root);
    return 77;
  }
  printf("%d formats, %d fields compared with libtraceevent: %d disagreements\n", formats, g_fields,
         g_bad);
  return g_bad ? 1 : 0;
}
