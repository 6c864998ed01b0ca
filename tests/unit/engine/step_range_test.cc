// Unit tests of EmptyStepRangeNote: a range that selects no saved step is described, with the
// trial's steps; one that selects any is not.
#include "run/step_range.h"

#include <gtest/gtest.h>

namespace litmus {
namespace {

TEST(StepRange, SelectsNothing) {
  const std::vector<int64_t> steps = {0, 10, 20, 30, 39};
  EXPECT_EQ(EmptyStepRangeNote(steps, 100, std::nullopt),
            "no saved step in [100, inf): the trial's steps are 0..39 (5 saved)");
  EXPECT_EQ(EmptyStepRangeNote(steps, 11, 20), "no saved step in [11, 20): the trial's steps are 0..39 (5 saved)");
  EXPECT_EQ(EmptyStepRangeNote({7}, 8, std::nullopt), "no saved step in [8, inf): the trial's step is 7");
  EXPECT_EQ(EmptyStepRangeNote({}, 0, std::nullopt), "no saved step in [0, inf): the trial saved no step");
}

TEST(StepRange, SelectsSomething) {
  const std::vector<int64_t> steps = {0, 10, 20, 30, 39};
  EXPECT_EQ(EmptyStepRangeNote(steps, 0, std::nullopt), std::nullopt);
  EXPECT_EQ(EmptyStepRangeNote(steps, 39, std::nullopt), std::nullopt);
  EXPECT_EQ(EmptyStepRangeNote(steps, 11, 21), std::nullopt);
  EXPECT_EQ(EmptyStepRangeNote(steps, 10, 11), std::nullopt);
}

}  // namespace
}  // namespace litmus
