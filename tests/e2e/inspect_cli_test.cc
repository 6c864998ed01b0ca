// End-to-end: the real `litmus inspect` binary on fixture trials and on bad input. Checks exit
// codes, that failures are one line on stderr naming the problem, and that --json is the same
// document the library builds.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include "litmus/engine/trial.h"
#include "litmus/engine/trial_document.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using testing::LitmusBinary;
using testing::RunProcess;

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

TEST(InspectCli, JsonIsTheLibraryDocument) {
  for (const char* fixture : {"pt_ddp_two_workers", "pt_run_partial"}) {
    const auto dir = testing::FixturePath(fixture).string();
    const auto result = RunProcess({LitmusBinary(), "inspect", "--json", dir});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err, "");
    TrialOptions options;
    options.training_end_delay_refresh_s = 0;
    LITMUS_ASSERT_OK_AND_ASSIGN(auto trial, Trial::Open(Env::Default(), dir, options));
    LITMUS_ASSERT_OK_AND_ASSIGN(std::string doc, BuildTrialDocument(*trial));
    EXPECT_EQ(nlohmann::json::parse(result.out), nlohmann::json::parse(doc)) << fixture;
  }
}

TEST(InspectCli, SummaryNamesStepsWorkersAndTensors) {
  const auto result = RunProcess({LitmusBinary(), "inspect", testing::FixturePath("pt_ddp_two_workers").string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("workers: 2 (worker_0, worker_1)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("14 complete (0-13)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("EVAL: 4 steps"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("gradient/Net_fc1.weight"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("float32"), std::string::npos) << result.out;
}

TEST(InspectCli, PartialTrialReportsIncompleteState) {
  const auto result = RunProcess({LitmusBinary(), "inspect", testing::FixturePath("pt_run_partial").string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("in progress"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("9 complete (0-8)"), std::string::npos) << result.out;
}

void ExpectBadInput(const std::vector<std::string>& args, const std::string& must_mention) {
  const auto result = RunProcess(args);
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_EQ(Lines(result.err), 1) << result.err;
  EXPECT_NE(result.err.find(must_mention), std::string::npos) << result.err;
  EXPECT_EQ(result.out, "");
}

TEST(InspectCli, MissingFolder) {
  ExpectBadInput({LitmusBinary(), "inspect", "/nonexistent/trial"}, "/nonexistent/trial");
}

TEST(InspectCli, NotATrial) {
  testing::TempDir dir;
  dir.WriteFile("readme.txt", "hello");
  ExpectBadInput({LitmusBinary(), "inspect", dir.str()}, "not a trial");
}

TEST(InspectCli, FileInsteadOfFolder) {
  testing::TempDir dir;
  dir.WriteFile("file", "x");
  ExpectBadInput({LitmusBinary(), "inspect", dir.str() + "/file"}, "file");
}

TEST(InspectCli, CorruptEventFileNamesFileAndOffset) {
  testing::TempDir dir;
  testing::CopyTree(testing::FixturePath("pt_exploding"), dir.path());
  const auto event = dir.path() / "events/000000000003/000000000003_worker_0.tfevents";
  std::fstream f(event, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(660);  // inside the second record's length field (the first record is 654 bytes)
  f.put('\x7f');
  f.close();
  for (bool json : {false, true}) {
    std::vector<std::string> args = {LitmusBinary(), "inspect", dir.str()};
    if (json) args.insert(args.begin() + 2, "--json");
    const auto result = RunProcess(args);
    EXPECT_EQ(result.exit_code, 2) << result.err;
    // The summary lists every damaged record, then counts them; the JSON document stops at one.
    EXPECT_EQ(Lines(result.err), json ? 1 : 2) << result.err;
    if (!json) {
      EXPECT_NE(result.err.find("1 damaged record in trial"), std::string::npos) << result.err;
    }
    EXPECT_NE(result.err.find("000000000003_worker_0.tfevents"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("654"), std::string::npos) << result.err;
  }
}

// The JSON document and the --values listing are written as they go: damage found on the way
// still ends in exit code 2 with one line naming file and offset, and the document is left
// unfinished (never valid JSON that would hide the damage). Records outside the selection are
// not read.
TEST(InspectCli, DamageStopsTheStreamedOutputs) {
  testing::TempDir dir;
  testing::CopyTree(testing::FixturePath("pt_exploding"), dir.path());
  const auto event = dir.path() / "events/000000000003/000000000003_worker_0.tfevents";
  std::fstream f(event, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(660);
  f.put('\x7f');
  f.close();
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{
           {"--values"}, {"--json"}, {"--json", "--step", "3"}, {"--values", "--step", "2:5"}, {"--step", "3"}}) {
    std::vector<std::string> args = {LitmusBinary(), "inspect", dir.str()};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto result = RunProcess(args);
    EXPECT_EQ(result.exit_code, 2) << extra[0] << result.err;
    EXPECT_EQ(Lines(result.err), extra[0] == "--step" ? 2 : 1) << result.err;  // the summary also counts
    EXPECT_NE(result.err.find("000000000003_worker_0.tfevents"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("654"), std::string::npos) << result.err;
    if (extra[0] == "--json") {
      EXPECT_FALSE(nlohmann::json::accept(result.out)) << "an unfinished document";
    }
  }
  // Step 3 not selected: nothing damaged is read.
  for (const char* flag : {"--json", "--values"}) {
    const auto result = RunProcess({LitmusBinary(), "inspect", dir.str(), flag, "--step", "0:3"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    if (std::string(flag) == "--json") {
      EXPECT_TRUE(nlohmann::json::accept(result.out));
    }
  }
}

TEST(InspectCli, CorruptIndexFile) {
  testing::TempDir dir;
  testing::CopyTree(testing::FixturePath("pt_exploding"), dir.path());
  dir.WriteFile("index/000000000/000000000004_worker_0.json", "{\"meta\": {\"mode\": \"TRAIN\"");
  ExpectBadInput({LitmusBinary(), "inspect", dir.str()}, "000000000004_worker_0.json");
}

TEST(InspectCli, BadArguments) {
  const auto result = RunProcess({LitmusBinary(), "inspect"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(Lines(result.err), 1) << result.err;
  const auto unknown = RunProcess({LitmusBinary(), "frobnicate"});
  EXPECT_EQ(unknown.exit_code, 2);
}

TEST(InspectCli, HelpTellsTheCommands) {
  const auto result = RunProcess({LitmusBinary(), "--help"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.out.find("inspect"), std::string::npos);
}

}  // namespace
}  // namespace litmus
