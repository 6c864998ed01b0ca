// WeightUpdateRatio (docs/rules/WeightUpdateRatio.md) through the real `litmus run`: too small and too large
// updates, TRAIN steps only when the trial has them, the num_steps window, epsilon, the
// thresholds, and bad parameters.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/temp_dir.h"
#include "tensor_checks_support.h"

namespace litmus::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A weight (collection `weights`) whose every element is `value`.
TensorValue Weight(double value) { return Filled("fc.weight", {8}, value); }

std::vector<StepSpec> TrainSteps(const std::vector<double>& values) {
  std::vector<StepSpec> steps;
  for (const double v : values) steps.push_back({Mode::kTrain, {Weight(v)}});
  return steps;
}

TEST(WeightUpdateRatio, AFrozenWeightFires) {
  TempDir trial;
  // Ratios 0.01, 0.0099.., then 0 (frozen between steps 2 and 3).
  WriteTrial(trial.path(), TrainSteps({1.0, 1.01, 1.02, 1.02, 1.03}));
  const RuleRun run = RunRule(trial.path(), "WeightUpdateRatio");
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(3));
  EXPECT_EQ(run.report["Details"]["fc.weight"], (nlohmann::json{{"ratio", 0.0}, {"prev_step", 2}}));
  EXPECT_EQ(run.report["Datapoints"], 4);  // step 0 has nothing to compare with
}

TEST(WeightUpdateRatio, AHugeUpdateFires) {
  TempDir trial;
  WriteTrial(trial.path(), TrainSteps({1.0, 1.5, 30.0}));  // ratios 0.5, 19
  const RuleRun run = RunRule(trial.path(), "WeightUpdateRatio");
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(2));
  EXPECT_NEAR(run.report["Details"]["fc.weight"]["ratio"].get<double>(), 19.0, 1e-6);
  EXPECT_THAT(RunRule(trial.path(), "WeightUpdateRatio", {"large_threshold=20"}).fired, IsEmpty());
  EXPECT_THAT(RunRule(trial.path(), "WeightUpdateRatio", {"large_threshold=0.4"}).fired, ElementsAre(1));
}

TEST(WeightUpdateRatio, SmallThresholdParameter) {
  TempDir trial;
  WriteTrial(trial.path(), TrainSteps({1.0, 1.001, 1.002}));  // ratios ~1e-3
  EXPECT_THAT(RunRule(trial.path(), "WeightUpdateRatio").fired, IsEmpty());
  EXPECT_THAT(RunRule(trial.path(), "WeightUpdateRatio", {"small_threshold=0.01"}).fired, ElementsAre(1));
}

TEST(WeightUpdateRatio, OnlyWeightsAreRead) {
  TempDir trial;
  std::vector<StepSpec> steps;
  for (const double v : {1.0, 1.1, 1.2}) {
    steps.push_back({Mode::kTrain, {Weight(v), Filled("gradient/fc.weight", {8}, 5.0), Filled("fc.bias", {2}, 5.0)}});
  }
  WriteTrial(trial.path(), steps);
  EXPECT_THAT(RunRule(trial.path(), "WeightUpdateRatio").fired, IsEmpty());
}

TEST(WeightUpdateRatio, OnlyTrainStepsWhenTheTrialHasThem) {
  TempDir trial;
  // The EVAL step repeats the weights of the TRAIN step before it: compared, that would be a frozen
  // update. TRAIN step 3 is compared with TRAIN step 1 (its previous TRAIN step).
  WriteTrial(trial.path(), {{Mode::kTrain, {Weight(1.0)}},
                            {Mode::kTrain, {Weight(1.1)}},
                            {Mode::kEval, {Weight(1.1)}},
                            {Mode::kTrain, {Weight(1.2)}},
                            {Mode::kTrain, {Weight(1.2)}}});
  const RuleRun run = RunRule(trial.path(), "WeightUpdateRatio", {}, {"--keep-going"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(4));
  EXPECT_EQ(run.report["Details"]["fc.weight"]["prev_step"], 3);

  TempDir global;
  // Without TRAIN steps every step counts.
  WriteTrial(global.path(), {{Mode::kGlobal, {Weight(1.0)}}, {Mode::kGlobal, {Weight(1.0)}}});
  EXPECT_THAT(RunRule(global.path(), "WeightUpdateRatio").fired, ElementsAre(1));
}

TEST(WeightUpdateRatio, NumStepsComparesWithTheEarliestStepOfTheWindow) {
  TempDir trial;
  // Consecutive ratios are 1 and 0.5 (no firing); two steps apart the weight is back: ratio 0.
  WriteTrial(trial.path(), TrainSteps({1.0, 2.0, 1.0, 2.0}));
  EXPECT_THAT(RunRule(trial.path(), "WeightUpdateRatio").fired, IsEmpty());
  const RuleRun run = RunRule(trial.path(), "WeightUpdateRatio", {"num_steps=2"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(2));
  EXPECT_EQ(run.report["Details"]["fc.weight"]["prev_step"], 0);
  // At step 1 the window [-1, 1) holds step 0 only: compared with it (ratio 1, no firing).
  EXPECT_EQ(run.report["Datapoints"], 3);

  TempDir sparse;
  // Saved every other step; num_steps 1 finds no earlier step within the window: never compared.
  WriteTrial(sparse.path(), {{Mode::kTrain, {Weight(1.0)}}, {}, {Mode::kTrain, {Weight(1.0)}}});
  EXPECT_THAT(RunRule(sparse.path(), "WeightUpdateRatio").fired, ElementsAre(2));
  EXPECT_THAT(RunRule(sparse.path(), "WeightUpdateRatio", {"num_steps=1"}).fired, IsEmpty());
}

TEST(WeightUpdateRatio, Epsilon) {
  TempDir trial;
  // From all zeros to 1e-9: ratio = ||w_s|| / epsilon.
  WriteTrial(trial.path(), {{Mode::kTrain, {Filled("fc.weight", {1}, 0.0, DType::kFloat64)}},
                            {Mode::kTrain, {Filled("fc.weight", {1}, 1e-9, DType::kFloat64)}}});
  EXPECT_THAT(RunRule(trial.path(), "WeightUpdateRatio").fired, IsEmpty());  // ratio 1
  EXPECT_THAT(RunRule(trial.path(), "WeightUpdateRatio", {"epsilon=1e-12"}).fired, ElementsAre(1));  // 1000
}

TEST(WeightUpdateRatio, BadParametersAreClientErrors) {
  TempDir trial;
  WriteTrial(trial.path(), TrainSteps({1.0, 1.1}));
  for (const char* bad : {"num_steps=0", "epsilon=-1", "large_threshold=big", "small_threshold=inf"}) {
    const RuleRun run = RunRule(trial.path(), "WeightUpdateRatio", {bad});
    EXPECT_EQ(run.exit_code, 2) << bad;
    EXPECT_THAT(run.err, HasSubstr(std::string(bad).substr(0, std::string(bad).find('=')) + ": ")) << bad;
  }
}

}  // namespace
}  // namespace litmus::testing
