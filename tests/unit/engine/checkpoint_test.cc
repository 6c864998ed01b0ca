// JobCheckpoint: round trip, atomic replacement, refusal of foreign files, and the recovery of
// events.jsonl (firings and endings already reported; a torn last line removed).
#include "run/checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "support/temp_dir.h"

namespace litmus {
namespace {

using testing::ReadWholeFile;
using testing::TempDir;

JobCheckpoint Sample() {
  JobCheckpoint c;
  c.trial = "/data/trial";
  c.restarts = 2;
  RuleCheckpoint a;
  a.name = "ExplodingTensor";
  a.fingerprint = JobFingerprint("/data/trial", "ExplodingTensor", "", {{"collection_names", "gradients"}}, 0,
                                 std::nullopt, {}, true);
  a.cursor = 42;
  a.last_step = 41;
  a.datapoints = 40;
  a.fired_steps = {3, 7};
  a.violations = 9;
  a.details_json = {{"tensors", "[\"a\",\"b\"]"}};
  RuleCheckpoint b;
  b.name = "AllZero";
  b.done = true;
  b.status = "NoIssuesFound";
  b.details = "no more data: training has ended";
  c.rules = {a, b};
  return c;
}

TEST(CheckpointTest, RoundTrip) {
  TempDir dir;
  LITMUS_ASSERT_OK(WriteCheckpoint(dir.str(), Sample()));
  LITMUS_ASSERT_OK_AND_ASSIGN(std::optional<JobCheckpoint> read, ReadCheckpoint(dir.str()));
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->trial, "/data/trial");
  EXPECT_EQ(read->restarts, 2);
  ASSERT_EQ(read->rules.size(), 2u);
  const RuleCheckpoint& a = read->rules[0];
  EXPECT_EQ(a.name, "ExplodingTensor");
  EXPECT_EQ(a.fingerprint, Sample().rules[0].fingerprint);
  EXPECT_EQ(a.cursor, 42);
  EXPECT_EQ(a.last_step, 41);
  EXPECT_EQ(a.datapoints, 40);
  EXPECT_EQ(a.fired_steps, (std::vector<int64_t>{3, 7}));
  EXPECT_FALSE(a.done);
  EXPECT_EQ(a.violations, 9);
  EXPECT_EQ(a.details_json.at("tensors"), "[\"a\",\"b\"]");
  EXPECT_TRUE(read->rules[1].done);
  EXPECT_EQ(read->rules[1].status, "NoIssuesFound");
  // Written through a temp file that is gone afterwards.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    ++files;
    EXPECT_EQ(entry.path().filename(), kCheckpointFileName);
  }
  EXPECT_EQ(files, 1);
}

TEST(CheckpointTest, NoneAndForeignFiles) {
  TempDir dir;
  LITMUS_ASSERT_OK_AND_ASSIGN(std::optional<JobCheckpoint> none, ReadCheckpoint(dir.str()));
  EXPECT_FALSE(none.has_value());
  dir.WriteFile(kCheckpointFileName, "{\"version\": 99}");
  Status s = ReadCheckpoint(dir.str()).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--fresh"), std::string::npos) << s.ToString();
  dir.WriteFile(kCheckpointFileName, "not json");
  s = ReadCheckpoint(dir.str()).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(kCheckpointFileName), std::string::npos) << s.ToString();
}

TEST(CheckpointTest, WriteFailureNamesTheFile) {
  const Status s = WriteCheckpoint("/nonexistent-folder/out", Sample());
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("checkpoint"), std::string::npos) << s.ToString();
}

TEST(CheckpointTest, RecoversFiringsAndEndingsAndDropsATornLine) {
  TempDir dir;
  const std::string events = (dir.path() / "events.jsonl").string();
  const std::string whole =
      R"({"time":"t","event":"RuleStarted","rule":"A","rule_class":"A","step":0,"mode":null,"mode_step":null,"message":"m"})"
      "\n"
      R"({"time":"t","event":"RuleEvaluationConditionMet","rule":"A","rule_class":"A","step":3,"mode":"TRAIN","mode_step":3,"message":"m"})"
      "\n"
      R"({"time":"t","event":"RuleEvaluationConditionMet","rule":"A","rule_class":"A","step":7,"mode":"TRAIN","mode_step":7,"message":"m"})"
      "\n"
      R"({"time":"t","event":"RuleEnded","rule":"B","rule_class":"B","step":9,"mode":null,"mode_step":null,"status":"NoIssuesFound","message":"done"})"
      "\n";
  dir.WriteFile("events.jsonl", whole + R"({"time":"t","event":"RuleEvaluationConditionMet","rule":"A","st)");
  LITMUS_ASSERT_OK_AND_ASSIGN(auto reported, RecoverJobEvents(events));
  EXPECT_EQ(reported["A"].firings, (std::set<int64_t>{3, 7}));
  EXPECT_FALSE(reported["A"].ended_status.has_value());
  ASSERT_TRUE(reported["B"].ended_status.has_value());
  EXPECT_EQ(*reported["B"].ended_status, "NoIssuesFound");
  EXPECT_EQ(reported["B"].ended_message, "done");
  EXPECT_EQ(reported["B"].ended_step, 9);
  EXPECT_EQ(ReadWholeFile(events), whole) << "the torn last line is removed from the file";

  LITMUS_ASSERT_OK_AND_ASSIGN(auto none, RecoverJobEvents((dir.path() / "missing.jsonl").string()));
  EXPECT_TRUE(none.empty());
  dir.WriteFile("bad.jsonl", "{}\nnot json\n");
  EXPECT_EQ(RecoverJobEvents((dir.path() / "bad.jsonl").string()).status().code(), StatusCode::kInvalidArgument);
}

TEST(CheckpointTest, FingerprintChangesWithWhatDecidesVerdicts) {
  const auto base = JobFingerprint("t", "R", "", {{"threshold", "1"}}, 0, std::nullopt, {}, false);
  EXPECT_EQ(base, JobFingerprint("t", "R", "", {{"threshold", "1"}}, 0, std::nullopt, {}, false));
  EXPECT_NE(base, JobFingerprint("u", "R", "", {{"threshold", "1"}}, 0, std::nullopt, {}, false));
  EXPECT_NE(base, JobFingerprint("t", "R", "", {{"threshold", "2"}}, 0, std::nullopt, {}, false));
  EXPECT_NE(base, JobFingerprint("t", "R", "", {{"threshold", "1"}}, 5, std::nullopt, {}, false));
  EXPECT_NE(base, JobFingerprint("t", "R", "", {{"threshold", "1"}}, 0, 9, {}, false));
  EXPECT_NE(base, JobFingerprint("t", "R", "", {{"threshold", "1"}}, 0, std::nullopt, {"o"}, false));
  EXPECT_NE(base, JobFingerprint("t", "R", "", {{"threshold", "1"}}, 0, std::nullopt, {}, true));
  EXPECT_NE(base, JobFingerprint("t", "R", "", {{"threshold", "1"}}, 0, std::nullopt, {}, false, true));
  EXPECT_NE(base, JobFingerprint("t", "R", "/p.so", {{"threshold", "1"}}, 0, std::nullopt, {}, false));
}

// Resuming another job is refused, saying what differs.
TEST(CheckpointTest, PlanResumeRefusesAnotherJobSayingWhatDiffers) {
  TempDir dir;
  JobCheckpoint c;
  c.trial = "t";
  RuleCheckpoint r;
  r.name = "R";
  r.fingerprint = JobFingerprint("t", "R", "", {{"threshold", "1"}}, 0, std::nullopt, {}, false);
  c.rules = {r};
  LITMUS_ASSERT_OK(WriteCheckpoint(dir.str(), c));
  const auto now = JobFingerprint("t", "R", "", {{"threshold", "2"}}, 0, std::nullopt, {}, false);
  const Status refused = PlanResume(dir.str(), false, "t", {{"R", now}}).status();
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find(R"(parameters: {"threshold":"1"} then, {"threshold":"2"} now)"), std::string::npos)
      << refused.ToString();
  EXPECT_NE(refused.message().find("--fresh"), std::string::npos) << refused.ToString();
  LITMUS_ASSERT_OK_AND_ASSIGN(ResumePlan fresh, PlanResume(dir.str(), /*fresh=*/true, "t", {{"R", now}}));
  EXPECT_FALSE(fresh.resume);
  LITMUS_ASSERT_OK_AND_ASSIGN(ResumePlan same, PlanResume(dir.str(), false, "t", {{"R", r.fingerprint}}));
  EXPECT_TRUE(same.resume);
  c.finished = true;
  LITMUS_ASSERT_OK(WriteCheckpoint(dir.str(), c));
  LITMUS_ASSERT_OK_AND_ASSIGN(ResumePlan finished, PlanResume(dir.str(), false, "t", {{"R", now}}));
  EXPECT_FALSE(finished.resume) << "a finished job is started over";
}

}  // namespace
}  // namespace litmus
