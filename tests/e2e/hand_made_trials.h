// Hand-made trials for the inspect e2e tests (outline, overview, values): index and collections
// files written as text, whose event files need not exist (every record they name is then
// damaged once training has ended), and the fixtures they compare on, one of them damaged.
// Header-only.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace litmus::testing {

// An index file of `step` by `worker` in `mode` with entries of 40 bytes each in `event_file`
// ("" = events/missing-<step>-<worker>.tfevents). A name "red:NAME" gets a stored max reduction
// of NAME, "shape:NAME" only a shape entry. `folder` (not "") replaces the step's index folder.
inline void WriteIndex(const TempDir& dir, int64_t step, const std::string& worker, const std::string& mode,
                       int64_t mode_step, const std::vector<std::string>& tensors, std::string event_file = "",
                       const std::string& folder = "") {
  char relative[96];
  std::snprintf(relative, sizeof relative, "index/%09lld/%012lld_%s.json", static_cast<long long>(step / 1000),
                static_cast<long long>(step), worker.c_str());
  std::string path = relative;
  if (!folder.empty()) path = "index/" + folder + path.substr(15);
  if (event_file.empty()) event_file = "events/missing-" + std::to_string(step) + "-" + worker + ".tfevents";
  std::string payload, shapes;
  int64_t offset = 0;
  for (std::string t : tensors) {
    if (t.starts_with("shape:")) {
      shapes += std::string(shapes.empty() ? "" : ", ") + "{\"tensorname\": \"" + t.substr(6) + "\", \"shape\": [2]}";
      continue;
    }
    if (t.starts_with("red:")) t = "smdebug/reductions/" + t.substr(4) + "/max";
    payload += std::string(payload.empty() ? "" : ", ") + "{\"tensorname\": \"" + t + "\", \"start_idx\": " +
               std::to_string(offset) + ", \"length\": 40}";
    offset += 40;
  }
  dir.WriteFile(path, "{\"meta\": {\"mode\": \"" + mode + "\", \"mode_step\": " + std::to_string(mode_step) +
                          ", \"event_file_name\": \"" + event_file + "\"}, \"tensor_payload\": [" + payload +
                          "], \"shape_payload\": [" + shapes + "]}");
}

// Each worker's collections file: one `losses` collection, _meta.num_workers = num_workers.
inline void WriteCollections(const TempDir& dir, const std::vector<std::string>& workers, int num_workers) {
  for (const std::string& w : workers) {
    dir.WriteFile("collections/000000000/" + w + "_collections.json",
                  "{\"collections\": {\"losses\": {\"name\": \"losses\", \"include_regex\": [\"loss\"], "
                  "\"tensor_names\": [\"fc1.b\"], \"reduction_config\": null, \"save_config\": {}}}, "
                  "\"_meta\": {\"num_workers\": " +
                      std::to_string(num_workers) + "}}");
  }
}

// The smdebug fixtures (tests/fixtures/smdebug) the inspect tests compare outputs on.
inline constexpr std::string_view kInspectFixtures[] = {"pt_ddp_two_workers", "pt_exploding", "pt_run_complete",
                                                        "pt_run_partial", "synthetic_dtypes"};

// A copy of fixture pt_exploding in `dir` with a bad record length at step 3 (a damaged record).
inline void CopyDamagedFixture(const TempDir& dir) {
  CopyTree(FixturePath("pt_exploding"), dir.path());
  const auto event = dir.path() / "events/000000000003/000000000003_worker_0.tfevents";
  FILE* f = std::fopen(event.c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  std::fseek(f, 660, SEEK_SET);
  std::fputc(0x7f, f);
  std::fclose(f);
}

}  // namespace litmus::testing
