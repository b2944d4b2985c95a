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
// Extra arguments go to Google Benchmark (e.g. --benchmark_repetitions=9).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

extern "C" {
#include <fxtrace/ring.h>
#include <fxtrace/writer.h>
}

namespace {

constexpr uint32_t kRecordWords = 6;
constexpr uint64_t kHeader = 4u | (uint64_t)kRecordWords << 4;  // FXT event record, 6 words

void *alloc_storage(uint32_t size)
{
  void *p = std::aligned_alloc(64, size);
  std::memset(p, 0, size);
  return p;
}

void BM_writer_reserve_write_commit_48B(benchmark::State &state)
{
  const uint32_t size = 1u << 20;
  void *storage = alloc_storage(size);
  static fxt_writer w;
  fxt_writer_init(&w, storage, size, 1, 2);
  uint64_t payload[kRecordWords - 1] = {1, 2, 3, 4, 5};
  for (auto _ : state) {
    fxt_reservation res;
    if (fxt_writer_reserve(&w, kHeader, &res) != 0) {
      fxt_writer_drain(&w);
      continue;
    }
    for (uint64_t v : payload)
      fxt_res_write_word(&res, v);
    fxt_res_commit(&res);
  }
  std::free(storage);
}

void BM_ring_reserve_write_commit_48B(benchmark::State &state)
{
  const uint32_t size = 1u << 20;
  void *storage = alloc_storage(size);
  static fxt_ring r;
  fxt_ring_init(&r, storage, size, FXT_RING_DISCARD);
  uint64_t rec[kRecordWords] = {kHeader, 1, 2, 3, 4, 5};
  for (auto _ : state) {
    fxt_ring_res res;
    if (fxt_ring_reserve(&r, sizeof(rec), &res) != 0) {
      fxt_ring_drain(&r);
      continue;
    }
    fxt_ring_res_write(&res, rec, sizeof(rec));
    fxt_ring_res_commit(&res);
  }
  std::free(storage);
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
  uint64_t rec[kRecordWords] = {kHeader, 1, 2, 3, 4, 5};
  uint64_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    fxt_ring_res res;
    for (uint32_t i = 0; i < size / sizeof(rec); i++) {
      fxt_ring_reserve(&r, sizeof(rec), &res);
      fxt_ring_res_write(&res, rec, sizeof(rec));
      fxt_ring_res_commit(&res);
    }
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
      else
        std::printf("%s_ns=%.2f\n", name.c_str(),
                    run.GetAdjustedRealTime() * 1e9 /
                        benchmark::GetTimeUnitMultiplier(run.time_unit));
      std::fflush(stdout);
    }
  }
};

}  // namespace

BENCHMARK(BM_writer_reserve_write_commit_48B);
BENCHMARK(BM_ring_reserve_write_commit_48B);
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
