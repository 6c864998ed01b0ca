// Overtraining (docs/rules/Overtraining.md) through the real binary: best-so-far counters per series,
// patience_train / patience_validation / delta, XGBoost's paired names, missing data.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "progress_test_support.h"
#include "support/temp_dir.h"

namespace litmus::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kRule[] = "Overtraining";

// TRAIN only: the loss falls by 0.06 per step until step 4 (0.76), then by 0.001 per step.
void WritePlateau(const TempDir& dir) {
  TrialBuilder trial(dir.path());
  for (int64_t s = 0; s < 20; ++s) {
    const double value = s <= 4 ? 1.0 - 0.06 * static_cast<double>(s) : 0.76 - 0.001 * static_cast<double>(s - 4);
    trial.Save(s, Mode::kTrain, {Scalar("loss", static_cast<float>(value))});
  }
  trial.Finish();
}

TEST(Overtraining, TrainingLossWithoutImprovementFires) {
  TempDir dir;
  WritePlateau(dir);
  // Best at 4; steps 5..9 improve by 0.001 < delta 0.01 each: since_best reaches 5 at step 9.
  const RuleRun run = RunRule(dir.str(), kRule, {});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(9));
  EXPECT_NEAR(run.report["Details"]["best_train"].get<double>(), 0.76, 1e-6);
  EXPECT_EQ(run.report["Details"]["since_train"], 5);
  EXPECT_EQ(run.report["Details"]["since_val"], 0);
  EXPECT_FALSE(run.report["Details"].contains("best_val"));
}

TEST(Overtraining, PatienceTrainAndDelta) {
  TempDir dir;
  WritePlateau(dir);
  EXPECT_THAT(RunRule(dir.str(), kRule, {"patience_train=3"}).fired, ElementsAre(7));
  // delta 0.0005: every 0.001 step is an improvement.
  EXPECT_EQ(RunRule(dir.str(), kRule, {"delta=0.0005"}).exit_code, 0);
  // delta 0.2: not even the 0.06 falls count after the first value.
  EXPECT_THAT(RunRule(dir.str(), kRule, {"delta=0.2", "patience_train=3"}).fired, ElementsAre(3));
}

// Phases: TRAIN steps keep improving; the validation loss is flat from its first value.
void WriteFlatValidation(const TempDir& dir) {
  TrialBuilder trial(dir.path());
  float train = 2.0f;
  for (int64_t s = 0; s < 40; ++s) {
    if (s % 3 == 2) {
      trial.Save(s, Mode::kEval, {Scalar("loss", 0.9f)});
    } else {
      trial.Save(s, Mode::kTrain, {Scalar("loss", train)});
      train -= 0.05f;
    }
  }
  trial.Finish();
}

TEST(Overtraining, ValidationLossWithoutImprovementFires) {
  TempDir dir;
  WriteFlatValidation(dir);
  // EVAL at 2, 5, 8, ...: the 1st sets the best, the 11th (step 32) makes since_val 10.
  const RuleRun run = RunRule(dir.str(), kRule, {});
  EXPECT_THAT(run.fired, ElementsAre(32)) << run.err;
  EXPECT_EQ(run.report["Details"]["since_val"], 10);
  EXPECT_EQ(run.report["Details"]["since_train"], 0);
  EXPECT_THAT(RunRule(dir.str(), kRule, {"patience_validation=2"}).fired, ElementsAre(8));
}

TEST(Overtraining, PairsTrainAndValidationNamesInATrialWithoutModes) {
  TempDir dir;
  TrialBuilder trial(dir.path());
  for (int64_t s = 0; s < 15; ++s) {
    trial.Save(s, Mode::kGlobal,
               {Scalar("train-rmse", 1.0f - 0.05f * static_cast<float>(s)), Scalar("validation-rmse", 0.8f)});
  }
  trial.Finish();
  const RuleRun run = RunRule(dir.str(), kRule, {});
  EXPECT_THAT(run.fired, ElementsAre(10)) << run.err;
  EXPECT_NEAR(run.report["Details"]["best_val"].get<double>(), 0.8, 1e-6);
}

TEST(Overtraining, MissingLossesNeverFire) {
  TempDir dir;
  TrialBuilder trial(dir.path());
  for (int64_t s = 0; s < 20; ++s) {
    trial.Save(s, Mode::kTrain, {Vector("gradient/w", {1, 2}), Scalar("accuracy", 0.5f)});
  }
  trial.Finish();
  const RuleRun run = RunRule(dir.str(), kRule, {});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(run.fired.empty());
}

// Flat losses saved only in PREDICT mode belong to neither series.
TEST(Overtraining, PredictLossesAreNeitherSeries) {
  TempDir dir;
  TrialBuilder trial(dir.path());
  for (int64_t s = 0; s < 20; ++s) trial.Save(s, Mode::kPredict, {Scalar("loss", 0.5f)});
  trial.Finish();
  const RuleRun run = RunRule(dir.str(), kRule, {"patience_train=1", "patience_validation=1"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_FALSE(run.report["Details"].contains("best_train"));
}

TEST(Overtraining, InvalidValuesAreConfigErrors) {
  TempDir dir;
  WritePlateau(dir);
  for (const std::string param : {"patience_train=0", "patience_validation=-1", "delta=-0.5", "delta=abc"}) {
    SCOPED_TRACE(param);
    const RuleRun run = RunRule(dir.str(), kRule, {param});
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_THAT(run.message, HasSubstr(param.substr(0, param.find('='))));
  }
}

}  // namespace
}  // namespace litmus::testing
