// The verdict of `litmus run` as one plain-text table, which the command prints to stdout at the
// end of every run whatever the log level (logs stay on stderr): per rule its status, first
// firing step, number of firings, datapoints (steps evaluated) and the time spent in its own
// calls. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace litmus {

struct VerdictRow {
  std::string rule;    // RuleConfigurationName
  std::string status;  // RuleEvaluationStatus (NoIssuesFound, IssuesFound, Error, Stopped, ...)
  std::optional<int64_t> first_firing;
  int64_t firings = 0;
  int64_t datapoints = 0;
  double seconds = 0;  // in the rule's create, set_required_tensors, invoke_at_step and on_poll
};

// A header line and one line per row, columns aligned, numbers right-aligned, "-" for no firing:
//   rule               status         first firing  firings  datapoints   time
//   VanishingGradient  NoIssuesFound             -        0          40  0.01s
// Empty for no rows.
std::string FormatVerdictTable(const std::vector<VerdictRow>& rows);

}  // namespace litmus
