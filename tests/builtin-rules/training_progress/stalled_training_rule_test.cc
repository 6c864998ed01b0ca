// StalledTrainingRule (docs/rules/StalledTrainingRule.md) through the real binary: a trial that stops
// growing fires at its last step, one that keeps growing and then ends does not, one that never
// appears fires at step 0; stop_training_on_fire registers a StopTraining action.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "progress_test_support.h"
#include "support/temp_dir.h"

namespace litmus::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kRule[] = "StalledTrainingRule";

void WriteSteps(const TempDir& dir, int64_t steps, bool ended) {
  TrialBuilder trial(dir.path());
  for (int64_t s = 0; s < steps; ++s) trial.Save(s, Mode::kTrain, {Scalar("loss", 1.0f)});
  trial.Finish(ended);
}

TEST(StalledTrainingRule, TrialThatStopsGrowingFiresAtItsLastStep) {
  TempDir dir;
  WriteSteps(dir, 3, /*ended=*/false);
  const RuleRun run = RunRule(dir.str(), kRule, {"threshold=1"});
  ASSERT_FALSE(run.timed_out);
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(2));
  EXPECT_GT(run.report["Details"]["seconds_since_progress"].get<double>(), 1.0);
  EXPECT_EQ(run.report["Details"]["last_step"], 2);
  EXPECT_EQ(run.report["Datapoints"], 3);
  EXPECT_EQ(run.status["RuleEvaluationStatus"], "IssuesFound");
}

// A writer adds a step every 50 ms for about 1.5 s (longer than nothing but well under the 2 s
// threshold between two steps), then ends the training: the rule ends normally.
TEST(StalledTrainingRule, TrialThatKeepsGrowingAndEndsDoesNotFire) {
  TempDir dir;
  std::thread writer([&dir] {
    TrialBuilder trial(dir.path());
    for (int64_t s = 0; s < 30; ++s) {
      trial.Save(s, Mode::kTrain, {Scalar("loss", 1.0f)});
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    trial.Finish(/*ended=*/true);
  });
  const RuleRun run = RunRule(dir.str(), kRule, {"threshold=2"});
  writer.join();
  ASSERT_FALSE(run.timed_out);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(run.fired.empty());
  EXPECT_EQ(run.report["Datapoints"], 30);
  EXPECT_EQ(run.status["RuleEvaluationStatus"], "NoIssuesFound");
}

// The timer runs while the job still waits for the trial's first collections file.
TEST(StalledTrainingRule, TrialThatNeverAppearsFires) {
  TempDir empty;
  const RuleRun run = RunRule(empty.str(), kRule, {"threshold=1"});
  ASSERT_FALSE(run.timed_out);
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(0));
  EXPECT_TRUE(run.report["Details"]["last_step"].is_null());
  EXPECT_EQ(run.message,
            "RuleEvaluationConditionMet: Evaluation of the rule StalledTrainingRule at step 0 resulted in the "
            "condition being met\n");
}

// A finished trial ends the rule normally, however small the threshold.
TEST(StalledTrainingRule, FinishedTrialEndsNormally) {
  TempDir dir;
  WriteSteps(dir, 5, /*ended=*/true);
  const RuleRun run = RunRule(dir.str(), "stalled_training_rule", {"threshold=0"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(run.fired.empty());
}

// Without stop_training_on_fire the rule registers no action, so nothing is prepared at rule start
// (and no AWS call is attempted). The action itself is tested end to end against a local
// signature-checking endpoint: ActionsE2eTest.StalledTrainingRuleStopsTheOneMatchingJob.
TEST(StalledTrainingRule, WithoutStopTrainingOnFireNoActionIsRegistered) {
  TempDir empty;
  const RuleRun run = RunRule(empty.str(), kRule, {"threshold=0", "training_job_name_prefix=my-job-1"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.err, ::testing::Not(HasSubstr("stoptraining")));
  EXPECT_THAT(run.err, ::testing::Not(HasSubstr("Action")));
}

TEST(StalledTrainingRule, InvalidValuesAreConfigErrors) {
  TempDir empty;
  for (const auto& [params, key] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"threshold=-1"}, "threshold"},
           {{"threshold=soon"}, "threshold"},
           {{"stop_training_on_fire=True"}, "training_job_name_prefix"},
           {{"stop_training_on_fire=maybe"}, "stop_training_on_fire"}}) {
    SCOPED_TRACE(params[0]);
    const RuleRun run = RunRule(empty.str(), kRule, params);
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_THAT(run.message, HasSubstr(key));
  }
}

}  // namespace
}  // namespace litmus::testing
