// Must not compile: the SDK constructs rules as T(const litmus::RuleArgs&).
// EXPECT: the class needs a public constructor T\(const litmus::RuleArgs&\)
#include "litmus/rule.hpp"
struct WrongConstructor : litmus::Rule {
  WrongConstructor(const litmus::RuleArgs& args, int extra) : Rule(args) { (void)extra; }
  bool invoke_at_step(int64_t) override { return false; }
};
LITMUS_RULE_PLUGIN("p", "1.0.0", LITMUS_RULE(WrongConstructor, "WrongConstructor", "1.0.0", "d"));
