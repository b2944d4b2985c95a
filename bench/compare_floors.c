/* compare_floors - what a trace event cannot cost less than, on this machine, in the same run
 * as bench/compare's workloads. One figure a line (ns per operation):
 *
 *   empty_loop_ns      one iteration of an empty loop (a compiler barrier keeps it)
 *   tsc_read_ns        __rdtsc()
 *   clock_gettime_ns   clock_gettime(CLOCK_MONOTONIC) (vDSO)
 *   mutex_memcpy_ns    pthread_mutex_lock, a 32-byte memcpy into a 64 KiB ring, unlock: a
 *                      naive locked buffer, uncontended
 *   trace_marker_ns    snprintf of "two: a=%llu b=%llu\n" and write() to the kernel's
 *                      trace_marker (what ftrace users do from user space), when the path
 *                      given as argv[1] can be opened for writing; else "n/a"
 *   first_write_MBps   64 MiB of anonymous memory, populated by the kernel (MAP_POPULATE), then
 *                      written once from the process (memset): what a buffer streamed once
 *                      costs (on a VM with shadow paging, ~10 us a page at its first write)
 *   rewrite_MBps       the same memory written again: what a ring reused costs
 *   alu_2t_scaling     a register-only loop on two threads at once: aggregate rate over the
 *                      rate of one thread alone (2.0 = two independent cores; on a VM whose
 *                      two vCPUs share a core, or with other work running, less): the
 *                      ceiling of any 2-thread speed-up in this run
 *
 *   compare_floors [TRACE_MARKER_PATH]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static double empty_loop(uint64_t n)
{
  double t0 = now_s();
  for (uint64_t i = 0; i < n; i++)
    __asm__ volatile("" ::: "memory");
  return (now_s() - t0) * 1e9 / (double)n;
}

__attribute__((noinline)) static double tsc_read(uint64_t n)
{
#if defined(__x86_64__) || defined(__i386__)
  uint64_t sum = 0;
  double t0 = now_s();
  for (uint64_t i = 0; i < n; i++)
    sum += __rdtsc();
  double t = now_s() - t0;
  __asm__ volatile("" ::"r"(sum));
  return t * 1e9 / (double)n;
#else
  (void)n;
  return -1;
#endif
}

__attribute__((noinline)) static double clock_read(uint64_t n)
{
  struct timespec ts;
  double t0 = now_s();
  for (uint64_t i = 0; i < n; i++)
    clock_gettime(CLOCK_MONOTONIC, &ts);
  return (now_s() - t0) * 1e9 / (double)n;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char ring[65536];

__attribute__((noinline)) static double mutex_memcpy(uint64_t n)
{
  unsigned char ev[32];
  uint32_t pos = 0;
  memset(ev, 0x5a, sizeof(ev));
  double t0 = now_s();
  for (uint64_t i = 0; i < n; i++) {
    pthread_mutex_lock(&lock);
    memcpy(ev, &i, sizeof(i));
    memcpy(ring + pos, ev, sizeof(ev));
    pos = (pos + sizeof(ev)) & (sizeof(ring) - 1);
    pthread_mutex_unlock(&lock);
  }
  return (now_s() - t0) * 1e9 / (double)n;
}

/* A dependency chain of integer operations that stays in registers. */
__attribute__((noinline)) static void alu_loop(uint64_t n)
{
  uint64_t x = 1, y = 2, z = 3, w = 4;
  for (uint64_t k = 0; k < n; k++) {
    x = x * 3 + y;
    y ^= z + k;
    z += w >> 1;
    w += x;
    __asm__ volatile("" : "+r"(x), "+r"(y), "+r"(z), "+r"(w));
  }
  __asm__ volatile("" ::"r"(x + y + z + w));
}

static pthread_barrier_t alu_barrier;
static double alu_t[2][2];

static void *alu_body(void *arg)
{
  double *t = arg;
  pthread_barrier_wait(&alu_barrier);
  t[0] = now_s();
  alu_loop(100000000);
  t[1] = now_s();
  return NULL;
}

/* Seconds from the first start to the last end of nthreads threads running alu_loop. */
static double alu_run(int nthreads)
{
  pthread_t th[2];
  pthread_barrier_init(&alu_barrier, NULL, (unsigned)nthreads);
  for (int i = 0; i < nthreads; i++)
    pthread_create(&th[i], NULL, alu_body, alu_t[i]);
  double t0 = 1e300, t1 = 0;
  for (int i = 0; i < nthreads; i++) {
    pthread_join(th[i], NULL);
    t0 = alu_t[i][0] < t0 ? alu_t[i][0] : t0;
    t1 = alu_t[i][1] > t1 ? alu_t[i][1] : t1;
  }
  pthread_barrier_destroy(&alu_barrier);
  return t1 - t0;
}

/* MB/s of a first memset of 64 MiB of populated anonymous memory (*first) and of a second. */
static void fresh_memory(double *first, double *again)
{
  size_t n = 64u << 20;
  *first = *again = -1;
  unsigned char *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED)
    return;
  double t0 = now_s();
  memset(p, 1, n);
  double t1 = now_s();
  memset(p, 2, n);
  double t2 = now_s();
  __asm__ volatile("" ::"r"(p) : "memory");
  *first = (double)n / (t1 - t0) / 1e6;
  *again = (double)n / (t2 - t1) / 1e6;
  munmap(p, n);
}

static double trace_marker(const char *path, uint64_t n)
{
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  char buf[64];
  double t0 = now_s();
  for (uint64_t i = 0; i < n; i++) {
    int len = snprintf(buf, sizeof(buf), "two: a=%llu b=%llu\n", (unsigned long long)i,
                       (unsigned long long)i);
    if (write(fd, buf, (size_t)len) != len) {
      close(fd);
      return -1;
    }
  }
  double t = now_s() - t0;
  close(fd);
  return t * 1e9 / (double)n;
}

int main(int argc, char **argv)
{
  printf("empty_loop_ns=%.3f\n", empty_loop(200000000));
  printf("tsc_read_ns=%.3f\n", tsc_read(20000000));
  printf("clock_gettime_ns=%.3f\n", clock_read(10000000));
  printf("mutex_memcpy_ns=%.3f\n", mutex_memcpy(20000000));
  double first, again;
  fresh_memory(&first, &again);
  printf("first_write_MBps=%.0f\nrewrite_MBps=%.0f\n", first, again);
  double one = alu_run(1), two = alu_run(2);
  printf("alu_2t_scaling=%.3f\n", 2 * one / two);
  double tm = argc > 1 ? trace_marker(argv[1], 200000) : -1;
  if (tm < 0)
    printf("trace_marker_ns=n/a\n");
  else
    printf("trace_marker_ns=%.1f\n", tm);
  return 0;
}
