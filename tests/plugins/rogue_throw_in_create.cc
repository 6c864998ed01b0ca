// rogue_throw_in_create: a C++ rule whose constructor throws. The SDK's create thunk catches it and
// returns LITMUS_INTERNAL with the text "uncaught exception: ThrowInCreate: thrown from the
// constructor on purpose"; nothing escapes into the host. Thread-safety: as any rule.
#include <cstdint>
#include <stdexcept>

#include "litmus/rule.hpp"

namespace {

class ThrowInCreate : public litmus::Rule {
 public:
  explicit ThrowInCreate(const litmus::RuleArgs& args) : Rule(args) {
    throw std::runtime_error("ThrowInCreate: thrown from the constructor on purpose");
  }
  bool invoke_at_step(int64_t) override { return false; }
};

}  // namespace

LITMUS_RULE_PLUGIN("rogue_throw_in_create", "1.0.0",
                   LITMUS_RULE(ThrowInCreate, "ThrowInCreate", "1.0.0",
                               "its constructor throws std::runtime_error"));
