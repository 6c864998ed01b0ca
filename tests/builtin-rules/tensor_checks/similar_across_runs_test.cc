// SimilarAcrossRuns (docs/rules/SimilarAcrossRuns.md) through the real `litmus run` with two trials: equal
// runs, a difference at one step, the tolerances, shapes, tensors missing from the other trial,
// selection, the other trial from RuleParameters, and the error without another trial.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/temp_dir.h"
#include "tensor_checks_support.h"

namespace litmus::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Steps 0..3 of w = {s, s + 1} and gradient/w = {s}; `w_at_2` replaces w at step 2.
std::vector<StepSpec> FourSteps(TensorValue w_at_2) {
  std::vector<StepSpec> steps;
  for (int s = 0; s < 4; ++s) {
    const double v = s;
    steps.push_back({Mode::kTrain, {s == 2 ? w_at_2 : Values("w", {v, v + 1}), Values("gradient/w", {v})}});
  }
  return steps;
}

struct TwoTrials {
  TempDir base, other;
};

TEST(SimilarAcrossRuns, IdenticalRunsDoNotFire) {
  TwoTrials t;
  WriteTrial(t.base.path(), FourSteps(Values("w", {2, 3})));
  WriteTrial(t.other.path(), FourSteps(Values("w", {2, 3})));
  const RuleRun run = RunRule(t.base.path(), "SimilarAcrossRuns", {}, {"--other-trial", t.other.str()});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.report["Datapoints"], 4);
}

TEST(SimilarAcrossRuns, FiresAtTheStepWhereTheRunsDiffer) {
  TwoTrials t;
  WriteTrial(t.base.path(), FourSteps(Values("w", {2, 3})));
  WriteTrial(t.other.path(), FourSteps(Values("w", {2, 3.5})));
  const RuleRun run = RunRule(t.base.path(), "SimilarAcrossRuns", {}, {"--other-trial", t.other.str()});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(2));
  EXPECT_EQ(run.report["Details"]["w"], 0.5);
  EXPECT_FALSE(run.report["Details"].contains("gradient/w"));
  EXPECT_EQ(run.report["Violations"], 1);
}

TEST(SimilarAcrossRuns, ValuesWithinAllcloseToleranceAreSimilar) {
  TwoTrials t;
  WriteTrial(t.base.path(), FourSteps(Values("w", {2, 1000}, DType::kFloat64)));
  WriteTrial(t.other.path(), FourSteps(Values("w", {2, 1000.001}, DType::kFloat64)));  // 1e-6 relative
  EXPECT_EQ(RunRule(t.base.path(), "SimilarAcrossRuns", {}, {"--other-trial", t.other.str()}).exit_code, 0);
}

TEST(SimilarAcrossRuns, DifferentShapesDiffer) {
  TwoTrials t;
  WriteTrial(t.base.path(), FourSteps(Values("w", {2, 3})));
  WriteTrial(t.other.path(), FourSteps(Filled("w", {1, 2}, 2.0)));
  const RuleRun run = RunRule(t.base.path(), "SimilarAcrossRuns", {}, {"--other-trial", t.other.str()});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(2));
  EXPECT_EQ(run.report["Details"]["w"], "shape [2] vs [1, 2]");
}

TEST(SimilarAcrossRuns, TensorsMissingFromTheOtherTrialAreSkipped) {
  TwoTrials t;
  WriteTrial(t.base.path(), FourSteps(Values("w", {9, 9})));
  std::vector<StepSpec> other = FourSteps(Values("w", {2, 3}));
  other[2].tensors.erase(other[2].tensors.begin());  // no w at step 2 in the other run
  WriteTrial(t.other.path(), other);
  const RuleRun run = RunRule(t.base.path(), "SimilarAcrossRuns", {}, {"--other-trial", t.other.str()});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.report["Datapoints"], 4);
}

TEST(SimilarAcrossRuns, Selection) {
  TwoTrials t;
  WriteTrial(t.base.path(), FourSteps(Values("w", {2, 3})));
  WriteTrial(t.other.path(), FourSteps(Values("w", {2, 4})));
  const std::vector<std::string> other = {"--other-trial", t.other.str()};
  EXPECT_THAT(RunRule(t.base.path(), "SimilarAcrossRuns", {"collection_names=gradients"}, other).fired, IsEmpty());
  EXPECT_THAT(RunRule(t.base.path(), "SimilarAcrossRuns", {"tensor_regex=^w$"}, other).fired, ElementsAre(2));
}

TEST(SimilarAcrossRuns, OtherTrialFromTheRuleParameters) {
  TwoTrials t;
  WriteTrial(t.base.path(), FourSteps(Values("w", {2, 3})));
  WriteTrial(t.other.path(), FourSteps(Values("w", {2, 4})));
  const RuleRun run = RunConfig("trial: " + t.base.str() +
                                    "\nrules:\n  - name: similar\n    rule: SimilarAcrossRuns\n"
                                    "    parameters: {other_trials: \"" + t.other.str() + "\"}\n",
                                "similar");
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.fired, ElementsAre(2));
}

TEST(SimilarAcrossRuns, WithoutAnotherTrialItRefusesToStart) {
  TempDir trial;
  WriteTrial(trial.path(), FourSteps(Values("w", {2, 3})));
  const RuleRun run = RunRule(trial.path(), "SimilarAcrossRuns");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("other_trials: SimilarAcrossRuns compares the base trial with another trial"));
  EXPECT_EQ(run.status["RuleEvaluationStatus"], "Error");
}

}  // namespace
}  // namespace litmus::testing
