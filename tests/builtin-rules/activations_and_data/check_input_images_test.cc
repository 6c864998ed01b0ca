// CheckInputImages (docs/rules/CheckInputImages.md) through the real `litmus run`: channel means
// accumulated across steps until threshold_samples images, each parameter (threshold_mean,
// threshold_samples, regex, channel), unusable tensors, missing tensors and invalid parameters.
#include <gtest/gtest.h>

#include "rule_test_support.h"

namespace litmus::testing {
namespace {

constexpr char kImages[] = "hybridsequential0_input_0";

// NCHW images (3 channels of 2x2) whose channel c holds means[c] on average: each pixel is
// means[c] + (+0.5 or -0.5, alternating), so a single pixel never equals the mean.
TensorData Nchw(const std::string& name, int64_t batch, const std::vector<double>& means) {
  TensorData t{name, {batch, static_cast<int64_t>(means.size()), 2, 2}, {}, DType::kFloat32};
  for (int64_t b = 0; b < batch; ++b) {
    for (const double mean : means) {
      for (int p = 0; p < 4; ++p) t.values.push_back(mean + (p % 2 == 0 ? 0.5 : -0.5));
    }
  }
  return t;
}

// NHWC images (2x2 pixels of 3 channels): channel c holds means[c].
TensorData Nhwc(const std::string& name, int64_t batch, const std::vector<double>& means) {
  TensorData t{name, {batch, 2, 2, static_cast<int64_t>(means.size())}, {}, DType::kFloat32};
  for (int64_t i = 0; i < batch * 4; ++i) {
    for (const double mean : means) t.values.push_back(mean);
  }
  return t;
}

class CheckInputImagesTest : public ::testing::Test {
 protected:
  std::filesystem::path Write(const std::vector<StepData>& steps) {
    const auto path = dir_.path() / ("trial" + std::to_string(trials_++));
    WriteTrial(path, steps);
    return path;
  }
  TempDir dir_;
  int trials_ = 0;
};

// 200 unnormalised images per step: 400 < 500 after step 1, 600 after step 2.
TEST_F(CheckInputImagesTest, FiresOnceThresholdSamplesImagesWereSeen) {
  const std::vector<double> raw = {120.0, 110.0, 100.0};
  const auto trial = Write({{Nchw(kImages, 200, raw)}, {Nchw(kImages, 200, raw)}, {Nchw(kImages, 200, raw)},
                            {Nchw(kImages, 200, raw)}});
  const RuleRun run = RunRule(trial, "CheckInputImages");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.fired, std::vector<int64_t>{2});
  EXPECT_EQ(run.report["Details"]["images_seen"], 600);
  EXPECT_EQ(run.report["Details"]["channel_means"], nlohmann::json({120.0, 110.0, 100.0}));
  EXPECT_EQ(run.report["Violations"], 3);
}

TEST_F(CheckInputImagesTest, NormalisedImagesDoNotFire) {
  const auto trial = Write({{Nchw(kImages, 300, {0.0, 0.1, -0.15})}, {Nchw(kImages, 300, {0.0, 0.1, -0.15})}});
  const RuleRun run = RunRule(trial, "CheckInputImages");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.report["Details"]["images_seen"], 600);
  EXPECT_EQ(run.report["Datapoints"], 2);
}

// Means accumulate over steps: step 0 averages +1, step 1 averages -1; together 0.
TEST_F(CheckInputImagesTest, MeansAccumulateAcrossSteps) {
  const auto trial = Write({{Nchw(kImages, 300, {1.0, 1.0, 1.0})}, {Nchw(kImages, 300, {-1.0, -1.0, -1.0})}});
  EXPECT_EQ(RunRule(trial, "CheckInputImages").exit_code, 0);
  EXPECT_EQ(RunRule(trial, "CheckInputImages", {"threshold_samples=300"}).fired, std::vector<int64_t>{0});
}

TEST_F(CheckInputImagesTest, ThresholdSamples) {
  const auto trial = Write({{Nchw(kImages, 64, {0.5, 0.0, 0.0})}, {Nchw(kImages, 64, {0.5, 0.0, 0.0})}});
  EXPECT_EQ(RunRule(trial, "CheckInputImages").exit_code, 0) << "128 images < 500";
  EXPECT_EQ(RunRule(trial, "CheckInputImages", {"threshold_samples=64"}).fired, std::vector<int64_t>{0});
  EXPECT_EQ(RunRule(trial, "CheckInputImages", {"threshold_samples=100"}).fired, std::vector<int64_t>{1});
}

// Only channel 2 is off: any channel fires; |mean| counts negative means too.
TEST_F(CheckInputImagesTest, ThresholdMean) {
  const auto trial = Write({{Nchw(kImages, 500, {0.0, 0.1, -0.3})}});
  const RuleRun run = RunRule(trial, "CheckInputImages");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.report["Violations"], 1);
  EXPECT_EQ(RunRule(trial, "CheckInputImages", {"threshold_mean=0.31"}).exit_code, 0);
  EXPECT_EQ(RunRule(trial, "CheckInputImages", {"threshold_mean=0.05"}).exit_code, 1);
}

// NHWC with channel means (+1, -1, 0): along axis 1 (rows) every mean is 0.
TEST_F(CheckInputImagesTest, ChannelAxis) {
  const auto trial = Write({{Nhwc(kImages, 500, {1.0, -1.0, 0.0})}});
  EXPECT_EQ(RunRule(trial, "CheckInputImages").exit_code, 0);
  const RuleRun run = RunRule(trial, "CheckInputImages", {"channel=3"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.report["Details"]["channel_means"], nlohmann::json({1.0, -1.0, 0.0}));
}

TEST_F(CheckInputImagesTest, Regex) {
  const auto trial = Write({{Nchw("data_input", 500, {5.0, 5.0, 5.0})}});
  EXPECT_EQ(RunRule(trial, "CheckInputImages").exit_code, 0);
  EXPECT_EQ(RunRule(trial, "CheckInputImages", {"regex=data_input"}).exit_code, 1);
  EXPECT_EQ(RunRule(trial, "CheckInputImages", {"regex=None"}).exit_code, 0) << "None: the default regex";
}

// Every matching tensor contributes; tensors that cannot hold images are skipped with a warning.
TEST_F(CheckInputImagesTest, UnusableTensorsAreSkipped) {
  const auto flat = Write({{Filled(kImages, {500, 3}, 9.0)}});
  RuleRun run = RunRule(flat, "CheckInputImages");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("rank >= 3"), std::string::npos) << run.err;
  run = RunRule(Write({{Nchw(kImages, 500, {9.0, 9.0, 9.0})}}), "CheckInputImages", {"channel=4"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("channel=4"), std::string::npos) << run.err;
}

TEST_F(CheckInputImagesTest, SeveralMatchingTensorsCountTogether) {
  const auto trial = Write({{Nchw("a_input_0", 250, {1.0, 1.0, 1.0}), Nchw("b_input_0", 250, {1.0, 1.0, 1.0})}});
  const RuleRun run = RunRule(trial, "CheckInputImages", {"regex=_input_0"});
  EXPECT_EQ(run.fired, std::vector<int64_t>{0});
  EXPECT_EQ(run.report["Details"]["images_seen"], 500);
}

TEST_F(CheckInputImagesTest, MissingTensorNeverFires) {
  EXPECT_EQ(RunRule(Write({{Filled("loss", {1}, 3.0)}, {}}), "CheckInputImages").exit_code, 0);
  const auto late = Write({{}, {Filled("loss", {1}, 3.0)}, {Nchw(kImages, 600, {2.0, 2.0, 2.0})}});
  EXPECT_EQ(RunRule(late, "CheckInputImages").fired, std::vector<int64_t>{2});
}

TEST_F(CheckInputImagesTest, IntegerImages) {
  const auto trial = Write({{Filled(kImages, {500, 3, 2, 2}, 128.0, DType::kUInt8)}});
  EXPECT_EQ(RunRule(trial, "CheckInputImages").exit_code, 1);
}

TEST_F(CheckInputImagesTest, InvalidParametersAreConfigErrors) {
  const auto trial = Write({{Nchw(kImages, 4, {0.0, 0.0, 0.0})}});
  for (const auto& [param, key] : std::vector<std::pair<std::string, std::string>>{
           {"threshold_samples=0", "threshold_samples"},
           {"threshold_samples=1.5", "threshold_samples"},
           {"threshold_mean=-0.1", "threshold_mean"},
           {"threshold_mean=abc", "threshold_mean"},
           {"channel=0", "channel"},
           {"channel=one", "channel"},
           {"regex=[", "regex"}}) {
    SCOPED_TRACE(param);
    const RuleRun run = RunRule(trial, "CheckInputImages", {param});
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_NE(run.err.find(key + ":"), std::string::npos) << run.err;
  }
}

}  // namespace
}  // namespace litmus::testing
