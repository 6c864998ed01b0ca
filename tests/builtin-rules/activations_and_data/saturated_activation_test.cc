// SaturatedActivation (docs/rules/SaturatedActivation.md) through the real `litmus run`: firing step, quiet
// trials, tanh vs sigmoid ranges, the DOC-2020 tuple keys against the split keys, each parameter,
// missing tensors and invalid parameters.
#include <gtest/gtest.h>

#include "rule_test_support.h"

namespace litmus::testing {
namespace {

constexpr char kTanh[] = "layer0_tanh_input";
constexpr char kSigmoid[] = "layer1_sigmoid_input";

// A batch x units layer whose unit u takes `inside` for the first active[u] samples and
// `outside` for the rest.
TensorData Layer(const std::string& name, int64_t batch, const std::vector<int64_t>& active, double inside = 0.5,
                 double outside = 20.0) {
  TensorData t{name, {batch, static_cast<int64_t>(active.size())}, {}, DType::kFloat32};
  for (int64_t b = 0; b < batch; ++b) {
    for (const int64_t a : active) t.values.push_back(b < a ? inside : outside);
  }
  return t;
}

TensorData Saturated(const std::string& name, double value = 20.0) { return Filled(name, {16, 8}, value); }
TensorData Healthy(const std::string& name) { return Layer(name, 16, std::vector<int64_t>(8, 8), 0.5, -0.5); }

class SaturatedActivationTest : public ::testing::Test {
 protected:
  std::filesystem::path Write(const std::vector<StepData>& steps,
                              const std::vector<writer::CollectionConfig>& collections = {}) {
    const auto path = dir_.path() / ("trial" + std::to_string(trials_++));
    WriteTrial(path, steps, collections);
    return path;
  }
  int Exit(const std::filesystem::path& trial, const std::vector<std::string>& params = {}) {
    const RuleRun run = RunRule(trial, "SaturatedActivation", params);
    EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.err;
    return run.exit_code;
  }
  TempDir dir_;
  int trials_ = 0;
};

TEST_F(SaturatedActivationTest, FiresAtTheFirstSaturatedStep) {
  const auto trial = Write({{Healthy(kTanh)}, {Healthy(kTanh)}, {Saturated(kTanh)}, {Saturated(kTanh)}});
  const RuleRun run = RunRule(trial, "SaturatedActivation");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.fired, std::vector<int64_t>{2});
  EXPECT_EQ(run.report["RuleTriggered"], 1);
  EXPECT_EQ(run.report["Violations"], 1);
  EXPECT_EQ(run.report["Details"][kTanh], 100.0);
  EXPECT_EQ(run.report["Datapoints"], 3);
}

TEST_F(SaturatedActivationTest, HealthyLayersDoNotFire) {
  const auto trial = Write({{Healthy(kTanh), Healthy(kSigmoid)}, {Healthy(kTanh), Healthy(kSigmoid)}});
  const RuleRun run = RunRule(trial, "SaturatedActivation");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.report["Datapoints"], 2);
}

// -20 is outside tanh's (-9.4999, 9.4999) but inside sigmoid's (-23, 16.99999); 18 the reverse.
TEST_F(SaturatedActivationTest, RangeFollowsTheActivationInTheName) {
  EXPECT_EQ(Exit(Write({{Saturated(kTanh, -20.0)}})), 1);
  EXPECT_EQ(Exit(Write({{Saturated(kSigmoid, -20.0)}})), 0);
  EXPECT_EQ(Exit(Write({{Saturated(kSigmoid, 18.0)}})), 1);
  EXPECT_EQ(Exit(Write({{Saturated(kSigmoid, -24.0)}})), 1);
  EXPECT_EQ(Exit(Write({{Saturated("Block_TANH_in", -20.0)}}), {"tensor_regex=Block_TANH"}), 1)
      << "the kind is found case-insensitively";
  // The bounds are exclusive: a value equal to the bound is saturated.
  EXPECT_EQ(Exit(Write({{Filled(kTanh, {4, 2}, 9.4999, DType::kFloat64)}})), 1);
  EXPECT_EQ(Exit(Write({{Filled(kTanh, {4, 2}, 9.4998, DType::kFloat64)}})), 0);
}

TEST_F(SaturatedActivationTest, SelectedTensorWithoutKindIsSkipped) {
  const auto trial = Write({{Saturated("dense_input", 100.0)}});
  const RuleRun run = RunRule(trial, "SaturatedActivation", {"tensor_regex=dense_input"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("neither tanh nor sigmoid"), std::string::npos) << run.err;
}

TEST_F(SaturatedActivationTest, SplitKeys) {
  const auto tanh = Write({{Saturated(kTanh, 20.0)}});
  EXPECT_EQ(Exit(tanh, {"threshold_tanh_max=25"}), 0);
  EXPECT_EQ(Exit(tanh, {"threshold_tanh_max=19"}), 1);
  const auto low = Write({{Saturated(kTanh, -5.0)}});
  EXPECT_EQ(Exit(low), 0);
  EXPECT_EQ(Exit(low, {"threshold_tanh_min=-4"}), 1);
  const auto sigmoid = Write({{Saturated(kSigmoid, -20.0)}});
  EXPECT_EQ(Exit(sigmoid, {"threshold_sigmoid_min=-10"}), 1);
  EXPECT_EQ(Exit(Write({{Saturated(kSigmoid, 10.0)}}), {"threshold_sigmoid_max=5"}), 1);
}

// [CONFLICT] DOC-2020's tuple keys are accepted, with or without parentheses.
TEST_F(SaturatedActivationTest, TupleKeys) {
  const auto seven = Write({{Saturated(kTanh, 7.0)}});
  EXPECT_EQ(Exit(seven), 0);
  EXPECT_EQ(Exit(seven, {"threshold_tanh=(-5, 5)"}), 1);
  EXPECT_EQ(Exit(seven, {"threshold_tanh=-5,5"}), 1);
  EXPECT_EQ(Exit(seven, {"threshold_tanh= ( -8 , 8 ) "}), 0);
  const auto sigmoid = Write({{Saturated(kSigmoid, -20.0)}});
  EXPECT_EQ(Exit(sigmoid, {"threshold_sigmoid=(-10,10)"}), 1);
  EXPECT_EQ(Exit(sigmoid, {"threshold_sigmoid=None"}), 0) << "None: the split keys' defaults";
}

// Explicit split keys win over the tuple, bound by bound.
TEST_F(SaturatedActivationTest, SplitKeysWinOverTheTuple) {
  const auto seven = Write({{Saturated(kTanh, 7.0)}});
  EXPECT_EQ(Exit(seven, {"threshold_tanh=(-5,5)", "threshold_tanh_max=10"}), 0);
  const auto minus_seven = Write({{Saturated(kTanh, -7.0)}});
  EXPECT_EQ(Exit(minus_seven, {"threshold_tanh=(-5,5)", "threshold_tanh_max=10"}), 1) << "min still from the tuple";
  EXPECT_EQ(Exit(minus_seven, {"threshold_tanh=(-5,5)", "threshold_tanh_min=-10"}), 0);
}

// 8 units, `saturated` of them never active.
TEST_F(SaturatedActivationTest, ThresholdLayer) {
  const auto half = Write({{Layer(kTanh, 16, {0, 0, 0, 0, 16, 16, 16, 16})}});
  EXPECT_EQ(Exit(half), 0) << "50% is not > 50%";
  EXPECT_EQ(Exit(half, {"threshold_layer=49"}), 1);
  const auto most = Write({{Layer(kTanh, 16, {0, 0, 0, 0, 0, 16, 16, 16})}});
  EXPECT_EQ(Exit(most), 1);
  EXPECT_EQ(Exit(most, {"threshold_layer=62.5"}), 0);
}

// Each unit active for 1 sample of 64 (1.5625%).
TEST_F(SaturatedActivationTest, ThresholdInactivity) {
  const auto trial = Write({{Layer(kTanh, 64, {1, 1, 1, 1})}});
  EXPECT_EQ(Exit(trial), 0);
  EXPECT_EQ(Exit(trial, {"threshold_inactivity=2"}), 1);
}

// collection_names selects tensors the default regex does not; the selection is the union.
TEST_F(SaturatedActivationTest, CollectionNames) {
  const writer::CollectionConfig acts = Collection("my_activations", "^block_");
  const auto trial = Write({{Saturated("block_tanh_pre"), Healthy(kTanh)}}, {acts});
  EXPECT_EQ(Exit(trial), 0);
  const RuleRun run = RunRule(trial, "SaturatedActivation", {"collection_names=my_activations"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_TRUE(run.report["Details"].contains("block_tanh_pre"));
  EXPECT_EQ(Exit(trial, {"collection_names=no_such_collection"}), 0);
  // Union: the default regex still selects a saturated layer1 next to the collection.
  const auto both = Write({{Healthy("block_tanh_pre"), Saturated(kSigmoid, 30.0)}}, {acts});
  EXPECT_EQ(Exit(both, {"collection_names=my_activations"}), 1);
  // "None" means not set, so the default regex still applies (docs/rules/semantics.md §1.2); a regex that
  // matches nothing leaves the collection alone.
  EXPECT_EQ(Exit(both, {"collection_names=my_activations", "tensor_regex=None"}), 1);
  EXPECT_EQ(Exit(both, {"collection_names=my_activations", "tensor_regex=^no_such_tensor$"}), 0);
}

TEST_F(SaturatedActivationTest, TensorRegex) {
  const auto trial = Write({{Saturated("act_tanh_pre")}});
  EXPECT_EQ(Exit(trial), 0);
  EXPECT_EQ(Exit(trial, {"tensor_regex=tanh_pre"}), 1);
}

TEST_F(SaturatedActivationTest, MissingTensorNeverFires) {
  EXPECT_EQ(Exit(Write({{Filled("loss", {1}, 100.0)}, {}})), 0);
  EXPECT_EQ(RunRule(Write({{}, {Healthy(kTanh)}, {Saturated(kTanh)}}), "SaturatedActivation").fired,
            std::vector<int64_t>{2});
}

TEST_F(SaturatedActivationTest, InvalidParametersAreConfigErrors) {
  const auto trial = Write({{Healthy(kTanh)}});
  for (const auto& [params, key] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"threshold_tanh=abc"}, "threshold_tanh"},
           {{"threshold_tanh=(1,2,3)"}, "threshold_tanh"},
           {{"threshold_tanh=(5,-5)"}, "threshold_tanh"},
           {{"threshold_sigmoid=(-1"}, "threshold_sigmoid"},
           {{"threshold_tanh_min=10"}, "threshold_tanh_min/threshold_tanh_max"},
           {{"threshold_sigmoid_max=x"}, "threshold_sigmoid_max"},
           {{"threshold_layer=-1"}, "threshold_layer"},
           {{"threshold_inactivity=101"}, "threshold_inactivity"},
           {{"tensor_regex=[a-"}, "tensor_regex"}}) {
    SCOPED_TRACE(params.front());
    const RuleRun run = RunRule(trial, "SaturatedActivation", params);
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_NE(run.err.find(key + ":"), std::string::npos) << run.err;
  }
}

}  // namespace
}  // namespace litmus::testing
