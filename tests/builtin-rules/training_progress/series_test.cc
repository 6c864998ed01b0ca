// What the training_progress rules watched (ABI 1.3 report_series/report_threshold): the series
// file of each rule holds exactly the values it compared (losses, changes, ratios, counters) at
// the global steps it compared them, and its thresholds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "progress_test_support.h"
#include "support/series_json.h"
#include "support/temp_dir.h"

namespace litmus::testing {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Optional;
using ::testing::Pair;

TEST(TrainingProgressSeries, LossNotDecreasingPublishesTheLossAndItsChange) {
  TempDir dir;
  {
    TrialBuilder trial(dir.path());
    // num_steps=2: step 2 compares with 0 (10 -> 9: a decrease of 10 %), step 4 with 2 (9 -> 9.9: +10 %).
    const float losses[] = {10, 10, 9, 9, 9.9f};
    for (int64_t s = 0; s < 5; ++s) trial.Save(s, Mode::kTrain, {Scalar("loss", losses[s])});
    trial.Finish();
  }
  const RuleRun run = RunRule(dir.str(), "LossNotDecreasing", {"num_steps=2", "mode=TRAIN"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(SeriesPoints(run.series, "loss", "loss"), ElementsAre(Pair(2, 9.0), Pair(4, DoubleNear(9.9, 1e-6))));
  EXPECT_THAT(SeriesPoints(run.series, "decrease %", "loss"), ElementsAre(Pair(2, DoubleNear(10, 1e-9))));
  EXPECT_THAT(SeriesPoints(run.series, "increase %", "loss"), ElementsAre(Pair(4, DoubleNear(10, 1e-4))));
  EXPECT_THAT(SeriesThreshold(run.series, "decrease %", "below"), Optional(0.1));
  EXPECT_THAT(SeriesThreshold(run.series, "increase %", "above"), Optional(5.0));
  EXPECT_THAT(SeriesFirings(run.series, "increase %", "loss"), ElementsAre(Pair(4, DoubleNear(10, 1e-4))));
}

TEST(TrainingProgressSeries, OverfitPublishesTheRatioAndTheMeans) {
  TempDir dir;
  {
    TrialBuilder trial(dir.path());
    for (int64_t s = 0; s < 3; ++s) trial.Save(s, Mode::kTrain, {Scalar("loss", 1.0f)});
    trial.Save(3, Mode::kEval, {Scalar("loss", 1.05f)});  // ratio 0.05
    trial.Save(4, Mode::kEval, {Scalar("loss", 1.55f)});  // mean 1.3: ratio 0.3
    trial.Finish();
  }
  const RuleRun run = RunRule(dir.str(), "Overfit", {});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(SeriesPoints(run.series, "ratio"), ElementsAre(Pair(3, DoubleNear(0.05, 1e-6)), Pair(4, DoubleNear(0.3, 1e-6))));
  EXPECT_THAT(SeriesValues(run.series, "mean training loss"), ElementsAre(1.0, 1.0));
  EXPECT_THAT(SeriesValues(run.series, "mean validation loss"),
              ElementsAre(DoubleNear(1.05, 1e-6), DoubleNear(1.3, 1e-6)));
  EXPECT_THAT(SeriesValues(run.series, "consecutive"), ElementsAre(0.0, 1.0));
  EXPECT_THAT(SeriesThreshold(run.series, "ratio", "above"), Optional(DoubleNear(0.1, 1e-12)));
  EXPECT_THAT(SeriesThreshold(run.series, "consecutive", "above"), Optional(1.0));
  const auto* ratio = FindSeries(run.series, "ratio", "");
  ASSERT_NE(ratio, nullptr);
  EXPECT_EQ((*ratio)["mode"][0], "EVAL");
}

TEST(TrainingProgressSeries, OvertrainingPublishesLossesAndStepsSinceBest) {
  TempDir dir;
  {
    TrialBuilder trial(dir.path());
    const float losses[] = {1.0f, 0.5f, 0.5f, 0.5f};
    for (int64_t s = 0; s < 4; ++s) trial.Save(s, Mode::kTrain, {Scalar("loss", losses[s])});
    trial.Finish();
  }
  const RuleRun run = RunRule(dir.str(), "Overtraining", {"patience_train=2"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(SeriesValues(run.series, "training loss"), ElementsAre(1.0, 0.5, 0.5, 0.5));
  EXPECT_THAT(SeriesPoints(run.series, "steps since best training loss"),
              ElementsAre(Pair(0, 0.0), Pair(1, 0.0), Pair(2, 1.0), Pair(3, 2.0)));
  EXPECT_THAT(SeriesThreshold(run.series, "steps since best training loss", "above"), Optional(2.0));
}

TEST(TrainingProgressSeries, PoorWeightInitializationPublishesTheVarianceRatio) {
  TempDir dir;
  {
    TrialBuilder trial(dir.path());
    // Variances 1 and 100: ratio 100 > 10.
    trial.Save(0, Mode::kTrain, {Vector("a/relu_input", {-1, 1}), Vector("b/relu_input", {-10, 10})});
    trial.Finish();
  }
  const RuleRun run = RunRule(dir.str(), "PoorWeightInitialization", {});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(SeriesPoints(run.series, "activation input variance ratio"), ElementsAre(Pair(0, DoubleNear(100, 1e-9))));
  EXPECT_THAT(SeriesThreshold(run.series, "activation input variance ratio", "above"), Optional(10.0));
  EXPECT_THAT(SeriesThreshold(run.series, "min gradient spread (p95 - p5)", "below"), Optional(0.001));
}

TEST(TrainingProgressSeries, StalledTrainingRulePublishesTheSecondsWithoutProgress) {
  TempDir dir;
  {
    TrialBuilder trial(dir.path());
    trial.Save(0, Mode::kTrain, {Scalar("loss", 1.0f)});
    trial.Finish(/*ended=*/false);
  }
  const RuleRun run = RunRule(dir.str(), "StalledTrainingRule", {"threshold=0"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  const auto firings = SeriesFirings(run.series, "seconds since progress");
  ASSERT_EQ(firings.size(), 1u);
  EXPECT_EQ(firings[0].first, 0);
  EXPECT_GT(firings[0].second, 0.0);  // what it compared with the threshold, 0
  EXPECT_THAT(SeriesThreshold(run.series, "seconds since progress", "above"), Optional(0.0));
}

}  // namespace
}  // namespace litmus::testing
