/* clock_verdict.c - the CPU counter's verdict kept for the boot. The order check and the rate
 * calibration of clock_setup.c take ~6 ms at every process's first session start (the
 * calibration alone waits 5 ms), and a counter found in order across a set of CPUs, at a rate,
 * stays so until the machine reboots. So the first process of a boot that finds it so writes
 * what it found to the buffers' base directory (/dev/shm/fxtrace-<uid>/.clock-verdict by
 * default, or buffers=DIR's; none without one), and a later process takes it from there when
 * every condition of the check still holds:
 * - the same counter ("tsc", "cntvct": an aarch64 program under qemu-user shares the boot, the
 *   CPUs and the directory with x86-64 ones);
 * - the same boot (/proc/sys/kernel/random/boot_id);
 * - the same kernel clocksource (the kernel switches away from the TSC when its watchdog finds
 *   it unstable);
 * - its own CPUs among those checked (a CPU brought online since is checked anew).
 * Only a positive verdict is kept: a check that failed (a busy machine's, say) is run again
 * next time. The file is read only when it is a regular file of this user's that nobody else
 * may write, in a directory of the user's that nobody else may write, and whole (written aside,
 * then renamed into place). FXTRACE_CLOCK_TEST_SKEW (a test of the check itself) neither
 * reads nor writes it.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/namefix.h"
#include "clock.h"

#define VERDICT_NAME ".clock-verdict"

/* The file: this struct, written whole (a cache of this machine's, read by the same build's
 * layout only: a file of another size or magic is not taken). Strings NUL-terminated. */
struct saved {
  char magic[24];
  char boot[48];
  char counter[16];
  char clocksource[32];
  cpu_set_t cpus;
  uint64_t rate;
  char why[240];
};
static const char verdict_magic[24] = "fxtrace-clock-verdict-2";

/* Whether dir is a directory of this user's that nobody else may write. */
static bool own_dir(const char *dir)
{
  struct stat st;
  return dir[0] && strlen(dir) < 256 && lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
         st.st_uid == geteuid() && (st.st_mode & 022) == 0;
}

/* The verdict's key, as this process would save it: false when it has none (no boot id). */
static bool key(struct saved *v, const char *counter, const char *clocksource)
{
  memset(v, 0, sizeof(*v));
  memcpy(v->magic, verdict_magic, sizeof(v->magic));
  snprintf(v->counter, sizeof(v->counter), "%s", counter);
  snprintf(v->clocksource, sizeof(v->clocksource), "%s", clocksource);
  return fxt_read_line("/proc/sys/kernel/random/boot_id", v->boot, sizeof(v->boot));
}

bool fxt_clock_verdict_load(const char *dir, const char *counter, const char *clocksource,
                            const cpu_set_t *cpus, uint64_t *rate, char *why, size_t why_size)
{
  char path[300];
  struct saved want, got;
  if (!own_dir(dir) || !key(&want, counter, clocksource))
    return false;
  snprintf(path, sizeof path, "%s/" VERDICT_NAME, dir);
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return false;
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
            (st.st_mode & 022) == 0 && st.st_size == (off_t)sizeof(got) &&
            read(fd, &got, sizeof(got)) == (ssize_t)sizeof(got);
  close(fd);
  /* The key (magic, boot, counter, clocksource) as this process's, byte for byte. */
  if (!ok || memcmp(&got, &want, offsetof(struct saved, cpus)) != 0 || got.rate == 0)
    return false;
  cpu_set_t both;
  CPU_AND(&both, &got.cpus, cpus);
  got.why[sizeof(got.why) - 1] = 0;
  if (!CPU_EQUAL(&both, cpus) || !got.why[0]) /* a CPU of ours was not checked */
    return false;
  snprintf(why, why_size, "%s, as checked earlier this boot", got.why);
  *rate = got.rate;
  return true;
}

void fxt_clock_verdict_save(const char *dir, const char *counter, const char *clocksource,
                            const cpu_set_t *cpus, uint64_t rate, const char *why)
{
  char path[300], tmp[320];
  struct saved v;
  if (!dir[0] || !key(&v, counter, clocksource))
    return;
  v.cpus = *cpus;
  v.rate = rate;
  snprintf(v.why, sizeof(v.why), "%s", why);
  (void)mkdir(dir, 0700); /* the buffers' directory: made here when it is not yet */
  if (!own_dir(dir))
    return;
  snprintf(path, sizeof path, "%s/" VERDICT_NAME, dir);
  snprintf(tmp, sizeof tmp, "%s/" VERDICT_NAME ".%d", dir, (int)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return;
  bool ok = write(fd, &v, sizeof(v)) == (ssize_t)sizeof(v);
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp, path) != 0)
    unlink(tmp);
}
