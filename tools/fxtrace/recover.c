/* tools/fxtrace/recover.c - `fxtrace recover DIR -o FILE`: the complete trace of a session
 * whose process died, from the files its buffers live in (src/base/recover.h,
 * docs/recovery.md). */
#define _GNU_SOURCE
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fxtrace/errors.h>

#include "formats/fileio.h"
#include "base/sdir.h"
#include "base/recover.h"
#include "base/shfile.h"

static const char k_usage[] =
    "usage: fxtrace recover [--help] [--quiet] [--output-file PARTIAL] [--remove] DIR -o FILE\n"
    "       fxtrace recover BUFFERS_DIR\n"
    "\n"
    "Writes FILE, the complete trace of the session whose buffers are in DIR (the session's\n"
    "directory, DIR/<pid>.<n> of its buffers= directory, by default\n"
    "/dev/shm/fxtrace-<uid>/<pid>.<n>): what its output file holds, then every committed\n"
    "record still in its buffers, exactly once and in order, with drop, overrun and loss\n"
    "counts. A record a thread was writing when the process died is reported and skipped.\n"
    "The output file is found where the session wrote it (--output-file: elsewhere). A\n"
    "session whose process still runs is read as it is at that moment (best effort).\n"
    "Given a buffers directory (no -o needed), first completes the trace of every session\n"
    "there whose process is gone and that no traced parent will harvest, into its output\n"
    "file (or a file of its own, named), then lists the sessions and traces left there\n"
    "(on stdout; what it harvested is said on stderr).\n"
    "\n"
    "Damage is reported as \"FILE: offset N: reason\"; everything else is still recovered.\n"
    "  --quiet     report damage only\n"
    "  --remove    delete DIR once FILE is written, when its process is gone\n"
    "  -o FILE     \"-\": stdout (not a terminal)\n"
    "Exits 0 when everything was recovered, 1 when FILE was written with damage reported or\n"
    "could not be written, 2 for a usage error.\n";

struct mapped {
  const unsigned char *data;
  uint64_t size;
};

static int map_file(const char *path, struct mapped *m, char *err, size_t err_size)
{
  m->data = NULL;
  m->size = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(err, err_size, "%s", strerror(errno));
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    snprintf(err, err_size, "not a regular file");
    close(fd);
    return -1;
  }
  if (st.st_size > 0) {
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      snprintf(err, err_size, "cannot map it: %s", strerror(errno));
      close(fd);
      return -1;
    }
    m->data = p;
    m->size = (uint64_t)st.st_size;
  }
  close(fd);
  return 0;
}

static void unmap(struct mapped *m)
{
  if (m->data)
    munmap((void *)m->data, m->size);
}

static void report(void *ctx, int damage, const char *line)
{
  bool quiet = *(bool *)ctx;
  char shown[2048]; /* names from the files (a thread's comm) never go out raw */
  if (damage || !quiet)
    fprintf(stderr, "fxtrace recover: %s\n",
            cli_printable(line, strlen(line), shown, sizeof shown));
}

static int write_out(void *ctx, const void *p, size_t n)
{
  return fxt_fio_write_all(*(int *)ctx, p, n) ? 0 : -errno;
}

/* A buffers directory: the dead sessions nothing else will harvest are harvested first
 * (src/base/sdir.h), each said; then the sessions left (live ones, those their traced parent will
 * harvest, damaged ones) and the traces written in a session directory's place are listed. */
static int list_sessions(const char *dir)
{
  cli_harvest_dead(dir, "fxtrace recover");
  DIR *d = opendir(dir);
  if (!d) {
    cli_file_error("recover", dir, strerror(errno));
    return CLI_EXIT_FAIL;
  }
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char path[4400];
    struct stat st;
    size_t len = strlen(e->d_name);
    bool trace = len > 4 && strcmp(e->d_name + len - 4, ".fxt") == 0;
    snprintf(path, sizeof(path), trace ? "%s/%s" : "%s/%s/%s", dir, e->d_name, FXT_SH_FILE);
    if (e->d_name[0] == '.' || stat(path, &st) != 0)
      continue;
    /* The listing is what was asked: stdout (the harvests' lines are stderr's). */
    if (n++ == 0)
      printf("%s holds:\n", dir);
    printf("  %s/%s%s\n", dir, e->d_name,
           trace ? "  (the recovered trace of a process that died)" : "");
  }
  closedir(d);
  if (n == 0)
    fprintf(stderr, "fxtrace recover: %s: no session left to recover\n", dir);
  return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

int cmd_recover(int argc, char **argv)
{
  const char *dir = NULL, *out_path = NULL, *partial = NULL;
  bool quiet = false, remove_dir = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(k_usage, stdout);
      return CLI_EXIT_OK;
    } else if (!strcmp(a, "-o") && i + 1 < argc) {
      out_path = argv[++i];
    } else if (!strcmp(a, "--output-file") && i + 1 < argc) {
      partial = argv[++i];
    } else if (!strcmp(a, "--quiet")) {
      quiet = true;
    } else if (!strcmp(a, "--remove")) {
      remove_dir = true;
    } else if (a[0] == '-' && a[1]) {
      char msg[300];
      snprintf(msg, sizeof(msg), "unknown option or missing value '%s'", a);
      return cli_usage_error("recover", k_usage, msg);
    } else if (dir) {
      return cli_usage_error("recover", k_usage, "more than one DIR");
    } else {
      dir = a;
    }
  }
  if (!dir)
    return cli_usage_error("recover", k_usage, "missing DIR");
  char spath[4400], ppath[4400], err[256];
  snprintf(spath, sizeof(spath), "%s/%s", dir, FXT_SH_FILE);
  snprintf(ppath, sizeof(ppath), "%s/%s", dir, FXT_SH_POOL_FILE);
  struct stat dst;
  if (stat(dir, &dst) != 0) { /* (a buffers directory no session ever made) */
    cli_file_error("recover", dir, strerror(errno));
    return CLI_EXIT_FAIL;
  }
  if (S_ISDIR(dst.st_mode) && access(spath, F_OK) != 0 && errno == ENOENT)
    return list_sessions(dir);
  if (!out_path)
    return cli_usage_error("recover", k_usage, "missing -o FILE");
  bool to_stdout = strcmp(out_path, "-") == 0;
  if (to_stdout && cli_refuse_tty("recover"))
    return CLI_EXIT_USAGE;

  struct mapped ses, pool, output = {NULL, 0};
  if (map_file(spath, &ses, err, sizeof(err)) != 0) {
    struct stat st;
    if (errno == ENOENT && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
      return list_sessions(dir);
    cli_file_error("recover", spath, err);
    return CLI_EXIT_FAIL;
  }
  if (map_file(ppath, &pool, err, sizeof(err)) != 0)
    fprintf(stderr, "fxtrace recover: %s: %s\n", ppath, err);
  /* Nothing of the header is used before it was checked (a damaged one is reported by the
   * recovery below, and nothing is written). */
  struct fxt_sdir_info info;
  char why[1024];
  bool header_ok = fxt_sdir_read(dir, &info, why, sizeof(why)) == 0;
  /* The partial output: where the header says (the consumer's "X.dat.fxt" for an output
   * X.dat), unless given. */
  char opath[4200] = "";
  if (partial)
    snprintf(opath, sizeof(opath), "%s", partial);
  else if (header_ok)
    snprintf(opath, sizeof(opath), fxt_outfile_is_dat(info.output) ? "%s.fxt" : "%s",
             info.output);
  bool have_output = opath[0] && strcmp(opath, "-") != 0;
  int output_errno = 0;
  if (have_output && map_file(opath, &output, err, sizeof(err)) != 0) {
    output_errno = errno;
    fprintf(stderr, "fxtrace recover: %s: %s\n", opath, err);
  }
  /* Live: its lock is held (src/base/sdir.h), whatever pid namespace the process is in. The lock
   * is kept while --remove removes the directory. */
  int lock = fxt_sdir_lock(dir, 200); /* another's look lasts less */
  bool live = lock == -EWOULDBLOCK;

  struct fxt_rec_input in = {
      .session = {spath, ses.data, ses.size},
      .pool = {ppath, pool.data, pool.size},
      .output = {opath, output.data, output.size},
      .live = live,
      .output_errno = output_errno,
  };
  /* stdout: whether the consumer's last write is in it, when ours is the same file. */
  if (!partial && header_ok && strcmp(info.output, "-") == 0 && !live)
    fxt_recover_check_stdout(&in, 1);
  /* Written beside FILE and renamed into place: FILE may be the session's own output. */
  char tmp[4200];
  snprintf(tmp, sizeof(tmp), "%s.recover-%d", out_path, (int)getpid());
  int fd = to_stdout ? STDOUT_FILENO : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    cli_file_error("recover", tmp, strerror(errno));
    unmap(&ses), unmap(&pool), unmap(&output);
    fxt_recover_stdout_free(&in);
    if (lock >= 0)
      close(lock);
    return CLI_EXIT_FAIL;
  }
  struct fxt_rec_stats st;
  int rc = fxt_recover_run(&in, write_out, &fd, report, &quiet, &st);
  if (!to_stdout && close(fd) != 0 && rc >= 0)
    rc = -errno;
  unmap(&ses), unmap(&pool), unmap(&output);
  fxt_recover_stdout_free(&in);
  if (rc < 0) {
    if (!to_stdout)
      unlink(tmp);
    fprintf(stderr, "fxtrace recover: %s: nothing written: %s\n", out_path, fxt_strerror(rc));
    if (lock >= 0)
      close(lock);
    return CLI_EXIT_FAIL;
  }
  if (!to_stdout && rename(tmp, out_path) != 0) {
    cli_file_error("recover", out_path, strerror(errno));
    unlink(tmp);
    if (lock >= 0)
      close(lock);
    return CLI_EXIT_FAIL;
  }
  if (!quiet)
    fprintf(stderr,
            "fxtrace recover: %s: %llu bytes of the output kept, %llu records recovered "
            "(%llu events) from %u threads; dropped %llu, overrun %llu, lost %llu%s\n",
            out_path, (unsigned long long)st.prefix_bytes, (unsigned long long)st.records,
            (unsigned long long)st.events, st.threads, (unsigned long long)st.dropped,
            (unsigned long long)st.overrun, (unsigned long long)st.lost,
            rc ? "; damage reported above" : "");
  if (remove_dir && live)
    fprintf(stderr, "fxtrace recover: %s: not removed: its session is live\n", dir);
  if (remove_dir && lock >= 0) {
    fxt_sdir_remove(dir, false);
    struct stat gone;
    if (stat(dir, &gone) == 0)
      fprintf(stderr, "fxtrace recover: %s: not removed: %s\n", dir, strerror(ENOTEMPTY));
  }
  if (lock >= 0)
    close(lock);
  return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
