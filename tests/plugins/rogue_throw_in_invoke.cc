// rogue_throw_in_invoke: C++ rules that throw from invoke_at_step at global steps >= throw_at_step
// (default 0). The SDK's thunk returns LITMUS_INTERNAL with text:
//   ThrowInInvoke     "uncaught exception: ThrowInInvoke: thrown at step N on purpose"
//   ThrowIntInInvoke  "uncaught exception of a type not derived from std::exception" (throws 42)
// Thread-safety: as any rule.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "litmus/rule.hpp"

namespace {

class ThrowInInvoke : public litmus::Rule {
 public:
  explicit ThrowInInvoke(const litmus::RuleArgs& args)
      : Rule(args), throw_at_step_(param_int("throw_at_step")) {}
  bool invoke_at_step(int64_t step) override {
    if (step >= throw_at_step_) {
      throw std::runtime_error("ThrowInInvoke: thrown at step " + std::to_string(step) +
                               " on purpose");
    }
    return false;
  }

 private:
  int64_t throw_at_step_;
};

class ThrowIntInInvoke : public litmus::Rule {
 public:
  explicit ThrowIntInInvoke(const litmus::RuleArgs& args)
      : Rule(args), throw_at_step_(param_int("throw_at_step")) {}
  bool invoke_at_step(int64_t step) override {
    if (step >= throw_at_step_) throw 42;
    return false;
  }

 private:
  int64_t throw_at_step_;
};

}  // namespace

LITMUS_RULE_PLUGIN(
    "rogue_throw_in_invoke", "1.0.0",
    LITMUS_RULE(ThrowInInvoke, "ThrowInInvoke", "1.0.0",
                "throws std::runtime_error from invoke_at_step",
                litmus::IntParam("throw_at_step", "0", "first global step that throws")),
    LITMUS_RULE(ThrowIntInInvoke, "ThrowIntInInvoke", "1.0.0",
                "throws an int from invoke_at_step",
                litmus::IntParam("throw_at_step", "0", "first global step that throws")));
