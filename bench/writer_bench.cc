// writer_bench: litmus::writer throughput for 1 MiB and 4 KiB float32 tensors, next to plain
// sequential write(2) of the same number of bytes into the same number of files (1 MiB writes:
// the best a plain writer can do), measured in the same run, in alternating order with sync(2)
// between runs, best of 5 rounds.
// Prints MB/s for both and their ratio. Files go to a fresh folder (default: under $TMPDIR),
// removed at the end. Single-threaded; tests never assert these numbers.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "litmus/writer/writer.h"

namespace {

namespace fs = std::filesystem;

struct Case {
  const char* label;
  size_t tensor_bytes;
  int tensors_per_step;
  int steps;
};

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Writes the case through litmus::writer; returns seconds, or -1 on error.
double RunWriter(const fs::path& dir, const Case& c, const std::vector<float>& data,
                 const std::vector<std::string>& names) {
  litmus::writer::WriterOptions options;
  options.save_config = litmus::writer::SaveConfig::Every(1);
  const auto start = std::chrono::steady_clock::now();
  auto w = litmus::writer::Writer::Open(dir.string(), options);
  if (!w.ok()) {
    std::cerr << "writer_bench: " << w.status().ToString() << "\n";
    return -1;
  }
  const std::vector<int64_t> shape = {static_cast<int64_t>(c.tensor_bytes / 4)};
  const size_t floats = c.tensor_bytes / 4;
  litmus::Status s;
  for (int step = 0; step < c.steps && s.ok(); ++step) {
    s = (*w)->BeginStep();
    for (int t = 0; t < c.tensors_per_step && s.ok(); ++t) {
      // Different data per tensor, as a real model's tensors would be.
      const float* p = data.data() + static_cast<size_t>(t) % 64 * 16;
      s = (*w)->SaveTensor(names[static_cast<size_t>(t)], std::span<const float>(p, floats), shape);
    }
    if (s.ok()) s = (*w)->EndStep();
  }
  const litmus::Status closed = (*w)->Close();
  if (s.ok()) s = closed;
  if (!s.ok()) {
    std::cerr << "writer_bench: " << s.ToString() << "\n";
    return -1;
  }
  return Seconds(start);
}

// The same payload bytes with plain write(2), 1 MiB at a time, one file per step.
double RunPlain(const fs::path& dir, const Case& c, const std::vector<float>& data) {
  const auto start = std::chrono::steady_clock::now();
  fs::create_directories(dir);
  const size_t step_bytes = c.tensor_bytes * static_cast<size_t>(c.tensors_per_step);
  const char* src = reinterpret_cast<const char*>(data.data());
  for (int step = 0; step < c.steps; ++step) {
    const std::string path = (dir / ("step_" + std::to_string(step))).string();
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
      std::perror(path.c_str());
      return -1;
    }
    for (size_t done = 0; done < step_bytes;) {
      const size_t n = std::min<size_t>(size_t{1} << 20, step_bytes - done);
      const ssize_t w = ::write(fd, src + (done / 4096 % 64) * 64, n);
      if (w <= 0) {
        std::perror(path.c_str());
        ::close(fd);
        return -1;
      }
      done += static_cast<size_t>(w);
    }
    ::close(fd);
  }
  return Seconds(start);
}

// Best of the rounds: the run least disturbed by other processes and by writeback.
double Best(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

}  // namespace

int main(int argc, char** argv) {
  // writer_bench [DIR] [--smoke]: --smoke writes 1/8 of the data once (for CI).
  bool smoke = false;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--smoke") {
      smoke = true;
    } else {
      positional.push_back(argv[i]);
    }
  }
  const fs::path root = !positional.empty()
                            ? fs::path(positional[0])
                            : fs::temp_directory_path() / ("litmus_writer_bench_" + std::to_string(::getpid()));
  if (fs::exists(root)) {
    std::cerr << "writer_bench: " << root << " already exists\n";
    return 2;
  }
  const int steps_divisor = smoke ? 8 : 1;
  const std::vector<Case> cases = {
      {"1 MiB tensors", size_t{1} << 20, 64, 8 / steps_divisor},     // 512 MiB
      {"4 KiB tensors", size_t{4} << 10, 4096, 32 / steps_divisor},  // 512 MiB
  };
  std::vector<float> data((size_t{1} << 20) / 4 + 4096);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i % 1000) * 1e-3f;
  std::vector<std::string> names;
  for (int t = 0; t < 4096; ++t) names.push_back("gradient/layer_" + std::to_string(t) + ".weight");

  std::printf("%-16s %14s %14s %8s\n", "case", "writer MB/s", "write() MB/s", "ratio");
  int status = 0;
  for (const Case& c : cases) {
    const double bytes = static_cast<double>(c.tensor_bytes) * c.tensors_per_step * c.steps;
    std::vector<double> writer_s, plain_s;
    for (int round = 0; round < (smoke ? 1 : 5); ++round) {
      const fs::path wdir = root / "writer";
      const fs::path pdir = root / "plain";
      // Alternate the order, and flush dirty pages between runs (untimed), so that neither side
      // pays for the other's writeback.
      double tw = 0, tp = 0;
      for (int k = 0; k < 2; ++k) {
        if ((k == 0) == (round % 2 == 0)) {
          tw = RunWriter(wdir, c, data, names);
        } else {
          tp = RunPlain(pdir, c, data);
        }
        ::sync();
      }
      fs::remove_all(wdir);
      fs::remove_all(pdir);
      ::sync();
      if (tw < 0 || tp < 0) {
        status = 1;
        break;
      }
      writer_s.push_back(tw);
      plain_s.push_back(tp);
    }
    if (status != 0) break;
    const double writer_mbs = bytes / 1e6 / Best(writer_s);
    const double plain_mbs = bytes / 1e6 / Best(plain_s);
    std::printf("%-16s %14.0f %14.0f %8.2f\n", c.label, writer_mbs, plain_mbs, writer_mbs / plain_mbs);
  }
  std::error_code ec;
  fs::remove_all(root, ec);
  return status;
}
