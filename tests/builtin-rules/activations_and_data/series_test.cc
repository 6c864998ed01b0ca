// What the activations_and_data rules watched (ABI 1.3 report_series/report_threshold): each rule's
// series file holds, at each evaluated step, exactly the value the rule compared (per layer or of
// the rule itself), the thresholds of its parameters, the values at the firing steps and a
// recommendation; DeadRelu also in the runner's process (--isolation none).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rule_test_support.h"
#include "support/series_json.h"

namespace litmus::testing {
namespace {

using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;
using ::testing::Pair;

// A batch x units layer whose unit u takes `inside` for the first active[u] samples and `outside`
// for the rest.
TensorData Layer(const std::string& name, int64_t batch, const std::vector<int64_t>& active, double inside,
                 double outside) {
  TensorData t{name, {batch, static_cast<int64_t>(active.size())}, {}, DType::kFloat32};
  for (int64_t b = 0; b < batch; ++b) {
    for (const int64_t a : active) t.values.push_back(b < a ? inside : outside);
  }
  return t;
}

TensorData Vector(const std::string& name, std::vector<double> values) {
  const auto size = static_cast<int64_t>(values.size());
  return {name, {size}, std::move(values), DType::kInt64};
}

// `counts[c]` samples of class c, in class order.
std::vector<double> Classes(const std::vector<int>& counts) {
  std::vector<double> out;
  for (size_t c = 0; c < counts.size(); ++c) out.insert(out.end(), counts[c], static_cast<double>(c));
  return out;
}

class ActivationsAndDataSeries : public ::testing::Test {
 protected:
  std::filesystem::path Write(const std::vector<StepData>& steps) {
    const auto path = dir_.path() / ("trial" + std::to_string(trials_++));
    WriteTrial(path, steps);
    return path;
  }
  TempDir dir_;
  int trials_ = 0;
};

TEST_F(ActivationsAndDataSeries, DeadReluPublishesTheShareOfDeadUnitsPerLayer) {
  constexpr char kA[] = "dense0_relu_output";
  constexpr char kB[] = "dense1_relu_output";
  // ReLU layers (active when > 0); a unit is dead when active for < 1 % of the batch (0 of 8).
  auto relu = [](const std::string& name, int64_t batch, const std::vector<int64_t>& active) {
    return Layer(name, batch, active, 0.5, -1.0);
  };
  const auto trial = Write({
      {relu(kA, 8, std::vector<int64_t>(10, 4)), relu(kB, 4, {2, 2, 2, 2})},  // 0 %, 0 %
      {relu(kA, 8, {0, 0, 0, 0, 8, 8, 8, 8, 8, 8}), relu(kB, 4, {2, 2, 2, 2})},  // 40 %, 0 %
      {relu(kA, 8, {0, 0, 0, 0, 0, 0, 8, 8, 8, 8}), relu(kB, 4, {4, 4, 4, 0})},  // 60 % fires, 25 %
      {Filled(kA, {8, 10}, -1.0), relu(kB, 4, {4, 0, 0, 0})},                    // 100 %, 75 % fire
  });
  for (const char* isolation : {"process", "none"}) {
    SCOPED_TRACE(isolation);
    const RuleRun run = RunRule(trial, "DeadRelu", {"threshold_layer=55"}, {"--keep-going", "--isolation", isolation});
    ASSERT_EQ(run.exit_code, 1) << run.err;
    EXPECT_EQ(run.fired, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(run.series["rule"], "DeadRelu");
    EXPECT_THAT(SeriesPoints(run.series, "% dead units", kA),
                ElementsAre(Pair(0, 0.0), Pair(1, 40.0), Pair(2, 60.0), Pair(3, 100.0)));
    EXPECT_THAT(SeriesPoints(run.series, "% dead units", kB),
                ElementsAre(Pair(0, 0.0), Pair(1, 0.0), Pair(2, 25.0), Pair(3, 75.0)));
    EXPECT_THAT(SeriesThreshold(run.series, "% dead units", "above"), Optional(55.0));
    // Every layer's value at a firing step is kept, the quiet layer's too.
    EXPECT_THAT(SeriesFirings(run.series, "% dead units", kA), ElementsAre(Pair(2, 60.0), Pair(3, 100.0)));
    EXPECT_THAT(SeriesFirings(run.series, "% dead units", kB), ElementsAre(Pair(2, 25.0), Pair(3, 75.0)));
    const nlohmann::json* a = FindSeries(run.series, "% dead units", kA);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ((*a)["mode"][0], "TRAIN");
    EXPECT_EQ((*a)["total_points"], 4);
    EXPECT_FALSE(run.series["recommendations"].empty());
  }
}

TEST_F(ActivationsAndDataSeries, SaturatedActivationPublishesTheShareOfSaturatedUnitsPerLayer) {
  constexpr char kTanh[] = "layer0_tanh_input";
  constexpr char kSigmoid[] = "layer1_sigmoid_input";
  // 16 x 8 layers: a unit is saturated when inside the active range for < 1 % of the batch (0 of
  // 16). 20 is outside tanh's range, -20 inside sigmoid's, 18 outside it.
  const auto trial = Write({
      {Layer(kTanh, 16, std::vector<int64_t>(8, 8), 0.5, -0.5), Filled(kSigmoid, {16, 8}, -20.0)},  // 0, 0
      {Layer(kTanh, 16, {0, 0, 16, 16, 16, 16, 16, 16}, 0.5, 20.0),
       Layer(kSigmoid, 16, {0, 0, 0, 16, 16, 16, 16, 16}, 0.5, 18.0)},  // 25 %, 37.5 % fires
      {Filled(kTanh, {16, 8}, 20.0), Filled(kSigmoid, {16, 8}, 18.0)},  // 100 %, 100 % fire
  });
  const RuleRun run = RunRule(trial, "SaturatedActivation", {"threshold_layer=30"}, {"--keep-going"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.fired, (std::vector<int64_t>{1, 2}));
  EXPECT_THAT(SeriesPoints(run.series, "% saturated units", kTanh),
              ElementsAre(Pair(0, 0.0), Pair(1, 25.0), Pair(2, 100.0)));
  EXPECT_THAT(SeriesPoints(run.series, "% saturated units", kSigmoid),
              ElementsAre(Pair(0, 0.0), Pair(1, 37.5), Pair(2, 100.0)));
  EXPECT_THAT(SeriesThreshold(run.series, "% saturated units", "above"), Optional(30.0));
  EXPECT_THAT(SeriesFirings(run.series, "% saturated units", kSigmoid), ElementsAre(Pair(1, 37.5), Pair(2, 100.0)));
  EXPECT_THAT(SeriesFirings(run.series, "% saturated units", kTanh), ElementsAre(Pair(1, 25.0), Pair(2, 100.0)));
  EXPECT_FALSE(run.series["recommendations"].empty());
}

// NCHW images (3 channels of 2x2) whose channel c averages means[c]: pixels means[c] ± 0.5
// (binary fractions: every sum is exact).
TensorData Nchw(int64_t batch, const std::vector<double>& means) {
  TensorData t{"hybridsequential0_input_0", {batch, static_cast<int64_t>(means.size()), 2, 2}, {}, DType::kFloat32};
  for (int64_t b = 0; b < batch; ++b) {
    for (const double mean : means) {
      for (int p = 0; p < 4; ++p) t.values.push_back(mean + (p % 2 == 0 ? 0.5 : -0.5));
    }
  }
  return t;
}

TEST_F(ActivationsAndDataSeries, CheckInputImagesPublishesTheAccumulatedChannelMeans) {
  // 200, 400, 800 images seen; the means only once 300 were seen: after step 1 (0 + 0.5) / 2,
  // (0 - 1) / 2, (0 + 0.25) / 2; after step 2 (200 * 0 + 200 * 0.5 + 400 * 1.25) / 800 = 0.75 for
  // channel 0, (0 - 200 - 600) / 800 = -1 for channel 1 and (0 + 50 + 50) / 800 = 0.125 for
  // channel 2 (|0.75| and |-1| > threshold_mean 0.6: fires).
  const auto trial = Write({{Nchw(200, {0, 0, 0})}, {Nchw(200, {0.5, -1, 0.25})}, {Nchw(400, {1.25, -1.5, 0.125})}});
  const RuleRun run = RunRule(trial, "CheckInputImages", {"threshold_samples=300", "threshold_mean=0.6"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.fired, std::vector<int64_t>{2});
  EXPECT_THAT(SeriesPoints(run.series, "images seen"), ElementsAre(Pair(0, 200.0), Pair(1, 400.0), Pair(2, 800.0)));
  EXPECT_THAT(SeriesPoints(run.series, "mean of channel 0"), ElementsAre(Pair(1, 0.25), Pair(2, 0.75)));
  EXPECT_THAT(SeriesPoints(run.series, "mean of channel 1"), ElementsAre(Pair(1, -0.5), Pair(2, -1.0)));
  EXPECT_THAT(SeriesPoints(run.series, "mean of channel 2"), ElementsAre(Pair(1, 0.125), Pair(2, 0.125)));
  for (const char* channel : {"mean of channel 0", "mean of channel 1", "mean of channel 2"}) {
    SCOPED_TRACE(channel);
    EXPECT_THAT(SeriesThreshold(run.series, channel, "above"), Optional(0.6));  // |mean| > threshold_mean
    EXPECT_THAT(SeriesThreshold(run.series, channel, "below"), Optional(-0.6));
  }
  EXPECT_THAT(SeriesFirings(run.series, "mean of channel 0"), ElementsAre(Pair(2, 0.75)));
  EXPECT_THAT(SeriesFirings(run.series, "mean of channel 1"), ElementsAre(Pair(2, -1.0)));
  EXPECT_THAT(SeriesFirings(run.series, "images seen"), ElementsAre(Pair(2, 800.0)));
  EXPECT_FALSE(run.series["recommendations"].empty());
}

TEST_F(ActivationsAndDataSeries, NLPSequenceRatioPublishesEachTokensShare) {
  constexpr char kInput[] = "embedding0_input_0";
  // A 4 x 10 batch of ids 7 with counts[i] elements of tokens[i] first.
  auto sequences = [&](const std::vector<int>& counts) {
    TensorData t{kInput, {4, 10}, std::vector<double>(40, 7.0), DType::kInt32};
    size_t next = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      for (int c = 0; c < counts[i]; ++c) t.values[next++] = static_cast<double>(i);
    }
    return t;
  };
  // Tokens 0 and 1 of 40: 8 and 4 (20 %, 10 %), 4 and 24 (10 %, 60 % > 55 fires), 24 and 0 (60 % > 50).
  const auto trial = Write({{sequences({8, 4})}, {sequences({4, 24})}, {sequences({24, 0})}});
  const RuleRun run = RunRule(trial, "NLPSequenceRatio", {"token_values=0,1", "token_thresholds_percent=50,55"},
                              {"--keep-going"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.fired, (std::vector<int64_t>{1, 2}));
  EXPECT_THAT(SeriesPoints(run.series, "% token 0", kInput), ElementsAre(Pair(0, 20.0), Pair(1, 10.0), Pair(2, 60.0)));
  EXPECT_THAT(SeriesPoints(run.series, "% token 1", kInput), ElementsAre(Pair(0, 10.0), Pair(1, 60.0), Pair(2, 0.0)));
  EXPECT_THAT(SeriesThreshold(run.series, "% token 0", "above"), Optional(50.0));
  EXPECT_THAT(SeriesThreshold(run.series, "% token 1", "above"), Optional(55.0));
  EXPECT_THAT(SeriesFirings(run.series, "% token 1", kInput), ElementsAre(Pair(1, 60.0), Pair(2, 0.0)));
  EXPECT_FALSE(run.series["recommendations"].empty());
}

TEST_F(ActivationsAndDataSeries, ClassImbalancePublishesTheRatioAndEachClassMispredictionRate) {
  const std::vector<double> six = Classes({4, 2});  // 0 0 0 0 1 1
  // Step 0: 6 samples (< samples 10): only the count. Step 1: counts 8 and 4, one class-1 sample
  // mispredicted: ratio 2, rates 0 and 1/4. Step 2: 6 more of class 0, one mispredicted: counts
  // 14 and 4, ratio 3.5 > 3 fires, rates 1 - 13/14 and 1/4.
  const auto trial = Write({{Vector("labels", six), Vector("predictions", six)},
                            {Vector("labels", six), Vector("predictions", {0, 0, 0, 0, 1, 0})},
                            {Vector("labels", Classes({6})), Vector("predictions", {0, 0, 0, 0, 0, 1})}});
  const RuleRun run = RunRule(trial, "ClassImbalance",
                              {"samples=10", "threshold_imbalance=3", "threshold_misprediction=0.4"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.fired, std::vector<int64_t>{2});
  EXPECT_THAT(SeriesPoints(run.series, "samples seen"), ElementsAre(Pair(0, 6.0), Pair(1, 12.0), Pair(2, 18.0)));
  EXPECT_THAT(SeriesPoints(run.series, "imbalance ratio"), ElementsAre(Pair(1, 2.0), Pair(2, 3.5)));
  EXPECT_THAT(SeriesPoints(run.series, "misprediction rate of class 0"),
              ElementsAre(Pair(1, 0.0), Pair(2, DoubleEq(1.0 - 13.0 / 14.0))));
  EXPECT_THAT(SeriesPoints(run.series, "misprediction rate of class 1"), ElementsAre(Pair(1, 0.25), Pair(2, 0.25)));
  EXPECT_THAT(SeriesThreshold(run.series, "imbalance ratio", "above"), Optional(3.0));
  EXPECT_THAT(SeriesThreshold(run.series, "misprediction rate of class 0", "above"), Optional(0.4));
  EXPECT_THAT(SeriesThreshold(run.series, "misprediction rate of class 1", "above"), Optional(0.4));
  EXPECT_THAT(SeriesFirings(run.series, "imbalance ratio"), ElementsAre(Pair(2, 3.5)));
  EXPECT_THAT(SeriesFirings(run.series, "misprediction rate of class 1"), ElementsAre(Pair(2, 0.25)));
  EXPECT_FALSE(run.series["recommendations"].empty());
}

TEST_F(ActivationsAndDataSeries, ConfusionPublishesEachDiagonalShareAndTheLargestOffDiagonalShare) {
  const std::vector<double> ten = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<double> one_mistake = ten;
  one_mistake[4] = 7;  // column 7 holds labels 7 and 4 (0.5 each); no sample is predicted 4
  // 100 samples of class 0 right, 10 of class 1 half predicted 0: column 0 is 100/105 right and
  // 5/105 wrong, column 1 all right.
  std::vector<double> labels(100, 0.0), predictions(100, 0.0);
  for (int i = 0; i < 10; ++i) {
    labels.push_back(1);
    predictions.push_back(i < 5 ? 0 : 1);
  }
  const auto trial = Write({{Vector("labels", ten), Vector("predictions", ten)},
                            {Vector("labels", ten), Vector("predictions", one_mistake)},
                            {Vector("labels", labels), Vector("predictions", predictions)}});
  const RuleRun run = RunRule(trial, "Confusion", {"min_diag=0.8", "max_off_diag=0.3"}, {"--keep-going"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.fired, std::vector<int64_t>{1});
  EXPECT_THAT(SeriesPoints(run.series, "diagonal share of class 7"), ElementsAre(Pair(0, 1.0), Pair(1, 0.5)));
  EXPECT_THAT(SeriesPoints(run.series, "diagonal share of class 4"), ElementsAre(Pair(0, 1.0)))
      << "a column without samples is not compared";
  EXPECT_THAT(SeriesPoints(run.series, "diagonal share of class 0"),
              ElementsAre(Pair(0, 1.0), Pair(1, 1.0), Pair(2, DoubleEq(100.0 / 105.0))));
  EXPECT_THAT(SeriesPoints(run.series, "largest off-diagonal share"),
              ElementsAre(Pair(0, 0.0), Pair(1, 0.5), Pair(2, DoubleEq(5.0 / 105.0))));
  EXPECT_THAT(SeriesThreshold(run.series, "diagonal share of class 7", "below"), Optional(0.8));
  EXPECT_THAT(SeriesThreshold(run.series, "largest off-diagonal share", "above"), Optional(0.3));
  EXPECT_THAT(SeriesFirings(run.series, "diagonal share of class 7"), ElementsAre(Pair(1, 0.5)));
  EXPECT_THAT(SeriesFirings(run.series, "largest off-diagonal share"), ElementsAre(Pair(1, 0.5)));
  EXPECT_THAT(SeriesFirings(run.series, "diagonal share of class 0"), ElementsAre(Pair(1, 1.0)));
  EXPECT_FALSE(run.series["recommendations"].empty());
}

// Nothing compared (no layer saved): the file still holds the threshold and the recommendation.
TEST_F(ActivationsAndDataSeries, ThresholdAndRecommendationWithoutPoints) {
  const RuleRun run = RunRule(Write({{Filled("loss", {1}, 0.5)}}), "DeadRelu");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.series["series"], IsEmpty());
  EXPECT_THAT(SeriesThreshold(run.series, "% dead units", "above"), Optional(50.0));
  EXPECT_FALSE(run.series["recommendations"].empty());
}

}  // namespace
}  // namespace litmus::testing
