// Tensor selection shared by the built-in rules (docs/rules/semantics.md §1.3): the union of the tensors
// of every named collection and of every tensor whose name a regex searches (Python re.search).
// A collection the trial does not have is skipped silently; with neither parameter given the
// selection falls back to a rule-specific default (usually every tensor of the trial).
// Header-only on the public SDK: built into each plugin, never across the ABI.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "litmus/rule.hpp"

namespace litmus_builtin {

// The `collection_names` and `tensor_regex` parameters of a rule, parsed once at creation.
struct TensorSelection {
  std::vector<std::string> collections;
  std::vector<std::string> regexes;

  bool empty() const { return collections.empty() && regexes.empty(); }

  // Reads the list parameters `collection_key` and `regex_key` (either may be empty to mean the
  // rule has no such parameter).
  static TensorSelection FromParams(const litmus::Rule& rule,
                                    std::string_view collection_key = "collection_names",
                                    std::string_view regex_key = "tensor_regex") {
    TensorSelection selection;
    if (!collection_key.empty()) selection.collections = rule.param_list(collection_key);
    if (!regex_key.empty()) selection.regexes = rule.param_list(regex_key);
    return selection;
  }

  // Sorted, de-duplicated names of `trial` selected by this selection, restricted to tensors
  // saved at global step `step` when given. An empty selection selects every tensor.
  std::vector<std::string> Names(const litmus::Trial& trial,
                                 std::optional<int64_t> step = std::nullopt) const {
    const std::vector<std::string_view> views = NameViews(trial, step);
    return std::vector<std::string>(views.begin(), views.end());
  }
  // The same as views valid until the rule's current callback returns (Trial::tensor_name_views):
  // for set_required_tensors, which asks at every step and adds each name.
  std::vector<std::string_view> NameViews(const litmus::Trial& trial,
                                          std::optional<int64_t> step = std::nullopt) const {
    if (empty()) return trial.tensor_name_views({.step = step});  // sorted, unique
    std::vector<std::string_view> names;
    auto append = [&](const litmus::TensorQuery& query) {
      const std::vector<std::string_view> found = trial.tensor_name_views(query);
      names.insert(names.end(), found.begin(), found.end());
    };
    for (const std::string& collection : collections) append({.collection = collection, .step = step});
    for (const std::string& regex : regexes) append({.regex = regex, .step = step});
    if (collections.size() + regexes.size() > 1) {
      std::sort(names.begin(), names.end());
      names.erase(std::unique(names.begin(), names.end()), names.end());
    }
    return names;
  }
};

}  // namespace litmus_builtin
