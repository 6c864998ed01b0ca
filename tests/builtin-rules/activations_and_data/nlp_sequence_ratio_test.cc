// NLPSequenceRatio (docs/rules/NLPSequenceRatio.md) through the real `litmus run`: firing step, quiet
// trials, token_values / token_thresholds_percent pairing (shorter thresholds reuse the last,
// longer ones are cut, with a warning), tensor_regex, dtypes, missing tensors, invalid parameters.
#include <gtest/gtest.h>

#include "rule_test_support.h"

namespace litmus::testing {
namespace {

constexpr char kInput[] = "embedding0_input_0";

// A 4 x 10 batch of token ids: the first counts[v] elements (in order of `tokens`) take token
// value tokens[i], the rest are 7.
TensorData Sequences(const std::string& name, const std::vector<double>& tokens, const std::vector<int>& counts,
                     DType dtype = DType::kInt32) {
  TensorData t{name, {4, 10}, std::vector<double>(40, 7.0), dtype};
  size_t next = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    for (int c = 0; c < counts[i]; ++c) t.values[next++] = tokens[i];
  }
  return t;
}

// `percent` (a multiple of 2.5) of the 40 elements are padding 0.
TensorData Padded(double percent, const std::string& name = kInput) {
  return Sequences(name, {0}, {static_cast<int>(percent * 40 / 100)});
}

class NLPSequenceRatioTest : public ::testing::Test {
 protected:
  std::filesystem::path Write(const std::vector<StepData>& steps) {
    const auto path = dir_.path() / ("trial" + std::to_string(trials_++));
    WriteTrial(path, steps);
    return path;
  }
  int Exit(const std::filesystem::path& trial, const std::vector<std::string>& params = {}) {
    const RuleRun run = RunRule(trial, "NLPSequenceRatio", params);
    EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.err;
    return run.exit_code;
  }
  TempDir dir_;
  int trials_ = 0;
};

TEST_F(NLPSequenceRatioTest, FiresAtTheFirstStepWithTooMuchPadding) {
  const auto trial = Write({{Padded(20)}, {Padded(60)}, {Padded(80)}});
  const RuleRun run = RunRule(trial, "NLPSequenceRatio");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.fired, std::vector<int64_t>{1});
  EXPECT_EQ(run.report["Details"][kInput], nlohmann::json({{"0", 60.0}}));
  EXPECT_EQ(run.report["Violations"], 1);
}

TEST_F(NLPSequenceRatioTest, LittlePaddingDoesNotFire) {
  const RuleRun run = RunRule(Write({{Padded(20)}, {Padded(50)}, {Padded(0)}}), "NLPSequenceRatio");
  EXPECT_EQ(run.exit_code, 0) << run.err << " (50% is not > 50%)";
  EXPECT_EQ(run.report["Datapoints"], 3);
}

TEST_F(NLPSequenceRatioTest, TokenThresholdsPercent) {
  const auto trial = Write({{Padded(30)}});
  EXPECT_EQ(Exit(trial), 0);
  EXPECT_EQ(Exit(trial, {"token_thresholds_percent=25"}), 1);
}

// Token 1 (unknown) is 60%, token 0 10%.
TEST_F(NLPSequenceRatioTest, SeveralTokensPairWithThresholdsByPosition) {
  const auto trial = Write({{Sequences(kInput, {0, 1}, {4, 24})}});
  EXPECT_EQ(Exit(trial, {"token_values=0,1"}), 1) << "the single threshold 50 is reused for token 1";
  EXPECT_EQ(Exit(trial, {"token_values=0, 1", "token_thresholds_percent=50, 70"}), 0);
  EXPECT_EQ(Exit(trial, {"token_values=0,1", "token_thresholds_percent=5,70"}), 1) << "token 0: 10% > 5%";
  const RuleRun run = RunRule(trial, "NLPSequenceRatio", {"token_values=0,1", "token_thresholds_percent=50,55"});
  EXPECT_EQ(run.report["Details"][kInput], nlohmann::json({{"0", 10.0}, {"1", 60.0}}));
}

// DOC-2020's defaults themselves mismatch: one token, two thresholds. Extras are ignored, with a
// warning; so are missing ones (the last is reused).
TEST_F(NLPSequenceRatioTest, MismatchedListsWarn) {
  const auto trial = Write({{Padded(20)}});
  RuleRun run = RunRule(trial, "NLPSequenceRatio", {"token_thresholds_percent=50,10"});
  EXPECT_EQ(run.exit_code, 0) << run.err << " (the threshold 10 belongs to no token)";
  EXPECT_NE(run.err.find("the extra thresholds are ignored"), std::string::npos) << run.err;
  run = RunRule(trial, "NLPSequenceRatio", {"token_values=0,1,2"});
  EXPECT_NE(run.err.find("the last threshold is reused"), std::string::npos) << run.err;
  run = RunRule(trial, "NLPSequenceRatio");
  EXPECT_EQ(run.err.find("token_thresholds_percent"), std::string::npos) << run.err;
}

TEST_F(NLPSequenceRatioTest, TokenValuesAreNumbersComparedAsDoubles) {
  const auto trial = Write({{Sequences(kInput, {-1.0}, {30}, DType::kFloat32)}});
  EXPECT_EQ(Exit(trial), 0);
  EXPECT_EQ(Exit(trial, {"token_values=-1"}), 1);
  EXPECT_EQ(Exit(trial, {"token_values=-1.0"}), 1);
  const auto ids = Write({{Sequences(kInput, {3}, {30}, DType::kInt64)}});
  EXPECT_EQ(Exit(ids, {"token_values=3"}), 1);
}

TEST_F(NLPSequenceRatioTest, TensorRegex) {
  const auto trial = Write({{Padded(90, "bert_input_ids")}});
  EXPECT_EQ(Exit(trial), 0);
  EXPECT_EQ(Exit(trial, {"tensor_regex=input_ids"}), 1);
  EXPECT_EQ(Exit(trial, {"tensor_regex=nothing, input_ids"}), 1);
}

TEST_F(NLPSequenceRatioTest, AnyMatchingTensorFires) {
  const RuleRun run = RunRule(Write({{Padded(10, "a_input_ids"), Padded(90, "b_input_ids")}}), "NLPSequenceRatio",
                              {"tensor_regex=_input_ids"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_FALSE(run.report["Details"].contains("a_input_ids"));
  EXPECT_TRUE(run.report["Details"].contains("b_input_ids"));
}

TEST_F(NLPSequenceRatioTest, MissingTensorNeverFires) {
  EXPECT_EQ(Exit(Write({{Filled("loss", {1}, 0.0)}, {}})), 0);
  EXPECT_EQ(RunRule(Write({{}, {}, {Padded(100)}}), "NLPSequenceRatio").fired, std::vector<int64_t>{2});
}

TEST_F(NLPSequenceRatioTest, InvalidParametersAreConfigErrors) {
  const auto trial = Write({{Padded(10)}});
  for (const auto& [param, key] : std::vector<std::pair<std::string, std::string>>{
           {"token_values=abc", "token_values"},
           {"token_thresholds_percent=150", "token_thresholds_percent"},
           {"token_thresholds_percent=50,x", "token_thresholds_percent"},
           {"tensor_regex=(", "tensor_regex"}}) {
    SCOPED_TRACE(param);
    const RuleRun run = RunRule(trial, "NLPSequenceRatio", {param});
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_NE(run.err.find(key + ":"), std::string::npos) << run.err;
  }
  // "None" and "" mean not set: the defaults apply, exactly as if the keys were absent.
  const RuleRun defaults = RunRule(trial, "NLPSequenceRatio");
  for (const std::string unset : {"None", ""}) {
    SCOPED_TRACE(unset);
    const RuleRun run = RunRule(trial, "NLPSequenceRatio",
                                {"token_values=" + unset, "token_thresholds_percent=" + unset});
    EXPECT_EQ(run.exit_code, defaults.exit_code) << run.err;
    EXPECT_EQ(run.fired, defaults.fired);
  }
}

}  // namespace
}  // namespace litmus::testing
