// End-to-end: smdebug's fetch semantics on a trial that saved gradients only as reductions (a
// reduction_config without save_raw_tensor). A rule that requires them without saying it reads
// only reductions skips those steps, as smdebug's RequiredTensors.fetch does; a rule that
// requires them with {.reductions_only = true} (ABI 1.2; the example CustomGradientRule) is
// evaluated and reads the saved reductions.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include "litmus/writer/writer.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using Json = nlohmann::json;

// Five TRAIN steps; gradient/w is saved only as its abs mean, 100 at step 2 and 0.01 elsewhere.
void WriteReductionsOnlyTrial(const std::string& dir) {
  writer::WriterOptions options;
  options.save_config = writer::SaveConfig::Every(1);
  writer::ReductionConfig reductions;
  reductions.abs_reductions = {layout::Reduction::kMean};
  reductions.save_raw_tensor = false;
  writer::CollectionConfig gradients;
  gradients.name = "gradients";
  gradients.include_regex = {"^gradient"};
  gradients.reduction_config = reductions;
  options.collections = {gradients};
  auto w = writer::Writer::Open(dir, options);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->SetMode(Mode::kTrain).ok());
  for (int step = 0; step < 5; ++step) {
    ASSERT_TRUE((*w)->BeginStep().ok());
    const std::vector<float> values(8, step == 2 ? 100.0f : 0.01f);
    ASSERT_TRUE((*w)->SaveTensor("gradient/w", values, {8}).ok());
    ASSERT_TRUE((*w)->EndStep().ok());
  }
  ASSERT_TRUE((*w)->Close().ok());
}

struct Outcome {
  int exit_code;
  std::string err;
  Json report;
};

Outcome RunLitmus(const std::string& trial, const std::string& plugin, const std::string& rule,
                  const std::vector<std::string>& params) {
  testing::TempDir out;
  std::vector<std::string> args = {testing::LitmusBinary(), "run", "--trial", trial, "--plugin", plugin,
                                   "--rule", rule, "--keep-going", "--output-dir", out.str(),
                                   "--message-file", out.str() + "/message", "--failure-file",
                                   out.str() + "/failure"};
  for (const std::string& p : params) args.insert(args.end(), {"--param", p});
  const testing::ProcessResult result = testing::RunProcess(args, {{"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"}});
  std::ifstream in(out.path() / "rule-reports" / (rule + ".json"));
  Json report = in ? Json::parse(in) : Json();
  return {result.exit_code, result.err, std::move(report)};
}

TEST(RunReductionsOnly, ARuleThatDoesNotSaySoSkipsTheStepsAsSmdebugDoes) {
  testing::TempDir trial;
  WriteReductionsOnlyTrial(trial.str());
  const Outcome o = RunLitmus(trial.str(), LITMUS_TEST_RULES_PLUGIN, "NeverFires", {"collection=gradients"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.report["Datapoints"], 0) << "every step needs a raw value it does not have";
}

TEST(RunReductionsOnly, ARuleThatReadsOnlyReductionsIsEvaluated) {
  testing::TempDir trial;
  WriteReductionsOnlyTrial(trial.str());
  const Outcome o = RunLitmus(trial.str(), LITMUS_CUSTOM_RULE_PLUGIN, "CustomGradientRule", {"threshold=10"});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_EQ(o.report["Datapoints"], 5);
  EXPECT_EQ(o.report["RuleTriggered"], 1);
  EXPECT_EQ(o.report["Details"]["abs_mean"], 100.0);
}

}  // namespace
}  // namespace litmus
