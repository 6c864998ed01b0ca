// ClassImbalance (docs/rules/ClassImbalance.md) through the real `litmus run`: the spec's [TEST] vector,
// accumulation across steps up to `samples`, imbalance and misprediction thresholds, argmax vs
// rounding, pairing of several tensors by sorted name, the regex parameters, missing tensors,
// unusable data and invalid parameters.
#include <gtest/gtest.h>

#include "rule_test_support.h"

namespace litmus::testing {
namespace {

// `counts[c]` samples of class c, in class order.
std::vector<double> Classes(const std::vector<int>& counts) {
  std::vector<double> out;
  for (size_t c = 0; c < counts.size(); ++c) out.insert(out.end(), counts[c], static_cast<double>(c));
  return out;
}

TensorData Vector(const std::string& name, std::vector<double> values, DType dtype = DType::kInt64) {
  const auto size = static_cast<int64_t>(values.size());
  return {name, {size}, std::move(values), dtype};
}

// labels and predictions tensors of one step.
StepData Step(const std::vector<double>& labels, const std::vector<double>& predictions) {
  return {Vector("labels", labels), Vector("predictions", predictions)};
}

class ClassImbalanceTest : public ::testing::Test {
 protected:
  std::filesystem::path Write(const std::vector<StepData>& steps) {
    const auto path = dir_.path() / ("trial" + std::to_string(trials_++));
    WriteTrial(path, steps);
    return path;
  }
  int Exit(const std::filesystem::path& trial, const std::vector<std::string>& params = {}) {
    const RuleRun run = RunRule(trial, "ClassImbalance", params);
    EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.err;
    return run.exit_code;
  }
  TempDir dir_;
  int trials_ = 0;
};

// [TEST] labels = 990 zeros + 10 ones at step 3, predictions the same tensor: met at 3 (ratio 99).
TEST_F(ClassImbalanceTest, SpecVectorFiresAtStepThree) {
  const std::vector<double> labels = Classes({990, 10});
  const auto trial = Write({{}, {}, {}, Step(labels, labels), Step(labels, labels)});
  const RuleRun run = RunRule(trial, "ClassImbalance");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.fired, std::vector<int64_t>{3});
  EXPECT_EQ(run.report["Details"]["imbalance_ratio"], 99.0);
  EXPECT_EQ(run.report["Details"]["counts"], nlohmann::json({{"0", 990}, {"1", 10}}));
  EXPECT_EQ(run.report["Details"]["misprediction_rate"], nlohmann::json({{"0", 0.0}, {"1", 0.0}}));
  EXPECT_EQ(run.report["Violations"], 1);
}

TEST_F(ClassImbalanceTest, BalancedAndWellPredictedDoesNotFire) {
  const std::vector<double> labels = Classes({200, 200, 200});
  const RuleRun run = RunRule(Write({Step(labels, labels), Step(labels, labels)}), "ClassImbalance");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.report["Datapoints"], 2);
  EXPECT_EQ(run.report["Details"]["samples_seen"], 1200);
}

// 300 labels per step with ratio 20: undecided at step 0 (300 < 500), fires at step 1 (600).
TEST_F(ClassImbalanceTest, LabelsAccumulateAcrossStepsUntilSamples) {
  const std::vector<double> labels = Classes({20 * 14, 14});  // 294 labels, ratio 20
  const auto trial = Write({Step(labels, labels), Step(labels, labels), Step(labels, labels)});
  EXPECT_EQ(RunRule(trial, "ClassImbalance").fired, std::vector<int64_t>{1});
  EXPECT_EQ(RunRule(trial, "ClassImbalance", {"samples=100"}).fired, std::vector<int64_t>{0});
  EXPECT_EQ(RunRule(trial, "ClassImbalance", {"samples=800"}).fired, std::vector<int64_t>{2});
  EXPECT_EQ(Exit(trial, {"samples=1000"}), 0);
}

// Counts are over every step so far, not the current step alone.
TEST_F(ClassImbalanceTest, ImbalanceUsesAllStepsSoFar) {
  // Each step holds one class only (ratio 1 on its own); together 200 vs 15 (ratio 13.3).
  const std::vector<double> zeros = Classes({200}), ones = Classes({0, 15});
  EXPECT_EQ(RunRule(Write({Step(zeros, zeros), Step(ones, ones)}), "ClassImbalance", {"samples=1"}).fired,
            std::vector<int64_t>{1});
  // Step 1 alone has ratio 25; with step 0 it is 800 vs 320 (2.5).
  const std::vector<double> balanced = Classes({300, 300}), skewed = Classes({500, 20});
  EXPECT_EQ(Exit(Write({Step(balanced, balanced), Step(skewed, skewed)}), {"samples=1"}), 0);
}

TEST_F(ClassImbalanceTest, ThresholdImbalance) {
  const std::vector<double> labels = Classes({990, 10});
  const auto trial = Write({Step(labels, labels)});
  EXPECT_EQ(Exit(trial, {"threshold_imbalance=99"}), 0) << "99 is not > 99";
  EXPECT_EQ(Exit(trial, {"threshold_imbalance=98.5"}), 1);
  const std::vector<double> mild = Classes({300, 250});
  EXPECT_EQ(Exit(Write({Step(mild, mild)})), 0);
  EXPECT_EQ(Exit(Write({Step(mild, mild)}), {"threshold_imbalance=1.1"}), 1);
}

// Balanced classes; 80% of class 1 predicted as 0.
TEST_F(ClassImbalanceTest, ThresholdMisprediction) {
  const std::vector<double> labels = Classes({250, 250});
  std::vector<double> predictions = labels;
  for (int i = 250; i < 450; ++i) predictions[i] = 0;
  const auto trial = Write({Step(labels, predictions)});
  const RuleRun run = RunRule(trial, "ClassImbalance");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.report["Details"]["misprediction_rate"]["1"], 0.8);
  EXPECT_EQ(run.report["Details"]["misprediction_rate"]["0"], 0.0);
  EXPECT_EQ(Exit(trial, {"threshold_misprediction=0.8"}), 0) << "0.8 is not > 0.8";
  EXPECT_EQ(Exit(trial, {"threshold_misprediction=0.79"}), 1);
}

// Predictions are rounded to the nearest id: 0.6 is class 1, 0.4 class 0 (truncation would make
// every class-1 sample wrong).
TEST_F(ClassImbalanceTest, PredictionsAreRounded) {
  const std::vector<double> labels = Classes({300, 300});
  std::vector<double> scores;
  for (const double label : labels) scores.push_back(label == 1 ? 0.6 : 0.4);
  EXPECT_EQ(Exit(Write({{Vector("labels", labels), Vector("predictions", scores, DType::kFloat32)}})), 0);
}

// argmax: predictions are [N, classes] scores.
TEST_F(ClassImbalanceTest, Argmax) {
  const std::vector<double> labels = Classes({300, 300});
  TensorData scores{"predictions", {600, 2}, {}, DType::kFloat32};
  for (size_t i = 0; i < labels.size(); ++i) {
    const bool mispredict = labels[i] == 1 && i % 10 != 0;  // 90% of class 1 scored as class 0
    const int predicted = mispredict ? 0 : static_cast<int>(labels[i]);
    scores.values.push_back(predicted == 0 ? 0.9 : 0.1);
    scores.values.push_back(predicted == 1 ? 0.9 : 0.1);
  }
  const auto trial = Write({{Vector("labels", labels), scores}});
  const RuleRun run = RunRule(trial, "ClassImbalance", {"argmax=True"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.fired, std::vector<int64_t>{0});
  EXPECT_EQ(run.report["Details"]["misprediction_rate"]["1"], 0.9);
  // Without argmax the 1200 scores do not pair with the 600 labels: the step is skipped.
  const RuleRun raw = RunRule(trial, "ClassImbalance", {"argmax=false"});
  EXPECT_EQ(raw.exit_code, 0) << raw.err;
  EXPECT_NE(raw.err.find("has 600 ids but predictions tensor predictions has 1200"), std::string::npos) << raw.err;
}

// Several matching tensors: both lists sorted by name and paired by position.
TEST_F(ClassImbalanceTest, SeveralTensorsArePairedBySortedName) {
  const std::vector<double> zeros(300, 0.0), ones(300, 1.0);
  const auto right = Write({{Vector("b_labels", ones), Vector("a_labels", zeros), Vector("b_predictions", ones),
                             Vector("a_predictions", zeros)}});
  EXPECT_EQ(Exit(right), 0);
  const auto crossed = Write({{Vector("b_labels", ones), Vector("a_labels", zeros), Vector("b_predictions", zeros),
                               Vector("a_predictions", ones)}});
  const RuleRun run = RunRule(crossed, "ClassImbalance");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.report["Details"]["misprediction_rate"], nlohmann::json({{"0", 1.0}, {"1", 1.0}}));
  EXPECT_EQ(run.report["Violations"], 2);
}

TEST_F(ClassImbalanceTest, UnpairedTensorsAreLeftOutWithAWarning) {
  const std::vector<double> labels = Classes({300, 300});
  const auto trial = Write({{Vector("a_labels", labels), Vector("b_labels", Classes({600})),
                             Vector("a_predictions", labels)}});
  const RuleRun run = RunRule(trial, "ClassImbalance");
  EXPECT_EQ(run.exit_code, 0) << run.err << " (b_labels has no predictions to pair with)";
  EXPECT_NE(run.err.find("2 labels tensors but 1 predictions tensors"), std::string::npos) << run.err;
  EXPECT_EQ(run.report["Details"]["samples_seen"], 600);
}

TEST_F(ClassImbalanceTest, LabelsAndPredictionsRegex) {
  const std::vector<double> labels = Classes({990, 10});
  const auto trial = Write({{Vector("y_true", labels), Vector("y_pred", labels)}});
  EXPECT_EQ(Exit(trial), 0);
  EXPECT_EQ(Exit(trial, {"labels_regex=y_true", "predictions_regex=y_pred"}), 1);
  EXPECT_EQ(Exit(trial, {"labels_regex=y_true"}), 0) << "no predictions tensor";
}

TEST_F(ClassImbalanceTest, MissingTensorsNeverFire) {
  const std::vector<double> labels = Classes({990, 10});
  EXPECT_EQ(Exit(Write({{Vector("labels", labels)}, {Vector("labels", labels)}})), 0) << "labels only";
  EXPECT_EQ(Exit(Write({{Vector("predictions", labels)}})), 0) << "predictions only";
  EXPECT_EQ(Exit(Write({{Filled("loss", {1}, 1.0)}})), 0);
}

// A NaN label skips its step (nothing of it counted); later steps still count.
TEST_F(ClassImbalanceTest, StepWithUnusableLabelsIsSkipped) {
  std::vector<double> bad = Classes({990, 10});
  bad[3] = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> good = Classes({990, 10});
  const auto trial = Write({{Vector("labels", bad, DType::kFloat32), Vector("predictions", good)},
                            Step(good, good)});
  const RuleRun run = RunRule(trial, "ClassImbalance");
  EXPECT_EQ(run.fired, std::vector<int64_t>{1});
  EXPECT_NE(run.err.find("step 0 skipped: labels tensor labels"), std::string::npos) << run.err;
  EXPECT_EQ(run.report["Details"]["samples_seen"], 1000);
}

TEST_F(ClassImbalanceTest, InvalidParametersAreConfigErrors) {
  const auto trial = Write({{}});
  for (const auto& [param, key] : std::vector<std::pair<std::string, std::string>>{
           {"threshold_imbalance=0.5", "threshold_imbalance"},
           {"threshold_imbalance=ten", "threshold_imbalance"},
           {"threshold_misprediction=1.5", "threshold_misprediction"},
           {"samples=0", "samples"},
           {"samples=many", "samples"},
           {"argmax=yes", "argmax"},
           {"labels_regex=(", "labels_regex"},
           {"predictions_regex=*", "predictions_regex"}}) {
    SCOPED_TRACE(param);
    const RuleRun run = RunRule(trial, "ClassImbalance", {param});
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_NE(run.err.find(key + ":"), std::string::npos) << run.err;
  }
}

}  // namespace
}  // namespace litmus::testing
