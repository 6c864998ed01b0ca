// End-to-end: where `litmus run` writes when no path is given (docs/run.md, "Output files").
// Outside a SageMaker rule container: ./litmus-output with the message and failure files inside
// it, no .sagemaker-ignore, runnable by a user without root; inside one (forced here with
// LITMUS_OUTPUT_LAYOUT): SageMaker's layout. Each run replaces the previous run's message and
// failure files, and a stop writes the message file too.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "run_test_support.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using testing::ChildProcess;
using testing::Json;
using testing::kFastEnd;
using testing::LitmusBinary;
using testing::ProcessResult;
using testing::ReadJson;
using testing::RunArgsInto;
using testing::RunProcess;

// The environment of a shell outside any SageMaker container, whatever the machine's.
std::vector<std::pair<std::string, std::string>> LocalEnvironment() {
  auto env = kFastEnd;
  env.insert(env.end(), {{"S3_PATH", ""}, {"LITMUS_RULE_PARAMETERS", ""}, {"LITMUS_OUTPUT_LAYOUT", ""}});
  return env;
}

// The README's simplest command, with no other option, by a user without root (the tests run as
// root in CI: the binary then runs as nobody through setpriv) in a fresh working folder: a
// verdict on stdout and every file under ./litmus-output.
//
// The user runs an installed litmus: the build's binary and built-in plugins are copied into an
// install layout (<prefix>/bin, <prefix>/<libdir>/litmus/plugins) in a folder anyone can read, and
// so is the trial. The build and source trees need not be readable by nobody (a clone inside a
// private folder, as `mktemp -d` makes), and the copy also checks that an installed binary finds
// its plugins beside it.
TEST(RunDefaults, SimplestCommandAsNonRootWritesUnderLitmusOutput) {
  namespace fs = std::filesystem;
  testing::TempDir cwd;
  fs::permissions(cwd.path(), fs::perms::all);  // writable by nobody
  std::vector<std::string> prefix = {"/usr/bin/env", "-C", cwd.str()};
  if (geteuid() == 0) {
    ASSERT_TRUE(fs::exists("/usr/bin/setpriv")) << "running as root needs /usr/bin/setpriv (util-linux)";
    prefix.insert(prefix.end(), {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  }
  testing::TempDir readable;
  fs::permissions(readable.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                       fs::perms::others_read | fs::perms::others_exec);
  const fs::path install = readable.path() / "usr";
  const fs::path binary = install / "bin" / "litmus";
  const fs::path plugins = install / LITMUS_INSTALL_PLUGIN_SUBDIR;
  fs::create_directories(binary.parent_path());
  fs::create_directories(plugins);
  fs::copy_file(LitmusBinary(), binary);
  size_t copied = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(LITMUS_BUILD_PLUGIN_DIR)) {
    if (entry.path().extension() != ".so") continue;
    fs::copy_file(entry.path(), plugins / entry.path().filename());
    ++copied;
  }
  ASSERT_GT(copied, 0u) << "no built-in plugin in " << LITMUS_BUILD_PLUGIN_DIR;
  const fs::path trial = readable.path() / "pt_exploding";
  fs::copy(testing::FixturePath("pt_exploding"), trial, fs::copy_options::recursive);
  // Everything under the readable folder: directories and the binary r-x for all, files r-- .
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(readable.path())) {
    const bool runnable = entry.is_directory() || entry.path() == binary;
    fs::permissions(entry.path(),
                    runnable ? fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                   fs::perms::others_read | fs::perms::others_exec
                             : fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                                   fs::perms::others_read);
  }
  std::vector<std::string> argv = prefix;
  argv.insert(argv.end(), {binary.string(), "run", "--trial", trial.string(), "--rule", "VanishingGradient"});
  const ProcessResult result = RunProcess(argv, LocalEnvironment());
  ASSERT_TRUE(result.exit_code == 0 || result.exit_code == 1) << result.err;
  const fs::path out = cwd.path() / "litmus-output";
  // The verdict on stdout: the table's header and the rule's row.
  EXPECT_NE(result.out.find("rule"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("VanishingGradient"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find(result.exit_code == 0 ? "NoIssuesFound" : "IssuesFound"), std::string::npos) << result.out;
  ASSERT_TRUE(std::filesystem::exists(out / "status.json")) << result.err;
  EXPECT_EQ(ReadJson(out / "status.json")["rule"], "VanishingGradient");
  EXPECT_EQ(ReadJson(out / "status.json")["exit_code"], result.exit_code);
  EXPECT_TRUE(std::filesystem::exists(out / "events.jsonl"));
  EXPECT_TRUE(std::filesystem::exists(out / "rule-reports" / "VanishingGradient.json"));
  EXPECT_EQ(std::filesystem::exists(out / "message"), result.exit_code != 0);
  EXPECT_FALSE(std::filesystem::exists(out / ".sagemaker-ignore")) << "SageMaker's temp folder outside SageMaker";
  EXPECT_EQ(result.err.find("/opt/ml"), std::string::npos) << result.err;
}

// --output-dir alone: the message and failure files go inside it, never to /opt/ml/output, and
// no temp file is left behind.
TEST(RunDefaults, ExplicitOutputDirHoldsTheMessageFiles) {
  testing::TempDir out;
  const ProcessResult result = RunProcess(
      RunArgsInto(out.path(), {"--trial", testing::FixturePath("pt_exploding").string(), "--plugin",
                               LITMUS_CUSTOM_RULE_PLUGIN, "--rule", "CustomGradientRule", "--param", "threshold=10"}),
      LocalEnvironment());
  ASSERT_EQ(result.exit_code, 1) << result.err;
  const std::string line =
      "RuleEvaluationConditionMet: Evaluation of the rule CustomGradientRule at step 4 resulted in the condition "
      "being met\n";
  EXPECT_EQ(testing::ReadWholeFile(out.path() / "message"), line);
  EXPECT_EQ(testing::ReadWholeFile(out.path() / "failure"), line);
  EXPECT_EQ(result.err.find("/opt/ml"), std::string::npos) << result.err;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(out.path())) {
    EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << entry.path();
    EXPECT_NE(entry.path().filename(), ".sagemaker-ignore");
  }
}

// LITMUS_OUTPUT_LAYOUT forces either layout; anything else is a client error naming it.
TEST(RunDefaults, OutputLayoutCanBeForced) {
  const std::vector<std::string> job = {"--trial", testing::FixturePath("pt_exploding").string(), "--plugin",
                                        LITMUS_CUSTOM_RULE_PLUGIN, "--rule", "CustomGradientRule"};
  {
    // SageMaker's layout with every path given: its temp folder in the output folder.
    testing::TempDir out;
    std::vector<std::string> args = RunArgsInto(out.path(), job);
    args.insert(args.end(), {"--message-file", (out.path() / "m").string(), "--failure-file",
                             (out.path() / "f").string()});
    auto env = LocalEnvironment();
    env.push_back({"LITMUS_OUTPUT_LAYOUT", "sagemaker"});
    const ProcessResult result = RunProcess(args, env);
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_TRUE(std::filesystem::is_directory(out.path() / ".sagemaker-ignore"));
    EXPECT_TRUE(std::filesystem::exists(out.path() / "m"));
  }
  {
    testing::TempDir out;
    auto env = LocalEnvironment();
    env.push_back({"LITMUS_OUTPUT_LAYOUT", "docker"});
    const ProcessResult result = RunProcess(RunArgsInto(out.path(), job), env);
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(result.err.find("litmus: error: LITMUS_OUTPUT_LAYOUT: expected sagemaker or local, got 'docker'"),
              std::string::npos)
        << result.err;
  }
}

// Waits until status.json shows `rule` in progress (the job has started).
bool WaitUntilRunning(const std::filesystem::path& out, const std::string& rule) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::filesystem::exists(out / "status.json")) {
      const Json status = ReadJson(out / "status.json");
      if (status["rule"] == rule && status["RuleEvaluationStatus"] == "InProgress") return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// A run that exits 0 or 143 leaves no message or failure file of an earlier run behind; a stop
// writes "Stopped: ..." into the message file.
TEST(RunDefaults, EachRunReplacesThePreviousRunsMessageFiles) {
  testing::TempDir out;
  const std::string trial = testing::FixturePath("pt_exploding").string();
  const auto fire = [&] {
    const ProcessResult fired = RunProcess(RunArgsInto(out.path(), {"--trial", trial, "--plugin", LITMUS_CUSTOM_RULE_PLUGIN,
                                                                    "--rule", "CustomGradientRule", "--param",
                                                                    "threshold=10"}),
                                           LocalEnvironment());
    ASSERT_EQ(fired.exit_code, 1) << fired.err;
    ASSERT_TRUE(std::filesystem::exists(out.path() / "message"));
    ASSERT_TRUE(std::filesystem::exists(out.path() / "failure"));
  };
  fire();
  const ProcessResult quiet = RunProcess(
      RunArgsInto(out.path(), {"--trial", trial, "--plugin", LITMUS_TEST_RULES_PLUGIN, "--rule", "NeverFires"}),
      LocalEnvironment());
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_FALSE(std::filesystem::exists(out.path() / "message")) << "exit 0 left the previous run's message";
  EXPECT_FALSE(std::filesystem::exists(out.path() / "failure")) << "exit 0 left the previous run's failure";

  fire();
  ChildProcess child(RunArgsInto(out.path(), {"--trial", testing::FixturePath("pt_run_partial").string(), "--plugin",
                                              LITMUS_TEST_RULES_PLUGIN, "--rule", "NeverFires"}),
                     LocalEnvironment());
  ASSERT_TRUE(WaitUntilRunning(out.path(), "NeverFires"));
  child.Signal(SIGTERM);
  const ProcessResult stopped = child.Wait(std::chrono::seconds(60));
  ASSERT_EQ(stopped.exit_code, 143) << stopped.err;
  EXPECT_EQ(testing::ReadWholeFile(out.path() / "message"), "Stopped: SIGTERM received\n");
  EXPECT_FALSE(std::filesystem::exists(out.path() / "failure")) << "exit 143 left the previous run's failure";
  EXPECT_EQ(ReadJson(out.path() / "status.json")["StatusDetails"], "Stopped: SIGTERM received");
}

// --help states the defaults that apply.
TEST(RunDefaults, HelpStatesTheRealDefaults) {
  const ProcessResult help = RunProcess({LitmusBinary(), "run", "--help"});
  ASSERT_EQ(help.exit_code, 0) << help.err;
  for (const char* text : {"default ./litmus-output", "default <output-dir>/message", "default <output-dir>/failure",
                           "inside a SageMaker rule container /opt/ml/processing/output/rule", "--allow-unknown-params"}) {
    EXPECT_NE(help.out.find(text), std::string::npos) << text << "\n" << help.out;
  }
  EXPECT_EQ(help.out.find("(default /opt/ml"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace litmus
