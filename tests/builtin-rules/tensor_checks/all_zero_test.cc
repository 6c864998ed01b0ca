// AllZero (docs/rules/AllZero.md) through the real `litmus run`: the first step where a tensor is
// zero, the >= comparison against the percentage threshold, selection, dtypes, bad parameters.
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

TEST(AllZero, FiresAtTheFirstAllZeroStep) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Values("relu_output", {0, 1, 0, 2})}},
                            {Mode::kTrain, {Values("relu_output", {0, 0, 0, 3})}},
                            {Mode::kTrain, {Values("relu_output", {0, 0, 0, 0})}},
                            {Mode::kTrain, {Values("relu_output", {0, 0, 0, 0})}}});
  const RuleRun run = RunRule(trial.path(), "AllZero");
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(2));
  EXPECT_EQ(run.report["Details"]["relu_output"], 100.0);
  EXPECT_EQ(run.report["Violations"], 1);
  EXPECT_EQ(run.report["Datapoints"], 3);
}

TEST(AllZero, MostlyZeroDoesNotFireWithTheDefault) {
  TempDir trial;
  std::vector<double> values(1000, 0.0);
  values[999] = 1e-30;
  WriteTrial(trial.path(), {{Mode::kTrain, {Values("w", values, DType::kFloat64)}}});
  EXPECT_EQ(RunRule(trial.path(), "AllZero").exit_code, 0);
  const RuleRun lower = RunRule(trial.path(), "AllZero", {"threshold=99.9"});
  EXPECT_EQ(lower.exit_code, 1) << lower.err;
  EXPECT_NEAR(lower.report["Details"]["w"].get<double>(), 99.9, 1e-9);
}

TEST(AllZero, ThresholdIsReachedAtEquality) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Values("half", {0, 1, 0, 1})}}});  // exactly 50 %
  EXPECT_THAT(RunRule(trial.path(), "AllZero", {"threshold=50"}).fired, ElementsAre(0));
  EXPECT_THAT(RunRule(trial.path(), "AllZero", {"threshold=50.001"}).fired, IsEmpty());
  EXPECT_THAT(RunRule(trial.path(), "AllZero", {"threshold=0"}).fired, ElementsAre(0));
}

TEST(AllZero, NegativeZeroIsZeroNaNIsNot) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Values("w", {-0.0, 0.0, std::nan("")})}},
                            {Mode::kTrain, {Values("w", {-0.0, 0.0, -0.0})}}});
  EXPECT_THAT(RunRule(trial.path(), "AllZero").fired, ElementsAre(1));
}

TEST(AllZero, EveryNumericDtypeCountsStringsAreSkipped) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Strings("words", {"0", "0"}), Values("ids", {0, 0}, DType::kInt64)}}});
  const RuleRun run = RunRule(trial.path(), "AllZero");
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_TRUE(run.report["Details"].contains("ids"));
  EXPECT_FALSE(run.report["Details"].contains("words"));
  EXPECT_THAT(run.err, HasSubstr("tensor words holds no real numbers; skipped"));
}

TEST(AllZero, Selection) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Values("gradient/w", {0, 0}), Values("fc.weight", {1, 1})}},
                            {Mode::kTrain, {Values("gradient/w", {1, 1}), Values("fc.weight", {0, 0})}}});
  EXPECT_THAT(RunRule(trial.path(), "AllZero", {}, {"--keep-going"}).fired, ElementsAre(0, 1));
  EXPECT_THAT(RunRule(trial.path(), "AllZero", {"collection_names=weights"}).fired, ElementsAre(1));
  EXPECT_THAT(RunRule(trial.path(), "AllZero", {"tensor_regex=^grad"}).fired, ElementsAre(0));
  EXPECT_THAT(RunRule(trial.path(), "AllZero", {"collection_names=losses", "tensor_regex=nothing"}).fired, IsEmpty());
}

TEST(AllZero, ThresholdMustBeAPercentage) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Values("w", {0, 0})}}});
  for (const char* bad : {"threshold=150", "threshold=-1", "threshold=lots"}) {
    const RuleRun run = RunRule(trial.path(), "AllZero", {bad});
    EXPECT_EQ(run.exit_code, 2) << bad;
    EXPECT_THAT(run.err, HasSubstr("threshold: ")) << bad;
  }
}

}  // namespace
}  // namespace litmus::testing
