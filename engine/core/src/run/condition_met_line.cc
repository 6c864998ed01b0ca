// ConditionMetText and ConditionMetLine: see condition_met_line.h.
#include "run/condition_met_line.h"

#include <algorithm>

namespace litmus {

std::string ConditionMetText(const std::string& rule_class, int64_t step) {
  return "Evaluation of the rule " + rule_class + " at step " + std::to_string(step) +
         " resulted in the condition being met";
}

std::string ConditionMetLine(std::vector<RuleFiring> firings, size_t max_bytes) {
  if (firings.empty()) return "";
  std::stable_sort(firings.begin(), firings.end(),
                   [](const RuleFiring& a, const RuleFiring& b) { return a.first_step < b.first_step; });
  std::string line = "RuleEvaluationConditionMet: " + ConditionMetText(firings.front().rule_class,
                                                                       firings.front().first_step);
  for (size_t i = 1; i < firings.size(); ++i) {
    const std::string more = "; rule " + firings[i].rule_class + " at step " + std::to_string(firings[i].first_step);
    const std::string rest = "; and " + std::to_string(firings.size() - i) + " more rules";
    // Room for this one and, should more follow, the count of the rest.
    const size_t needed = line.size() + more.size() + (i + 1 < firings.size() ? rest.size() : 0);
    if (needed > max_bytes) {
      line += rest;
      break;
    }
    line += more;
  }
  return line;
}

}  // namespace litmus
