// The words of a firing, as SageMaker writes them (docs/job-contract.md §6): the event's message
// "Evaluation of the rule X at step N resulted in the condition being met", and the one line of
// the message and failure files of a job whose rules fired, which names every one of them.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace litmus {

// "Evaluation of the rule X at step N resulted in the condition being met" (X: the class name).
std::string ConditionMetText(const std::string& rule_class, int64_t step);

struct RuleFiring {
  std::string rule_class;
  int64_t first_step = 0;
};

// "RuleEvaluationConditionMet: " + ConditionMetText of the earliest firing (by step, then by
// order), then "; rule Y at step M" for each other one; once the line would pass `max_bytes`,
// "; and K more rules" instead of the rest. Empty for no firing.
std::string ConditionMetLine(std::vector<RuleFiring> firings, size_t max_bytes = 1000);

}  // namespace litmus
