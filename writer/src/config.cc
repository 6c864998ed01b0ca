// SaveConfigMode step selection, ReductionConfig validation/serialization and the built-in
// collections of litmus::writer; see config.h. Pure functions; thread-safe.
#include "litmus/writer/config.h"

#include <algorithm>
#include <string>

namespace litmus::writer {
namespace {

bool IsNorm(layout::Reduction r) { return r == layout::Reduction::kL1 || r == layout::Reduction::kL2; }

Status CheckList(const std::vector<layout::Reduction>& list, bool norms, std::string_view field) {
  for (layout::Reduction r : list) {
    if (IsNorm(r) != norms) {
      return InvalidArgumentError(
          "ReductionConfig." + std::string(field) + " cannot hold '" +
          std::string(layout::ReductionName(r)) + "': " +
          (norms ? "norms are l1 and l2 only" : "l1 and l2 go in norms/abs_norms"));
    }
  }
  return OkStatus();
}

CollectionConfig Builtin(std::string_view name, std::string regex) {
  CollectionConfig c;
  c.name = std::string(name);
  if (!regex.empty()) c.include_regex.push_back(std::move(regex));
  c.save_histogram = !IsScalarCollection(name);
  return c;
}

}  // namespace

bool SaveConfigMode::ShouldSaveStep(int64_t mode_step) const {
  if (!save_steps.empty() &&
      std::find(save_steps.begin(), save_steps.end(), mode_step) != save_steps.end()) {
    return true;
  }
  const bool has_end = end_step.has_value() && *end_step != 0;
  const bool in_range = mode_step >= start_step && (!has_end || mode_step < *end_step);
  return in_range && mode_step % save_interval == 0;
}

Status SaveConfigMode::Validate() const {
  if (save_interval < 1) {
    return InvalidArgumentError("SaveConfigMode.save_interval must be >= 1, got " +
                                std::to_string(save_interval));
  }
  if (start_step < 0) {
    return InvalidArgumentError("SaveConfigMode.start_step must be >= 0, got " +
                                std::to_string(start_step));
  }
  if (end_step.has_value() && *end_step < 0) {
    return InvalidArgumentError("SaveConfigMode.end_step must be >= 0, got " +
                                std::to_string(*end_step));
  }
  for (int64_t s : save_steps) {
    if (s < 0) {
      return InvalidArgumentError("SaveConfigMode.save_steps must be >= 0, got " +
                                  std::to_string(s));
    }
  }
  return OkStatus();
}

SaveConfig SaveConfig::AllModes(SaveConfigMode config) {
  SaveConfig c;
  for (Mode m : kAllModes) c.modes[m] = config;
  return c;
}

SaveConfig SaveConfig::Every(int64_t interval) {
  SaveConfigMode m;
  m.save_interval = interval;
  return AllModes(std::move(m));
}

Status ReductionConfig::Validate() const {
  LITMUS_RETURN_IF_ERROR(CheckList(reductions, false, "reductions"));
  LITMUS_RETURN_IF_ERROR(CheckList(abs_reductions, false, "abs_reductions"));
  LITMUS_RETURN_IF_ERROR(CheckList(norms, true, "norms"));
  LITMUS_RETURN_IF_ERROR(CheckList(abs_norms, true, "abs_norms"));
  return OkStatus();
}

std::string ReductionConfig::ReductionsString() const {
  std::string out;
  const auto add = [&out](std::string_view prefix, layout::Reduction r, std::string_view suffix) {
    if (!out.empty()) out += ',';
    out += prefix;
    out += layout::ReductionName(r);
    out += suffix;
  };
  for (layout::Reduction r : reductions) add("", r, "");
  for (layout::Reduction r : norms) add("", r, "_norm");
  for (layout::Reduction r : abs_reductions) add("abs_", r, "");
  for (layout::Reduction r : abs_norms) add("abs_", r, "_norm");
  return out;
}

bool IsScalarCollection(std::string_view name) {
  return name == collections::kLosses || name == collections::kMetrics ||
         name == collections::kSmMetrics || name == collections::kFeatureImportance ||
         name == collections::kAverageShap;
}

std::vector<CollectionConfig> DefaultCollections() {
  return {
      Builtin(collections::kAll, ""),
      Builtin(collections::kDefault, ""),
      Builtin(collections::kBiases, "^(?!gradient).*bias"),
      Builtin(collections::kWeights, "^(?!gradient).*weight"),
      Builtin(collections::kGradients, "^gradient"),
      Builtin(collections::kLosses, "[Ll]oss_(?!input).*output"),
  };
}

}  // namespace litmus::writer
