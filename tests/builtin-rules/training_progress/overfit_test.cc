// Overfit (docs/rules/Overfit.md) through the real binary: TRAIN/EVAL phases, patience,
// ratio_threshold, start_step (also as the job-level key), XGBoost's paired train-/validation-
// names in a trial without modes, and missing or wrong-mode data.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "progress_test_support.h"
#include "support/temp_dir.h"

namespace litmus::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kRule[] = "Overfit";

// TRAIN 0-4 (loss 1.0), EVAL 5-7 (1.05: ratio 0.05), TRAIN 8-12 (1.0), EVAL 13-15 (1.5: ratio 0.5).
void WritePhases(const TempDir& dir) {
  TrialBuilder trial(dir.path());
  for (int64_t s = 0; s < 16; ++s) {
    const bool eval = (s >= 5 && s <= 7) || s >= 13;
    const float value = !eval ? 1.0f : s < 13 ? 1.05f : 1.5f;
    trial.Save(s, eval ? Mode::kEval : Mode::kTrain, {Scalar("loss", value)});
  }
  trial.Finish();
}

TEST(Overfit, FiresAtTheFirstEvalStepOverTheRatio) {
  TempDir dir;
  WritePhases(dir);
  const RuleRun run = RunRule(dir.str(), kRule, {});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(13));
  const nlohmann::json& d = run.report["Details"];
  EXPECT_NEAR(d["mean_train"].get<double>(), 1.0, 1e-6);
  EXPECT_NEAR(d["mean_val"].get<double>(), 1.5, 1e-6);
  EXPECT_NEAR(d["ratio"].get<double>(), 0.5, 1e-6);
  EXPECT_EQ(d["consecutive"], 1);
  EXPECT_EQ(run.report["Violations"], 1);
}

TEST(Overfit, PatienceCountsConsecutiveEvaluations) {
  TempDir dir;
  WritePhases(dir);
  EXPECT_THAT(RunRule(dir.str(), kRule, {"patience=2"}).fired, ElementsAre(14));
  EXPECT_THAT(RunRule(dir.str(), kRule, {"patience=3"}).fired, ElementsAre(15));
  const RuleRun four = RunRule(dir.str(), kRule, {"patience=4"});
  EXPECT_EQ(four.exit_code, 0) << four.err;
  EXPECT_EQ(four.report["Details"]["consecutive"], 3);
}

TEST(Overfit, RatioThreshold) {
  TempDir dir;
  WritePhases(dir);
  EXPECT_THAT(RunRule(dir.str(), kRule, {"ratio_threshold=0.01"}).fired, ElementsAre(5));
  EXPECT_EQ(RunRule(dir.str(), kRule, {"ratio_threshold=0.6"}).exit_code, 0);
}

// The rule's start_step and the job's are one key (spec §1.2 exception): given either way, the job
// starts there and the rule receives it.
TEST(Overfit, StartStepSkipsEarlierPhases) {
  TempDir dir;
  WritePhases(dir);
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{
           {"--param", "start_step=8"}, {"--param", "start-step=8"}, {"--start-step", "8"}}) {
    SCOPED_TRACE(extra[1]);
    const RuleRun run = RunRule(dir.str(), kRule, {"ratio_threshold=0.01"}, extra);
    EXPECT_THAT(run.fired, ElementsAre(13)) << run.err;
    EXPECT_THAT(run.report["RuleParameters"].get<std::string>(), HasSubstr("start_step:8\n"));
  }
}

// Validation values are averaged over the current EVAL phase; training values over the last
// TRAIN phase only.
TEST(Overfit, MeansOverPhases) {
  TempDir dir;
  TrialBuilder trial(dir.path());
  trial.Save(0, Mode::kTrain, {Scalar("loss", 4.0f)});  // an older phase: replaced by the next one
  trial.Save(1, Mode::kEval, {Scalar("loss", 4.0f)});
  trial.Save(2, Mode::kTrain, {Scalar("loss", 1.0f)});
  trial.Save(3, Mode::kTrain, {Scalar("loss", 3.0f)});  // mean_train 2
  trial.Save(4, Mode::kEval, {Scalar("loss", 2.0f)});   // ratio 0
  trial.Save(5, Mode::kEval, {Scalar("loss", 2.6f)});   // mean_val 2.3: ratio 0.15
  trial.Finish();
  const RuleRun run = RunRule(dir.str(), kRule, {});
  EXPECT_THAT(run.fired, ElementsAre(5)) << run.err;
  EXPECT_NEAR(run.report["Details"]["mean_train"].get<double>(), 2.0, 1e-6);
  EXPECT_NEAR(run.report["Details"]["mean_val"].get<double>(), 2.3, 1e-6);
}

// Several loss tensors: their mean per step.
TEST(Overfit, SeveralLossTensorsAreAveragedAndTensorRegexSelects) {
  TempDir dir;
  TrialBuilder trial(dir.path());
  for (int64_t s = 0; s < 4; ++s) trial.Save(s, Mode::kTrain, {Scalar("loss_a", 1.0f), Scalar("loss_b", 3.0f)});
  for (int64_t s = 4; s < 6; ++s) trial.Save(s, Mode::kEval, {Scalar("loss_a", 1.0f), Scalar("loss_b", 4.0f)});
  trial.Finish();
  const RuleRun both = RunRule(dir.str(), kRule, {});  // 2.5 vs 2: ratio 0.25
  EXPECT_THAT(both.fired, ElementsAre(4)) << both.err;
  EXPECT_NEAR(both.report["Details"]["ratio"].get<double>(), 0.25, 1e-6);
  EXPECT_EQ(RunRule(dir.str(), kRule, {"tensor_regex=loss_a"}).exit_code, 0);  // 1 vs 1
}

// XGBoost: no modes, metrics train-rmse / validation-rmse at every step, no losses collection.
TEST(Overfit, PairsTrainAndValidationNamesInATrialWithoutModes) {
  TempDir dir;
  TrialBuilder trial(dir.path());
  for (int64_t s = 0; s < 10; ++s) {
    trial.Save(s, Mode::kGlobal, {Scalar("train-rmse", 1.0f), Scalar("validation-rmse", s < 5 ? 1.05f : 1.3f)});
  }
  trial.Finish();
  const RuleRun run = RunRule(dir.str(), kRule, {});
  EXPECT_THAT(run.fired, ElementsAre(5)) << run.err;
  EXPECT_NEAR(run.report["Details"]["ratio"].get<double>(), 0.3, 1e-6);
  EXPECT_THAT(RunRule(dir.str(), kRule, {"tensor_regex=rmse"}).fired, ElementsAre(5));
  EXPECT_THAT(RunRule(dir.str(), kRule, {"ratio_threshold=0.01"}).fired, ElementsAre(0));
}

TEST(Overfit, MissingOrWrongModeDataNeverFires) {
  TempDir train_only, eval_only, predict, no_loss;
  {
    TrialBuilder t(train_only.path());
    for (int64_t s = 0; s < 5; ++s) t.Save(s, Mode::kTrain, {Scalar("loss", 1.0f + static_cast<float>(s))});
    t.Finish();
  }
  {
    TrialBuilder t(eval_only.path());  // validation losses without any training loss to compare with
    for (int64_t s = 0; s < 5; ++s) t.Save(s, Mode::kEval, {Scalar("loss", 10.0f)});
    t.Finish();
  }
  {
    TrialBuilder t(predict.path());
    t.Save(0, Mode::kTrain, {Scalar("loss", 1.0f)});
    for (int64_t s = 1; s < 5; ++s) t.Save(s, Mode::kPredict, {Scalar("loss", 10.0f)});
    t.Finish();
  }
  {
    TrialBuilder t(no_loss.path());
    for (int64_t s = 0; s < 5; ++s) t.Save(s, s < 3 ? Mode::kTrain : Mode::kEval, {Vector("gradient/w", {1, 2})});
    t.Finish();
  }
  for (const TempDir* dir : {&train_only, &eval_only, &predict, &no_loss}) {
    const RuleRun run = RunRule(dir->str(), kRule, {});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_TRUE(run.fired.empty());
  }
}

TEST(Overfit, InvalidValuesAreConfigErrors) {
  TempDir dir;
  WritePhases(dir);
  for (const std::string param : {"patience=0", "ratio_threshold=x"}) {
    SCOPED_TRACE(param);
    const RuleRun run = RunRule(dir.str(), kRule, {param});
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_THAT(run.message, HasSubstr(param.substr(0, param.find('='))));
  }
  // start_step is also the job's key: the job refuses it before any rule is created.
  const RuleRun negative = RunRule(dir.str(), kRule, {"start_step=-3"});
  EXPECT_EQ(negative.exit_code, 2) << negative.err;
  EXPECT_THAT(negative.err, HasSubstr("start_step: expected a non-negative integer step"));
}

}  // namespace
}  // namespace litmus::testing
