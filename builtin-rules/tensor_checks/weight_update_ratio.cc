// WeightUpdateRatio: each weight saved at the step is required at the step and at the earlier
// saved step it is compared with; the ratio is ||w_s - w_p||_2 / (||w_p||_2 + epsilon) over the
// flattened values (docs/rules/WeightUpdateRatio.md).
#include "weight_update_ratio.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "litmus_builtin/param_checks.hpp"
#include "litmus_builtin/report_json.hpp"

namespace litmus_builtin {
namespace {

// Squared L2 norms of (current - previous) and of previous.
struct SquaredNorms {
  double update = 0;
  double previous = 0;
};

template <class T>
SquaredNorms NormsOf(std::span<const T> current, std::span<const T> previous) {
  SquaredNorms norms;
  for (size_t i = 0; i < current.size(); ++i) {
    const double p = static_cast<double>(previous[i]);
    const double d = static_cast<double>(current[i]) - p;
    norms.update += d * d;
    norms.previous += p * p;
  }
  return norms;
}

// nullopt when the two values cannot be compared (shapes differ, strings, complex values).
std::optional<SquaredNorms> Norms(const litmus::TensorView& current, const litmus::TensorView& previous) {
  const std::span<const int64_t> a = current.shape(), b = previous.shape();
  if (!std::equal(a.begin(), a.end(), b.begin(), b.end()) || current.num_elements() != previous.num_elements()) {
    return std::nullopt;
  }
  const auto real = [](const litmus::TensorView& v) {
    return !v.is_string() && v.dtype() != litmus::DType::kComplex64 && v.dtype() != litmus::DType::kComplex128;
  };
  if (!real(current) || !real(previous)) return std::nullopt;
  if (current.dtype() == litmus::DType::kFloat32 && previous.dtype() == litmus::DType::kFloat32) {
    return NormsOf(current.as<float>(), previous.as<float>());
  }
  if (current.dtype() == litmus::DType::kFloat64 && previous.dtype() == litmus::DType::kFloat64) {
    return NormsOf(current.as<double>(), previous.as<double>());
  }
  SquaredNorms norms;
  for (int64_t i = 0; i < current.num_elements(); ++i) {
    const double p = previous.at_double(i);
    const double d = current.at_double(i) - p;
    norms.update += d * d;
    norms.previous += p * p;
  }
  return norms;
}

}  // namespace

WeightUpdateRatio::WeightUpdateRatio(const litmus::RuleArgs& args)
    : Rule(args),
      num_steps_(OptionalIntAtLeast(*this, kNumSteps, 1)),
      large_threshold_(FiniteParam(*this, kLargeThreshold)),
      small_threshold_(FiniteParam(*this, kSmallThreshold)),
      epsilon_(NonNegativeParam(*this, kEpsilon)) {
  report_threshold(kSeries, large_threshold_, litmus::Fires::kAbove);
  report_threshold(kSeries, small_threshold_, litmus::Fires::kBelow);
  report_recommendation(
      "Updates far larger than the weights make training unstable (lower the learning rate); updates "
      "far smaller mean the weights hardly move (raise it, or check for vanishing gradients).");
}

std::optional<litmus::Mode> WeightUpdateRatio::ModeAt(int64_t step) {
  const litmus::Trial trial = base_trial();
  const litmus::Mode mode = trial.step_mode(step);
  if (mode == litmus::Mode::kTrain) return litmus::Mode::kTrain;
  // DOC-2020: with TRAIN steps in the trial only they are used; without, every step (GLOBAL).
  if (!trains_) trains_ = !trial.steps(litmus::Mode::kTrain).empty();
  if (trains_) return std::nullopt;
  return litmus::Mode::kGlobal;
}

void WeightUpdateRatio::set_required_tensors(int64_t step) {
  const std::optional<litmus::Mode> mode = ModeAt(step);
  if (!mode) return;  // an EVAL/PREDICT step of a trial that trains: not evaluated
  const litmus::Trial trial = base_trial();
  // Steps counted in the chosen mode: TRAIN mode steps, or global steps.
  const int64_t current = *mode == litmus::Mode::kGlobal ? step : trial.mode_step(step);
  for (const std::string& name : trial.tensor_names({.collection = kCollection, .step = step})) {
    const std::optional<int64_t> previous =
        PreviousStep(saved_steps_.Get(trial, name, *mode, current), current, num_steps_);
    if (!previous) continue;  // the first saved step of this weight: nothing to compare with
    const int64_t previous_global = *mode == litmus::Mode::kGlobal ? *previous : trial.global_step(*mode, *previous);
    req_tensors().add(name, {previous_global, step});
  }
}

bool WeightUpdateRatio::invoke_at_step(int64_t step) {
  int64_t violations = 0;
  std::string first;  // the first violating tensor, for the log line
  for (const litmus::Tensor& tensor : req_tensors().get()) {
    const int64_t previous_step = req_tensors().get_tensor_steps(tensor.name()).front();
    const std::optional<SquaredNorms> norms = Norms(tensor.value(step), tensor.value(previous_step));
    if (!norms) {
      if (skipped_.insert(tensor.name()).second) {
        log_warning("tensor ", tensor.name(), " cannot be compared between steps ", previous_step, " and ",
                    step, " (shape changed, or not real numbers); skipped");
      }
      continue;
    }
    // L2 norms of the flattened tensors [INFERRED: the norm is not stated].
    const double ratio = std::sqrt(norms->update) / (std::sqrt(norms->previous) + epsilon_);
    report_series(kSeries, tensor.name(), step, ratio);
    // NaN (non-finite weights) compares false: ExplodingTensor is the rule for those.
    if (!(ratio > large_threshold_ || ratio < small_threshold_)) continue;
    JsonObject detail;
    detail.Add("ratio", ratio).Add("prev_step", previous_step);
    report_detail(tensor.name(), detail.str());
    if (violations++ == 0) first = tensor.name() + " " + detail.str();
  }
  if (violations == 0) return false;
  report_violations(violations);
  log_info("step ", step, ": update ratio outside [small_threshold ", small_threshold_, ", large_threshold ",
           large_threshold_, "] in ", violations, " weight(s), first ", first);
  return true;
}

}  // namespace litmus_builtin
