// test_rules: well-behaved rules for the runner's tests.
//   FireAtStep  fires at the first evaluated global step >= fire_at_step (required int). With
//               `tensor` set it requires that tensor of the base trial at each step
//               (set_required_tensors) and reads its value first, so a step where it is missing is
//               skipped (TensorUnavailableForStep) instead of firing. With `read` set it reads
//               that tensor of the base trial at each step without requiring it (a read the
//               runner's fetch does not check). With `declare_every` N > 0 its set_required_tensors
//               throws TensorUnavailableForStep at steps that are not multiples of N (the
//               runner skips them without a call); with `declare_error_at` S >= 0 it throws a
//               runtime_error at step S (an error of the rule, not a skip).
//   NeverFires  never fires. With `collection` set it requires and reads the mean |x| of every
//               tensor of that collection at each step (exercises require/prefetch/reductions).
//   EndAtStep   throws NoMoreData at global steps >= end_at_step (required int): a normal end.
//   DiffersFromOtherTrial  requires `tensor` (required string) at the step in the base trial and
//               in the first other trial, and fires when their mean |x| differ by more than
//               `tolerance` (float, default 0): exercises other trials end to end.
//   PollFires   ABI 1.1: fires from on_poll at its `polls`-th call (required int), then counts
//               again; with `fail_on_poll` true, on_poll fails instead (InvalidArgument); with
//               `action` set, registers that action text with add_action in create. Never fires
//               at a step.
//   FiresEveryNth  keeps state: counts the steps it evaluated and fires at every `every`-th
//               (required int), reading `tensor` (required string) at each step; with a trial
//               where every step is saved, it fires at steps every-1, 2*every-1, ... A resumed
//               job must replay its earlier steps to fire where an uninterrupted one does.
//               With `then_tensor` set, once it fired it requires and reads that tensor instead:
//               its list depends on what its calls found, so a list predicted from its earlier
//               ones is wrong after its first firing.
//   ReductionMatchesValue  requires every tensor of `collection` (required string) at each step,
//               with {.reductions_only = true} unless `reductions_only` is false, then reads
//               both its mean |x| and its raw value (float32) anyway, and fires when the mean |x|
//               of the value's elements differs from the reduction (relative 1e-9); a value
//               without its data is an error. The runner may keep only a summary of a value
//               required for reductions only: a rule that reads it anyway must get the data.
// Thread-safety: as any rule.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "litmus/rule.hpp"

namespace {

class FireAtStep : public litmus::Rule {
 public:
  explicit FireAtStep(const litmus::RuleArgs& args)
      : Rule(args),
        fire_at_step_(param_int("fire_at_step")),
        tensor_(param_optional_string("tensor")),
        read_(param_optional_string("read")),
        declare_every_(param_int("declare_every")),
        declare_error_at_(param_int("declare_error_at")) {}

  void set_required_tensors(int64_t step) override {
    if (step == declare_error_at_) throw std::runtime_error("declare_error_at " + std::to_string(step));
    if (declare_every_ > 0 && step % declare_every_ != 0) {
      throw litmus::TensorUnavailableForStep(tensor_.value_or("declare_every"), step);
    }
    if (tensor_) req_tensors().add(*tensor_, {step});
  }

  bool invoke_at_step(int64_t step) override {
    if (tensor_) base_trial().tensor(*tensor_).value(step);
    if (read_) base_trial().tensor(*read_).value(step);
    if (step < fire_at_step_) return false;
    report_violations(1);
    report_detail("fired_at_step", step);
    return true;
  }

 private:
  int64_t fire_at_step_;
  std::optional<std::string> tensor_;
  std::optional<std::string> read_;
  int64_t declare_every_;
  int64_t declare_error_at_;
};

class NeverFires : public litmus::Rule {
 public:
  explicit NeverFires(const litmus::RuleArgs& args)
      : Rule(args), collection_(param_optional_string("collection")) {}

  void set_required_tensors(int64_t step) override {
    if (!collection_) return;
    for (const std::string& name : base_trial().tensor_names({.collection = *collection_})) {
      req_tensors().add(name, {step});
    }
  }

  bool invoke_at_step(int64_t step) override {
    for (const litmus::Tensor& tensor : req_tensors().get()) {
      log_debug(tensor.name(), " mean |x| at step ", step, ": ",
                tensor.reduction_value(step, litmus::Reduction::kMean, /*abs=*/true));
    }
    return false;
  }

 private:
  std::optional<std::string> collection_;
};

class EndAtStep : public litmus::Rule {
 public:
  explicit EndAtStep(const litmus::RuleArgs& args)
      : Rule(args), end_at_step_(param_int("end_at_step")) {}

  bool invoke_at_step(int64_t step) override {
    if (step >= end_at_step_) {
      throw litmus::NoMoreData("EndAtStep: no more data from step " + std::to_string(step));
    }
    return false;
  }

 private:
  int64_t end_at_step_;
};

class DiffersFromOtherTrial : public litmus::Rule {
 public:
  explicit DiffersFromOtherTrial(const litmus::RuleArgs& args)
      : Rule(args), tensor_(param_string("tensor")), tolerance_(param_float("tolerance")) {
    if (other_trials().empty()) throw litmus::InvalidConfig("DiffersFromOtherTrial needs an other trial");
  }

  void set_required_tensors(int64_t step) override {
    req_tensors().add(tensor_, {step});
    req_tensors().add(tensor_, {step}, other_trials().front(), /*should_match_regex=*/false);
  }

  bool invoke_at_step(int64_t step) override {
    const double here = base_trial().tensor(tensor_).reduction_value(step, litmus::Reduction::kMean, true);
    const double there = other_trials().front().tensor(tensor_).reduction_value(step, litmus::Reduction::kMean, true);
    return std::abs(here - there) > tolerance_;
  }

 private:
  std::string tensor_;
  double tolerance_;
};

class PollFires : public litmus::Rule {
 public:
  explicit PollFires(const litmus::RuleArgs& args)
      : Rule(args), polls_(param_int("polls")), fail_(param_bool("fail_on_poll")) {
    if (const auto action = param_optional_string("action")) add_action(*action);
  }

  bool invoke_at_step(int64_t) override { return false; }
  bool on_poll(int64_t last_step) override {
    if (fail_) throw litmus::InvalidArgument("PollFires: on_poll failed on purpose");
    if (++seen_ < polls_) return false;
    report_detail("poll", seen_);
    report_detail("last_step", last_step);
    seen_ = 0;
    return true;
  }

 private:
  int64_t polls_;
  bool fail_;
  int64_t seen_ = 0;
};

class FiresEveryNth : public litmus::Rule {
 public:
  explicit FiresEveryNth(const litmus::RuleArgs& args)
      : Rule(args),
        every_(param_int("every")),
        tensor_(param_string("tensor")),
        then_tensor_(param_optional_string("then_tensor")) {}

  void set_required_tensors(int64_t step) override { req_tensors().add(current(), {step}); }

  bool invoke_at_step(int64_t step) override {
    base_trial().tensor(current()).value(step);
    ++evaluated_;
    if (evaluated_ % every_ != 0) return false;
    report_violations(1);
    fired_ = true;
    return true;
  }

 private:
  const std::string& current() const { return fired_ && then_tensor_ ? *then_tensor_ : tensor_; }

  int64_t every_;
  std::string tensor_;
  std::optional<std::string> then_tensor_;
  int64_t evaluated_ = 0;
  bool fired_ = false;
};

class ReductionMatchesValue : public litmus::Rule {
 public:
  explicit ReductionMatchesValue(const litmus::RuleArgs& args)
      : Rule(args), collection_(param_string("collection")), reductions_only_(param_bool("reductions_only")) {}

  void set_required_tensors(int64_t step) override {
    for (const std::string& name : base_trial().tensor_names({.collection = collection_})) {
      req_tensors().add(name, {step}, {.reductions_only = reductions_only_});
    }
  }

  bool invoke_at_step(int64_t step) override {
    for (const litmus::Tensor& tensor : req_tensors().get()) {
      const double reduced = tensor.reduction_value(step, litmus::Reduction::kMean, /*abs=*/true);
      const litmus::TensorView value = tensor.value(step);
      if (value.empty() || value.data() == nullptr || value.byte_size() != value.size() * sizeof(float)) {
        throw std::runtime_error(tensor.name() + " at step " + std::to_string(step) + ": a value without its data");
      }
      double sum = 0;
      for (const float x : value.as<float>()) sum += std::fabs(static_cast<double>(x));
      const double mean = sum / static_cast<double>(value.size());
      if (std::fabs(mean - reduced) > 1e-9 * std::max(1.0, std::fabs(mean))) {
        report_violations(1);
        report_detail("tensor", litmus::JsonString(tensor.name()));
        return true;
      }
    }
    return false;
  }

 private:
  std::string collection_;
  bool reductions_only_;
};

}  // namespace

LITMUS_RULE_PLUGIN(
    "test_rules", "1.0.0",
    LITMUS_RULE(FireAtStep, "FireAtStep", "1.0.0",
                "fires at the first evaluated step >= fire_at_step",
                litmus::Required(litmus::IntParam("fire_at_step", "", "global step to fire at")),
                litmus::StringParam("tensor", "None", "a tensor to require and read first"),
                litmus::StringParam("read", "None", "a tensor to read at each step without requiring it"),
                litmus::IntParam("declare_every", "0", "declare a list only at multiples of this step (0: every step)"),
                litmus::IntParam("declare_error_at", "-1", "set_required_tensors fails at this step")),
    LITMUS_RULE(NeverFires, "NeverFires", "1.0.0", "never fires",
                litmus::StringParam("collection", "None",
                                    "a collection whose tensors are read at every step")),
    LITMUS_RULE(EndAtStep, "EndAtStep", "1.0.0", "ends the evaluation (NoMoreData) at end_at_step",
                litmus::Required(litmus::IntParam("end_at_step", "", "global step to end at"))),
    LITMUS_RULE(DiffersFromOtherTrial, "DiffersFromOtherTrial", "1.0.0",
                "fires when a tensor's mean |x| differs from the first other trial's",
                litmus::Required(litmus::StringParam("tensor", "", "the tensor to compare")),
                litmus::FloatParam("tolerance", "0", "largest difference that does not fire")),
    LITMUS_RULE(PollFires, "PollFires", "1.0.0", "fires from on_poll at its polls-th call",
                litmus::Required(litmus::IntParam("polls", "", "calls of on_poll until it fires")),
                litmus::BoolParam("fail_on_poll", "false", "on_poll fails instead"),
                litmus::StringParam("action", "None", "an action (JSON) to register in create")),
    LITMUS_RULE(FiresEveryNth, "FiresEveryNth", "1.0.0", "fires at every every-th step it evaluates",
                litmus::Required(litmus::IntParam("every", "", "fire at every every-th evaluated step")),
                litmus::Required(litmus::StringParam("tensor", "", "the tensor read at each step")),
                litmus::StringParam("then_tensor", "None", "the tensor required and read once it fired")),
    LITMUS_RULE(ReductionMatchesValue, "ReductionMatchesValue", "1.0.0",
                "fires when a tensor's mean |x| differs from that of its raw value",
                litmus::Required(litmus::StringParam("collection", "", "the collection whose tensors are checked")),
                litmus::BoolParam("reductions_only", "true", "require the tensors for their reductions only")));
