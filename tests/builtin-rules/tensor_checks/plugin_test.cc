// The litmus_tensor_checks plugin as users meet it, through the real `litmus` binary from the
// build tree without --plugin: `litmus rules` lists and describes the seven rules from the plugin's
// metadata; names match case-insensitively and in snake_case; unknown keys give one warning;
// RuleParameters holds the effective values; the five per-step rules run together from one YAML.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "support/run_process.h"
#include "support/temp_dir.h"
#include "tensor_checks_support.h"

namespace litmus::testing {
namespace {

using ::testing::ContainsRegex;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::vector<std::pair<std::string, std::string>> kNoPluginPath = {{"LITMUS_PLUGIN_PATH", ""}};

struct ParamRow {
  std::string key, type, default_value;
};

const std::vector<std::pair<std::string, std::vector<ParamRow>>>& RuleTable() {
  static const auto* table = new std::vector<std::pair<std::string, std::vector<ParamRow>>>{
      {"VanishingGradient", {{"threshold", "float", "0.0000001"}}},
      {"ExplodingTensor",
       {{"collection_names", "list", "(empty list)"}, {"tensor_regex", "list", "(empty list)"}, {"only_nan", "bool", "False"}}},
      {"AllZero", {{"collection_names", "list", "(empty list)"}, {"tensor_regex", "list", "(empty list)"}, {"threshold", "float", "100"}}},
      {"TensorVariance",
       {{"collection_names", "list", "(empty list)"},
        {"tensor_regex", "list", "(empty list)"},
        {"max_threshold", "float", "None"},
        {"min_threshold", "float", "None"}}},
      {"UnchangedTensor",
       {{"collection_names", "list", "(empty list)"},
        {"tensor_regex", "list", "(empty list)"},
        {"num_steps", "int", "3"},
        {"rtol", "float", "1e-05"},
        {"atol", "float", "1e-08"},
        {"equal_nan", "bool", "False"}}},
      {"WeightUpdateRatio",
       {{"num_steps", "int", "None"},
        {"large_threshold", "float", "10.0"},
        {"small_threshold", "float", "0.00000001"},
        {"epsilon", "float", "0.000000001"}}},
      {"SimilarAcrossRuns", {{"collection_names", "list", "(empty list)"}, {"tensor_regex", "list", "(empty list)"}}},
  };
  return *table;
}

TEST(TensorChecksPlugin, RulesListsEveryRuleWithItsDescription) {
  const ProcessResult result = RunProcess({LitmusBinary(), "rules"}, kNoPluginPath);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const auto& [rule, params] : RuleTable()) {
    EXPECT_THAT(result.out, ContainsRegex("\n" + rule + " +litmus_tensor_checks +Fires when ")) << rule;
  }
}

TEST(TensorChecksPlugin, RulesNameShowsEveryParameterWithTypeDefaultAndMeaning) {
  for (const auto& [rule, params] : RuleTable()) {
    const ProcessResult result = RunProcess({LitmusBinary(), "rules", rule}, kNoPluginPath);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_THAT(result.out, HasSubstr(rule + " 1.0.0\n"));
    EXPECT_THAT(result.out, HasSubstr("litmus_tensor_checks.so"));
    for (const ParamRow& p : params) {
      std::string default_pattern;  // the default, its regex metacharacters escaped
      for (const char c : p.default_value) {
        if (c == '.' || c == '"' || c == '(' || c == ')') default_pattern += '\\';
        default_pattern += c;
      }
      // key, type, default and a non-empty meaning on one line.
      EXPECT_THAT(result.out, ContainsRegex("\n +" + p.key + " +" + p.type + " +" + default_pattern + " +[a-zA-Z]"))
          << rule << " " << p.key << "\n" << result.out;
    }
    const auto rows = static_cast<size_t>(std::count(result.out.begin(), result.out.end(), '\n'));
    EXPECT_EQ(rows, 6 + params.size()) << "no parameter beyond the spec's\n" << result.out;
  }
}

TEST(TensorChecksPlugin, NamesMatchCaseInsensitivelyAndInSnakeCase) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Filled("fc.weight", {2}, 0.0)}}});
  for (const char* name : {"AllZero", "allzero", "ALLZERO", "all_zero"}) {
    const RuleRun run = RunRule(trial.path(), name);
    EXPECT_EQ(run.exit_code, 1) << name << ": " << run.err;
    EXPECT_EQ(run.status["rule"], "AllZero") << name;
  }
  const RuleRun snake = RunRule(trial.path(), "vanishing_gradient");
  EXPECT_EQ(snake.exit_code, 0) << snake.err;
  EXPECT_EQ(snake.status["rule"], "VanishingGradient");
}

TEST(TensorChecksPlugin, UnknownKeysGiveOneWarningListingThem) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Filled("fc.weight", {2}, 1.0)}}});
  const RuleRun run = RunRule(trial.path(), "AllZero", {"nym_steps=3", "use_loss_collection=True", "threshold=90"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("rule AllZero: unknown parameters 'nym_steps', 'use_loss_collection' (ignored); "
                                 "known: collection_names, tensor_regex, threshold"));
  size_t warnings = 0;
  for (size_t at = run.err.find("unknown parameter"); at != std::string::npos;
       at = run.err.find("unknown parameter", at + 1)) {
    ++warnings;
  }
  EXPECT_EQ(warnings, 1u) << run.err;
  EXPECT_EQ(run.report["RuleParameters"], "collection_names:\ntensor_regex:\nthreshold:90\n");
}

TEST(TensorChecksPlugin, InvalidValuesExitTwoNamingTheKey) {
  TempDir trial;
  WriteTrial(trial.path(), {{Mode::kTrain, {Filled("fc.weight", {2}, 1.0)}}});
  const RuleRun run = RunRule(trial.path(), "UnchangedTensor", {"num_steps=three"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("num_steps: expected an integer, got 'three'"));
  EXPECT_EQ(run.status["RuleEvaluationStatus"], "Error");
}

// The bench's job (bench/run-bench.sh) on a small trial: five rules in one process, each firing
// where its own condition first holds.
TEST(TensorChecksPlugin, FivePerStepRulesInOneConfig) {
  TempDir trial;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  WriteTrial(trial.path(), {{Mode::kTrain, {Values("gradient/a", {1, -1}), Values("gradient/b", {2, 3})}},
                            {Mode::kTrain, {Values("gradient/a", {1, -1}), Values("gradient/b", {0, 0})}},
                            {Mode::kTrain, {Values("gradient/a", {1, -1}), Values("gradient/b", {nan, 0})}},
                            {Mode::kTrain, {Values("gradient/a", {1, -1}), Values("gradient/b", {5, 50})}}});
  const std::string yaml = "trial: " + trial.str() + R"(
rules:
  - {name: vanishing, rule: VanishingGradient}
  - {name: exploding, rule: ExplodingTensor}
  - {name: all-zero, rule: AllZero}
  - {name: variance, rule: TensorVariance, parameters: {max_threshold: "100"}}
  - {name: unchanged, rule: UnchangedTensor}
)";
  const RuleRun run = RunConfig(yaml, "variance");
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired_by_rule, ::testing::UnorderedElementsAre(std::pair<std::string, int64_t>{"vanishing", 1},
                                                                 std::pair<std::string, int64_t>{"all-zero", 1},
                                                                 std::pair<std::string, int64_t>{"exploding", 2},
                                                                 std::pair<std::string, int64_t>{"unchanged", 2},
                                                                 std::pair<std::string, int64_t>{"variance", 3}));
  EXPECT_EQ(run.status["rules"].size(), 5u);
  EXPECT_EQ(run.report["Details"]["gradient/b"], 506.25);
}

}  // namespace
}  // namespace litmus::testing
