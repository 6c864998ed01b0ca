// Trials of many steps made quickly for the inspect e2e memory tests: pairs that differ only in
// their number of steps, made with litmus::writer. Header-only.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "litmus/format/env.h"
#include "litmus/format/mode.h"
#include "litmus/writer/writer.h"
#include "support/temp_dir.h"

namespace litmus::testing {

// Into each (dir, steps) of `trials`: a trial of `steps` TRAIN steps x 100 scalars
// (layer_<t>/weight), quick to make: step 0 is written by litmus::writer, every other step's
// index file is a copy of step 0's (its records are step 0's records). For memory tests.
inline void WriteScalarTrials(const std::vector<std::pair<const TempDir*, int64_t>>& trials) {
  TempDir seed;
  {
    writer::WriterOptions options;
    options.save_config = writer::SaveConfig::Every(1);
    auto w = writer::Writer::Open(seed.str(), options);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE((*w)->SetMode(Mode::kTrain).ok());
    ASSERT_TRUE((*w)->BeginStep().ok());
    for (int t = 0; t < 100; ++t) {
      ASSERT_TRUE((*w)->SaveTensor("layer_" + std::to_string(t) + "/weight", std::vector<float>{1.0f * t}, {}).ok());
    }
    ASSERT_TRUE((*w)->EndStep().ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  const StatusOr<std::string> index =
      Env::Default()->ReadFileToString(seed.str() + "/index/000000000/000000000000_worker_0.json");
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  const size_t mode_step = index->find("\"mode_step\":");
  ASSERT_NE(mode_step, std::string::npos) << *index;
  const size_t value = index->find_first_of("0123456789", mode_step);
  for (const auto& [dir, steps] : trials) {
    CopyTree(seed.path(), dir->path());
    for (int64_t step = 1; step < steps; ++step) {
      char relative[96];
      std::snprintf(relative, sizeof relative, "index/%09lld/%012lld_worker_0.json",
                    static_cast<long long>(step / 1000), static_cast<long long>(step));
      dir->WriteFile(relative, index->substr(0, value) + std::to_string(step) + index->substr(value + 1));
    }
  }
}

}  // namespace litmus::testing
