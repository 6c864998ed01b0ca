// End-to-end: `litmus run` following a trial that grows while it runs. Writer threads (one per
// worker) add steps, then the end marker; the runner must evaluate every step exactly once, fire
// exactly where the data says, and end by itself (never hang), at once when the end marker appears.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "litmus/writer/writer.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using Json = nlohmann::json;

// Writes `steps` TRAIN steps for one worker: gradient/w has mean |x| = 100 at the steps in
// `big`, 0.01 otherwise. Sleeps between steps so the runner sees the trial grow.
void WriteWorker(const std::string& dir, const std::string& worker, int64_t num_workers, int steps,
                 const std::set<int>& big, std::chrono::milliseconds pause) {
  writer::WriterOptions options;
  options.worker = worker;
  options.num_workers = num_workers;
  options.overwrite_existing = true;  // the folder exists (the runner is already watching it)
  options.save_config = writer::SaveConfig::Every(1);
  auto w = writer::Writer::Open(dir, options);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->SetMode(Mode::kTrain).ok());
  for (int step = 0; step < steps; ++step) {
    ASSERT_TRUE((*w)->BeginStep().ok());
    const float v = big.count(step) ? 100.0f : 0.01f;
    const std::vector<float> values(8, v);
    ASSERT_TRUE((*w)->SaveTensor("gradient/w", values, {8}).ok());
    ASSERT_TRUE((*w)->EndStep().ok());
    std::this_thread::sleep_for(pause);
  }
  ASSERT_TRUE((*w)->Close().ok());
}

std::vector<int64_t> Fired(const std::filesystem::path& out) {
  std::vector<int64_t> steps;
  std::ifstream in(out / "events.jsonl");
  for (std::string line; std::getline(in, line);) {
    const Json e = Json::parse(line);
    if (e["event"] == "RuleEvaluationConditionMet") steps.push_back(e["step"].get<int64_t>());
  }
  return steps;
}

void RunLive(int num_workers) {
  testing::TempDir trial, out;
  const std::set<int> big = {5, 12};
  testing::ChildProcess runner(
      {testing::LitmusBinary(), "run", "--trial", trial.str(), "--plugin", LITMUS_CUSTOM_RULE_PLUGIN, "--rule",
       "CustomGradientRule", "--param", "threshold=10", "--keep-going", "--poll-interval-ms", "10",
       "--output-dir", out.str(), "--message-file", out.str() + "/message", "--failure-file",
       out.str() + "/failure"},
      {{"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0.2"}});
  std::vector<std::thread> writers;
  for (int w = 0; w < num_workers; ++w) {
    writers.emplace_back(WriteWorker, trial.str(), "worker_" + std::to_string(w), num_workers, 20, big,
                         std::chrono::milliseconds(15 + 10 * w));
  }
  for (auto& t : writers) t.join();
  if (num_workers > 1) {
    ASSERT_TRUE(writer::MarkTrainingEnded(nullptr, trial.str()).ok());
  }
  const testing::ProcessResult result = runner.Wait(std::chrono::seconds(120));
  ASSERT_FALSE(result.timed_out) << "the runner did not end after the end marker";
  EXPECT_EQ(result.exit_code, 1) << result.err << testing::ReadWholeFile(out.path() / "events.jsonl");
  EXPECT_EQ(Fired(out.path()), (std::vector<int64_t>{5, 12}));
  std::ifstream report(out.path() / "rule-reports" / "CustomGradientRule.json");
  const Json r = Json::parse(report);
  EXPECT_EQ(r["Datapoints"], 20) << "every step evaluated exactly once";
  EXPECT_EQ(r["RuleTriggered"], 2);
}

TEST(RunLive, OneWorker) { RunLive(1); }
TEST(RunLive, TwoWorkers) { RunLive(2); }

// Issue 16: the end marker of a local trial ends the job at once, not at the next poll. With a
// one-hour poll interval the runner evaluates the steps present at its start, then waits; the
// marker written after that must end it (before, the job slept out the hour: the Wait times out).
TEST(RunLive, EndMarkerEndsAnIdleWaitAtOnce) {
  testing::TempDir trial, out;
  {
    writer::WriterOptions options;
    options.save_config = writer::SaveConfig::Every(1);
    options.end_marker = writer::EndMarkerPolicy::kNever;  // training still running
    options.overwrite_existing = true;
    auto w = writer::Writer::Open(trial.str(), options);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    for (int step = 0; step < 3; ++step) {
      ASSERT_TRUE((*w)->BeginStep().ok());
      const std::vector<float> values(8, step == 2 ? 100.0f : 0.01f);
      ASSERT_TRUE((*w)->SaveTensor("gradient/w", values, {8}).ok());
      ASSERT_TRUE((*w)->EndStep().ok());
    }
    ASSERT_TRUE((*w)->Close().ok());
  }
  testing::ChildProcess runner(
      {testing::LitmusBinary(), "run", "--trial", trial.str(), "--plugin", LITMUS_CUSTOM_RULE_PLUGIN, "--rule",
       "CustomGradientRule", "--param", "threshold=10", "--keep-going", "--poll-interval-ms", "3600000",
       "--output-dir", out.str(), "--message-file", out.str() + "/message", "--failure-file",
       out.str() + "/failure"});
  for (int i = 0; i < 6000 && Fired(out.path()).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(Fired(out.path()), (std::vector<int64_t>{2})) << "the runner did not evaluate the last step";
  ASSERT_TRUE(writer::MarkTrainingEnded(nullptr, trial.str()).ok());
  const testing::ProcessResult result = runner.Wait(std::chrono::seconds(120));
  ASSERT_FALSE(result.timed_out) << "the runner slept through the end marker until its next poll";
  EXPECT_EQ(result.exit_code, 1) << result.err;
  std::ifstream report(out.path() / "rule-reports" / "CustomGradientRule.json");
  EXPECT_EQ(Json::parse(report)["Datapoints"], 3);
}

// Other trials: two finished trials that differ only at step 2; the rule reads both.
TEST(RunOtherTrials, RuleReadsTheOtherTrial) {
  testing::TempDir base, other, out;
  WriteWorker(base.str(), "worker_0", 1, 5, {}, std::chrono::milliseconds(0));
  WriteWorker(other.str(), "worker_0", 1, 5, {2}, std::chrono::milliseconds(0));
  for (bool from_environment : {false, true}) {
    std::vector<std::string> args = {testing::LitmusBinary(), "run", "--trial", base.str(), "--plugin",
                                     LITMUS_TEST_RULES_PLUGIN, "--rule", "DiffersFromOtherTrial", "--param",
                                     "tensor=gradient/w", "--keep-going", "--poll-interval-ms", "10",
                                     "--output-dir", out.str(), "--message-file", out.str() + "/message",
                                     "--failure-file", out.str() + "/failure"};
    std::vector<std::pair<std::string, std::string>> env = {{"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"}};
    if (from_environment) {
      env.push_back({"LITMUS_RULE_PARAMETERS", "{\"other_trial_0\": \"" + other.str() + "\"}"});
    } else {
      args.insert(args.end(), {"--other-trial", other.str()});
    }
    std::filesystem::remove(out.path() / "events.jsonl");
    const testing::ProcessResult result = testing::RunProcess(args, env);
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_EQ(Fired(out.path()), std::vector<int64_t>{2});
  }
}

}  // namespace
}  // namespace litmus
