// End-to-end: `simulated_training --tensorboard` (litmus::writer's TensorBoard export, the hook
// side of smdebug's TensorBoard support; docs/report.md "TensorBoard"). The real example binary
// trains with EVAL phases; every TensorBoard file is decoded with the project's own protos:
// framing and every CRC, file_version first, one folder per mode (TRAIN, EVAL), one file per
// saved step named <S12>_<worker>.tfevents, records at the global step, the loss scalars equal to
// the trial's own MSELoss_output_0 records, and the weight histograms equal to the trial's
// weight tensors (num, min, max, sum, buckets summing to num).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "litmus/format/crc32c.h"
#include "litmus/format/proto/event.pb.h"
#include "litmus/format/tfrecord.h"
#include "support/run_process.h"
#include "support/temp_dir.h"
#include "support/tensorboard_records.h"

namespace litmus {
namespace {

namespace fs = std::filesystem;
using testing::RunProcess;
using testing::TempDir;


// The float32 elements of a trial record's tensor (smdebug's encoding: tensor_content, or
// float_val for some writers).
std::vector<double> Floats(const format::proto::TensorProto& t) {
  std::vector<double> out;
  if (!t.tensor_content().empty()) {
    std::vector<float> f(t.tensor_content().size() / sizeof(float));
    std::memcpy(f.data(), t.tensor_content().data(), f.size() * sizeof(float));
    out.assign(f.begin(), f.end());
  } else {
    out.assign(t.float_val().begin(), t.float_val().end());
  }
  return out;
}

// tag -> elements of the trial's records at `step` (worker_0), read from its event file.
std::map<std::string, std::vector<double>> TrialStep(const fs::path& trial, int64_t step) {
  char rel[96];
  std::snprintf(rel, sizeof rel, "events/%012lld/%012lld_worker_0.tfevents", static_cast<long long>(step),
                static_cast<long long>(step));
  const std::string bytes = testing::ReadWholeFile(trial / rel);
  std::map<std::string, std::vector<double>> out;
  size_t at = 0;
  while (at < bytes.size()) {
    auto record = tfrecord::ParseRecord(std::as_bytes(std::span(bytes.data() + at, bytes.size() - at)), rel, at);
    EXPECT_TRUE(record.ok()) << record.status().message();
    if (!record.ok()) break;
    format::proto::Event event;
    EXPECT_TRUE(event.ParseFromArray(record->payload.data(), static_cast<int>(record->payload.size())));
    for (const auto& v : event.summary().value()) out[v.tag()] = Floats(v.tensor());
    at += record->framed_size;
  }
  return out;
}

TEST(SimulatedTrainingTensorBoard, PerModeSummariesEqualTheTrial) {
  TempDir dir;
  const fs::path trial = dir.path() / "trial";
  // 6 TRAIN steps with an EVAL phase of 2 steps after the 3rd and the 6th: global steps
  // 0 1 2 TRAIN, 3 4 EVAL, 5 6 7 TRAIN, 8 9 EVAL.
  const testing::ProcessResult r =
      RunProcess({LITMUS_SIMULATED_TRAINING, trial.string(), "--scenario", "healthy", "--steps", "6",
                  "--eval-every", "3", "--eval-steps", "2", "--tensorboard"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::HasSubstr("tensorboard --logdir " + (trial / "tensorboard").string()));

  const std::map<std::string, std::vector<int64_t>> expected_steps = {{"TRAIN", {0, 1, 2, 5, 6, 7}},
                                                                     {"EVAL", {3, 4, 8, 9}}};
  std::map<std::string, std::vector<int64_t>> found;
  for (const auto& mode_dir : fs::directory_iterator(trial / "tensorboard")) {
    for (const auto& file : fs::directory_iterator(mode_dir.path())) {
      const std::string name = file.path().filename().string();
      ASSERT_TRUE(name.ends_with("_worker_0.tfevents")) << name;
      found[mode_dir.path().filename().string()].push_back(std::stoll(name.substr(0, 12)));
    }
  }
  for (auto& [mode, steps] : found) std::sort(steps.begin(), steps.end());
  EXPECT_EQ(found, expected_steps);

  int histograms = 0;
  for (const auto& [mode, steps] : expected_steps) {
    for (int64_t step : steps) {
      char name[64];
      std::snprintf(name, sizeof name, "%012lld_worker_0.tfevents", static_cast<long long>(step));
      SCOPED_TRACE(mode + "/" + name);
      const std::vector<format::proto::Event> events = litmus::testing::DecodeTensorBoardFile(trial / "tensorboard" / mode / name);
      ASSERT_GE(events.size(), 2u);
      EXPECT_EQ(events[0].file_version(), "brain.Event:2");
      const auto tensors = TrialStep(trial, step);
      std::set<std::string> tags;
      for (size_t i = 1; i < events.size(); ++i) {
        EXPECT_EQ(events[i].step(), step);
        ASSERT_EQ(events[i].summary().value_size(), 1);
        const auto& v = events[i].summary().value(0);
        tags.insert(v.tag());
        if (v.has_histo()) {
          // "<collection>/<tensor>": the histogram of the trial's tensor at this step.
          const std::string tensor = v.tag().substr(v.tag().find('/') + 1);
          ASSERT_TRUE(tensors.count(tensor)) << v.tag();
          const std::vector<double>& x = tensors.at(tensor);
          EXPECT_EQ(v.histo().num(), static_cast<double>(x.size())) << v.tag();
          EXPECT_EQ(v.histo().min(), *std::min_element(x.begin(), x.end())) << v.tag();
          EXPECT_EQ(v.histo().max(), *std::max_element(x.begin(), x.end())) << v.tag();
          EXPECT_NEAR(v.histo().sum(), std::accumulate(x.begin(), x.end(), 0.0), 1e-9) << v.tag();
          EXPECT_EQ(std::accumulate(v.histo().bucket().begin(), v.histo().bucket().end(), 0.0), v.histo().num());
          ++histograms;
        } else {
          EXPECT_EQ(v.value_case(), format::proto::Summary::Value::kSimpleValue) << v.tag();
          ASSERT_TRUE(tensors.count(v.tag())) << v.tag();
          EXPECT_EQ(v.simple_value(), static_cast<float>(tensors.at(v.tag()).at(0))) << v.tag();
        }
      }
      std::set<std::string> expected = {"MSELoss_output_0"};
      for (const char* layer : {"fc1", "fc2", "fc3"}) {
        expected.insert(std::string("weights/MLP_") + layer + ".weight");
        expected.insert(std::string("biases/MLP_") + layer + ".bias");
        if (mode == "TRAIN") {
          expected.insert(std::string("gradients/gradient/MLP_") + layer + ".weight");
          expected.insert(std::string("gradients/gradient/MLP_") + layer + ".bias");
        }
      }
      EXPECT_EQ(tags, expected);
    }
  }
  EXPECT_EQ(histograms, 6 * 12 + 4 * 6);
}

TEST(SimulatedTrainingTensorBoard, OffWithoutTheFlagAndTensorBoardDirElsewhere) {
  TempDir dir;
  ASSERT_EQ(RunProcess({LITMUS_SIMULATED_TRAINING, (dir.path() / "plain").string(), "--scenario", "healthy",
                        "--steps", "2"})
                .exit_code,
            0);
  EXPECT_FALSE(fs::exists(dir.path() / "plain" / "tensorboard"));
  const testing::ProcessResult r =
      RunProcess({LITMUS_SIMULATED_TRAINING, (dir.path() / "t").string(), "--scenario", "healthy", "--steps", "2",
                  "--eval-every", "0", "--workers", "2", "--tensorboard-dir", (dir.path() / "tb").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "t" / "tensorboard"));
  // Both ranks' files in one run per mode, told apart by the worker name.
  std::vector<std::string> names;
  for (const auto& f : fs::directory_iterator(dir.path() / "tb" / "TRAIN")) names.push_back(f.path().filename());
  std::sort(names.begin(), names.end());
  EXPECT_THAT(names, ::testing::ElementsAre("000000000000_worker_0.tfevents", "000000000000_worker_1.tfevents",
                                            "000000000001_worker_0.tfevents", "000000000001_worker_1.tfevents"));
}

}  // namespace
}  // namespace litmus
