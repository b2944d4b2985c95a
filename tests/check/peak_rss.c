/* peak_rss - runs a command and prints its peak resident set size (getrusage's ru_maxrss of
 * the child, in KiB), without depending on GNU time.
 *
 *   peak_rss CMD [ARGS...]      prints "peak_rss_kb N" on stdout, exits with CMD's status
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: peak_rss CMD [ARGS...]\n");
    return 2;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    perror("peak_rss: fork");
    return 1;
  }
  if (pid == 0) {
    execvp(argv[1], argv + 1);
    perror(argv[1]);
    _exit(127);
  }
  int status;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) != pid) {
    perror("peak_rss: wait4");
    return 1;
  }
  printf("peak_rss_kb %ld\n", ru.ru_maxrss);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
