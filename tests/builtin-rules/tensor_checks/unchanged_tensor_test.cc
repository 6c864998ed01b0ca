// UnchangedTensor (docs/rules/UnchangedTensor.md) through the real `litmus run`: the spec's [TEST] vectors
// with start/end steps, the window of saved steps, num_steps, the tolerances, equal_nan, shapes
// and bad parameters.
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

// [TEST] tensors foo_0..2 = ones at steps 0, 1, 2; boo_0..2 = ones at step 5 only (steps 3 and 4
// are not saved).
void WriteFooBooTrial(const std::filesystem::path& dir) {
  std::vector<StepSpec> steps(6);
  for (int s = 0; s < 3; ++s) {
    for (const char* name : {"foo_0", "foo_1", "foo_2"}) steps[s].tensors.push_back(Filled(name, {3}, 1.0));
  }
  for (const char* name : {"boo_0", "boo_1", "boo_2"}) steps[5].tensors.push_back(Filled(name, {3}, 1.0));
  WriteTrial(dir, steps);
}

TEST(UnchangedTensor, SpecTestVectors) {
  TempDir trial;
  WriteFooBooTrial(trial.path());
  const std::vector<std::string> params = {"tensor_regex=.*"};
  EXPECT_THAT(RunRule(trial.path(), "UnchangedTensor", params, {"--end-step", "2"}).fired, IsEmpty());  // [0, 2)
  const RuleRun to3 = RunRule(trial.path(), "UnchangedTensor", params, {"--end-step", "3"});               // [0, 3)
  ASSERT_EQ(to3.exit_code, 1) << to3.err;
  EXPECT_THAT(to3.fired, ElementsAre(2));
  EXPECT_EQ(to3.report["Details"]["foo_0"], (nlohmann::json{0, 1, 2}));
  EXPECT_EQ(to3.report["Violations"], 3);
  // [2, 3): the history before the start step is used.
  EXPECT_THAT(RunRule(trial.path(), "UnchangedTensor", params, {"--start-step", "2", "--end-step", "3"}).fired,
              ElementsAre(2));
  EXPECT_THAT(RunRule(trial.path(), "UnchangedTensor", params, {"--start-step", "3", "--end-step", "6"}).fired,
              IsEmpty());  // [3, 6)
}

TEST(UnchangedTensor, FiresOnceTheLastNumStepsSavedValuesAgree) {
  TempDir trial;
  std::vector<StepSpec> steps;
  for (const double v : {0.0, 1.0, 2.0, 3.0, 3.0, 3.0, 3.0}) steps.push_back({Mode::kTrain, {Values("w", {v, -v})}});
  WriteTrial(trial.path(), steps);
  EXPECT_THAT(RunRule(trial.path(), "UnchangedTensor").fired, ElementsAre(5));  // steps 3, 4, 5
  EXPECT_THAT(RunRule(trial.path(), "UnchangedTensor", {"num_steps=2"}).fired, ElementsAre(4));
  EXPECT_THAT(RunRule(trial.path(), "UnchangedTensor", {"num_steps=4"}).fired, ElementsAre(6));
  EXPECT_THAT(RunRule(trial.path(), "UnchangedTensor", {"num_steps=5"}).fired, IsEmpty());
  EXPECT_THAT(RunRule(trial.path(), "UnchangedTensor", {"num_steps=2"}, {"--keep-going"}).fired, ElementsAre(4, 5, 6));
}

TEST(UnchangedTensor, TheWindowIsOverSavedStepsNotIntegers) {
  TempDir trial;
  // w is saved at steps 0, 2, 4 only (another tensor keeps steps 1 and 3 in the trial).
  std::vector<StepSpec> steps;
  for (int s = 0; s < 5; ++s) {
    StepSpec step{Mode::kTrain, {Values("other", {static_cast<double>(s)})}};
    if (s % 2 == 0) step.tensors.push_back(Values("w", {7.0}));
    steps.push_back(step);
  }
  WriteTrial(trial.path(), steps);
  const RuleRun run = RunRule(trial.path(), "UnchangedTensor", {"tensor_regex=^w$"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(4));
  EXPECT_EQ(run.report["Details"]["w"], (nlohmann::json{0, 2, 4}));
}

TEST(UnchangedTensor, Tolerances) {
  TempDir trial;
  // Relative changes of 1e-6 (within the default rtol 1e-5).
  WriteTrial(trial.path(), {{Mode::kTrain, {Values("w", {1.0}, DType::kFloat64)}},
                            {Mode::kTrain, {Values("w", {1.000001}, DType::kFloat64)}},
                            {Mode::kTrain, {Values("w", {1.000002}, DType::kFloat64)}}});
  EXPECT_THAT(RunRule(trial.path(), "UnchangedTensor").fired, ElementsAre(2));
  EXPECT_THAT(RunRule(trial.path(), "UnchangedTensor", {"rtol=1e-7"}).fired, IsEmpty());
  EXPECT_THAT(RunRule(trial.path(), "UnchangedTensor", {"rtol=0", "atol=1e-5"}).fired, ElementsAre(2));
  EXPECT_THAT(RunRule(trial.path(), "UnchangedTensor", {"rtol=0", "atol=1e-7"}).fired, IsEmpty());

  TempDir tiny;
  // Absolute changes of 1e-9 around 0 (within the default atol 1e-8).
  WriteTrial(tiny.path(), {{Mode::kTrain, {Values("w", {0.0}, DType::kFloat64)}},
                           {Mode::kTrain, {Values("w", {1e-9}, DType::kFloat64)}},
                           {Mode::kTrain, {Values("w", {0.0}, DType::kFloat64)}}});
  EXPECT_THAT(RunRule(tiny.path(), "UnchangedTensor").fired, ElementsAre(2));
  EXPECT_THAT(RunRule(tiny.path(), "UnchangedTensor", {"atol=0"}).fired, IsEmpty());
}

TEST(UnchangedTensor, EqualNan) {
  TempDir trial;
  std::vector<StepSpec> steps(3, StepSpec{Mode::kTrain, {Values("w", {std::nan(""), 1.0})}});
  WriteTrial(trial.path(), steps);
  EXPECT_THAT(RunRule(trial.path(), "UnchangedTensor").fired, IsEmpty());
  EXPECT_THAT(RunRule(trial.path(), "UnchangedTensor", {"equal_nan=True"}).fired, ElementsAre(2));
}

TEST(UnchangedTensor, AShapeChangeIsAChange) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Filled("w", {2, 2}, 1.0)}},
                            {Mode::kTrain, {Filled("w", {4}, 1.0)}},
                            {Mode::kTrain, {Filled("w", {4}, 1.0)}},
                            {Mode::kTrain, {Filled("w", {4}, 1.0)}}});
  EXPECT_THAT(RunRule(trial.path(), "UnchangedTensor").fired, ElementsAre(3));
}

TEST(UnchangedTensor, StringTensorsCompareExactly) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Strings("s", {"a"})}},
                            {Mode::kTrain, {Strings("s", {"b"})}},
                            {Mode::kTrain, {Strings("s", {"b"})}},
                            {Mode::kTrain, {Strings("s", {"b"})}}});
  EXPECT_THAT(RunRule(trial.path(), "UnchangedTensor").fired, ElementsAre(3));
}

TEST(UnchangedTensor, Selection) {
  TempDir trial;
  // fc.weight (collection weights) is constant; gradient/fc.weight is constant from step 1 on.
  std::vector<StepSpec> steps;
  for (const double g : {1.0, 2.0, 2.0, 2.0}) {
    steps.push_back({Mode::kTrain, {Values("fc.weight", {1.0}), Values("gradient/fc.weight", {g})}});
  }
  WriteTrial(trial.path(), steps);
  const RuleRun weights = RunRule(trial.path(), "UnchangedTensor", {"collection_names=weights"});
  EXPECT_THAT(weights.fired, ElementsAre(2));
  EXPECT_FALSE(weights.report["Details"].contains("gradient/fc.weight"));
  const RuleRun gradients = RunRule(trial.path(), "UnchangedTensor", {"tensor_regex=^gradient/"});
  EXPECT_THAT(gradients.fired, ElementsAre(3));
  EXPECT_FALSE(gradients.report["Details"].contains("fc.weight"));
  // Neither given: every tensor, so the weight fires first.
  EXPECT_THAT(RunRule(trial.path(), "UnchangedTensor").fired, ElementsAre(2));
}

TEST(UnchangedTensor, BadParametersAreClientErrors) {
  TempDir trial;
  WriteFooBooTrial(trial.path());
  for (const char* bad : {"num_steps=1", "num_steps=2.5", "rtol=-1", "atol=x", "equal_nan=1"}) {
    const RuleRun run = RunRule(trial.path(), "UnchangedTensor", {bad});
    EXPECT_EQ(run.exit_code, 2) << bad;
    EXPECT_THAT(run.err, HasSubstr(std::string(bad).substr(0, std::string(bad).find('=')) + ": ")) << bad;
  }
}

}  // namespace
}  // namespace litmus::testing
