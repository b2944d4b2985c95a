/* tests/cxx/cxx_fn_throw.cpp - the function tracer (function_graph) on C++ code an exception
 * goes through (cxx_fn_traced.cpp, built with -finstrument-functions; this unit is not):
 *
 *   - fnx::run: rounds of an exception thrown depth + 1 frames down and caught above them.
 *     Each activation the exception left is one slice (g++ calls the exit hook as the frame
 *     unwinds) or counted as cut (clang++ does not: the catcher's exit pops them), never both,
 *     never lost; the catcher's and the next call's slices are all there, and the program's
 *     results are right.
 *   - the same in a std::thread, which then exits.
 *   - a std::thread that leaves by pthread_exit from depth + 1 traced frames: each a slice or
 *     counted as cut (at the thread's exit, by its key's destructor).
 *
 * Every slice of a thread nests in the slices open around it, and nothing crashes. Expected
 * counts come from the traced code's structure (cxx_fn_traced.h). Exits 0 when every check
 * holds; each failed one is printed.
 */
#include "cxx_check.h"
#include "cxx_fn_traced.h"

#include <fxtrace/functions.h>
#include <fxtrace/fxt.h>
#include <fxtrace/session.h>
#include <fxtrace/tracefs.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

constexpr int kRounds = 20, kDepth = 6;

struct slice {
  std::string name;
  uint64_t start, end, tid;
};
std::vector<slice> slices;

uint64_t cut_count()
{
  struct fxt_functions_counts c = {};
  c.struct_size = sizeof(c);
  CHECK(fxt_functions_counts(&c) == 0);
  return c.cut;
}

void echo(const char *file, const char *value)
{
  if (fxt_fs_echo(file, value) < 0) {
    std::fprintf(stderr, "echo '%s' > %s failed\n", value, file);
    failures++;
  }
}

/* The function_graph slices of the file at path. */
void read_slices(const char *path)
{
  std::vector<unsigned char> file = cxx_read_file(path);
  CHECK(!file.empty());
  static struct fxt_str_slot table[FXT_STRING_TABLE_SIZE];
  static struct fxt_decoder dec;
  static struct fxt_record rec;
  char err[256];
  int rc;
  fxt_decoder_init(&dec, file.data(), file.size(), table);
  while ((rc = fxt_decoder_next(&dec, &rec, err, sizeof(err))) == 1) {
    const struct fxt_event &e = rec.u.event;
    if (rec.kind != FXT_KIND_EVENT || e.type != FXT_EVENT_DURATION_COMPLETE ||
        std::string(e.category.data, e.category.len) != "function")
      continue;
    slices.push_back({std::string(e.name.data, e.name.len), e.timestamp, e.trailer,
                      e.thread.thread_koid});
  }
  if (rc < 0)
    std::fprintf(stderr, "decode: %s\n", err);
  CHECK(rc == 0);
}

size_t count(const std::string &name, uint64_t tid)
{
  return (size_t)std::count_if(slices.begin(), slices.end(), [&](const slice &s) {
    return s.name == name && (tid == 0 || s.tid == tid);
  });
}

/* Each thread's slices nest: sorted by start (longest first), each ends by the end of every
 * slice still open around it. */
void check_nesting()
{
  std::vector<slice> v = slices;
  std::sort(v.begin(), v.end(), [](const slice &a, const slice &b) {
    if (a.tid != b.tid)
      return a.tid < b.tid;
    if (a.start != b.start)
      return a.start < b.start;
    return a.end > b.end;
  });
  std::vector<const slice *> open;
  for (const slice &s : v) {
    CHECK(s.start <= s.end);
    while (!open.empty() && (open.back()->tid != s.tid || open.back()->end <= s.start))
      open.pop_back();
    if (!open.empty() && s.end > open.back()->end) {
      std::fprintf(stderr, "%s [%llu, %llu] overlaps %s [%llu, %llu]\n", s.name.c_str(),
                   (unsigned long long)s.start, (unsigned long long)s.end,
                   open.back()->name.c_str(), (unsigned long long)open.back()->start,
                   (unsigned long long)open.back()->end);
      failures++;
    }
    open.push_back(&s);
  }
}

uint64_t tid_of_thread()
{
  return (uint64_t)gettid();
}

} // namespace

int main()
{
  char path[256];
  if (!cxx_session_start("cxx-fn", "", 4096, path, sizeof(path)))
    return 1;
  echo("set_ftrace_filter", "fnx::*");
  echo("current_tracer", "function_graph");

  const int want = kRounds * (kRounds - 1) / 2;
  uint64_t cut0 = cut_count();
  CHECK(fnx::run(kRounds, kDepth) == want);
  uint64_t cut_main = cut_count() - cut0;

  uint64_t tid_run = 0, tid_exit = 0;
  int thread_sum = 0;
  std::thread([&] {
    tid_run = tid_of_thread();
    thread_sum = fnx::run(kRounds, kDepth);
  }).join();
  CHECK(thread_sum == want);
  uint64_t cut_run = cut_count() - cut0 - cut_main;

  std::thread([&] {
    tid_exit = tid_of_thread();
    fnx::exit_deep(kDepth);
  }).join();
  uint64_t cut_exit = cut_count() - cut0 - cut_main - cut_run;

  echo("current_tracer", "nop");
  CHECK(fxt_session_stop() == 0);
  read_slices(path);
  unlink(path);

  const uint64_t tid_main = (uint64_t)getpid();
  const size_t thrown = (size_t)kRounds * (kDepth + 1);
  /* the frames an exception left: each a slice or cut, the others all slices */
  CHECK(count("fnx::thrower(int)", tid_main) + cut_main == thrown);
  CHECK(count("fnx::catcher(int)", tid_main) == kRounds);
  CHECK(count("fnx::after(int)", tid_main) == kRounds);
  CHECK(count("fnx::run(int, int)", tid_main) == 1);
  CHECK(count("fnx::thrower(int)", tid_run) + cut_run == thrown);
  CHECK(count("fnx::catcher(int)", tid_run) == kRounds);
  CHECK(count("fnx::after(int)", tid_run) == kRounds);
  CHECK(count("fnx::run(int, int)", tid_run) == 1);
  CHECK(count("fnx::exit_deep(int)", tid_exit) + cut_exit == (size_t)kDepth + 1);
  CHECK(count("fnx::exit_deep(int)", 0) == count("fnx::exit_deep(int)", tid_exit));
  check_nesting();
  if (failures) {
    std::fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  std::printf("ok: exceptions through traced frames (thrower: %zu slices, %llu cut; "
              "pthread_exit: %zu slices, %llu cut)\n",
              count("fnx::thrower(int)", tid_main), (unsigned long long)cut_main,
              count("fnx::exit_deep(int)", tid_exit), (unsigned long long)cut_exit);
  return 0;
}
