// on_poll with the wrong parameter type (hiding, not overriding, the ABI 1.1 callback).
// EXPECT: on_poll must be bool on_poll\(int64_t last_step\)
#include "litmus/rule.hpp"
struct A : litmus::Rule {
  using Rule::Rule;
  bool invoke_at_step(int64_t) override { return false; }
  bool on_poll(int) { return true; }
};
LITMUS_RULE_PLUGIN("p", "1.0.0", LITMUS_RULE(A, "A", "1.0.0", "d"));
