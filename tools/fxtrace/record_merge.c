/* tools/fxtrace/record_merge.c - see record_merge.h. */
#define _POSIX_C_SOURCE 200809L
#include "record_merge.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fxtrace/fxt.h>

#include "base/grow.h"
#include "cli.h"
#include "formats/fileio.h"
#include "formats/fxtfile.h"
#include "progress.h"

struct part {
  char *path;
  struct timespec mtime;
  unsigned long pid;
  uint64_t size;
};

/* The merge's progress line: where the decoding of the parts is, in bytes of all of them. */
struct merge_progress {
  struct progress prog;
  uint64_t base; /* the bytes of the parts before the one decoded */
  uint32_t records;
};

static int by_time_pid(const void *pa, const void *pb) {
  const struct part *a = pa, *b = pb;
  if (a->mtime.tv_sec != b->mtime.tv_sec)
    return a->mtime.tv_sec < b->mtime.tv_sec ? -1 : 1;
  if (a->mtime.tv_nsec != b->mtime.tv_nsec)
    return a->mtime.tv_nsec < b->mtime.tv_nsec ? -1 : 1;
  return (a->pid > b->pid) - (a->pid < b->pid);
}

static bool has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n > m && strcmp(s + n - m, suffix) == 0;
}

/* The regular "*.fxt" files of dir, sorted; NULL with *n = 0 when there are none. */
static struct part *list_parts(const char *dir, size_t *n) {
  *n = 0;
  DIR *d = opendir(dir);
  if (d == NULL)
    return NULL;
  struct part *parts = NULL;
  size_t cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!has_suffix(e->d_name, ".fxt"))
      continue;
    if (!fxt_grow((void **)&parts, &cap, *n + 1, sizeof *parts, 8))
      break;
    struct part p = {0};
    struct stat st;
    size_t len = strlen(dir) + strlen(e->d_name) + 2;
    if ((p.path = malloc(len)) == NULL)
      break;
    snprintf(p.path, len, "%s/%s", dir, e->d_name);
    if (lstat(p.path, &st) != 0 || !S_ISREG(st.st_mode)) {
      free(p.path);
      continue;
    }
    p.mtime = st.st_mtim;
    p.size = (uint64_t)st.st_size;
    if (strncmp(e->d_name, "fxtrace-", 8) == 0)
      p.pid = strtoul(e->d_name + 8, NULL, 10);
    parts[(*n)++] = p;
  }
  closedir(d);
  if (*n > 1) /* (qsort of NULL: undefined, even for none) */
    qsort(parts, *n, sizeof *parts, by_time_pid);
  return parts;
}

int fxt_part_walk(const char *cmd, const char *path, const void *buf, size_t len, bool strict,
                  fxt_part_fn fn, void *ctx, uint64_t *valid) {
  struct fxt_str_slot *table = malloc(FXT_STRING_TABLE_SIZE * sizeof *table);
  struct fxt_decoder *d = malloc(sizeof *d);
  struct fxt_record *rec = malloc(sizeof *rec);
  char err[FXT_DECODER_MSG_SIZE] = "out of memory";
  struct fxtf_tables more = {.n = 0};
  int rc = table && d && rec ? fxtf_decoder_init(d, buf, len, table, &more) : FXT_ENOMEM;
  int fn_rc = 0;
  while (rc == 0 && (rc = fxt_decoder_next(d, rec, err, sizeof err)) == 1)
    rc = fn != NULL ? (fn_rc = fn(ctx, d, rec)) : 0;
  struct fxt_decoder_stats st = {0};
  if (d != NULL && rc != FXT_ENOMEM)
    fxt_decoder_stats(d, &st);
  /* A torn tail (the file ends inside a record: a write cut short) is said as report, stats
   * and convert say it (cli_torn), and refused when strict; other damage keeps the records
   * before it, with a warning. */
  bool torn = rc == FXT_EBADMSG && fn_rc == 0 && fxtf_torn_at(buf, len, st.bytes);
  bool refused = torn && !cli_torn(cmd, path, st.bytes, len, strict);
  if (rc < 0 && fn_rc == 0 && !torn)
    fprintf(stderr, "fxtrace %s: warning: %s: %s; keeping its first %llu bytes\n", cmd, path,
            err, (unsigned long long)st.bytes);
  *valid = st.bytes;
  free(rec);
  free(d);
  fxtf_tables_free(&more);
  free(table);
  return fn_rc != 0 ? fn_rc : rc == FXT_ENOMEM ? rc : refused ? FXT_EBADMSG : 0;
}

/* fxt_part_walk's callback: the progress line, looked at every 4096 records. */
static int walked(void *ctx, const struct fxt_decoder *d, const struct fxt_record *rec) {
  (void)d;
  struct merge_progress *m = ctx;
  if ((++m->records & 4095) == 0) {
    m->prog.done = m->base + rec->offset;
    progress_update(&m->prog);
  }
  return 0;
}

/* Bytes of buf that decode: all of it, or the records before the first bad one. */
static uint64_t valid_prefix(const struct part *p, const void *buf, size_t len,
                             struct merge_progress *m) {
  uint64_t valid = 0;
  fxt_part_walk("record", p->path, buf, len, false, walked, m, &valid);
  return valid;
}

/* Appends part p to out (skipping its magic record unless it is the first); 1 when something
 * was written, 0 when the part had nothing, -1 on a write error. */
static int append(int out, const struct part *p, bool first, struct merge_progress *m) {
  struct fxt_fio_in in;
  if (fxt_fio_map(&in, p->path, NULL, 0) != 0 || in.len <= FXT_WORD_BYTES) {
    fxt_fio_unmap(&in);
    fprintf(stderr, "fxtrace record: warning: %s: empty trace, skipped\n", p->path);
    return 0;
  }
  uint64_t keep = valid_prefix(p, in.data, in.len, m);
  int rc = 0;
  if (keep > FXT_WORD_BYTES) {
    size_t skip = first ? 0 : FXT_WORD_BYTES;
    rc = fxt_fio_write_all(out, in.data + skip, (size_t)keep - skip) ? 1 : -1;
  }
  fxt_fio_unmap(&in);
  return rc;
}

int record_merge(const char *dir, const char *output, size_t *found) {
  size_t n;
  struct part *parts = list_parts(dir, &n);
  *found = n;
  int merged = 0, out = -1;
  struct merge_progress m = {.base = 0};
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++)
    total += parts[i].size;
  progress_init(&m.prog, "record", total);
  for (size_t i = 0; i < n && merged >= 0; i++) {
    if (out < 0)
      out = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
      fprintf(stderr, "fxtrace record: %s: %s\n", output, strerror(errno));
      merged = -1;
      break;
    }
    int rc = append(out, &parts[i], merged == 0, &m);
    m.base += parts[i].size;
    if (rc < 0) {
      fprintf(stderr, "fxtrace record: %s: %s\n", output, strerror(errno));
      merged = -1;
    }
    merged += rc > 0;
  }
  progress_end(&m.prog);
  if (out >= 0 && close(out) != 0 && merged > 0) {
    fprintf(stderr, "fxtrace record: %s: %s\n", output, strerror(errno));
    merged = -1;
  }
  if (out >= 0 && merged == 0)
    unlink(output); /* nothing usable: leave no empty file behind */
  for (size_t i = 0; i < n; i++)
    free(parts[i].path);
  free(parts);
  return merged;
}
