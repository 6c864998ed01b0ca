// TensorVariance (docs/rules/TensorVariance.md) through the real `litmus run`: population variance
// against max_threshold / min_threshold (strict), neither set, saved reductions, bad parameters.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/temp_dir.h"
#include "tensor_checks_support.h"

namespace litmus::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Values {-a, a}: population variance a^2.
TensorValue Spread(std::string name, double a) { return Values(std::move(name), {-a, a}); }

void WriteGrowingTrial(const std::filesystem::path& dir) {
  // Variances 1, 4, 16, 64 at steps 0..3.
  WriteTrial(dir, {{Mode::kTrain, {Spread("act", 1)}},
                   {Mode::kTrain, {Spread("act", 2)}},
                   {Mode::kTrain, {Spread("act", 4)}},
                   {Mode::kTrain, {Spread("act", 8)}}});
}

TEST(TensorVariance, MaxThresholdFiresAtTheFirstStepAbove) {
  TempDir trial;
  WriteGrowingTrial(trial.path());
  const RuleRun run = RunRule(trial.path(), "TensorVariance", {"max_threshold=10"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(2));
  EXPECT_EQ(run.report["Details"]["act"], 16.0);
  // Strictly above: 16 is not above 16.
  EXPECT_THAT(RunRule(trial.path(), "TensorVariance", {"max_threshold=16"}).fired, ElementsAre(3));
}

TEST(TensorVariance, MinThresholdFiresBelow) {
  TempDir trial;
  WriteGrowingTrial(trial.path());
  EXPECT_THAT(RunRule(trial.path(), "TensorVariance", {"min_threshold=2"}).fired, ElementsAre(0));
  EXPECT_THAT(RunRule(trial.path(), "TensorVariance", {"min_threshold=1"}).fired, IsEmpty());
  EXPECT_THAT(RunRule(trial.path(), "TensorVariance", {"min_threshold=0.5", "max_threshold=50"}).fired,
              ElementsAre(3));
}

TEST(TensorVariance, VarianceIsThePopulationOne) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Values("x", {0, 2})}}});  // ddof 0: 1; ddof 1 would be 2
  EXPECT_THAT(RunRule(trial.path(), "TensorVariance", {"max_threshold=1.5"}).fired, IsEmpty());
  EXPECT_THAT(RunRule(trial.path(), "TensorVariance", {"max_threshold=0.999"}).fired, ElementsAre(0));
}

TEST(TensorVariance, WithoutBoundsItNeverFiresAndSaysSo) {
  TempDir trial;
  WriteGrowingTrial(trial.path());
  const RuleRun run = RunRule(trial.path(), "TensorVariance");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("neither max_threshold nor min_threshold is set: this rule can never fire"));
  EXPECT_EQ(RunRule(trial.path(), "TensorVariance", {"max_threshold=None", "min_threshold="}).exit_code, 0);
}

TEST(TensorVariance, Selection) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Spread("gradient/w", 10), Spread("fc.weight", 1)}}});
  EXPECT_TRUE(RunRule(trial.path(), "TensorVariance", {"max_threshold=10"}).report["Details"].contains("gradient/w"));
  EXPECT_THAT(RunRule(trial.path(), "TensorVariance", {"max_threshold=10", "collection_names=weights"}).fired,
              IsEmpty());
  EXPECT_THAT(RunRule(trial.path(), "TensorVariance", {"max_threshold=10", "tensor_regex=^gradient"}).fired,
              ElementsAre(0));
}

TEST(TensorVariance, UsesASavedVarianceReduction) {
  TempDir trial;
  // The only collection: act is saved as its variance, without its value.
  std::vector<writer::CollectionConfig> collections = {ReductionsOnly("acts", "^act", {layout::Reduction::kVariance}, {})};
  WriteTrial(trial.path(), {{Mode::kTrain, {Spread("act", 1)}}, {Mode::kTrain, {Spread("act", 3)}}}, collections);
  const RuleRun run = RunRule(trial.path(), "TensorVariance", {"max_threshold=5"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(1));
  EXPECT_EQ(run.report["Details"]["act"], 9.0);
}

TEST(TensorVariance, StringTensorsAreSkipped) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Strings("words", {"a", "b"}), Spread("x", 3)}}});
  const RuleRun run = RunRule(trial.path(), "TensorVariance", {"max_threshold=1"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_FALSE(run.report["Details"].contains("words"));
  EXPECT_THAT(run.err, HasSubstr("tensor words: variance undefined"));
}

TEST(TensorVariance, BadParametersAreClientErrors) {
  TempDir trial;
  WriteGrowingTrial(trial.path());
  const RuleRun text = RunRule(trial.path(), "TensorVariance", {"max_threshold=xxx"});
  EXPECT_EQ(text.exit_code, 2);
  EXPECT_THAT(text.err, HasSubstr("max_threshold: expected a number, got 'xxx'"));
  const RuleRun crossed = RunRule(trial.path(), "TensorVariance", {"max_threshold=1", "min_threshold=2"});
  EXPECT_EQ(crossed.exit_code, 2);
  EXPECT_THAT(crossed.err, HasSubstr("min_threshold: must not exceed max_threshold"));
}

}  // namespace
}  // namespace litmus::testing
