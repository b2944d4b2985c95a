/* fuzz/fuzz_recover.c - libFuzzer target for the session-file and buffer-file reader of
 * `fxtrace recover` (src/host/recover*.c, the layout in shfile.h and docs/recovery.md).
 *
 * Real session files are megabytes (mostly sparse tables), too big to mutate byte by byte, so
 * the input is an edit script applied to one real dead session: at start-up a forked child
 * traces three threads into 16 KiB file-backed buffers (one fills its buffer and drops, two
 * leave records in theirs) and is killed with SIGKILL; its session file, buffer file and partial output are mapped
 * privately (copy-on-write) and its directory removed. Each input is a list of edits:
 *
 *   u8 file (mod 3: session, buffers, output)   u8 flags (bit 0 truncate, bit 1 far)
 *   u32 offset (little-endian; near: mod min(size, 16 KiB), where headers and tables start;
 *   far: mod size)   u8 n   n bytes written at offset (truncate: the file ends at offset)
 *
 * applied, recovered, and undone. Properties (abort() on a violation, on top of ASan/UBSan):
 *  - recovery returns 0 (nothing damaged), 1 (written, damage reported) or FXT_EBADMSG
 *    (the header itself unusable; then a report line names the session file);
 *  - the undamaged session recovers with 0 and no damage reported;
 *  - whatever it returned 0 or 1 for decodes strictly, from the magic record to the end;
 *  - a damage report is one non-empty line.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <fxtrace/errors.h>
#include <fxtrace/fxt.h>
#include <fxtrace/fxtrace.h>
#include <fxtrace/session.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recover_util.h" /* tests/recover: files, the output sink */

FXT_TRACEPOINT(fz, seq, "seq=%llu", (u64, seq));

struct file {
  char name[64];
  unsigned char *data;
  uint64_t size;
};

static struct file g_files[3]; /* session, buffers, output */
static int g_ready;

/* A failed check names itself: one target, several checks, a crash says which. */
static void check_failed(const char *what, int line)
{
  fprintf(stderr, "fuzz_recover.c:%d: check failed: %s\n", line, what);
  abort();
}
#define check(ok) ((ok) ? (void)0 : check_failed(#ok, __LINE__))

/* ---- the dead session, made once ---------------------------------------------------------- */

static _Atomic int g_emitted; /* child: emitters done (they stay alive: an exited thread's
                                buffer would be drained) */

static void *emitter(void *arg)
{
  uint64_t n = (uint64_t)(uintptr_t)arg;
  for (uint64_t i = 0; i < n; i++)
    FXT_TRACE(fz, seq, i);
  atomic_fetch_add(&g_emitted, 1);
  for (;;)
    pause();
  return NULL;
}

/* The traced child: one thread fills its buffer (drops, and the consumer drains most of it),
 * then another writes less than the consumer's wake mark and the main thread one event, so
 * that the kill right after finds records in their buffers. */
static void child(const char *dir, int ready_fd)
{
  char out[512];
  snprintf(out, sizeof(out), "%s/out.fxt", dir);
  struct fxt_session_config cfg = {.struct_size = sizeof(cfg), .events = "fz:*", .output = out,
                                   .buffers = dir, .buffer_kb = 16, .total_kb = 256};
  int rc = fxt_session_start(&cfg);
  if (rc != 0) {
    fprintf(stderr, "fuzz_recover: the traced child's session did not start: %s\n", fxt_strerror(rc));
    _exit(1);
  }
  static const uintptr_t counts[2] = {3000, 150};
  for (int i = 0; i < 2; i++) {
    pthread_t t;
    pthread_create(&t, NULL, emitter, (void *)counts[i]);
    while (atomic_load(&g_emitted) <= i)
      sched_yield();
  }
  FXT_TRACE(fz, seq, 0);
  if (write(ready_fd, "r", 1) != 1)
    _exit(1);
  for (;;)
    pause();
}

/* Maps path privately (writable copy-on-write; it outlives the file). */
static void map_copy(struct file *f, const char *path, const char *name)
{
  snprintf(f->name, sizeof(f->name), "%s", name);
  int fd = open(path, O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
    fprintf(stderr, "fuzz_recover: %s: %s\n", path, fd < 0 ? "cannot open" : "empty");
    abort();
  }
  f->size = (uint64_t)st.st_size;
  f->data = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  check(f->data != MAP_FAILED);
  close(fd);
}

static void make_session(void)
{
  char dir[] = "/dev/shm/fxtrace-fuzz-recover-XXXXXX";
  check(mkdtemp(dir) != NULL);
  int p[2];
  check(pipe(p) == 0);
  pid_t pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    close(p[0]);
    child(dir, p[1]);
  }
  close(p[1]);
  char c;
  ssize_t got = read(p[0], &c, 1);
  close(p[0]);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  char session[512] = "";
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL)
    if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && strchr(e->d_name, '.'))
      snprintf(session, sizeof(session), "%s/%s", dir, e->d_name);
  if (d)
    closedir(d);
  if (got == 1 && session[0]) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", session, FXT_SH_FILE);
    map_copy(&g_files[0], path, "session");
    snprintf(path, sizeof(path), "%s/%s", session, FXT_SH_POOL_FILE);
    map_copy(&g_files[1], path, "buffers");
    snprintf(path, sizeof(path), "%s/out.fxt", dir);
    map_copy(&g_files[2], path, "out.fxt");
  }
  ru_rmtree(dir); /* before any check can abort: nothing is left behind */
  if (got != 1 || !session[0]) {
    fprintf(stderr, "fuzz_recover: no dead session made: ready byte %zd, session dir '%s'\n", got, session);
    abort();
  }
}

/* ---- one input ---------------------------------------------------------------------------- */

struct reports {
  int damage;
  int names_session;
};

static void on_report(void *ctx, int severity, const char *line)
{
  struct reports *r = ctx;
  if (getenv("FZ_VERBOSE")) /* FZ_VERBOSE=1: every report, to read what a crash input does */
    fprintf(stderr, "report %d: %s\n", severity, line);
  check(line[0] != 0 && strchr(line, '\n') == NULL);
  if (severity) {
    r->damage++;
    r->names_session |= strncmp(line, "session: ", 9) == 0;
  }
}

/* The recovered trace decodes strictly to its end. */
static void check_decodes(const struct mem_sink *out)
{
  static struct fxt_str_slot table[FXT_STRING_TABLE_SIZE];
  static struct fxt_record rec;
  struct fxt_decoder d;
  fxt_decoder_init(&d, out->buf, out->len, table);
  char err[256];
  int rc;
  while ((rc = fxt_decoder_next(&d, &rec, err, sizeof(err))) == 1)
    ;
  if (rc != 0)
    fprintf(stderr, "recovered trace: %s\n", err);
  check(rc == 0);
}

/* An applied edit, to be undone. */
struct undo {
  int file;
  uint64_t off, old_size;
  uint8_t n;
  unsigned char old[255];
};

#define MAX_EDITS 32

/* libFuzzer calls this before it starts its threads (the RSS watcher): the fork in
 * make_session must happen while the process has one thread, or the child may inherit an
 * allocator lock (ASan's) that a thread gone in the child held, and hang in its first malloc.
 * replay.c does not call it; its process is single-threaded throughout. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  (void)argv;
  make_session();
  g_ready = 1;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (!g_ready) {
    make_session();
    g_ready = 1;
  }
  static struct undo undo[MAX_EDITS];
  int nundo = 0;
  size_t at = 0;
  while (at + 7 <= size && nundo < MAX_EDITS) {
    struct undo *u = &undo[nundo];
    u->file = data[at] % 3;
    uint8_t flags = data[at + 1];
    uint32_t off = (uint32_t)data[at + 2] | (uint32_t)data[at + 3] << 8 |
                   (uint32_t)data[at + 4] << 16 | (uint32_t)data[at + 5] << 24;
    uint8_t n = data[at + 6];
    at += 7;
    struct file *f = &g_files[u->file];
    uint64_t span = (flags & 2) || f->size < 16384 ? f->size : 16384;
    if (span == 0)
      continue;
    u->off = off % span;
    u->old_size = f->size;
    u->n = 0;
    if (flags & 1) {
      f->size = u->off;
    } else {
      n = (uint8_t)(n > size - at ? size - at : n);
      if (u->off + n > f->size)
        n = (uint8_t)(f->size - u->off);
      memcpy(u->old, f->data + u->off, n);
      memcpy(f->data + u->off, data + at, n);
      u->n = n;
      at += n;
    }
    nundo++;
  }
  struct fxt_rec_input in = {
      .session = {g_files[0].name, g_files[0].data, g_files[0].size},
      .pool = {g_files[1].name, g_files[1].data, g_files[1].size},
      .output = {g_files[2].name, g_files[2].data, g_files[2].size},
  };
  struct mem_sink out = {0};
  struct reports rep = {0};
  struct fxt_rec_stats st;
  int rc = fxt_recover_run(&in, mem_sink_write, &out, on_report, &rep, &st);
  check(rc == 0 || rc == 1 || rc == FXT_EBADMSG);
  check((rc == 1) == (rep.damage > 0) || rc == FXT_EBADMSG);
  if (nundo == 0)
    check(rc == 0);
  if (rc == FXT_EBADMSG)
    check(rep.names_session);
  else
    check_decodes(&out);
  free(out.buf);
  while (nundo-- > 0) { /* newest first: overlapping edits come undone in order */
    struct undo *u = &undo[nundo];
    struct file *f = &g_files[u->file];
    memcpy(f->data + u->off, u->old, u->n);
    f->size = u->old_size;
  }
  return 0;
}
