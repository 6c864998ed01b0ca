// Must not compile: one parameter declared twice.
// EXPECT: LITMUS_ERROR_duplicate_param_name
#include "litmus/rule.hpp"
struct A : litmus::Rule {
  using Rule::Rule;
  bool invoke_at_step(int64_t) override { return false; }
};
LITMUS_RULE_PLUGIN("p", "1.0.0",
                   LITMUS_RULE(A, "A", "1.0.0", "d", litmus::FloatParam("x", "1", "d"),
                               litmus::IntParam("x", "1", "d")));
