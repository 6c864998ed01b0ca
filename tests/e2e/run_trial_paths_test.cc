// End-to-end: trial paths as training produces them (docs/run.md, "Waiting for the trial"). A
// folder that does not exist yet, or is empty, is waited for and the job says so at once and then
// at every interval; a folder that holds trials but is not one is an error naming them; a step
// range that selects no saved step of a finished trial says so instead of a silent NoIssuesFound.
// libcurl is loaded only for s3:// paths: local jobs run without it, and an S3 trial without it is
// an error naming the library.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "run_test_support.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using testing::ChildProcess;
using testing::Count;
using testing::Json;
using testing::kFastEnd;
using testing::ProcessResult;
using testing::ReadJson;
using testing::RunArgsInto;
using testing::RunProcess;

std::vector<std::pair<std::string, std::string>> FastNotices() {
  auto env = kFastEnd;
  env.push_back({"LITMUS_PROGRESS_INTERVAL_S", "0.2"});
  return env;
}

// Training has not started: the folder appears later (atomically, as a rename), and the job then
// evaluates it to its verdict.
TEST(RunTrialPaths, MissingFolderIsWaitedFor) {
  testing::TempDir root, out;
  const std::filesystem::path trial = root.path() / "not-yet";
  ChildProcess child(RunArgsInto(out.path(), {"--trial", trial.string(), "--plugin", LITMUS_CUSTOM_RULE_PLUGIN,
                                              "--rule", "CustomGradientRule", "--param", "threshold=10"}),
                     FastNotices());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  testing::CopyTree(testing::FixturePath("pt_exploding"), root.path() / "staging");
  std::filesystem::rename(root.path() / "staging", trial);
  const ProcessResult result = child.Wait(std::chrono::seconds(60));
  ASSERT_FALSE(result.timed_out);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const std::string notice = "litmus: warning: trial folder " + trial.string() +
                             " does not exist yet: waiting for training to create it";
  EXPECT_NE(result.err.find(notice), std::string::npos) << result.err;
  EXPECT_GE(Count(result.err, notice), 2u) << "said at once, then again at every interval:\n" << result.err;
  EXPECT_EQ(ReadJson(out.path() / "status.json")["step"], 4);
}

// Runs a job on `trial` until its stderr holds `notice` (at most a minute: a slow or loaded
// machine takes its time to start), stops it, and returns its stderr.
std::string StderrWhileWaiting(const std::filesystem::path& trial, const std::string& notice) {
  testing::TempDir out;
  ChildProcess child(RunArgsInto(out.path(), {"--trial", trial.string(), "--plugin", LITMUS_TEST_RULES_PLUGIN, "--rule",
                                              "NeverFires"}),
                     FastNotices());
  child.WaitForErr(notice);
  child.Signal(SIGTERM);
  const ProcessResult result = child.Wait(std::chrono::seconds(60));
  EXPECT_EQ(result.exit_code, 143) << result.err;
  EXPECT_EQ(testing::ReadWholeFile(out.path() / "message"), "Stopped: SIGTERM received\n");
  return result.err;
}

// An existing folder without collections files says at once what it waits for.
TEST(RunTrialPaths, EmptyFolderSaysAtOnceThatItWaits) {
  testing::TempDir empty;
  const std::string empty_notice =
      "litmus: warning: trial folder " + empty.str() + " is empty: waiting for training to save its first step";
  EXPECT_NE(StderrWhileWaiting(empty.path(), empty_notice).find(empty_notice), std::string::npos);
  testing::TempDir started;
  std::filesystem::create_directories(started.path() / "events");
  const std::string started_notice = "litmus: warning: trial " + started.str() + " has no collections file yet";
  EXPECT_NE(StderrWhileWaiting(started.path(), started_notice).find(started_notice), std::string::npos);
}

// The parent of several trials: an immediate client error naming them (a few) and suggesting one.
TEST(RunTrialPaths, FolderOfTrialsIsAnErrorNamingThem) {
  testing::TempDir parent, out;
  for (const char* name : {"run-a", "run-b", "run-c", "run-d"}) {
    testing::CopyTree(testing::FixturePath("pt_exploding"), parent.path() / name);
  }
  std::filesystem::create_directories(parent.path() / "notes");
  const ProcessResult result = RunProcess(
      RunArgsInto(out.path(), {"--trial", parent.str(), "--plugin", LITMUS_TEST_RULES_PLUGIN, "--rule", "NeverFires"}),
      kFastEnd, std::chrono::seconds(60));
  ASSERT_FALSE(result.timed_out) << "waited for a folder of trials";
  EXPECT_EQ(result.exit_code, 2) << result.err;
  const std::string message = "trial " + parent.str() + " is not a trial but holds trials: run-a, run-b, run-c (and 1 " +
                              "more); use e.g. --trial " + (parent.path() / "run-a").string();
  EXPECT_NE(result.err.find("litmus: error: ClientError: " + message), std::string::npos) << result.err;
  EXPECT_EQ(testing::ReadWholeFile(out.path() / "failure"), "ClientError: " + message + "\n");
}

// A libcurl that cannot be loaded (here a damaged file found first through LD_LIBRARY_PATH): a
// local job never loads it (were litmus linked to it, the process could not even start), and an
// s3:// trial is a one-line error naming the library and how to install it.
TEST(RunTrialPaths, LibcurlIsLoadedOnlyForS3Paths) {
  testing::TempDir libs, out, out_s3;
  libs.WriteFile("libcurl.so.4", "not a library");
  auto env = kFastEnd;
  env.push_back({"LD_LIBRARY_PATH", libs.str()});
  const ProcessResult local = RunProcess(
      RunArgsInto(out.path(), {"--trial", testing::FixturePath("pt_exploding").string(), "--plugin",
                               LITMUS_TEST_RULES_PLUGIN, "--rule", "NeverFires"}),
      env, std::chrono::seconds(60));
  ASSERT_FALSE(local.timed_out);
  EXPECT_EQ(local.exit_code, 0) << local.err;
  env.insert(env.end(), {{"AWS_ACCESS_KEY_ID", "test"},
                         {"AWS_SECRET_ACCESS_KEY", "test"},
                         {"AWS_REGION", "us-east-1"},
                         {"AWS_ENDPOINT_URL", "http://127.0.0.1:9"}});  // (never reached)
  const ProcessResult s3 = RunProcess(
      RunArgsInto(out_s3.path(), {"--trial", "s3://bucket/trial", "--plugin", LITMUS_TEST_RULES_PLUGIN, "--rule",
                                  "NeverFires"}),
      env, std::chrono::seconds(60));
  ASSERT_FALSE(s3.timed_out);
  EXPECT_EQ(s3.exit_code, 2) << s3.err;
  const std::string message = "ClientError: trial s3://bucket/trial: cannot load libcurl.so.4 (HTTP and S3 need "
                              "libcurl; on Debian: apt-get install libcurl4): ";
  EXPECT_EQ(Count(s3.err, "litmus: error: " + message), 1u) << s3.err;
  EXPECT_NE(testing::ReadWholeFile(out_s3.path() / "failure").find(message), std::string::npos);
}

// --start-step past the last saved step of a finished trial: a warning and StatusDetails.
TEST(RunTrialPaths, StepRangeThatSelectsNothingSaysSo) {
  testing::TempDir out;
  const ProcessResult result = RunProcess(
      RunArgsInto(out.path(), {"--trial", testing::FixturePath("pt_exploding").string(), "--plugin",
                               LITMUS_TEST_RULES_PLUGIN, "--rule", "NeverFires", "--start-step", "100"}),
      kFastEnd);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  const std::string note = "no saved step in [100, inf): the trial's steps are 0..15 (16 saved)";
  EXPECT_NE(result.err.find("litmus: warning: rule NeverFires: " + note), std::string::npos) << result.err;
  const Json status = ReadJson(out.path() / "status.json");
  EXPECT_EQ(status["StatusDetails"], note);
  EXPECT_EQ(status["Warnings"], Json::array({note}));
  EXPECT_EQ(ReadJson(out.path() / "rule-reports" / "NeverFires.json")["Warnings"], Json::array({note}));
  // A range that selects saved steps does not.
  testing::TempDir fine;
  const ProcessResult ok = RunProcess(
      RunArgsInto(fine.path(), {"--trial", testing::FixturePath("pt_exploding").string(), "--plugin",
                                LITMUS_TEST_RULES_PLUGIN, "--rule", "NeverFires", "--start-step", "10"}),
      kFastEnd);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.err.find("no saved step"), std::string::npos) << ok.err;
}

}  // namespace
}  // namespace litmus
