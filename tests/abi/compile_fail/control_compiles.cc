// Must compile: the control case, so that the compile-fail cases fail for their own reason.
// EXPECT-SUCCESS
#include "litmus/rule.hpp"
struct A : litmus::Rule {
  using Rule::Rule;
  bool invoke_at_step(int64_t) override { return false; }
  void set_required_tensors(int64_t step) override { req_tensors().add("x", {step}); }
  bool on_poll(int64_t last_step) override { return last_step > 10; }
};
LITMUS_RULE_PLUGIN("p", "1.0.0",
                   LITMUS_RULE(A, "A", "1.0.0", "d", litmus::FloatParam("x", "1", "d"),
                               litmus::Required(litmus::IntParam("y", "", "d"))));
