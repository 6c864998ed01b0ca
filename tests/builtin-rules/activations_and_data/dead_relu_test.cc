// DeadRelu (docs/rules/DeadRelu.md) through the real `litmus run`: firing step, quiet trials, each
// parameter, rank-1 layers, dtypes, missing tensors and invalid parameters.
#include <gtest/gtest.h>

#include "rule_test_support.h"

namespace litmus::testing {
namespace {

constexpr char kLayer[] = "dense0_relu_output";

// A batch x units layer whose unit u is > 0 for exactly active[u] samples (the first ones).
TensorData Layer(const std::string& name, int64_t batch, const std::vector<int64_t>& active) {
  TensorData t{name, {batch, static_cast<int64_t>(active.size())}, {}, DType::kFloat32};
  for (int64_t b = 0; b < batch; ++b) {
    for (const int64_t a : active) t.values.push_back(b < a ? 0.5 : -0.0);
  }
  return t;
}

// Every unit active for half the batch: a healthy layer.
TensorData Healthy(const std::string& name = kLayer) { return Layer(name, 8, std::vector<int64_t>(10, 4)); }

class DeadReluTest : public ::testing::Test {
 protected:
  std::filesystem::path Write(const std::vector<StepData>& steps,
                              const std::vector<writer::CollectionConfig>& collections = {}) {
    const auto path = dir_.path() / ("trial" + std::to_string(trials_++));
    WriteTrial(path, steps, collections);
    return path;
  }
  TempDir dir_;
  int trials_ = 0;
};

// [TEST config] a zero-initialised Dense(10, relu, no bias) outputs zeros: fires at step 0.
TEST_F(DeadReluTest, ZeroInitialisedLayerFiresAtStepZero) {
  std::vector<StepData> steps;
  for (int s = 0; s < 4; ++s) steps.push_back({Filled(kLayer, {8, 10}, 0.0)});
  const auto trial = Write(steps);
  const RuleRun run = RunRule(trial, "DeadRelu");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.fired, std::vector<int64_t>{0});
  ASSERT_TRUE(run.report.is_object());
  EXPECT_EQ(run.report["RuleTriggered"], 1);
  EXPECT_EQ(run.report["Violations"], 1);
  EXPECT_EQ(run.report["Details"][kLayer], 100.0);
}

TEST_F(DeadReluTest, HealthyLayerDoesNotFire) {
  const auto trial = Write({{Healthy()}, {Healthy()}, {Healthy()}, {Healthy()}});
  const RuleRun run = RunRule(trial, "DeadRelu");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(run.fired.empty());
  EXPECT_EQ(run.report["Datapoints"], 4);
  EXPECT_EQ(run.report["Violations"], 0);
}

TEST_F(DeadReluTest, FiresAtTheFirstStepTheLayerDies) {
  const auto trial = Write({{Healthy()}, {Healthy()}, {Filled(kLayer, {8, 10}, -1.0)}, {Filled(kLayer, {8, 10}, 0.0)}});
  EXPECT_EQ(RunRule(trial, "DeadRelu").fired, std::vector<int64_t>{2});
  const RuleRun all = RunRule(trial, "DeadRelu", {}, {"--keep-going"});
  EXPECT_EQ(all.fired, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(all.report["Violations"], 2);
}

TEST_F(DeadReluTest, AnyDeadLayerFires) {
  const auto trial = Write({{Healthy("a_relu_output"), Filled("b_relu_output", {4, 3}, 0.0)}});
  const RuleRun run = RunRule(trial, "DeadRelu");
  EXPECT_EQ(run.fired, std::vector<int64_t>{0});
  EXPECT_FALSE(run.report["Details"].contains("a_relu_output"));
  EXPECT_EQ(run.report["Details"]["b_relu_output"], 100.0);
}

// 6 of 10 units never fire: 60% dead.
TEST_F(DeadReluTest, ThresholdLayer) {
  const auto trial = Write({{Layer(kLayer, 8, {0, 0, 0, 0, 0, 0, 8, 8, 8, 8})}});
  EXPECT_EQ(RunRule(trial, "DeadRelu").exit_code, 1);
  EXPECT_EQ(RunRule(trial, "DeadRelu", {"threshold_layer=60"}).exit_code, 0) << "60% is not > 60%";
  EXPECT_EQ(RunRule(trial, "DeadRelu", {"threshold_layer=59.9"}).exit_code, 1);
  const auto forty = Write({{Layer(kLayer, 8, {0, 0, 0, 0, 8, 8, 8, 8, 8, 8})}});
  EXPECT_EQ(RunRule(forty, "DeadRelu").exit_code, 0);
  EXPECT_EQ(RunRule(forty, "DeadRelu", {"threshold_layer=39"}).exit_code, 1);
}

// Each unit fires for 1 sample of 64 (1.5625%): alive at the default 1%, dead at 2%.
TEST_F(DeadReluTest, ThresholdInactivity) {
  const auto trial = Write({{Layer(kLayer, 64, {1, 1, 1, 1})}});
  EXPECT_EQ(RunRule(trial, "DeadRelu").exit_code, 0);
  const RuleRun run = RunRule(trial, "DeadRelu", {"threshold_inactivity=2"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.fired, std::vector<int64_t>{0});
}

// PyTorch names its layers ReLU: the default regex misses them (DOC-2023's example adds them).
TEST_F(DeadReluTest, TensorRegex) {
  const auto trial = Write({{Filled("layer1_ReLU_output", {8, 10}, 0.0)}});
  EXPECT_EQ(RunRule(trial, "DeadRelu").exit_code, 0);
  EXPECT_EQ(RunRule(trial, "DeadRelu", {"tensor_regex=.*relu_output|.*ReLU_output"}).exit_code, 1);
  EXPECT_EQ(RunRule(trial, "DeadRelu", {"tensor_regex=.*relu_output, layer1_ReLU"}).exit_code, 1) << "list of regexes";
  EXPECT_EQ(RunRule(trial, "DeadRelu", {"tensor_regex=None"}).exit_code, 0) << "None means the default regex";
}

// Rank 1: a batch of one, each element a unit (dead when <= 0).
TEST_F(DeadReluTest, RankOneTensorIsOneSample) {
  const auto sixty = Write({{TensorData{kLayer, {10}, {0, 0, 0, -1, -2, 0, 1, 2, 3, 4}}}});
  EXPECT_EQ(RunRule(sixty, "DeadRelu").exit_code, 1);
  const auto forty = Write({{TensorData{kLayer, {10}, {0, 0, -1, -2, 1, 1, 1, 2, 3, 4}}}});
  EXPECT_EQ(RunRule(forty, "DeadRelu").exit_code, 0);
}

TEST_F(DeadReluTest, AnyNumericDtype) {
  for (const DType dtype : {DType::kFloat64, DType::kFloat16, DType::kInt32, DType::kInt64, DType::kUInt8, DType::kBool}) {
    SCOPED_TRACE(static_cast<int>(dtype));
    const auto dead = Write({{Filled(kLayer, {4, 5}, 0.0, dtype)}});
    EXPECT_EQ(RunRule(dead, "DeadRelu").exit_code, 1);
    const auto alive = Write({{Filled(kLayer, {4, 5}, 3.0, dtype)}});
    EXPECT_EQ(RunRule(alive, "DeadRelu").exit_code, 0);
  }
}

TEST_F(DeadReluTest, MissingTensorNeverFires) {
  const auto none = Write({{Filled("loss", {1}, 0.0)}, {Filled("loss", {1}, 0.0)}});
  const RuleRun run = RunRule(none, "DeadRelu");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  // The layer saved only at step 2 (dead there): steps 0 and 1 have nothing to check.
  const auto late = Write({{}, {}, {Filled(kLayer, {8, 10}, 0.0)}});
  EXPECT_EQ(RunRule(late, "DeadRelu").fired, std::vector<int64_t>{2});
}

TEST_F(DeadReluTest, NameMatchesCaseInsensitivelyAndInSnakeCase) {
  const auto trial = Write({{Filled(kLayer, {8, 10}, 0.0)}});
  EXPECT_EQ(RunRule(trial, "dead_relu").exit_code, 1);
  EXPECT_EQ(RunRule(trial, "deadrelu").exit_code, 1);
}

TEST_F(DeadReluTest, InvalidParametersAreConfigErrors) {
  const auto trial = Write({{Healthy()}});
  for (const auto& [param, key] : std::vector<std::pair<std::string, std::string>>{
           {"threshold_layer=abc", "threshold_layer"},
           {"threshold_layer=150", "threshold_layer"},
           {"threshold_inactivity=-1", "threshold_inactivity"},
           {"threshold_inactivity=nan", "threshold_inactivity"},
           {"tensor_regex=(", "tensor_regex"}}) {
    SCOPED_TRACE(param);
    const RuleRun run = RunRule(trial, "DeadRelu", {param});
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_NE(run.err.find(key), std::string::npos) << run.err;
  }
}

}  // namespace
}  // namespace litmus::testing
