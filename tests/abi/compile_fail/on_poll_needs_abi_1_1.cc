// A rule that overrides on_poll in a plugin that claims ABI 1.0: a 1.0 host would never call it.
// EXPECT: LITMUS_ERROR_on_poll_needs_a_plugin_built_for_ABI_1_1
#define LITMUS_PLUGIN_ABI_MINOR 0
#include "litmus/rule.hpp"
struct A : litmus::Rule {
  using Rule::Rule;
  bool invoke_at_step(int64_t) override { return false; }
  bool on_poll(int64_t) override { return true; }
};
LITMUS_RULE_PLUGIN("p", "1.0.0", LITMUS_RULE(A, "A", "1.0.0", "d"));
