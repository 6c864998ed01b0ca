// make_trial: writes a synthetic smdebug trial of float32 gradients for benchmarks and tests:
// STEPS TRAIN steps x TENSORS tensors gradient/layer_NNN.weight of ELEMENTS values each, in
// collections `default` and `gradients`; values ~ N(0, 1e-3), N(0, 1) at --hot steps; element
// 1000 % ELEMENTS of the last tensor is NaN at --nan steps and +inf at --inf steps.
// --workers N writes smdebug's multi-worker layout: workers worker_0 .. worker_<N-1>, each with
// its own collections file (_meta.num_workers N) and one event and one index file per step; the
// end marker follows once every worker has closed (--no-end-marker: a trial still training).
// Fast: normal values come from a table (xoshiro256+ and Box-Muller) read at random offsets and
// handed to the writer without copying, so writing is I/O-bound. Single-threaded.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <numbers>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "litmus/writer/writer.h"

namespace {

// xoshiro256+ (Blackman & Vigna): a fast generator, good enough for synthetic data.
class Xoshiro {
 public:
  explicit Xoshiro(uint64_t seed) {
    for (uint64_t& s : s_) s = SplitMix(&seed);
  }
  uint64_t Next() {
    const uint64_t result = s_[0] + s_[3];
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = (s_[3] << 45) | (s_[3] >> 19);
    return result;
  }
  // Uniform in (0, 1].
  double Uniform() { return (static_cast<double>(Next() >> 11) + 1.0) * 0x1.0p-53; }

 private:
  static uint64_t SplitMix(uint64_t* x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t s_[4];
};

// N(0, sigma^2) values, Box-Muller.
std::vector<float> NormalTable(size_t n, double sigma, Xoshiro& rng) {
  std::vector<float> t(n);
  for (size_t i = 0; i < n; i += 2) {
    const double r = sigma * std::sqrt(-2.0 * std::log(rng.Uniform()));
    const double theta = 2.0 * std::numbers::pi * rng.Uniform();
    t[i] = static_cast<float>(r * std::cos(theta));
    if (i + 1 < n) t[i + 1] = static_cast<float>(r * std::sin(theta));
  }
  return t;
}

// "10,50,90" -> {10, 50, 90}; every entry must be a step in [0, steps).
bool ParseSteps(const std::string& list, int64_t steps, const char* flag, std::set<int64_t>* out,
                std::string* error) {
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    int64_t v = -1;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || v < 0 || v >= steps) {
      *error = std::string(flag) + ": '" + item + "' is not a step in [0, " + std::to_string(steps) + ")";
      return false;
    }
    out->insert(v);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir, hot_list, nan_list, inf_list;
  int64_t steps = 0, tensors = 0, elements = 0, workers = 1;
  uint64_t seed = 1;
  bool no_end_marker = false;
  CLI::App app{"Writes a synthetic smdebug trial of float32 gradients.", "make_trial"};
  app.add_option("OUT_DIR", out_dir, "Trial folder to create")->required();
  app.add_option("--steps", steps, "TRAIN steps")->required()->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  app.add_option("--tensors", tensors, "Tensors per step (at most 1000000)")->required()
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  app.add_option("--elements", elements, "float32 elements per tensor")->required()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 32));
  app.add_option("--hot", hot_list, "Comma-separated steps whose values are N(0, 1)");
  app.add_option("--nan", nan_list, "Steps where the last tensor holds a NaN");
  app.add_option("--inf", inf_list, "Steps where the last tensor holds +inf");
  app.add_option("--workers", workers, "Workers, each writing every step (default 1)")
      ->check(CLI::Range(int64_t{1}, int64_t{4096}));
  app.add_flag("--no-end-marker", no_end_marker, "Leave training_job_end.ts out (a trial still training)");
  app.add_option("--seed", seed, "Random seed");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << "make_trial: error: " << e.what() << " (see --help)\n";
    return 2;
  }
  std::set<int64_t> hot, nan_steps, inf_steps;
  std::string error;
  if (!ParseSteps(hot_list, steps, "--hot", &hot, &error) ||
      !ParseSteps(nan_list, steps, "--nan", &nan_steps, &error) ||
      !ParseSteps(inf_list, steps, "--inf", &inf_steps, &error)) {
    std::cerr << "make_trial: error: " << error << "\n";
    return 2;
  }

  // Zero-padded to at least 3 digits, so that name order is number order.
  const int digits = std::max(3, static_cast<int>(std::to_string(tensors - 1).size()));
  std::vector<std::string> names;
  for (int64_t t = 0; t < tensors; ++t) {
    const std::string number = std::to_string(t);
    names.push_back("gradient/layer_" + std::string(static_cast<size_t>(digits) - std::min(number.size(), static_cast<size_t>(digits)), '0') +
                    number + ".weight");
  }
  litmus::writer::WriterOptions options;
  options.save_config = litmus::writer::SaveConfig::Every(1);
  litmus::writer::CollectionConfig default_collection;
  default_collection.name = "default";
  default_collection.tensor_names = names;
  litmus::writer::CollectionConfig gradients = default_collection;
  gradients.name = "gradients";
  gradients.include_regex = {"^gradient"};
  options.collections = {default_collection, gradients};
  options.num_workers = workers;
  // One worker writes the marker at Close(); with several, it is written after all have closed.
  options.end_marker = no_end_marker ? litmus::writer::EndMarkerPolicy::kNever
                                     : litmus::writer::EndMarkerPolicy::kSingleWorker;
  std::vector<std::unique_ptr<litmus::writer::Writer>> writers;
  for (int64_t k = 0; k < workers; ++k) {
    options.worker = "worker_" + std::to_string(k);  // smdebug's names for PyTorch/Horovod ranks
    auto opened = litmus::writer::Writer::Open(out_dir, options);
    if (!opened.ok()) {
      std::cerr << "make_trial: " << opened.status().ToString() << "\n";
      return 1;
    }
    writers.push_back(*std::move(opened));
  }

  // Each tensor is a window of `elements` values starting at a random offset in a table.
  constexpr size_t kOffsets = 1 << 16;
  Xoshiro rng(seed);
  std::vector<float> quiet = NormalTable(static_cast<size_t>(elements) + kOffsets, 1e-3, rng);
  std::vector<float> loud = hot.empty() ? std::vector<float>() : NormalTable(quiet.size(), 1.0, rng);
  const int64_t special_index = 1000 % elements;
  const std::vector<int64_t> shape = {elements};

  const auto start = std::chrono::steady_clock::now();
  litmus::Status status;
  for (auto& w : writers) {
    if (status.ok()) status = w->SetMode(litmus::Mode::kTrain);
  }
  // Step by step, every worker in turn (as workers of one job progress together).
  for (int64_t s = 0; s < steps && status.ok(); ++s) {
    std::vector<float>& table = hot.count(s) ? loud : quiet;
    for (auto& w : writers) {
      if (status.ok()) status = w->BeginStep();
      for (int64_t t = 0; t < tensors && status.ok(); ++t) {
        float* window = table.data() + rng.Next() % kOffsets;
        const bool last = t == tensors - 1;
        const float saved = window[special_index];
        if (last && nan_steps.count(s)) window[special_index] = std::numeric_limits<float>::quiet_NaN();
        if (last && inf_steps.count(s)) window[special_index] = std::numeric_limits<float>::infinity();
        status = w->SaveTensor(names[static_cast<size_t>(t)],
                               std::span<const float>(window, static_cast<size_t>(elements)), shape);
        window[special_index] = saved;  // the writer does not keep the data after the call
      }
      if (status.ok()) status = w->EndStep();
    }
  }
  for (auto& w : writers) {
    const litmus::Status closed = w->Close();
    if (status.ok()) status = closed;
  }
  if (status.ok() && workers > 1 && !no_end_marker) status = litmus::writer::MarkTrainingEnded(nullptr, out_dir);
  if (!status.ok()) {
    std::cerr << "make_trial: " << status.ToString() << "\n";
    return 1;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double bytes = static_cast<double>(steps) * static_cast<double>(workers) * static_cast<double>(tensors) *
                       static_cast<double>(elements) * 4.0;
  std::printf("wrote %lld steps x %lld workers x %lld tensors x %lld float32 (%.2f GB) to %s in %.2f s (%.0f MB/s)\n",
              static_cast<long long>(steps), static_cast<long long>(workers), static_cast<long long>(tensors),
              static_cast<long long>(elements), bytes / 1e9, out_dir.c_str(), seconds, bytes / 1e6 / seconds);
  return 0;
}
