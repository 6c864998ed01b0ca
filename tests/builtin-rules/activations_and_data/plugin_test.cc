// The litmus_activations_and_data plugin as users meet it: `litmus rules` lists its six rules
// from the build tree without --plugin, `litmus rules NAME` shows every key of the spec with its
// default, and one `litmus run --config` YAML job runs several of the rules on one trial.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "rule_test_support.h"
#include "support/run_process.h"

namespace litmus::testing {
namespace {

// The line of `litmus rules NAME` output describing parameter `key`, or "".
std::string ParamLine(const std::string& output, const std::string& key) {
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first == key) return line;
  }
  return "";
}

TEST(ActivationsAndDataPlugin, ListsItsRules) {
  const ProcessResult result = RunProcess({LitmusBinary(), "rules"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const char* rule :
       {"SaturatedActivation", "DeadRelu", "CheckInputImages", "NLPSequenceRatio", "ClassImbalance", "Confusion"}) {
    EXPECT_NE(ParamLine(result.out, rule).find("litmus_activations_and_data"), std::string::npos)
        << rule << " in\n" << result.out;
  }
}

// Every key of the rule pages (docs/rules/SaturatedActivation.md ... Confusion.md) with its type and default.
TEST(ActivationsAndDataPlugin, DescribesEveryParameterWithTypeAndDefault) {
  const std::map<std::string, std::vector<std::vector<std::string>>> expected = {
      {"SaturatedActivation",
       {{"collection_names", "list", "(empty list)"},
        {"tensor_regex", "list", ".*tanh_input|.*sigmoid_input"},
        {"threshold_tanh", "list", "(empty list)"},
        {"threshold_sigmoid", "list", "(empty list)"},
        {"threshold_tanh_min", "float", "-9.4999"},
        {"threshold_tanh_max", "float", "9.4999"},
        {"threshold_sigmoid_min", "float", "-23"},
        {"threshold_sigmoid_max", "float", "16.99999"},
        {"threshold_inactivity", "float", "1.0"},
        {"threshold_layer", "float", "50.0"}}},
      {"DeadRelu",
       {{"tensor_regex", "list", ".*relu_output"},
        {"threshold_inactivity", "float", "1.0"},
        {"threshold_layer", "float", "50.0"}}},
      {"CheckInputImages",
       {{"threshold_mean", "float", "0.2"},
        {"threshold_samples", "int", "500"},
        {"regex", "string", ".*hybridsequential0_input_0"},
        {"channel", "int", "1"}}},
      {"NLPSequenceRatio",
       {{"tensor_regex", "list", ".*embedding0_input_0"},
        {"token_values", "list", "0"},
        {"token_thresholds_percent", "list", "50"}}},
      {"ClassImbalance",
       {{"threshold_imbalance", "float", "10"},
        {"threshold_misprediction", "float", "0.7"},
        {"samples", "int", "500"},
        {"argmax", "bool", "False"},
        {"labels_regex", "string", ".*labels"},
        {"predictions_regex", "string", ".*predictions"}}},
      {"Confusion",
       {{"category_no", "int", "None"},
        {"labels", "string", "labels"},
        {"predictions", "string", "predictions"},
        {"labels_collection", "string", "labels"},
        {"predictions_collection", "string", "predictions"},
        {"min_diag", "float", "0.9"},
        {"max_off_diag", "float", "0.1"}}},
  };
  for (const auto& [rule, params] : expected) {
    const ProcessResult result = RunProcess({LitmusBinary(), "rules", rule});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    for (const std::vector<std::string>& param : params) {
      // Columns are separated by two or more spaces (a default may hold one: "(empty list)").
      const std::string line = ParamLine(result.out, param[0]);
      std::vector<std::string> cells;
      const std::regex gap(" {2,}");
      const size_t start = line.find_first_not_of(' ');
      const std::string body = start == std::string::npos ? "" : line.substr(start);
      for (std::sregex_token_iterator it(body.begin(), body.end(), gap, -1), end; it != end; ++it) cells.push_back(*it);
      cells.resize(4);
      const std::string& type = cells[1];
      const std::string& default_value = cells[2];
      const std::string& description = cells[3];
      EXPECT_EQ(type, param[1]) << rule << " " << param[0] << "\n" << result.out;
      EXPECT_EQ(default_value, param[2]) << rule << " " << param[0] << "\n" << result.out;
      EXPECT_GT(description.size(), 10u) << rule << " " << param[0] << " has no description";
    }
  }
}

// The YAML form of docs/rules/*.md: several rules, each with its own parameters, on one trial.
TEST(ActivationsAndDataPlugin, SeveralRulesInOneYamlJob) {
  TempDir dir;
  const std::vector<double> labels = [] {
    std::vector<double> v(990, 0.0);
    v.insert(v.end(), 10, 1.0);
    return v;
  }();
  std::vector<StepData> steps;
  for (int s = 0; s < 3; ++s) {
    StepData step = {Filled("dense0_relu_output", {8, 10}, s == 1 ? 0.0 : 1.0),
                     Filled("layer0_tanh_input", {8, 4}, 0.1)};
    if (s == 2) {
      step.push_back(TensorData{"labels", {1000}, labels, DType::kInt64});
      step.push_back(TensorData{"predictions", {1000}, labels, DType::kInt64});
    }
    steps.push_back(step);
  }
  WriteTrial(dir.path() / "trial", steps);
  dir.WriteFile("job.yaml", "trial: " + (dir.path() / "trial").string() +
                                "\n"
                                "rules:\n"
                                "  - name: dead-relu\n"
                                "    rule: DeadRelu\n"
                                "    parameters: {threshold_layer: \"40\"}\n"
                                "  - name: saturation\n"
                                "    rule: SaturatedActivation\n"
                                "    parameters:\n"
                                "      threshold_tanh: \"(-0.5, 0.5)\"\n"
                                "  - name: imbalance\n"
                                "    rule: class_imbalance\n"
                                "    parameters: {samples: \"1000\"}\n");
  const RuleRun run = RunConfig(dir.path() / "job.yaml", "imbalance");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.report["Details"]["imbalance_ratio"], 99.0);
  EXPECT_EQ(run.fired_by_rule, (std::map<std::string, std::vector<int64_t>>{{"dead-relu", {1}}, {"imbalance", {2}}}))
      << "saturation never fires: 0.1 is inside (-0.5, 0.5)";
}

}  // namespace
}  // namespace litmus::testing
