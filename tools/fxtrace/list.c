/* tools/fxtrace/list.c - `fxtrace list [-v] FILE...`: the events compiled into executables and
 * shared objects, read from their files without running them (src/formats/elf_events.h), one
 * `system:event` per line as a running program's available_events lists them; -v: each one's
 * `format` file as the live tree serves it (src/base/tp_format.h), but for its ID, which the
 * registry gives at run time. */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <fxtrace/errors.h>

#include "base/grow.h"
#include "base/tbuf.h"
#include "base/tp_format.h"
#include "formats/elf_events.h"
#include "formats/fileio.h"

static const char k_usage[] =
    "usage: fxtrace list [--help] [-v] FILE...\n"
    "\n"
    "Prints the events compiled into each FILE (an executable or a shared object built with\n"
    "fxtrace, not run), one 'system:event' per line as a running program's available_events\n"
    "lists them: the events of several FILEs (a program and the libraries it loads) are\n"
    "listed once each, in the order they are first found.\n"
    "-v: after each event, its kind and where it is defined ('# kind, file:line') and its\n"
    "format file as the live tree serves it (events/SYSTEM/EVENT/format), without the 'ID:'\n"
    "line: the ID is given when the program runs. Each event's text ends with its 'print fmt:'\n"
    "line.\n"
    "Reads ELF files of this host's ABI; the tracepoints' pointers of a PIE or a shared object\n"
    "are taken from its dynamic relocations. Exit status 1 when a FILE is not an ELF file,\n"
    "is malformed or holds no fxtrace events (the others are listed all the same).\n";

/* The distinct names listed so far (few: a linear search). */
struct listed {
  char **names;
  size_t n, cap;
  bool verbose, oom;
  const char *file;
};

static const char *const k_kinds[] = {"typed tracepoint", "instant", "counter", "duration",
                                      "async",            "flow",    "printk"};

/* A line of the format text: its tabs as they are, other controls (a file's bytes: a string
 * may hold any) as \xNN, never raw to a terminal. */
static void put_line(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if ((c < 0x20 && c != '\t') || c == 0x7f)
      printf("\\x%02x", c);
    else
      putchar(c);
  }
  putchar('\n');
}

/* The file's tracepoints, in its order (pointers into its mapped image). */
struct file_events {
  struct fxt_elf_event *ev;
  size_t n, cap;
};

static int collect(void *ctx, const struct fxt_elf_event *ev) {
  struct file_events *f = ctx;
  if (!fxt_grow((void **)&f->ev, &f->cap, f->n + 1, sizeof *f->ev, 64))
    return FXT_ENOMEM;
  f->ev[f->n] = *ev;
  f->ev[f->n].tp.fields = ev->tp.fields ? f->ev[f->n].fields : NULL;
  f->n++;
  return 0;
}

static bool same_event(const struct fxt_tracepoint *a, const struct fxt_tracepoint *b) {
  return strcmp(a->system, b->system) == 0 && strcmp(a->name, b->name) == 0;
}

/* Event i of the file, once per name: its format's fields those of all the file's sites of
 * the event, as the live tree merges a running program's (fxt_tracepoint_fields_merge). */
static int print_event(struct listed *l, const struct file_events *f, size_t i) {
  const struct fxt_elf_event *ev = &f->ev[i];
  size_t len = strlen(ev->tp.system) + 1 + strlen(ev->tp.name);
  char *name = malloc(len + 1);
  if (name == NULL) {
    l->oom = true;
    return FXT_ENOMEM;
  }
  snprintf(name, len + 1, "%s:%s", ev->tp.system, ev->tp.name);
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->names[i], name) == 0) {
      free(name);
      return 0; /* a header's tracepoint, once per unit: one event */
    }
  if (!fxt_grow((void **)&l->names, &l->cap, l->n + 1, sizeof *l->names, 64)) {
    free(name);
    l->oom = true;
    return FXT_ENOMEM;
  }
  l->names[l->n++] = name;
  char shown[1400]; /* the file's bytes: printable, never raw (cli_printable) */
  printf("%s\n", cli_printable(name, len, shown, sizeof shown));
  if (!l->verbose)
    return 0;
  const char *file = ev->tp.file ? ev->tp.file : "?";
  printf("# %s, %s:%" PRIu32 "\n", k_kinds[ev->tp.kind],
         cli_printable(file, strlen(file), shown, sizeof shown), ev->tp.line);
  struct fxt_tbuf b;
  fxt_tbuf_init(&b);
  struct fxt_field fields[FXT_TP_FIELDS_MAX];
  uint32_t nf = fxt_tracepoint_fields(&ev->tp, fields);
  for (size_t j = i + 1; ev->tp.kind != FXT_TP_TYPED && j < f->n; j++)
    if (same_event(&ev->tp, &f->ev[j].tp))
      nf = fxt_tracepoint_fields_merge(&f->ev[j].tp, fields, nf);
  fxt_tp_format_fields(&b, &ev->tp, 0, fields, nf);
  for (size_t at = 0; at < b.len;) { /* line by line, the ID line left out */
    const char *nl = memchr(b.data + at, '\n', b.len - at);
    size_t n = nl ? (size_t)(nl - (b.data + at)) : b.len - at;
    if (strncmp(b.data + at, "ID: ", n < 4 ? n : 4) != 0 || n < 4) {
      put_line(b.data + at, n);
    }
    at += n + 1;
  }
  fxt_tbuf_free(&b);
  return 0;
}

int cmd_list(int argc, char **argv) {
  struct listed l = {0};
  int first = 1, rc = CLI_EXIT_OK;
  for (; first < argc && argv[first][0] == '-' && argv[first][1] != '\0'; first++) {
    if (strcmp(argv[first], "--help") == 0 || strcmp(argv[first], "-h") == 0) {
      fputs(k_usage, stdout);
      return CLI_EXIT_OK;
    }
    if (strcmp(argv[first], "--") == 0) {
      first++;
      break;
    }
    if (strcmp(argv[first], "-v") != 0) {
      char msg[300];
      snprintf(msg, sizeof msg, "unknown option '%s'", argv[first]);
      return cli_usage_error("list", k_usage, msg);
    }
    l.verbose = true;
  }
  if (first >= argc)
    return cli_usage_error("list", k_usage, "missing FILE");
  for (int i = first; i < argc && !l.oom; i++) {
    struct fxt_fio_in in;
    char err[FXT_ELF_ERR_SIZE > FXT_FIO_ERR_SIZE ? FXT_ELF_ERR_SIZE : FXT_FIO_ERR_SIZE];
    l.file = argv[i];
    if (fxt_fio_map(&in, argv[i], err, sizeof err) != 0) {
      cli_file_error("list", argv[i], err);
      rc = CLI_EXIT_FAIL;
      continue;
    }
    struct file_events f = {0};
    int r = fxt_elf_events(in.data ? (const void *)in.data : "", in.len, collect, &f, err,
                           sizeof err);
    l.oom = r == FXT_ENOMEM;
    for (size_t k = 0; k < f.n && !l.oom; k++)
      print_event(&l, &f, k);
    free(f.ev);
    fxt_fio_unmap(&in);
    if (r != 0 && !l.oom) {
      cli_file_error("list", argv[i], err);
      rc = CLI_EXIT_FAIL;
    }
  }
  if (l.oom) {
    fprintf(stderr, "fxtrace list: out of memory\n");
    rc = CLI_EXIT_FAIL;
  }
  for (size_t i = 0; i < l.n; i++)
    free(l.names[i]);
  free(l.names);
  return rc;
}
