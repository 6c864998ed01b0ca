/// \file
/// litmus/rule/trial.hpp — part of litmus/rule.hpp: the handles through which a rule reads the
/// job's data, as smdebug names them: Trial (steps, workers, tensor_names with a TensorQuery) and
/// Tensor (value(step), reduction_value, shape). The members that call the host are defined in
/// host_calls.hpp, after Rule. Thread-safety: used by the rule's thread, during a host call.
#ifndef LITMUS_RULE_TRIAL_HPP_
#define LITMUS_RULE_TRIAL_HPP_

#include <cstdint>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "litmus/rule/internal.hpp"
#include "litmus/rule/tensor_view.hpp"
#include "litmus/rule/types.hpp"

namespace litmus {

/// Selects tensor names (smdebug's trial.tensor_names arguments). Empty fields do not filter:
/// `trial.tensor_names({.collection = "gradients"})`, `trial.tensor_names({.regex = "relu"})`.
struct TensorQuery {
  std::string_view collection{};  ///< member of this collection; an unknown one matches nothing
  std::string_view regex{};       ///< Python re.search semantics: matches anywhere in the name
  std::optional<int64_t> step{};  ///< saved at this global step
  std::optional<Mode> mode{};     ///< saved in this mode
};

/// A tensor of one trial (smdebug's Tensor). Cheap to copy; usable while its Rule lives, host
/// access only during a host call. Get one from Trial::tensor, Trial::tensor_names or
/// RequiredTensors::get. The value of a scalar such as a loss: `tensor.value(step).scalar()`.
class Tensor {
 public:
  /// The tensor's name as saved, e.g. "gradient/MLP_fc1.weight".
  const std::string& name() const { return *name_; }
  /// The trial the tensor belongs to.
  Trial trial() const;
  /// Steps at which the tensor was saved: global steps, or mode steps of `mode`.
  std::vector<int64_t> steps(Mode mode = Mode::kGlobal) const;
  /// The value at a step (a global step for kGlobal, else a mode step), from `worker` or, when
  /// empty, the lexicographically first worker that wrote it. Borrowed: see TensorView.
  TensorView value(int64_t step, Mode mode = Mode::kGlobal, std::string_view worker = {}) const;
  /// A reduction of the value (of |x| when abs): the saved reduction if any, else computed.
  double reduction_value(int64_t step, Reduction reduction, bool abs = false,
                         Mode mode = Mode::kGlobal, std::string_view worker = {}) const;
  /// Same with smdebug's reduction names ("mean", "l2", ...); InvalidArgument for others.
  double reduction_value(int64_t step, std::string_view reduction, bool abs = false,
                         Mode mode = Mode::kGlobal, std::string_view worker = {}) const;
  /// The shape at a step, outermost dimension first (from a stored shape if any, else from the
  /// value); {} for a 0-d tensor.
  std::vector<int64_t> shape(int64_t step, Mode mode = Mode::kGlobal,
                             std::string_view worker = {}) const;

 private:
  friend class Trial;
  friend class RequiredTensors;
  // The name is shared, immutable, with copies of the Tensor, the values it returns and the
  // requirement it came from: handing out tensors and values at every step copies no string.
  Tensor(Rule* rule, uint32_t trial, std::shared_ptr<const std::string> name)
      : rule_(rule), trial_(trial), name_(std::move(name)) {}
  Rule* rule_;
  uint32_t trial_;
  std::shared_ptr<const std::string> name_;  // never null
};

/// One trial of the job (smdebug's Trial): 0 is the base trial, 1.. the other trials. Get one from
/// Rule::base_trial, Rule::trial or Rule::other_trials. Functions that take a step and a mode read
/// a global step for Mode::kGlobal, else a mode step of that mode.
class Trial {
 public:
  /// The trial's index in the job (0: the base trial).
  uint32_t index() const { return index_; }
  /// True for the base trial.
  bool is_base() const { return index_ == 0; }
  /// Complete steps, sorted: global steps, or mode steps of `mode`.
  std::vector<int64_t> steps(Mode mode = Mode::kGlobal) const;
  /// The mode of a global step; StepUnavailable if the step is unknown.
  Mode step_mode(int64_t step) const;
  /// The mode step of a global step (its number within its mode); StepUnavailable if unknown.
  int64_t mode_step(int64_t step) const;
  /// The global step of a mode step; StepUnavailable if unknown.
  int64_t global_step(Mode mode, int64_t mode_step) const;
  /// The names of the workers that wrote the trial, sorted.
  std::vector<std::string> workers() const;
  /// The names of the saved tensors that `query` selects, sorted; all of them by default.
  std::vector<std::string> tensor_names(const TensorQuery& query = {}) const;
  /// The same names as views of the host's copies, valid until the rule's current callback
  /// (set_required_tensors, invoke_at_step, ...) returns: for a rule that asks at every step and
  /// keeps nothing (RequiredTensors::add copies what it keeps), no string is copied.
  std::vector<std::string_view> tensor_name_views(const TensorQuery& query = {}) const;
  /// The steps at which `name` was saved: global steps, or mode steps of `mode`.
  /// TensorUnavailable for a name never saved.
  std::vector<int64_t> tensor_steps(std::string_view name, Mode mode = Mode::kGlobal) const;
  /// True when the trial saved `name` at some step.
  bool has_tensor(std::string_view name) const;
  /// A handle; does not check that the tensor exists (value() and friends do).
  Tensor tensor(std::string_view name) const {
    return Tensor(rule_, index_, std::make_shared<const std::string>(name));
  }

  /// Same rule, same trial.
  friend bool operator==(const Trial& a, const Trial& b) {
    return a.rule_ == b.rule_ && a.index_ == b.index_;
  }

 private:
  friend class Rule;
  friend class Tensor;
  friend class RequiredTensors;
  Trial(Rule* rule, uint32_t index) : rule_(rule), index_(index) {}
  Rule* rule_;
  uint32_t index_;
};

}  // namespace litmus

#endif  // LITMUS_RULE_TRIAL_HPP_
