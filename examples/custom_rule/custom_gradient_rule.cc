// CustomGradientRule, the custom rule of the SageMaker Debugger documentation, as a litmus plugin:
// fires when the mean absolute value of any gradient exceeds `threshold` (default 10.0).
// Thread-safety: one instance is used by one thread at a time (the host's contract).
//
// The Python original, for comparison:
//   class CustomGradientRule(Rule):
//       def __init__(self, base_trial, threshold=10.0):
//           super().__init__(base_trial)
//           self.threshold = float(threshold)
//       def set_required_tensors(self, step):
//           for tname in self.base_trial.tensor_names(collection="gradients"):
//               self.req_tensors.add(tname, steps=[step])
//       def invoke_at_step(self, step):
//           for t in self.req_tensors.get():
//               abs_mean = t.reduction_value(step, "mean", abs=True)
//               if abs_mean > self.threshold:
//                   return True
//           return False
#include <cstdint>

#include "litmus/rule.hpp"

namespace {

class CustomGradientRule : public litmus::Rule {
 public:
  // Each step's verdict depends on that step's gradients only: a resumed job continues the rule
  // where it was (ABI 1.2).
  static constexpr bool stateless = true;

  // Throws litmus::InvalidConfig ("threshold: expected a number, got 'abc'") for a bad value,
  // which makes create fail with LITMUS_INVALID_CONFIG.
  explicit CustomGradientRule(const litmus::RuleArgs& args)
      : Rule(args), threshold_(param_float("threshold")) {
    // What the rule compares, for the report and TensorBoard (ABI 1.3; docs/report.md).
    report_threshold(kSeries, threshold_, litmus::Fires::kAbove);
    report_recommendation("Lower the learning rate or clip the gradients (e.g. by global norm).");
  }

  // The rule reads only a reduction of each gradient, so it says so (ABI 1.2): on a trial that
  // saved reductions but no raw gradients (a reduction_config), it reads the saved reductions.
  // smdebug's Python rule skips such steps (its fetch reads every raw value).
  void set_required_tensors(int64_t step) override {
    for (const std::string& name : base_trial().tensor_names({.collection = "gradients"})) {
      req_tensors().add(name, {step}, {.reductions_only = true});
    }
  }

  bool invoke_at_step(int64_t step) override {
    for (const litmus::Tensor& tensor : req_tensors().get()) {
      const double abs_mean = tensor.reduction_value(step, "mean", /*abs=*/true);
      report_series(kSeries, tensor.name(), step, abs_mean);
      // NaN compares false, so it never fires; +inf does.
      if (abs_mean > threshold_) {
        report_violations(1);
        report_detail("tensor", litmus::JsonString(tensor.name()));
        report_detail("abs_mean", abs_mean);
        return true;
      }
    }
    return false;
  }

 private:
  static constexpr const char* kSeries = "mean |gradient|";
  double threshold_;
};

}  // namespace

LITMUS_RULE_PLUGIN(
    "custom_gradient_rule", "1.0.0",
    LITMUS_RULE(CustomGradientRule, "CustomGradientRule", "1.0.0",
                "Fires when the mean absolute value of any gradient exceeds threshold",
                litmus::FloatParam("threshold", "10.0",
                                   "limit for the mean absolute value of each gradient")));
