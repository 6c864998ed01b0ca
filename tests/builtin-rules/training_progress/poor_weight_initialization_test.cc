// PoorWeightInitialization (docs/rules/PoorWeightInitialization.md) through the real binary: each
// of the three checks alone, each parameter, the `steps` window, TRAIN-only loss history, and
// missing data.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "progress_test_support.h"
#include "support/temp_dir.h"

namespace litmus::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kRule[] = "PoorWeightInitialization";

// Values with variance `scale`^2 / 4 ({-s, s, -s, s}... has variance s^2).
std::vector<float> Spread(float scale) { return {-scale, scale, -scale, scale}; }
// 0, 1/n, ..., (n-1)/n: p95 - p5 = 0.9 * (n-1)/n.
std::vector<float> Uniform(int n, float width = 1.0f) {
  std::vector<float> out;
  for (int i = 0; i < n; ++i) out.push_back(width * static_cast<float>(i) / static_cast<float>(n));
  return out;
}

// One TRAIN step 0 with two layers' activation inputs whose variances differ by `ratio`.
void WriteLayers(const TempDir& dir, float ratio, const std::string& prefix = "layer") {
  TrialBuilder trial(dir.path());
  trial.Save(0, Mode::kTrain,
             {Vector(prefix + "1_relu_input", Spread(1.0f)), Vector(prefix + "2_relu_input", Spread(std::sqrt(ratio))),
              Vector("gradient/w", Uniform(100))});
  trial.Finish();
}

TEST(PoorWeightInitialization, VarianceSpreadAcrossLayers) {
  TempDir spread, even;
  WriteLayers(spread, 100.0f);
  WriteLayers(even, 5.0f);
  const RuleRun run = RunRule(spread.str(), kRule, {});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(0));
  EXPECT_NEAR(run.report["Details"]["variance_ratio"].get<double>(), 100.0, 1e-3);
  EXPECT_NEAR(run.report["Details"]["min_gradient_spread"].get<double>(), 0.891, 1e-3);
  EXPECT_THAT(run.err, HasSubstr("layer input variances spread"));
  const RuleRun quiet = RunRule(even.str(), kRule, {});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(RunRule(spread.str(), kRule, {"threshold=200"}).exit_code, 0);
  EXPECT_THAT(RunRule(even.str(), kRule, {"threshold=4"}).fired, ElementsAre(0));
}

TEST(PoorWeightInitialization, ActivationInputsRegexNamesTheLayers) {
  TempDir dir;
  WriteLayers(dir, 100.0f, "act_in_");  // act_in_1_relu_input matches the default regex too
  EXPECT_THAT(RunRule(dir.str(), kRule, {}).fired, ElementsAre(0));
  EXPECT_EQ(RunRule(dir.str(), kRule, {"activation_inputs_regex=nothing_matches"}).exit_code, 0);
  EXPECT_THAT(RunRule(dir.str(), kRule, {"activation_inputs_regex=act_in_1, act_in_2"}).fired, ElementsAre(0));
  EXPECT_EQ(RunRule(dir.str(), kRule, {"activation_inputs_regex=act_in_1"}).exit_code, 0);  // one layer
}

TEST(PoorWeightInitialization, NarrowGradients) {
  TempDir dir;
  TrialBuilder trial(dir.path());
  trial.Save(0, Mode::kTrain,
             {Vector("gradient/wide", Uniform(100)), Vector("gradient/narrow", Uniform(100, 1e-4f)),
              Vector("gradient/single", {0.5f})});  // one value: no distribution, ignored
  trial.Finish();
  const RuleRun run = RunRule(dir.str(), kRule, {});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(0));
  EXPECT_NEAR(run.report["Details"]["min_gradient_spread"].get<double>(), 0.891e-4, 1e-7);
  EXPECT_FALSE(run.report["Details"].contains("variance_ratio"));
  EXPECT_EQ(RunRule(dir.str(), kRule, {"distribution_range=1e-5"}).exit_code, 0);
}

// The training loss is flat: with patience p it fires at the p-th saved step after the first.
TEST(PoorWeightInitialization, LossThatDoesNotDecrease) {
  TempDir flat, falling, eval_flat;
  {
    TrialBuilder t(flat.path());
    for (int64_t s = 0; s < 12; ++s) t.Save(s, Mode::kTrain, {Scalar("loss", 0.7f)});
    t.Finish();
  }
  {
    TrialBuilder t(falling.path());
    for (int64_t s = 0; s < 12; ++s) t.Save(s, Mode::kTrain, {Scalar("loss", 1.0f - 0.05f * static_cast<float>(s))});
    t.Finish();
  }
  {
    TrialBuilder t(eval_flat.path());  // only validation losses: not the training loss
    for (int64_t s = 0; s < 12; ++s) t.Save(s, Mode::kEval, {Scalar("loss", 0.7f)});
    t.Finish();
  }
  const RuleRun run = RunRule(flat.str(), kRule, {});
  EXPECT_THAT(run.fired, ElementsAre(5)) << run.err;
  EXPECT_NEAR(run.report["Details"]["loss_trend"].get<double>(), 0.0, 1e-9);
  EXPECT_THAT(RunRule(flat.str(), kRule, {"patience=2"}).fired, ElementsAre(2));
  EXPECT_EQ(RunRule(falling.str(), kRule, {}).exit_code, 0);
  EXPECT_EQ(RunRule(eval_flat.str(), kRule, {}).exit_code, 0);
}

// Only the first `steps` global steps are analyzed.
TEST(PoorWeightInitialization, StepsWindow) {
  TempDir flat, late;
  {
    TrialBuilder t(flat.path());
    for (int64_t s = 0; s < 12; ++s) t.Save(s, Mode::kTrain, {Scalar("loss", 0.7f)});
    t.Finish();
  }
  {
    TrialBuilder t(late.path());  // the spread appears only at step 12
    t.Save(0, Mode::kTrain, {Vector("l1_relu_input", Spread(1)), Vector("l2_relu_input", Spread(1))});
    t.Save(12, Mode::kTrain, {Vector("l1_relu_input", Spread(1)), Vector("l2_relu_input", Spread(100))});
    t.Finish();
  }
  const RuleRun windowed = RunRule(flat.str(), kRule, {"steps=5"});  // 5 losses: patience 5 needs 6
  EXPECT_EQ(windowed.exit_code, 0) << windowed.err;
  EXPECT_THAT(windowed.err, HasSubstr("past the analyzed window"));
  EXPECT_EQ(RunRule(late.str(), kRule, {}).exit_code, 0);
  EXPECT_THAT(RunRule(late.str(), kRule, {"steps=13"}).fired, ElementsAre(12));
}

TEST(PoorWeightInitialization, NothingToCheckNeverFires) {
  TempDir dir;
  TrialBuilder trial(dir.path());
  for (int64_t s = 0; s < 8; ++s) trial.Save(s, Mode::kTrain, {Vector("weights/w", {1, 2, 3})});
  trial.Finish();
  const RuleRun run = RunRule(dir.str(), kRule, {});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(run.report["Details"].empty());
}

TEST(PoorWeightInitialization, InvalidValuesAreConfigErrors) {
  TempDir dir;
  WriteLayers(dir, 5.0f);
  for (const std::string param : {"patience=0", "steps=-1", "threshold=0", "distribution_range=-1", "steps=2.5"}) {
    SCOPED_TRACE(param);
    const RuleRun run = RunRule(dir.str(), kRule, {param});
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_THAT(run.message, HasSubstr(param.substr(0, param.find('='))));
  }
  EXPECT_EQ(RunRule(dir.str(), kRule, {"steps=10.0"}).exit_code, 0);  // "Valid values: Float" in the docs
}

}  // namespace
}  // namespace litmus::testing
