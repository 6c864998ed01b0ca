// VanishingGradient (docs/rules/VanishingGradient.md) through the real `litmus run`: the first step where a
// gradient's mean |g| is strictly below threshold, every gradient checked, EVAL steps without
// gradients, saved reductions, and bad parameters.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "support/temp_dir.h"
#include "tensor_checks_support.h"

namespace litmus::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Gradient values of mean |g| = `magnitude` (alternating signs).
TensorValue Gradient(std::string name, double magnitude) {
  return Values(std::move(name), {magnitude, -magnitude, magnitude, -magnitude});
}

TEST(VanishingGradient, FiresAtTheFirstStepBelowThreshold) {
  TempDir trial;
  std::vector<StepSpec> steps;
  for (const double g : {1e-3, 1e-3, 1e-3, 1e-9, 1e-9}) {
    steps.push_back({Mode::kTrain, {Gradient("gradient/fc.weight", g), Filled("fc.weight", {4}, 0.0)}});
  }
  WriteTrial(trial.path(), steps);
  const RuleRun run = RunRule(trial.path(), "VanishingGradient");
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(3));
  EXPECT_EQ(run.report["RuleTriggered"], 1);
  EXPECT_EQ(run.report["Violations"], 1);
  EXPECT_EQ(run.report["Datapoints"], 4);
  EXPECT_NEAR(run.report["Details"]["gradient/fc.weight"].get<double>(), 1e-9, 1e-15);
  EXPECT_EQ(run.report["Details"]["threshold"], 1e-7);
  EXPECT_EQ(run.report["RuleParameters"], "threshold:0.0000001\n");
  EXPECT_FALSE(run.report["Details"].contains("fc.weight")) << "only the gradients collection is read";
  EXPECT_THAT(run.err, HasSubstr("step 3: mean |gradient| below threshold"));
}

TEST(VanishingGradient, HealthyGradientsDoNotFire) {
  TempDir trial;
  std::vector<StepSpec> steps;
  for (int i = 0; i < 4; ++i) {
    // An all-zero weight is not a gradient: it does not matter to this rule.
    steps.push_back({Mode::kTrain, {Gradient("gradient/fc.weight", 1e-3), Filled("fc.weight", {4}, 0.0)}});
  }
  WriteTrial(trial.path(), steps);
  const RuleRun run = RunRule(trial.path(), "VanishingGradient");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.fired, IsEmpty());
  EXPECT_EQ(run.status["RuleEvaluationStatus"], "NoIssuesFound");
  EXPECT_EQ(run.report["Datapoints"], 4);
}

TEST(VanishingGradient, ComparisonIsStrict) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Gradient("gradient/w", 0.5)}}});  // exactly 0.5 in float32
  EXPECT_EQ(RunRule(trial.path(), "VanishingGradient", {"threshold=0.5"}).exit_code, 0);
  const RuleRun above = RunRule(trial.path(), "VanishingGradient", {"threshold=0.5000001"});
  EXPECT_EQ(above.exit_code, 1) << above.err;
  EXPECT_THAT(above.fired, ElementsAre(0));
}

TEST(VanishingGradient, ThresholdParameter) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Gradient("gradient/w", 1e-3)}},
                            {Mode::kTrain, {Gradient("gradient/w", 1e-5)}}});
  EXPECT_EQ(RunRule(trial.path(), "VanishingGradient").exit_code, 0);
  EXPECT_THAT(RunRule(trial.path(), "VanishingGradient", {"threshold=1e-4"}).fired, ElementsAre(1));
  EXPECT_THAT(RunRule(trial.path(), "VanishingGradient", {"threshold=1e-2"}).fired, ElementsAre(0));
}

TEST(VanishingGradient, EveryGradientIsChecked) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain,
                             {Gradient("gradient/a", 1.0), Gradient("gradient/b", 1e-3),
                              Gradient("gradient/c", 1e-12)}}});
  const RuleRun run = RunRule(trial.path(), "VanishingGradient");
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_FALSE(run.report["Details"].contains("gradient/a"));
  EXPECT_FALSE(run.report["Details"].contains("gradient/b"));
  EXPECT_TRUE(run.report["Details"].contains("gradient/c"));
  EXPECT_EQ(run.report["Violations"], 1);
}

TEST(VanishingGradient, EvalStepsWithoutGradientsAreNotMet) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Gradient("gradient/w", 1e-3), Filled("MSELoss_output_0", {}, 1.0)}},
                            {Mode::kEval, {Filled("MSELoss_output_0", {}, 1.0)}},
                            {Mode::kTrain, {Gradient("gradient/w", 1e-3), Filled("MSELoss_output_0", {}, 1.0)}},
                            {Mode::kTrain, {Gradient("gradient/w", 0.0), Filled("MSELoss_output_0", {}, 1.0)}}});
  const RuleRun run = RunRule(trial.path(), "VanishingGradient", {}, {"--keep-going"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(3));
  EXPECT_EQ(run.report["Datapoints"], 4);  // the EVAL step is evaluated: no gradient, not met
}

TEST(VanishingGradient, NaNGradientsDoNotVanish) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Values("gradient/w", {std::nan(""), 0.0})}},
                            {Mode::kTrain, {Values("gradient/w", {1.0, -1.0})}}});
  const RuleRun run = RunRule(trial.path(), "VanishingGradient");
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

TEST(VanishingGradient, UsesTheSavedAbsMeanWhenOnlyReductionsWereSaved) {
  TempDir trial;
  std::vector<writer::CollectionConfig> collections = {
      ReductionsOnly("gradients", "^gradient", {}, {layout::Reduction::kMean})};
  WriteTrial(trial.path(),
             {{Mode::kTrain, {Gradient("gradient/w", 1e-3)}}, {Mode::kTrain, {Gradient("gradient/w", 1e-8)}}},
             collections);
  const RuleRun run = RunRule(trial.path(), "VanishingGradient");
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(1));
  EXPECT_EQ(run.report["Datapoints"], 2);
}

TEST(VanishingGradient, AGradientWithoutValueOrItsReductionSkipsTheStep) {
  TempDir trial;
  // Only the max is saved: mean |g| is neither stored nor computable, so the step is skipped.
  std::vector<writer::CollectionConfig> collections = {
      ReductionsOnly("gradients", "^gradient", {layout::Reduction::kMax}, {})};
  WriteTrial(trial.path(), {{Mode::kTrain, {Gradient("gradient/w", 1e-9)}}}, collections);
  const RuleRun run = RunRule(trial.path(), "VanishingGradient");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.report["Datapoints"], 0);
}

TEST(VanishingGradient, BadThresholdIsAClientError) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Gradient("gradient/w", 1e-3)}}});
  for (const char* bad : {"threshold=abc", "threshold=nan"}) {
    const RuleRun run = RunRule(trial.path(), "VanishingGradient", {bad});
    EXPECT_EQ(run.exit_code, 2) << bad;
    EXPECT_THAT(run.err, HasSubstr("threshold: ")) << bad;
  }
}

}  // namespace
}  // namespace litmus::testing
