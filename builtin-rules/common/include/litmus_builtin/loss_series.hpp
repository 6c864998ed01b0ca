// Loss series shared by the training-progress rules (docs/rules/LossNotDecreasing.md, Overfit.md,
// Overtraining.md, PoorWeightInitialization.md): which tensors are losses, which of them are
// scalars, and the training / validation loss of one saved step (TRAIN vs EVAL mode, or, in a trial
// without modes, XGBoost's train-* / validation-* names). Header-only on the public SDK: built into
// each plugin, never across the ABI. Thread-safety: a ScalarTensors object belongs to one rule
// instance (one thread at a time).
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "litmus/rule.hpp"

namespace litmus_builtin {

// smdebug's collection names the loss rules read.
inline constexpr std::string_view kLossesCollection = "losses";
inline constexpr std::string_view kMetricsCollection = "metrics";

// Remembers, per tensor name, whether the tensor holds one element (a loss is a scalar: shape ()
// or (1,)). The shape is read once, at the tensor's first saved step.
class ScalarTensors {
 public:
  bool IsScalar(const litmus::Trial& trial, const std::string& name) {
    const auto known = scalar_.find(name);
    if (known != scalar_.end()) return known->second;
    const std::vector<int64_t> steps = trial.tensor_steps(name);
    if (steps.empty()) return false;  // not saved yet: ask again later
    int64_t elements = 1;
    try {
      for (const int64_t dim : trial.tensor(name).shape(steps.front())) elements *= dim;
    } catch (const litmus::TensorUnavailableForStep&) {
      return false;  // neither a value nor a shape saved there (reductions only): not a loss
    }
    return scalar_[name] = elements == 1;
  }
  // `names` without the tensors that are not scalars.
  std::vector<std::string> Filter(const litmus::Trial& trial, std::vector<std::string> names) {
    std::erase_if(names, [&](const std::string& name) { return !IsScalar(trial, name); });
    return names;
  }

 private:
  std::map<std::string, bool, std::less<>> scalar_;
};

// Sorted, de-duplicated union of the tensors of `collections` and of the names `regexes` search,
// restricted to tensors saved at global step `step` when given.
inline std::vector<std::string> NamesOf(const litmus::Trial& trial, const std::vector<std::string>& collections,
                                        const std::vector<std::string>& regexes,
                                        std::optional<int64_t> step = std::nullopt) {
  std::vector<std::string> names;
  auto append = [&](const litmus::TensorQuery& query) {
    for (std::string& name : trial.tensor_names(query)) names.push_back(std::move(name));
  };
  for (const std::string& collection : collections) append({.collection = collection, .step = step});
  for (const std::string& regex : regexes) append({.regex = regex, .step = step});
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

// The loss tensors of Overfit / Overtraining / PoorWeightInitialization saved at global step
// `step`: the matches of `regexes` if any are given; else the `losses` collection; and when the
// trial has no tensor in `losses` at all, the `metrics` collection, where XGBoost saves its
// train-* / validation-* metrics (docs/rules/Overfit.md pairs those; [INFERRED]: XGBoost never
// writes a losses collection).
inline std::vector<std::string> LossNamesAt(const litmus::Trial& trial, const std::vector<std::string>& regexes,
                                            int64_t step) {
  if (!regexes.empty()) return NamesOf(trial, {}, regexes, step);
  if (!trial.tensor_names({.collection = kLossesCollection}).empty()) {
    return NamesOf(trial, {std::string(kLossesCollection)}, {}, step);
  }
  return NamesOf(trial, {std::string(kMetricsCollection)}, {}, step);
}

// Which series a tensor of a trial without modes belongs to, from its name (the part after the
// last '/', compared case-insensitively): train..., training... -> kTrain; valid..., validation...,
// eval... -> kValidation (XGBoost's train-rmse / validation-rmse) [INFERRED, §3.4].
enum class SeriesRole { kNone, kTrain, kValidation };

inline SeriesRole RoleFromName(std::string_view name) {
  const size_t slash = name.rfind('/');
  if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
  auto starts = [name](std::string_view prefix) {
    if (name.size() < prefix.size()) return false;
    for (size_t i = 0; i < prefix.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(name[i])) != prefix[i]) return false;
    }
    return true;
  };
  if (starts("train")) return SeriesRole::kTrain;
  if (starts("valid") || starts("eval")) return SeriesRole::kValidation;
  return SeriesRole::kNone;
}

// The mean of the scalar values of `names` at global step `step` (names without a scalar value
// there are left out), or nullopt if none has one.
inline std::optional<double> MeanScalarAt(const litmus::Trial& trial, const std::vector<std::string>& names,
                                          int64_t step) {
  double sum = 0;
  int64_t count = 0;
  for (const std::string& name : names) {
    try {
      const litmus::TensorView value = trial.tensor(name).value(step);
      if (value.num_elements() != 1) continue;  // not a loss: losses are scalars
      sum += value.at_double(0);
      ++count;
    } catch (const litmus::TensorUnavailableForStep&) {
      // Saved by another worker only, or a reduction only: not a value at this step.
    } catch (const litmus::InvalidArgument&) {
      // A string or complex value: not a loss.
    }
  }
  if (count == 0) return std::nullopt;
  return sum / static_cast<double>(count);
}

// The losses of one saved step, split into the training and the validation series: in a TRAIN
// step every loss tensor is training loss, in an EVAL step validation loss; in a GLOBAL step (a
// trial without modes) the names decide (RoleFromName). PREDICT steps belong to neither.
struct StepLosses {
  litmus::Mode mode = litmus::Mode::kGlobal;
  std::optional<double> train;
  std::optional<double> validation;
};

inline StepLosses LossesAt(const litmus::Trial& trial, const std::vector<std::string>& names, int64_t step) {
  StepLosses out;
  out.mode = trial.step_mode(step);
  switch (out.mode) {
    case litmus::Mode::kTrain:
      out.train = MeanScalarAt(trial, names, step);
      break;
    case litmus::Mode::kEval:
      out.validation = MeanScalarAt(trial, names, step);
      break;
    case litmus::Mode::kGlobal: {
      std::vector<std::string> train, validation;
      for (const std::string& name : names) {
        const SeriesRole role = RoleFromName(name);
        if (role == SeriesRole::kTrain) train.push_back(name);
        if (role == SeriesRole::kValidation) validation.push_back(name);
      }
      out.train = MeanScalarAt(trial, train, step);
      out.validation = MeanScalarAt(trial, validation, step);
      break;
    }
    case litmus::Mode::kPredict:
      break;
  }
  return out;
}

}  // namespace litmus_builtin
