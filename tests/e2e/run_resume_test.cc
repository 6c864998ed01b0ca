// End-to-end: resuming `litmus run` after a crash (docs/run.md, "Resume"). The runner is killed
// with SIGKILL at random moments while the trial grows and restarted each time with the same
// command; the events it leaves must hold each firing exactly once and its final report and
// status must equal those of an uninterrupted run. Also: a different job in the same output
// folder is refused until --fresh, and a finished job's rerun starts over.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "litmus/format/trial_layout.h"
#include "litmus/writer/writer.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

constexpr int kSteps = 150;
const std::set<int> kBig = {5, 17, 40, 77, 101, 149};  // steps where gradient/w has mean |x| 100

// A trial of TRAIN steps where gradient/w has mean |x| 100 at kBig and 0.01 elsewhere, written
// a few steps at a time (Write) so that it grows while the job runs; Finish adds the end marker.
class GrowingTrial {
 public:
  explicit GrowingTrial(const std::string& dir, bool end_marker = true) {
    writer::WriterOptions options;
    options.overwrite_existing = true;
    options.save_config = writer::SaveConfig::Every(1);
    if (!end_marker) options.end_marker = writer::EndMarkerPolicy::kNever;
    auto w = writer::Writer::Open(dir, options);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    if (w.ok()) writer_ = std::move(w).value();
    if (writer_) {
      EXPECT_TRUE(writer_->SetMode(Mode::kTrain).ok());
    }
  }
  // Writes steps up to (not including) `until`.
  void Write(int until) {
    for (; writer_ && next_ < std::min(until, kSteps); ++next_) {
      ASSERT_TRUE(writer_->BeginStep().ok());
      const std::vector<float> values(8, kBig.count(next_) ? 100.0f : 0.01f);
      ASSERT_TRUE(writer_->SaveTensor("gradient/w", values, {8}).ok());
      ASSERT_TRUE(writer_->EndStep().ok());
    }
  }
  void Finish() {
    Write(kSteps);
    if (writer_) {
      ASSERT_TRUE(writer_->Close().ok());
    }
  }

 private:
  std::unique_ptr<writer::Writer> writer_;
  int next_ = 0;
};

// Two rules: CustomGradientRule (fires at kBig) and FiresEveryNth, which keeps state (fires at
// every 7th step it evaluates), so a resume must replay its steps to fire where it should.
std::string JobYaml(const std::string& trial, const std::string& threshold = "10") {
  return "trial: " + trial + "\nkeep_going: true\npoll_interval_ms: 10\nrules:\n" +
         "  - rule: CustomGradientRule\n    plugin: " + std::string(LITMUS_CUSTOM_RULE_PLUGIN) +
         "\n    parameters: {threshold: \"" + threshold + "\"}\n" +
         "  - rule: FiresEveryNth\n    plugin: " + std::string(LITMUS_TEST_RULES_PLUGIN) +
         "\n    parameters: {every: \"7\", tensor: gradient/w}\n";
}

std::vector<std::string> RunArgs(const fs::path& config, const fs::path& out, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {testing::LitmusBinary(), "run", "--config", config.string(), "--output-dir",
                                   out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

const std::vector<std::pair<std::string, std::string>> kEnv = {{"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"}};

std::vector<Json> Events(const fs::path& out) {
  std::vector<Json> events;
  std::ifstream in(out / "events.jsonl");
  for (std::string line; std::getline(in, line);) {
    Json event = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!event.is_discarded()) events.push_back(std::move(event));  // (a line being written)
  }
  return events;
}

// (rule, step) of every RuleEvaluationConditionMet event, in order.
std::vector<std::pair<std::string, int64_t>> Firings(const fs::path& out) {
  std::vector<std::pair<std::string, int64_t>> firings;
  for (const Json& e : Events(out)) {
    if (e["event"] == "RuleEvaluationConditionMet") firings.emplace_back(e["rule"], e["step"].get<int64_t>());
  }
  return firings;
}

Json Read(const fs::path& path) {
  std::ifstream in(path);
  return Json::parse(in);
}

// What must be equal between a resumed and an uninterrupted run: the reports, and each rule's
// status in status.json (times aside).
Json Verdict(const fs::path& out) {
  Json v;
  for (const char* rule : {"CustomGradientRule", "FiresEveryNth"}) {
    v[rule]["report"] = Read(out / "rule-reports" / (std::string(rule) + ".json"));
    v[rule]["report"].erase("Seconds");  // the time spent in the rule's calls (a measurement)
  }
  for (const Json& r : Read(out / "status.json")["rules"]) {
    v[r["RuleConfigurationName"].get<std::string>()]["status"] = r["RuleEvaluationStatus"];
    v[r["RuleConfigurationName"].get<std::string>()]["details"] = r["StatusDetails"];
  }
  return v;
}

TEST(RunResume, KilledAtRandomMomentsAndRestartedReportsEachFiringOnce) {
  testing::TempDir trial, out, reference, config_dir;
  config_dir.WriteFile("job.yaml", JobYaml(trial.str()));
  const fs::path config = config_dir.path() / "job.yaml";
  GrowingTrial growing(trial.str());

  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> delay_ms(0, 250);
  for (int i = 0; i < 20; ++i) {
    growing.Write((i + 1) * kSteps / 24);  // the trial grows between restarts (and is not finished)
    // Killed at a random moment once it has started (a loaded machine can take longer than the
    // whole delay to start a process; a kill before the first checkpoint is a fresh start again).
    const size_t events_before = Events(out.path()).size();
    testing::ChildProcess runner(RunArgs(config, out.path()), kEnv);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (Events(out.path()).size() <= events_before && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(random)));
    runner.Signal(SIGKILL);
    const testing::ProcessResult killed_run = runner.Wait(std::chrono::seconds(30));
    ASSERT_FALSE(killed_run.timed_out);
    EXPECT_EQ(killed_run.exit_code, 128 + SIGKILL) << "training has not ended: the job cannot have finished";
  }
  growing.Finish();
  const testing::ProcessResult last = testing::RunProcess(RunArgs(config, out.path()), kEnv);
  ASSERT_EQ(last.exit_code, 1) << last.err;

  const testing::ProcessResult uninterrupted = testing::RunProcess(RunArgs(config, reference.path()), kEnv);
  ASSERT_EQ(uninterrupted.exit_code, 1) << uninterrupted.err;

  // Every firing exactly once, the same as without the kills.
  const auto firings = Firings(out.path());
  const std::set<std::pair<std::string, int64_t>> distinct(firings.begin(), firings.end());
  EXPECT_EQ(distinct.size(), firings.size()) << "a firing was reported twice";
  const auto expected = Firings(reference.path());
  const std::set<std::pair<std::string, int64_t>> expected_set(expected.begin(), expected.end());
  EXPECT_EQ(distinct, expected_set);
  std::set<int64_t> custom;
  for (const auto& [rule, step] : expected) {
    if (rule == "CustomGradientRule") custom.insert(step);
  }
  EXPECT_EQ(custom, std::set<int64_t>(kBig.begin(), kBig.end()));
  EXPECT_EQ(Verdict(out.path()), Verdict(reference.path()));
  // Restarts are marked; the uninterrupted run has none.
  int resumed = 0;
  for (const Json& e : Events(out.path())) resumed += e["event"] == "RuleResumed" ? 1 : 0;
  EXPECT_GT(resumed, 0);
  for (const Json& e : Events(reference.path())) EXPECT_NE(e["event"], "RuleResumed");
}

TEST(RunResume, AnotherJobInTheSameFolderIsRefusedUntilFresh) {
  testing::TempDir trial, out, config_dir;
  GrowingTrial(trial.str(), /*end_marker=*/false).Finish();  // training still running
  config_dir.WriteFile("job.yaml", JobYaml(trial.str()));
  config_dir.WriteFile("other.yaml", JobYaml(trial.str(), "20"));
  {
    testing::ChildProcess runner(RunArgs(config_dir.path() / "job.yaml", out.path()), kEnv);
    // Killed once it has checkpointed past the first firing.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (Firings(out.path()).size() < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // one more checkpoint
    runner.Signal(SIGKILL);
    runner.Wait();
  }
  ASSERT_TRUE(fs::exists(out.path() / "checkpoint.json"));
  const std::string events_before = testing::ReadWholeFile(out.path() / "events.jsonl");
  const std::string status_before = testing::ReadWholeFile(out.path() / "status.json");
  const testing::ProcessResult refused =
      testing::RunProcess(RunArgs(config_dir.path() / "other.yaml", out.path()), kEnv);
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("interrupted job"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--fresh"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("threshold"), std::string::npos) << "says what differs: " << refused.err;
  // The interrupted job's files are left as they were (it can still be resumed).
  EXPECT_EQ(testing::ReadWholeFile(out.path() / "events.jsonl"), events_before);
  EXPECT_EQ(testing::ReadWholeFile(out.path() / "status.json"), status_before);

  // --fresh starts over (the events of the interrupted job are gone); training then ends.
  ASSERT_TRUE(writer::MarkTrainingEnded(nullptr, trial.str()).ok());
  const testing::ProcessResult fresh =
      testing::RunProcess(RunArgs(config_dir.path() / "other.yaml", out.path(), {"--fresh"}), kEnv);
  EXPECT_EQ(fresh.exit_code, 1) << fresh.err;
  int started = 0;
  for (const Json& e : Events(out.path())) {
    started += e["event"] == "RuleStarted" ? 1 : 0;
    EXPECT_NE(e["event"], "RuleResumed");
  }
  EXPECT_EQ(started, 2);
}

// A stop in the middle of a step (here a record the rule waits for) leaves that step unevaluated:
// the resumed job evaluates it and finds what is there.
TEST(RunResume, AStepAStopInterruptedIsEvaluatedOnResume) {
  testing::TempDir trial, out, saved;
  GrowingTrial(trial.str(), /*end_marker=*/false).Finish();
  const fs::path events = trial.path() / layout::EventFilePath(5, "worker_0");  // kBig holds step 5
  fs::copy_file(events, saved.path() / "events5");
  fs::remove(events);  // (an upload on its way: waited for)
  const std::vector<std::string> args = {testing::LitmusBinary(), "run", "--trial", trial.str(), "--plugin",
                                         LITMUS_CUSTOM_RULE_PLUGIN, "--rule", "CustomGradientRule", "--param",
                                         "threshold=10", "--poll-interval-ms", "10", "--output-dir", out.str()};
  // (Waited for as long as it takes: the retry budget would turn it into damage.)
  const std::vector<std::pair<std::string, std::string>> env = {{"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"},
                                                                {"SMDEBUG_MISSING_EVENT_FILE_RETRY_LIMIT", "1000000"}};
  {
    testing::ChildProcess runner(args, env);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // at step 5, waiting for its record
    runner.Signal(SIGTERM);
    const testing::ProcessResult stopped = runner.Wait();
    ASSERT_EQ(stopped.exit_code, 143) << stopped.err;
  }
  EXPECT_LE(Read(out.path() / "checkpoint.json")["rules"][0]["cursor"].get<int64_t>(), 5);
  fs::copy_file(saved.path() / "events5", events);
  ASSERT_TRUE(writer::MarkTrainingEnded(nullptr, trial.str()).ok());
  const testing::ProcessResult resumed = testing::RunProcess(args, env);
  EXPECT_EQ(resumed.exit_code, 1) << resumed.err;
  const auto firings = Firings(out.path());
  ASSERT_FALSE(firings.empty());
  EXPECT_EQ(firings.front().second, 5);
}

TEST(RunResume, AFinishedJobStartsOverWhenRunAgain) {
  testing::TempDir trial, out, config_dir;
  GrowingTrial(trial.str()).Finish();
  config_dir.WriteFile("job.yaml", JobYaml(trial.str()));
  for (int run = 0; run < 2; ++run) {
    const testing::ProcessResult result = testing::RunProcess(RunArgs(config_dir.path() / "job.yaml", out.path()), kEnv);
    EXPECT_EQ(result.exit_code, 1) << result.err;
  }
  const auto firings = Firings(out.path());
  const std::set<std::pair<std::string, int64_t>> distinct(firings.begin(), firings.end());
  EXPECT_EQ(distinct.size(), firings.size()) << "the second run appended to the first one's events";
  EXPECT_FALSE(Read(out.path() / "checkpoint.json")["finished"].is_null());
  EXPECT_TRUE(Read(out.path() / "checkpoint.json")["finished"].get<bool>());
}

}  // namespace
}  // namespace litmus
