// The isolation fault gallery end to end: the real `litmus run` with rogue rules (fault_rules.cc)
// that segfault, abort, exit(0), _exit(7), loop forever, allocate without bound, overflow their
// stack, start a thread that never ends or write 100 MB to stdout; each alone and beside a good
// rule (CustomGradientRule on pt_exploding, which fires at step 4) in one --config job. Checks the
// good rule's finding (status.json, events.jsonl, rule report), the rogue rule's Error naming
// plugin, rule, step and cause, the exit code, litmus's own stdout, and that SIGTERM ends a job
// whose rule never returns, in both isolation modes (the time is printed; the bound asserted is
// generous: tests never assert tight wall-clock limits).
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "native_faults.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using Json = nlohmann::json;
using testing::ChildProcess;
using testing::LitmusBinary;
using testing::ProcessResult;
using testing::RunProcess;

const std::vector<std::pair<std::string, std::string>> kFastEnd = {{"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"}};

Json ReadJson(const std::filesystem::path& path) {
  std::ifstream in(path);
  return Json::parse(in);
}

std::vector<Json> ReadEvents(const std::filesystem::path& out) {
  std::vector<Json> events;
  std::ifstream in(out / "events.jsonl");
  for (std::string line; std::getline(in, line);) events.push_back(Json::parse(line));
  return events;
}

std::vector<std::string> RunArgs(const std::filesystem::path& out, std::vector<std::string> extra) {
  std::vector<std::string> args = {LitmusBinary(), "run", "--output-dir", out.string(), "--message-file",
                                   (out / "message").string(), "--failure-file", (out / "failure").string(),
                                   "--poll-interval-ms", "20"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

struct Fault {
  const char* rule;
  std::vector<std::string> options;  // extra command-line options for this fault
  int code;                          // exit code alone (0: the rule ends normally)
  const char* cause;                 // in the Error message (empty: no error)
};

const std::vector<Fault>& Faults() {
  static const std::vector<Fault> faults = {
      {"Segfault", {}, 3, "was killed by signal 11 (SIGSEGV)"},
      {"Abort", {}, 3, "was killed by signal 6 (SIGABRT)"},
      {"ExitZero", {}, 3, "exited with status 0"},
      {"ExitSeven", {}, 3, "exited with status 7"},
      {"InfiniteLoop", {"--rule-timeout", "2"}, 3, "timed out after 2 s"},
      {"UnboundedMalloc", {"--rule-memory", "256M"}, 3, "exceeded the memory limit of 256 MiB"},
      {"StackOverflow", {}, 3, "was killed by signal 11 (SIGSEGV)"},
      {"EndlessThread", {}, 0, ""},
      {"FloodStdout", {}, 0, ""},
  };
  return faults;
}

// The rogue rule's Error names the plugin, the rule, the call with its step and the cause.
void ExpectRogueError(const std::filesystem::path& out, const Fault& f, const Json& rule_status) {
  EXPECT_EQ(rule_status["RuleEvaluationStatus"], "Error") << rule_status.dump();
  const std::string details = rule_status["StatusDetails"];
  for (const std::string& part : {std::string("InternalServerError: rule ") + f.rule, std::string("fault_rules"),
                                  std::string("invoke_at_step at step 2"), std::string(f.cause)}) {
    EXPECT_NE(details.find(part), std::string::npos) << part << " not in: " << details;
  }
  (void)out;
}

TEST(FaultGallery, EachFaultAlone) {
  for (const Fault& f : Faults()) {
    SCOPED_TRACE(f.rule);
    testing::TempDir out;
    std::vector<std::string> extra = {"--trial", testing::FixturePath("pt_exploding").string(), "--plugin",
                                      LITMUS_FAULT_RULES_PLUGIN, "--rule", f.rule};
    extra.insert(extra.end(), f.options.begin(), f.options.end());
    const auto started = std::chrono::steady_clock::now();
    const ProcessResult result = RunProcess(RunArgs(out.path(), extra), kFastEnd, std::chrono::seconds(120));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::cout << "[ fault ] " << f.rule << " alone: exit " << result.exit_code << " in " << seconds << " s\n";
    ASSERT_FALSE(result.timed_out);
    EXPECT_EQ(result.exit_code, f.code) << result.err;
    EXPECT_LT(result.out.size(), 4096u) << "litmus's stdout carries the rule's output";
    const Json status = ReadJson(out.path() / "status.json");
    if (f.code == 0) {
      EXPECT_EQ(status["RuleEvaluationStatus"], "NoIssuesFound") << status.dump();
      continue;
    }
    ExpectRogueError(out.path(), f, status);
    const std::string failure = testing::ReadWholeFile(out.path() / "failure");
    EXPECT_NE(failure.find(f.cause), std::string::npos) << failure;
    EXPECT_EQ(testing::ReadWholeFile(out.path() / "message"), failure);
  }
}

// One step per call, and calls of several steps (the default, --rule-batch-steps 16): a fault
// inside such a call names the step it happened at (the worker's ProgressSlot; a rule's first call
// is one step, so step 2 is inside its second call).
TEST(FaultGallery, EachFaultBesideAGoodRule) {
  for (const Fault& f : Faults()) {
    for (const char* batch : {"1", "16"}) {
      SCOPED_TRACE(std::string(f.rule) + ", --rule-batch-steps " + batch);
      testing::TempDir out;
      out.WriteFile("job.yaml", "trial: " + testing::FixturePath("pt_exploding").string() + "\nplugins: [" +
                                    LITMUS_CUSTOM_RULE_PLUGIN + ", " + LITMUS_FAULT_RULES_PLUGIN + "]\nrules:\n" +
                                    "  - name: good\n    rule: CustomGradientRule\n    parameters: {threshold: \"10\"}\n" +
                                    "  - name: rogue\n    rule: " + f.rule + "\n");
      std::vector<std::string> extra = {"--config", (out.path() / "job.yaml").string(), "--rule-batch-steps", batch};
      extra.insert(extra.end(), f.options.begin(), f.options.end());
      const ProcessResult result = RunProcess(RunArgs(out.path(), extra), kFastEnd, std::chrono::seconds(120));
      ASSERT_FALSE(result.timed_out);
      // An Error outranks a firing (exit 3); without one the good rule's firing decides (exit 1).
      EXPECT_EQ(result.exit_code, f.code == 0 ? 1 : 3) << result.err;
      EXPECT_LT(result.out.size(), 4096u);
      const Json status = ReadJson(out.path() / "status.json");
      ASSERT_EQ(status["rules"].size(), 2u) << status.dump();
      // The good rule's finding, in status.json, events.jsonl and its report.
      EXPECT_EQ(status["rules"][0]["RuleConfigurationName"], "good");
      EXPECT_EQ(status["rules"][0]["RuleEvaluationStatus"], "IssuesFound") << status.dump();
      EXPECT_EQ(status["rules"][0]["step"], 4);
      bool fired = false;
      for (const Json& e : ReadEvents(out.path())) {
        if (e["event"] == "RuleEvaluationConditionMet") {
          EXPECT_EQ(e["rule"], "good") << e.dump();
          fired |= e["step"] == 4;
        }
      }
      EXPECT_TRUE(fired);
      EXPECT_EQ(ReadJson(out.path() / "rule-reports" / "good.json")["RuleTriggered"], 1);
      const std::string message = testing::ReadWholeFile(out.path() / "message");
      if (f.code == 0) {
        EXPECT_EQ(status["rules"][1]["RuleEvaluationStatus"], "NoIssuesFound") << status.dump();
        EXPECT_NE(message.find("Evaluation of the rule CustomGradientRule at step 4"), std::string::npos) << message;
      } else {
        ExpectRogueError(out.path(), f, status["rules"][1]);
        EXPECT_NE(message.find(f.cause), std::string::npos) << message;
      }
      if (std::string(f.rule) == "FloodStdout") {
        // The flood went to the rule's log, bounded.
        const auto log = out.path() / "rule-logs" / "rogue.log";
        ASSERT_TRUE(std::filesystem::exists(log));
        EXPECT_GT(std::filesystem::file_size(log), 1u << 20);
        EXPECT_LT(std::filesystem::file_size(log), 17u << 20);
      }
    }
  }
}

// SIGTERM while a rule spins forever: the job ends (143, Stopped) in both modes.
TEST(FaultGallery, SigtermStopsAJobWhoseRuleNeverReturns) {
  for (const char* isolation : {"process", "none"}) {
    SCOPED_TRACE(isolation);
    testing::TempDir out;
    out.WriteFile("job.yaml", "trial: " + testing::FixturePath("pt_exploding").string() + "\nplugins: [" +
                                  LITMUS_CUSTOM_RULE_PLUGIN + ", " + LITMUS_FAULT_RULES_PLUGIN + "]\nrules:\n" +
                                  "  - name: good\n    rule: CustomGradientRule\n    parameters: {threshold: \"1e9\"}\n" +
                                  "  - name: rogue\n    rule: InfiniteLoop\n");
    ChildProcess child(RunArgs(out.path(), {"--config", (out.path() / "job.yaml").string(), "--isolation", isolation}),
                       kFastEnd);
    // Wait until the rogue rule is inside its loop: it starts at step 2, and the good rule has
    // finished step 1's report by then. A fixed pause is enough: the loop never ends.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline && !std::filesystem::exists(out.path() / "events.jsonl")) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    child.Signal(SIGTERM);
    const auto sent = std::chrono::steady_clock::now();
    const ProcessResult result = child.Wait(std::chrono::seconds(60));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
    std::cout << "[ stop ] --isolation " << isolation << ": SIGTERM to exit " << seconds << " s\n";
    ASSERT_FALSE(result.timed_out);
    EXPECT_EQ(result.exit_code, 143) << result.err;
    EXPECT_LT(seconds, 10.0);  // the requirement is 2 s; generous here (loaded CI machines)
    const Json status = ReadJson(out.path() / "status.json");
    EXPECT_EQ(status["rules"][1]["RuleEvaluationStatus"], "Stopped") << status.dump();
    EXPECT_EQ(status["exit_code"], 143) << status.dump();
    // Every exit but 0 leaves the message file, the watchdog's end (in-process) included.
    EXPECT_EQ(testing::ReadWholeFile(out.path() / "message"), "Stopped: SIGTERM received\n");
  }
}

// With --keep-going a firing does not end a call of several steps: a rule that fires at steps 1
// and 2 and crashes at step 3 inside one call still reports both firings (ProgressSlot), then
// its Error at step 3, as with one step per call.
TEST(FaultGallery, FiringsBeforeACrashInTheSameCallAreKept) {
  for (const char* batch : {"1", "16"}) {
    SCOPED_TRACE(std::string("--rule-batch-steps ") + batch);
    testing::TempDir out;
    const std::vector<std::string> extra = {"--trial", testing::FixturePath("pt_exploding").string(), "--plugin",
                                            LITMUS_FAULT_RULES_PLUGIN, "--rule", "Segfault", "--param", "fires_from=1",
                                            "--param", "at_step=3", "--keep-going", "--rule-batch-steps", batch};
    const ProcessResult result = RunProcess(RunArgs(out.path(), extra), kFastEnd, std::chrono::seconds(120));
    ASSERT_FALSE(result.timed_out);
    EXPECT_EQ(result.exit_code, 3) << result.err;
    std::vector<int64_t> fired;
    for (const Json& e : ReadEvents(out.path())) {
      if (e["event"] == "RuleEvaluationConditionMet") fired.push_back(e["step"].get<int64_t>());
    }
    EXPECT_EQ(fired, (std::vector<int64_t>{1, 2}));
    const Json status = ReadJson(out.path() / "status.json");
    EXPECT_EQ(status["RuleEvaluationStatus"], "Error") << status.dump();
    const std::string details = status["StatusDetails"];
    EXPECT_NE(details.find("invoke_at_step at step 3"), std::string::npos) << details;
    EXPECT_NE(details.find("SIGSEGV"), std::string::npos) << details;
    EXPECT_EQ(ReadJson(out.path() / "rule-reports" / "Segfault.json")["RuleTriggered"], 2);
  }
}

// A crash inside set_required_tensors of a rule that declared no list at the steps before it
// (their steps skipped): with calls of several steps its worker is asked about a call's steps in
// one request (protocol.h kRequiredTensorsSteps); the Error is at the step it crashed at, named,
// as with one step per call, and the good rule beside it is unaffected.
TEST(FaultGallery, ACrashInsideADeclarationOfSeveralStepsIsAtItsStep) {
  for (const char* batch : {"1", "16"}) {
    SCOPED_TRACE(std::string("--rule-batch-steps ") + batch);
    testing::TempDir out;
    out.WriteFile("job.yaml", "trial: " + testing::FixturePath("pt_exploding").string() + "\nplugins: [" +
                                  LITMUS_CUSTOM_RULE_PLUGIN + ", " + LITMUS_FAULT_RULES_PLUGIN + "]\nrules:\n" +
                                  "  - name: good\n    rule: CustomGradientRule\n    parameters: {threshold: \"10\"}\n" +
                                  "  - name: rogue\n    rule: Segfault\n" +
                                  "    parameters: {in_declare: \"true\", at_step: \"7\"}\n");
    const std::vector<std::string> extra = {"--config", (out.path() / "job.yaml").string(), "--keep-going",
                                            "--rule-batch-steps", batch, "--logging-level", "debug"};
    const ProcessResult result = RunProcess(RunArgs(out.path(), extra), kFastEnd, std::chrono::seconds(120));
    ASSERT_FALSE(result.timed_out);
    EXPECT_EQ(result.exit_code, 3) << result.err;
    const Json status = ReadJson(out.path() / "status.json");
    ASSERT_EQ(status["rules"].size(), 2u) << status.dump();
    EXPECT_EQ(status["rules"][0]["RuleEvaluationStatus"], "IssuesFound") << status.dump();
    EXPECT_EQ(status["rules"][0]["Progress"]["LastStep"], 15) << status.dump();  // every step, after the crash too
    const Json& rogue = status["rules"][1];
    EXPECT_EQ(rogue["RuleEvaluationStatus"], "Error") << status.dump();
    EXPECT_EQ(rogue["step"], 7) << status.dump();
    const std::string details = rogue["StatusDetails"];
    EXPECT_NE(details.find("SIGSEGV"), std::string::npos) << details;
    EXPECT_NE(details.find("in set_required_tensors at step 7"), std::string::npos) << details;
    // Requests for set_required_tensors alone (the rule's debug line): one a step up to the crash
    // (steps 0-7) one step a call; steps 0 and 1 alone (the first call is one step), then one
    // request for the rest, in calls of several.
    std::smatch m;
    ASSERT_TRUE(std::regex_search(result.err, m, std::regex("rule rogue: .* ([0-9]+) set_required_tensors calls")))
        << result.err;
    if (std::string(batch) == "16") {
      EXPECT_NE(details.find("one request for steps"), std::string::npos) << details;
      EXPECT_EQ(m[1], "3") << m[0];
    } else {
      EXPECT_EQ(m[1], "8") << m[0];
    }
  }
}

// The options and their YAML keys: a rule's own rule_timeout (a runner key: the rule never sees
// it), isolation: none from the YAML, and bad values as one-line client errors.
TEST(FaultGallery, OptionsAndYamlKeys) {
  {
    testing::TempDir out;
    out.WriteFile("job.yaml", "trial: " + testing::FixturePath("pt_exploding").string() + "\nplugins: [" +
                                  LITMUS_FAULT_RULES_PLUGIN + "]\nrule_timeout: 300\nrule_memory: 1G\nrules:\n" +
                                  "  - name: spin\n    rule: InfiniteLoop\n    parameters: {rule_timeout: \"1\"}\n");
    const ProcessResult result =
        RunProcess(RunArgs(out.path(), {"--config", (out.path() / "job.yaml").string()}), kFastEnd);
    EXPECT_EQ(result.exit_code, 3) << result.err;
    EXPECT_EQ(result.err.find("unknown parameter"), std::string::npos) << result.err;
    const std::string failure = testing::ReadWholeFile(out.path() / "failure");
    EXPECT_NE(failure.find("timed out after 1 s"), std::string::npos) << failure;
  }
  {
    // In-process, the same job runs the rules inside litmus: a crash ends the whole job, as before.
    testing::TempDir out;
    out.WriteFile("job.yaml", "trial: " + testing::FixturePath("pt_exploding").string() + "\nplugins: [" +
                                  LITMUS_FAULT_RULES_PLUGIN + "]\nisolation: none\nrules:\n  - {rule: Segfault}\n");
    const ProcessResult result =
        RunProcess(RunArgs(out.path(), {"--config", (out.path() / "job.yaml").string()}), kFastEnd);
    EXPECT_EQ(result.exit_code, 128 + SIGSEGV) << result.err;
  }
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--isolation", "threads"}, {"--rule-timeout", "0"}, {"--rule-memory", "lots"},
        {"--rule-batch-steps", "0"}, {"--param", "rule_timeout=soon"}}) {
    testing::TempDir out;
    std::vector<std::string> extra = {"--trial", testing::FixturePath("pt_exploding").string(), "--plugin",
                                      LITMUS_FAULT_RULES_PLUGIN, "--rule", "EndlessThread"};
    extra.insert(extra.end(), bad.begin(), bad.end());
    const ProcessResult result = RunProcess(RunArgs(out.path(), extra), kFastEnd);
    EXPECT_EQ(result.exit_code, 2) << bad[0] << ": " << result.err;
    const std::string failure = testing::ReadWholeFile(out.path() / "failure");
    EXPECT_NE(failure.find(bad[0] == "--param" ? "rule_timeout" : bad[0]), std::string::npos) << failure;
  }
}

// Which program the workers run (worker_process.h RuleWorkerExecutable): litmus-rule-worker beside
// litmus; litmus itself when it is copied on its own; and a worker of another build refuses, so
// that the rule ends in an Error saying what to do. CustomGradientRule fires at step 4 each time
// it runs.
std::vector<std::string> GoodRuleArgs() {
  return {"--trial", testing::FixturePath("pt_exploding").string(), "--plugin", LITMUS_CUSTOM_RULE_PLUGIN,
          "--rule", "CustomGradientRule", "--logging-level", "debug"};
}

TEST(RuleWorkerExecutable, TheOneBesideLitmusRunsTheRules) {
  testing::TempDir out;
  const ProcessResult result = RunProcess(RunArgs(out.path(), GoodRuleArgs()), kFastEnd);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const std::filesystem::path worker =
      std::filesystem::weakly_canonical(std::filesystem::path(LitmusBinary()).parent_path() / "litmus-rule-worker");
  EXPECT_NE(result.err.find("rule workers run " + worker.string() + "\n"), std::string::npos) << result.err;
}

TEST(RuleWorkerExecutable, ALitmusCopiedAloneRunsItsRulesInItself) {
  testing::TempDir dir;
  const std::filesystem::path litmus = dir.path() / "litmus";
  std::filesystem::copy_file(LitmusBinary(), litmus);
  const std::filesystem::path out = dir.path() / "out";
  std::vector<std::string> args = RunArgs(out, GoodRuleArgs());
  args[0] = litmus.string();
  const ProcessResult result = RunProcess(args, kFastEnd);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.err.find("rule workers run this litmus itself"), std::string::npos) << result.err;
  EXPECT_EQ(ReadJson(out / "status.json")["RuleEvaluationStatus"], "IssuesFound");
}

TEST(RuleWorkerExecutable, AWorkerOfAnotherBuildRefusesAndTheRuleSaysWhy) {
  testing::TempDir dir;
  const std::filesystem::path litmus = dir.path() / "litmus";
  std::filesystem::copy_file(LitmusBinary(), litmus);
  // The real worker, told that another build started it (exec: its parent stays the runner).
  const std::filesystem::path real = std::filesystem::path(LitmusBinary()).parent_path() / "litmus-rule-worker";
  dir.WriteFile("litmus-rule-worker", "#!/bin/sh\nexec '" + real.string() + "' \"$1\" \"$2\" 0.0.0-another\n");
  std::filesystem::permissions(dir.path() / "litmus-rule-worker", std::filesystem::perms::owner_all);
  const std::filesystem::path out = dir.path() / "out";
  std::vector<std::string> args = RunArgs(out, GoodRuleArgs());
  args[0] = litmus.string();
  const ProcessResult result = RunProcess(args, kFastEnd);
  EXPECT_EQ(result.exit_code, 3) << result.err;
  const std::string failure = testing::ReadWholeFile(out / "failure");
  EXPECT_NE(failure.find("its worker process exited in create: " +
                         std::filesystem::weakly_canonical(dir.path() / "litmus-rule-worker").string() +
                         " is the rule worker of another litmus than this one"),
            std::string::npos)
      << failure;
  EXPECT_NE(failure.find("install litmus and its litmus-rule-worker together"), std::string::npos) << failure;
}

}  // namespace
}  // namespace litmus
