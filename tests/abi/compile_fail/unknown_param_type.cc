// Must not compile: a parameter type outside float, int, bool, string, list, mode.
// EXPECT: LITMUS_ERROR_unknown_param_type
#include "litmus/rule.hpp"
struct A : litmus::Rule {
  using Rule::Rule;
  bool invoke_at_step(int64_t) override { return false; }
};
LITMUS_RULE_PLUGIN("p", "1.0.0",
                   LITMUS_RULE(A, "A", "1.0.0", "d", litmus::ParamSpec{"x", "flaot", "", "", false}));
