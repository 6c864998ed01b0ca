// Must not compile: invoke_at_step(int) hides instead of overriding invoke_at_step(int64_t).
// EXPECT: the class must override bool invoke_at_step\(int64_t step\)
#include "litmus/rule.hpp"
struct Typo : litmus::Rule {
  using Rule::Rule;
  bool invoke_at_step(int) { return false; }
};
LITMUS_RULE_PLUGIN("p", "1.0.0", LITMUS_RULE(Typo, "Typo", "1.0.0", "d"));
