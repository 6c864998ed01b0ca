// scan_bench: reader throughput. Scans a trial (made by make_trial), decodes every tensor at
// every step through litmus::Trial and computes its abs-mean (the tensors of a step in parallel,
// adjacent small records read together, the next step read while this one is reduced: as
// `litmus run` prefetches them), and prints the MB/s next to the
// MB/s of plainly reading the same event files (read(2) into a buffer) in the same run, with
// their ratio. Both passes read from the page cache (a warm-up pass runs first).
// Usage: scan_bench TRIAL_DIR [--repeat N]
#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#if LITMUS_SCALABLE_MALLOC
#include <oneapi/tbb/tbbmalloc_proxy.h>  // oneTBB's malloc, as in the litmus binary
#endif

#include <tbb/parallel_for.h>
#include <tbb/task_group.h>

#include <atomic>

#include "litmus/engine/reductions.h"
#include "litmus/engine/trial.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

std::vector<std::string> EventFiles(const std::string& trial) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(trial + "/events")) {
    if (e.is_regular_file() && e.path().extension() == ".tfevents") files.push_back(e.path().string());
  }
  return files;
}

// Plain baseline: read every event file whole, touching the bytes (a checksum) so the work
// cannot be optimised away.
uint64_t PlainRead(const std::vector<std::string>& files, uint64_t* bytes) {
  static std::unique_ptr<char[]> buffer(new char[8 << 20]);
  uint64_t sum = 0;
  *bytes = 0;
  for (const auto& f : files) {
    const int fd = open(f.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t n;
    while ((n = read(fd, buffer.get(), 8 << 20)) > 0) {
      *bytes += static_cast<uint64_t>(n);
      for (ssize_t i = 0; i < n; i += 4096) sum += static_cast<unsigned char>(buffer[i]);
    }
    close(fd);
  }
  return sum;
}

// litmus: decode every tensor at every step and compute abs-mean.
double LitmusScan(const std::string& trial_dir, int64_t* tensors) {
  litmus::TrialOptions options;
  options.training_end_delay_refresh_s = 0;
  options.cache_bytes = 32 << 20;  // (two chunks: the one being reduced and the one being read)
  auto trial = litmus::Trial::Open(litmus::Env::Default(), trial_dir, options);
  if (!trial.ok()) {
    std::fprintf(stderr, "scan_bench: %s\n", trial.status().ToString().c_str());
    std::exit(2);
  }
  // The tensors of a step, a few MiB at a time so that they are reduced while still in the CPU
  // caches: read (adjacent records with one read, as the runner's prefetch does) and decoded in
  // parallel, reduced in parallel, then dropped from the cache. As in `litmus run`, the next
  // chunk is read and decoded while the current one is reduced.
  constexpr uint64_t kChunkBytes = 8 << 20;
  // (The trial's own views of the names, as the runner's read keys hold: the trial finds them
  // without hashing.)
  std::vector<std::string_view> names;
  for (const std::string& name : (*trial)->TensorNames()) names.push_back(*(*trial)->SavedTensorName(name));
  std::vector<uint64_t> record_bytes;  // per name, from the first step that has it
  for (const std::string_view view : names) {
    const std::string name(view);
    const std::vector<int64_t> steps = (*trial)->TensorSteps(name);
    const auto entries = steps.empty() ? std::vector<litmus::TensorEntry>() : (*trial)->Entries(name, steps.front());
    record_bytes.push_back(entries.empty() || !entries.front().location ? 0 : entries.front().location->length);
  }
  struct Chunk {
    int64_t step;
    size_t first, last;  // names[first, last)
    std::vector<litmus::Trial::StepTensor> keys;
  };
  std::vector<Chunk> chunks;
  for (int64_t step : (*trial)->Steps()) {
    for (size_t first = 0; first < names.size();) {
      Chunk chunk{step, first, first, {}};
      uint64_t bytes = 0;
      for (; chunk.last < names.size() && (chunk.last == first || bytes < kChunkBytes); ++chunk.last) {
        chunk.keys.emplace_back(names[chunk.last], step);
        bytes += record_bytes[chunk.last];
      }
      first = chunk.last;
      chunks.push_back(std::move(chunk));
    }
  }
  std::atomic<int64_t> count{0};
  std::vector<double> means(names.size(), 0.0);
  double total = 0;
  tbb::task_group background;
  if (!chunks.empty()) (*trial)->Prefetch(chunks.front().keys);
  for (size_t c = 0; c < chunks.size(); ++c) {
    const Chunk& chunk = chunks[c];
    // Drops the previous chunk and reads the next one while this one is reduced.
    background.run([&, c] {
      if (c > 0) (*trial)->Release(chunks[c - 1].keys);
      if (c + 1 < chunks.size()) (*trial)->Prefetch(chunks[c + 1].keys);
    });
    tbb::parallel_for(chunk.first, chunk.last, [&](size_t i) {
      auto value = (*trial)->Value(names[i], chunk.step);
      if (!value.ok()) return;
      auto mean = litmus::ComputeReduction(**value, litmus::layout::Reduction::kMean, /*abs=*/true);
      if (mean.ok()) means[i] = *mean;
      count.fetch_add(1, std::memory_order_relaxed);
    });
    background.wait();
    if (chunk.last == names.size()) {
      for (double m : means) total += m;
      means.assign(names.size(), 0.0);
    }
  }
  *tensors = count.load();
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: scan_bench TRIAL_DIR [--repeat N]\n");
    return 2;
  }
  // Keep freed tensor buffers in the heap instead of returning them to the kernel (the default
  // 128 KiB mmap threshold makes every 1 MiB buffer a fresh mmap, page faults included).
  // (Not needed with oneTBB's allocator, which the benchmark uses like the litmus binary does.)
#if !LITMUS_SCALABLE_MALLOC
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
  const std::string trial = argv[1];
  int repeat = 3;
  if (argc >= 4 && std::string(argv[2]) == "--repeat") repeat = std::max(1, std::atoi(argv[3]));
  const auto files = EventFiles(trial);
  uint64_t bytes = 0;
  volatile uint64_t sink = PlainRead(files, &bytes);  // warm the page cache
  double best_plain = 1e30, best_litmus = 1e30;
  int64_t tensors = 0;
  for (int i = 0; i < repeat; ++i) {
    auto t0 = Clock::now();
    sink = sink + PlainRead(files, &bytes);
    auto t1 = Clock::now();
    volatile double s = LitmusScan(trial, &tensors);
    (void)s;
    auto t2 = Clock::now();
    best_plain = std::min(best_plain, Seconds(t0, t1));
    best_litmus = std::min(best_litmus, Seconds(t1, t2));
  }
  const double mb = static_cast<double>(bytes) / 1e6;
  std::printf("scan_bench %s: %zu files, %.1f MB, %lld tensors\n", trial.c_str(), files.size(), mb,
              static_cast<long long>(tensors));
  std::printf("  plain read:          %8.1f MB/s (%.3f s)\n", mb / best_plain, best_plain);
  std::printf("  litmus decode+mean:  %8.1f MB/s (%.3f s)\n", mb / best_litmus, best_litmus);
  std::printf("  ratio litmus/plain:  %8.2f\n", best_plain / best_litmus);
  return 0;
}
