// Must not compile: a registered class that does not derive from litmus::Rule.
// EXPECT: the class must derive from litmus::Rule
#include "litmus/rule.hpp"
struct NotARule {
  bool invoke_at_step(int64_t) { return false; }
  void set_required_tensors(int64_t) {}
};
LITMUS_RULE_PLUGIN("p", "1.0.0", LITMUS_RULE(NotARule, "NotARule", "1.0.0", "d"));
