// Unit tests of the message line of a job whose rules fired: SageMaker's sentence for the earliest
// firing, every other rule appended, and a line that never passes its limit.
#include "run/condition_met_line.h"

#include <gtest/gtest.h>

namespace litmus {
namespace {

TEST(ConditionMetLine, NamesEveryRuleEarliestFirst) {
  EXPECT_EQ(ConditionMetLine({}), "");
  EXPECT_EQ(ConditionMetLine({{"Overfit", 9}}),
            "RuleEvaluationConditionMet: Evaluation of the rule Overfit at step 9 resulted in the condition being met");
  EXPECT_EQ(ConditionMetLine({{"Overfit", 9}, {"ExplodingTensor", 5}, {"AllZero", 9}}),
            "RuleEvaluationConditionMet: Evaluation of the rule ExplodingTensor at step 5 resulted in the condition "
            "being met; rule Overfit at step 9; rule AllZero at step 9");
}

TEST(ConditionMetLine, StaysWithinItsLimit) {
  std::vector<RuleFiring> many;
  for (int i = 0; i < 100; ++i) many.push_back({"SomeRatherLongRuleName" + std::to_string(i), i});
  const std::string line = ConditionMetLine(many);
  EXPECT_LE(line.size(), 1000u);
  EXPECT_NE(line.find("; rule SomeRatherLongRuleName1 at step 1;"), std::string::npos) << line;
  const size_t more = line.rfind("; and ");
  ASSERT_NE(more, std::string::npos) << line;
  EXPECT_EQ(line.substr(line.size() - 11), " more rules") << line;
  // Every rule is either named or counted.
  const size_t named = std::count(line.begin(), line.end(), ';') - 1;
  EXPECT_EQ(named + std::stoul(line.substr(more + 6)), 99u) << line;
}

}  // namespace
}  // namespace litmus
