// RequiredSteps (plugin/required_steps.h): a vector of steps with two of them kept inline; copies,
// moves and growth keep the steps whether they live inline or on the heap.
#include "plugin/required_steps.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace litmus {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(RequiredSteps, GrowsPastItsInlineStepsKeepingThemInOrder) {
  RequiredSteps steps;
  EXPECT_THAT(steps, IsEmpty());
  for (int64_t s = 0; s < 9; ++s) {
    steps.push_back(s * 10);
    ASSERT_EQ(steps.size(), static_cast<size_t>(s + 1));
    EXPECT_EQ(steps.back(), s * 10);
  }
  EXPECT_THAT(steps, ElementsAre(0, 10, 20, 30, 40, 50, 60, 70, 80));
  const int64_t more[] = {90, 100};
  steps.Append(more, 2);
  steps.Truncate(3);
  EXPECT_THAT(steps, ElementsAre(0, 10, 20));
}

TEST(RequiredSteps, CopiesAndMovesInlineAndHeapSteps) {
  for (const RequiredSteps& original : {RequiredSteps{}, RequiredSteps{7}, RequiredSteps{7, 8},
                                        RequiredSteps{1, 2, 3, 4, 5}}) {
    SCOPED_TRACE(original.size());
    RequiredSteps copy = original;
    EXPECT_EQ(copy, original);
    RequiredSteps moved = std::move(copy);
    EXPECT_EQ(moved, original);
    EXPECT_THAT(copy, IsEmpty());  // NOLINT(bugprone-use-after-move): a moved-from list is empty
    copy.push_back(42);            // and usable
    EXPECT_THAT(copy, ElementsAre(42));
    RequiredSteps assigned{9, 9, 9};
    assigned = original;
    EXPECT_EQ(assigned, original);
    RequiredSteps move_assigned{9};
    move_assigned = std::move(assigned);
    EXPECT_EQ(move_assigned, original);
    move_assigned = move_assigned;  // self-assignment keeps the steps
    EXPECT_EQ(move_assigned, original);
  }
}

TEST(RequiredSteps, EqualityComparesEveryStep) {
  EXPECT_EQ((RequiredSteps{1, 2, 3}), (RequiredSteps{1, 2, 3}));
  EXPECT_NE((RequiredSteps{1, 2, 3}), (RequiredSteps{1, 2, 4}));
  EXPECT_NE((RequiredSteps{1, 2}), (RequiredSteps{1, 2, 3}));
  EXPECT_NE(RequiredSteps{}, (RequiredSteps{0}));
}

}  // namespace
}  // namespace litmus
