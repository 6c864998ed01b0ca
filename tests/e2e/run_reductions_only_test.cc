// End-to-end: smdebug's fetch semantics on a trial that saved gradients only as reductions (a
// reduction_config without save_raw_tensor). A rule that requires them without saying it reads
// only reductions skips those steps, as smdebug's RequiredTensors.fetch does; a rule that
// requires them with {.reductions_only = true} (ABI 1.2; the example CustomGradientRule) is
// evaluated and reads the saved reductions.
#include <cmath>
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
                  const std::vector<std::string>& params, const std::vector<std::string>& extra = {}) {
  testing::TempDir out;
  std::vector<std::string> args = {testing::LitmusBinary(), "run", "--trial", trial, "--plugin", plugin,
                                   "--rule", rule, "--keep-going", "--output-dir", out.str(),
                                   "--message-file", out.str() + "/message", "--failure-file",
                                   out.str() + "/failure"};
  for (const std::string& p : params) args.insert(args.end(), {"--param", p});
  args.insert(args.end(), extra.begin(), extra.end());
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

// Six TRAIN steps of three gradients of `elements` float32 each (20,000: 80 kB records, large
// enough for the runner to keep only a summary of a value wanted only for its reductions);
// gradient/b's values at step 4 are 100 times larger. Returns each step's mean |x| of gradient/b.
std::vector<double> WriteLargeGradientTrial(const std::string& dir, size_t elements = 20000) {
  writer::WriterOptions options;
  options.save_config = writer::SaveConfig::Every(1);
  writer::CollectionConfig gradients;
  gradients.name = "gradients";
  gradients.include_regex = {"^gradient"};
  options.collections = {gradients};
  auto w = writer::Writer::Open(dir, options);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  if (!w.ok()) return {};
  EXPECT_TRUE((*w)->SetMode(Mode::kTrain).ok());
  std::vector<double> b_means;
  uint32_t state = 12345;
  for (int step = 0; step < 6; ++step) {
    EXPECT_TRUE((*w)->BeginStep().ok());
    for (const char* name : {"gradient/a", "gradient/b", "gradient/c"}) {
      std::vector<float> values(elements);
      double sum = 0;
      for (float& x : values) {
        state = state * 1664525u + 1013904223u;
        x = (static_cast<float>(state >> 8) / 16777216.0f - 0.5f) * 0.01f;
        if (step == 4 && std::string_view(name) == "gradient/b") x *= 100.0f;
        sum += std::fabs(static_cast<double>(x));
      }
      if (std::string_view(name) == "gradient/b") b_means.push_back(sum / static_cast<double>(values.size()));
      EXPECT_TRUE((*w)->SaveTensor(name, values, {static_cast<int64_t>(elements)}).ok());
    }
    EXPECT_TRUE((*w)->EndStep().ok());
  }
  EXPECT_TRUE((*w)->Close().ok());
  return b_means;
}

constexpr const char* kSummarizedLine = "values read only for their reductions (not kept)";

// The runner keeps only the reductions of large values that every rule requires for reductions
// only (Trial::Prefetch's summaries); a rule that reads such a value anyway gets its data, whose
// mean |x| equals the reduction it was given, in worker processes and in process alike (and its
// values are kept whole from then on).
TEST(RunReductionsOnly, ValuesKeptOnlyAsReductionsAreStillReadWhole) {
  testing::TempDir trial;
  ASSERT_EQ(WriteLargeGradientTrial(trial.str()).size(), 6u);
  for (const char* isolation : {"process", "none"}) {
    SCOPED_TRACE(isolation);
    const Outcome o = RunLitmus(trial.str(), LITMUS_TEST_RULES_PLUGIN, "ReductionMatchesValue", {"collection=gradients"},
                                {"--isolation", isolation, "--logging-level", "debug"});
    EXPECT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(o.report["Datapoints"], 6);
    EXPECT_EQ(o.report["RuleTriggered"], 0) << o.report.dump();
    // The runner learns that the rule reads values when it first asks for one that was
    // summarized: the first step's are (their reductions are not known yet either), and the
    // next step is read once the rule's first call has returned, whole.
    EXPECT_NE(o.err.find(std::string(": 3 ") + kSummarizedLine), std::string::npos) << "step 0's only: " << o.err;
    // A rule that requires the raw values: they are kept.
    const Outcome raw = RunLitmus(trial.str(), LITMUS_TEST_RULES_PLUGIN, "ReductionMatchesValue",
                                  {"collection=gradients", "reductions_only=false"},
                                  {"--isolation", isolation, "--logging-level", "debug"});
    EXPECT_EQ(raw.exit_code, 0) << raw.err;
    EXPECT_EQ(raw.report["Datapoints"], 6);
    EXPECT_EQ(raw.err.find(kSummarizedLine), std::string::npos) << raw.err;
  }
}

// CustomGradientRule on values kept only as reductions fires where the data says: at step 4,
// with gradient/b's mean |x|.
TEST(RunReductionsOnly, CustomGradientRuleOnValuesKeptOnlyAsReductions) {
  testing::TempDir trial;
  const std::vector<double> b_means = WriteLargeGradientTrial(trial.str());
  ASSERT_EQ(b_means.size(), 6u);
  for (const char* isolation : {"process", "none"}) {
    SCOPED_TRACE(isolation);
    const Outcome o = RunLitmus(trial.str(), LITMUS_CUSTOM_RULE_PLUGIN, "CustomGradientRule", {"threshold=0.1"},
                                {"--isolation", isolation, "--logging-level", "debug"});
    EXPECT_EQ(o.exit_code, 1) << o.err;
    EXPECT_EQ(o.report["Datapoints"], 6);
    EXPECT_EQ(o.report["RuleTriggered"], 1);
    EXPECT_EQ(o.report["Details"]["tensor"], "gradient/b");
    EXPECT_NEAR(o.report["Details"]["abs_mean"].get<double>(), b_means[4], 1e-9 * b_means[4]);
    EXPECT_NE(o.err.find(kSummarizedLine), std::string::npos) << o.err;
  }
}

// A call of several steps to a rule's worker (--rule-batch-steps) holds about 1 MiB of values;
// values kept only as summaries count as their whole size there, since the next steps' may be
// read whole (by a rule that reads them anyway): with 1.2 MB of values a step, each call is one
// step. (Counted as the few bytes a summary keeps, a call held 16 steps, 19 MB of values when
// they were read whole, more than the shared memory holds.)
TEST(RunReductionsOnly, CallsOfStepsKeptAsSummariesAreSizedByTheirWholeValues) {
  testing::TempDir trial;
  ASSERT_EQ(WriteLargeGradientTrial(trial.str(), /*elements=*/100000).size(), 6u);
  const Outcome o =
      RunLitmus(trial.str(), LITMUS_CUSTOM_RULE_PLUGIN, "CustomGradientRule", {"threshold=10"}, {"--logging-level", "debug"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.report["Datapoints"], 6);
  EXPECT_NE(o.err.find(kSummarizedLine), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("6 steps in 6 invoke calls"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace litmus
