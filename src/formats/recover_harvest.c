/* src/formats/recover_harvest.c - the harvest of a dead session (src/host/harvest.h,
 * fxt_harvest): its complete trace written into its output file, or into a file of its own,
 * and its files removed. With what the buffers directory's clean-up asks of a dead session
 * (recover.c) it makes fxt_recover_direct (src/base/recover.h), the recovery harvests call: a
 * traced process loads it from the module fxtrace-recover.so (recover_module.c) the first time
 * it finds a dead session; the `fxtrace` command links it and calls it. What it acts on, the
 * session directory, through src/base/sdir.h; the trace.dat writer it converts an output
 * X.dat with is its caller's (to_dat). Runs under the lock of the directory it acts on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fxtrace/errors.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/sdir.h"
#include "../base/shfile.h"
#include "recover_int.h"

static int write_fd(void *ctx, const void *p, size_t n)
{
  int fd = *(int *)ctx;
  const unsigned char *b = p;
  while (n) {
    ssize_t k = write(fd, b, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return k < 0 ? -errno : -EIO;
    b += k;
    n -= (size_t)k;
  }
  return 0;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void say(char *msg, size_t size, const char *fmt, ...)
{
  if (!size)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, size, fmt, ap);
  va_end(ap);
}

/* Whether path still names the file a session wrote (its identity in the header), or names
 * nothing while the session opened none (a death before its consumer's open: nothing of it
 * can be there). */
static bool output_is_ours(const char *path, const struct fxt_sdir_info *info)
{
  struct stat st;
  if (stat(path, &st) != 0)
    return errno == ENOENT && info->out_dev == 0 && info->out_ino == 0;
  return S_ISREG(st.st_mode) && info->out_ino != 0 && (uint64_t)st.st_dev == info->out_dev &&
         (uint64_t)st.st_ino == info->out_ino;
}

/* Publishes tmp as a file of its own: the first of "<stem>.fxt", "<stem>-2.fxt", ... that
 * does not exist (link, never over another file). 0 with the name in out, or -errno. */
static int publish_new(const char *tmp, const char *stem, char *out, size_t size)
{
  for (int k = 1; k < 100; k++) {
    int n = k == 1 ? snprintf(out, size, "%s.fxt", stem)
                   : snprintf(out, size, "%s-%d.fxt", stem, k);
    if (n < 0 || (size_t)n >= size)
      return -ENAMETOOLONG;
    if (link(tmp, out) == 0) {
      unlink(tmp);
      return 0;
    }
    if (errno != EEXIST)
      return -errno;
  }
  return -EEXIST;
}

/* Runs the recovery of in into a new file tmp (0644). 0 or 1 (fxt_recover_run), or -errno of
 * the file; tmp is gone unless it returned >= 0. */
static int recover_into(const char *tmp, const struct fxt_rec_input *in, struct fxt_rec_stats *st,
                        char *why, size_t why_size)
{
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    int rc = -errno;
    snprintf(why, why_size, "%s: %s", tmp, strerror(errno));
    return rc;
  }
  struct fxt_sdir_why sy = {why, why_size};
  why[0] = 0;
  int rc = fxt_recover_run(in, write_fd, &fd, fxt_sdir_first_damage, &sy, st);
  if (close(fd) != 0 && rc >= 0)
    rc = -errno;
  if (rc < 0) {
    unlink(tmp);
    if (!why[0])
      snprintf(why, why_size, "%s", fxt_strerror(rc));
  }
  return rc;
}

/* fxt_harvest (harvest.h), for fxt_recover_direct. */
static int harvest(const char *dir, bool keep_dir, bool keep_fxt, const char *adopt_dir,
                   struct fxt_rec_stats *st, char *msg, size_t msg_size, fxt_rec_dat_fn to_dat)
{
  struct fxt_rec_stats local;
  if (!st)
    st = &local;
  memset(st, 0, sizeof(*st));
  if (msg_size)
    msg[0] = 0;
  struct fxt_sdir_info info;
  char why[1024];
  int rc = fxt_sdir_read(dir, &info, why, sizeof(why));
  if (rc == FXT_ENOENT) {
    say(msg, msg_size, "%s: no session file: nothing to harvest", dir);
    return FXT_ENOENT;
  }
  if (rc != 0) {
    say(msg, msg_size, "%s: left for `fxtrace recover`: %s", dir, why);
    return rc;
  }
  /* The file the consumer wrote: the output itself, or "X.dat.fxt" for a trace.dat. */
  char part[4200] = "";
  bool to_file = info.output[0] == '/';
  bool dat = to_file && fxt_outfile_is_dat(info.output);
  if (to_file)
    snprintf(part, sizeof(part), dat ? "%s.fxt" : "%s", info.output);
  bool in_place = to_file && output_is_ours(part, &info);
  char spath[4400], ppath[4400], tmp[4400];
  snprintf(spath, sizeof(spath), "%s/%s", dir, FXT_SH_FILE);
  snprintf(ppath, sizeof(ppath), "%s/%s", dir, FXT_SH_POOL_FILE);
  uint64_t ssize, psize, osize = 0;
  int serr, perr, oerr = 0;
  const unsigned char *sdata = fxt_sdir_map(spath, &ssize, &serr);
  const unsigned char *pdata = fxt_sdir_map(ppath, &psize, &perr);
  /* The committed part of the output is read only from the session's own file: whatever
   * else its path names now is someone else's. */
  const unsigned char *odata = in_place ? fxt_sdir_map(part, &osize, &oerr) : NULL;
  struct fxt_rec_input in = {
      .session = {spath, sdata, ssize},
      .pool = {ppath, pdata, psize},
      .output = {part, odata, osize},
      .output_errno = oerr,
      .output_gone = to_file && !in_place,
  };
  /* stdout: whether the consumer's last write is in it, when ours is the same file. */
  if (strcmp(info.output, "-") == 0)
    fxt_recover_check_stdout(&in, 1);
  /* Where the trace goes: into the output, renamed over it; else a new file beside the
   * output ("<output>.<pid>.recovered.fxt": the path names a file that is not the session's,
   * or none), or in the session directory's place ("<dir>.fxt": stdout, no output file, or
   * beside it cannot be written). Each is written whole under a temporary name first. */
  char where[4400] = "";
  rc = -ENOENT;
  if (in_place) {
    snprintf(tmp, sizeof(tmp), "%s.harvest-%d", part, (int)getpid());
    rc = recover_into(tmp, &in, st, why, sizeof(why));
    if (rc >= 0 && rename(tmp, part) != 0) {
      rc = -errno;
      snprintf(why, sizeof(why), "%.900s: %s", part, strerror(errno));
      unlink(tmp);
    }
    if (rc >= 0)
      snprintf(where, sizeof(where), "%s", dat && !keep_fxt ? info.output : part);
  } else {
    char stem[4250];
    for (int pass = to_file ? 0 : 1; pass < 2 && rc < 0; pass++) {
      if (pass == 0)
        snprintf(stem, sizeof(stem), "%s.%u.recovered", part, info.pid);
      else
        snprintf(stem, sizeof(stem), "%s", dir);
      snprintf(tmp, sizeof(tmp), "%s.harvest-%d", stem, (int)getpid());
      memset(st, 0, sizeof(*st));
      rc = recover_into(tmp, &in, st, why, sizeof(why));
      if (rc >= 0) {
        int prc = publish_new(tmp, stem, where, sizeof(where));
        if (prc < 0) {
          snprintf(why, sizeof(why), "%.900s: %s", stem, strerror(-prc));
          unlink(tmp);
          rc = prc;
        }
      }
    }
  }
  fxt_sdir_unmap(sdata, ssize);
  fxt_sdir_unmap(pdata, psize);
  fxt_sdir_unmap(odata, osize);
  fxt_recover_stdout_free(&in);
  if (rc < 0) {
    say(msg, msg_size, "%s: the trace of pid %u was not written: %s (left in place)", dir,
        info.pid, why);
    return rc;
  }
  bool damaged = rc == 1;
  if (in_place && dat && !keep_fxt) {
    char err[512] = "";
    int crc = to_dat(part, info.output, err, sizeof(err));
    if (crc == 0) {
      unlink(part);
    } else {
      say(msg, msg_size, "%s: not written (%s: %s); the trace is in %s", info.output,
          fxt_strerror(crc), err, part);
      snprintf(where, sizeof(where), "%s", part);
    }
  }
  fxt_sdir_adopt_children(dir, adopt_dir);
  fxt_sdir_remove(dir, keep_dir);
  const char *whose = !to_file                ? info.output[0] ? " (its output was stdout)"
                                                               : " (it had no output file)"
                      : !in_place             ? " (its output file was removed or replaced)"
                                              : "";
  /* A write to stdout that may be there and was recovered all the same (recover.h). */
  char twice[256] = "";
  if (st->maybe_twice)
    snprintf(twice, sizeof(twice),
             "; pid %u died inside a write of %llu bytes to stdout, %s: what of it is in stdout "
             "may be counted twice",
             info.pid, (unsigned long long)st->maybe_twice,
             in.stdout_write == FXT_REC_LANDED_TORN ? "found cut short there"
                                                    : "which this process could not look for");
  if (msg_size && !msg[0])
    say(msg, msg_size,
        "%s: pid %u ended without stopping its session: its trace is in %s%s (%llu records, "
        "%llu events, recovered from its buffers; dropped %llu, overrun %llu, lost %llu)%s%s%s",
        dir, info.pid, where, whose, (unsigned long long)st->records,
        (unsigned long long)st->events, (unsigned long long)st->dropped,
        (unsigned long long)st->overrun, (unsigned long long)st->lost, twice,
        damaged ? "; damage: " : "", damaged ? why : "");
  return in_place ? 0 : 1;
}

const struct fxt_recover_ops fxt_recover_direct = {
    .struct_size = sizeof(struct fxt_recover_ops),
    .harvest = harvest,
    .dead_state = fxt_recover_dead_summary,
};
