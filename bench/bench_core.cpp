// bench_core - the core ring and writer, one thread.
//
// Prints one figure a line as name=value, each the median of the repetitions (default 5):
//   writer_reserve_write_commit_48B_ns  reserve + write + commit of a 48-byte record
//                                       (header word + 5 words) through fxt_writer_*;
//                                       the ring is drained whenever it fills (counted in)
//   ring_reserve_write_commit_48B_ns    the same through fxt_ring_* directly
//   ring_read_GBps                      fxt_ring_read of a full 4 MiB ring of 48-byte records
//                                       into a destination buffer (memcpy copy callback)
//   ring_read_overwrite_GBps            the same in overwrite mode (staged copy + claim)
//   peer_mutex_memcpy_48B_ns            the peer measured in the same run: lock a mutex, copy
//                                       48 bytes into an array slot, unlock (what a naive
//                                       locked trace buffer costs)
//   ratio_<name>_vs_peer               a median divided by the peer's median (< 1: faster)
// Extra arguments go to Google Benchmark (e.g. --benchmark_repetitions=9).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core_ops.h"

namespace {

void *alloc_storage(uint32_t size)
{
  void *p = std::aligned_alloc(64, size);
  std::memset(p, 0, size);
  return p;
}

constexpr uint32_t kBatch = 64;  // operations per call into core_ops.c

void BM_writer_reserve_write_commit_48B(benchmark::State &state)
{
  const uint32_t size = 1u << 20;
  void *storage = alloc_storage(size);
  static fxt_writer w;
  fxt_writer_init(&w, storage, size, 1, 2);
  while (state.KeepRunningBatch(kBatch))
    bench_writer_ops(&w, kBatch);
  std::free(storage);
}

void BM_ring_reserve_write_commit_48B(benchmark::State &state)
{
  const uint32_t size = 1u << 20;
  void *storage = alloc_storage(size);
  static fxt_ring r;
  fxt_ring_init(&r, storage, size, FXT_RING_DISCARD);
  while (state.KeepRunningBatch(kBatch))
    bench_ring_ops(&r, kBatch);
  std::free(storage);
}

void BM_peer_mutex_memcpy_48B(benchmark::State &state)
{
  while (state.KeepRunningBatch(kBatch))
    bench_peer_ops(kBatch);
}

struct Sink {
  unsigned char *buf;
};

int copy_out(void *ctx, uint32_t off, const void *src, uint32_t len)
{
  std::memcpy(static_cast<Sink *>(ctx)->buf + off, src, len);
  return 0;
}

void read_bench(benchmark::State &state, uint32_t flags)
{
  const uint32_t size = 4u << 20;
  void *storage = alloc_storage(size);
  std::vector<unsigned char> out(size);
  Sink sink{out.data()};
  static fxt_ring r;
  fxt_ring_init(&r, storage, size, flags);
  uint64_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    bench_fill(&r);
    state.ResumeTiming();
    int64_t n;
    while ((n = fxt_ring_read(&r, copy_out, &sink, size)) > 0)
      bytes += (uint64_t)n;
  }
  state.counters["GBps"] = benchmark::Counter((double)bytes / 1e9, benchmark::Counter::kIsRate);
  std::free(storage);
}

void BM_ring_read(benchmark::State &state)
{
  read_bench(state, FXT_RING_DISCARD);
}
void BM_ring_read_overwrite(benchmark::State &state)
{
  read_bench(state, FXT_RING_OVERWRITE);
}

// Prints the median of each benchmark as name=value: ns per iteration, or the GBps counter.
class MedianReporter : public benchmark::BenchmarkReporter {
public:
  bool ReportContext(const Context &) override { return true; }
  void ReportRuns(const std::vector<Run> &runs) override
  {
    for (const Run &run : runs) {
      if (run.run_type != Run::RT_Aggregate || run.aggregate_name != "median")
        continue;
      std::string name = run.run_name.function_name.substr(3);  // drop "BM_"
      auto it = run.counters.find("GBps");
      if (it != run.counters.end())
        std::printf("%s_GBps=%.2f\n", name.c_str(), it->second.value);
      else {
        double ns = run.GetAdjustedRealTime() * 1e9 / benchmark::GetTimeUnitMultiplier(run.time_unit);
        medians_[name] = ns;
        std::printf("%s_ns=%.2f\n", name.c_str(), ns);
      }
      std::fflush(stdout);
    }
  }
  void Finalize() override
  {
    auto peer = medians_.find("peer_mutex_memcpy_48B");
    if (peer == medians_.end())
      return;
    for (const char *n : {"writer_reserve_write_commit_48B", "ring_reserve_write_commit_48B"}) {
      auto it = medians_.find(n);
      if (it != medians_.end())
        std::printf("ratio_%s_vs_peer=%.2f\n", n, it->second / peer->second);
    }
  }

private:
  std::map<std::string, double> medians_;
};

}  // namespace

BENCHMARK(BM_writer_reserve_write_commit_48B);
BENCHMARK(BM_ring_reserve_write_commit_48B);
BENCHMARK(BM_peer_mutex_memcpy_48B);
BENCHMARK(BM_ring_read)->UseRealTime();
BENCHMARK(BM_ring_read_overwrite)->UseRealTime();

int main(int argc, char **argv)
{
  std::vector<char *> args(argv, argv + argc);
  std::string reps = "--benchmark_repetitions=5";
  std::string only = "--benchmark_report_aggregates_only=true";
  args.insert(args.begin() + 1, &only[0]);
  args.insert(args.begin() + 1, &reps[0]);
  int n = (int)args.size();
  benchmark::Initialize(&n, args.data());
  MedianReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
