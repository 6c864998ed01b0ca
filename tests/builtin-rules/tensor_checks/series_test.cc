// What the tensor_checks rules watched (ABI 1.3 report_series/report_threshold): each rule's
// series file holds, per tensor and evaluated step, exactly the value the rule compared, its
// threshold(s) and the values at the firing steps; the same in a rule worker (the default) and
// in the runner's process (--isolation none).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "support/series_json.h"
#include "support/temp_dir.h"
#include "tensor_checks_support.h"

namespace litmus::testing {
namespace {

using ::testing::DoubleEq;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

TensorValue Gradient(std::string name, double magnitude) {
  return Values(std::move(name), {magnitude, -magnitude, magnitude, -magnitude}, DType::kFloat64);
}

TEST(TensorChecksSeries, VanishingGradientPublishesMeanAbsGradientAndThreshold) {
  TempDir trial;
  std::vector<StepSpec> steps;
  for (const double g : {1e-3, 2e-3, 5e-4, 1e-9}) {
    steps.push_back({Mode::kTrain, {Gradient("gradient/a", g), Gradient("gradient/b", 2 * g)}});
  }
  steps.push_back({Mode::kEval, {Filled("fc.weight", {2}, 1.0)}});  // no gradient: nothing published
  WriteTrial(trial.path(), steps);
  for (const char* isolation : {"process", "none"}) {
    SCOPED_TRACE(isolation);
    const RuleRun run = RunRule(trial.path(), "VanishingGradient", {}, {"--isolation", isolation});
    ASSERT_EQ(run.exit_code, 1) << run.err;
    EXPECT_EQ(run.series["rule"], "VanishingGradient");
    EXPECT_THAT(SeriesPoints(run.series, "mean |gradient|", "gradient/a"),
                ElementsAre(Pair(0, DoubleEq(1e-3)), Pair(1, DoubleEq(2e-3)), Pair(2, DoubleEq(5e-4)),
                            Pair(3, DoubleEq(1e-9))));
    EXPECT_THAT(SeriesValues(run.series, "mean |gradient|", "gradient/b"),
                ElementsAre(DoubleEq(2e-3), DoubleEq(4e-3), DoubleEq(1e-3), DoubleEq(2e-9)));
    EXPECT_THAT(SeriesThreshold(run.series, "mean |gradient|", "below"), ::testing::Optional(DoubleEq(1e-7)));
    // The firing step's values are kept as published, for every gradient.
    EXPECT_THAT(SeriesFirings(run.series, "mean |gradient|", "gradient/a"), ElementsAre(Pair(3, DoubleEq(1e-9))));
    EXPECT_THAT(SeriesFirings(run.series, "mean |gradient|", "gradient/b"), ElementsAre(Pair(3, DoubleEq(2e-9))));
    const auto& a = *FindSeries(run.series, "mean |gradient|", "gradient/a");
    EXPECT_EQ(a["mode"][0], "TRAIN");
    EXPECT_EQ(a["total_points"], 4);
    EXPECT_FALSE(run.series["recommendations"].empty());
  }
}

// --no-series: the same verdict, and nothing the rule published is kept (no series file), in a
// worker (which then sends nothing) and in the runner's process.
TEST(TensorChecksSeries, NoSeriesKeepsTheVerdictAndDropsWhatTheRulePublished) {
  TempDir trial;
  std::vector<StepSpec> steps;
  for (const double g : {1e-3, 1e-9, 2e-3, 1e-9}) steps.push_back({Mode::kTrain, {Gradient("gradient/a", g)}});
  WriteTrial(trial.path(), steps);
  for (const char* isolation : {"process", "none"}) {
    SCOPED_TRACE(isolation);
    const RuleRun with = RunRule(trial.path(), "VanishingGradient", {}, {"--isolation", isolation, "--keep-going"});
    const RuleRun without =
        RunRule(trial.path(), "VanishingGradient", {}, {"--isolation", isolation, "--keep-going", "--no-series"});
    ASSERT_EQ(with.exit_code, 1) << with.err;
    ASSERT_EQ(without.exit_code, 1) << without.err;
    EXPECT_THAT(with.fired, ElementsAre(1, 3));
    EXPECT_EQ(without.fired, with.fired);
    EXPECT_EQ(with.status["RuleEvaluationStatus"], "IssuesFound");
    EXPECT_EQ(without.status["RuleEvaluationStatus"], "IssuesFound");
    EXPECT_FALSE(with.series.is_null());
    EXPECT_TRUE(without.series.is_null()) << without.series.dump();
  }
}

TEST(TensorChecksSeries, ExplodingTensorPublishesNanAndInfCounts) {
  TempDir trial;
  const double nan = std::nan(""), inf = HUGE_VAL;
  WriteTrial(trial.path(), {{Mode::kTrain, {Values("w", {1, 2, 3}, DType::kFloat64)}},
                            {Mode::kTrain, {Values("w", {nan, inf, nan}, DType::kFloat64)}}});
  const RuleRun run = RunRule(trial.path(), "ExplodingTensor", {"tensor_regex=w"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(SeriesPoints(run.series, "NaN count", "w"), ElementsAre(Pair(0, 0.0), Pair(1, 2.0)));
  EXPECT_THAT(SeriesPoints(run.series, "inf count", "w"), ElementsAre(Pair(0, 0.0), Pair(1, 1.0)));
  EXPECT_THAT(SeriesThreshold(run.series, "NaN count", "above"), ::testing::Optional(0.0));
  EXPECT_THAT(SeriesFirings(run.series, "NaN count", "w"), ElementsAre(Pair(1, 2.0)));
}

TEST(TensorChecksSeries, AllZeroPublishesTheShareOfZerosOrTheAbsMaxItCompared) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Values("w", {0, 1, 0, 2}, DType::kFloat64)}},
                            {Mode::kTrain, {Values("w", {0, 0, 0, 0}, DType::kFloat64)}}});
  const RuleRun pct = RunRule(trial.path(), "AllZero", {"tensor_regex=w", "threshold=75"});
  ASSERT_EQ(pct.exit_code, 1) << pct.err;
  EXPECT_THAT(SeriesPoints(pct.series, "% zero", "w"), ElementsAre(Pair(0, 50.0), Pair(1, 100.0)));
  EXPECT_THAT(SeriesThreshold(pct.series, "% zero", "above"), ::testing::Optional(75.0));
  // At 100 % a float tensor is judged by its max |x| first; the all-zero one is then counted.
  const RuleRun all = RunRule(trial.path(), "AllZero", {"tensor_regex=w"});
  ASSERT_EQ(all.exit_code, 1) << all.err;
  EXPECT_THAT(SeriesPoints(all.series, "max |x|", "w"), ElementsAre(Pair(0, 2.0), Pair(1, 0.0)));
  EXPECT_THAT(SeriesPoints(all.series, "% zero", "w"), ElementsAre(Pair(1, 100.0)));
  EXPECT_THAT(SeriesThreshold(all.series, "max |x|", "below"), ::testing::Optional(0.0));
}

TEST(TensorChecksSeries, TensorVariancePublishesTheVarianceAndBothBounds) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Values("w", {1, 3}, DType::kFloat64)}},    // variance 1
                            {Mode::kTrain, {Values("w", {0, 10}, DType::kFloat64)}}});  // variance 25
  const RuleRun run =
      RunRule(trial.path(), "TensorVariance", {"tensor_regex=w", "max_threshold=10", "min_threshold=0.5"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(SeriesPoints(run.series, "variance", "w"), ElementsAre(Pair(0, 1.0), Pair(1, 25.0)));
  EXPECT_THAT(SeriesThreshold(run.series, "variance", "above"), ::testing::Optional(10.0));
  EXPECT_THAT(SeriesThreshold(run.series, "variance", "below"), ::testing::Optional(0.5));
}

TEST(TensorChecksSeries, WeightUpdateRatioPublishesTheRatio) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Filled("fc.weight", {4}, 1.0, DType::kFloat64)}},
                            {Mode::kTrain, {Filled("fc.weight", {4}, 1.5, DType::kFloat64)}},
                            {Mode::kTrain, {Filled("fc.weight", {4}, 1.5, DType::kFloat64)}}});
  const RuleRun run = RunRule(trial.path(), "WeightUpdateRatio");
  ASSERT_EQ(run.exit_code, 1) << run.err;  // ratio 0 at step 2: below small_threshold
  // ||1.5 - 1|| / (||1|| + 1e-8) over 4 elements: 1 / (2 + 1e-8).
  EXPECT_THAT(SeriesPoints(run.series, "update ratio", "fc.weight"),
              ElementsAre(Pair(1, DoubleNear(0.5, 1e-8)), Pair(2, 0.0)));
  EXPECT_THAT(SeriesThreshold(run.series, "update ratio", "above"), ::testing::Optional(10.0));
  EXPECT_THAT(SeriesThreshold(run.series, "update ratio", "below"), ::testing::Optional(1e-8));
}

TEST(TensorChecksSeries, UnchangedTensorPublishesWhetherTheWindowWasAllClose) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Values("w", {1, 2})}},
                            {Mode::kTrain, {Values("w", {2, 2})}},
                            {Mode::kTrain, {Values("w", {2, 2})}}});
  const RuleRun run = RunRule(trial.path(), "UnchangedTensor", {"tensor_regex=w", "num_steps=2"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(SeriesPoints(run.series, "unchanged over window", "w"), ElementsAre(Pair(1, 0.0), Pair(2, 1.0)));
}

TEST(TensorChecksSeries, SimilarAcrossRunsPublishesTheLargestDifference) {
  TempDir base, other;
  WriteTrial(base.path(), {{Mode::kTrain, {Values("w", {1, 2}, DType::kFloat64)}},
                           {Mode::kTrain, {Values("w", {1, 2}, DType::kFloat64)}}});
  WriteTrial(other.path(), {{Mode::kTrain, {Values("w", {1, 2}, DType::kFloat64)}},
                            {Mode::kTrain, {Values("w", {1, 2.5}, DType::kFloat64)}}});
  const RuleRun run =
      RunRule(base.path(), "SimilarAcrossRuns", {"tensor_regex=w"}, {"--other-trial", other.str()});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(SeriesPoints(run.series, "max |difference|", "w"), ElementsAre(Pair(0, 0.0), Pair(1, 0.5)));
}

TEST(TensorChecksSeries, ThresholdAndRecommendationWithoutPoints) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Filled("fc.weight", {2}, 1.0)}}});
  const RuleRun run = RunRule(trial.path(), "VanishingGradient");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // The threshold and recommendation are known from the start: the file exists without points.
  EXPECT_THAT(run.series["series"], IsEmpty());
  EXPECT_THAT(SeriesThreshold(run.series, "mean |gradient|", "below"), ::testing::Optional(1e-7));
}

}  // namespace
}  // namespace litmus::testing
