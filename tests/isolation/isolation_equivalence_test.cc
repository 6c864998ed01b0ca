// Isolation and calls of several steps change where and how rules run, never what they find:
// every built-in tensor rule in one job, run with `--isolation none` and with rules in worker
// processes (the default), each evaluating one step per call or several (`--rule-batch-steps`,
// requirement lists predicted, and checked where the rule runs before each step), gives the same
// statuses, rule reports, series and events (times aside) on simulated training runs and
// smdebug's own trials as in-process rules called one step at a time. The worker reads the values the runner decoded through the shared memory and a table
// of them per step (isolation/tensor_table.h); a table entry that pointed at the wrong tensor,
// step or reduction would change a verdict here.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/run_process.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

const std::vector<std::string> kRules = {
    "VanishingGradient", "ExplodingTensor", "AllZero",        "TensorVariance",      "UnchangedTensor",
    "WeightUpdateRatio", "LossNotDecreasing", "Overfit",      "Overtraining",        "PoorWeightInitialization",
    "StalledTrainingRule", "SaturatedActivation", "DeadRelu", "CheckInputImages",    "NLPSequenceRatio",
    "ClassImbalance",    "Confusion",         "FeatureImportanceOverweight", "TreeDepth"};

Json ReadJsonFile(const fs::path& path) {
  std::ifstream in(path);
  return Json::parse(in);
}

// What a job found, without what differs from run to run (times, durations).
struct Findings {
  Json statuses = Json::array();          // per rule: name, status, details, step, progress, warnings
  std::map<std::string, Json> reports;    // rule-reports/<rule>.json
  std::map<std::string, Json> series;     // rule-reports/<rule>.series.json (what the rule watched)
  std::vector<Json> events;               // events.jsonl without "time"
  int exit_code = -1;
  std::string err;  // what litmus printed on stderr
};

// The job of `config` (YAML) with `--isolation isolation --keep-going` and `extra`.
Findings RunConfig(const fs::path& config, const std::string& isolation, const fs::path& out,
                   const std::vector<std::string>& extra) {
  std::vector<std::string> args = {testing::LitmusBinary(), "run", "--config", config.string(), "--isolation",
                                   isolation, "--keep-going", "--output-dir", out.string(), "--logging-level", "error"};
  args.insert(args.end(), extra.begin(), extra.end());
  const testing::ProcessResult result =
      testing::RunProcess(args, {{"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"}, {"LITMUS_RULE_PARAMETERS", ""}});
  Findings f;
  f.exit_code = result.exit_code;
  f.err = result.err;
  const Json status = ReadJsonFile(out / "status.json");
  for (const Json& rule : status.at("rules")) {
    f.statuses.push_back({rule.at("RuleConfigurationName"), rule.at("RuleEvaluationStatus"), rule.at("StatusDetails"),
                          rule.at("step"), rule.at("Progress"), rule.at("Warnings")});
  }
  for (const fs::directory_entry& e : fs::directory_iterator(out / "rule-reports")) {
    const std::string file = e.path().filename().string();
    const bool is_series = file.ends_with(".series.json");
    Json& doc = (is_series ? f.series : f.reports)[file];
    doc = ReadJsonFile(e.path());
    if (!is_series) doc.erase("Seconds");  // the time spent in the rule's calls (a measurement)
  }
  std::ifstream events(out / "events.jsonl");
  for (std::string line; std::getline(events, line);) {
    Json event = Json::parse(line);
    event.erase("time");
    f.events.push_back(std::move(event));
  }
  return f;
}

// Every built-in tensor rule on `trial`.
Findings Run(const std::string& trial, const std::string& isolation, const fs::path& out,
             const std::vector<std::string>& extra = {}) {
  const fs::path config = out.parent_path() / (out.filename().string() + ".yaml");
  {
    std::ofstream yaml(config);
    yaml << "trial: " << trial << "\nrules:\n";
    for (const std::string& rule : kRules) yaml << "  - {rule: " << rule << "}\n";
    yaml << "  - {rule: SimilarAcrossRuns, parameters: {other_trials: \"" << trial << "\"}}\n";
  }
  Findings f = RunConfig(config, isolation, out, extra);
  EXPECT_TRUE(f.exit_code == 0 || f.exit_code == 1) << isolation << ": " << f.err;
  return f;
}

void ExpectSame(const Findings& isolated, const Findings& in_process, size_t rules = kRules.size() + 1) {
  EXPECT_EQ(isolated.exit_code, in_process.exit_code);
  ASSERT_EQ(isolated.statuses.size(), rules);
  EXPECT_EQ(isolated.statuses, in_process.statuses);
  ASSERT_EQ(isolated.reports.size(), rules);
  for (const auto& [name, report] : in_process.reports) {
    ASSERT_TRUE(isolated.reports.contains(name)) << name;
    EXPECT_EQ(isolated.reports.at(name), report) << name;
  }
  // What the rules watched crosses the process boundary unchanged (ABI 1.3 report_series).
  EXPECT_FALSE(in_process.series.empty());
  EXPECT_EQ(isolated.series.size(), in_process.series.size());
  for (const auto& [name, series] : in_process.series) {
    ASSERT_TRUE(isolated.series.contains(name)) << name;
    EXPECT_EQ(isolated.series.at(name), series) << name;
  }
  // Events of rules evaluated in parallel may interleave differently: compared as sorted lists.
  std::vector<std::string> a, b;
  for (const Json& e : isolated.events) a.push_back(e.dump());
  for (const Json& e : in_process.events) b.push_back(e.dump());
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
  EXPECT_GT(a.size(), 2 * rules) << "started and ended events at least";
}

void ExpectSameFindings(const std::string& trial) {
  testing::TempDir work;
  const Findings one_step = Run(trial, "none", work.path() / "none1", {"--rule-batch-steps", "1"});
  // In process, a few steps per call and the default (16); isolated, one step per call too.
  for (const char* isolation : {"none", "process"}) {
    for (const char* batch : {"1", "4", "16"}) {
      if (std::string(isolation) == "none" && std::string(batch) == "1") continue;
      SCOPED_TRACE(std::string("--isolation ") + isolation + " --rule-batch-steps " + batch);
      ExpectSame(Run(trial, isolation, work.path() / (std::string(isolation) + batch), {"--rule-batch-steps", batch}),
                 one_step);
    }
  }
}

class SimulatedScenario : public ::testing::TestWithParam<std::string> {};

TEST_P(SimulatedScenario, SameFindingsIsolatedAndInProcess) {
  testing::TempDir trials;
  const fs::path trial = trials.path() / GetParam();
  const testing::ProcessResult written = testing::RunProcess(
      {LITMUS_SIMULATED_TRAINING, trial.string(), "--scenario", GetParam()});
  ASSERT_EQ(written.exit_code, 0) << written.err;
  ExpectSameFindings(trial.string());
}

INSTANTIATE_TEST_SUITE_P(Isolation, SimulatedScenario, ::testing::Values("healthy", "exploding", "vanishing", "flat"));

// A trial that feeds every rule (TRAIN and EVAL phases, losses, activations, labels, XGBoost
// tensors): rules whose lists differ by mode, or by the distance to the previous step of a mode,
// and steps a rule skips for a missing tensor, inside calls of several steps.
// simulated_training --scenario healthy with `args`, into dir/`name`.
fs::path WriteSimulatedTrial(const testing::TempDir& dir, const std::string& name, std::vector<std::string> args) {
  const fs::path trial = dir.path() / name;
  args.insert(args.begin(), {LITMUS_SIMULATED_TRAINING, trial.string(), "--scenario", "healthy"});
  const testing::ProcessResult written = testing::RunProcess(args);
  EXPECT_EQ(written.exit_code, 0) << written.err;
  return trial;
}

// simulated_training --feed-all-rules, 300 TRAIN steps (and an EVAL pair after each 10), in `dir`.
fs::path WriteTrialFeedingEveryRule(const testing::TempDir& dir) {
  return WriteSimulatedTrial(dir, "fed", {"--feed-all-rules", "--steps", "300"});
}

TEST(IsolationEquivalence, TrialFeedingEveryRule) {
  testing::TempDir trials;
  const fs::path trial = WriteTrialFeedingEveryRule(trials);
  ASSERT_FALSE(HasFailure());
  ExpectSameFindings(trial.string());
}

// Calls of several steps stay long on a trial whose TRAIN/EVAL pattern changes every few steps
// (10 TRAIN, 2 EVAL): WeightUpdateRatio's and UnchangedTensor's lists (the previous step of a
// mode) are predicted one period back (RequirementHistory::RepeatDistance), and
// WeightUpdateRatio's global_step query about the previous TRAIN step is answered ahead with each
// call, so the workers hold many steps a call and ask nothing during them. (Before: two or more
// calls a period, and one query a TRAIN step.) Counts from litmus's debug line per rule.
TEST(CallsOfSeveralSteps, StayLongWhenListsFollowTheModes) {
  testing::TempDir dir;
  const fs::path trial = WriteTrialFeedingEveryRule(dir);
  ASSERT_FALSE(HasFailure());
  constexpr int64_t kSteps = 360;  // 300 TRAIN steps and an EVAL pair after each 10
  for (const std::string rule : {"WeightUpdateRatio", "UnchangedTensor"}) {
    SCOPED_TRACE(rule);
    const testing::ProcessResult run = testing::RunProcess(
        {testing::LitmusBinary(), "run", "--trial", trial.string(), "--rule", rule, "--keep-going", "--output-dir",
         (dir.path() / rule).string(), "--logging-level", "debug"},
        {{"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"}, {"LITMUS_RULE_PARAMETERS", ""}});
    ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.err;
    std::smatch m;
    const std::regex line("rule " + rule + ": ([0-9]+) steps in ([0-9]+) invoke calls, ([0-9]+) queries during them");
    ASSERT_TRUE(std::regex_search(run.err, m, line)) << run.err;
    const int64_t calls = std::stoll(m[2]);
    const int64_t queries = std::stoll(m[3]);
    EXPECT_LE(calls, kSteps / 8) << m[0];
    EXPECT_LE(queries, 3) << m[0];
  }
}

// simulated_training's healthy run of 360 TRAIN steps (432 steps with the EVAL pairs), no trees,
// in `dir`.
fs::path WriteHealthyTrial(const testing::TempDir& dir) {
  return WriteSimulatedTrial(dir, "healthy", {"--steps", "360"});
}

// dir/job.yaml: a job of `trial` with `rules` (the YAML list's lines).
fs::path WriteJobConfig(const testing::TempDir& dir, const fs::path& trial, const std::string& rules) {
  const fs::path config = dir.path() / "job.yaml";
  std::ofstream yaml(config);
  yaml << "trial: " << trial.string() << "\nrules:\n" << rules;
  return config;
}

// A rule that cannot declare its list at a step (TreeDepth on a trial without trees: the step is
// skipped) does not cut the calls of the rules beside it to one step each: its step's outcome is
// applied on its own, the others take their steps in calls of several. (Before: every rule of
// the job ran one step a call on such a trial: 432 calls for its 432 steps.) Its worker is asked
// about the steps of a call in one request.
TEST(CallsOfSeveralSteps, StayLongBesideARuleThatCannotDeclare) {
  testing::TempDir dir;
  const fs::path trial = WriteHealthyTrial(dir);
  ASSERT_FALSE(HasFailure());
  const fs::path config = WriteJobConfig(dir, trial, "  - {rule: TreeDepth}\n  - {rule: UnchangedTensor}\n");
  const testing::ProcessResult run = testing::RunProcess(
      {testing::LitmusBinary(), "run", "--config", config.string(), "--keep-going", "--output-dir",
       (dir.path() / "out").string(), "--logging-level", "debug"},
      {{"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"}, {"LITMUS_RULE_PARAMETERS", ""}});
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.err;
  std::smatch m;
  const std::regex line("rule UnchangedTensor: ([0-9]+) steps in ([0-9]+) invoke calls");
  ASSERT_TRUE(std::regex_search(run.err, m, line)) << run.err;
  const int64_t steps = std::stoll(m[1]);
  const int64_t calls = std::stoll(m[2]);
  EXPECT_GE(steps, 300) << m[0];
  EXPECT_LE(calls, steps / 8) << m[0];
  // TreeDepth's worker declares a call's steps in one request, not one request a step (before:
  // 432 requests).
  const std::regex tree_depth("rule TreeDepth: 0 steps in 0 invoke calls, 0 queries during them, ([0-9]+) "
                              "set_required_tensors calls");
  ASSERT_TRUE(std::regex_search(run.err, m, tree_depth)) << run.err;
  EXPECT_LE(std::stoll(m[1]), 432 / 8) << m[0];
  // TreeDepth saw every step and skipped it (no trees): a verdict without findings, no error.
  const Json status = ReadJsonFile(dir.path() / "out" / "status.json");
  bool tree_depth_seen = false;
  for (const Json& rule : status.at("rules")) {
    if (rule.at("RuleConfigurationName") != "TreeDepth") continue;
    tree_depth_seen = true;
    EXPECT_EQ(rule.at("RuleEvaluationStatus"), "NoIssuesFound") << rule.dump();
  }
  EXPECT_TRUE(tree_depth_seen) << status.dump();
  // The job's progress counts each of the trial's steps once (432: 360 TRAIN steps, 72 EVAL).
  EXPECT_EQ(status.at("Progress").at("StepsEvaluated"), 432) << status.dump();
  // TreeDepth alone: no call at all, every step taken (a job of one rule shows the rule's progress).
  const testing::ProcessResult alone = testing::RunProcess(
      {testing::LitmusBinary(), "run", "--trial", trial.string(), "--rule", "TreeDepth", "--output-dir",
       (dir.path() / "alone").string()},
      {{"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"}, {"LITMUS_RULE_PARAMETERS", ""}});
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  const Json alone_status = ReadJsonFile(dir.path() / "alone" / "status.json");
  EXPECT_EQ(alone_status.at("RuleEvaluationStatus"), "NoIssuesFound") << alone_status.dump();
  EXPECT_EQ(alone_status.at("Progress").at("LastStep"), 431) << alone_status.dump();
}

// The job of `config` (rules of the test_rules plugin among them) in process, one step per call:
// what the other ways of running it must find (ExpectSameInCallsOfSeveralSteps).
Findings RunOneStepInProcess(const fs::path& config, const testing::TempDir& dir) {
  return RunConfig(config, "none", dir.path() / "none",
                   {"--plugin", LITMUS_TEST_RULES_PLUGIN, "--rule-batch-steps", "1"});
}

// The same job in calls of several steps, in process and isolated, and isolated one step per
// call, finds what `one_step` (RunOneStepInProcess) found.
void ExpectSameInCallsOfSeveralSteps(const fs::path& config, const Findings& one_step, const testing::TempDir& dir,
                                     size_t rules = 3) {
  for (const char* isolation : {"none", "process"}) {
    for (const char* batch : {"1", "16"}) {
      if (std::string(isolation) == "none" && std::string(batch) == "1") continue;
      SCOPED_TRACE(std::string("--isolation ") + isolation + " --rule-batch-steps " + batch);
      ExpectSame(RunConfig(config, isolation, dir.path() / (std::string(isolation) + batch),
                           {"--plugin", LITMUS_TEST_RULES_PLUGIN, "--rule-batch-steps", batch}),
                 one_step, rules);
    }
  }
}

// Rules whose lists cannot be declared at most steps (FireAtStep with declare_every: the others
// are skipped) are asked about a call's steps in one round trip (protocol.h
// kRequiredTensorsSteps), beside rules invoked at every step: the outcomes are the in-process
// run's, with lists declared in the middle of a call (at the multiples) and a declaration that
// fails with an error (declare_error_at: the rule's Error at that step, not a skip).
TEST(CallsOfSeveralSteps, RulesThatCannotDeclareFindWhatTheyFindInProcess) {
  testing::TempDir dir;
  const fs::path trial = WriteHealthyTrial(dir);
  ASSERT_FALSE(HasFailure());
  const fs::path config = WriteJobConfig(
      dir, trial,
      "  - {rule: FireAtStep, name: every7, parameters: {fire_at_step: '100', declare_every: '7'}}\n"
      "  - {rule: FireAtStep, name: every5_error, parameters: {fire_at_step: '50', declare_every: '5', "
      "declare_error_at: '250'}}\n"
      "  - {rule: UnchangedTensor}\n");
  const Findings in_process = RunOneStepInProcess(config, dir);
  EXPECT_NE(in_process.exit_code, 0) << in_process.err;  // (the error outweighs the finding)
  EXPECT_NE(in_process.exit_code, 1) << in_process.err;
  ASSERT_EQ(in_process.statuses.size(), 3u);
  EXPECT_EQ(in_process.statuses[0][1], "IssuesFound") << in_process.statuses.dump();
  EXPECT_EQ(in_process.statuses[0][3], 105) << in_process.statuses.dump();  // the first multiple of 7 >= 100
  EXPECT_EQ(in_process.statuses[1][1], "Error") << in_process.statuses.dump();
  EXPECT_NE(in_process.statuses[1][2].get<std::string>().find("declare_error_at 250"), std::string::npos)
      << in_process.statuses.dump();
  ExpectSameInCallsOfSeveralSteps(config, in_process, dir);
}

// A rule whose list depends on what its calls found (FiresEveryNth with then_tensor: a gradient,
// saved at TRAIN steps only, until its first firing, then the loss, saved at every step): the
// lists predicted for the later steps of a call are wrong after a firing inside it. Checked
// before each step where the rule runs (its worker, or the in-process handle), the call stops
// there and the runner declares the step again; unchecked, the EVAL steps of that call would be
// skipped for the missing gradient, and the rule, which counts the steps it evaluated, would
// fire elsewhere.
TEST(CallsOfSeveralSteps, ListsThatDependOnTheRulesFindingsAreCheckedBeforeEachStep) {
  testing::TempDir dir;
  const fs::path trial = WriteHealthyTrial(dir);
  ASSERT_FALSE(HasFailure());
  const fs::path config = WriteJobConfig(
      dir, trial,
      "  - {rule: FiresEveryNth, parameters: {every: '25', tensor: gradient/MLP_fc1.bias, "
      "then_tensor: MSELoss_output_0}}\n"
      "  - {rule: UnchangedTensor}\n");
  const Findings in_process = RunOneStepInProcess(config, dir);
  ASSERT_EQ(in_process.exit_code, 1) << in_process.err;
  // The premise: 25 TRAIN steps (0-9, 12-21, 24-28: the EVAL steps 10, 11, 22, 23 skipped), a
  // firing at step 28, then every step, EVAL ones included: 53 (28 + 25).
  std::vector<int64_t> fired;
  for (const Json& e : in_process.events) {
    if (e.at("event") == "RuleEvaluationConditionMet" && e.at("rule") == "FiresEveryNth") fired.push_back(e.at("step"));
  }
  ASSERT_GE(fired.size(), 2u) << in_process.err;
  EXPECT_EQ(fired[0], 28);
  EXPECT_EQ(fired[1], 53);
  ExpectSameInCallsOfSeveralSteps(config, in_process, dir, 2);
}

TEST(IsolationEquivalence, SmdebugTrials) {
  for (const char* name : {"pt_exploding", "pt_ddp_two_workers", "pt_run_complete"}) {
    SCOPED_TRACE(name);
    ExpectSameFindings(testing::FixturePath(name).string());
  }
}

}  // namespace
}  // namespace litmus
