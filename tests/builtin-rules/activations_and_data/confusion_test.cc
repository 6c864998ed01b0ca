// Confusion (docs/rules/Confusion.md) through the real `litmus run`: the spec's four [TEST] cases,
// the column-normalised decision, category_no (None/empty = unset, out-of-range ids skip the step
// with a warning), tensor resolution by name then collection, missing tensors, unusable data and
// invalid parameters.
#include <gtest/gtest.h>

#include <random>

#include "rule_test_support.h"

namespace litmus::testing {
namespace {

TensorData Vector(const std::string& name, std::vector<double> values, DType dtype = DType::kInt64) {
  const auto size = static_cast<int64_t>(values.size());
  return {name, {size}, std::move(values), dtype};
}

std::vector<double> ZeroToNine() { return {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}; }

// y = 0..9 with ŷ[4] = 7: column 7 holds labels 7 and 4 (0.5 each).
std::vector<double> OneMistake() {
  std::vector<double> predictions = ZeroToNine();
  predictions[4] = 7;
  return predictions;
}

StepData Step(const std::vector<double>& labels, const std::vector<double>& predictions,
              const std::string& labels_name = "labels", const std::string& predictions_name = "predictions") {
  return {Vector(labels_name, labels), Vector(predictions_name, predictions)};
}

class ConfusionTest : public ::testing::Test {
 protected:
  std::filesystem::path Write(const std::vector<StepData>& steps,
                              const std::vector<writer::CollectionConfig>& collections = {}) {
    const auto path = dir_.path() / ("trial" + std::to_string(trials_++));
    WriteTrial(path, steps, collections);
    return path;
  }
  int Exit(const std::filesystem::path& trial, const std::vector<std::string>& params = {}) {
    const RuleRun run = RunRule(trial, "Confusion", params);
    EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.err;
    return run.exit_code;
  }
  TempDir dir_;
  int trials_ = 0;
};

// [TEST] 1: random labels (10 classes, 100 samples) predicted exactly: not met.
TEST_F(ConfusionTest, SpecRandomPerfectPredictionsDoNotFire) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> klass(0, 9);
  std::vector<double> labels;
  for (int i = 0; i < 100; ++i) labels.push_back(klass(rng));
  const RuleRun run = RunRule(Write({Step(labels, labels)}), "Confusion");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.report["Datapoints"], 1);
}

// [TEST] 2: y = 0..9 with ŷ[4] = 7: met (column 7: diagonal 0.5 < 0.9).
TEST_F(ConfusionTest, SpecOneMistakeFires) {
  const RuleRun run = RunRule(Write({Step(ZeroToNine(), OneMistake())}), "Confusion");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.fired, std::vector<int64_t>{0});
  const nlohmann::json& details = run.report["Details"];
  EXPECT_EQ(details["labels_tensor"], "labels");
  EXPECT_EQ(details["predictions_tensor"], "predictions");
  EXPECT_EQ(details["category_count"], 10);
  EXPECT_EQ(details["matrix"][4][7], 1);
  EXPECT_EQ(details["matrix"][7][7], 1);
  EXPECT_EQ(details["matrix"][4][4], 0);
  const nlohmann::json diagonal = {{"label", 7}, {"prediction", 7}, {"share", 0.5}, {"limit", "min_diag"}};
  const nlohmann::json off = {{"label", 4}, {"prediction", 7}, {"share", 0.5}, {"limit", "max_off_diag"}};
  EXPECT_EQ(details["failing_cells"], nlohmann::json({diagonal, off}));
  EXPECT_EQ(run.report["Violations"], 2);
}

// [TEST] 3: the same with min_diag 0, max_off_diag 0.01: met (0.5 > 0.01).
TEST_F(ConfusionTest, SpecOneMistakeFiresOnTheOffDiagonalAlone) {
  const RuleRun run = RunRule(Write({Step(ZeroToNine(), OneMistake())}), "Confusion",
                              {"min_diag=0", "max_off_diag=0.01"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.report["Violations"], 1);
  EXPECT_EQ(run.report["Details"]["failing_cells"][0]["limit"], "max_off_diag");
}

// [TEST] 4: y = ŷ = 0..9 with the default tensor names: not met.
TEST_F(ConfusionTest, SpecIdentityDoesNotFire) {
  EXPECT_EQ(Exit(Write({Step(ZeroToNine(), ZeroToNine())})), 0);
}

// [CONFLICT] decision: both tests divide by the column sum. 100 samples of class 0 all right,
// 10 of class 1 half predicted as 0: column 0 is 100/105 correct (>= 0.9) and 5/105 wrong
// (<= 0.1), column 1 is 5/5 correct. Row-normalised (0.5 for class 1) or DOC's literal diagonal
// formula (5/105) would fire; the decision does not.
TEST_F(ConfusionTest, SharesAreNormalisedByTheColumnSum) {
  std::vector<double> labels(100, 0.0), predictions(100, 0.0);
  for (int i = 0; i < 10; ++i) {
    labels.push_back(1);
    predictions.push_back(i < 5 ? 0 : 1);
  }
  const auto trial = Write({Step(labels, predictions)});
  EXPECT_EQ(Exit(trial), 0);
  EXPECT_EQ(Exit(trial, {"min_diag=0.96"}), 1) << "100/105 = 0.952 < 0.96";
  EXPECT_EQ(Exit(trial, {"max_off_diag=0.04"}), 1) << "5/105 = 0.048 > 0.04";
}

TEST_F(ConfusionTest, FiresAtTheFirstBadStep) {
  const auto trial = Write({Step(ZeroToNine(), ZeroToNine()), Step(ZeroToNine(), ZeroToNine()),
                            Step(ZeroToNine(), OneMistake()), Step(ZeroToNine(), OneMistake())});
  EXPECT_EQ(RunRule(trial, "Confusion").fired, std::vector<int64_t>{2});
  EXPECT_EQ(RunRule(trial, "Confusion", {}, {"--keep-going"}).fired, (std::vector<int64_t>{2, 3}));
}

// Each step's matrix stands alone (XGBoost saves the whole validation set every step): a bad
// step followed by a good one does not fire at the good one.
TEST_F(ConfusionTest, MatricesDoNotAccumulate) {
  const auto trial = Write({Step(ZeroToNine(), OneMistake()), Step(ZeroToNine(), ZeroToNine())});
  EXPECT_EQ(RunRule(trial, "Confusion", {}, {"--keep-going"}).fired, std::vector<int64_t>{0});
}

// category_no: ids outside 0..category_no-1 skip the step with a warning; "None" and "" unset it.
TEST_F(ConfusionTest, CategoryNo) {
  const std::vector<double> small_labels = {0, 1, 2, 3, 4, 0, 1, 2, 3, 4};
  std::vector<double> small_bad = small_labels;
  small_bad[0] = 3;
  const auto trial = Write({Step(ZeroToNine(), OneMistake()), Step(small_labels, small_bad)});
  RuleRun run = RunRule(trial, "Confusion", {"category_no=5"});
  EXPECT_EQ(run.fired, std::vector<int64_t>{1}) << run.err;
  EXPECT_NE(run.err.find("step 0 skipped"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("outside the class ids 0..4 (category_no)"), std::string::npos) << run.err;
  EXPECT_EQ(run.report["Details"]["category_count"], 5);
  for (const std::string unset : {"category_no=None", "category_no="}) {
    run = RunRule(trial, "Confusion", {unset});
    EXPECT_EQ(run.fired, std::vector<int64_t>{0}) << unset << ": " << run.err;
    EXPECT_EQ(run.report["Details"]["category_count"], 10);
  }
  run = RunRule(trial, "Confusion", {"category_no=20"});
  EXPECT_EQ(run.fired, std::vector<int64_t>{0}) << run.err;
  EXPECT_EQ(run.report["Details"]["category_count"], 20);
}

TEST_F(ConfusionTest, NegativeIdsSkipTheStep) {
  const std::vector<double> labels = {0, 1, -1, 1};
  const auto trial = Write({Step(labels, {0, 1, 0, 0}), Step(ZeroToNine(), OneMistake())});
  const RuleRun run = RunRule(trial, "Confusion");
  EXPECT_EQ(run.fired, std::vector<int64_t>{1});
  EXPECT_NE(run.err.find("ids must not be negative"), std::string::npos) << run.err;
}

TEST_F(ConfusionTest, LabelsAndPredictionsByName) {
  const auto trial = Write({Step(ZeroToNine(), OneMistake(), "y", "y_hat")});
  EXPECT_EQ(Exit(trial), 0) << "no labels/predictions tensors or collections";
  const RuleRun run = RunRule(trial, "Confusion", {"labels=y", "predictions=y_hat"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.report["Details"]["labels_tensor"], "y");
  EXPECT_EQ(run.report["Details"]["predictions_tensor"], "y_hat");
}

// Without a tensor of that exact name, the first tensor (by name) of the collection is used.
TEST_F(ConfusionTest, LabelsAndPredictionsFromCollections) {
  StepData step = Step(ZeroToNine(), OneMistake(), "val_y_b", "val_p_b");
  step.push_back(Vector("val_y_a", ZeroToNine()));  // sorts first: the labels used
  step.push_back(Vector("val_p_a", ZeroToNine()));
  step.push_back(Vector("gt_labels_x", OneMistake()));
  const auto trial = Write({step}, {Collection("labels", "^val_y"), Collection("predictions", "^val_p"), Collection("truth", "^gt_")});
  RuleRun run = RunRule(trial, "Confusion");
  EXPECT_EQ(run.exit_code, 0) << run.err << " (val_y_a against val_p_a: identity)";
  run = RunRule(trial, "Confusion", {"labels_collection=truth"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.report["Details"]["labels_tensor"], "gt_labels_x");
  EXPECT_EQ(run.report["Details"]["predictions_tensor"], "val_p_a");
  run = RunRule(trial, "Confusion", {"predictions_collection=truth"});
  EXPECT_EQ(run.report["Details"]["predictions_tensor"], "gt_labels_x");
  // An exact name wins over the collection.
  run = RunRule(trial, "Confusion", {"labels=val_y_b", "predictions=val_p_b"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
}

TEST_F(ConfusionTest, MissingTensorsNeverFire) {
  EXPECT_EQ(Exit(Write({{Vector("labels", ZeroToNine())}})), 0) << "no predictions";
  EXPECT_EQ(Exit(Write({{Vector("predictions", OneMistake())}})), 0) << "no labels";
  // Both saved only at step 2.
  const auto late = Write({{Vector("labels", ZeroToNine())}, {}, Step(ZeroToNine(), OneMistake())});
  EXPECT_EQ(RunRule(late, "Confusion").fired, std::vector<int64_t>{2});
}

TEST_F(ConfusionTest, MismatchedLengthsSkipTheStep) {
  const auto trial = Write({Step({0, 1, 2}, {0, 0}), Step(ZeroToNine(), OneMistake())});
  const RuleRun run = RunRule(trial, "Confusion");
  EXPECT_EQ(run.fired, std::vector<int64_t>{1});
  EXPECT_NE(run.err.find("labels tensor labels has 3 ids but predictions tensor predictions has 2"),
            std::string::npos)
      << run.err;
}

// Float ids are cast (truncated) as numpy's astype(int): 7.9 is 7.
TEST_F(ConfusionTest, FloatIdsAreCast) {
  std::vector<double> predictions = ZeroToNine();
  for (double& p : predictions) p += 0.9;
  predictions[4] = 7.2;
  RuleRun run = RunRule(Write({{Vector("labels", ZeroToNine(), DType::kFloat32),
                                Vector("predictions", predictions, DType::kFloat64)}}),
                        "Confusion");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.report["Details"]["failing_cells"][0]["prediction"], 7);
}

TEST_F(ConfusionTest, InvalidParametersAreConfigErrors) {
  const auto trial = Write({{}});
  for (const auto& [param, key] : std::vector<std::pair<std::string, std::string>>{
           {"category_no=1", "category_no"},
           {"category_no=abc", "category_no"},
           {"category_no=2.5", "category_no"},
           {"min_diag=1.5", "min_diag"},
           {"min_diag=high", "min_diag"},
           {"max_off_diag=-0.1", "max_off_diag"}}) {
    SCOPED_TRACE(param);
    const RuleRun run = RunRule(trial, "Confusion", {param});
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_NE(run.err.find(key + ":"), std::string::npos) << run.err;
  }
}

}  // namespace
}  // namespace litmus::testing
