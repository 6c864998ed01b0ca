// Must not compile: set_required_tensors(int) would silently never be called.
// EXPECT: set_required_tensors must be void set_required_tensors\(int64_t step\)
#include "litmus/rule.hpp"
struct Typo : litmus::Rule {
  using Rule::Rule;
  bool invoke_at_step(int64_t) override { return false; }
  void set_required_tensors(int) {}
};
LITMUS_RULE_PLUGIN("p", "1.0.0", LITMUS_RULE(Typo, "Typo", "1.0.0", "d"));
