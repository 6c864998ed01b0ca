// RequirementHistory (isolation/requirement_history.h): the lists both ends of a worker's socket
// keep, by step, for the predictions of calls of several steps (--rule-batch-steps): the newest
// list of a step, the oldest dropped beyond kSize, "moved by a shift" compared field by field, and
// the distance at which a rule's lists repeat.
#include "isolation/requirement_history.h"

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace litmus::isolation {
namespace {

std::vector<TensorRequirement> List(const std::string& name, RequiredSteps steps, uint32_t trial = 0,
                                    bool reductions_only = false) {
  static std::deque<std::string> names;  // (requirements view their names; a deque keeps them in place)
  names.push_back(name);
  return {TensorRequirement{trial, names.back(), std::move(steps), reductions_only}};
}

TEST(RequirementHistory, NewestListOfAStepAndOldestDroppedBeyondItsSize) {
  RequirementHistory history;
  history.Record(5, List("a", {5}));
  history.Record(5, List("b", {5}));
  ASSERT_NE(history.At(5), nullptr);
  EXPECT_EQ(history.At(5)->front().name, "b");
  EXPECT_EQ(history.At(6), nullptr);
  for (int64_t s = 10; s < 10 + static_cast<int64_t>(RequirementHistory::kSize); ++s) history.Record(s, List("c", {s}));
  EXPECT_EQ(history.At(5), nullptr) << "older than the last kSize lists";
  EXPECT_EQ(history.entries().size(), RequirementHistory::kSize);
  EXPECT_EQ(history.entries().back().step, 10 + static_cast<int64_t>(RequirementHistory::kSize) - 1);
}

TEST(RequirementHistory, MovedShiftsEveryStepAndIsMovedComparesEverything) {
  const auto base = List("w", {3, 4});
  auto moved = List("old", {1}, 2);  // (replaced)
  RequirementHistory::Moved(base, 10, &moved);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].steps, (RequiredSteps{13, 14}));
  EXPECT_TRUE(RequirementHistory::IsMoved(base, 10, moved));
  EXPECT_TRUE(RequirementHistory::IsMoved(base, 10, List("w", {13, 14})));  // the name's text, elsewhere
  EXPECT_FALSE(RequirementHistory::IsMoved(base, 9, moved));
  EXPECT_FALSE(RequirementHistory::IsMoved(base, 10, List("w", {13, 15})));    // one step differs
  EXPECT_FALSE(RequirementHistory::IsMoved(base, 10, List("v", {13, 14})));    // another name
  EXPECT_FALSE(RequirementHistory::IsMoved(base, 10, List("w", {13, 14}, 1)));  // another trial
  EXPECT_FALSE(RequirementHistory::IsMoved(base, 10, List("w", {13, 14}, 0, true)));
  EXPECT_FALSE(RequirementHistory::IsMoved(base, 10, List("w", {13})));        // fewer steps
  EXPECT_FALSE(RequirementHistory::IsMoved(base, 10, {}));                     // fewer tensors
  EXPECT_TRUE(RequirementHistory::IsMoved({}, 3, {}));
}

// WeightUpdateRatio on a trial of 10 TRAIN steps then 2 EVAL steps, over and over: at a TRAIN
// step the weight at the previous TRAIN step and this one, at an EVAL step nothing.
std::vector<TensorRequirement> CompareWithPreviousTrainStep(int64_t step) {
  if (step % 12 >= 10) return {};
  const int64_t previous = step % 12 == 0 ? step - 3 : step - 1;
  return List("w", {previous, step});
}

TEST(RequirementHistory, RepeatDistanceIsThePeriodOfListsThatDependOnTheModesAround) {
  RequirementHistory history;
  for (int64_t s = 12; s < 12 + 20; ++s) history.Record(s, CompareWithPreviousTrainStep(s));
  ASSERT_EQ(history.RepeatDistance(), 12);
  // Moving the list one period back predicts every later step, across the mode changes.
  for (int64_t s = 32; s < 32 + 24; ++s) {
    const auto* base = history.At(s - 12);
    ASSERT_NE(base, nullptr);
    EXPECT_TRUE(RequirementHistory::IsMoved(*base, 12, CompareWithPreviousTrainStep(s))) << "step " << s;
    history.Record(s, CompareWithPreviousTrainStep(s));
  }
  EXPECT_EQ(history.RepeatDistance(), 12);
}

TEST(RequirementHistory, RepeatDistanceOfTheSameTensorsEveryStepIsOne) {
  RequirementHistory history;
  for (int64_t s = 0; s < 8; ++s) history.Record(s, List("g", {s}));
  EXPECT_EQ(history.RepeatDistance(), 1);
}

TEST(RequirementHistory, NoRepeatDistanceWithoutEnoughListsOrWhenNoneHolds) {
  RequirementHistory few;
  for (int64_t s = 0; s < RequirementHistory::kMinRepeats; ++s) few.Record(s, List("g", {s}));
  EXPECT_EQ(few.RepeatDistance(), std::nullopt) << "kMinRepeats - 1 lists one step apart";
  RequirementHistory irregular;  // each step compares with a step further back than the last
  for (int64_t s = 0; s < 32; ++s) irregular.Record(100 + s, List("w", {100 + s - s * s, 100 + s}));
  EXPECT_EQ(irregular.RepeatDistance(), std::nullopt);
}

}  // namespace
}  // namespace litmus::isolation
