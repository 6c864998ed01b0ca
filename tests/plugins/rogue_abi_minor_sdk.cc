// rogue_abi_minor_sdk: a C++ SDK plugin that claims ABI 1.99 (through the test-only override): the
// SDK's own entry refuses an older host with LITMUS_INVALID_CONFIG and the text
// "plugin rogue_abi_minor_sdk needs ABI 1.99, litmus provides 1.1". Thread-safety: as any rule.
#define LITMUS_PLUGIN_ABI_MINOR 99
#include <cstdint>

#include "litmus/rule.hpp"

namespace {

class NewerMinor : public litmus::Rule {
 public:
  using Rule::Rule;
  bool invoke_at_step(int64_t) override { return false; }
};

}  // namespace

LITMUS_RULE_PLUGIN("rogue_abi_minor_sdk", "1.0.0",
                   LITMUS_RULE(NewerMinor, "NewerMinor", "1.0.0",
                               "never fires; its plugin needs ABI 1.99"));
