// End-to-end: the real `litmus run` binary on the smdebug fixtures and on bad input. Checks exit
// codes, firing steps against smdebug's recorded verdicts, status.json / events.jsonl / message
// files, start/end steps, several workers, several rules, SIGTERM and the stop-signal file, and
// the rogue plugin gallery, how configuration errors are reported, "did you mean" hints, repeated
// parameters and what --help promises.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "support/job_files.h"
#include "support/run_process.h"
#include "support/series_json.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using Json = nlohmann::json;
using testing::ChildProcess;
using testing::LitmusBinary;
using testing::ProcessResult;
using testing::ReadEvents;
using testing::ReadJson;
using testing::RunProcess;

const std::vector<std::pair<std::string, std::string>> kFastEnd = {{"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"}};

std::vector<int64_t> FiredSteps(const std::filesystem::path& out, const std::string& rule = "") {
  std::vector<int64_t> steps;
  for (const Json& e : ReadEvents(out)) {
    if (e["event"] == "RuleEvaluationConditionMet" && (rule.empty() || e["rule"] == rule)) {
      steps.push_back(e["step"].get<int64_t>());
    }
  }
  return steps;
}

// A `litmus run` command writing everything under `out`.
std::vector<std::string> RunArgs(const std::filesystem::path& out, std::vector<std::string> extra) {
  std::vector<std::string> args = {LitmusBinary(), "run", "--output-dir", out.string(), "--message-file",
                                   (out / "message").string(), "--failure-file", (out / "failure").string(),
                                   "--poll-interval-ms", "20"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::string CustomRule() { return LITMUS_CUSTOM_RULE_PLUGIN; }
std::string TestRules() { return LITMUS_TEST_RULES_PLUGIN; }

// --keep-going firing lists vs smdebug's CustomGradientRule verdicts on every fixture.
TEST(RunCli, CustomGradientRuleAgreesWithSmdebugOnEveryFixture) {
  for (const char* fixture : {"pt_exploding", "synthetic_dtypes", "pt_ddp_two_workers", "pt_run_partial",
                              "pt_run_complete"}) {
    const auto dir = testing::FixturePath(fixture);
    const Json expected = ReadJson(dir.string() + ".expected.json");
    for (const std::string threshold : {"0.001", "0.1", "10.0"}) {
      SCOPED_TRACE(std::string(fixture) + " threshold " + threshold);
      const Json& verdicts = expected["rule_outcomes"]["rules"]["CustomGradientRule(threshold=" + threshold + ")"];
      std::set<int64_t> want_fired, want_quiet;
      for (const auto& [step, verdict] : verdicts.items()) {
        if (verdict == "triggered") want_fired.insert(std::stoll(step));
        if (verdict != "triggered" && verdict != "NameError") want_quiet.insert(std::stoll(step));
      }
      testing::TempDir out;
      std::vector<std::string> extra = {"--trial", dir.string(), "--plugin", CustomRule(), "--rule",
                                        "CustomGradientRule", "--param", "threshold=" + threshold, "--keep-going"};
      if (std::string(fixture) == "pt_run_partial") {
        // In progress: smdebug was only asked up to its last complete step, 8.
        extra.insert(extra.end(), {"--end-step", "9"});
      }
      const ProcessResult result = RunProcess(RunArgs(out.path(), extra), kFastEnd);
      ASSERT_FALSE(result.timed_out);
      const std::vector<int64_t> fired = FiredSteps(out.path());
      for (int64_t step : want_fired) {
        EXPECT_TRUE(std::count(fired.begin(), fired.end(), step)) << "smdebug fired at " << step << "; we did not";
      }
      for (int64_t step : fired) EXPECT_FALSE(want_quiet.count(step)) << "we fired at " << step << "; smdebug did not";
      EXPECT_EQ(result.exit_code, fired.empty() ? 0 : 1) << result.err;
      const Json status = ReadJson(out.path() / "status.json");
      EXPECT_EQ(status["RuleEvaluationStatus"], fired.empty() ? "NoIssuesFound" : "IssuesFound");
      // What it compared (ABI 1.3 series): each published point is smdebug's abs mean of that
      // gradient at that step (default worker: the smallest name), and the threshold is the parameter.
      const Json series = ReadJson(out.path() / "rule-reports" / "CustomGradientRule.series.json");
      EXPECT_EQ(testing::SeriesThreshold(series, "mean |gradient|", "above"), std::stod(threshold));
      size_t points = 0;
      for (const Json& s : series["series"]) {
        ASSERT_EQ(s["name"], "mean |gradient|");
        const Json& per_step = expected["tensors"][s["tensor"].get<std::string>()]["per_step"];
        for (const auto& [step, value] : testing::SeriesPoints(series, "mean |gradient|", s["tensor"])) {
          const Json& by_worker = per_step[std::to_string(step)]["by_worker"];
          const Json& abs_mean = by_worker.begin().value()["reductions"]["abs_mean"];
          if (abs_mean.contains("error")) continue;  // smdebug's NameError steps (as for the verdicts)
          const double want = testing::SeriesNumber(abs_mean["value"]);
          if (std::isnan(want) || std::isinf(want)) {
            EXPECT_EQ(std::isnan(value), std::isnan(want)) << s["tensor"] << " step " << step;
            if (std::isinf(want)) {
              EXPECT_EQ(value, want) << s["tensor"] << " step " << step;
            }
          } else {
            EXPECT_NEAR(value, want, 1e-5 * std::abs(want) + 1e-30) << s["tensor"] << " step " << step;
          }
          ++points;
        }
      }
      EXPECT_GT(points, 0u);
    }
  }
}

TEST(RunCli, FirstFiringEndsTheRule) {
  testing::TempDir out;
  const ProcessResult result = RunProcess(
      RunArgs(out.path(), {"--trial", testing::FixturePath("pt_exploding").string(), "--plugin", CustomRule(),
                           "--rule", "customgradientrule", "--param", "threshold=10"}),
      kFastEnd);
  ASSERT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(FiredSteps(out.path()), std::vector<int64_t>{4});
  const Json status = ReadJson(out.path() / "status.json");
  EXPECT_EQ(status["RuleEvaluationStatus"], "IssuesFound");
  EXPECT_EQ(status["RuleConfigurationName"], "CustomGradientRule");
  EXPECT_EQ(status["step"], 4);
  EXPECT_EQ(status["exit_code"], 1);
  const std::string message =
      "RuleEvaluationConditionMet: Evaluation of the rule CustomGradientRule at step 4 resulted in the condition "
      "being met\n";
  EXPECT_EQ(testing::ReadWholeFile(out.path() / "message"), message);
  EXPECT_EQ(testing::ReadWholeFile(out.path() / "failure"), message);
  const std::vector<Json> events = ReadEvents(out.path());
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.front()["event"], "RuleStarted");
  EXPECT_EQ(events.back()["event"], "RuleEnded");
  for (const Json& e : events) {
    for (const char* key : {"time", "event", "rule", "rule_class", "step", "mode", "mode_step", "message"}) {
      EXPECT_TRUE(e.contains(key)) << key << " missing in " << e.dump();
    }
    if (e["event"] == "RuleEvaluationConditionMet") {
      EXPECT_EQ(e["mode"], "TRAIN");
      EXPECT_EQ(e["mode_step"], 4);
      EXPECT_EQ(e["rule_class"], "CustomGradientRule");
    }
  }
  const Json report = ReadJson(out.path() / "rule-reports" / "CustomGradientRule.json");
  EXPECT_EQ(report["RuleTriggered"], 1);
  EXPECT_EQ(report["Datapoints"], 5);  // steps 0..4
}

TEST(RunCli, NoIssuesFound) {
  testing::TempDir out;
  const ProcessResult result = RunProcess(
      RunArgs(out.path(), {"--trial", testing::FixturePath("pt_run_complete").string(), "--plugin", CustomRule(),
                           "--rule", "CustomGradientRule", "--param", "threshold=1e9"}),
      kFastEnd);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(ReadJson(out.path() / "status.json")["RuleEvaluationStatus"], "NoIssuesFound");
  EXPECT_FALSE(std::filesystem::exists(out.path() / "message"));
  const Json report = ReadJson(out.path() / "rule-reports" / "CustomGradientRule.json");
  EXPECT_EQ(report["Datapoints"], 12);  // TRAIN steps; EVAL steps have no gradients
  EXPECT_EQ(report["RuleParameters"], "threshold:1e9\n");
}

TEST(RunCli, StartAndEndStep) {
  testing::TempDir out;
  const ProcessResult result = RunProcess(
      RunArgs(out.path(), {"--trial", testing::FixturePath("pt_exploding").string(), "--plugin", CustomRule(),
                           "--rule", "CustomGradientRule", "--param", "threshold=10", "--keep-going",
                           "--start-step", "5", "--end-step", "7"}),
      kFastEnd);
  ASSERT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(FiredSteps(out.path()), (std::vector<int64_t>{5, 6}));
}

TEST(RunCli, SeveralRulesFromYamlShareOneTrial) {
  testing::TempDir out;
  out.WriteFile("job.yaml", "trial: " + testing::FixturePath("pt_exploding").string() + "\nplugins: [" +
                                CustomRule() + ", " + TestRules() + "]\nrules:\n" +
                                "  - name: gradients-too-big\n    rule: CustomGradientRule\n"
                                "    parameters: {threshold: \"10\"}\n"
                                "  - name: quiet\n    rule: NeverFires\n");
  const ProcessResult result = RunProcess(RunArgs(out.path(), {"--config", (out.path() / "job.yaml").string()}), kFastEnd);
  ASSERT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(FiredSteps(out.path(), "gradients-too-big"), std::vector<int64_t>{4});
  EXPECT_TRUE(FiredSteps(out.path(), "quiet").empty());
  const Json status = ReadJson(out.path() / "status.json");
  ASSERT_EQ(status["rules"].size(), 2u);
  EXPECT_EQ(status["rules"][0]["RuleEvaluationStatus"], "IssuesFound");
  EXPECT_EQ(status["rules"][1]["RuleEvaluationStatus"], "NoIssuesFound");
  EXPECT_EQ(status["exit_code"], 1);
}

TEST(RunCli, ParametersFromTheEnvironmentInSageMakerForm) {
  testing::TempDir out;
  auto env = kFastEnd;
  env.push_back({"S3_PATH", testing::FixturePath("pt_exploding").string()});
  env.push_back({"LITMUS_RULE_PARAMETERS", R"({"rule_to_invoke": "CustomGradientRule", "threshold": "10",
                                              "start-step": "6"})"});
  const ProcessResult result = RunProcess(RunArgs(out.path(), {"--plugin", CustomRule()}), env);
  ASSERT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(FiredSteps(out.path()), std::vector<int64_t>{6});
}

TEST(RunCli, SigtermStopsCleanly) {
  testing::TempDir out;
  // An in-progress trial: the runner follows it forever until told to stop.
  ChildProcess child(RunArgs(out.path(), {"--trial", testing::FixturePath("pt_run_partial").string(), "--plugin",
                                          TestRules(), "--rule", "NeverFires"}));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    const auto events = std::filesystem::exists(out.path() / "events.jsonl") ? ReadEvents(out.path()) : std::vector<Json>{};
    if (!events.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  child.Signal(SIGTERM);
  const auto sent = std::chrono::steady_clock::now();
  const ProcessResult result = child.Wait(std::chrono::seconds(30));
  ASSERT_FALSE(result.timed_out);
  EXPECT_EQ(result.exit_code, 143) << result.err;
  EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::seconds(10));  // generous: noisy machines
  EXPECT_EQ(ReadJson(out.path() / "status.json")["RuleEvaluationStatus"], "Stopped");
  // Every non-zero exit writes the message file; a stop is no failure.
  EXPECT_EQ(testing::ReadWholeFile(out.path() / "message"), "Stopped: SIGTERM received\n");
  EXPECT_FALSE(std::filesystem::exists(out.path() / "failure"));
}

TEST(RunCli, StopSignalFile) {
  testing::TempDir trial, out;
  testing::CopyTree(testing::FixturePath("pt_run_partial"), trial.path());
  trial.WriteFile("stop_signal", std::to_string(std::time(nullptr) - 5));
  const ProcessResult result = RunProcess(
      RunArgs(out.path(), {"--trial", trial.str(), "--plugin", TestRules(), "--rule", "NeverFires"}),
      {{"SAGEMAKER_ENV_RULE_STOP_SIGNAL_FILE", "stop_signal"}, {"rule_stop_grace_time_secs", "0"}},
      std::chrono::seconds(60));
  ASSERT_FALSE(result.timed_out);
  EXPECT_EQ(result.exit_code, 143) << result.err;
  EXPECT_EQ(ReadJson(out.path() / "status.json")["RuleEvaluationStatus"], "Stopped");
  EXPECT_EQ(testing::ReadWholeFile(out.path() / "message"),
            "Stopped: stop requested by the stop-signal file stop_signal\n");
}

// Runs a job that must fail with `code` (2 client error, 3 internal error) and returns its
// stderr. Whatever the error (configuration, plugin, trial, rule), the job reports it the same
// way: exactly one error line on stderr naming the problem, status.json with Error and the exit
// code, and the one-line message/failure files "ClientError: ..." / "InternalServerError: ...".
std::string ExpectClientError(const std::vector<std::string>& extra, const std::string& must_mention,
                              int code = 2) {
  testing::TempDir out;
  const ProcessResult result = RunProcess(RunArgs(out.path(), extra), kFastEnd);
  EXPECT_EQ(result.exit_code, code) << result.err;
  // Exactly one error line, and it names the problem (info lines may come before it).
  std::vector<std::string> error_lines;
  std::istringstream lines(result.err);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("litmus: error: ", 0) == 0) error_lines.push_back(line);
  }
  EXPECT_EQ(error_lines.size(), 1u) << result.err;
  if (error_lines.size() != 1u) return result.err;
  EXPECT_NE(error_lines[0].find(must_mention), std::string::npos) << result.err;
  const std::string prefix = code == 2 ? "ClientError: " : "InternalServerError: ";
  const std::string failure = testing::ReadWholeFile(out.path() / "failure");
  EXPECT_EQ(failure.rfind(prefix, 0), 0u) << failure;
  EXPECT_NE(failure.find(must_mention), std::string::npos) << failure;
  EXPECT_EQ(std::count(failure.begin(), failure.end(), '\n'), 1) << failure;
  EXPECT_EQ(testing::ReadWholeFile(out.path() / "message"), failure);
  if (std::filesystem::exists(out.path() / "status.json")) {
    const Json status = ReadJson(out.path() / "status.json");
    EXPECT_EQ(status["RuleEvaluationStatus"], "Error") << status.dump();
    EXPECT_EQ(status["exit_code"], code) << status.dump();
  } else {
    ADD_FAILURE() << "no status.json";
  }
  return result.err;
}

TEST(RunCli, BadInput) {
  const std::string trial = testing::FixturePath("pt_exploding").string();
  ExpectClientError({"--trial", trial, "--plugin", CustomRule(), "--rule", "NoSuchRule"}, "NoSuchRule");
  ExpectClientError({"--trial", trial, "--plugin", CustomRule(), "--rule", "CustomGradientRule", "--param",
                     "threshold=abc"},
                    "threshold");
  // (A trial folder that does not exist is waited for: run_trial_paths_test.)
  ExpectClientError({"--trial", trial, "--plugin", CustomRule(), "--rule", "CustomGradientRule", "--param",
                     "thresold=10"},
                    "unknown parameter 'thresold' (did you mean threshold?)");
  ExpectClientError({"--config", "/nonexistent/job.yaml"}, "/nonexistent/job.yaml");
  ExpectClientError({"--trial", trial, "--plugin", "/nonexistent/plugin.so", "--rule", "X"}, "/nonexistent/plugin.so");
  ExpectClientError({"--trial", trial, "--rule", "CustomGradientRule", "--param", "novalue"}, "key=value");
}

// Usage errors found while reading the configuration are reported like the others
// (ExpectClientError): failure file, message file and status.json too.
TEST(RunCli, ConfigurationErrorsWriteTheFailureFiles) {
  const std::string trial = testing::FixturePath("pt_exploding").string();
  testing::TempDir dir;
  ExpectClientError({"--trial", trial, "--plugin", CustomRule(), "--rule", "custom_gradient_rule", "--param", "depth"},
                    "--param depth: expected key=value");
  dir.WriteFile("dup.yaml", "trial: " + trial + "\nplugins: [" + CustomRule() +
                                "]\nrules:\n  - {name: same, rule: CustomGradientRule}\n  - {name: same, rule: "
                                "custom_gradient_rule}\n");
  ExpectClientError({"--config", (dir.path() / "dup.yaml").string()}, "two rules are named same");
  // Unnamed, the same rule typed twice is named twice by its class.
  dir.WriteFile("alias.yaml", "trial: " + trial + "\nplugins: [" + CustomRule() +
                                  "]\nrules:\n  - {rule: CustomGradientRule}\n  - {rule: custom_gradient_rule}\n");
  ExpectClientError({"--config", (dir.path() / "alias.yaml").string()}, "two rules are named CustomGradientRule");
  dir.WriteFile("broken.yaml", "trial: [unclosed\n");
  ExpectClientError({"--config", (dir.path() / "broken.yaml").string()}, "broken.yaml");
  ExpectClientError({"--trial", trial, "--rule", "CustomGradientRule", "--logging-level", "loud"}, "loud");
  dir.WriteFile("unknown.yaml", "trial: " + trial + "\nplugins: [" + CustomRule() +
                                    "]\nrules:\n  - {name: typo, rule: CustomGradientRul}\n");
  ExpectClientError({"--config", (dir.path() / "unknown.yaml").string()},
                    "unknown rule 'CustomGradientRul'; did you mean CustomGradientRule?");

  // The rule is named by its class even when typed as an alias, and a job whose configuration
  // names no rule still reports.
  testing::TempDir out;
  ProcessResult result = RunProcess(RunArgs(out.path(), {"--trial", trial, "--plugin", CustomRule(), "--rule",
                                                         "custom_gradient_rule", "--param", "depth"}),
                                    kFastEnd);
  EXPECT_EQ(result.exit_code, 2) << result.err;
  Json status = ReadJson(out.path() / "status.json");
  EXPECT_EQ(status["RuleConfigurationName"], "CustomGradientRule");
  EXPECT_EQ(status["rule"], "CustomGradientRule");
  EXPECT_EQ(status["StatusDetails"], "ClientError: --param depth: expected key=value");
  testing::TempDir none;
  result = RunProcess(RunArgs(none.path(), {"--param", "depth"}), {{"S3_PATH", ""}, {"LITMUS_RULE_PARAMETERS", ""}});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  status = ReadJson(none.path() / "status.json");
  EXPECT_EQ(status["RuleEvaluationStatus"], "Error");
  EXPECT_EQ(status["StatusDetails"], "ClientError: --param depth: expected key=value");
  EXPECT_TRUE(status["rules"].empty());
}

// A rule typed as an alias ("custom_gradient_rule") whose create fails: status.json, events and
// messages show the class name, never the alias.
TEST(RunCli, FailedCreateShowsTheClassName) {
  testing::TempDir out;
  const ProcessResult result = RunProcess(
      RunArgs(out.path(), {"--trial", testing::FixturePath("pt_exploding").string(), "--plugin", CustomRule(),
                           "--rule", "custom_gradient_rule", "--param", "threshold=abc"}),
      kFastEnd);
  ASSERT_EQ(result.exit_code, 2) << result.err;
  const Json status = ReadJson(out.path() / "status.json");
  EXPECT_EQ(status["RuleConfigurationName"], "CustomGradientRule");
  EXPECT_EQ(status["rule"], "CustomGradientRule");
  ASSERT_EQ(status["rules"].size(), 1u);
  EXPECT_EQ(status["rules"][0]["rule"], "CustomGradientRule");
  const std::vector<Json> events = ReadEvents(out.path());
  ASSERT_FALSE(events.empty());
  for (const Json& e : events) {
    EXPECT_EQ(e["rule"], "CustomGradientRule") << e.dump();
    EXPECT_EQ(e["rule_class"], "CustomGradientRule") << e.dump();
  }
  EXPECT_NE(result.err.find("ClientError: rule CustomGradientRule (plugin "), std::string::npos) << result.err;
  const std::string failure = testing::ReadWholeFile(out.path() / "failure");
  EXPECT_EQ(failure.rfind("ClientError: rule CustomGradientRule (plugin ", 0), 0u) << failure;
}

// A key the rule does not declare is a client error (ExpectClientError, BadInput) unless
// --allow-unknown-params (or allow_unknown_params: true in the YAML); a misspelling of SageMaker's
// examples stays a warning. Warnings are recorded in status.json and the rule report.
TEST(RunCli, UnknownParameterIsAnErrorUnlessAllowed) {
  const std::string trial = testing::FixturePath("pt_exploding").string();
  const std::string warning =
      "rule CustomGradientRule: unknown parameter 'thresold' (did you mean threshold?) (ignored); known: threshold";
  const auto expect_recorded = [](const std::filesystem::path& out, const std::string& text) {
    const Json status = ReadJson(out / "status.json");
    EXPECT_EQ(status["Warnings"], Json::array({text})) << status.dump();
    EXPECT_EQ(status["rules"][0]["Warnings"], Json::array({text})) << status.dump();
    EXPECT_EQ(ReadJson(out / "rule-reports" / "CustomGradientRule.json")["Warnings"], Json::array({text}));
  };
  {
    testing::TempDir out;
    const ProcessResult result = RunProcess(RunArgs(out.path(), {"--trial", trial, "--plugin", CustomRule(), "--rule",
                                                                 "CustomGradientRule", "--param", "thresold=10",
                                                                 "--allow-unknown-params"}),
                                            kFastEnd);
    EXPECT_EQ(result.exit_code, 1) << result.err;  // default threshold 10 fires at step 4
    EXPECT_NE(result.err.find("litmus: warning: " + warning), std::string::npos) << result.err;
    expect_recorded(out.path(), warning);
  }
  {
    testing::TempDir out;
    out.WriteFile("job.yaml", "trial: " + trial + "\nplugins: [" + CustomRule() +
                                  "]\nallow_unknown_params: true\nrules:\n  - rule: CustomGradientRule\n"
                                  "    parameters: {thresold: \"10\"}\n");
    const ProcessResult result =
        RunProcess(RunArgs(out.path(), {"--config", (out.path() / "job.yaml").string()}), kFastEnd);
    EXPECT_EQ(result.exit_code, 1) << result.err;
    expect_recorded(out.path(), warning);
  }
  {
    testing::TempDir out;
    const ProcessResult result = RunProcess(RunArgs(out.path(), {"--trial", trial, "--plugin", CustomRule(), "--rule",
                                                                 "CustomGradientRule", "--param", "nym_steps=3"}),
                                            kFastEnd);
    EXPECT_EQ(result.exit_code, 1) << result.err;
    expect_recorded(out.path(),
                    "rule CustomGradientRule: unknown parameter 'nym_steps' (ignored); known: threshold");
  }
}

TEST(RunCli, UnknownRuleSuggestsTheClosestName) {
  const std::string trial = testing::FixturePath("pt_exploding").string();
  ExpectClientError({"--trial", trial, "--plugin", CustomRule(), "--rule", "custom_gradiant_rule"},
                    "unknown rule 'custom_gradiant_rule'; did you mean CustomGradientRule?");
  ExpectClientError({"--trial", trial, "--plugin", CustomRule(), "--rule", "CustomGradient"},
                    "did you mean CustomGradientRule?");
}

// A key given twice, or by two sources: the winner is used and one warning names both values.
TEST(RunCli, RepeatedParameterIsWarnedAbout) {
  testing::TempDir out;
  auto env = kFastEnd;
  env.push_back({"LITMUS_RULE_PARAMETERS", R"({"threshold": "1e9"})"});
  const ProcessResult result = RunProcess(
      RunArgs(out.path(), {"--trial", testing::FixturePath("pt_exploding").string(), "--plugin", CustomRule(),
                           "--rule", "CustomGradientRule", "--param", "threshold=1e9", "--param", "threshold=10"}),
      env);
  EXPECT_EQ(result.exit_code, 1) << result.err;  // threshold 10 fires at step 4; 1e9 never would
  EXPECT_EQ(FiredSteps(out.path()), std::vector<int64_t>{4});
  const std::string twice = "litmus: warning: --param threshold given twice ('1e9', then '10'); using '10'";
  const std::string sources =
      "litmus: warning: parameter threshold set by LITMUS_RULE_PARAMETERS ('1e9') and the command line ('10'); "
      "using '10'";
  EXPECT_NE(result.err.find(twice), std::string::npos) << result.err;
  EXPECT_NE(result.err.find(sources), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find(twice), result.err.rfind(twice)) << "one warning, not one per use";
  EXPECT_EQ(ReadJson(out.path() / "rule-reports" / "CustomGradientRule.json")["RuleParameters"], "threshold:10\n");
  // Recorded with the job, not only logged.
  const Json warnings = ReadJson(out.path() / "status.json")["Warnings"];
  EXPECT_EQ(warnings, Json::array({twice.substr(17), sources.substr(17)})) << warnings.dump();
}

// What `litmus run --help` promises about rule names and plugins, and that it holds.
TEST(RunCli, HelpExplainsRuleNamesAndPlugins) {
  const ProcessResult help = RunProcess({LitmusBinary(), "run", "--help"});
  ASSERT_EQ(help.exit_code, 0) << help.err;
  for (const char* text : {"case-insensitive", "snake_case", "vanishing_gradient", "`litmus rules` lists the rules",
                           "`litmus rules NAME` shows a rule's parameters", "--plugin-dir DIR",
                           "Not needed for the built-in SageMaker rules", "/litmus/plugins",
                           "build tree's builtin-rules/", "$LITMUS_PLUGIN_PATH"}) {
    EXPECT_NE(help.out.find(text), std::string::npos) << text << "\n" << help.out;
  }
  // Case-insensitive and snake_case names work (the firing test uses the class name).
  for (const char* name : {"CUSTOMGRADIENTRULE", "custom_gradient_rule", "Custom_Gradient_Rule"}) {
    testing::TempDir out;
    const ProcessResult result = RunProcess(
        RunArgs(out.path(), {"--trial", testing::FixturePath("pt_exploding").string(), "--plugin", CustomRule(),
                             "--rule", name}),
        kFastEnd);
    EXPECT_EQ(result.exit_code, 1) << name << ": " << result.err;
    EXPECT_EQ(ReadJson(out.path() / "status.json")["RuleConfigurationName"], "CustomGradientRule") << name;
  }
}

// The rogue gallery: each plugin must give exit 2 or 3 and a message naming it and the problem.
TEST(RunCli, RoguePlugins) {
  struct Case {
    const char* file;
    const char* rule;
    std::vector<std::string> params;
    int code;
    const char* mention;
  };
  const std::string dir = LITMUS_TEST_PLUGIN_DIR;
  const std::vector<Case> cases = {
      {"rogue_abi_major.so", "Rogue", {}, 2, "ABI"},
      {"rogue_abi_minor.so", "Rogue", {}, 2, "1.99"},
      {"rogue_abi_minor_sdk.so", "Rogue", {}, 2, "ABI"},
      {"rogue_no_entry.so", "Rogue", {}, 2, "litmus_plugin_entry_v1"},
      {"rogue_extra_export.so", "Rogue", {}, 2, "rogue_extra_export"},
      {"rogue_throw_in_create.so", "ThrowInCreate", {}, 3, "ThrowInCreate"},
      {"rogue_throw_in_invoke.so", "ThrowInInvoke", {}, 3, "ThrowInInvoke"},
      {"rogue_error_without_text.so", "ErrorWithoutText", {}, 3, "without an error message"},
      {"rogue_invalid_param.so", "InvalidParam", {"--param", "threshold=abc"}, 2, "threshold"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    std::vector<std::string> extra = {"--trial", testing::FixturePath("pt_exploding").string(), "--plugin",
                                      dir + "/" + c.file, "--rule", c.rule};
    extra.insert(extra.end(), c.params.begin(), c.params.end());
    ExpectClientError(extra, c.mention, c.code);
  }
}

// ABI compatibility: a plugin built against the frozen 1.0 header (104-byte descriptors, two rules)
// runs unchanged.
TEST(RunCli, AnAbi10PluginRuns) {
  const std::string plugin = std::string(LITMUS_TEST_PLUGIN_DIR) + "/abi_1_0_rules.so";
  testing::TempDir out;
  ProcessResult result = RunProcess(RunArgs(out.path(), {"--trial", testing::FixturePath("pt_exploding").string(),
                                                          "--plugin", plugin, "--rule", "OldFireAtStep", "--param",
                                                          "fire_at_step=3"}),
                                    kFastEnd);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(FiredSteps(out.path()), std::vector<int64_t>{3});
  testing::TempDir quiet;
  result = RunProcess(RunArgs(quiet.path(), {"--trial", testing::FixturePath("pt_exploding").string(), "--plugin",
                                             plugin, "--rule", "OldNeverFires"}),
                      kFastEnd);
  EXPECT_EQ(result.exit_code, 0) << result.err;
}

// ABI 1.1 on_poll: called while the trial does not grow; a condition met there is reported at the
// rule's last evaluated step. pt_run_partial is in progress (no end marker): without on_poll the
// job would follow it forever.
TEST(RunCli, OnPollFiresWhileTheTrialDoesNotGrow) {
  testing::TempDir out;
  const ProcessResult result = RunProcess(
      RunArgs(out.path(), {"--trial", testing::FixturePath("pt_run_partial").string(), "--plugin", TestRules(),
                           "--rule", "PollFires", "--param", "polls=3"}),
      kFastEnd, std::chrono::seconds(60));
  ASSERT_FALSE(result.timed_out);
  ASSERT_EQ(result.exit_code, 1) << result.err;
  const Json report = ReadJson(out.path() / "rule-reports" / "PollFires.json");
  const int64_t last_step = report["Details"]["last_step"].get<int64_t>();
  EXPECT_GT(last_step, 0);
  EXPECT_EQ(FiredSteps(out.path()), std::vector<int64_t>{last_step});
  EXPECT_EQ(report["Details"]["poll"], 3);
  EXPECT_EQ(ReadJson(out.path() / "status.json")["RuleEvaluationStatus"], "IssuesFound");
}

// ... and while the runner still waits for the trial's first collections file (reported at 0).
TEST(RunCli, OnPollRunsWhileWaitingForTheTrial) {
  testing::TempDir empty_trial, out;
  const ProcessResult result = RunProcess(
      RunArgs(out.path(), {"--trial", empty_trial.str(), "--plugin", TestRules(), "--rule", "PollFires", "--param",
                           "polls=2"}),
      kFastEnd, std::chrono::seconds(60));
  ASSERT_FALSE(result.timed_out);
  ASSERT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(FiredSteps(out.path()), std::vector<int64_t>{0});
  EXPECT_EQ(testing::ReadWholeFile(out.path() / "message"),
            "RuleEvaluationConditionMet: Evaluation of the rule PollFires at step 0 resulted in the condition being "
            "met\n");
}

// With --keep-going a firing from on_poll does not end the rule; the job then runs until stopped.
TEST(RunCli, OnPollWithKeepGoingFiresAgain) {
  testing::TempDir out;
  ChildProcess child(RunArgs(out.path(), {"--trial", testing::FixturePath("pt_run_partial").string(), "--plugin",
                                          TestRules(), "--rule", "PollFires", "--param", "polls=2", "--keep-going"}));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::filesystem::exists(out.path() / "events.jsonl") && FiredSteps(out.path()).size() >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  child.Signal(SIGTERM);
  const ProcessResult result = child.Wait(std::chrono::seconds(30));
  ASSERT_FALSE(result.timed_out);
  EXPECT_EQ(result.exit_code, 143) << result.err;
  EXPECT_GE(FiredSteps(out.path()).size(), 2u);
}

TEST(RunCli, OnPollFailureIsAnInternalError) {
  ExpectClientError({"--trial", testing::FixturePath("pt_run_partial").string(), "--plugin", TestRules(), "--rule",
                     "PollFires", "--param", "polls=1", "--param", "fail_on_poll=true"},
                    "on_poll failed on purpose", 3);
}

// smdebug's MissingCollectionFiles: the end marker without any collections file.
TEST(RunCli, EndMarkerWithoutCollectionsIsAClientError) {
  testing::TempDir trial;
  trial.WriteFile("training_job_end.ts", "");
  ExpectClientError({"--trial", trial.str(), "--plugin", TestRules(), "--rule", "NeverFires"},
                    "All the collection files could not be loaded");
}

}  // namespace
}  // namespace litmus
