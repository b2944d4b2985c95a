/* tests/unit/mine_files.h - a program that closes every descriptor it did not open itself
 * (close_from_3), then opens files of its own (mine_open), which get the lowest numbers: those
 * fxtrace's descriptors had. mine_check says whether fxtrace wrote any of them. Header-only,
 * for test_closefds and test_fork. */
#ifndef FXT_TESTS_MINE_FILES_H
#define FXT_TESTS_MINE_FILES_H

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { MINE = 8, MINE_BYTES = 4096 };
static int mine[MINE];
static char mine_path[MINE][300];

/* Closes every descriptor from 3 on, as a daemon does. */
static inline void close_from_3(void)
{
  if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
    for (int fd = 3; fd < 4096; fd++)
      close(fd);
}

/* Opens MINE files, each filled with its letter: 0, or -1 when one could not be written. */
static inline int mine_open(void)
{
  for (int k = 0; k < MINE; k++) {
    snprintf(mine_path[k], sizeof(mine_path[k]), "/dev/shm/fxtrace-test-mine-%d.%d",
             (int)getpid(), k);
    mine[k] = open(mine_path[k], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    char fill[MINE_BYTES];
    memset(fill, 'a' + k, sizeof(fill));
    if (mine[k] < 0 || write(mine[k], fill, sizeof(fill)) != (ssize_t)sizeof(fill))
      return -1;
  }
  return 0;
}

/* -1 when every file holds exactly its letters, else the first that does not (said on
 * stderr: its descriptor, its size, the first byte that is not its letter). Removes them. */
static inline int mine_check(void)
{
  int bad = -1;
  for (int k = 0; k < MINE; k++) {
    char buf[MINE_BYTES + 1];
    ssize_t n = pread(mine[k], buf, sizeof(buf), 0);
    int at = -1;
    for (ssize_t i = 0; i < n && at < 0; i++)
      if (buf[i] != 'a' + k)
        at = (int)i;
    if ((n != MINE_BYTES || at >= 0) && bad < 0) {
      fprintf(stderr, "the program's file %d (fd %d) was written: %zd bytes, byte %d is 0x%02x\n",
              k, mine[k], n, at, at >= 0 ? (unsigned char)buf[at] : 0);
      bad = k;
    }
    close(mine[k]);
    unlink(mine_path[k]);
  }
  return bad;
}

#endif /* FXT_TESTS_MINE_FILES_H */
