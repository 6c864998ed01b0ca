// litmus/rule/host_calls.hpp — part of litmus/rule.hpp: the members of Trial, Tensor,
// RequiredTensors and Rule that call the host table (they need Rule complete, hence this part
// comes after rule_base.hpp). Each turns a failed host status into the matching exception and
// checks what the host returned. Thread-safety: only on the thread of a host call, during it.
#ifndef LITMUS_RULE_HOST_CALLS_HPP_
#define LITMUS_RULE_HOST_CALLS_HPP_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "litmus/rule/errors.hpp"
#include "litmus/rule/internal.hpp"
#include "litmus/rule/required_tensors.hpp"
#include "litmus/rule/rule_base.hpp"
#include "litmus/rule/tensor_view.hpp"
#include "litmus/rule/trial.hpp"
#include "litmus/rule_abi.h"

namespace litmus {

inline size_t Rule::trial_count() const {
  return HostFn(&litmus_host_api_t::trial_count, "trial_count")(Ctx("trial_count"));
}

inline Trial Tensor::trial() const { return Trial(rule_, trial_); }

inline std::vector<int64_t> Tensor::steps(Mode mode) const {
  return Trial(rule_, trial_).tensor_steps(*name_, mode);
}

inline TensorView Tensor::value(int64_t step, Mode mode, std::string_view worker) const {
  auto fn = rule_->HostFn(&litmus_host_api_t::tensor_value, "tensor_value");
  litmus_tensor_view_t view;
  std::memset(&view, 0, sizeof(view));
  view.struct_size = sizeof(view);
  Rule::Check(fn(rule_->Ctx("tensor_value"), trial_, internal::ToStr(*name_), step,
                 static_cast<int32_t>(mode), internal::ToStr(worker), &view),
              "tensor_value", *name_, step, mode, worker);
  // Never trust sizes blindly: a view whose data cannot hold its elements is a host bug. (A dtype
  // this SDK does not know has element size 0: it passes through, and typed access refuses it.)
  const size_t element_size = TensorView::ElementSize(static_cast<DType>(view.dtype));
  const bool numeric = view.dtype != LITMUS_DTYPE_STRING;
  if (view.num_elements < 0 ||
      (numeric && element_size > 0 && view.num_elements > 0 &&
       (view.data == nullptr ||
        view.byte_size / element_size < static_cast<uint64_t>(view.num_elements) ||
        reinterpret_cast<uintptr_t>(view.data) % std::min<size_t>(element_size, 8) != 0)) ||
      (!numeric && view.num_elements > 0 && view.strings == nullptr) ||
      (view.rank > 0 && view.shape == nullptr)) {
    throw Error("tensor_value returned an inconsistent view of tensor " + *name_ + " at step " +
                std::to_string(step) + " (dtype " + std::to_string(view.dtype) + ")");
  }
  return TensorView(view, name_);
}

inline double Tensor::reduction_value(int64_t step, Reduction reduction, bool abs, Mode mode,
                                      std::string_view worker) const {
  auto fn = rule_->HostFn(&litmus_host_api_t::tensor_reduction, "tensor_reduction");
  double out = 0;
  Rule::Check(fn(rule_->Ctx("tensor_reduction"), trial_, internal::ToStr(*name_), step,
                 static_cast<int32_t>(mode), static_cast<int32_t>(reduction), abs ? 1u : 0u,
                 internal::ToStr(worker), &out),
              "tensor_reduction", *name_, step, mode, worker);
  return out;
}

inline double Tensor::reduction_value(int64_t step, std::string_view reduction, bool abs, Mode mode,
                                      std::string_view worker) const {
  const std::optional<Reduction> parsed = ParseReduction(reduction);
  if (!parsed) {
    throw InvalidArgument("unknown reduction '" + std::string(reduction) +
                          "' (min, max, mean, std, variance, sum, prod, l1, l2)");
  }
  return reduction_value(step, *parsed, abs, mode, worker);
}

inline std::vector<int64_t> Tensor::shape(int64_t step, Mode mode, std::string_view worker) const {
  auto fn = rule_->HostFn(&litmus_host_api_t::tensor_shape, "tensor_shape");
  const int64_t* dims = nullptr;
  uint32_t rank = 0;
  Rule::Check(fn(rule_->Ctx("tensor_shape"), trial_, internal::ToStr(*name_), step,
                 static_cast<int32_t>(mode), internal::ToStr(worker), &dims, &rank),
              "tensor_shape", *name_, step, mode, worker);
  if (rank > 0 && dims == nullptr) throw Error("tensor_shape returned no dimensions for " + *name_);
  return std::vector<int64_t>(dims, dims + rank);
}

inline std::vector<int64_t> Trial::steps(Mode mode) const {
  auto fn = rule_->HostFn(&litmus_host_api_t::steps, "steps");
  const int64_t* steps = nullptr;
  size_t count = 0;
  Rule::Check(fn(rule_->Ctx("steps"), index_, static_cast<int32_t>(mode), &steps, &count), "steps",
              {}, -1, mode);
  if (count > 0 && steps == nullptr) throw Error("steps returned no array");
  return std::vector<int64_t>(steps, steps + count);
}

inline Mode Trial::step_mode(int64_t step) const {
  auto fn = rule_->HostFn(&litmus_host_api_t::step_mode, "step_mode");
  int32_t mode = 0;
  int64_t mode_step = 0;
  Rule::Check(fn(rule_->Ctx("step_mode"), index_, step, &mode, &mode_step), "step_mode", {}, step);
  return static_cast<Mode>(mode);
}

inline int64_t Trial::mode_step(int64_t step) const {
  auto fn = rule_->HostFn(&litmus_host_api_t::step_mode, "step_mode");
  int32_t mode = 0;
  int64_t mode_step = 0;
  Rule::Check(fn(rule_->Ctx("step_mode"), index_, step, &mode, &mode_step), "step_mode", {}, step);
  return mode_step;
}

inline int64_t Trial::global_step(Mode mode, int64_t mode_step) const {
  auto fn = rule_->HostFn(&litmus_host_api_t::global_step, "global_step");
  int64_t step = 0;
  Rule::Check(fn(rule_->Ctx("global_step"), index_, static_cast<int32_t>(mode), mode_step, &step),
              "global_step", {}, mode_step, mode);
  return step;
}

inline std::vector<std::string> Trial::workers() const {
  auto fn = rule_->HostFn(&litmus_host_api_t::workers, "workers");
  const litmus_str_t* workers = nullptr;
  size_t count = 0;
  Rule::Check(fn(rule_->Ctx("workers"), index_, &workers, &count), "workers");
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) out.emplace_back(internal::FromStr(workers[i]));
  return out;
}

inline std::vector<std::string_view> Trial::tensor_name_views(const TensorQuery& query) const {
  auto fn = rule_->HostFn(&litmus_host_api_t::tensor_names, "tensor_names");
  litmus_tensor_query_t q;
  std::memset(&q, 0, sizeof(q));
  q.struct_size = sizeof(q);
  q.collection = internal::ToStr(query.collection);
  q.regex = internal::ToStr(query.regex);
  q.step = query.step.value_or(-1);
  q.mode = query.mode ? static_cast<int32_t>(*query.mode) : 0;
  const litmus_str_t* names = nullptr;
  size_t count = 0;
  Rule::Check(fn(rule_->Ctx("tensor_names"), index_, &q, &names, &count), "tensor_names");
  if (count > 0 && names == nullptr) throw Error("tensor_names returned no array");
  std::vector<std::string_view> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) out.push_back(internal::FromStr(names[i]));
  return out;
}

inline std::vector<std::string> Trial::tensor_names(const TensorQuery& query) const {
  const std::vector<std::string_view> views = tensor_name_views(query);
  return std::vector<std::string>(views.begin(), views.end());
}

inline std::vector<int64_t> Trial::tensor_steps(std::string_view name, Mode mode) const {
  auto fn = rule_->HostFn(&litmus_host_api_t::tensor_steps, "tensor_steps");
  const int64_t* steps = nullptr;
  size_t count = 0;
  Rule::Check(fn(rule_->Ctx("tensor_steps"), index_, internal::ToStr(name),
                 static_cast<int32_t>(mode), &steps, &count),
              "tensor_steps", name, -1, mode);
  if (count > 0 && steps == nullptr) throw Error("tensor_steps returned no array");
  return std::vector<int64_t>(steps, steps + count);
}

inline bool Trial::has_tensor(std::string_view name) const {
  // The host's answer is read without throwing: rules ask at every step for tensors a trial may
  // never have, and an exception per step cost more than the rest of such a rule's step.
  auto fn = rule_->HostFn(&litmus_host_api_t::tensor_steps, "tensor_steps");
  const int64_t* steps = nullptr;
  size_t count = 0;
  const litmus_status_t status = fn(rule_->Ctx("tensor_steps"), index_, internal::ToStr(name),
                                    static_cast<int32_t>(Mode::kGlobal), &steps, &count);
  if (status == LITMUS_TENSOR_UNAVAILABLE) return false;
  Rule::Check(status, "tensor_steps", name, -1, Mode::kGlobal);
  return true;
}

inline uint32_t RequiredTensors::TrialIndex(const Trial& trial) const {
  if (trial.rule_ != rule_) throw InvalidArgument("RequiredTensors: a trial of another rule");
  return trial.index_;
}

inline void RequiredTensors::Record(uint32_t trial, std::string_view name,
                                    std::span<const int64_t> steps) {
  Entries& entries = per_trial_[trial];
  if (entries.ReuseNext(name, steps)) return;  // (no hashing: see ReuseNext)
  if (const size_t found = entries.Find(name); found != SIZE_MAX) {
    std::vector<int64_t>& known = entries.list[found].steps;
    known.insert(known.end(), steps.begin(), steps.end());
    return;
  }
  entries.Append(name, steps);
}

inline void RequiredTensors::Add(uint32_t trial, std::string_view name,
                                 std::span<const int64_t> steps, RequireOptions options) {
  const Trial target(rule_, trial);
  if (forward_to_host_) {
    const int64_t last = steps.empty() ? -1 : steps.back();
    if (options.reductions_only) {
      // since 1.2
      auto fn = rule_->HostFn(&litmus_host_api_t::require_tensor_ex, "require_tensor_ex");
      const uint32_t flags = LITMUS_REQUIRE_REDUCTIONS_ONLY | (options.should_match_regex ? LITMUS_REQUIRE_REGEX : 0u);
      Rule::Check(fn(rule_->Ctx("require_tensor_ex"), trial, internal::ToStr(name), steps.data(), steps.size(), flags),
                  "require_tensor_ex", name, last);
    } else {
      auto fn = rule_->HostFn(&litmus_host_api_t::require_tensor, "require_tensor");
      Rule::Check(fn(rule_->Ctx("require_tensor"), trial, internal::ToStr(name), steps.data(),
                     steps.size(), options.should_match_regex ? 1u : 0u),
                  "require_tensor", name, last);
    }
  }
  if (options.should_match_regex) {
    for (const std::string& match : target.tensor_names({.regex = name})) {
      Record(trial, match, steps);
    }
    return;
  }
  // The host already refused unknown names in require_tensor; outside set_required_tensors ask it.
  if (!forward_to_host_) target.tensor_steps(name);
  Record(trial, name, steps);
}

inline std::vector<Tensor> RequiredTensors::Get(uint32_t trial) const {
  std::vector<Tensor> out;
  const auto found = per_trial_.find(trial);
  if (found == per_trial_.end()) return out;
  const Entries& entries = found->second;
  out.reserve(entries.size);
  for (size_t i = 0; i < entries.size; ++i) out.push_back(Tensor(rule_, trial, entries.list[i].name));
  return out;
}

inline std::vector<std::string> RequiredTensors::GetNames(uint32_t trial) const {
  std::vector<std::string> out;
  const auto found = per_trial_.find(trial);
  if (found == per_trial_.end()) return out;
  const Entries& entries = found->second;
  for (size_t i = 0; i < entries.size; ++i) out.push_back(*entries.list[i].name);
  return out;
}

inline std::vector<int64_t> RequiredTensors::GetTensorSteps(uint32_t trial,
                                                            std::string_view name) const {
  const auto found = per_trial_.find(trial);
  if (found != per_trial_.end()) {
    if (const size_t at = found->second.Find(name); at != SIZE_MAX) return found->second.list[at].steps;
  }
  throw InvalidArgument("tensor " + std::string(name) + " is not a required tensor of trial " +
                        std::to_string(trial));
}

}  // namespace litmus

#endif  // LITMUS_RULE_HOST_CALLS_HPP_
