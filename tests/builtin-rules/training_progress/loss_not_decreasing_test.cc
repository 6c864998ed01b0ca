// LossNotDecreasing (docs/rules/LossNotDecreasing.md) through the real binary: the spec's [TEST] vector,
// cadence and baseline, each parameter, the EVAL -> TRAIN -> GLOBAL mode search, the fallback to
// every scalar tensor, and bad values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "progress_test_support.h"
#include "support/temp_dir.h"

namespace litmus::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kRule[] = "LossNotDecreasing";

// Saves `series(step)` as scalar `name` (and any more tensors) at every given step in `mode`.
template <class Series>
void SaveSeries(TrialBuilder& trial, const std::vector<int64_t>& steps, Mode mode, const std::string& name,
                Series series) {
  for (const int64_t step : steps) trial.Save(step, mode, {Scalar(name, series(step))});
}

std::vector<int64_t> Range(int64_t from, int64_t to, int64_t by = 1) {
  std::vector<int64_t> out;
  for (int64_t s = from; s < to; s += by) out.push_back(s);
  return out;
}

// The 2019 smdebug test (docs/rules/LossNotDecreasing.md [TEST]): loss_0 and loss_1 at 0, 4, 8, ... with
// values 0.3, 0.33, 0.31, 0.30, 0.28, 0.2, 0.42.
void WriteSpecVector(const TempDir& dir) {
  TrialBuilder trial(dir.path());
  const std::vector<float> values = {0.3f, 0.33f, 0.31f, 0.30f, 0.28f, 0.2f, 0.42f};
  for (size_t i = 0; i < values.size(); ++i) {
    trial.Save(static_cast<int64_t>(4 * i), Mode::kTrain, {Scalar("loss_0", values[i]), Scalar("loss_1", values[i])});
  }
  trial.Finish();
}

TEST(LossNotDecreasing, SpecVectorFirstMetAt12WithDefaults) {
  TempDir dir;
  WriteSpecVector(dir);
  const RuleRun run = RunRule(dir.str(), kRule, {});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(12));
  EXPECT_EQ(run.message,
            "RuleEvaluationConditionMet: Evaluation of the rule LossNotDecreasing at step 12 resulted in the "
            "condition being met\n");
  // Both tensors (flat against step 0) violate; Details explain each.
  EXPECT_EQ(run.report["Violations"], 2);
  const nlohmann::json& d = run.report["Details"]["loss_0"];
  EXPECT_EQ(d["base_step"], 0);
  EXPECT_EQ(d["step"], 12);
  EXPECT_NEAR(d["base"].get<double>(), 0.3, 1e-6);
  EXPECT_NEAR(d["value"].get<double>(), 0.3, 1e-6);
  EXPECT_NEAR(d["change_percent"].get<double>(), 0.0, 1e-4);
}

// Cadence: after the evaluation at 12 the next is at >= 22, i.e. 24 (16 and 20 are too soon, so
// the fall to 0.28 and 0.2 is never compared); at 24 the loss rose 40% > 5% against step 12.
TEST(LossNotDecreasing, SpecVectorWithKeepGoingEvaluatesEveryNumSteps) {
  TempDir dir;
  WriteSpecVector(dir);
  const RuleRun run = RunRule(dir.str(), kRule, {}, {"--keep-going"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(12, 24));
  EXPECT_EQ(run.report["Details"]["loss_1"]["base_step"], 12);
  EXPECT_NEAR(run.report["Details"]["loss_1"]["change_percent"].get<double>(), 40.0, 1e-3);
}

TEST(LossNotDecreasing, NumStepsSetsTheBaselineDistance) {
  TempDir dir;
  WriteSpecVector(dir);
  // num_steps 4: at step 4 the loss rose 10% (> 5%) against step 0.
  EXPECT_THAT(RunRule(dir.str(), kRule, {"num_steps=4"}).fired, ElementsAre(4));
  // num_steps 30: no step has a baseline 30 steps back.
  const RuleRun none = RunRule(dir.str(), kRule, {"num_steps=30"});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_TRUE(none.fired.empty());
}

TEST(LossNotDecreasing, DecreasingLossDoesNotFire) {
  TempDir dir;
  TrialBuilder trial(dir.path());
  SaveSeries(trial, Range(0, 40), Mode::kTrain, "loss", [](int64_t s) { return 1.0f - 0.02f * static_cast<float>(s); });
  trial.Finish();
  const RuleRun run = RunRule(dir.str(), kRule, {});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(run.fired.empty());
  EXPECT_EQ(run.status["RuleEvaluationStatus"], "NoIssuesFound");
  EXPECT_EQ(run.report["Datapoints"], 40);
}

// A loss that falls 1% per step falls about 9.6% over 10 steps.
TEST(LossNotDecreasing, DiffPercentIsTheRequiredDecrease) {
  TempDir dir;
  TrialBuilder trial(dir.path());
  SaveSeries(trial, Range(0, 30), Mode::kTrain, "loss",
             [](int64_t s) { return std::pow(0.99f, static_cast<float>(s)); });
  trial.Finish();
  EXPECT_EQ(RunRule(dir.str(), kRule, {"diff_percent=9"}).exit_code, 0);
  EXPECT_THAT(RunRule(dir.str(), kRule, {"diff_percent=10"}).fired, ElementsAre(10));
}

// The literal reading of §3.3 (kept behind LossConditionMet): a loss that rose by less than
// increase_threshold_percent does not fire; a larger rise does.
TEST(LossNotDecreasing, IncreaseThresholdPercentToleratesSmallRises) {
  TempDir dir;
  TrialBuilder trial(dir.path());
  SaveSeries(trial, Range(0, 25), Mode::kTrain, "loss",
             [](int64_t s) { return 1.0f + 0.003f * static_cast<float>(s); });
  trial.Finish();
  const RuleRun quiet = RunRule(dir.str(), kRule, {});  // +3% over 10 steps, default tolerance 5%
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_THAT(RunRule(dir.str(), kRule, {"increase_threshold_percent=2"}).fired, ElementsAre(10));
}

// TRAIN at even global steps, EVAL at odd ones, every loss flat: the mode decides which steps
// count and in which unit num_steps is measured.
TEST(LossNotDecreasing, ModeSearchAndExplicitMode) {
  TempDir dir;
  TrialBuilder trial(dir.path());
  for (int64_t s = 0; s < 30; ++s) trial.Save(s, s % 2 == 0 ? Mode::kTrain : Mode::kEval, {Scalar("loss", 0.5f)});
  trial.Finish();
  // No mode: EVAL has steps, so EVAL: mode step 10 is global step 21.
  const RuleRun searched = RunRule(dir.str(), kRule, {});
  EXPECT_THAT(searched.fired, ElementsAre(21)) << searched.err;
  EXPECT_THAT(searched.err, HasSubstr("checking losses saved in mode EVAL"));
  EXPECT_THAT(RunRule(dir.str(), kRule, {"mode=TRAIN"}).fired, ElementsAre(20));
  EXPECT_THAT(RunRule(dir.str(), kRule, {"mode=GLOBAL"}).fired, ElementsAre(10));
  EXPECT_THAT(RunRule(dir.str(), kRule, {"mode=eval"}).fired, ElementsAre(21));
}

TEST(LossNotDecreasing, ModeSearchFallsBackToTrainThenGlobal) {
  TempDir train, global;
  {
    TrialBuilder trial(train.path());
    SaveSeries(trial, Range(0, 15), Mode::kTrain, "loss", [](int64_t) { return 0.5f; });
    trial.Finish();
  }
  {
    TrialBuilder trial(global.path());
    SaveSeries(trial, Range(0, 15), Mode::kGlobal, "loss", [](int64_t) { return 0.5f; });
    trial.Finish();
  }
  const RuleRun t = RunRule(train.str(), kRule, {});
  EXPECT_THAT(t.fired, ElementsAre(10));
  EXPECT_THAT(t.err, HasSubstr("checking losses saved in mode TRAIN"));
  const RuleRun g = RunRule(global.str(), kRule, {});
  EXPECT_THAT(g.fired, ElementsAre(10));
  EXPECT_THAT(g.err, HasSubstr("checking losses saved in mode GLOBAL"));
  // A mode without any loss step: nothing is evaluated.
  EXPECT_EQ(RunRule(train.str(), kRule, {"mode=EVAL"}).exit_code, 0);
}

// loss (losses collection) falls; flat_metric (default collection) is flat; weights_vec (not a
// scalar) is flat.
void WriteSelectionTrial(const TempDir& dir) {
  TrialBuilder trial(dir.path());
  for (int64_t s = 0; s < 20; ++s) {
    trial.Save(s, Mode::kTrain,
               {Scalar("loss", 1.0f - 0.02f * static_cast<float>(s)), Scalar("flat_metric", 0.7f),
                Vector("weights_vec", {1, 2, 3})});
  }
  trial.Finish();
}

TEST(LossNotDecreasing, SelectionParameters) {
  TempDir dir;
  WriteSelectionTrial(dir);
  EXPECT_EQ(RunRule(dir.str(), kRule, {}).exit_code, 0);  // only the falling loss
  // tensor_regex adds to the losses collection (union).
  const RuleRun regex = RunRule(dir.str(), kRule, {"tensor_regex=flat"});
  EXPECT_THAT(regex.fired, ElementsAre(10));
  EXPECT_TRUE(regex.report["Details"].contains("flat_metric"));
  EXPECT_TRUE(regex.report["Details"].contains("loss"));
  EXPECT_THAT(RunRule(dir.str(), kRule, {"collection_names=default"}).fired, ElementsAre(10));
  // Non-scalar tensors are never checked.
  EXPECT_EQ(RunRule(dir.str(), kRule, {"tensor_regex=weights_vec"}).exit_code, 0);
  // Without the losses collection and nothing else selected: every scalar tensor (flat_metric too).
  const RuleRun fallback = RunRule(dir.str(), kRule, {"use_losses_collection=False"});
  EXPECT_THAT(fallback.fired, ElementsAre(10));
  EXPECT_THAT(fallback.err, HasSubstr("checking every scalar tensor of the trial"));
  // Without the losses collection, only the regex.
  EXPECT_EQ(RunRule(dir.str(), kRule, {"use_losses_collection=false", "tensor_regex=^loss$"}).exit_code, 0);
}

// [INFERRED from TEST]: a trial without a losses collection still fires with defaults.
TEST(LossNotDecreasing, TrialWithoutLossesCollectionFallsBackToScalars) {
  TempDir dir;
  TrialBuilder trial(dir.path(), {ProgressCollections()[0], ProgressCollections()[1]});  // all, default
  SaveSeries(trial, Range(0, 12), Mode::kTrain, "loss_0", [](int64_t) { return 0.3f; });
  trial.Finish();
  EXPECT_THAT(RunRule(dir.str(), kRule, {}).fired, ElementsAre(10));
}

TEST(LossNotDecreasing, MissingLossesNeverFire) {
  TempDir dir;
  TrialBuilder trial(dir.path());
  for (int64_t s = 0; s < 15; ++s) trial.Save(s, Mode::kTrain, {Vector("gradient/w", {0.1f, 0.2f})});
  trial.Finish();
  const RuleRun run = RunRule(dir.str(), kRule, {});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.report["Violations"], 0);
}

// A loss saved only at some steps: the baseline is the newest saved step num_steps back.
TEST(LossNotDecreasing, BaselineIsTheNewestSavedStepFarEnoughBack) {
  TempDir dir;
  TrialBuilder trial(dir.path());
  for (const int64_t s : {0, 3, 6, 9, 12, 15, 18, 21}) {
    trial.Save(s, Mode::kTrain, {Scalar("loss", s < 9 ? 1.0f - 0.1f * static_cast<float>(s) : 0.1f)});
  }
  trial.Finish();
  // At 12 the baseline is 0 (1.0 -> 0.1: fine); next at >= 22: none. At 21 (too soon) nothing.
  const RuleRun run = RunRule(dir.str(), kRule, {}, {"--keep-going"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.report["Details"]["loss"]["base_step"], 0);
  EXPECT_EQ(run.report["Details"]["loss"]["step"], 12);
  // With num_steps 5: 6 vs 0, 12 vs 6 (0.4 -> 0.1), 18 vs 12 (flat: fires).
  EXPECT_THAT(RunRule(dir.str(), kRule, {"num_steps=5"}).fired, ElementsAre(18));
}

TEST(LossNotDecreasing, InvalidValuesAreConfigErrors) {
  TempDir dir;
  WriteSpecVector(dir);
  for (const auto& [param, key] :
       std::vector<std::pair<std::string, std::string>>{{"num_steps=0", "num_steps"},
                                                        {"num_steps=abc", "num_steps"},
                                                        {"diff_percent=150", "diff_percent"},
                                                        {"increase_threshold_percent=-1", "increase_threshold_percent"},
                                                        {"mode=PREDICT", "mode"},
                                                        {"use_losses_collection=yes", "use_losses_collection"}}) {
    SCOPED_TRACE(param);
    const RuleRun run = RunRule(dir.str(), kRule, {param});
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_THAT(run.message, HasSubstr(key));
  }
}

// docs/rules/semantics.md §1.8: DOC-2020's misspelled nym_steps is warned about, not aliased.
TEST(LossNotDecreasing, MisspelledKeyIsWarnedAbout) {
  TempDir dir;
  WriteSpecVector(dir);
  const RuleRun run = RunRule(dir.str(), "loss_not_decreasing", {"nym_steps=4"});
  EXPECT_THAT(run.fired, ElementsAre(12));  // num_steps stays 10
  EXPECT_THAT(run.err, HasSubstr("unknown parameter 'nym_steps'"));
}

}  // namespace
}  // namespace litmus::testing
