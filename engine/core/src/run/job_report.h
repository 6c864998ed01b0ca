// JobReporter: everything `litmus run` tells the outside world besides its exit code
// (docs/job-contract.md §6.4): <output>/events.jsonl (one JSON object per line, flushed as each
// event happens), <output>/status.json (rewritten on every status change),
// <output>/rule-reports/<RuleConfigurationName>.json, and the one-line message/failure files.
// Every file but events.jsonl is written atomically (temp file, then rename). Writing failures
// are logged, never fatal: a rule's verdict does not depend on whether a status file could be
// written. Thread-safe (one mutex).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "litmus/format/mode.h"
#include "litmus/status.h"

namespace litmus {

// SageMaker's RuleEvaluationStatus values.
enum class RuleStatus { kInProgress, kNoIssuesFound, kIssuesFound, kError, kStopping, kStopped };
std::string_view RuleStatusName(RuleStatus status);

struct RuleReportData {
  int64_t rule_triggered = 0;  // steps at which the condition was met
  int64_t violations = 0;
  int64_t datapoints = 0;      // steps evaluated
  std::map<std::string, std::string> details_json;  // key -> JSON text
  std::string rule_parameters;  // "key:value" lines
};

struct EventFields {
  std::string event;                  // RuleStarted, StatusChanged, RuleEvaluationConditionMet, RuleEnded, ...
  std::string rule;                   // RuleConfigurationName
  std::string rule_class;             // the rule's class name
  std::optional<int64_t> step;
  std::optional<Mode> mode;
  std::optional<int64_t> mode_step;
  std::string message;
  std::optional<std::string> status;  // for StatusChanged / RuleEnded
};

class JobReporter {
 public:
  struct Paths {
    std::string output_dir;
    std::string message_file;
    std::string failure_file;
  };
  // Creates <output_dir> (and rule-reports/, .sagemaker-ignore/). FailedPrecondition-like errors
  // name the folder.
  static StatusOr<std::unique_ptr<JobReporter>> Create(Paths paths);

  // Registers a rule so status.json lists it (in registration order) as InProgress.
  void AddRule(const std::string& configuration_name, const std::string& rule_class);
  void Event(const EventFields& fields);
  // The same, with extra string fields appended to the JSON object in order (e.g. an
  // ActionInvoked event's action, target, outcome, error).
  void Event(const EventFields& fields, const std::vector<std::pair<std::string, std::string>>& extra);
  // Records a rule's status and rewrites status.json; also emits a StatusChanged event when the
  // status changes.
  void SetRuleStatus(const std::string& configuration_name, RuleStatus status, const std::string& details,
                     std::optional<int64_t> step);
  void WriteRuleReport(const std::string& configuration_name, const RuleReportData& report);
  // The job's end: exit code into status.json, and the message/failure files for non-zero codes
  // (`line` is e.g. "RuleEvaluationConditionMet: Evaluation of the rule X at step N ...").
  // A job without rules (its configuration named none) shows the status of the exit code, with
  // `line` as StatusDetails, at the top level of status.json.
  void Finish(int exit_code, const std::string& line);

  const Paths& paths() const { return paths_; }

 private:
  explicit JobReporter(Paths paths);
  void WriteStatusLocked();
  void WriteFileAtomically(const std::string& path, const std::string& content, const std::string& tmp_dir);

  struct RuleEntry {
    std::string configuration_name;
    std::string rule_class;
    RuleStatus status = RuleStatus::kInProgress;
    std::string details;
    std::optional<int64_t> step;
    std::string last_modified;
  };

  Paths paths_;
  std::mutex mu_;
  std::vector<RuleEntry> rules_;
  std::optional<int> exit_code_;
  std::string finish_line_;  // Finish's line: StatusDetails of a job without rules
  int events_fd_ = -1;
};

// ISO-8601 UTC with milliseconds: "2026-11-22T05:19:10.123Z".
std::string IsoTimeNow();

}  // namespace litmus
