// CheckParameterKeys: unknown RuleParameters keys, their hints, and which ones are tolerated.
#include "plugin/parameter_keys.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "plugin/name_suggestion.h"

namespace litmus {
namespace {

// "'a' (did you mean b?), 'c'" for the keys.
std::string KeyList(const std::vector<std::string>& keys, const std::vector<NameCandidate>& known) {
  std::string out;
  for (const std::string& key : keys) {
    out += (out.empty() ? "'" : ", '") + key + "'";
    if (auto suggestion = SuggestName(key, known)) out += " (did you mean " + *suggestion + "?)";
  }
  return out;
}

}  // namespace

bool IsKnownExampleMisspelling(const std::string& key) {
  // The rules' spec lists them (LossNotDecreasing: DOC-2020's nym_steps, [1P]'s min_difference
  // and use_loss_collection; Confusion: [1P]'s max_diag). Warned about, never aliased.
  static constexpr std::array<std::string_view, 4> kMisspellings = {"nym_steps", "min_difference",
                                                                   "use_loss_collection", "max_diag"};
  return std::find(kMisspellings.begin(), kMisspellings.end(), key) != kMisspellings.end();
}

StatusOr<std::vector<std::string>> CheckParameterKeys(const LoadedRule& rule,
                                                      const std::map<std::string, std::string>& params,
                                                      bool allow_unknown) {
  std::string known;
  std::vector<NameCandidate> candidates;
  for (const LoadedRule::Param& p : rule.params) {
    known += (known.empty() ? "" : ", ") + p.name;
    candidates.push_back({p.name, p.name});
  }
  if (known.empty()) known = "none";
  std::vector<std::string> tolerated, refused;
  for (const auto& [key, value] : params) {
    const bool declared = std::any_of(rule.params.begin(), rule.params.end(),
                                      [&](const LoadedRule::Param& p) { return p.name == key; });
    if (declared) continue;
    (allow_unknown || IsKnownExampleMisspelling(key) ? tolerated : refused).push_back(key);
  }
  if (!refused.empty()) {
    return InvalidArgumentError("rule " + rule.name + ": unknown parameter" + (refused.size() > 1 ? "s " : " ") +
                                KeyList(refused, candidates) + "; known: " + known +
                                " (--allow-unknown-params ignores unknown keys)");
  }
  std::vector<std::string> warnings;
  if (!tolerated.empty()) {
    warnings.push_back("rule " + rule.name + ": unknown parameter" + (tolerated.size() > 1 ? "s " : " ") +
                       KeyList(tolerated, candidates) + " (ignored); known: " + known);
  }
  return warnings;
}

}  // namespace litmus
