// End-to-end: `simulated_training --feed-all-rules` (the bench's trial for all 20 built-in rules,
// bench/run-bench.sh) feeds every built-in tensor rule: each one that compares tensors publishes
// what it compared (ABI 1.3 series) on that trial. The same job on a trial without the flag leaves
// several rules with nothing to compare, so the check tells the two apart.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "support/run_process.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const std::vector<std::string> kRules = {
    "VanishingGradient", "ExplodingTensor",   "AllZero",          "TensorVariance",
    "UnchangedTensor",   "WeightUpdateRatio", "LossNotDecreasing", "Overfit",
    "Overtraining",      "PoorWeightInitialization", "SaturatedActivation", "DeadRelu",
    "CheckInputImages",  "NLPSequenceRatio",  "ClassImbalance",   "Confusion",
    "FeatureImportanceOverweight", "TreeDepth", "SimilarAcrossRuns", "StalledTrainingRule"};
// Reads no tensor (only the arrival of steps): nothing to compare, nothing published.
const std::string kReadsNoTensor = "StalledTrainingRule";

// The rules that published no series point in a --keep-going job of all kRules on `trial`.
std::set<std::string> RulesWithoutSeries(const fs::path& trial, const fs::path& out) {
  const fs::path config = out.string() + ".yaml";
  {
    std::ofstream yaml(config);
    yaml << "trial: " << trial.string() << "\nrules:\n";
    for (const std::string& rule : kRules) {
      yaml << "  - {rule: " << rule;
      if (rule == "SimilarAcrossRuns") yaml << ", parameters: {other_trials: \"" << trial.string() << "\"}";
      if (rule == "TensorVariance") yaml << ", parameters: {max_threshold: \"1e30\"}";  // (as the bench)
      yaml << "}\n";
    }
  }
  const testing::ProcessResult run = testing::RunProcess(
      {testing::LitmusBinary(), "run", "--config", config.string(), "--keep-going", "--isolation", "none",
       "--output-dir", out.string(), "--logging-level", "error"},
      {{"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"}});
  EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.err;
  std::set<std::string> without;
  for (const std::string& rule : kRules) {
    std::ifstream in(out / "rule-reports" / (rule + ".series.json"));
    const Json series = Json::parse(in, nullptr, /*allow_exceptions=*/false);
    bool any = false;
    if (series.is_object()) {
      for (const Json& s : series.value("series", Json::array())) any = any || s.value("total_points", 0) > 0;
    }
    if (!any) without.insert(rule);
  }
  return without;
}

fs::path Simulate(const fs::path& dir, bool feed) {
  std::vector<std::string> args = {LITMUS_SIMULATED_TRAINING, (dir / "trial").string(), "--scenario", "healthy",
                                   "--steps", "60"};
  if (feed) args.push_back("--feed-all-rules");
  const testing::ProcessResult made = testing::RunProcess(args);
  EXPECT_EQ(made.exit_code, 0) << made.err;
  return dir / "trial";
}

TEST(SimulatedTrainingFeeds, EveryRuleThatReadsTensorsComparesSomething) {
  testing::TempDir fed, plain;
  EXPECT_EQ(RulesWithoutSeries(Simulate(fed.path(), true), fed.path() / "out"),
            std::set<std::string>{kReadsNoTensor});
  // Without the flag the inputs, labels, trees and activations are missing.
  const std::set<std::string> starved = RulesWithoutSeries(Simulate(plain.path(), false), plain.path() / "out");
  for (const char* rule : {"ClassImbalance", "Confusion", "DeadRelu", "TreeDepth", "NLPSequenceRatio"}) {
    EXPECT_TRUE(starved.contains(rule)) << rule;
  }
}

}  // namespace
}  // namespace litmus
