// Must not compile: two rules of one plugin with the same name.
// EXPECT: LITMUS_ERROR_duplicate_rule_name
#include "litmus/rule.hpp"
struct A : litmus::Rule {
  using Rule::Rule;
  bool invoke_at_step(int64_t) override { return false; }
};
LITMUS_RULE_PLUGIN("p", "1.0.0", LITMUS_RULE(A, "Same", "1.0.0", "d"),
                   LITMUS_RULE(A, "Same", "1.0.0", "d"));
