// rogue_invalid_param: parameter errors.
//   InvalidParam   float `threshold` (default 1.0) parsed in the constructor: threshold=abc makes
//                  create fail with LITMUS_INVALID_CONFIG "threshold: expected a number, got 'abc'".
//   RequiredParam  declares a required float `limit`: the host must refuse to create it without
//                  one; if create is called anyway it fails with "limit: required parameter is not
//                  set". Never fires otherwise.
// Thread-safety: as any rule.
#include <cstdint>

#include "litmus/rule.hpp"

namespace {

class InvalidParam : public litmus::Rule {
 public:
  explicit InvalidParam(const litmus::RuleArgs& args)
      : Rule(args), threshold_(param_float("threshold")) {}
  bool invoke_at_step(int64_t) override { return false; }

 private:
  double threshold_;
};

class RequiredParam : public litmus::Rule {
 public:
  explicit RequiredParam(const litmus::RuleArgs& args) : Rule(args), limit_(param_float("limit")) {}
  bool invoke_at_step(int64_t) override { return false; }

 private:
  double limit_;
};

}  // namespace

LITMUS_RULE_PLUGIN(
    "rogue_invalid_param", "1.0.0",
    LITMUS_RULE(InvalidParam, "InvalidParam", "1.0.0", "rejects a threshold that is not a number",
                litmus::FloatParam("threshold", "1.0", "any number")),
    LITMUS_RULE(RequiredParam, "RequiredParam", "1.0.0", "declares a required parameter",
                litmus::Required(litmus::FloatParam("limit", "", "any number; required"))));
